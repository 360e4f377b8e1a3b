# The sequential gate: a comparison row looked at again and again as runs
# are added, with error rates that hold however many looks are taken.
#
# Design (group-sequential, Lan-DeMets alpha spending; Jennison & Turnbull
# 2000, ch. 7; Maurer & Bretz 2013 for Holm across rows):
# * Two one-sided hypotheses per row, on the log scale, delta = the shift of
#   the candidate's per-run values against the baseline's:
#     SLOWDOWN  rejects H0: delta <= 0          (a false alarm: A/A)
#     PASS      rejects H0: delta >= log(1 + t) (a wrong PASS: a true
#               slowdown of the threshold t or more)
#   each with its own one-sided level and its own spending boundary.  The
#   looks stop as soon as either crosses, so each boundary is used
#   non-binding with respect to the other: stopping for one decision only
#   takes chances away from the other, and each error rate stays at or
#   below its level.
# * Statistic: the standardised Mann-Whitney U of the two sides (ties
#   mid-ranked and variance-corrected; a censored run is +Inf), of
#   new - 0 against old for SLOWDOWN and of old against new - log(1 + t) for
#   PASS.  Under its null it is asymptotically N(0, 1), and its values at
#   successive looks have the canonical joint distribution of a
#   group-sequential test (correlation sqrt(I_j / I_k)).
# * Information at a look: I = n_old n_new / (n_old + n_new); its fraction
#   of the design's maximum (max_runs a side: I_max = max_runs / 2).  A
#   look flagged final (the budget or max_runs reached) has fraction 1 and
#   spends what is left of the level.
# * Boundaries: the O'Brien-Fleming-type spending function (rpact's "asOF"):
#   almost nothing is spent at the early looks, so a design that runs to
#   max_runs needs hardly more runs than the fixed-n test, while clear
#   cases stop early.  The boundary at look k depends on the fractions of
#   looks 1..k only, so it can be computed as the looks come.
# * A SLOWDOWN also needs the Hodges-Lehmann estimate above the threshold
#   at that look (as in the fixed-n gate): it only removes rejections.
#   Across the rows of one statistic SLOWDOWN is Holm-corrected in the
#   group-sequential way (a row's level is recycled to the others and their
#   boundaries are recomputed at the larger level, at every look so far).
#   PASS needs every row (intersection-union): no correction.
# The fixed-n gate is the one-look case: with one final look the boundary
# is qnorm(1 - a).

SEQ_SPENDING <- "asOF"
# The spending function in use: SEQ_SPENDING unless the option
# rcuwb.seq_spending names another (the seqcal study's --spending; an
# option, since an assignment by a script does not reach the package's
# namespace).
seq_spending <- function() getOption("rcuwb.seq_spending", SEQ_SPENDING)
# rpact's largest number of looks
SEQ_MAX_LOOKS <- 20

# One-sided critical values (Z scale) at the looks with information
# fractions f (increasing, the last may be 1), at level a.  Computed once
# per (fractions, level): every row of every look asks again.
SEQ_BOUNDS_CACHE <- new.env()
seq_bounds <- function(f, a, spending = seq_spending()) {
  k <- length(f)
  stopifnot(k >= 1, k <= SEQ_MAX_LOOKS, all(diff(f) > 0), f[1] > 0, f[k] <= 1)
  if (k == 1 && f[1] == 1) return(stats::qnorm(1 - a))
  key <- paste(spending, a, paste(format(f, digits = 15), collapse = ","))
  if (!is.null(SEQ_BOUNDS_CACHE[[key]])) return(SEQ_BOUNDS_CACHE[[key]])
  rates <- if (f[k] < 1) c(f, 1) else f
  if (length(rates) > SEQ_MAX_LOOKS) {
    stop(sprintf("%d looks: at most %d (a larger batch)", length(rates) - 1, SEQ_MAX_LOOKS - 1))
  }
  d <- rpact::getDesignGroupSequential(kMax = length(rates), alpha = a, sided = 1,
                                       typeOfDesign = spending, informationRates = rates)
  SEQ_BOUNDS_CACHE[[key]] <- d$criticalValues[seq_len(k)]
}

