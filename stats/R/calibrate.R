# Calibrating the gate on planted slowdowns of known size (variant
# `planted`, patch 0008) against the same binary with its delays at zero.
#
# The calibration matrices (perf-configs/studies/gatecal-*.yaml) run one binary,
# `planted`, with boot parameters as the dose:
#   rcutree.planted_gp_tick_permille=N  normal GPs: N/1000 ticks per call
#   rcutree.planted_exp_time_permille=N expedited GPs: extra expedited GPs,
#                                       one per call at most, until their
#                                       time is N/1000 of the measured time
#                                       (0008 now; the kernel prints which
#                                       calls held one: planted_report())
#   rcutree.planted_exp_permille=N      expedited, 0008's third revision:
#                                       N/1000 extra expedited GPs per
#                                       measured one, dithered (call i, from
#                                       1, gets floor(iN/1000) -
#                                       floor((i-1)N/1000) of them)
#   rcutree.planted_exp_delay_ns=N      expedited, 0008's first revision:
#                                       N ns per call (runs stored with it
#                                       are still read)
#   rcutree.planted_exp_alternate=1     0008's second revision (a dilation of
#                                       every second GP): such runs are left
#                                       out
# and a control cell with them at zero.  A normal dose adds a known absolute
# time to every GP's latency.  Its intended relative change is what the
# gate's estimator (the Hodges-Lehmann shift of log per-run means) would
# find if the dose added exactly that to every run of the control: the
# median over control pairs of log((m_i + added) / m_j) (intended_change()).
# For a tight control this is added / mean.  An expedited dose makes N of
# every 1000 measured intervals hold one more GP, the same kind of GP on the
# same path, so the per-run mean grows by N/1000 whatever the control looks
# like (its quantiles do not: the dose is whole GPs on a few calls), and the
# intended change is N/1000.  A time dose makes the extra GPs take N/1000
# of all the measured time, rcuscale's first GPs included, so the per-run
# mean grows by N/1000 whatever a GP costs: its intended change is N/1000
# too.  Runs stored under 0008's second revision
# (rcutree.planted_exp_permille was a dilation of rcuscale's interval then)
# must not be mixed with these.
#
# Rates: each trial draws n runs per side without replacement from the
# pools and applies the gate's rule (gated statistics, alpha split, one
# cell) to just those runs.  The rate's 95% CI comes from a bootstrap over
# the pools (resample each pool's runs with replacement, redo the trials),
# so it carries the pools' own finiteness, not only the trials'.  A/A
# compares two disjoint random halves of the control pool.

# The gate's estimand for a dose that adds `added_us` to every run's mean.
intended_change <- function(control_means, added_us) {
  m <- control_means[is.finite(control_means) & !is.na(control_means)]
  if (!length(m)) return(NA_real_)
  vapply(added_us, function(a) expm1(stats::median(log(outer(m + a, m, "/")))), numeric(1))
}

# The dose that the gate's estimator would see as `target` (a fraction).
dose_for_change <- function(control_means, target) {
  m <- stats::median(control_means)
  stats::uniroot(function(a) intended_change(control_means, a) - target,
                 c(0, 10 * m * target + 1), tol = 1e-6)$root
}

# The integer value of rcutree.planted_NAME=N in each of `bp`, NA if absent.
planted_param <- function(bp, name) {
  re <- paste0("(^|.*[[:space:]])rcutree\\.planted_", name, "=([0-9]+)([[:space:]].*|$)")
  v <- suppressWarnings(as.numeric(sub(re, "\\2", bp)))
  v[!grepl(re, bp)] <- NA
  v
}

# Parse the planted dose out of boot parameters: permille of a tick per
# normal GP, permille extra GPs per expedited GP, permille of the measured
# time in extra expedited GPs, whether only every second
# expedited GP is dilated, and the first revision's ns per expedited GP
# (NA where absent).
planted_dose <- function(boot_params) {
  bp <- ifelse(is.na(boot_params), "", boot_params)
  data.frame(permille = planted_param(bp, "gp_tick_permille"),
             exp_permille = planted_param(bp, "exp_permille"),
             exp_time = planted_param(bp, "exp_time_permille"),
             alternate = !is.na(planted_param(bp, "exp_alternate")) &
               planted_param(bp, "exp_alternate") > 0,
             ns = planted_param(bp, "exp_delay_ns"))
}

# Added latency (us) per GP of each run of the calibration: ticks for
# normal-mode runs, the first revision's ns for expedited ones (0 for the
# control and for extra GPs).
planted_added_us <- function(rt) {
  d <- planted_dose(rt$boot_params)
  tick_us <- 1e6 / ifelse(is.na(rt$kconfig_hz), 250, rt$kconfig_hz)
  ifelse(rt$gp_mode == "expedited", ifelse(is.na(d$ns), 0, d$ns / 1000),
         ifelse(is.na(d$permille), 0, d$permille / 1000 * tick_us))
}

# Extra expedited GPs per measured GP of each expedited run, 0 for normal
# runs.
planted_extra_gps <- function(rt) {
  d <- planted_dose(rt$boot_params)
  ifelse(rt$gp_mode == "expedited" & !is.na(d$exp_permille), d$exp_permille / 1000, 0)
}

# The share of the measured time in extra expedited GPs of each expedited
# run of a time dose, 0 for the others.
planted_time_share <- function(rt) {
  d <- planted_dose(rt$boot_params)
  ifelse(rt$gp_mode == "expedited" & !is.na(d$exp_time), d$exp_time / 1000, 0)
}

# The calibration's cells: one row per run with base (the cell without the
# dose), added_us, extra (GPs per call), share (of the time, in extra GPs),
# alternate (a run of 0008's second
# revision, left out) and dose (a key of the dose: the control is "0").
calibration_runs <- function(rt) {
  rt <- rt[rt$kind == "rcuscale", , drop = FALSE]
  rt$added_us <- planted_added_us(rt)
  rt$extra <- planted_extra_gps(rt)
  rt$share <- planted_time_share(rt)
  rt$alternate <- planted_dose(rt$boot_params)$alternate & rt$gp_mode == "expedited"
  rt$dose <- ifelse(rt$share > 0, sprintf("+%gT", rt$share),
                    ifelse(rt$extra > 0, sprintf("+%gGP", rt$extra),
                           ifelse(rt$added_us > 0, sprintf("+%gus", rt$added_us), "0")))
  bp <- ifelse(is.na(rt$boot_params), "", rt$boot_params)
  strip <- trimws(gsub("[[:space:]]+", " ", gsub(
    "rcutree\\.planted_(gp_tick_permille|exp_delay_ns|exp_permille|exp_time_permille|exp_alternate)=[0-9]+", "", bp)))
  rt$base <- cell_key(transform(rt, boot_params = strip))
  rt
}

# The intended change of each dose of one base cell (`g`, rows of
# calibration_runs()), given that cell's control per-run means.
dose_intended <- function(g, ctl_means) {
  ifelse(g$share > 0, g$share,
         ifelse(g$extra > 0, g$extra, intended_change(ctl_means, g$added_us)))
}

# The gate's decision on one trial of one cell: the gate's own row rule
# (log_compare(): Hodges-Lehmann estimate, Moses bound at level a, exact
# rank-sum p with ties mid-ranked and their conditional distribution;
# row_verdict() with SLOWDOWN at a_slow), not a copy of it.  One cell is a
# Holm family of one; a row whose test cannot reach a_slow is not testable.
trial_verdict <- function(old, new, threshold, a, a_slow) {
  x <- log_compare(old, new, a = a)
  testable <- min_p_one_sided(x$n_new, x$n_old) < a_slow
  row_verdict(x$hi, x$shift, x$p, testable, threshold, a, a_slow)
}

