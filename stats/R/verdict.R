# The gate's statistics for one comparison row: a candidate's per-run
# values against a baseline's, on the log scale, one-sided.
#
# * Values: y = log(per-run statistic); a censored run (rcuscale timed out:
#   its latency is at least the timeout, larger than any finished run's) is
#   y = +Inf.  Ranks are exact for it; nothing is imputed.
# * Estimate: the Hodges-Lehmann shift of y (median of the n_new * n_old
#   pairwise differences new - old), reported as exp(shift) - 1, so a
#   relative change and its bounds stay inside (-100%, +Inf).
# * Bounds: distribution-free one-sided Moses bounds (order statistics of the
#   pairwise differences at the exact Wilcoxon quantile; normal approximation
#   beyond 10^4 pairs).  When the asked level cannot be reached with so few
#   runs, the bound is infinite: nothing is claimed.
# * Test: one-sided Wilcoxon-Mann-Whitney, H0 "the candidate is not slower",
#   exact (with ties: conditional on the tie pattern) up to 2500 pairs.

# One-sided p-value P(U >= u_obs) of the rank-sum test of `new` > `old`
# (values may be +Inf; ties get mid-ranks).
rank_sum_greater <- function(new, old, exact_limit = 2500) {
  n1 <- length(new)
  n2 <- length(old)
  if (n1 == 0 || n2 == 0) return(NA_real_)
  r <- rank(c(new, old))
  N <- n1 + n2
  U <- sum(r[seq_len(n1)]) - n1 * (n1 + 1) / 2
  ties <- anyDuplicated(r) > 0
  if (!ties && n1 * n2 <= 10000) {
    return(stats::pwilcox(U - 1, n1, n2, lower.tail = FALSE))
  }
  if (n1 * n2 <= exact_limit) {
    a <- as.integer(round(2 * r))
    prob <- rank_sum_null(a, n1)
    w2 <- sum(a[seq_len(n1)])
    s <- seq_along(prob) - 1
    return(min(1, sum(prob[s >= w2])))
  }
  nties <- table(r)
  sigma <- sqrt((n1 * n2 / 12) * ((N + 1) - sum(nties^3 - nties) / (N * (N - 1))))
  if (sigma == 0) return(1)
  stats::pnorm((U - n1 * n2 / 2 - 0.5) / sigma, lower.tail = FALSE)
}

# Smallest one-sided p-value the rank-sum test can give with n1 + n2 runs.
min_p_one_sided <- function(n1, n2) {
  ifelse(n1 < 1 | n2 < 1, 1, 1 / choose(n1 + n2, n1))
}

# Sorted pairwise differences new - old (Inf - Inf counts as 0: a tie).
pair_diffs <- function(new, old) {
  d <- outer(new, old, "-")
  d[is.nan(d)] <- 0
  sort(as.vector(d))
}

# Index k such that d[k] is the one-sided (1 - a) lower Moses bound and
# d[n1 n2 + 1 - k] the upper one; 0 when the level cannot be reached.
moses_index <- function(n1, n2, a) {
  if (n1 * n2 <= 10000) {
    k <- stats::qwilcox(a, n1, n2)
    # P(U <= k - 1) < a <= P(U <= k): d[k] covers with >= 1 - a
    return(if (stats::pwilcox(k - 1, n1, n2) >= a) 0 else k)
  }
  z <- stats::qnorm(1 - a)
  max(0, floor(n1 * n2 / 2 - z * sqrt(n1 * n2 * (n1 + n2 + 1) / 12)))
}

