#!/usr/bin/env Rscript
# rcuwb regression gate: candidate variant vs baseline variant.
#
# Usage:
#   Rscript stats/exec/rcuwb-gate.R --db PATH --baseline V1 --candidate V2
#       [--threshold 5%] [--alpha 0.05] [--stat mean,p90] [--min-runs 3]
#       [--matrix NAME[,NAME]] [--since ISO-DATE] [--allow-config]
#       [--json [FILE|-]] [--junit FILE] [--quiet]
#       [--looks ID,ID,... --max-runs N [--final]]
#
# By default mean and p90 are gated, the mean alone in normal-GP cells
# (GATE_MODE_STATS in R/gate.R); --stat gates what it names in every cell.
# --looks makes it the sequential gate (R/sequential.R): this is one look
# of several, each earlier look given by the largest run id it saw; the
# design has at most --max-runs runs a side, and --final (or reaching
# --max-runs) spends what is left of alpha.
# Exit status: 0 pass (a slowdown beyond the threshold is ruled out in
# every cell), 1 slowdown (or more failures), 2 hard failure in the
# candidate or sides not comparable, 3 inconclusive (the runs per side that
# would decide are said), 64 bad command line (one line on stderr names the
# bad value), 70 internal error.  The rule is in R/gate.R.
# Text goes to stdout; with --json alone (or --json -) the JSON goes to stdout
# and the text to stderr.

# The package rcuwb (stats/), loaded from source: exec/load-package.R.
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

GATE_USAGE <- paste(
  "usage: rcuwb-gate.R --db PATH --baseline V1 --candidate V2 [--threshold 5%] [--alpha 0.05]",
  "[--stat mean,p90] [--min-runs 3] [--matrix NAME] [--since DATE] [--allow-config]",
  "[--json [FILE|-]] [--junit FILE] [--quiet] [--looks ID,ID,... --max-runs N [--final]]"
)

# --looks "" (the first look) or "120,160": increasing run ids
parse_looks <- function(x) {
  if (isTRUE(x) || !nzchar(x)) return(integer())
  v <- suppressWarnings(as.numeric(strsplit(x, ",", fixed = TRUE)[[1]]))
  if (anyNA(v) || any(v < 1) || any(v != floor(v)) || any(diff(v) <= 0)) {
    usage_error("bad value for --looks: '%s' (give the largest run id of each earlier look, increasing)", x)
  }
  if (length(v) >= SEQ_MAX_LOOKS) {
    usage_error("bad value for --looks: '%s' (at most %d looks: add runs in larger batches)", x,
                SEQ_MAX_LOOKS)
  }
  as.integer(v)
}

parse_stats <- function(x) {
  v <- parse_list(x, "stat")
  bad <- setdiff(v, names(GATE_STATS))
  if (length(bad)) {
    usage_error("bad value for --stat: '%s' (known: %s)", bad[1], paste(names(GATE_STATS), collapse = ", "))
  }
  unique(v)
}

gate_main <- function(args) {
  spec <- c(db = "value", baseline = "value", candidate = "value", threshold = "value",
            alpha = "value", "min-runs" = "value", matrix = "value", since = "value",
            stat = "value", json = "optional", junit = "value", "allow-config" = "flag",
            quiet = "flag", help = "flag", looks = "optional", "max-runs" = "value", final = "flag")
  opts <- parse_cli(args, spec)
  if (isTRUE(opts$help)) {
    cat(GATE_USAGE, "\n", sep = "")
    return(0L)
  }
  require_opts(opts, c("db", "baseline", "candidate"))
  for (pkg in c("DBI", "RSQLite", "jsonlite")) {
    if (!requireNamespace(pkg, quietly = TRUE)) usage_error("R package '%s' is not installed", pkg)
  }
  db <- check_db(opts$db)
  threshold <- if (is.null(opts$threshold)) 0.05 else parse_fraction(opts$threshold, "threshold")
  alpha <- if (is.null(opts$alpha)) 0.05 else parse_alpha(opts$alpha)
  min_runs <- if (is.null(opts[["min-runs"]])) 3 else parse_int(opts[["min-runs"]], "min-runs", 2)
  matrix <- if (is.null(opts$matrix)) NULL else check_known(db, "matrix", parse_list(opts$matrix, "matrix"), "matrix")
  since <- if (is.null(opts$since)) NULL else parse_since(opts$since)
  stats <- if (is.null(opts$stat)) GATE_DEFAULT_STATS else parse_stats(opts$stat)
  check_known(db, "variant", opts$baseline, "baseline")
  check_known(db, "variant", opts$candidate, "candidate")
  if (identical(opts$baseline, opts$candidate)) {
    usage_error("bad value for --candidate: '%s' (same as --baseline)", opts$candidate)
  }
  if (!is.null(opts$junit) && !dir.exists(dirname(opts$junit))) {
    usage_error("bad value for --junit: '%s' (directory does not exist)", opts$junit)
  }
  seq <- NULL
  if (!is.null(opts$looks)) {
    if (is.null(opts[["max-runs"]])) usage_error("--looks needs --max-runs (the design's most runs a side)")
    if (!requireNamespace("rpact", quietly = TRUE)) usage_error("R package 'rpact' is not installed")
    seq <- list(cutoffs = parse_looks(opts$looks),
                max_runs = parse_int(opts[["max-runs"]], "max-runs", 2),
                final = isTRUE(opts$final))
  } else if (!is.null(opts[["max-runs"]]) || isTRUE(opts$final)) {
    usage_error("--max-runs and --final go with --looks (the sequential gate)")
  }
  json_stdout <- isTRUE(opts$json) || identical(opts$json, "-")
  if (!is.null(opts$json) && !json_stdout && !dir.exists(dirname(opts$json))) {
    usage_error("bad value for --json: '%s' (directory does not exist)", opts$json)
  }

  res <- gate(db, baseline = opts$baseline, candidate = opts$candidate,
              threshold = threshold, alpha = alpha, min_runs = min_runs,
              matrix = matrix, since = since, stats = stats,
              allow_config = isTRUE(opts[["allow-config"]]), seq = seq,
              mode_stats = if (is.null(opts$stat)) GATE_MODE_STATS)

  if (!isTRUE(opts$quiet)) {
    cat(res$text, sep = "\n", file = if (json_stdout) stderr() else stdout())
  }
  if (!is.null(opts$json)) {
    if (json_stdout) cat(gate_json(res), "\n", sep = "") else write_utf8(gate_json(res), opts$json)
  }
  if (!is.null(opts$junit)) write_utf8(gate_junit(res), opts$junit)
  res$status
}

run_main("gate", gate_main)