# Share of `trials` trials with each verdict, drawing n per side from the
# pools (matrices of per-run values, one column per gated statistic).
# a: the PASS level per statistic; a_slow: the SLOWDOWN level (the gate's
# split, gate_run_table()).
trial_rates <- function(old, new, n, trials, threshold, a, aa = FALSE, a_slow = a) {
  v <- vapply(seq_len(trials), function(t) {
    if (aa) {
      # A/A: 2n distinct runs of the one pool, split at random
      idx <- sample.int(nrow(old), 2 * n)
      io <- idx[seq_len(n)]
      inew <- idx[n + seq_len(n)]
    } else {
      io <- sample.int(nrow(old), n)
      inew <- sample.int(nrow(new), n)
    }
    r <- vapply(seq_len(ncol(old)), function(j) {
      trial_verdict(old[io, j], new[inew, j], threshold, a, a_slow)
    }, character(1))
    if (any(r == "SLOWDOWN")) "SLOWDOWN" else if (all(r == "PASS")) "PASS" else "INCONCLUSIVE"
  }, character(1))
  c(slowdown = mean(v == "SLOWDOWN"), pass = mean(v == "PASS"),
    inconclusive = mean(v == "INCONCLUSIVE"))
}

# One comparison's rates at n runs per side with bootstrap CIs over pools.
calibrate_pair <- function(old, new, n, trials = 400, boot = 100, boot_trials = 100,
                           threshold = 0.05, alpha = 0.05, seed = 1, aa = FALSE,
                           split = ncol(old)) {
  # split: the statistics alpha is shared by, as the gate's (which keeps
  # two in a normal-GP cell where it gates the mean alone)
  a <- alpha / split
  a_slow <- alpha / (split + 1)	# as the gate: the failure test has its share
  if (nrow(old) < (if (aa) 2 * n else n) || nrow(new) < n) return(NULL)
  with_seed(seed, {
    est <- trial_rates(old, new, n, trials, threshold, a, aa, a_slow)
    bs <- vapply(seq_len(boot), function(b) {
      ob <- old[sample.int(nrow(old), replace = TRUE), , drop = FALSE]
      nb <- if (aa) ob else new[sample.int(nrow(new), replace = TRUE), , drop = FALSE]
      trial_rates(ob, nb, n, boot_trials, threshold, a, aa, a_slow)
    }, numeric(3))
  })
  ci <- apply(bs, 1, stats::quantile, probs = c(0.025, 0.975), names = FALSE)
  data.frame(n = n, pool_old = nrow(old), pool_new = if (aa) 0L else nrow(new), trials = trials,
             boot = boot, slowdown = est[["slowdown"]], slowdown_lo = ci[1, "slowdown"],
             slowdown_hi = ci[2, "slowdown"], pass = est[["pass"]], pass_lo = ci[1, "pass"],
             pass_hi = ci[2, "pass"], inconclusive = est[["inconclusive"]])
}

# Per-run values of the gated statistics as a matrix (rows = runs).
stat_matrix <- function(g, stats = GATE_DEFAULT_STATS) {
  m <- sapply(stats, function(s) side_values(g, s))
  if (is.null(dim(m))) m <- matrix(m, nrow = 1, dimnames = list(NULL, stats))
  m
}

# The doses of one base cell `g` (rows of calibration_runs(), no runs of
# 0008's dilating revision), in order of their intended change: a data frame of
# dose key, added_us, extra and intended change.
cell_doses <- function(g, ctl_means) {
  d <- g[!duplicated(g$dose), c("dose", "added_us", "extra", "share"), drop = FALSE]
  d$intended <- dose_intended(d, ctl_means)
  d <- d[order(d$intended, d$dose), , drop = FALSE]
  rownames(d) <- NULL
  d
}

# The between-boot runs of the calibration, split by base cell (and by
# matrix with `by_matrix`: each matrix then compares its doses with its own
# control, the runs that ran interleaved with them).
between_boot_cells <- function(rt, by_matrix = FALSE) {
  cr <- calibration_runs(rt)
  cr <- cr[!cr$alternate, , drop = FALSE]
  key <- if (by_matrix) paste(cr$base, cr$matrix) else cr$base
  g <- split(cr, key)[sort(unique(key))]
  has_ctl <- vapply(g, function(x) any(x$dose == "0" & x$usable), logical(1))
  if (any(!has_ctl)) {
    message(sprintf("calibration: no usable control (dose 0) in %s: its doses are left out",
                    paste(names(g)[!has_ctl], collapse = "; ")))
  }
  g[has_ctl]
}

# The calibration table: per base cell, A/A (disjoint random halves of the
# control pool) and each dose against the whole control pool, at each n.
calibrate_gate <- function(rt, n = c(5, 10, 20), doses = NULL, trials = 400,
                           boot = 100, boot_trials = 100, threshold = 0.05,
                           alpha = 0.05, seed = 1, stats = GATE_DEFAULT_STATS,
                           aa_trials = 4 * trials,
                           mode_stats = if (missing(stats)) GATE_MODE_STATS else NULL) {
  out <- list()
  for (g in between_boot_cells(rt)) {
    ctl <- g[g$dose == "0", , drop = FALSE]
    # the statistics the gate gates in this cell's GP mode
    cs <- row_gated_stats(g, stats, mode_stats)
    ctl_m <- stat_matrix(ctl, cs)
    ctl_means <- ctl$avg_us[ctl$usable]
    cd <- cell_doses(g, ctl_means)
    cmp <- list(list(label = "A/A", dose = cd[cd$dose == "0", ], old = ctl_m, new = ctl_m, aa = TRUE))
    for (i in which(cd$dose != "0")) {
      want <- cd$intended[i]
      if (!is.null(doses) && !any(abs(want - doses) < 0.01)) next
      dg <- g[g$dose == cd$dose[i], , drop = FALSE]
      if (sum(dg$usable) < min(n)) next
      cmp[[length(cmp) + 1]] <- list(label = fmt_pct(want, 1), dose = cd[i, ],
                                     old = ctl_m, new = stat_matrix(dg, cs), aa = FALSE)
    }
    for (c in cmp) {
      for (k in n) {
        r <- calibrate_pair(c$old, c$new, k, if (c$aa) aa_trials else trials, boot,
                            boot_trials, threshold, alpha, seed + k, aa = c$aa,
                            split = length(stats))
        if (is.null(r)) next
        out[[length(out) + 1]] <- cbind(data.frame(cell = g$base[1], comparison = c$label,
                                                   added_us = c$dose$added_us,
                                                   extra = c$dose$extra, share = c$dose$share,
                                                   intended = c$dose$intended), r)
      }
    }
  }
  if (!length(out)) return(NULL)
  out <- do.call(rbind, out)
  rownames(out) <- NULL
  out
}

# The data frames of `out` bound into one, sorted by the columns `by`;
# NULL if there are none.
bind_sorted <- function(out, by) {
  if (!length(out)) return(NULL)
  out <- do.call(rbind, out)
  out <- out[do.call(order, unname(as.list(out[by]))), , drop = FALSE]
  rownames(out) <- NULL
  out
}

# Dose-response: for each base cell, matrix and dose, the intended change
# and the gate's estimate of the mean's change against that matrix's
# control pool, with its two-sided 95% CI (the 97.5% one-sided bounds).
# The control's row compares two random halves of it.
dose_response <- function(rt, stat = "mean") {
  out <- list()
  for (g in between_boot_cells(rt, by_matrix = TRUE)) {
    ctl <- g[g$dose == "0", , drop = FALSE]
    ctl_means <- ctl$avg_us[ctl$usable]
    cd <- cell_doses(g, ctl_means)
    for (i in seq_len(nrow(cd))) {
      dg <- g[g$dose == cd$dose[i], , drop = FALSE]
      if (cd$dose[i] == "0") {
        halves <- with_seed(1, sample(rep(1:2, length.out = nrow(dg))))
        old_g <- dg[halves == 1, , drop = FALSE]
        new_g <- dg[halves == 2, , drop = FALSE]
      } else {
        old_g <- ctl
        new_g <- dg
      }
      x <- log_compare(side_values(old_g, stat), side_values(new_g, stat), 0.025)
      out[[length(out) + 1]] <- data.frame(
        cell = g$base[1], matrix = g$matrix[1], added_us = cd$added_us[i],
        extra = cd$extra[i], share = cd$share[i],
        control_mean_us = stats::median(ctl_means), intended = cd$intended[i],
        runs = paste0(x$n_old, "+", x$n_new), measured = x$rel, lo = x$rel_lo, hi = x$rel_hi)
    }
  }
  bind_sorted(out, c("cell", "intended", "matrix"))
}