# Log-scale comparison of new vs old at one-sided level a for the bounds.
# Returns a list: n_old, n_new, censored_old, censored_new, shift, lo, hi
# (log scale), rel, rel_lo, rel_hi (exp(.) - 1), p (one-sided), sd
# (pooled SD of the finite log values) and spread (rank_spread() of the two
# sides: what runs-needed is computed from).
log_compare <- function(old, new, a = 0.025) {
  old <- old[!is.na(old)]
  new <- new[!is.na(new)]
  n1 <- length(new)
  n2 <- length(old)
  out <- list(n_old = n2, n_new = n1, censored_old = sum(is.infinite(old)),
              censored_new = sum(is.infinite(new)), shift = NA_real_,
              lo = NA_real_, hi = NA_real_, p = NA_real_, sd = NA_real_,
              spread = NA_real_)
  if (n1 >= 1 && n2 >= 1) {
    y1 <- log(new)
    y2 <- log(old)
    d <- pair_diffs(y1, y2)
    out$shift <- stats::median(d)
    k <- moses_index(n1, n2, a)
    out$lo <- if (k > 0) d[k] else -Inf
    out$hi <- if (k > 0) d[n1 * n2 + 1 - k] else Inf
    out$p <- rank_sum_greater(y1, y2)
    f1 <- y1[is.finite(y1)]
    f2 <- y2[is.finite(y2)]
    if (length(f1) + length(f2) > 2) {
      ss <- sum((f1 - mean(f1))^2) + if (length(f2)) sum((f2 - mean(f2))^2) else 0
      df <- max(1, length(f1) + length(f2) - (length(f1) > 0) - (length(f2) > 0))
      out$sd <- sqrt(ss / df)
    }
    out$spread <- rank_spread(list(y1, y2))
  }
  out$rel <- expm1(out$shift)
  out$rel_lo <- expm1(out$lo)
  out$rel_hi <- expm1(out$hi)
  out
}

# Asymptotic relative efficiency of the rank-sum test against the t-test
# for normal data (3/pi): rank_spread()'s normal-theory fallback.
RANK_EFFICIENCY <- 3 / pi
RUNS_NEEDED_CAP <- 10000

# The spread the gate's rank statistics see, on the log scale: the sigma
# with which the Hodges-Lehmann shift of n runs a side has standard error
# sigma * sqrt(2 / n), and the rank-sum test the matching power
# (Lehmann 1975): sigma = 1 / (sqrt(12) * h(0)), where h is the density of
# the difference of two runs of one side, h(0) = integral of f^2.  For
# normal data this is SD * sqrt(pi / 3); for the heavy-tailed per-run
# means of expedited GPs it is 1.6-2.2 times less than that (a few slow
# boots widen the SD but hardly move the ranks), and a runs-needed figure
# from the SD overstated the runs the gate needs by 2.4-4.5 times there
# (RESULTS.md, "Runs per side the gate needs").
# `ys`: a list of groups of log values (each side, or each host and side);
# infinite values (censored runs) are left out.  h(0) is the Gaussian
# kernel estimate at 0 (bandwidth bw.nrd0) over the symmetrised
# differences within each group, so a shift between the groups does not
# enter.  With fewer than RANK_SPREAD_MIN_PAIRS such differences, or more
# than RANK_SPREAD_MAX_TIES of them exactly 0 (tick-bound values, where the
# formula for continuous data does not hold), it falls back to the pooled
# SD * sqrt(pi / 3).
# NA when no group has two finite values; 0 when every value ties.
RANK_SPREAD_MIN_PAIRS <- 20
RANK_SPREAD_MAX_TIES <- 0.1
rank_spread <- function(ys) {
  ys <- lapply(ys, function(y) y[is.finite(y)])
  d <- unlist(lapply(ys, function(y) {
    if (length(y) < 2) return(numeric())
    m <- outer(y, y, "-")
    m[upper.tri(m)]
  }))
  if (!length(d)) return(NA_real_)
  if (all(d == 0)) return(0)
  if (length(d) < RANK_SPREAD_MIN_PAIRS || mean(d == 0) > RANK_SPREAD_MAX_TIES) {
    return(within_host_sd(ys) / sqrt(RANK_EFFICIENCY))
  }
  d <- c(d, -d)
  h0 <- mean(stats::dnorm(d, 0, stats::bw.nrd0(d)))
  1 / (sqrt(12) * h0)
}

