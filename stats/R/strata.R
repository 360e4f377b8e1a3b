# Host strata: one matrix spread over several libvirt hosts.
#
# Every run stores the label of the host it ran on (runs.host, from the
# hosts file: "tcp", "session", "big1", ...), and the runner runs all
# variants of one (cell, repetition) on the same host, so a host holds both
# sides of a comparison.  Hosts differ in speed (a guest on one host can be
# twice as slow as on another), so the gate compares runs within a host and
# combines the hosts afterwards (a stratified comparison) instead of
# pooling: pooled, the host effect would land in the spread and widen every
# interval, and an unbalanced spread of the two sides over the hosts would
# bias the estimate.
#
# * Stratum: the host.  A host stratum with runs of only one side is left
#   out of the comparison (and said so); no shared host at all is refused.
# * Shape: accelerator, host PUs, QEMU and libvirt version.  Hosts of
#   different shape are never combined: a KVM and a TCG host, or a 16- and
#   a 64-PU host, do not measure the same thing, and a within-host shift
#   need not carry over between them.  Each shape group is its own gate row,
#   the cell named "<cell>@<host>,<host>" when a cell has several groups.
# * Within one shape group of several hosts (van Elteren 1960; Hodges and
#   Lehmann 1963):
#     estimate  the stratified Hodges-Lehmann shift: the median of the
#               within-host pairwise differences new - old of log values
#               (no pair across hosts, so host effects cancel).  It weighs
#               every pair alike where the test weighs host h's pairs by
#               1/(N_h + 1); the runner's blocks give the hosts of a cell
#               similar run counts, and then the two agree;
#     test      the van Elteren stratified rank-sum test, one-sided
#               "candidate is slower": T = sum_h (W_h - E W_h) / (N_h + 1),
#               W_h the candidate's mid-rank sum within host h of N_h runs,
#               standardised by its exact null variance (tie-corrected,
#               summed over the hosts) and referred to the normal
#               distribution without continuity correction (the weights
#               make the statistic's lattice uneven, so there is no single
#               half step to correct by);
#     bounds    one-sided (1 - a) bounds by inverting that test over shifts
#               of the candidate's log values, the construction of Moses'
#               bounds for one stratum (Hodges and Lehmann 1963; blocked
#               comparisons in Lehmann 1975, Nonparametrics, ch. 3):
#               the test statistic of new - delta vs old is, up to a
#               constant, S(delta) = sum of w_h over within-host pairs with
#               d > delta (w_h = 1/(N_h + 1)), a step function falling at
#               the pairwise differences.  The lower bound is the smallest
#               delta at which the one-sided "slower" test no longer
#               rejects (S(delta) <= E + z(1 - a) sqrt(V)), the upper bound the largest
#               delta at which the "faster" test does not; both are
#               pairwise differences.  The variance used is the untied one
#               (ties move with delta), as for Moses' single-sample bounds;
#               infinite when the level cannot be reached.
#     sd        the pooled within-host SD, the SD of the finite log
#               values after removing each (host, side) mean.
#     spread    for runs-needed: rank_spread() over the (host, side)
#               groups, so neither the host effect nor the shift enters.
#   Timed-out runs stay +Inf within their host: ranks are exact for them.
# * One host (the single-machine case): exactly the unstratified gate of
#   verdict.R (exact rank-sum p-values and Moses bounds), nothing changes.

# Fields that make a host's shape: runs on hosts that differ in any of them
# are never pooled.
HOST_SHAPE <- c(accel = "accelerator", host_pus = "host PUs",
                qemu_version = "QEMU version", libvirt_version = "libvirt version")

# The host label of each run; a missing or empty label is "?" (one unknown
# host: older databases stored the machine's name, never nothing).
run_hosts <- function(rt) {
  h <- if (is.null(rt$host)) rep(NA_character_, nrow(rt)) else as.character(rt$host)
  ifelse(is.na(h) | !nzchar(h), "?", h)
}

# The distinct values of one field, as text: "7.2.22" or "7.2.22,8.2.0"
# ("" when unknown; numbers rounded so 0.5 and 0.50 agree).
field_vals <- function(x) {
  x <- x[!is.na(x)]
  if (is.numeric(x)) x <- round(x, 2)
  paste(sort(unique(as.character(x))), collapse = ",")
}

# The shape of each host among runs `g` (one cell): a named character
# vector host -> "kvm|16|7.2.22|9.0.0", in the order the hosts first ran.
host_shapes <- function(g) {
  hosts <- unique(g$stratum[order(g$id)])
  vapply(hosts, function(h) {
    x <- g[g$stratum == h, , drop = FALSE]
    paste(vapply(names(HOST_SHAPE), function(f) {
      if (is.null(x[[f]])) "" else field_vals(x[[f]])
    }, character(1)), collapse = "|")
  }, character(1))
}