# Each run's measured GPs: its samples without the first two (the writer's
# first GP starts everything up: often 50 times the others) and each
# writer's last (rcuscale overwrites it until the test stops).
measured_gps <- function(samples) {
  last <- stats::ave(samples$seq, samples$run_id, samples$writer, FUN = max)
  samples[samples$seq >= 2 & samples$seq < last, , drop = FALSE]
}

# Extra GPs planted in the interval of rcuscale's sample `seq` (0-based; the
# writer's call seq + 1) at `permille` per call, as the kernel's running sum
# hands them out (exact for one writer: the sum is shared by all writers).
planted_extra_at <- function(seq, permille) {
  floor((seq + 1) * permille / 1000) - floor(seq * permille / 1000)
}

# One run's within-boot sums for an expedited dose: its measured GPs'
# total and count, those of the calls that held no extra GP, those of the
# calls right after a slowed one (where work that the extra GP left behind
# would land) and of the calls after neither, and the median of the slowed
# calls over the median of the others (what one extra GP costs, in GPs,
# plus 1).  `x`: the run's measured GPs (seq, duration_ns); `slowed(seq)`:
# whether rcuscale's sample `seq` held an extra GP.  NULL without both kinds
# of call.
within_boot_run <- function(x, slowed) {
  e <- slowed(x$seq)
  if (!any(e) || all(e)) return(NULL)
  d <- x$duration_ns
  nxt <- !e & slowed(x$seq - 1)
  far <- !e & !nxt
  data.frame(calls = length(d), slowed = sum(e), sum_all = sum(d), sum_plain = sum(d[!e]),
             n_plain = sum(!e), sum_next = sum(d[nxt]), n_next = sum(nxt),
             sum_far = sum(d[far]), n_far = sum(far),
             cost = stats::median(d[e]) / stats::median(d[!e]))
}

# The samples that hold an extra GP at `permille` per call (the running
# sum of planted_extra_at()), as within_boot_run() asks.
slowed_by_count <- function(permille) function(seq) planted_extra_at(seq, permille) > 0

# A statistic pooled over a set of boots (`r`: within_boot_run() rows) and
# its percentile bootstrap interval over boots: c(estimate, lo, hi).
# `est(k)` computes it from the rows `k`; NAs without rows.
within_boot_pooled <- function(r, est, boot = 1000, level = 0.95, seed = 1) {
  if (is.null(r) || !nrow(r)) return(c(NA, NA, NA))
  b <- with_seed(seed, vapply(seq_len(boot), function(i) est(sample.int(nrow(r), replace = TRUE)), numeric(1)))
  c(est(seq_len(nrow(r))), stats::quantile(b, c((1 - level) / 2, 1 - (1 - level) / 2), names = FALSE,
                                           na.rm = TRUE))
}

# The change of the mean that a set of boots reads: the mean of all their
# measured GPs over the mean of those without an extra GP, pooled over the
# boots (a ratio of sums: the mean of per-boot log ratios would be biased
# low, as a few slow GPs in a boot's few slowed calls lift its ratio rarely
# and far).
within_boot_ratio <- function(r, ...) {
  within_boot_pooled(r, function(k) {
    (sum(r$sum_all[k]) / sum(r$calls[k])) / (sum(r$sum_plain[k]) / sum(r$n_plain[k])) - 1
  }, ...)
}

# What one extra GP adds to a slowed call at the mean (us): the mean of
# the slowed calls minus the mean of the others, pooled over the boots.
within_boot_cost <- function(r, ...) {
  within_boot_pooled(r, function(k) {
    ((sum(r$sum_all[k]) - sum(r$sum_plain[k])) / sum(r$slowed[k]) -
       sum(r$sum_plain[k]) / sum(r$n_plain[k])) / 1000
  }, ...)
}

# How much longer the calls right after a slowed one took than the calls
# after neither (us), pooled over the boots: 0 if the extra GPs leave
# nothing behind for the next measured GP.  NAs where every call is one or
# the other.
within_boot_spill <- function(r, ...) {
  if (is.null(r) || !nrow(r) || sum(r$n_next) == 0 || sum(r$n_far) == 0) return(c(NA, NA, NA))
  within_boot_pooled(r, function(k) {
    (sum(r$sum_next[k]) / sum(r$n_next[k]) - sum(r$sum_far[k]) / sum(r$n_far[k])) / 1000
  }, ...)
}

# The first sample the within-boot reading uses: a boot's first ten or so
# expedited GPs are still warming up (on 2026-12-04, seq 2-4 took twice
# the later ones and seq 5-9 a quarter more), and a dose's first slowed call
# comes at seq 1000/N - 1, so before this the slowed and the plain calls
# would differ by where they sit.
WITHIN_FROM_SEQ <- 10

# The expedited doses measured inside each boot, where boot-to-boot noise
# cancels: per one-writer expedited dose, within_boot_run() on each run's
# measured GPs from WITHIN_FROM_SEQ on, pooled by within_boot_ratio().  The
# placebo is the same reading of the control's runs, with the dose's calls
# marked though nothing was planted there: it should read 0.  Delivered:
# what the dose did to the gate's statistic, the per-run mean of all
# samples, warm-up included: intended_change() of the matrix's control
# with the measured cost of an extra GP on N/1000 of the calls (a slowed
# call before WITHIN_FROM_SEQ taken to cost what the later ones do; for
# rcuscale's 101 samples and N a multiple of 10, N/1000 of them are
# slowed on average).
within_boot_response <- function(rt, samples, level = 0.95) {
  cr <- calibration_runs(rt)
  cr <- cr[!cr$alternate & cr$usable & cr$gp_mode == "expedited" &
             !is.na(cr$nwriters) & cr$nwriters == 1, , drop = FALSE]
  if (!nrow(cr) || !any(cr$extra > 0)) return(NULL)
  ms <- measured_gps(samples[samples$run_id %in% cr$id, , drop = FALSE])
  ms <- ms[ms$seq >= WITHIN_FROM_SEQ, , drop = FALSE]
  gps <- split(ms, ms$run_id)
  read_at <- function(ids, permille) {
    do.call(rbind, lapply(intersect(as.character(ids), names(gps)),
                          function(id) within_boot_run(gps[[id]], slowed_by_count(permille))))
  }
  out <- list()
  for (g in split(cr, paste(cr$base, cr$matrix))) {
    ctl <- g[g$dose == "0", , drop = FALSE]
    for (d in sort(unique(g$extra[g$extra > 0]))) {
      dose <- read_at(g$id[g$extra == d], 1000 * d)
      if (is.null(dose)) next
      plc <- read_at(ctl$id, 1000 * d)
      a <- within_boot_ratio(dose, level = level)
      b <- within_boot_ratio(plc, level = level)
      sp <- within_boot_spill(dose, level = level)
      cost <- within_boot_cost(dose, level = level)
      delivered <- intended_change(ctl$avg_us, d * cost)
      out[[length(out) + 1]] <- data.frame(
        cell = g$base[1], matrix = g$matrix[1], extra = d, intended = d,
        boots = nrow(dose), calls = round(mean(dose$calls)), slowed = round(mean(dose$slowed), 1),
        measured = a[1], lo = a[2], hi = a[3],
        placebo_boots = if (is.null(plc)) 0L else nrow(plc),
        placebo = b[1], placebo_lo = b[2], placebo_hi = b[3],
        cost = stats::median(dose$cost),
        spill_us = sp[1], spill_lo = sp[2], spill_hi = sp[3],
        cost_us = cost[1], cost_lo = cost[2], cost_hi = cost[3],
        delivered = delivered[1], delivered_lo = delivered[2], delivered_hi = delivered[3])
    }
  }
  bind_sorted(out, c("cell", "matrix", "extra"))
}