# Standardised Mann-Whitney U of `new` against `old` (large when new is
# larger), ties variance-corrected, with the continuity correction of a
# one-sided test of "new is larger" (U - 1/2: U moves in steps of 1, and
# without it the normal approximation rejects a little too often with few
# runs); 0 when every value ties.
mw_z <- function(new, old) {
  n1 <- length(new)
  n2 <- length(old)
  r <- rank(c(new, old))
  N <- n1 + n2
  U <- sum(r[seq_len(n1)]) - n1 * (n1 + 1) / 2
  nties <- table(r)
  v <- (n1 * n2 / 12) * ((N + 1) - sum(nties^3 - nties) / (N * (N - 1)))
  if (v <= 0) return(0)
  (U - n1 * n2 / 2 - 0.5) / sqrt(v)
}

# Information fraction of a look with n_old, n_new runs in a design of at
# most max_runs a side.
seq_fraction <- function(n_old, n_new, max_runs) {
  pmin(1, (n_old * n_new / (n_old + n_new)) / (max_runs / 2))
}

# A row's statistics at each look.  y_old, y_new: log per-run values
# (+Inf censored); look_old, look_new: the look at which each run came in
# (1, 2, ...).  final: the last look spends what is left.  Returns a data
# frame with one line per look that has runs on both sides: look, n_old,
# n_new, frac, z_slow, z_pass, shift (the Hodges-Lehmann estimate).
seq_looks <- function(y_old, y_new, look_old, look_new, threshold, max_runs, final = FALSE) {
  t <- log1p(threshold)
  looks <- sort(unique(c(look_old, look_new)))
  # a look counts from the first at which both sides have runs (none: no look)
  first <- if (length(look_old) && length(look_new)) max(min(look_old), min(look_new)) else Inf
  looks <- looks[looks >= first]
  k <- length(looks)
  n_old <- n_new <- integer(k)
  z_slow <- z_pass <- shift <- numeric(k)
  for (i in seq_len(k)) {
    o <- y_old[look_old <= looks[i]]
    n <- y_new[look_new <= looks[i]]
    n_old[i] <- length(o)
    n_new[i] <- length(n)
    z_slow[i] <- mw_z(n, o)
    z_pass[i] <- mw_z(o, n - t)
    shift[i] <- stats::median(pair_diffs(n, o))
  }
  out <- data.frame(look = looks, n_old = n_old, n_new = n_new,
                    frac = seq_fraction(n_old, n_new, max_runs),
                    z_slow = z_slow, z_pass = z_pass, shift = shift)
  seq_keep_looks(out, final)
}

# The looks that count, of a frame of seq_looks() columns: the last one
# flagged final spends what is left (fraction 1); a look counts only when
# it adds information, and the design ends at the first look with
# fraction 1 (max_runs reached).
seq_keep_looks <- function(out, final) {
  if (!nrow(out)) return(out)
  if (final) out$frac[nrow(out)] <- 1
  # a look counts only when it adds information, and the design ends at
  # the first look with fraction 1 (max_runs reached)
  keep <- logical(nrow(out))
  last <- 0
  for (i in seq_len(nrow(out))) {
    if (out$frac[i] > last + 1e-9 && last < 1) {
      keep[i] <- TRUE
      last <- out$frac[i]
    }
  }
  out <- out[keep, , drop = FALSE]
  rownames(out) <- NULL
  out
}

# seq_looks() of a row whose runs ran on several hosts (h_old, h_new: each
# run's host): the van Elteren statistic (strata.R), runs compared within
# their host and combined over the hosts, so that a host effect is neither
# a slowdown nor noise.  Under its null it is asymptotically N(0, 1) with
# the same independent-increments structure as the one-host statistic
# (a sum over hosts of independent rank sums), so the same boundaries
# apply; the information is the sum over hosts of n_old n_new / (n_old +
# n_new), of the design's max_runs / 2.  shift: the median of the
# within-host pairwise differences.
seq_looks_strat <- function(y_old, y_new, look_old, look_new, h_old, h_new, threshold, max_runs,
                            final = FALSE) {
  t <- log1p(threshold)
  hosts <- unique(c(h_old, h_new))
  looks <- sort(unique(c(look_old, look_new)))
  first <- if (length(look_old) && length(look_new)) max(min(look_old), min(look_new)) else Inf
  looks <- looks[looks >= first]
  rows <- lapply(looks, function(l) {
    o <- lapply(hosts, function(h) y_old[h_old == h & look_old <= l])
    n <- lapply(hosts, function(h) y_new[h_new == h & look_new <= l])
    no <- lengths(o)
    nn <- lengths(n)
    both <- no > 0 & nn > 0
    z <- function(x) if (is.na(x$z)) 0 else x$z
    d <- unlist(lapply(which(both), function(i) pair_diffs(n[[i]], o[[i]])))
    data.frame(look = l, n_old = sum(no), n_new = sum(nn),
               frac = min(1, sum(no[both] * nn[both] / (no[both] + nn[both])) / (max_runs / 2)),
               z_slow = z(van_elteren_greater(n, o)),
               z_pass = z(van_elteren_greater(o, lapply(n, function(x) x - t))),
               shift = if (length(d)) stats::median(d) else NA_real_)
  })
  out <- if (length(rows)) do.call(rbind, rows) else
    data.frame(look = integer(), n_old = integer(), n_new = integer(), frac = numeric(),
               z_slow = numeric(), z_pass = numeric(), shift = numeric())
  seq_keep_looks(out, final)
}