# Hosts of one cell grouped by shape: a list of host vectors (first group
# the one whose host ran first) named "" when there is a single group, else
# "@<host>,<host>" (hosts sorted) so each group is a row of its own.
shape_groups <- function(g) {
  sh <- host_shapes(g)
  if (!length(sh)) return(list())
  groups <- split(names(sh), factor(sh, levels = unique(sh)))
  names(groups) <- if (length(groups) == 1) "" else
    vapply(groups, function(h) paste0("@", paste(sort(h), collapse = ",")), character(1))
  groups
}

# The shape-group suffix of every run ("" or "@a,b"), per (matrix, cell):
# for summaries that must not pool hosts of different shape either.
shape_suffix <- function(rt) {
  out <- rep("", nrow(rt))
  if (!nrow(rt)) return(out)
  rt$stratum <- run_hosts(rt)
  key <- paste(ifelse(is.na(rt$matrix), "", rt$matrix), rt$cell, sep = "\r")
  for (i in split(seq_len(nrow(rt)), key)) {
    sg <- shape_groups(rt[i, , drop = FALSE])
    if (length(sg) < 2) next
    for (k in seq_along(sg)) out[i][rt$stratum[i] %in% sg[[k]]] <- names(sg)[k]
  }
  out
}

# The hosts with values on both sides, NAs dropped: a list of
# list(y1 = candidate's, y2 = baseline's).  A host with one side only
# carries no within-host information.
both_sides <- function(new, old) {
  hosts <- lapply(seq_along(new), function(h) {
    list(y1 = new[[h]][!is.na(new[[h]])], y2 = old[[h]][!is.na(old[[h]])])
  })
  Filter(function(x) length(x$y1) > 0 && length(x$y2) > 0, hosts)
}

# One-sided van Elteren test of "the candidate is slower".  `new`, `old`:
# lists of per-host values (same length, host by host; +Inf allowed).
# Hosts with no value on a side carry no within-host information and are
# skipped.  Returns list(p, z, t, var); p = 1 when the variance is 0 (all
# tied), NA when no host has both sides.
van_elteren_greater <- function(new, old) {
  t <- 0
  v <- 0
  hosts <- both_sides(new, old)
  for (s in hosts) {
    y1 <- s$y1
    y2 <- s$y2
    n1 <- length(y1)
    n2 <- length(y2)
    N <- n1 + n2
    r <- rank(c(y1, y2))
    ties <- table(r)
    w <- 1 / (N + 1)
    t <- t + w * (sum(r[seq_len(n1)]) - n1 * (N + 1) / 2)
    v <- v + w^2 * (n1 * n2 / 12) * ((N + 1) - sum(ties^3 - ties) / (N * (N - 1)))
  }
  if (!length(hosts)) return(list(p = NA_real_, z = NA_real_, t = NA_real_, var = NA_real_))
  if (v <= 0) return(list(p = 1, z = 0, t = t, var = v))
  z <- t / sqrt(v)
  list(p = stats::pnorm(z, lower.tail = FALSE), z = z, t = t, var = v)
}

# Smallest p the van Elteren test (normal approximation, no ties) can give
# with these runs per host: every candidate run above every baseline run
# of its host.  For Tarone's testable rows.
van_elteren_min_p <- function(n_new, n_old) {
  use <- n_new > 0 & n_old > 0
  if (!any(use)) return(1)
  n1 <- n_new[use]
  n2 <- n_old[use]
  N <- n1 + n2
  t_max <- sum(n1 * n2 / 2 / (N + 1))
  v <- sum(n1 * n2 / (12 * (N + 1)))
  stats::pnorm(t_max / sqrt(v), lower.tail = FALSE)
}

# One-sided (1 - a) lower and upper bounds of the shift by inverting the
# van Elteren test (see the header): c(lo, hi) on the scale of the values.
van_elteren_bounds <- function(new, old, a) {
  d <- numeric()
  w <- numeric()
  v <- 0
  for (s in both_sides(new, old)) {
    n1 <- length(s$y1)
    n2 <- length(s$y2)
    N <- n1 + n2
    d <- c(d, pair_diffs(s$y1, s$y2))
    w <- c(w, rep(1 / (N + 1), n1 * n2))
    v <- v + n1 * n2 / (12 * (N + 1))
  }
  if (!length(d)) return(c(lo = NA_real_, hi = NA_real_))
  # reject "shift <= delta" when S(delta) > crit; a small tolerance keeps a
  # sum that equals crit exactly (not a rejection) from rounding above it
  crit <- sum(w) / 2 + stats::qnorm(1 - a) * sqrt(v) + 1e-9
  down <- order(d, decreasing = TRUE)
  m_lo <- which(cumsum(w[down]) > crit)[1]
  up <- order(d)
  m_hi <- which(cumsum(w[up]) > crit)[1]
  c(lo = if (is.na(m_lo)) -Inf else d[down][m_lo],
    hi = if (is.na(m_hi)) Inf else d[up][m_hi])
}