# What the time plant printed (patch 0008: rcu_planted_exp_report()) in a
# console log's lines, the last such line: a one-row data frame of the
# dose (permille), calls, measured_ns, extra_ns, extras and `at`, a list of
# the calls (from 0, rcuscale's seq for one writer) that held an extra GP,
# from the kernel's "%*pbl" list ("1-5,9,12", empty for none).  NULL
# without one.
planted_report <- function(lines) {
  re <- paste0("^.*rcu: planted_exp_time_permille=([0-9]+): calls ([0-9]+) measured_ns ([0-9]+)",
               " extra_ns ([0-9]+) extras ([0-9]+) at ?([-0-9,]*)[[:space:]]*$")
  hit <- grep(re, lines, value = TRUE, useBytes = TRUE)
  if (!length(hit)) return(NULL)
  m <- regmatches(hit[length(hit)], regexec(re, hit[length(hit)]))[[1]]
  num <- as.numeric(m[2:6])
  data.frame(permille = num[1], calls = num[2], measured_ns = num[3], extra_ns = num[4],
             extras = num[5], at = I(list(parse_bit_list(m[7]))))
}

# The kernel's "%*pbl" list of bits ("0-3,7"), as integers.
parse_bit_list <- function(s) {
  if (is.na(s) || !nzchar(s)) return(integer(0))
  unlist(lapply(strsplit(s, ",", fixed = TRUE)[[1]], function(r) {
    b <- as.integer(strsplit(r, "-", fixed = TRUE)[[1]])
    if (length(b) == 2) seq(b[1], b[2]) else b
  }))
}

# Each run's planted_report() from its console log (RUN_DIR/console.log),
# by run id; runs without a log or a report are missing.
planted_reports <- function(rt) {
  out <- list()
  for (i in seq_len(nrow(rt))) {
    f <- file.path(rt$run_dir[i], "console.log")
    if (is.na(rt$run_dir[i]) || !file.exists(f)) next
    r <- planted_report(readLines(f, warn = FALSE))
    if (!is.null(r)) out[[as.character(rt$id[i])]] <- r
  }
  out
}

# The gate's estimand for doses that multiply runs' means by 1 + f (one
# f per dose boot): what its Hodges-Lehmann shift of log per-run means
# would find between the control and the control slowed by those doses, the
# median over control pairs (j, k) and doses i of log(m_j / m_k) +
# log(1 + f_i), as intended_change() is for an added time.  A boot whose
# extra GP met a host hiccup weighs in it as one boot, as in the gate.
intended_change_mult <- function(control_means, f) {
  change_from_pairs(control_log_pairs(control_means), f)
}

# log(m_j / m_k) over all pairs of the control's per-run means, for
# change_from_pairs(): computed once per control, not once per bootstrap
# draw.
control_log_pairs <- function(control_means) {
  m <- control_means[is.finite(control_means) & !is.na(control_means)]
  as.vector(log(outer(m, m, "/")))
}

# intended_change_mult() from the control's control_log_pairs().
change_from_pairs <- function(pairs, f) {
  f <- f[is.finite(f)]
  if (!length(pairs) || !length(f)) return(NA_real_)
  expm1(median_of_sums(pairs, log1p(f)))
}

# The median of the length(x) * length(y) sums x_i + y_j, without forming
# them: a 300-run control has 90000 pairs, and with 300 dose boots and a
# bootstrap of 200 the sums would be 5e9 values.  The k-th smallest sum is
# found by bisection on its value, counting the sums at or below a value
# with findInterval() (length(y) binary searches in sorted x), then read
# off exactly as the smallest sum above the bisection's lower end.
median_of_sums <- function(x, y) {
  x <- sort(x)
  y <- sort(y)
  n <- length(x) * length(y)
  if (n %% 2 == 1) return(kth_sum(x, y, (n + 1) / 2))
  (kth_sum(x, y, n / 2) + kth_sum(x, y, n / 2 + 1)) / 2
}

# The k-th smallest of the sums x_i + y_j (x, y sorted).
kth_sum <- function(x, y, k) {
  lo <- x[1] + y[1] - 1
  hi <- x[length(x)] + y[length(y)]
  repeat {
    mid <- (lo + hi) / 2
    if (mid <= lo || mid >= hi) break
    if (sum(findInterval(mid - y, x)) >= k) hi <- mid else lo <- mid
  }
  # fewer than k sums are <= lo and at least k are <= hi, the next
  # representable number: the k-th is the smallest sum above lo
  i <- findInterval(lo - y, x) + 1
  ok <- i <= length(x)
  min(x[i[ok]] + y[ok])
}

# As within_boot_spill(), but boot by boot: each boot's calls right after
# a slowed one minus its calls after neither, averaged over the boots with
# both, weighted by the former's count.  The time plant gives slow boots
# and fast ones different shares of such calls, which a pooled difference
# would read as spill.
spill_by_boot <- function(r, k) {
  k <- k[r$n_next[k] > 0 & r$n_far[k] > 0]
  if (!length(k)) return(NA_real_)
  d <- r$sum_next[k] / r$n_next[k] - r$sum_far[k] / r$n_far[k]
  sum(d * r$n_next[k]) / sum(r$n_next[k])
}

# The calls (from 0) that the time plant would pick in a boot whose
# measured GPs took `d` ns (rcuscale's samples in order of seq, from 0) at
# `permille`, had each extra GP taken `cost` ns: as in 0008, an extra GP
# is due at a call when the extra time so far is under permille/1000 of
# the time measured before that call.
time_plant_marks <- function(d, permille, cost) {
  m <- 0
  e <- 0
  at <- integer(0)
  for (i in seq_along(d)) {
    if (e * 1000 < m * permille) {
      e <- e + cost
      at <- c(at, i - 1L)
    }
    m <- m + d[i]
  }
  at
}

