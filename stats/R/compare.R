# Comparing two sets of runs (candidate vs baseline, or expedited vs normal)
# on a per-run metric (p50 by default).
#
# * Test: Mann-Whitney U / Wilcoxon rank-sum, two-sided. The p-value is the
#   EXACT permutation p-value whenever the pooled sample is small enough
#   (n_old * n_new <= 2500, far above the usual 5-30 runs per side), also
#   with ties: the null distribution of the candidate's rank sum is computed
#   over mid-ranks by dynamic programming (conditional on the tie pattern),
#   and p = P(|W - E[W]| >= |w_obs - E[W]|). Without ties this equals
#   wilcox.test(exact = TRUE). Larger samples use the normal approximation
#   with tie and continuity correction (as wilcox.test(exact = FALSE)).
# * Size: the Hodges-Lehmann shift, the median of all n_new * n_old pairwise
#   differences (new - old), with the distribution-free Moses confidence
#   interval (order statistics of those differences at the exact Wilcoxon
#   quantile): identical to wilcox.test(new, old, conf.int = TRUE,
#   exact = TRUE). With ties the same interval is used (then approximate).
#   When the requested level is not achievable with so few runs, the widest
#   interval is returned and `ci_level` says the level actually achieved.
#   The relative change is HL shift / baseline median (CI likewise; the
#   uncertainty of the baseline median is not propagated). Positive = the
#   candidate is slower (larger grace-period latency).
# * Multiplicity: Holm's step-down correction over all rows (cells x
#   metrics) of ONE comparison table, i.e. one question such as "does
#   candidate X differ from baseline Y?". A change is significant when the
#   Holm-adjusted p < alpha.

# Null distribution of the sum of k of the (doubled, integer) mid-ranks `a`,
# over all choose(length(a), k) subsets equally likely. Returns probabilities
# for sums 0..max.
rank_sum_null <- function(a, k) {
  maxs <- sum(sort(a, decreasing = TRUE)[seq_len(k)])
  cnt <- matrix(0, nrow = k + 1, ncol = maxs + 1)
  cnt[1, 1] <- 1
  for (i in seq_along(a)) {
    ai <- a[i]
    if (ai > maxs) next
    to <- (ai + 1):(maxs + 1)
    from <- 1:(maxs + 1 - ai)
    for (j in min(i, k):1) {
      cnt[j + 1, to] <- cnt[j + 1, to] + cnt[j, from]
    }
  }
  cnt[k + 1, ] / sum(cnt[k + 1, ])
}

# Two-sided Mann-Whitney / Wilcoxon rank-sum test of `new` vs `old`.
# Returns list(U, p_value, method) with U the Mann-Whitney statistic of `new`
# (number of (new, old) pairs with new > old, ties counting 1/2).
rank_sum_test <- function(new, old, exact_limit = 2500) {
  new <- new[!is.na(new)]
  old <- old[!is.na(old)]
  n1 <- length(new)
  n2 <- length(old)
  if (n1 == 0 || n2 == 0) {
    return(list(U = NA_real_, p_value = NA_real_, method = "none"))
  }
  r <- rank(c(new, old))
  N <- n1 + n2
  U <- sum(r[seq_len(n1)]) - n1 * (n1 + 1) / 2
  ties <- anyDuplicated(r) > 0
  if (n1 * n2 <= exact_limit) {
    a <- as.integer(round(2 * r))
    k <- min(n1, n2)
    side <- if (n1 <= n2) seq_len(n1) else n1 + seq_len(n2)
    w2 <- sum(a[side])
    e2 <- k * (N + 1)
    prob <- rank_sum_null(a, k)
    s <- seq_along(prob) - 1
    p <- sum(prob[abs(s - e2) >= abs(w2 - e2)])
    method <- if (ties) "exact (ties, permutation)" else "exact"
  } else {
    nties <- table(r)
    z <- U - n1 * n2 / 2
    sigma <- sqrt((n1 * n2 / 12) * ((N + 1) - sum(nties^3 - nties) / (N * (N - 1))))
    if (sigma == 0) {
      p <- 1
    } else {
      z <- (z - sign(z) * 0.5) / sigma
      p <- 2 * min(stats::pnorm(z), stats::pnorm(z, lower.tail = FALSE))
    }
    method <- "normal approximation"
  }
  list(U = U, p_value = min(1, p), method = method)
}

