#!/usr/bin/env Rscript
# rcuwb history: a schedule's per-commit history, its change points and
# their triage state, and the dashboard.
#
# Usage:
#   Rscript stats/exec/rcuwb-history.R --db PATH update --schedule NAME --repo DIR --head REV
#       [--min-commits 2] [--alpha 0.05] [--permutations 199] [--seed 1]
#       [--stat mean,p90] [--min-change 0.05] [--json FILE|-] [--out DIR]
#   Rscript stats/exec/rcuwb-history.R --db PATH show --schedule NAME --repo DIR --head REV --out DIR
#   Rscript stats/exec/rcuwb-history.R --db PATH list [--schedule NAME] [--state new,acknowledged]
#   Rscript stats/exec/rcuwb-history.R --db PATH ack ID --why TEXT
#   Rscript stats/exec/rcuwb-history.R --db PATH invalid ID --why TEXT
#   Rscript stats/exec/rcuwb-history.R --db PATH reopen ID
#
# update analyses the history (E-divisive, R/changepoint.R), stores the
# change points (a known one keeps its state: an acknowledged or invalid
# one is not new again), writes the dashboard to --out and the JSON to
# --json; show writes the dashboard without storing anything.
# Exit status: 0 done (update: no new change point), 1 (update) a new
# change point, 64 bad command line, 70 internal error.

# The package rcuwb (stats/), loaded from source: exec/load-package.R.
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

HISTORY_USAGE <- paste(
  "usage: rcuwb-history.R --db PATH (update|show) --schedule NAME --repo DIR --head REV [--out DIR]",
  "[--json FILE|-] [--min-commits 2] [--alpha 0.05] [--permutations 199] [--seed 1] [--stat mean,p90]",
  "[--min-change 0.05]",
  "| list [--schedule NAME] [--state S,...] | ack ID --why TEXT | invalid ID --why TEXT | reopen ID"
)

history_analyse <- function(opts, store) {
  require_opts(opts, c("schedule", "repo", "head"))
  if (!dir.exists(opts$repo)) usage_error("bad value for --repo: '%s' (no such directory)", opts$repo)
  stats <- if (is.null(opts$stat)) GATE_DEFAULT_STATS else parse_list(opts$stat, "stat")
  bad <- setdiff(stats, names(GATE_STATS))
  if (length(bad)) usage_error("bad value for --stat: '%s' (known: %s)", bad[1],
                               paste(names(GATE_STATS), collapse = ", "))
  commits <- history_commits(opts$repo, opts$head)
  h <- history_update(opts$db, opts$schedule, commits, stats = stats,
                      min_commits = if (is.null(opts[["min-commits"]])) 2 else
                        parse_int(opts[["min-commits"]], "min-commits"),
                      alpha = if (is.null(opts$alpha)) 0.05 else parse_alpha(opts$alpha),
                      R = if (is.null(opts$permutations)) 199 else
                        parse_int(opts$permutations, "permutations", 19),
                      seed = if (is.null(opts$seed)) 1 else parse_int(opts$seed, "seed", 0),
                      min_change = if (is.null(opts[["min-change"]])) 0.05 else
                        parse_fraction(opts[["min-change"]], "min-change"),
                      store = store)
  to_stdout <- identical(opts$json, "-") || isTRUE(opts$json)
  cat(history_text(h), sep = "\n", file = if (to_stdout) stderr() else stdout())
  if (!is.null(opts$json)) {
    if (to_stdout) cat(history_json(h), "\n", sep = "") else write_utf8(history_json(h), opts$json)
  }
  if (!is.null(opts$out)) {
    p <- history_dashboard(h, opts$out)
    cat(sprintf("dashboard: %s (and %s)\n", p[["html"]], basename(p[["md"]])),
        file = if (to_stdout) stderr() else stdout())
  }
  if (store && any(h$changepoints$is_new)) 1L else 0L
}

history_list <- function(opts) {
  states <- if (is.null(opts$state)) NULL else parse_list(opts$state, "state")
  bad <- setdiff(states, CHANGEPOINT_STATES)
  if (length(bad)) usage_error("bad value for --state: '%s' (known: %s)", bad[1],
                               paste(CHANGEPOINT_STATES, collapse = ", "))
  cps <- with_db(opts$db, function(con) changepoints_list(con, opts$schedule, states))
  if (isTRUE(opts$json) || identical(opts$json, "-")) {
    cat(jsonlite::toJSON(cps, dataframe = "rows", na = "null", digits = NA, pretty = TRUE), "\n")
  } else if (!nrow(cps)) {
    cat("no change points\n")
  } else {
    cat(sprintf("%4s  %-12s %-12s %-5s %-40s %-30s %s..%s%s\n", cps$id, cps$state, cps$schedule,
                cps$stat, cps$cell,
                sprintf("%s [%s, %s]", fmt_pct(cps$size), fmt_pct(cps$lo), fmt_pct(cps$hi)),
                substr(cps$last_good, 1, 12), substr(cps$first_bad, 1, 12),
                ifelse(is.na(cps$why), "", paste0("  (", cps$why, ")"))), sep = "")
  }
  0L
}

history_set <- function(opts, state, id) {
  if (is.null(id) || !grepl("^[0-9]+$", id)) usage_error("give the change point's ID (see 'rcuwb history list')")
  why <- opts$why
  if (state != "new" && (is.null(why) || isTRUE(why) || !nzchar(why))) {
    usage_error("%s needs --why TEXT: the reason, kept with the change point", if (state == "invalid") "invalid" else "ack")
  }
  ok <- tryCatch(with_db(opts$db, function(con) changepoint_set_state(con, as.numeric(id), state,
                                                                      why %||% NA_character_),
                         write = TRUE),
                 error = function(e) usage_error("%s", conditionMessage(e)))
  cat(sprintf("change point %s: %s\n", id, state))
  0L
}

history_main <- function(args) {
  verbs <- c("update", "show", "list", "ack", "invalid", "reopen")
  # the verb (and an ID after ack/invalid/reopen) may stand anywhere after the options' values
  pos <- which(args %in% verbs)[1]
  if (any(args %in% c("--help", "-h"))) {
    cat(HISTORY_USAGE, "\n", sep = "")
    return(0L)
  }
  if (is.na(pos)) usage_error("give one of: %s", paste(verbs, collapse = ", "))
  verb <- args[pos]
  args <- args[-pos]
  id <- NULL
  if (verb %in% c("ack", "invalid", "reopen") && length(args) >= pos && !startsWith(args[pos], "--")) {
    id <- args[pos]
    args <- args[-pos]
  }
  spec <- c(db = "value", schedule = "value", repo = "value", head = "value", out = "value",
            json = "optional", "min-commits" = "value", alpha = "value", permutations = "value",
            seed = "value", stat = "value", state = "value", why = "value", "min-change" = "value",
            help = "flag")
  opts <- parse_cli(args, spec)
  require_opts(opts, "db")
  for (pkg in c("DBI", "RSQLite", "jsonlite")) {
    if (!requireNamespace(pkg, quietly = TRUE)) usage_error("R package '%s' is not installed", pkg)
  }
  opts$db <- check_db(opts$db)
  switch(verb,
         update = history_analyse(opts, store = TRUE),
         show = {
           if (is.null(opts$out)) usage_error("show needs --out DIR")
           history_analyse(opts, store = FALSE)
         },
         list = history_list(opts),
         ack = history_set(opts, "acknowledged", id),
         invalid = history_set(opts, "invalid", id),
         reopen = history_set(opts, "new", id))
}

run_main("history", history_main)