# The time doses measured inside each boot, from the kernel's report and
# rcuscale's own samples, pooled over the boots with a 95% bootstrap
# interval over boots:
#   planted     per boot, the extra GPs' time over the measured time (the
#               kernel's sums, on rcuscale's clock): its median over boots,
#               and pooled (a ratio of sums), what the plant did
#   cost_us     what one extra GP added to a slowed call in rcuscale's
#               samples (slowed calls' mean minus the others', seq 10 on),
#               beside plant_cost_us, its time on the plant's clock
#   spill_us    the calls right after a slowed one minus the calls after
#               neither (seq 10 on, spill_by_boot()); the plant picks calls by the time
#               of the calls before them, so this also holds how those
#               differ by position: placebo_us reads the control's boots
#               with the calls marked that the plant would have picked
#               there (time_plant_marks(), at the dose's mean extra GP),
#               and the difference is work the extra GP left behind
#   dose        what the extra time did to the gate's statistic: each
#               boot's mean grew by its extra time over its measured time,
#               f = extra / measured, and intended_change_mult() of the
#               matrix's control with those f
#   delivered   that with the work left behind: each boot's
#               mean grew by f = (extra + S) / (measured - S), S = that
#               difference on each of its calls right after a slowed one
#               (seq 10 on), and intended_change_mult() of the matrix's
#               control with those f (the interval: over the dose's
#               boots, the placebo held at its estimate)
# `reports`: planted_reports() of the runs (only the time doses' are read).
within_time_response <- function(rt, samples, reports, level = 0.95) {
  cr <- calibration_runs(rt)
  cr <- cr[cr$usable & cr$gp_mode == "expedited" & !is.na(cr$nwriters) & cr$nwriters == 1, ,
           drop = FALSE]
  cr0 <- cr[cr$dose == "0", , drop = FALSE]
  cr <- cr[cr$share > 0 & as.character(cr$id) %in% names(reports), , drop = FALSE]
  if (!nrow(cr)) return(NULL)
  all_gps <- samples[samples$run_id %in% c(cr$id, cr0$id), , drop = FALSE]
  all_gps <- all_gps[order(all_gps$run_id, all_gps$seq), , drop = FALSE]
  ms <- measured_gps(all_gps)
  ms <- ms[ms$seq >= WITHIN_FROM_SEQ, , drop = FALSE]
  gps <- split(ms, ms$run_id)
  full <- split(all_gps$duration_ns, all_gps$run_id)
  read_placebo <- function(id, permille, cost) {
    x <- gps[[as.character(id)]]
    if (is.null(x)) return(NULL)
    at <- time_plant_marks(full[[as.character(id)]], permille, cost * mean(x$duration_ns))
    within_boot_run(x, function(seq) seq %in% at)
  }
  read_run <- function(id) {
    kr <- reports[[as.character(id)]]
    x <- gps[[as.character(id)]]
    if (is.null(x)) return(NULL)
    r <- within_boot_run(x, function(seq) seq %in% kr$at[[1]])
    if (is.null(r)) return(NULL)
    cbind(r, measured_ns = kr$measured_ns, extra_ns = kr$extra_ns, extras = kr$extras,
          kcalls = kr$calls)
  }
  out <- list()
  for (g in split(cr, paste(cr$base, cr$matrix, cr$share))) {
    r <- do.call(rbind, lapply(g$id, read_run))
    if (is.null(r)) next
    ctl <- cr0[cr0$base == g$base[1] & cr0$matrix == g$matrix[1], , drop = FALSE]
    planted <- within_boot_pooled(r, function(k) sum(r$extra_ns[k]) / sum(r$measured_ns[k]),
                                  level = level)
    plant_cost <- sum(r$extra_ns) / sum(r$extras)
    # an extra GP in the control's boots costs what it did in the dose's,
    # relative to the boot's own GPs
    plc <- do.call(rbind, lapply(ctl$id, read_placebo, permille = 1000 * g$share[1],
                                 cost = plant_cost / mean(r$sum_plain / r$n_plain)))
    pl <- if (is.null(plc)) c(NA, NA, NA) else
      within_boot_pooled(plc, function(k) spill_by_boot(plc, k) / 1000, level = level)
    pl0 <- if (is.na(pl[1])) 0 else pl[1] * 1000
    f <- function(k) {
      sp <- spill_by_boot(r, k) - pl0
      if (is.na(sp)) sp <- 0
      (r$extra_ns[k] + sp * r$n_next[k]) / (r$measured_ns[k] - sp * r$n_next[k])
    }
    pairs <- control_log_pairs(ctl$avg_us)
    delivered <- within_boot_pooled(r, function(k) change_from_pairs(pairs, f(k)),
                                    boot = 200, level = level)
    dose <- within_boot_pooled(r, function(k) {
      change_from_pairs(pairs, r$extra_ns[k] / r$measured_ns[k])
    }, boot = 200, level = level)
    sp <- within_boot_pooled(r, function(k) spill_by_boot(r, k) / 1000, level = level)
    cost <- within_boot_cost(r, level = level)
    out[[length(out) + 1]] <- data.frame(
      cell = g$base[1], matrix = g$matrix[1], share = g$share[1], intended = g$share[1],
      boots = nrow(r), kcalls = round(mean(r$kcalls)), extras = round(mean(r$extras), 1),
      calls = round(mean(r$calls)), slowed = round(mean(r$slowed), 1),
      planted_median = stats::median(r$extra_ns / r$measured_ns),
      planted = planted[1], planted_lo = planted[2], planted_hi = planted[3],
      plant_cost_us = plant_cost / 1000,
      placebo_boots = if (is.null(plc)) 0L else nrow(plc),
      placebo_us = pl[1], placebo_lo = pl[2], placebo_hi = pl[3],
      cost_us = cost[1], cost_lo = cost[2], cost_hi = cost[3],
      spill_us = sp[1], spill_lo = sp[2], spill_hi = sp[3],
      dose = dose[1], dose_lo = dose[2], dose_hi = dose[3],
      delivered = delivered[1], delivered_lo = delivered[2], delivered_hi = delivered[3])
  }
  bind_sorted(out, c("cell", "matrix", "share"))
}

# Between-boot and within-boot parts of the variance of log(per-run mean)
# in each control cell: within = the mean over runs of (s_run / mean_run)^2
# / n_samples (the delta-method variance of a run's log mean if its GPs were
# independent), between = total - within (floored at 0).
variance_decomposition <- function(rt, samples) {
  cr <- calibration_runs(rt)
  ctl <- cr[cr$dose == "0" & !cr$alternate & cr$usable, , drop = FALSE]
  s <- samples[samples$run_id %in% ctl$id, , drop = FALSE]
  cv2 <- tapply(s$duration_ns, s$run_id, function(x) stats::var(x) / mean(x)^2 / length(x))
  out <- lapply(split(ctl, ctl$base), function(g) {
    hl_n <- min(20L, nrow(g) %/% 2L)
    total <- stats::var(log(g$avg_us))
    within <- mean(cv2[as.character(g$id)], na.rm = TRUE)
    data.frame(cell = g$base[1], runs = nrow(g), sd_log_mean = sqrt(total),
               sd_within = sqrt(within), sd_between = sqrt(max(0, total - within)),
               between_share = if (total > 0) max(0, total - within) / total else NA_real_,
               sd_log_p90 = stats::sd(log(g$p90_us)),
               spread_mean = rank_spread(list(log(g$avg_us))),
               spread_p90 = rank_spread(list(log(g$p90_us))),
               hl_n = hl_n, hl_sd_mean = hl_resampled_sd(log(g$avg_us), hl_n),
               hl_sd_p90 = hl_resampled_sd(log(g$p90_us), hl_n),
               gps_per_run = mean(g$n))
  })
  do.call(rbind, out)
}

# The SD of the Hodges-Lehmann shift between two random halves of 2n
# distinct values of `y` (log scale), over `trials` draws: what the gate's
# estimate of an A/A comparison with n runs a side scatters by, read off
# the pool itself, to check rank_spread() * sqrt(2/n) against (seeded, so
# a table reads the same each time).  NA with fewer than 2n finite values.
hl_resampled_sd <- function(y, n, trials = 2000, seed = 1) {
  y <- y[is.finite(y)]
  if (n < 1 || length(y) < 2 * n) return(NA_real_)
  stats::sd(with_seed(seed, replicate(trials, {
    i <- sample.int(length(y), 2 * n)
    stats::median(outer(y[i[seq_len(n)]], y[i[-seq_len(n)]], "-"))
  })))
}

# Runs per side for the gate to call a true slowdown `delta` (fraction)
# SLOWDOWN with probability `power`, at the rank spread `spread`
# (rank_spread(), log scale): the estimate must exceed log(1+threshold) and
# its lower bound 0 (normal approximation, se = spread * sqrt(2/n)).
runs_for_power <- function(spread, delta, power, threshold = 0.05, a = 0.025, cap = RUNS_NEEDED_CAP) {
  vapply(spread, function(s) {
    if (is.na(s)) return(NA_real_)
    for (n in 2:cap) {
      se <- s * sqrt(2 / n)
      need <- max(log1p(threshold), stats::qnorm(1 - a) * se)
      if (min_p_one_sided(n, n) < a &&
          stats::pnorm((log1p(delta) - need) / se) >= power) return(n)
    }
    Inf
  }, numeric(1))
}

fmt_rate <- function(x, lo, hi) {
  ifelse(is.na(x), "-", sprintf("%.1f%% [%.1f, %.1f]", 100 * x, 100 * lo, 100 * hi))
}

# How a dose reads in the tables: the planted time per GP, the extra GPs,
# or their share of the time.
fmt_dose <- function(added_us, extra, share = 0) {
  ifelse(share > 0, sprintf("extra GPs, %g%% of the time (%g permille)", 100 * share, 1000 * share),
         ifelse(extra > 0, sprintf("+%g GP per call (%g permille)", extra, 1000 * extra),
                ifelse(added_us > 0, fmt_time_us(added_us), "0")))
}