# Hodges-Lehmann shift (new - old) with the Moses confidence interval.
# Returns c(estimate, lo, hi, level) where level is the achieved confidence.
hl_shift <- function(new, old, conf = 0.95) {
  new <- new[!is.na(new)]
  old <- old[!is.na(old)]
  n1 <- length(new)
  n2 <- length(old)
  if (n1 == 0 || n2 == 0) {
    return(c(estimate = NA_real_, lo = NA_real_, hi = NA_real_, level = NA_real_))
  }
  d <- sort(outer(new, old, "-"))
  est <- stats::median(d)
  if (n1 < 2 || n2 < 2) {
    return(c(estimate = est, lo = NA_real_, hi = NA_real_, level = NA_real_))
  }
  alpha <- 1 - conf
  if (n1 * n2 <= 10000) {
    qu <- stats::qwilcox(alpha / 2, n1, n2)
    if (qu == 0) qu <- 1
    level <- 1 - 2 * stats::pwilcox(qu - 1, n1, n2)
  } else {
    z <- stats::qnorm(1 - alpha / 2)
    qu <- max(1, floor(n1 * n2 / 2 - z * sqrt(n1 * n2 * (n1 + n2 + 1) / 12)))
    level <- conf
  }
  ql <- n1 * n2 - qu
  c(estimate = est, lo = d[qu], hi = d[ql + 1], level = level)
}

# Smallest two-sided p-value the rank-sum test can produce with n1 and n2
# runs (no ties): 2 / choose(n1 + n2, n1).
min_attainable_p <- function(n1, n2) {
  ifelse(n1 < 1 | n2 < 1, 1, pmin(1, 2 / choose(n1 + n2, n1)))
}

# Compare two vectors of per-run values. One-row data.frame.
compare_values <- function(old, new, conf = 0.95, R = 2000, seed = 1) {
  old <- old[!is.na(old)]
  new <- new[!is.na(new)]
  bo <- boot_median_ci(old, R = R, conf = conf, seed = seed)
  bn <- boot_median_ci(new, R = R, conf = conf, seed = seed)
  hl <- hl_shift(new, old, conf = conf)
  rs <- rank_sum_test(new, old)
  base <- bo[["median"]]
  rel <- function(x) if (is.na(base) || base == 0) NA_real_ else x / base
  data.frame(
    n_old = length(old), n_new = length(new),
    old_median = bo[["median"]], old_lo = bo[["lo"]], old_hi = bo[["hi"]],
    new_median = bn[["median"]], new_lo = bn[["lo"]], new_hi = bn[["hi"]],
    rel_change = rel(hl[["estimate"]]), rel_lo = rel(hl[["lo"]]), rel_hi = rel(hl[["hi"]]),
    hl_shift_us = hl[["estimate"]], hl_lo_us = hl[["lo"]], hl_hi_us = hl[["hi"]],
    ci_level = hl[["level"]],
    ratio_of_medians = if (is.na(base) || base == 0) NA_real_ else bn[["median"]] / base - 1,
    U = rs$U, p_value = rs$p_value, p_method = rs$method,
    min_p = min_attainable_p(length(new), length(old))
  )
}

# Holm-adjust p-values (NA stays NA and is not counted in the family) and
# flag significance.
add_holm <- function(tab, alpha = 0.05) {
  tab$p_holm <- rep(NA_real_, nrow(tab))
  ok <- !is.na(tab$p_value)
  tab$p_holm[ok] <- stats::p.adjust(tab$p_value[ok], method = "holm")
  tab$family_size <- rep(sum(ok), nrow(tab))
  tab$significant <- !is.na(tab$p_holm) & tab$p_holm < alpha
  tab
}

