#!/usr/bin/env Rscript
# rcuwb anatomy: where the grace periods' time goes, phase by phase, in the
# traced runs of two kernel variants (R/anatomy.R; docs/anatomy.md).
#
# Usage:
#   Rscript stats/exec/rcuwb-anatomy.R --db PATH --matrix NAME [--base V1 --cand V2]
#       [--level 0.95] [--json] [--plot FILE.png]
#   Rscript stats/exec/rcuwb-anatomy.R --db PATH --matrix NAME --overhead
#
# --overhead: what tracing costs, rcuscale's mean latency in each traced
# cell of the matrix against the same cell untraced (R/anatomy.R,
# tracing_overhead()).
#
# Without --base/--cand: the matrix's variants in the order their first runs
# were stored; --base alone (or a matrix of one variant): that variant's
# phases, described (runs, calls, median, p90, mean per call, share).  Text goes to stdout (with --json: the JSON, and the text to
# stderr).  Exit status: 0, 3 when no cell has whole traced runs of both
# sides, 64 bad command line, 70 internal error.  Not a gate: it describes.

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

anatomy_main <- function(args) {
  spec <- c(db = "value", matrix = "value", base = "value", cand = "value", level = "value",
            json = "flag", plot = "value", overhead = "flag", help = "flag")
  opts <- parse_cli(args, spec)
  if (isTRUE(opts$help)) {
    cat("usage: rcuwb-anatomy.R --db PATH --matrix NAME [--base V1 --cand V2] [--level 0.95]",
        "[--json] [--plot FILE.png]\n")
    return(0L)
  }
  require_opts(opts, c("db", "matrix"))
  opts$db <- check_db(opts$db)
  level <- if (is.null(opts$level)) 0.95 else parse_fraction(opts$level, "level")
  if (isTRUE(opts$overhead)) {
    ov <- tracing_overhead(opts$db, matrix = opts$matrix, level = level)
    if (isTRUE(opts$json)) {
      cat(jsonlite::toJSON(ov, dataframe = "rows", digits = NA, pretty = TRUE), "\n", sep = "")
    } else {
      cat(tracing_overhead_text(ov), sep = "\n")
    }
    return(if (is.null(ov)) 3L else 0L)
  }
  calls <- read_anatomy(opts$db, matrix = opts$matrix)
  sides <- unique(calls$variant)
  base <- if (is.null(opts$base)) sides[1] else opts$base
  cand <- if (is.null(opts$cand)) sides[2] else opts$cand
  # one variant (--base alone, or a matrix of one): its anatomy, described
  if (length(sides) == 1 && is.null(opts$cand) || !is.null(opts$base) && is.null(opts$cand)) {
    if (is.na(base) || !base %in% sides) {
      usage_error("matrix '%s' has no whole traced runs of '%s'", opts$matrix, if (is.na(base)) "any variant" else base)
    }
    d <- anatomy_describe(calls, base)
    if (isTRUE(opts$json)) {
      cat(jsonlite::toJSON(d, dataframe = "rows", digits = NA, na = "null", pretty = TRUE), "\n", sep = "")
    } else {
      cat(anatomy_describe_text(d, base), sep = "\n")
    }
    return(0L)
  }
  for (v in c(base, cand)) {
    if (is.na(v) || !v %in% sides) {
      usage_error("matrix '%s' has no whole traced runs of '%s' (it has: %s)", opts$matrix,
                  if (is.na(v)) "a second variant" else v,
                  if (length(sides)) paste(sides, collapse = ", ") else "none")
    }
  }
  cmp <- anatomy_compare(calls, base, cand, level = level)
  text <- anatomy_text(cmp)
  if (isTRUE(opts$json)) {
    cat(text, sep = "\n", file = stderr())
    cat(anatomy_json(cmp), "\n", sep = "")
  } else {
    cat(text, sep = "\n")
  }
  if (!is.null(opts$plot) && !is.null(cmp$phases)) {
    ggplot2::ggsave(opts$plot, plot_anatomy(cmp), width = 10, height = 5.5, dpi = 110)
  }
  if (is.null(cmp$phases)) 3L else 0L
}

run_main("anatomy", anatomy_main)
