# The regression gate: candidate variant vs baseline variant, cell by cell.
#
# Order of the checks, and the status (also the exit code of stats/exec/rcuwb-gate.R):
#   2  HARD FAILURE: some candidate run ended deadlock, rcuscale-aborted,
#      crash, badness, topology-mismatch or rcuscale-error (named); or the
#      sides are not comparable (accelerator, QEMU, libvirt, host PUs or
#      oversubscription differ within a host, the kernel config differs, or
#      the sides share no host; the difference is named).
#      Nothing else is computed for a refused comparison.
#   1  SLOWDOWN: in some cell a gated statistic is slower beyond the
#      threshold (rule below), or the candidate fails (timeout, qemu-failed,
#      no samples, ...) significantly more often than the baseline
#      (one-sided Fisher exact test at a_slow, Holm over the testable cells).
#   3  INCONCLUSIVE: no slowdown shown, but some row is not ruled out
#      either (each says how many runs per side would decide it), or there
#      is nothing to compare.
#   0  PASS: in every cell and gated statistic a slowdown beyond the
#      threshold is ruled out.
#
# Rows (cell x statistic).  Gated by default: the per-run mean (the kernel
# script's "average") and the per-run p90, in normal-GP cells the mean only
# (GATE_MODE_STATS: their p90 moves in whole ticks); reported beside them,
# never gated: p50 and p99 (and p90 of normal GPs).  PASS: alpha is split evenly between the gated
# statistics (a = alpha / 2 each by default).  SLOWDOWN, the false alarm:
# alpha is split evenly between the gated statistics and the failure test
# (a_slow = alpha / 3 each by default), so the gate's false-alarm rate is at
# most alpha however many of them could raise it.  Per row, on the log scale (see
# verdict.R): the Hodges-Lehmann estimate of the relative change, its
# one-sided (1 - a) Moses lower and upper bounds, and the one-sided
# rank-sum p-value of "the candidate is not slower".
#   PASS          upper bound < +threshold.  The gate's PASS claims this for
#                 every row at once; by the intersection-union principle
#                 (Berger 1982) that claim is wrong with probability <= a
#                 per statistic, without a multiplicity correction.
#   SLOWDOWN      Holm-adjusted p < a_slow (Holm within the statistic, over
#                 its testable rows only: Tarone 1990, a row that cannot reach
#                 a_slow at all, e.g. 3+3 runs, is not counted) AND the estimate
#                 > +threshold.
#   INCONCLUSIVE  neither; with the runs per side that would decide it at
#                 the spread the rank statistics see (rank_spread(): the
#                 Hodges-Lehmann estimate's asymptotic standard error,
#                 from the density of within-side differences; the SD
#                 with rank-test efficiency 3/pi for few runs or ties).
# A timed-out rcuscale run of either side is a censored latency: +Inf for
# every statistic (at least the timeout, slower than any finished run).
#
# Several hosts (strata.R): runs are compared within a host and combined
# over the hosts of one shape (accelerator, host PUs, QEMU, libvirt): the
# stratified Hodges-Lehmann estimate, the van Elteren test and bounds by
# inverting it; hosts of different shape are separate rows ("cell@host");
# a host with runs of one side only is left out (named); sides on disjoint
# hosts are refused ("host differs").  The comparability fields are checked
# within each host.  On one host everything is as described above.  The
# failure test stays pooled over the hosts of one row: the runner runs both
# sides of a repetition on the same host, so the hosts are balanced between
# the sides and pooling the 2x2 tables cannot confound the failure rate
# with the host (a Cochran-Mantel-Haenszel test would matter only for
# unbalanced designs).

GATE_STATUS_NAMES <- c("0" = "PASS", "1" = "SLOWDOWN", "2" = "HARD FAILURE",
                       "3" = "INCONCLUSIVE")
