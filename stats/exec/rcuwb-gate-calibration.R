#!/usr/bin/env Rscript
# rcuwb gate calibration: planted slowdowns of known size on one binary
# (variant planted, perf-configs/studies/gatecal-*.yaml), see R/calibrate.R.
#
# Usage:
#   Rscript stats/exec/rcuwb-gate-calibration.R --db PATH [--matrix gatecal-v1,gatecal-v2]
#       [--doses gatecal-doses-v1,gatecal-doses-v2,gatecal-exp10-v2,gatecal-exp10-v3,gatecal-exp-v1]
#       [--n 5,10,20] [--trials 400]
#       [--boot 100] [--threshold 5%] [--alpha 0.05] [--plots DIR] [--out FILE.md]
#
# Prints (or writes) Markdown: the dose-response table (between boots, and
# for expedited GPs within boots too), the gate's false-alarm
# and detection rates with 95% CIs, where the variance is, and the runs per
# side needed for 10% and 25% slowdowns.  --plots DIR writes the power curve
# (power_curve.png/.svg).

# The package rcuwb (stats/), loaded from source: exec/load-package.R.
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

calibration_main <- function(args) {
  spec <- c(db = "value", matrix = "value", doses = "value", n = "value",
            trials = "value",
            boot = "value", threshold = "value", alpha = "value", plots = "value",
            out = "value", help = "flag")
  o <- parse_cli(args, spec)
  if (isTRUE(o$help)) {
    cat("usage: rcuwb-gate-calibration.R --db PATH [--matrix M1,M2] [--doses D1,D2]",
        "[--n 5,10,20]",
        "[--trials 400] [--boot 100] [--threshold 5%] [--alpha 0.05] [--plots DIR] [--out FILE]\n")
    return(0L)
  }
  require_opts(o, "db")
  db <- check_db(o$db)
  matrices <- parse_list(o$matrix %||% "gatecal-v1,gatecal-v2", "matrix")
  doses <- parse_list(o$doses %||% "gatecal-doses-v1,gatecal-doses-v2,gatecal-exp10-v2,gatecal-exp10-v3,gatecal-exp-v1", "doses")
  n <- vapply(parse_list(o$n %||% "5,10,20", "n"), parse_int, numeric(1), name = "n", min = 3)
  trials <- parse_int(o$trials %||% "400", "trials", 10)
  boot <- parse_int(o$boot %||% "100", "boot", 10)
  threshold <- parse_fraction(o$threshold %||% "5%", "threshold")
  alpha <- parse_alpha(o$alpha %||% "0.05")
  check_known(db, "matrix", matrices, "matrix")
  known <- with_db(db, function(con) DBI::dbGetQuery(con, "SELECT DISTINCT matrix FROM runs")$matrix)
  doses <- intersect(doses, known)

  runs <- read_runs(db, matrix = c(matrices, doses))
  samples <- read_samples(db, matrix = c(matrices, doses))
  rt <- build_run_table(runs, run_stats(samples))
  main <- rt[rt$matrix %in% matrices, , drop = FALSE]

  dr <- dose_response(rt)
  wb <- within_boot_response(rt, samples)
  # the kernel's report is read from the console logs of the time doses only
  wt <- within_time_response(rt, samples, planted_reports(rt[planted_time_share(rt) > 0, , drop = FALSE]))
  cal <- calibrate_gate(main, n = n, trials = trials, boot = boot, threshold = threshold,
                        alpha = alpha)
  vd <- variance_decomposition(main, samples)
  a <- alpha / length(GATE_DEFAULT_STATS)
  need <- do.call(rbind, lapply(seq_len(nrow(vd)), function(i) {
    sds <- c(mean = vd$sd_log_mean[i], p90 = vd$sd_log_p90[i])
    spr <- c(mean = vd$spread_mean[i], p90 = vd$spread_p90[i])
    data.frame(cell = vd$cell[i], stat = names(sds), sd = sds, spread = spr,
               n10_80 = runs_for_power(spr, 0.10, 0.80, threshold, a),
               n10_95 = runs_for_power(spr, 0.10, 0.95, threshold, a),
               n25_80 = runs_for_power(spr, 0.25, 0.80, threshold, a),
               n25_95 = runs_for_power(spr, 0.25, 0.95, threshold, a),
               sd_n10_80 = runs_for_power(sds / sqrt(RANK_EFFICIENCY), 0.10, 0.80, threshold, a),
               rs_n10_80 = runs_for_power(c(vd$hl_sd_mean[i], vd$hl_sd_p90[i]) * sqrt(vd$hl_n[i] / 2),
                                          0.10, 0.80, threshold, a))
  }))
  md <- calibration_markdown(dr, cal, vd, need, threshold, alpha, rt, wb, wt)
  if (!is.null(o$plots) && !is.null(cal)) {
    p <- plot_power_curve(cal, main)
    if (!is.null(p)) save_plot(p, o$plots, "power_curve", 10, 5)
  }
  if (is.null(o$out)) cat(md, sep = "\n") else writeLines(md, o$out)
  0L
}

run_main("gate-calibration", calibration_main)