empty_comparison <- function() {
  data.frame(
    cell = character(), metric = character(), baseline = character(),
    candidate = character(), n_old = integer(), n_new = integer(),
    old_median = numeric(), old_lo = numeric(), old_hi = numeric(),
    new_median = numeric(), new_lo = numeric(), new_hi = numeric(),
    rel_change = numeric(), rel_lo = numeric(), rel_hi = numeric(),
    hl_shift_us = numeric(), hl_lo_us = numeric(), hl_hi_us = numeric(),
    ci_level = numeric(), ratio_of_medians = numeric(), U = numeric(),
    p_value = numeric(), p_method = character(), min_p = numeric(),
    p_holm = numeric(), family_size = integer(), significant = logical()
  )
}

# Expedited (new) vs normal (old) grace periods within each variant, pairing
# cells whose keys differ only in the GP-mode segment. `cell` names the pair
# with "*" in place of the GP mode. Holm over all rows of the table.
compare_gp_modes <- function(run_table, variants = NULL, metrics = "p50",
                             conf = 0.95, R = 2000, seed = 1, alpha = 0.05) {
  rt <- run_table[run_table$kind == "rcuscale" &
                    run_table$gp_mode %in% c("normal", "expedited"), , drop = FALSE]
  if (!is.null(variants)) rt <- rt[rt$variant %in% variants, , drop = FALSE]
  if (!nrow(rt)) return(empty_comparison())
  rt$pair <- cell_pair_key(rt$cell)
  rows <- list()
  for (v in sort(unique(rt$variant))) {
    for (pair in sort(unique(rt$pair[rt$variant == v]))) {
      g <- rt[rt$variant == v & rt$pair == pair, , drop = FALSE]
      if (!all(c("normal", "expedited") %in% g$gp_mode)) next
      for (m in metrics) {
        col <- paste0(m, "_us")
        old <- g[[col]][g$gp_mode == "normal" & g$usable]
        new <- g[[col]][g$gp_mode == "expedited" & g$usable]
        row <- data.frame(cell = pair, metric = m,
                          baseline = paste0(v, ":normal"),
                          candidate = paste0(v, ":expedited"))
        rows[[length(rows) + 1]] <- cbind(row, compare_values(old, new, conf, R, seed))
      }
    }
  }
  if (!length(rows)) return(empty_comparison())
  out <- add_holm(do.call(rbind, rows), alpha)
  rownames(out) <- NULL
  out
}

# Smallest equal number of runs per side for which a complete separation
# gives p * m < alpha (two-sided, no ties).
runs_for_decidability <- function(m, alpha) {
  n <- 2
  while (2 / choose(2 * n, n) * m >= alpha && n < 1000) n <- n + 1
  n
}

# A sentence when some rows of a comparison table cannot become significant
# whatever the data: smallest attainable p (complete separation of the runs)
# times the Holm family size is >= alpha. NULL when every row can.
power_note <- function(cmp, alpha = 0.05) {
  t <- cmp[!is.na(cmp$p_value), , drop = FALSE]
  if (!nrow(t)) return(NULL)
  m <- t$family_size[1]
  weak <- t$min_p * m >= alpha
  if (!any(weak)) return(NULL)
  n_req <- runs_for_decidability(m, alpha)
  sprintf(paste(
    "Too few runs to decide: in %d of %d comparisons the smallest attainable p-value",
    "(%s, with n = %s) times %d Holm tests is >= alpha = %s, so no change there can be",
    "significant; '~' means 'undecided', not 'no change'. Use at least %d runs per side."),
    sum(weak), nrow(t), paste(unique(signif(t$min_p[weak], 2)), collapse = "/"),
    paste(unique(paste0(t$n_old[weak], "+", t$n_new[weak])), collapse = ", "),
    m, format(alpha), n_req)
}