GATE_STATS <- c(mean = "avg_us", p50 = "p50_us", p90 = "p90_us", p99 = "p99_us")
GATE_DEFAULT_STATS <- c("mean", "p90")
# Of the default statistics, those gated in cells of one GP mode (modes not
# named gate them all).  Normal GPs end on scheduler ticks: a GP's time is
# a whole number of ticks plus a little, so a per-run quantile moves in
# whole ticks (+25% at a 4-tick p90) and between boots it jumps between
# them (2-vCPU guest: SD of log(p90) 0.16 against 0.06 for the mean,
# RESULTS.md "Where the noise is", 48 against 8 runs a side for 10% at 80%
# power).  The per-run mean moves by the share of GPs that take another
# tick, so it sees every dose the p90 could see, and smaller ones; p90
# stays in the table for normal GPs, reported and not gated.  Expedited GPs
# are not tick-bound: mean and p90 are both gated.  Asynchronous GPs
# (rcuscale.gp_async): a sample is one call_rcu(), and every async_max-th
# also waits in the barrier for the GPs of those in flight, so the per-run
# mean is the time per callback with that backlog (1 / the throughput of
# asynchronous GPs) and the p90 only says whether 1 call in 10 waited:
# the mean alone is gated.  An explicit --stat
# gates what it names in every mode.  The levels stay split over
# GATE_DEFAULT_STATS in every cell (conservative where a mode gates fewer).
GATE_MODE_STATS <- list(normal = "mean", async = "mean")
GATE_REPORTED_STATS <- c("p50", "p99")
# Outcomes that are neither a result nor the kernel's fault: left out of
# the failure counts (host-busy runs are left out everywhere).
GATE_NOT_COUNTED <- c("interrupted", "host-failed", "host-busy")
# Fields two sides must share within a host, and the words used to name
# them.  The host itself is the stratum (strata.R): sides must share at
# least one host ("host differs" otherwise).
GATE_COMPARABLE <- c(accel = "accelerator", qemu_version = "QEMU version",
                     libvirt_version = "libvirt version",
                     host_pus = "host PUs", oversub = "oversubscription",
                     async_samples = "what rcuscale's async samples time")

# The stable name of a cell, from the run's own fields only: the runner's
# topology name (first segment of runs.cell, written from the topology),
# the GP mode, rcuscale's writers, readers ("-ea": QEMU's own threads pinned
# apart from the vCPUs) and holdoff, the kernel config
# that moves GP latency (HZ, preemption, NO_HZ), the Kconfig scenario
# ("k=tree"; none for the default scenario tiny, nor for runs stored before
# scenarios, whose kernels were built as tiny is: their keys stay what they
# were) and the extra boot parameters, e.g.
# "v2-n1/normal/w1-r0/h0/hz250-preempt-idle" or
# "v2-n1/normal/w1-r0/h2/hz1000-full-idle/k=tree", and the RCU flavour
# when it is not rcu ("f=srcu", from rcuscale.scale_type on the command
# line), e.g. "v1-n1/expedited/w1-r0/h1/hz250-full-idle/f=srcu/k=flavours".
# It is the same whatever
# else is loaded (no matrix, no variant in it).  `drop` leaves parts out
# ("config", "holdoff", "emulator", "kconfig", "writers": w*) for comparisons that are
# about them.  rcuscale's parameters are read from the command line under
# either prefix (rcuscale., or rcuperf. before 5.11).
cell_key <- function(runs, drop = character()) {
  if (!nrow(runs)) return(character())
  topo <- sub("/.*", "", runs$cell)
  kind <- ifelse(is.na(runs$kind), "rcuscale", runs$kind)
  mode <- ifelse(kind == "rcuscale", ifelse(is.na(runs$gp_mode), "?", runs$gp_mode),
                 sub("^[^/]*/([^/]*).*", "\\1", runs$cell))
  num <- function(x) ifelse(is.na(x), "?", format(x, scientific = FALSE, trim = TRUE))
  pinned <- if (is.null(runs$pinned)) rep(NA_character_, nrow(runs)) else runs$pinned
  nw <- if ("writers" %in% drop) rep("*", nrow(runs)) else num(runs$nwriters)
  cmd <- if (is.null(runs$cmdline)) rep(NA_character_, nrow(runs)) else runs$cmdline
  # the last rcuscale.NAME= on the command line is the one the kernel uses
  param <- function(name, value = "[0-9]+") {
    vapply(cmd, function(x) {
      if (is.na(x)) return(NA_character_)
      m <- regmatches(x, gregexpr(paste0("rcu(scale|perf)\\.", name, "=", value), x))[[1]]
      if (length(m)) sub(".*=", "", m[length(m)]) else NA_character_
    }, character(1), USE.NAMES = FALSE)
  }
  # async cells: the callbacks a writer may have in flight ("-a10")
  amax <- param("gp_async_max")
  wr <- ifelse(kind == "rcuscale", sprintf("w%s-r%s%s%s", nw, num(runs$nreaders),
                                           ifelse(mode == "async", paste0("-a", ifelse(is.na(amax), "?", amax)), ""),
                                           ifelse(grepl("emulator:", pinned) & !("emulator" %in% drop),
                                                  "-ea", "")), "")
  hold <- param("holdoff")
  wh <- param("writer_holdoff")
  h <- ifelse(kind != "rcuscale" | "holdoff" %in% drop, "",
              paste0("h", ifelse(is.na(hold), "?", hold),
                     ifelse(is.na(wh) | wh == "0", "", paste0("-wh", wh))))
  col <- function(x) if (is.null(runs[[x]])) rep(NA, nrow(runs)) else runs[[x]]
  cfg <- if ("config" %in% drop) rep("", nrow(runs)) else
    sprintf("hz%s-%s-%s", num(col("kconfig_hz")),
            ifelse(is.na(col("kconfig_preempt")), "?", col("kconfig_preempt")),
            ifelse(is.na(col("kconfig_nohz")), "?", col("kconfig_nohz")))
  # the flavour (rcuscale.scale_type; none for rcu, the kernel's default)
  st <- param("scale_type", "[a-z-]+")
  fl <- ifelse(kind != "rcuscale" | is.na(st) | st == "rcu", "", paste0("f=", st))
  kc <- as.character(col("kconfig"))
  kc <- ifelse(is.na(kc) | !nzchar(kc) | kc == "tiny" | "kconfig" %in% drop, "", paste0("k=", kc))
  bp <- ifelse(is.na(runs$boot_params), "", runs$boot_params)
  # holdoff given as a boot parameter is already in h
  bp <- trimws(gsub("(^|[[:space:]])rcu(scale|perf)\\.holdoff=[0-9]+", " ", bp))
  parts <- cbind(topo, mode, wr, h, cfg, fl, kc, bp)
  apply(parts, 1, function(p) paste(p[nzchar(p)], collapse = "/"))
}

