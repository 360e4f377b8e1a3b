# Per-run grace-period latency statistics, defined exactly as the kernel's
# tools/testing/selftests/rcutorture/bin/kvm-recheck-rcuscale.sh does:
#
#   gptimes[++n] = $5 / 1000.        (writer-duration ns -> microseconds)
#   sum += $5 / 1000.
#   newNR = asort(gptimes)           (ascending, 1-based)
#   pctNN = int(newNR * NN / 100); if (pctNN < 1) pctNN = 1
#   average = sum / newNR, minimum = gptimes[1], maximum = gptimes[newNR]
#
# i.e. the nearest-rank percentile with the rank rounded DOWN (no
# interpolation): p50 = sorted[max(1, floor(n * 50 / 100))].
# All outputs are in microseconds.

# Rank (1-based index into the ascending sort) of percentile `pct` among n
# samples. Integer arithmetic, so it is exact for any n.
kernel_rank <- function(n, pct) {
  pmax(1, (as.numeric(n) * pct) %/% 100)
}

# Statistics of one run's durations (nanoseconds). Returns a one-row
# data.frame: n, avg_us, min_us, p50_us, p90_us, p99_us, max_us.
# n = 0 gives NA statistics (the kernel script prints "No rcuscale records").
kernel_percentiles <- function(duration_ns) {
  d <- sort(as.numeric(duration_ns[!is.na(duration_ns)]) / 1000)
  n <- length(d)
  if (n == 0) {
    return(data.frame(
      n = 0L, avg_us = NA_real_, min_us = NA_real_, p50_us = NA_real_,
      p90_us = NA_real_, p99_us = NA_real_, max_us = NA_real_
    ))
  }
  data.frame(
    n = n,
    avg_us = sum(d) / n,
    min_us = d[1],
    p50_us = d[kernel_rank(n, 50)],
    p90_us = d[kernel_rank(n, 90)],
    p99_us = d[kernel_rank(n, 99)],
    max_us = d[n]
  )
}

# Per-run statistics for a samples data.frame (run_id, duration_ns), one row
# per run_id that has at least one sample. Vectorised: one sort for all runs.
run_stats <- function(samples) {
  empty <- data.frame(
    run_id = numeric(), n = integer(), avg_us = numeric(), min_us = numeric(),
    p50_us = numeric(), p90_us = numeric(), p99_us = numeric(), max_us = numeric()
  )
  samples <- samples[!is.na(samples$duration_ns), , drop = FALSE]
  if (nrow(samples) == 0) {
    return(empty)
  }
  o <- order(samples$run_id, samples$duration_ns)
  id <- samples$run_id[o]
  d <- as.numeric(samples$duration_ns[o]) / 1000
  groups <- rle(id)
  n <- groups$lengths
  start <- cumsum(c(1, utils::head(n, -1)))
  at <- function(pct) d[start + kernel_rank(n, pct) - 1]
  data.frame(
    run_id = groups$values,
    n = n,
    avg_us = as.numeric(rowsum(d, id, reorder = FALSE)) / n,
    min_us = d[start],
    p50_us = at(50),
    p90_us = at(90),
    p99_us = at(99),
    max_us = d[start + n - 1]
  )
}
