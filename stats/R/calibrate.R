# Calibrating the regression gate: how often does it flag a comparison where
# nothing changed (A/A: two variants that build the same kernel), and how
# often does it catch a planted slowdown of known size?
#
# Each trial draws n runs without replacement from each side's pool of
# stored runs (one cell) and runs the gate on just those runs; the rate is
# the share of trials the gate returned 1 (slowdown).  Subsamples of a
# finite pool are not independent experiments: the pools must be several
# times larger than n for the rates to mean much, and the pool sizes are
# reported beside them.

# rt: build_run_table() output.  comparisons: data.frame(label, baseline,
# candidate, cell).  Returns one row per comparison and n.
calibrate_gate <- function(rt, comparisons, n = c(5, 8), trials = 200,
                           threshold = 0.05, alpha = 0.05, seed = 1) {
  rows <- list()
  for (i in seq_len(nrow(comparisons))) {
    cmp <- comparisons[i, ]
    pool <- rt[rt$cell == cmp$cell & rt$usable &
                 rt$variant %in% c(cmp$baseline, cmp$candidate), , drop = FALSE]
    old <- pool[pool$variant == cmp$baseline, , drop = FALSE]
    new <- pool[pool$variant == cmp$candidate, , drop = FALSE]
    shift <- if (nrow(old) && nrow(new)) {
      stats::median(new$p50_us) / stats::median(old$p50_us) - 1
    } else {
      NA_real_
    }
    for (k in n) {
      flagged <- NA_integer_
      done <- 0L
      if (nrow(old) >= k && nrow(new) >= k) {
        status <- with_seed(seed + k, vapply(seq_len(trials), function(t) {
          sub <- rbind(old[sample.int(nrow(old), k), , drop = FALSE],
                       new[sample.int(nrow(new), k), , drop = FALSE])
          gate_run_table(sub, cmp$baseline, cmp$candidate, threshold = threshold,
                         alpha = alpha, min_runs = k, check_power = FALSE)$status
        }, numeric(1)))
        flagged <- sum(status == 1)
        done <- trials
      }
      rows[[length(rows) + 1]] <- data.frame(
        comparison = cmp$label, cell = cmp$cell, baseline = cmp$baseline,
        candidate = cmp$candidate, pool_old = nrow(old), pool_new = nrow(new),
        pool_shift = shift, n = k, trials = done, flagged = flagged,
        rate = if (done) flagged / done else NA_real_, stringsAsFactors = FALSE
      )
    }
  }
  do.call(rbind, rows)
}

calibration_md <- function(cal, threshold, alpha) {
  tab <- data.frame(
    comparison = cal$comparison,
    cell = cal$cell,
    `runs in pools` = sprintf("%d + %d", cal$pool_old, cal$pool_new),
    `measured p50 change (pools)` = fmt_pct(cal$pool_shift, 1),
    `runs per side` = cal$n,
    trials = cal$trials,
    `flagged as slowdown` = ifelse(is.na(cal$rate), "-",
                                   sprintf("%d (%.1f%%)", cal$flagged, 100 * cal$rate)),
    check.names = FALSE
  )
  c(sprintf("Gate settings: threshold %g%%, alpha %g, Holm over the cell's p50 (one test).",
            100 * threshold, alpha),
    "", md_table(tab))
}