# Run the gate. `db`: path or DBI connection. threshold: fraction (0.05 = 5%).
# seq: the sequential gate (R/sequential.R), list(cutoffs = the largest run
# id of each earlier look, max_runs = the design's runs a side, final = this
# look spends what is left); NULL: the fixed-n gate.
gate <- function(db, baseline, candidate, threshold = 0.05, alpha = 0.05,
                 min_runs = 3, matrix = NULL, since = NULL,
                 stats = GATE_DEFAULT_STATS, allow_config = FALSE, seq = NULL,
                 mode_stats = if (missing(stats)) GATE_MODE_STATS else NULL) {
  stopifnot(is.character(baseline), length(baseline) == 1,
            is.character(candidate), length(candidate) == 1,
            is.numeric(threshold), threshold >= 0,
            is.numeric(alpha), alpha > 0, alpha < 1)
  with_db(db, function(con) {
    runs <- read_runs(con, matrix = matrix, variants = c(baseline, candidate), since = since)
    samples <- read_samples(con, matrix = matrix, variants = c(baseline, candidate), since = since)
    # traced runs describe where time goes (R/anatomy.R); they are never gated
    runs <- runs[!is_traced(runs), , drop = FALSE]
    samples <- samples[samples$run_id %in% runs$id, , drop = FALSE]
    rt <- build_run_table(runs, run_stats(samples))
    gate_run_table(rt, baseline, candidate, threshold = threshold, alpha = alpha,
                   min_runs = min_runs, stats = stats, matrix = matrix,
                   allow_config = allow_config, seq = seq, mode_stats = mode_stats)
  })
}