# The first look at which z crosses the boundaries of level a (and, for
# SLOWDOWN, the estimate is above the threshold); NA when none.
seq_first_crossing <- function(looks, z, a, need = rep(TRUE, nrow(looks))) {
  if (!nrow(looks) || a <= 0) return(NA_integer_)
  b <- seq_bounds(looks$frac, a)
  hit <- which(z >= b & need)
  if (length(hit)) hit[1] else NA_integer_
}

# The sequential verdicts of the rows of one statistic.  rows: a list of
# seq_looks() frames.  a: the statistic's one-sided PASS level (a each);
# a_slow: its SLOWDOWN level (Holm over the rows, group-sequential).  Returns a data frame:
# verdict (SLOWDOWN, PASS, or INCONCLUSIVE), look (where it was decided),
# n_old, n_new (at that look, or at the last one), bound (the SLOWDOWN
# boundary at the last look, at the row's final Holm level).
seq_verdicts <- function(rows, threshold, a, a_slow = a) {
  m <- length(rows)
  t <- log1p(threshold)
  slow_at <- rep(NA_integer_, m)
  repeat {
    open <- which(is.na(slow_at))
    if (!length(open)) break
    level <- a_slow / length(open)
    new_hits <- FALSE
    for (i in open) {
      lk <- rows[[i]]
      at <- seq_first_crossing(lk, lk$z_slow, level, need = lk$shift > t)
      if (!is.na(at)) {
        slow_at[i] <- at
        new_hits <- TRUE
      }
    }
    if (!new_hits) break
  }
  out <- lapply(seq_len(m), function(i) {
    lk <- rows[[i]]
    if (!nrow(lk)) {
      return(data.frame(verdict = "INCONCLUSIVE", look = NA_integer_, n_old = 0L, n_new = 0L))
    }
    pass_at <- seq_first_crossing(lk, lk$z_pass, a)
    s <- slow_at[i]
    # the first decision stands: the looks stop there
    if (!is.na(s) && (is.na(pass_at) || s <= pass_at)) {
      v <- "SLOWDOWN"
      at <- s
    } else if (!is.na(pass_at)) {
      v <- "PASS"
      at <- pass_at
    } else {
      v <- "INCONCLUSIVE"
      at <- nrow(lk)
    }
    data.frame(verdict = v, look = lk$look[at], n_old = lk$n_old[at], n_new = lk$n_new[at])
  })
  do.call(rbind, out)
}

# Repeated confidence bounds of the shift at a look, by inverting the
# decisions' own statistic (mw_z(): ties mid-ranked and variance-corrected,
# continuity-corrected) at the boundary b: the upper bound is the smallest
# shift whose PASS test rejects "the slowdown is this large or more", the
# lower bound the largest whose SLOWDOWN test rejects "it is this small or
# less".  So "upper bound below the threshold" and PASS are one statement
# (an approximation of another kind, such as the Moses bounds' order
# statistics, could print a bound under the threshold beside an
# INCONCLUSIVE, as tick-bound normal GPs with many ties did).  The
# statistic steps only at the pairwise differences: they are the
# candidates; between them the cross-group ties are broken by eps, so the
# tie correction is the same at every candidate and each test's z is
# monotone in the shift: a bisection finds the bound.  -Inf / Inf where no
# shift is rejected.
seq_rci <- function(new, old, b) {
  d <- sort(unique(pair_diffs(new, old)))
  d <- d[is.finite(d)]
  eps <- 1e-9
  # PASS rejects from some candidate on; SLOWDOWN up to some candidate
  up <- first_true(length(d), function(i) mw_z(old, new - d[i] - eps) >= b)
  lo <- first_true(length(d), function(i) mw_z(new - d[i] + eps, old) < b) - 1L
  c(if (lo >= 1) d[lo] else -Inf, if (up <= length(d)) d[up] else Inf)
}