# The within-boot table of the time doses, NULL without one.
within_time_table <- function(wt) {
  if (is.null(wt) || !nrow(wt)) return(NULL)
  data.frame(
    cell = wt$cell,
    matrix = wt$matrix,
    planted = fmt_dose(0, 0, wt$share),
    intended = fmt_pct(wt$intended, 1),
    boots = wt$boots,
    `calls with an extra GP (seq 10 on)` = sprintf("%g of %d (%g of %d)", wt$extras, wt$kcalls,
                                                   wt$slowed, wt$calls),
    `extra time, plant's clock: median boot; pooled [95% CI]` =
      paste0(fmt_pct(wt$planted_median, 1), "; ", fmt_pct_ci(wt$planted, wt$planted_lo, wt$planted_hi)),
    `one extra GP, µs: plant's clock` = sprintf("%.2f", wt$plant_cost_us),
    `one extra GP adds in rcuscale's samples, µs [95% CI]` =
      fmt_num_ci(wt$cost_us, wt$cost_lo, wt$cost_hi, function(v) sprintf("%.2f", v)),
    `the next call took longer by, µs [95% CI]` =
      fmt_num_ci(wt$spill_us, wt$spill_lo, wt$spill_hi, function(v) sprintf("%+.2f", v)),
    `the same on the control, calls the plant would pick, µs [95% CI]` =
      fmt_num_ci(wt$placebo_us, wt$placebo_lo, wt$placebo_hi, function(v) sprintf("%+.2f", v)),
    `extra time, to the gate's estimand [95% CI]` = fmt_pct_ci(wt$dose, wt$dose_lo, wt$dose_hi),
    `off by` = sprintf("%+.1f pp", 100 * (wt$dose - wt$intended)),
    `with the work left behind [95% CI]` =
      fmt_pct_ci(wt$delivered, wt$delivered_lo, wt$delivered_hi),
    check.names = FALSE)
}

# The within-boot table (expedited doses), NULL without one.
within_table <- function(wb) {
  if (is.null(wb) || !nrow(wb)) return(NULL)
  data.frame(
    cell = wb$cell,
    matrix = wb$matrix,
    `planted` = fmt_dose(0, wb$extra),
    intended = fmt_pct(wb$intended, 1),
    boots = wb$boots,
    `slowed / measured calls` = sprintf("%g / %d", wb$slowed, wb$calls),
    `change of the run's mean [95% CI]` = fmt_pct_ci(wb$measured, wb$lo, wb$hi),
    `off by` = sprintf("%+.1f pp", 100 * (wb$measured - wb$intended)),
    `placebo on the control [95% CI]` = fmt_pct_ci(wb$placebo, wb$placebo_lo, wb$placebo_hi),
    `one extra GP costs (medians)` = sprintf("%.2f GPs", wb$cost - 1),
    `one extra GP adds, µs: mean [95% CI]` =
      fmt_num_ci(wb$cost_us, wb$cost_lo, wb$cost_hi, function(v) sprintf("%.2f", v)),
    `delivered to the run's mean [95% CI]` = fmt_pct_ci(wb$delivered, wb$delivered_lo, wb$delivered_hi),
    `the next call took longer by, µs [95% CI]` =
      fmt_num_ci(wb$spill_us, wb$spill_lo, wb$spill_hi, function(v) sprintf("%+.2f", v)),
    check.names = FALSE)
}