# Fields that differ between the two sides of one cell: data.frame(cell,
# field, baseline, candidate), no rows when comparable.  Checked within each
# host the two sides share (a cell on several hosts names it: "cell@host");
# sides that share no host at all differ in "host".
gate_comparability <- function(rt, baseline, candidate, allow_config = FALSE) {
  rows <- list()
  if (is.null(rt$stratum)) rt$stratum <- run_hosts(rt)
  for (g in split(rt, rt$group, drop = TRUE)) {
    cs <- cell_strata(g, baseline, candidate)
    if (cs$disjoint) {
      rows[[length(rows) + 1]] <- data.frame(cell = g$cell[1], matrix = g$matrix[1],
                                             field = "host",
                                             baseline = paste(cs$hosts_old, collapse = ","),
                                             candidate = paste(cs$hosts_new, collapse = ","))
      next
    }
    several <- length(unique(g$stratum)) > 1
    for (h in intersect(cs$hosts_old, cs$hosts_new)) {
      a <- g[g$variant == baseline & g$stratum == h, , drop = FALSE]
      b <- g[g$variant == candidate & g$stratum == h, , drop = FALSE]
      for (f in names(GATE_COMPARABLE)) {
        if (is.null(g[[f]])) next
        va <- field_vals(a[[f]])
        vb <- field_vals(b[[f]])
        if (nzchar(va) && nzchar(vb) && va != vb) {
          rows[[length(rows) + 1]] <- data.frame(
            cell = if (several) paste0(g$cell[1], "@", h) else g$cell[1], matrix = g$matrix[1],
            field = GATE_COMPARABLE[[f]], baseline = va, candidate = vb)
        }
      }
    }
  }
  # the same cell apart from the kernel config on the two sides
  if (!allow_config && nrow(rt)) {
    bare <- paste(rt$matrix, cell_key(rt, drop = "config"))
    for (k in unique(bare)) {
      g <- rt[bare == k, , drop = FALSE]
      ca <- unique(g$config[g$variant == baseline])
      cb <- unique(g$config[g$variant == candidate])
      if (length(ca) && length(cb) && !setequal(ca, cb)) {
        rows[[length(rows) + 1]] <- data.frame(
          cell = cell_key(g[1, , drop = FALSE], drop = "config"), matrix = g$matrix[1],
          field = "kernel config", baseline = paste(ca, collapse = ","),
          candidate = paste(cb, collapse = ","))
      }
    }
  }
  if (!length(rows)) {
    return(data.frame(cell = character(), matrix = character(), field = character(),
                      baseline = character(), candidate = character()))
  }
  do.call(rbind, rows)
}

# The per-run values of `stat` for one side of a cell: usable runs' values
# and +Inf for each timed-out rcuscale run.
side_values <- function(g, stat) {
  col <- GATE_STATS[[stat]]
  c(g[[col]][g$usable], rep(Inf, sum(g$status == "timeout" & g$kind == "rcuscale")))
}

# The hosts of one row's runs, in the order they first ran.
row_hosts <- function(g) unique(g$stratum[order(g$id)])

# The log-scale comparison of one row (a group of gate_plan()): on one host
# log_compare() (exact), on several the stratified comparison of strata.R.
# Adds min_p, the smallest p-value its test can give (Tarone).
row_compare <- function(g, baseline, candidate, stat, a) {
  hosts <- row_hosts(g)
  side <- function(v, h) side_values(g[g$variant == v & g$stratum %in% h, , drop = FALSE], stat)
  if (length(hosts) <= 1) {
    x <- log_compare(side(baseline, hosts), side(candidate, hosts), a = a)
    x$min_p <- min_p_one_sided(x$n_new, x$n_old)
    return(x)
  }
  strat_compare(lapply(hosts, function(h) side(baseline, h)),
                lapply(hosts, function(h) side(candidate, h)), a = a)
}