# Runs per side that would decide a row at the rank spread `spread`
# (rank_spread(), log scale) and estimate `shift`: PASS needs
# shift + z(1-a) se < log(1+thr), SLOWDOWN needs shift - z(1-a_test) se > 0
# (and shift > log(1+thr)), with se = spread * sqrt(2/n).  Also at least
# the smallest n at which the exact test can reach a_test.  Inf when the
# estimate sits on the threshold (or no spread is known); capped at
# RUNS_NEEDED_CAP.
runs_needed <- function(shift, spread, threshold, a, a_test = a) {
  t <- log1p(threshold)
  n_test <- 2
  while (min_p_one_sided(n_test, n_test) >= a_test && n_test < 50) n_test <- n_test + 1
  if (is.na(shift) || is.na(spread) || !is.finite(shift)) return(NA_real_)
  if (spread == 0) return(n_test)
  if (abs(shift - t) < 1e-12) return(Inf)
  gap <- if (shift < t) t - shift else shift
  z <- stats::qnorm(1 - if (shift < t) a else a_test)
  n <- ceiling(2 * (z * spread / gap)^2)
  if (n > RUNS_NEEDED_CAP) Inf else max(n, n_test)
}

# Tarone's (1990) testable rows: with m_k rows whose smallest attainable
# p-value is below a/k, the smallest k with m_k <= k.  Returns a logical
# vector (TRUE = counted in the Holm family).  A row whose test cannot
# reject at all (e.g. 1+1 or 3+3 runs) never costs the others power.
tarone_testable <- function(min_p, a) {
  ok <- !is.na(min_p)
  if (!any(ok)) return(ok)
  for (k in seq_len(sum(ok))) {
    testable <- ok & min_p < a / k
    if (sum(testable) <= k) return(testable)
  }
  ok & min_p < a / sum(ok)
}

# Holm-adjusted p-values over the rows flagged `family` (NA elsewhere).
holm_within <- function(p, family) {
  out <- rep(NA_real_, length(p))
  use <- family & !is.na(p)
  if (any(use)) out[use] <- stats::p.adjust(p[use], method = "holm")
  out
}

# The verdict of one row, given its estimate and bounds (log scale, at level
# a), the Holm-adjusted p-value and whether it is testable (SLOWDOWN at
# level a_slow):
#   PASS          upper bound < log(1 + threshold): a slowdown beyond the
#                 threshold is ruled out at the row's level;
#   SLOWDOWN      testable, p_holm < a_slow and estimate > log(1 + threshold);
#   INCONCLUSIVE  anything else.
row_verdict <- function(hi, shift, p_holm, testable, threshold, a, a_slow = a) {
  t <- log1p(threshold)
  ifelse(!is.na(hi) & hi < t, "PASS",
         ifelse(testable & !is.na(p_holm) & p_holm < a_slow & !is.na(shift) & shift > t,
                "SLOWDOWN", "INCONCLUSIVE"))
}

# One-sided Fisher exact test: does the candidate fail more often?
# Returns p (NA when the candidate never failed: nothing to test).
failure_test <- function(fail_old, n_old, fail_new, n_new) {
  if (n_old < 1 || n_new < 1 || fail_new < 1) return(NA_real_)
  tab <- matrix(c(fail_new, n_new - fail_new, fail_old, n_old - fail_old), nrow = 2)
  stats::fisher.test(tab, alternative = "greater")$p.value
}

# Smallest attainable one-sided Fisher p-value with these sizes and the
# candidate's observed failures (all failures on the candidate's side).
failure_min_p <- function(n_old, n_new, fail_total) {
  if (fail_total < 1 || n_new < fail_total) return(1)
  stats::dhyper(fail_total, n_new, n_old, fail_total)
}
