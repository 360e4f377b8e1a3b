#!/usr/bin/env Rscript
# rcuwb report: Markdown + self-contained HTML report with plots and CSVs.
#
# Usage:
#   Rscript stats/exec/rcuwb-report.R --db PATH --out DIR
#       [--matrix NAME[,NAME]] [--variants V1,V2,...] [--since ISO-DATE]
#       [--baseline V1] [--candidate V2[,V3...]] [--metrics p50[,p90,p99]]
#       [--alpha 0.05] [--threshold 5%] [--seed 1] [--resamples 2000] [--title TEXT] [--no-plots]
#
# Writes DIR/report.md, DIR/report.html, DIR/plots/*.{png,svg}, DIR/*.csv and
# prints the paths of the two reports.
# Exit status: 0 written, 64 bad command line (one line on stderr names the
# bad value), 70 internal error.

# The package rcuwb (stats/), loaded from source: exec/load-package.R.
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

REPORT_USAGE <- paste(
  "usage: rcuwb-report.R --db PATH --out DIR [--matrix NAME] [--variants V1,V2] [--since DATE]",
  "[--baseline V1] [--candidate V2[,V3]] [--metrics p50[,p90,p99]] [--alpha 0.05] [--threshold 5%]",
  "[--seed N] [--resamples N] [--title TEXT] [--no-plots]"
)

report_main <- function(args) {
  spec <- c(db = "value", out = "value", matrix = "value", variants = "value",
            since = "value", baseline = "value", candidate = "value", metrics = "value",
            threshold = "value",
            alpha = "value", seed = "value", resamples = "value", title = "value",
            "no-plots" = "flag", help = "flag")
  opts <- parse_cli(args, spec)
  if (isTRUE(opts$help)) {
    cat(REPORT_USAGE, "\n", sep = "")
    return(0L)
  }
  require_opts(opts, c("db", "out"))
  for (pkg in c("DBI", "RSQLite", "ggplot2")) {
    if (!requireNamespace(pkg, quietly = TRUE)) usage_error("R package '%s' is not installed", pkg)
  }
  db <- check_db(opts$db)
  out <- opts$out
  if (file.exists(out) && !dir.exists(out)) {
    usage_error("bad value for --out: '%s' (exists and is not a directory)", out)
  }
  matrix <- if (is.null(opts$matrix)) NULL else check_known(db, "matrix", parse_list(opts$matrix, "matrix"), "matrix")
  variants <- if (is.null(opts$variants)) NULL else check_known(db, "variant", parse_list(opts$variants, "variants"), "variants")
  since <- if (is.null(opts$since)) NULL else parse_since(opts$since)
  baseline <- if (is.null(opts$baseline)) NULL else check_known(db, "variant", opts$baseline, "baseline")
  candidates <- if (is.null(opts$candidate)) NULL else check_known(db, "variant", parse_list(opts$candidate, "candidate"), "candidate")
  if (!is.null(baseline) && !is.null(candidates) && baseline %in% candidates) {
    usage_error("bad value for --candidate: '%s' (same as --baseline)", baseline)
  }
  if (!is.null(variants)) {
    if (!is.null(baseline)) variants <- union(variants, baseline)
    if (!is.null(candidates)) variants <- union(variants, candidates)
  }
  metrics <- if (is.null(opts$metrics)) "p50" else parse_metrics(opts$metrics)
  threshold <- if (is.null(opts$threshold)) 0.05 else parse_fraction(opts$threshold, "threshold")
  alpha <- if (is.null(opts$alpha)) 0.05 else parse_alpha(opts$alpha)
  seed <- if (is.null(opts$seed)) 1 else parse_int(opts$seed, "seed", 0)
  resamples <- if (is.null(opts$resamples)) 2000 else parse_int(opts$resamples, "resamples", 2000)
  title <- if (is.null(opts$title) || isTRUE(opts$title)) "rcuwb: RCU grace-period latency report" else opts$title

  res <- write_report(db, out, matrix = matrix, variants = variants, since = since,
                      baseline = baseline, candidates = candidates,
                      compare_metrics = metrics, alpha = alpha, threshold = threshold, R = resamples, seed = seed,
                      title = title, plots = !isTRUE(opts[["no-plots"]]))
  cat(res$md, "\n", res$html, "\n", sep = "")
  0L
}

run_main("report", report_main)