# The rows of one statistic over all groups, verdicts included.
gate_stat_rows <- function(groups, baseline, candidate, stat, threshold, a,
                           min_runs, gated, seq = NULL, a_slow = a) {
  rows <- lapply(groups, function(g) {
    x <- row_compare(g, baseline, candidate, stat, a)
    data.frame(cell = g$cell[1], matrix = g$matrix[1], stat = stat, gated = gated,
               n_old = x$n_old, n_new = x$n_new, censored_old = x$censored_old,
               censored_new = x$censored_new, estimate = x$rel, lower = x$rel_lo,
               upper = x$rel_hi, level = 1 - a, p = x$p, sd_log = x$sd,
               spread_log = x$spread, min_p = x$min_p, shift = x$shift, hi = x$hi)
  })
  tab <- do.call(rbind, rows)
  enough <- tab$n_old >= min_runs & tab$n_new >= min_runs
  tab$testable <- enough & tarone_testable(ifelse(enough, tab$min_p, NA), a_slow)
  tab$p_holm <- holm_within(tab$p, tab$testable)
  tab$family <- sum(tab$testable)
  tab$verdict <- row_verdict(tab$hi, tab$shift, tab$p_holm, tab$testable, threshold, a, a_slow)
  tab$look <- NA_integer_
  tab$looks <- NA_integer_
  if (gated && !is.null(seq)) {
    # the sequential gate: verdict, estimate and bounds where it decided
    # (or at the last look); the fixed-n p-values do not apply
    sq <- seq_gate_rows(groups, baseline, candidate, stat, threshold, a, seq, a_slow)
    for (f in c("verdict", "n_old", "n_new", "estimate", "lower", "upper", "look", "looks", "shift")) {
      tab[[f]] <- sq[[f]]
    }
    tab$p <- NA_real_
    tab$p_holm <- NA_real_
    tab$testable <- TRUE
    tab$family <- nrow(tab)
  }
  tab$runs_needed <- NA_real_
  und <- tab$verdict == "INCONCLUSIVE"
  m <- max(1, tab$family[1])
  # the normal approximation can undercut the exact bounds: an undecided
  # row needs at least one more run per side than it has
  tab$runs_needed[und] <- vapply(which(und), function(i) {
    max(runs_needed(tab$shift[i], tab$spread_log[i], threshold, a, a_slow / m),
        max(tab$n_old[i], tab$n_new[i]) + 1)
  }, numeric(1))
  if (!gated) {
    tab$verdict <- paste0("(", tolower(tab$verdict), ")")
    tab$p_holm <- NA_real_
    tab$testable <- FALSE
    tab$runs_needed <- NA_real_
  }
  tab$shift <- NULL
  tab$hi <- NULL
  tab
}

# Failure rows: one per group, a one-sided Fisher test of the candidate's
# failure share against the baseline's (Holm over the testable groups).
# Pooled over the hosts of a row (see the header: the sides are balanced
# over the hosts by the runner's blocks).
gate_failure_rows <- function(groups, baseline, candidate, alpha) {
  rows <- lapply(groups, function(g) {
    g <- g[g$kind == "rcuscale" & !(g$status %in% GATE_NOT_COUNTED), , drop = FALSE]
    a <- g[g$variant == baseline, , drop = FALSE]
    b <- g[g$variant == candidate, , drop = FALSE]
    fa <- sum(a$status != "ok")
    fb <- sum(b$status != "ok")
    data.frame(cell = if (nrow(g)) g$cell[1] else NA, matrix = if (nrow(g)) g$matrix[1] else NA,
               runs_old = nrow(a), failed_old = fa, runs_new = nrow(b), failed_new = fb,
               what_new = outcome_counts(b$status[b$status != "ok"]),
               p = failure_test(fa, nrow(a), fb, nrow(b)),
               min_p = failure_min_p(nrow(a), nrow(b), fa + fb))
  })
  tab <- do.call(rbind, rows)
  tab <- tab[!is.na(tab$cell), , drop = FALSE]
  if (!nrow(tab)) return(tab)
  tab$testable <- !is.na(tab$p) & tarone_testable(ifelse(is.na(tab$p), NA, tab$min_p), alpha)
  tab$p_holm <- holm_within(tab$p, tab$testable)
  tab$verdict <- ifelse(tab$testable & tab$p_holm < alpha, "MORE FAILURES", "ok")
  tab
}

# Which rcuscale runs make which gate row.  Per cell (matrix, cell key):
# hosts with runs of only one side are left out, the rest split by shape
# (strata.R); a row is named after the cell, "@<hosts>" added when the cell
# has several shape groups.  Returns list(groups: the rows' runs, `cell`
# set to the row's name and `base_cell` to the cell's; hosts:
# data.frame(cell, base_cell, matrix, host, accel, host_pus, runs_old,
# runs_new) of the hosts compared; left_out: data.frame(cell, matrix, host,
# variant, runs)).  Cells refused for disjoint hosts get no row.
gate_plan <- function(rt, baseline, candidate) {
  groups <- list()
  hosts <- list()
  left <- list()
  for (g in split(rt, rt$group, drop = TRUE)) {
    cs <- cell_strata(g, baseline, candidate)
    if (cs$disjoint) next
    if (nrow(cs$left_out) && any(g$kind == "rcuscale")) {
      left[[length(left) + 1]] <- cbind(data.frame(cell = g$cell[1], matrix = g$matrix[1]),
                                        cs$left_out)
    }
    sc <- g[g$kind == "rcuscale", , drop = FALSE]
    for (k in seq_along(cs$groups)) {
      x <- sc[sc$stratum %in% cs$groups[[k]], , drop = FALSE]
      if (!nrow(x)) next
      x$base_cell <- x$cell
      x$cell <- paste0(x$cell, names(cs$groups)[k])
      groups[[length(groups) + 1]] <- x
      for (h in row_hosts(x)) {
        y <- x[x$stratum == h, , drop = FALSE]
        hosts[[length(hosts) + 1]] <- data.frame(
          cell = x$cell[1], base_cell = x$base_cell[1], matrix = x$matrix[1], host = h,
          accel = field_vals(y$accel), host_pus = field_vals(y$host_pus),
          runs_old = sum(y$variant == baseline), runs_new = sum(y$variant == candidate))
      }
    }
  }
  groups <- groups[order(vapply(groups, function(g) g$cell[1], ""),
                         vapply(groups, function(g) g$matrix[1], ""))]
  list(groups = groups,
       hosts = if (length(hosts)) do.call(rbind, hosts) else
         data.frame(cell = character(), base_cell = character(), matrix = character(),
                    host = character(), accel = character(), host_pus = character(),
                    runs_old = integer(), runs_new = integer()),
       left_out = if (length(left)) do.call(rbind, left) else
         data.frame(cell = character(), matrix = character(), host = character(),
                    variant = character(), runs = integer()))
}