# Pooled within-host SD of log values: the finite values of each (host,
# side) around their own mean.  `ys`: list of per-(host, side) log values.
within_host_sd <- function(ys) {
  ss <- 0
  n <- 0
  k <- 0
  for (y in ys) {
    y <- y[is.finite(y)]
    if (!length(y)) next
    ss <- ss + sum((y - mean(y))^2)
    n <- n + length(y)
    k <- k + 1
  }
  if (n <= k) return(NA_real_)
  sqrt(ss / (n - k))
}

# The stratified log-scale comparison of one gate row: like log_compare()
# (same fields, same meaning), plus min_p for Tarone's rule.  `old`, `new`:
# lists of per-host values, host by host.  One host with both sides is
# compared exactly as log_compare() does (its exact p and Moses bounds);
# the other hosts then carry no within-host information.
strat_compare <- function(old, new, a = 0.025) {
  old <- lapply(old, function(x) x[!is.na(x)])
  new <- lapply(new, function(x) x[!is.na(x)])
  n_old <- lengths(old)
  n_new <- lengths(new)
  both <- which(n_old > 0 & n_new > 0)
  out <- list(n_old = sum(n_old), n_new = sum(n_new),
              censored_old = sum(vapply(old, function(x) sum(is.infinite(x)), numeric(1))),
              censored_new = sum(vapply(new, function(x) sum(is.infinite(x)), numeric(1))),
              shift = NA_real_, lo = NA_real_, hi = NA_real_, p = NA_real_, sd = NA_real_,
              spread = NA_real_, min_p = 1)
  y_old <- lapply(old, log)
  y_new <- lapply(new, log)
  if (length(both) == 1) {
    h <- both
    x <- log_compare(old[[h]], new[[h]], a = a)
    out[c("shift", "lo", "hi", "p")] <- x[c("shift", "lo", "hi", "p")]
    out$min_p <- min_p_one_sided(n_new[h], n_old[h])
  } else if (length(both) > 1) {
    d <- unlist(lapply(both, function(h) pair_diffs(y_new[[h]], y_old[[h]])))
    out$shift <- stats::median(d)
    b <- van_elteren_bounds(y_new[both], y_old[both], a)
    out$lo <- b[["lo"]]
    out$hi <- b[["hi"]]
    out$p <- van_elteren_greater(y_new[both], y_old[both])$p
    out$min_p <- van_elteren_min_p(n_new, n_old)
  }
  out$sd <- within_host_sd(c(y_old, y_new))
  out$spread <- rank_spread(c(y_old, y_new))
  out$rel <- expm1(out$shift)
  out$rel_lo <- expm1(out$lo)
  out$rel_hi <- expm1(out$hi)
  out
}

# The host strata of one cell's runs `g` (both sides, every kind; column
# `stratum` from run_hosts()): which hosts are compared, which are left out
# because only one side ran there, and the shape groups of the compared
# ones.  Returns list(disjoint, hosts_old, hosts_new, left_out =
# data.frame(host, variant, runs), groups = shape_groups() restricted to
# the kept hosts).  The groups and their names come from all hosts of the
# cell, so a row is named as the per-cell summary names it; a group whose
# hosts are all left out is dropped.  When one side has no runs at all
# nothing is left out (there is no comparison to protect; the row says
# n = 0).
cell_strata <- function(g, baseline, candidate) {
  ha <- unique(g$stratum[g$variant == baseline])
  hb <- unique(g$stratum[g$variant == candidate])
  out <- list(disjoint = FALSE, hosts_old = sort(ha), hosts_new = sort(hb),
              left_out = data.frame(host = character(), variant = character(), runs = integer()))
  keep <- g
  if (length(ha) && length(hb)) {
    shared <- intersect(ha, hb)
    if (!length(shared)) {
      out$disjoint <- TRUE
      out$groups <- list()
      return(out)
    }
    lone <- setdiff(c(ha, hb), shared)
    if (length(lone)) {
      x <- g[g$stratum %in% lone, , drop = FALSE]
      cnt <- stats::aggregate(list(runs = x$id), list(host = x$stratum, variant = x$variant), length)
      out$left_out <- cnt[order(cnt$host, cnt$variant), , drop = FALSE]
      rownames(out$left_out) <- NULL
    }
    keep <- g[g$stratum %in% shared, , drop = FALSE]
  }
  groups <- lapply(shape_groups(g), function(h) intersect(h, keep$stratum))
  out$groups <- groups[lengths(groups) > 0]
  out
}