# The first i of 1..n where ok(i) holds, for ok FALSE up to some point and
# TRUE after it; n + 1 when it never holds.
first_true <- function(n, ok) {
  lo <- 1L
  hi <- n + 1L
  while (lo < hi) {
    mid <- (lo + hi) %/% 2L
    if (ok(mid)) hi <- mid else lo <- mid + 1L
  }
  lo
}

# The look (1, 2, ...) a run with this id came in at, given the largest run
# id of each earlier look (`cutoffs`, increasing).
seq_look_of <- function(id, cutoffs) {
  1L + vapply(id, function(i) sum(i > cutoffs), integer(1))
}

# The sequential verdicts of one statistic's rows of the gate (a row on
# several hosts of one shape: compared within hosts, seq_looks_strat()).
# groups: gate_plan()'s rows; seq: list(cutoffs, max_runs, final).
# Returns, per row: verdict, look (decided at, or the last), looks, n_old,
# n_new, estimate, lower, upper (relative, the repeated confidence bounds
# at level a at that look), bound (the PASS boundary there).
seq_gate_rows <- function(groups, baseline, candidate, stat, threshold, a, seq, a_slow = a) {
  sides <- lapply(groups, function(g) {
    side <- function(v) {
      x <- g[g$variant == v, , drop = FALSE]
      use <- x$usable | (x$status == "timeout" & x$kind == "rcuscale")
      x <- x[use, , drop = FALSE]
      val <- ifelse(x$usable, x[[GATE_STATS[[stat]]]], Inf)
      data.frame(id = x$id, y = log(val), h = as.character(x$stratum))[!is.na(val), , drop = FALSE]
    }
    list(old = side(baseline), new = side(candidate), strat = length(row_hosts(g)) > 1)
  })
  looks <- lapply(sides, function(s) {
    lo <- seq_look_of(s$old$id, seq$cutoffs)
    ln <- seq_look_of(s$new$id, seq$cutoffs)
    if (s$strat) {
      return(seq_looks_strat(s$old$y, s$new$y, lo, ln, s$old$h, s$new$h, threshold, seq$max_runs,
                             final = isTRUE(seq$final)))
    }
    seq_looks(s$old$y, s$new$y, lo, ln, threshold, seq$max_runs, final = isTRUE(seq$final))
  })
  v <- seq_verdicts(looks, threshold, a, a_slow)
  out <- lapply(seq_along(looks), function(i) {
    lk <- looks[[i]]
    if (!nrow(lk)) {
      return(data.frame(verdict = "INCONCLUSIVE", look = NA_integer_, looks = 0L, estimate = NA_real_,
                        lower = NA_real_, upper = NA_real_, bound = NA_real_, shift = NA_real_))
    }
    k <- match(v$look[i], lk$look)
    s <- sides[[i]]
    in_o <- seq_look_of(s$old$id, seq$cutoffs) <= lk$look[k]
    in_n <- seq_look_of(s$new$id, seq$cutoffs) <= lk$look[k]
    o <- s$old$y[in_o]
    n <- s$new$y[in_n]
    b <- seq_bounds(lk$frac[seq_len(k)], a)[k]
    ci <- if (s$strat) {
      # the van Elteren bounds at the boundary b instead of the fixed-n quantile
      hosts <- unique(c(s$old$h, s$new$h))
      van_elteren_bounds(lapply(hosts, function(h) n[s$new$h[in_n] == h]),
                         lapply(hosts, function(h) o[s$old$h[in_o] == h]), stats::pnorm(-b))
    } else {
      seq_rci(n, o, b)
    }
    data.frame(verdict = v$verdict[i], look = k, looks = nrow(lk), estimate = expm1(lk$shift[k]),
               lower = expm1(ci[1]), upper = expm1(ci[2]), bound = b, shift = lk$shift[k])
  })
  cbind(v[, c("n_old", "n_new")], do.call(rbind, out))
}