# Values per host and side that entered each row (the first gated
# statistic's): adds n_old, n_new to plan$hosts.
gate_host_counts <- function(plan, baseline, candidate, stat) {
  h <- plan$hosts
  h$n_old <- integer(nrow(h))
  h$n_new <- integer(nrow(h))
  for (g in plan$groups) {
    for (i in which(h$cell == g$cell[1] & h$matrix == g$matrix[1])) {
      y <- g[g$stratum == h$host[i], , drop = FALSE]
      count <- function(v) {
        x <- side_values(y[y$variant == v, , drop = FALSE], stat)
        sum(!is.na(x))
      }
      h$n_old[i] <- count(baseline)
      h$n_new[i] <- count(candidate)
    }
  }
  h
}

# The statistics gated in one row's cell: `stats`, narrowed by
# mode_stats[[its GP mode]] where that names the mode.
row_gated_stats <- function(g, stats, mode_stats) {
  mode <- g$gp_mode[1]
  if (is.null(mode) || is.na(mode) || !(mode %in% names(mode_stats))) return(stats)
  intersect(stats, mode_stats[[mode]])
}

# The rows of one statistic: gated in the groups whose mode gates it,
# reported in the others, in the groups' order.
gate_stat_rows_by_mode <- function(groups, baseline, candidate, stat, stats, mode_stats,
                                   threshold, a, min_runs, seq, a_slow) {
  on <- vapply(groups, function(g) stat %in% row_gated_stats(g, stats, mode_stats), TRUE)
  parts <- list(
    if (any(on)) gate_stat_rows(groups[on], baseline, candidate, stat, threshold, a,
                                min_runs, TRUE, seq, a_slow),
    if (any(!on)) gate_stat_rows(groups[!on], baseline, candidate, stat, threshold, a,
                                 min_runs, FALSE))
  tab <- do.call(rbind, parts)
  key <- function(cell, m) paste(m, cell, sep = "\r")
  order_of <- key(vapply(groups, function(g) g$cell[1], ""),
                  vapply(groups, function(g) g$matrix[1], ""))
  tab[order(match(key(tab$cell, tab$matrix), order_of)), , drop = FALSE]
}

