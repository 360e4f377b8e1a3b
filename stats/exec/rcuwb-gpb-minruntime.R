#!/usr/bin/env Rscript
# How much one boot tells (issue 32, item 3), from the runs of
# perf-configs/studies/gpb-minruntime.yaml: one binary (planted), one writer, the
# control without rcuscale.minruntime, the control with minruntime=1, and a
# planted 10% slowdown with minruntime=1, interleaved.
#
# Usage: Rscript stats/exec/rcuwb-gpb-minruntime.R DB
#
# For every cell (topology x GP mode) and per-run statistic (mean, 10%
# trimmed mean, median, p90 of the run's samples), over the first 100, 300,
# 1000 and all GPs of each minruntime boot (and all GPs of the boots
# without it):
#   - sd: the SD of log(per-run statistic) over the control boots, with
#     its 95% interval (chi-square, n - 1 degrees of freedom);
#   - effect: the planted boots' mean log statistic minus the controls', as
#     a ratio (what the 10% plant moved this statistic by);
#   - n80: runs a side that a one-sided 5% rank test needs for 80% power
#     against a true 10% (log 1.1) shift at that sd, under a normal model:
#     2 (z_0.95 + z_0.8)^2 sd^2 / log(1.1)^2, times pi/3 (the rank test's
#     efficiency against the t test there).
# And the wall time of a run with and without minruntime.  Host-busy and
# failed runs are left out and counted.

# The package rcuwb (stats/), loaded from source: exec/load-package.R.
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

args <- commandArgs(TRUE)
if (length(args) != 1) {
  message("usage: rcuwb-gpb-minruntime.R DB")
  quit(status = 64)
}
db <- args[1]
runs <- read_runs(db, matrix = "gpb-minruntime")
if (!nrow(runs)) {
  message(db, ": no runs of matrix gpb-minruntime (run perf-configs/studies/gpb-minruntime.yaml first)")
  quit(status = 2)
}
busy <- host_busy(runs)
cat(sprintf("%d runs: %d ok, %d host-busy, %d not ok; %s to %s\n", nrow(runs),
            sum(runs$outcome == "ok" & !busy), sum(runs$outcome == "ok" & busy),
            sum(runs$outcome != "ok"), min(runs$started_at), max(runs$ended_at)))
runs <- runs[runs$outcome == "ok" & !busy, , drop = FALSE]
runs$minrt <- grepl("rcuscale.minruntime=1", runs$boot_params, fixed = TRUE)
runs$dose <- as.integer(sub(".*planted_exp_time_permille=([0-9]+).*", "\\1", runs$boot_params))
runs$arm <- ifelse(!runs$minrt, "m0", ifelse(runs$dose == 0, "m1", "m1-plant10"))
runs$where <- paste0(runs$vcpus, " vCPU ", runs$gp_mode)
samples <- read_samples(db, run_ids = runs$id)
samples <- samples[samples$writer == 0, , drop = FALSE]
by_run <- split(samples$duration_ns / 1000, samples$run_id)

stat_fns <- list(
  mean = mean,
  trim10 = function(x) mean(x, trim = 0.1),
  median = function(x) stats::median(x),
  p90 = function(x) stats::quantile(x, 0.9, names = FALSE, type = 1)
)
firsts <- c(100, 300, 1000, Inf)

per_run <- do.call(rbind, lapply(seq_len(nrow(runs)), function(i) {
  x <- by_run[[as.character(runs$id[i])]]
  do.call(rbind, lapply(if (runs$minrt[i]) firsts else Inf, function(k) {
    y <- x[seq_len(min(length(x), k))]
    data.frame(id = runs$id[i], where = runs$where[i], arm = runs$arm[i],
               first = if (is.finite(k)) as.character(k) else "all", gps = length(y),
               wall = runs$wall_s[i],
               as.data.frame(lapply(stat_fns, function(f) f(y))))
  }))
}))

z <- stats::qnorm(0.95) + stats::qnorm(0.8)
rows <- list()
for (w in sort(unique(per_run$where))) {
  for (a in c("m0", "m1")) {
    for (k in if (a == "m0") "all" else c("100", "300", "1000", "all")) {
      ctl <- per_run[per_run$where == w & per_run$arm == a & per_run$first == k, ]
      pl <- per_run[per_run$where == w & per_run$arm == "m1-plant10" & per_run$first == k, ]
      if (nrow(ctl) < 3) next
      for (s in names(stat_fns)) {
        lc <- log(ctl[[s]])
        sd <- stats::sd(lc)
        df <- length(lc) - 1
        eff <- if (a == "m1" && nrow(pl) >= 3) exp(mean(log(pl[[s]])) - mean(lc)) else NA
        rows[[length(rows) + 1]] <- data.frame(
          where = w, arm = a, first = k, stat = s, runs = nrow(ctl),
          gps = stats::median(ctl$gps), median_us = stats::median(ctl[[s]]),
          sd = sd, sd_lo = sd * sqrt(df / stats::qchisq(0.975, df)),
          sd_hi = sd * sqrt(df / stats::qchisq(0.025, df)),
          effect = eff, n80 = ceiling(2 * z^2 * sd^2 / log(1.1)^2 * pi / 3))
      }
    }
  }
}
tab <- do.call(rbind, rows)
cat("\nPer-run statistic over the control boots (sd of its log, 95% CI), the 10% plant's effect on it,\n",
    "and the runs a side a 10% shift needs at 80% power (one-sided 5% rank test, normal model)\n", sep = "")
cat(sprintf("%-16s %-3s %-5s %-6s %4s %6s %9s %6s [%5s, %5s] %7s %5s\n", "cell", "arm", "first", "stat",
            "runs", "GPs", "median", "sd", "lo", "hi", "plant10", "n80"))
for (i in seq_len(nrow(tab))) {
  r <- tab[i, ]
  cat(sprintf("%-16s %-3s %-5s %-6s %4d %6.0f %9.1f %6.3f [%5.3f, %5.3f] %7s %5d\n", r$where, r$arm,
              r$first, r$stat, r$runs, r$gps, r$median_us, r$sd, r$sd_lo, r$sd_hi,
              if (is.na(r$effect)) "" else sprintf("%+.1f%%", 100 * (r$effect - 1)), r$n80))
}
wall <- stats::aggregate(wall ~ where + arm, data = per_run[per_run$first == "all", ], FUN = stats::median)
cat("\nMedian wall time of a run (s): boot, rcuscale, power-off\n")
for (i in seq_len(nrow(wall))) cat(sprintf("%-16s %-10s %5.1f\n", wall$where[i], wall$arm[i], wall$wall[i]))