# The calibration's Markdown: dose-response, rates, variance, runs needed.
calibration_markdown <- function(dr, cal, vd, need, threshold, alpha, rt, wb = NULL,
                                 wt = NULL) {
  a <- alpha / length(GATE_DEFAULT_STATS)
  dtab <- data.frame(
    cell = dr$cell,
    matrix = dr$matrix,
    `planted per GP` = ifelse(dr$added_us == 0 & dr$extra == 0 & dr$share == 0, "0 (A/A halves)",
                              fmt_dose(dr$added_us, dr$extra, dr$share)),
    `control mean` = fmt_time_us(dr$control_mean_us),
    intended = fmt_pct(dr$intended, 1),
    `runs` = dr$runs,
    `change of the mean [95% CI]` = fmt_pct_ci(dr$measured, dr$lo, dr$hi),
    `off by` = sprintf("%+.1f pp", 100 * (dr$measured - dr$intended)),
    check.names = FALSE)
  wtab <- within_table(wb)
  out <- c(
    "### Dose-response",
    "",
    paste("Each dose slows the grace periods of one binary (`planted`) by a known amount.",
          "Normal GPs: whole ticks added to a known share of calls; intended: what the gate's",
          "estimator would find if the dose added exactly that to every control run (median",
          "over control pairs of log((m_i + added) / m_j); for a tight control, added / mean).",
          "Expedited GPs: extra expedited GPs, waited for inside rcuscale's measured",
          "interval, one per call at most, until their time (on rcuscale's clock) is a known",
          "share of the measured time, rcuscale's first GPs included; intended: that share,",
          "by which the per-run mean grows. (Runs of the earlier count dose, one extra GP on",
          "a known share of calls, read as that share.)"),
    "",
    paste("**Between boots**: the gate's estimate (Hodges-Lehmann, log scale) of the per-run",
          "mean's change against the control pool of the dose's own matrix, which ran",
          "interleaved with it, with the two-sided 95% interval (the 97.5% one-sided bounds);",
          "the control's row compares two random halves of it."),
    "", md_table(dtab))
  if (!is.null(wtab)) {
    out <- c(out, "",
             paste("**Within boots** (expedited): the kernel hands the extra GPs out by a",
                   "running sum, so which of rcuscale's samples hold one is known. The mean of",
                   "the measured GPs over the mean of those without an extra GP, pooled over",
                   "the boots (a ratio of sums) with a 95% bootstrap interval over boots: the",
                   "dose's change of the mean against the same boots' unslowed calls, free of",
                   "the boot-to-boot spread.",
                   "The placebo reads the control's boots the same way, with the dose's calls",
                   "marked though nothing was planted there. Beside it, the median of the",
                   "slowed calls over the median of the others, minus 1: what one extra GP",
                   "costs, in measured GPs (1 if it is like them). Last, the mean of the calls",
                   "right after a slowed one minus the mean of the calls after neither: what the",
                   "extra GP leaves behind for the next measured one (0 if nothing). Delivered:",
                   "what the dose did to the gate's statistic, the per-run mean of all 101",
                   "samples, rcuscale's slow first GPs included: the intended-change formula of",
                   "the between-boot table on the matrix's control, with the extra GP's measured",
                   "mean cost (slowed calls' mean minus the others') added to the dose's share of",
                   "calls. The detection rates below are for slowdowns of this size."),
             "", md_table(wtab))
  }
  ttab <- within_time_table(wt)
  if (!is.null(ttab)) {
    out <- c(out, "",
             paste("**Within boots** (expedited): the kernel prints, per boot, the time of the",
                   "measured GPs and of the extra ones and which calls held one, so each boot's",
                   "dose is read against rcuscale's own samples, free of the boot-to-boot spread",
                   "(pooled over the boots, a ratio of sums, with a 95% bootstrap interval over",
                   "boots). Extra time: what the plant did, its extra GPs' time over the measured",
                   "time, in the median boot and pooled (a boot whose extra GP met a host hiccup",
                   "overshoots, as the plant cannot take time back). One extra GP: its mean time on the plant's clock, beside what it added to",
                   "a slowed call in rcuscale's samples (the slowed calls' mean minus the",
                   "others', seq 10 on): the two agree if the plant's clock sees all the extra",
                   "GP costs. The next call: the calls right after a slowed one minus the calls",
                   "after neither (seq 10 on). The plant picks a call by the time of the calls",
                   "before it, so that difference also holds how such calls differ by where they",
                   "sit; the same reading of the control's boots, with the calls marked that the",
                   "plant would have picked there, measures that part, and the rest is work the",
                   "extra GP left behind, which the plant's running sum counts as measured time.",
                   "To the gate's estimand: what the dose did to the gate's statistic, the",
                   "per-run mean of all 101 samples: each boot's mean grew by f_i, its extra time",
                   "over its measured time, and the gate's estimator (Hodges-Lehmann, log scale)",
                   "would find the median over the matrix's control pairs and the dose's boots of",
                   "log(m_j / m_k) + log(1 + f_i); off by: that against the intent. With the work",
                   "left behind: the same with that work (the next call's difference net of the",
                   "control's) added to each boot's calls right after a slowed one (interval over",
                   "the dose's boots, the control's reading held at its estimate)."),
             "", md_table(ttab))
  }
  if (!is.null(cal)) {
    ctab <- data.frame(
      cell = cal$cell, comparison = cal$comparison,
      `runs per side` = cal$n,
      pools = ifelse(cal$pool_new == 0, sprintf("%d, split anew each trial", cal$pool_old),
                     sprintf("%d + %d", cal$pool_old, cal$pool_new)),
      `SLOWDOWN [95% CI]` = fmt_rate(cal$slowdown, cal$slowdown_lo, cal$slowdown_hi),
      `PASS [95% CI]` = fmt_rate(cal$pass, cal$pass_lo, cal$pass_hi),
      INCONCLUSIVE = sprintf("%.1f%%", 100 * cal$inconclusive),
      check.names = FALSE)
    out <- c(out, "", "### False alarms and detection",
             "",
             sprintf(paste(
               "The gate's default rule (threshold %s, alpha %s split over mean and p90,",
               "one-sided %.1f%% bounds) on n runs per side drawn from the pools, %d trials",
               "each (A/A: %d); the 95%% CI is a bootstrap over the pools (%d resamples of",
               "each pool's runs, %d trials each), so it carries the pools' own size. A/A: each",
               "trial draws 2n distinct runs of the control pool and splits them at random;",
               "every SLOWDOWN is a false alarm. Under such random splits the rank test's",
               "level holds exactly, so an A/A rate over 5%% by less than its Monte Carlo error",
               "(%.1f points at %d trials) is noise, not a fault of the rule."),
               fmt_pct(threshold, 0), format(alpha), 100 * (1 - a),
               max(cal$trials[cal$comparison != "A/A"], 0),
               max(cal$trials[cal$comparison == "A/A"], 0), cal$boot[1], 100,
               100 * sqrt(0.05 * 0.95 / max(cal$trials[cal$comparison == "A/A"], 1)),
               max(cal$trials[cal$comparison == "A/A"], 0)),
             "", md_table(ctab))
  }
  vtab <- data.frame(
    cell = vd$cell, runs = vd$runs, `GPs per run` = round(vd$gps_per_run),
    `SD log(mean)` = sprintf("%.3f", vd$sd_log_mean),
    `within-boot part` = sprintf("%.3f", vd$sd_within),
    `between-boot part` = sprintf("%.3f", vd$sd_between),
    `share between boots` = sprintf("%.0f%%", 100 * vd$between_share),
    `SD log(p90)` = sprintf("%.3f", vd$sd_log_p90),
    check.names = FALSE)
  ntab <- data.frame(
    cell = need$cell, stat = need$stat, `SD (log)` = sprintf("%.3f", need$sd),
    `rank spread (log)` = sprintf("%.3f", need$spread),
    `10%, 80% power` = fmt_needed(need$n10_80), `10%, 95%` = fmt_needed(need$n10_95),
    `25%, 80%` = fmt_needed(need$n25_80), `25%, 95%` = fmt_needed(need$n25_95),
    `10%, 80%, from the A/A scatter` = fmt_needed(need$rs_n10_80),
    `10%, 80%, from the SD` = fmt_needed(need$sd_n10_80),
    check.names = FALSE)
  htab <- data.frame(
    cell = rep(vd$cell, each = 2), stat = rep(c("mean", "p90"), nrow(vd)),
    `runs a side` = rep(vd$hl_n, each = 2),
    `resampled` = sprintf("%.3f", c(rbind(vd$hl_sd_mean, vd$hl_sd_p90))),
    `from the rank spread` = sprintf("%.3f", c(rbind(vd$spread_mean, vd$spread_p90)) *
                                       sqrt(2 / rep(vd$hl_n, each = 2))),
    `from the SD` = sprintf("%.3f", c(rbind(vd$sd_log_mean, vd$sd_log_p90)) *
                              sqrt(2 / rep(vd$hl_n, each = 2) / RANK_EFFICIENCY)),
    check.names = FALSE)
  c(out, "", "### Where the noise is",
    "",
    paste("Control runs of each cell. The within-boot part is what the GPs of one boot",
          "contribute to the spread of its log(mean) if they were independent",
          "(CV^2 / GPs, averaged over runs); the rest is between boots."),
    "", md_table(vtab),
    "", "### Runs per side the gate needs",
    "",
    sprintf(paste("For SLOWDOWN on a true 10%% or 25%% slowdown with the given probability,",
                  "at the spread the gate's rank statistics see in the control runs",
                  "(rank_spread(): the Hodges-Lehmann estimate of n runs a side has standard",
                  "error spread * sqrt(2/n); normal approximation; the estimate must exceed %s",
                  "and its one-sided %.1f%% lower bound 0). The last two columns put in",
                  "its place the A/A scatter below (its SD at n runs a side, times sqrt(n/2)),",
                  "and the SD (SD * sqrt(pi/3), exact for normal data), which the",
                  "heavy-tailed expedited cells' few slow boots inflate."),
            fmt_pct(threshold, 0), 100 * (1 - a)),
    "", md_table(ntab), "",
    paste("The check: how far the gate's estimate scatters in A/A comparisons of",
          "the control pool (SD of the Hodges-Lehmann shift on the log scale over 2000",
          "random halves), against what each spread predicts."),
    "", md_table(htab), "",
    sprintf("Runs: %d; accelerator %s; host PUs %s; max oversubscription %.2f; %d host-busy runs left out.",
            nrow(rt), paste(unique(rt$accel), collapse = ","),
            paste(unique(rt$host_pus), collapse = ","), max(rt$oversub, na.rm = TRUE),
            sum(rt$status == "host-busy")))
}

# Detection rate against planted size, one line per n, faceted by cell.
plot_power_curve <- function(cal, runs) {
  if (is.null(cal) || !nrow(cal)) return(NULL)
  cal$n <- factor(cal$n, levels = sort(unique(cal$n)))
  ggplot2::ggplot(cal, ggplot2::aes(x = 100 * intended, y = 100 * slowdown, colour = n, group = n)) +
    ggplot2::geom_line() +
    ggplot2::geom_point(size = 2) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = 100 * slowdown_lo, ymax = 100 * slowdown_hi),
                           width = 1, alpha = 0.7) +
    ggplot2::geom_hline(yintercept = 5, linetype = "dashed", colour = "grey40") +
    ggplot2::scale_colour_manual(values = RCUWB_PALETTE, name = "runs per side") +
    ggplot2::facet_wrap(~cell) +
    ggplot2::labs(title = "rcuwb gate: SLOWDOWN rate vs planted slowdown",
                  subtitle = "0% = A/A (false alarms; dashed: 5%); bars: 95% bootstrap CI over the pools",
                  x = "planted slowdown of the per-run mean (% of the control's)",
                  y = "trials called SLOWDOWN (%)", caption = plot_caption(runs)) +
    ggplot2::theme_bw() +
    ggplot2::theme(plot.caption = ggplot2::element_text(hjust = 0, size = 8))
}

# --- The sequential compare on pools of real runs (issue 32, item 5) -----
#
# One trial is what `rcuwb compare` does to one cell: runs come in looks of
# `batch` a side, drawn from the pools with replacement (the pools stand
# for the population of boots), up to max_runs a side; after each look the
# sequential rule (R/sequential.R: seq_looks(), seq_verdicts() per gated
# statistic, the gate's alpha split) decides the cell or asks for more.  On
# the same draws, the fixed-n gate at max_runs a side (trial_verdict()),
# so the two are compared on identical data.  A/A draws both sides from
# the control pool.

