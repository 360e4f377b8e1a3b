#!/usr/bin/env Rscript
# rcuwb: the sequential compare's error rates and runs to a decision, on
# pools of real runs (perf-configs/studies/seqcal-v1.yaml, seqcal-v2.yaml; issue 32,
# item 5), beside the fixed-n gate on the same draws.  See
# seq_calibrate() in R/calibrate.R.
#
# Usage:
#   Rscript stats/exec/rcuwb-seqcal.R --db PATH [--matrix seqcal-v1,seqcal-v2]
#       [--trials 1000] [--boot 0] [--threshold 10%] [--alpha 0.05]
#       [--batch 4] [--max-runs 20] [--spending asOF] [--out FILE.md]
#
# Prints (or writes) a Markdown table: per cell and comparison (A/A, each
# planted dose against the control pool), the share of trials the
# sequential compare calls SLOWDOWN and PASS with Wilson 95% intervals over
# the trials (and, with --boot B, percentile intervals over B bootstrap
# copies of the pools), the runs a side it took, and the fixed-n gate's
# rates at --max-runs a side on the same draws.  --spending asP (or any
# rpact typeOfDesign of an alpha-spending function) replaces the gate's
# O'Brien-Fleming-type spending for this study only.

# The package rcuwb (stats/), loaded from source: exec/load-package.R.
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

seqcal_main <- function(args) {
  spec <- c(db = "value", matrix = "value", trials = "value", boot = "value",
            threshold = "value", alpha = "value", batch = "value", "max-runs" = "value",
            spending = "value", out = "value", help = "flag")
  o <- parse_cli(args, spec)
  if (isTRUE(o$help)) {
    cat("usage: rcuwb-seqcal.R --db PATH [--matrix M1,M2] [--trials 1000] [--boot 0]",
        "[--threshold 10%] [--alpha 0.05] [--batch 4] [--max-runs 20] [--spending asOF] [--out FILE]\n")
    return(0L)
  }
  require_opts(o, "db")
  db <- check_db(o$db)
  matrices <- parse_list(o$matrix %||% "seqcal-v1,seqcal-v2", "matrix")
  check_known(db, "matrix", matrices, "matrix")
  trials <- parse_int(o$trials %||% "1000", "trials", 10)
  boot <- parse_int(o$boot %||% "0", "boot", 0)
  threshold <- parse_fraction(o$threshold %||% "10%", "threshold")
  alpha <- parse_alpha(o$alpha %||% "0.05")
  batch <- parse_int(o$batch %||% "4", "batch", 1)
  max_runs <- parse_int(o[["max-runs"]] %||% "20", "max-runs", 2)
  if (!is.null(o$spending)) {
    if (!(o$spending %in% c("asOF", "asP", "asKD", "asHSD"))) {
      usage_error("bad value for --spending: '%s' (asOF, asP, asKD or asHSD)", o$spending)
    }
    options(rcuwb.seq_spending = o$spending)
  }
  rt <- build_run_table(read_runs(db, matrix = matrices), run_stats(read_samples(db, matrix = matrices)))
  x <- seq_calibrate(rt, trials = trials, threshold = threshold, alpha = alpha, batch = batch,
                     max_runs = max_runs, boot = boot)
  if (is.null(x)) {
    cat(sprintf("rcuwb-seqcal.R: no control runs (planted dose 0) in %s\n", paste(matrices, collapse = ",")),
        file = stderr())
    return(3L)
  }
  busy <- sum(rt$status == "host-busy", na.rm = TRUE)
  md <- c(seq_calibration_markdown(x), "",
          sprintf(paste("Threshold %s, alpha %s, looks of %d runs a side up to %d, spending %s, %d trials",
                        "a row (draws with replacement from the pools); %d runs, %d host-busy left out."),
                  fmt_pct(threshold, 0), format(alpha), batch, max_runs, seq_spending(), trials,
                  sum(rt$kind == "rcuscale"), busy))
  if (is.null(o$out)) cat(md, sep = "\n") else writeLines(md, o$out)
  0L
}

run_main("seqcal", seqcal_main)
