#!/usr/bin/env Rscript
# rcuwb gate calibration: false-alarm rate on A/A comparisons and detection
# rate of planted slowdowns, from pools of stored runs (see R/calibrate.R).
#
# Usage:
#   Rscript stats/gate-calibration.R --db PATH --matrix NAME --baseline after
#       --aa after-aa --planted planted [--n 5,8] [--trials 200]
#       [--threshold 5%] [--alpha 0.05] [--out FILE.md]
# The planted cells are those whose boot parameters set
# rcutree.planted_gp_delay_us or rcutree.planted_exp_delay_us; the A/A cells
# are those without.  --matrix takes a comma list.

# stats/R/*.R, found next to this script
source(file.path(local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1])) else getwd()
}), "load.R"))

calibration_main <- function(args) {
  spec <- c(db = "value", matrix = "value", baseline = "value", aa = "value",
            planted = "value", n = "value", trials = "value", threshold = "value",
            alpha = "value", out = "value")
  o <- parse_cli(args, spec)
  for (k in c("db", "matrix", "baseline", "aa", "planted")) {
    if (is.null(o[[k]])) usage_error("--%s is required", k)
  }
  n <- as.integer(strsplit(o$n %||% "5,8", ",")[[1]])
  trials <- as.integer(o$trials %||% "200")
  threshold <- as.numeric(sub("%$", "", o$threshold %||% "5")) / 100
  alpha <- as.numeric(o$alpha %||% "0.05")
  if (anyNA(n) || any(n < 2) || is.na(trials) || trials < 1) usage_error("bad --n or --trials")
  matrices <- strsplit(o$matrix, ",", fixed = TRUE)[[1]]
  runs <- read_runs(o$db, matrix = matrices)
  if (!nrow(runs)) usage_error("no runs of matrix '%s' in %s", o$matrix, o$db)
  rt <- build_run_table(runs, run_stats(read_samples(o$db, matrix = matrices)))
  cells <- unique(rt$cell[rt$kind == "rcuscale"])
  planted <- cells[grepl("planted_[a-z]+_delay_us=", cells)]
  plain <- setdiff(cells, planted)
  delay <- sub(".*planted_[a-z]+_delay_us=([0-9]+).*", "\\1", planted)
  kind <- ifelse(grepl("planted_exp_", planted, fixed = TRUE), "expedited", "normal")
  comparisons <- rbind(
    data.frame(label = sprintf("A/A: %s vs %s (same kernel)", o$baseline, o$aa),
               baseline = o$baseline, candidate = o$aa, cell = plain),
    data.frame(label = sprintf("%s: +%s us per %s GP", o$planted, delay, kind),
               baseline = rep(o$baseline, length(planted)),
               candidate = rep(o$planted, length(planted)), cell = planted)
  )
  cal <- calibrate_gate(rt, comparisons, n = n, trials = trials,
                        threshold = threshold, alpha = alpha)
  md <- c(calibration_md(cal, threshold, alpha), "",
          caveat_line(rt))
  if (is.null(o$out)) cat(md, sep = "\n") else writeLines(md, o$out)
  0L
}

caveat_line <- function(rt) {
  sprintf("Runs: %s; accelerator %s; host PUs %s; max oversubscription %.2f.",
          nrow(rt), paste(unique(rt$accel), collapse = ","),
          paste(unique(rt$host_pus), collapse = ","), max(rt$oversub, na.rm = TRUE))
}

run_main("gate-calibration", calibration_main)