# One trial: list(seq = verdict, n = runs a side at the decision (max_runs
# when undecided), fixed = the fixed-n verdict).  old, new: matrices of
# per-run values (a column per gated statistic).
seq_trial <- function(old, new, threshold, a, a_slow, batch, max_runs) {
  io <- sample.int(nrow(old), max_runs, replace = TRUE)
  inew <- sample.int(nrow(new), max_runs, replace = TRUE)
  look <- ceiling(seq_len(max_runs) / batch)
  lks <- lapply(seq_len(ncol(old)), function(j) {
    seq_looks(log(old[io, j]), log(new[inew, j]), look, look, threshold, max_runs)
  })
  k <- max(look)
  verdict <- "INCONCLUSIVE"
  n <- max_runs
  for (l in seq_len(k)) {
    v <- vapply(lks, function(lk) {
      seq_verdicts(list(lk[lk$look <= l, , drop = FALSE]), threshold, a, a_slow)$verdict
    }, "")
    if (any(v == "SLOWDOWN") || all(v == "PASS")) {
      verdict <- if (any(v == "SLOWDOWN")) "SLOWDOWN" else "PASS"
      n <- min(l * batch, max_runs)
      break
    }
  }
  fv <- vapply(seq_len(ncol(old)), function(j) {
    trial_verdict(old[io, j], new[inew, j], threshold, a, a_slow)
  }, "")
  fixed <- if (any(fv == "SLOWDOWN")) "SLOWDOWN" else if (all(fv == "PASS")) "PASS" else "INCONCLUSIVE"
  list(seq = verdict, n = n, fixed = fixed)
}

# Wilson 95% interval of a share x/n, in percent.
wilson_pct <- function(x, n) {
  ci <- suppressWarnings(stats::prop.test(x, n, correct = FALSE)$conf.int)
  100 * c(ci[1], ci[2])
}

# The trials of one comparison: rates with their Wilson 95% intervals over
# the trials, and the runs a side to a decision (mean, median, p90; an
# undecided trial counts max_runs).  boot > 0 adds a percentile interval of
# the sequential rates over `boot` bootstrap copies of the pools (boot_trials
# trials each), which carries the pools' finiteness.
seq_calibrate_pair <- function(old, new, trials = 1000, threshold = 0.10, alpha = 0.05,
                               split = ncol(old), batch = 4, max_runs = 20, seed = 1,
                               boot = 0, boot_trials = 100) {
  a <- alpha / split
  a_slow <- alpha / (split + 1)
  run <- function(o, nw, t) lapply(seq_len(t), function(i) {
    seq_trial(o, nw, threshold, a, a_slow, batch, max_runs)
  })
  with_seed(seed, {
    r <- run(old, new, trials)
    bs <- if (boot > 0) vapply(seq_len(boot), function(b) {
      ob <- old[sample.int(nrow(old), replace = TRUE), , drop = FALSE]
      nb <- new[sample.int(nrow(new), replace = TRUE), , drop = FALSE]
      rb <- run(ob, nb, boot_trials)
      v <- vapply(rb, `[[`, "", "seq")
      c(slowdown = mean(v == "SLOWDOWN"), pass = mean(v == "PASS"))
    }, numeric(2))
  })
  sv <- vapply(r, `[[`, "", "seq")
  fv <- vapply(r, `[[`, "", "fixed")
  n <- vapply(r, `[[`, 0, "n")
  rate <- function(v, what) {
    x <- sum(v == what)
    ci <- wilson_pct(x, length(v))
    c(100 * x / length(v), ci)
  }
  s_slow <- rate(sv, "SLOWDOWN")
  s_pass <- rate(sv, "PASS")
  f_slow <- rate(fv, "SLOWDOWN")
  f_pass <- rate(fv, "PASS")
  bq <- function(i) {
    if (is.null(bs)) return(c(NA_real_, NA_real_))
    100 * stats::quantile(bs[i, ], c(0.025, 0.975), names = FALSE)
  }
  data.frame(trials = trials, pool_old = nrow(old), pool_new = nrow(new),
             slowdown = s_slow[1], slowdown_lo = s_slow[2], slowdown_hi = s_slow[3],
             slowdown_boot_lo = bq(1)[1], slowdown_boot_hi = bq(1)[2],
             pass = s_pass[1], pass_lo = s_pass[2], pass_hi = s_pass[3],
             pass_boot_lo = bq(2)[1], pass_boot_hi = bq(2)[2],
             inconclusive = 100 * mean(sv == "INCONCLUSIVE"),
             n_mean = mean(n), n_median = stats::median(n),
             n_p90 = unname(stats::quantile(n, 0.9, type = 1)),
             fixed_slowdown = f_slow[1], fixed_slowdown_lo = f_slow[2], fixed_slowdown_hi = f_slow[3],
             fixed_pass = f_pass[1], fixed_pass_lo = f_pass[2], fixed_pass_hi = f_pass[3],
             fixed_n = max_runs)
}

# The sequential compare's table: per base cell of the calibration runs
# (calibration_runs()), A/A on the control pool and each dose against it,
# at the statistics the gate gates in the cell's mode.  Adds the dose's
# intended change and the change the pools show (the Hodges-Lehmann
# estimate of the per-run mean, dose pool against control pool).
seq_calibrate <- function(rt, trials = 1000, threshold = 0.10, alpha = 0.05, batch = 4,
                          max_runs = 20, seed = 1, boot = 0, boot_trials = 100) {
  out <- list()
  for (g in between_boot_cells(rt)) {
    ctl <- g[g$dose == "0", , drop = FALSE]
    cs <- row_gated_stats(g, GATE_DEFAULT_STATS, GATE_MODE_STATS)
    ctl_m <- stat_matrix(ctl[ctl$usable, , drop = FALSE], cs)
    ctl_means <- ctl$avg_us[ctl$usable]
    cd <- cell_doses(g, ctl_means)
    for (i in seq_len(nrow(cd))) {
      dg <- g[g$dose == cd$dose[i] & g$usable, , drop = FALSE]
      new_m <- if (cd$dose[i] == "0") ctl_m else stat_matrix(dg, cs)
      r <- seq_calibrate_pair(ctl_m, new_m, trials, threshold, alpha,
                              split = length(GATE_DEFAULT_STATS), batch = batch,
                              max_runs = max_runs, seed = seed + i, boot = boot,
                              boot_trials = boot_trials)
      seen_of <- function(col) {
        if (cd$dose[i] == "0") return(0)
        expm1(stats::median(pair_diffs(log(dg[[col]]), log(ctl[[col]][ctl$usable]))))
      }
      out[[length(out) + 1]] <- cbind(
        data.frame(cell = g$base[1], mode = g$gp_mode[1], stats = paste(cs, collapse = "+"),
                   comparison = if (cd$dose[i] == "0") "A/A" else fmt_pct(cd$intended[i], 1),
                   intended = cd$intended[i], seen = seen_of("avg_us"),
                   seen_p90 = seen_of("p90_us")), r)
    }
  }
  if (!length(out)) return(NULL)
  out <- do.call(rbind, out)
  rownames(out) <- NULL
  out
}

# The table in Markdown.
seq_calibration_markdown <- function(x) {
  f1 <- function(v) formatC(v, format = "f", digits = 1)
  ci <- function(v, lo, hi) sprintf("%s [%s, %s]", f1(v), f1(lo), f1(hi))
  boot <- function(lo, hi) ifelse(is.na(lo), "", sprintf("; pools [%s, %s]", f1(lo), f1(hi)))
  c("| cell | gated | comparison | pools | seen in the pools: mean, p90 | sequential SLOWDOWN % | sequential PASS % | INCONCLUSIVE % | runs a side to a decision: mean, median, p90 | fixed-n at 20: SLOWDOWN % | fixed-n PASS % |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    sprintf("| %s | %s | %s | %d + %d | %s | %s%s | %s%s | %s | %s, %g, %g | %s | %s |",
            x$cell, x$stats, x$comparison, x$pool_old, x$pool_new,
            paste0(fmt_pct(x$seen, 1), ", ", fmt_pct(x$seen_p90, 1)),
            ci(x$slowdown, x$slowdown_lo, x$slowdown_hi), boot(x$slowdown_boot_lo, x$slowdown_boot_hi),
            ci(x$pass, x$pass_lo, x$pass_hi), boot(x$pass_boot_lo, x$pass_boot_hi),
            f1(x$inconclusive), f1(x$n_mean), x$n_median, x$n_p90,
            ci(x$fixed_slowdown, x$fixed_slowdown_lo, x$fixed_slowdown_hi),
            ci(x$fixed_pass, x$fixed_pass_lo, x$fixed_pass_hi)))
}