# The gate on an already built run table (see build_run_table()).
# mode_stats: see GATE_MODE_STATS, the default when `stats` is; NULL (the
# default when the caller names `stats`) gates `stats` in every mode.
gate_run_table <- function(rt, baseline, candidate, threshold = 0.05,
                           alpha = 0.05, min_runs = 3, stats = GATE_DEFAULT_STATS,
                           report = GATE_REPORTED_STATS, matrix = NULL,
                           allow_config = FALSE, seq = NULL,
                           mode_stats = if (missing(stats)) GATE_MODE_STATS else NULL) {
  stopifnot(all(stats %in% names(GATE_STATS)), length(stats) >= 1)
  report <- setdiff(report, stats)
  a <- alpha / length(stats)
  # a false alarm (SLOWDOWN) can come from any gated statistic or from the
  # failure test: alpha is split between all of them
  a_slow <- alpha / (length(stats) + 1)
  rt <- rt[rt$variant %in% c(baseline, candidate), , drop = FALSE]
  rt$matrix[is.na(rt$matrix)] <- ""
  # the config part of the cell key (build_run_table() made rt$cell one)
  rt$config <- sub(".*/(hz[^/]*).*", "\\1", rt$cell)
  rt$group <- paste(rt$matrix, rt$cell, sep = "\r")
  rt$stratum <- run_hosts(rt)
  res <- list(baseline = baseline, candidate = candidate, matrix = matrix,
              threshold = threshold, alpha = alpha, alpha_stat = a, alpha_slow = a_slow, stats = stats,
              mode_stats = mode_stats[intersect(names(mode_stats), unique(rt$gp_mode))],
              reported = report, min_runs = min_runs, seq = seq,
              caveats = caveat_info(rt), caveat_text = caveat_text(rt))

  hard <- rt[rt$variant == candidate & rt$outcome %in% RCUWB_HARD_FAILURES, , drop = FALSE]
  res$hard_failures <- data.frame(
    run_id = hard$id, cell = hard$cell, kind = hard$kind, rep = hard$rep,
    outcome = hard$outcome,
    detail = ifelse(is.na(hard$outcome_detail), "", hard$outcome_detail)
  )
  res$refused <- gate_comparability(rt, baseline, candidate, allow_config)

  plan <- gate_plan(rt, baseline, candidate)
  groups <- plan$groups
  res$several_hosts <- length(unique(rt$stratum)) > 1
  res$hosts <- gate_host_counts(plan, baseline, candidate, stats[1])
  res$left_out <- plan$left_out
  if (nrow(res$refused) || !length(groups)) {
    res$rows <- NULL
    res$failures <- NULL
  } else {
    res$rows <- do.call(rbind, c(
      lapply(stats, function(s) gate_stat_rows_by_mode(groups, baseline, candidate, s, stats,
                                                       mode_stats, threshold, a, min_runs, seq,
                                                       a_slow)),
      lapply(report, function(s) gate_stat_rows(groups, baseline, candidate, s, threshold,
                                                a, min_runs, FALSE))))
    rownames(res$rows) <- NULL
    res$failures <- gate_failure_rows(groups, baseline, candidate, a_slow)
  }
  res$cells <- gate_cells(res)
  res$status <- if (nrow(res$hard_failures) || nrow(res$refused)) {
    2L
  } else if (any(res$cells$verdict == "SLOWDOWN")) {
    1L
  } else if (!nrow(res$cells) || any(res$cells$verdict != "PASS")) {
    3L
  } else {
    0L
  }
  res$status_name <- unname(GATE_STATUS_NAMES[as.character(res$status)])
  res$text <- gate_text(res)
  res
}

# One verdict per cell: SLOWDOWN if a gated row or its failure test says
# so, else INCONCLUSIVE if a gated row does, else PASS; runs_needed is the
# largest of its inconclusive rows.
gate_cells <- function(res) {
  r <- res$rows
  if (is.null(r) || !nrow(r)) {
    return(data.frame(cell = character(), matrix = character(), verdict = character(),
                      n_old = integer(), n_new = integer(), runs_needed = numeric()))
  }
  r <- r[r$gated, , drop = FALSE]
  keys <- unique(r[, c("cell", "matrix")])
  out <- lapply(seq_len(nrow(keys)), function(i) {
    x <- r[r$cell == keys$cell[i] & r$matrix == keys$matrix[i], , drop = FALSE]
    f <- res$failures[res$failures$cell == keys$cell[i] & res$failures$matrix == keys$matrix[i], ,
                      drop = FALSE]
    more_fail <- nrow(f) && any(f$verdict == "MORE FAILURES")
    v <- if (any(x$verdict == "SLOWDOWN") || more_fail) "SLOWDOWN" else
      if (any(x$verdict == "INCONCLUSIVE")) "INCONCLUSIVE" else "PASS"
    need <- x$runs_needed[x$verdict == "INCONCLUSIVE"]
    data.frame(cell = keys$cell[i], matrix = keys$matrix[i], verdict = v,
               n_old = x$n_old[1], n_new = x$n_new[1],
               runs_needed = if (v == "INCONCLUSIVE" && length(need)) {
                 if (all(is.na(need))) NA_real_ else max(need, na.rm = TRUE)
               } else NA_real_)
  })
  do.call(rbind, out)
}
