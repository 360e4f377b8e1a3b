# Calibrating the gate on planted slowdowns of known size (variant
# `planted`, patch 0008) against the same binary with its delays at zero.
#
# The calibration matrices (perf-configs/gatecal-*.yaml) run one binary,
# `planted`, with boot parameters as the dose:
#   rcutree.planted_gp_tick_permille=N  normal GPs: N/1000 ticks per call
#   rcutree.planted_exp_permille=N      expedited GPs: rcuscale's interval
#                                       dilated by N/1000
#   rcutree.planted_exp_alternate=1     ...only every second (even) sample:
#                                       the within-boot check
#   rcutree.planted_exp_delay_ns=N      expedited, 0008's first revision:
#                                       N ns per call (runs stored with it
#                                       are still read)
# and a control cell with them at zero.  A normal dose adds a known absolute
# time to every GP's latency.  Its intended relative change is what the
# gate's estimator (the Hodges-Lehmann shift of log per-run means) would
# find if the dose added exactly that to every run of the control: the
# median over control pairs of log((m_i + added) / m_j) (intended_change()).
# For a tight control this is added / mean.  An expedited dilation scales
# every GP, so the per-run mean and every quantile, by 1 + N/1000: its
# intended change is N/1000 whatever the control looks like.
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
# normal GP, permille dilation per expedited GP, whether only every second
# expedited GP is dilated, and the first revision's ns per expedited GP
# (NA where absent).
planted_dose <- function(boot_params) {
  bp <- ifelse(is.na(boot_params), "", boot_params)
  data.frame(permille = planted_param(bp, "gp_tick_permille"),
             exp_permille = planted_param(bp, "exp_permille"),
             alternate = !is.na(planted_param(bp, "exp_alternate")) &
               planted_param(bp, "exp_alternate") > 0,
             ns = planted_param(bp, "exp_delay_ns"))
}

# Added latency (us) per GP of each run of the calibration: ticks for
# normal-mode runs, the first revision's ns for expedited ones (0 for the
# control and for dilations).
planted_added_us <- function(rt) {
  d <- planted_dose(rt$boot_params)
  tick_us <- 1e6 / ifelse(is.na(rt$kconfig_hz), 250, rt$kconfig_hz)
  ifelse(rt$gp_mode == "expedited", ifelse(is.na(d$ns), 0, d$ns / 1000),
         ifelse(is.na(d$permille), 0, d$permille / 1000 * tick_us))
}

# Dilation (a fraction) of each expedited run's GPs, 0 for normal runs.
planted_dilation <- function(rt) {
  d <- planted_dose(rt$boot_params)
  ifelse(rt$gp_mode == "expedited" & !is.na(d$exp_permille), d$exp_permille / 1000, 0)
}

# The calibration's cells: one row per run with base (the cell without the
# dose), added_us, dilation, alternate (a within-boot run) and dose (a key
# of the dose: the control is "0").
calibration_runs <- function(rt) {
  rt <- rt[rt$kind == "rcuscale", , drop = FALSE]
  rt$added_us <- planted_added_us(rt)
  rt$dilation <- planted_dilation(rt)
  rt$alternate <- planted_dose(rt$boot_params)$alternate & rt$gp_mode == "expedited"
  rt$dose <- ifelse(rt$dilation > 0, sprintf("x%g", rt$dilation),
                    ifelse(rt$added_us > 0, sprintf("+%gus", rt$added_us), "0"))
  bp <- ifelse(is.na(rt$boot_params), "", rt$boot_params)
  strip <- trimws(gsub("[[:space:]]+", " ", gsub(
    "rcutree\\.planted_(gp_tick_permille|exp_delay_ns|exp_permille|exp_alternate)=[0-9]+", "", bp)))
  rt$base <- cell_key(transform(rt, boot_params = strip))
  rt
}

# The intended change of each dose of one base cell (`g`, rows of
# calibration_runs()), given that cell's control per-run means.
dose_intended <- function(g, ctl_means) {
  ifelse(g$dilation > 0, g$dilation, intended_change(ctl_means, g$added_us))
}

# The gate's decision on one trial, fast: the same rule as gate_stat_rows()
# for one cell (log scale, HL estimate, one-sided Moses upper bound, exact
# one-sided rank-sum p from a table), for per-run values without ties.
# Ties come only from the bootstrap's duplicated runs; they are broken by a
# relative jitter of 1e-9 so that the untied exact distribution applies.
# `k`: moses_index(n, n, a); `ptab`: P(U >= u) for u = 0..n^2.
fast_verdict <- function(old, new, k, ptab, threshold, a) {
  n1 <- length(new)
  y <- log(c(new, old))
  dup <- duplicated(y) | duplicated(y, fromLast = TRUE)
  if (any(dup & is.finite(y))) y[dup] <- y[dup] + 1e-9 * seq_len(sum(dup))
  y1 <- y[seq_len(n1)]
  y2 <- y[-seq_len(n1)]
  d <- outer(y1, y2, "-")
  d[is.nan(d)] <- 0
  d <- sort(as.vector(d))
  m <- length(d)
  shift <- if (m %% 2) d[(m + 1) / 2] else (d[m / 2] + d[m / 2 + 1]) / 2
  hi <- if (k > 0) d[m + 1 - k] else Inf
  u <- sum(rank(y)[seq_len(n1)]) - n1 * (n1 + 1) / 2
  p <- ptab[floor(u) + 1]
  row_verdict(hi, shift, p, TRUE, threshold, a)
}

# Share of `trials` trials with each verdict, drawing n per side from the
# pools (matrices of per-run values, one column per gated statistic).
trial_rates <- function(old, new, n, trials, threshold, a, aa = FALSE) {
  k <- moses_index(n, n, a)
  ptab <- stats::pwilcox(seq(0, n * n) - 1, n, n, lower.tail = FALSE)
  testable <- min_p_one_sided(n, n) < a
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
      x <- fast_verdict(old[io, j], new[inew, j], k, ptab, threshold, a)
      if (!testable && x == "SLOWDOWN") "INCONCLUSIVE" else x
    }, character(1))
    if (any(r == "SLOWDOWN")) "SLOWDOWN" else if (all(r == "PASS")) "PASS" else "INCONCLUSIVE"
  }, character(1))
  c(slowdown = mean(v == "SLOWDOWN"), pass = mean(v == "PASS"),
    inconclusive = mean(v == "INCONCLUSIVE"))
}

# One comparison's rates at n runs per side with bootstrap CIs over pools.
calibrate_pair <- function(old, new, n, trials = 400, boot = 100, boot_trials = 100,
                           threshold = 0.05, alpha = 0.05, seed = 1, aa = FALSE) {
  a <- alpha / ncol(old)
  if (nrow(old) < (if (aa) 2 * n else n) || nrow(new) < n) return(NULL)
  with_seed(seed, {
    est <- trial_rates(old, new, n, trials, threshold, a, aa)
    bs <- vapply(seq_len(boot), function(b) {
      ob <- old[sample.int(nrow(old), replace = TRUE), , drop = FALSE]
      nb <- if (aa) ob else new[sample.int(nrow(new), replace = TRUE), , drop = FALSE]
      trial_rates(ob, nb, n, boot_trials, threshold, a, aa)
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

# The doses of one base cell `g` (rows of calibration_runs(), no
# within-boot runs), in order of their intended change: a data frame of
# dose key, added_us, dilation and intended change.
cell_doses <- function(g, ctl_means) {
  d <- g[!duplicated(g$dose), c("dose", "added_us", "dilation"), drop = FALSE]
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
                           aa_trials = 4 * trials) {
  out <- list()
  for (g in between_boot_cells(rt)) {
    ctl <- g[g$dose == "0", , drop = FALSE]
    ctl_m <- stat_matrix(ctl, stats)
    ctl_means <- ctl$avg_us[ctl$usable]
    cd <- cell_doses(g, ctl_means)
    cmp <- list(list(label = "A/A", dose = cd[cd$dose == "0", ], old = ctl_m, new = ctl_m, aa = TRUE))
    for (i in which(cd$dose != "0")) {
      want <- cd$intended[i]
      if (!is.null(doses) && !any(abs(want - doses) < 0.01)) next
      dg <- g[g$dose == cd$dose[i], , drop = FALSE]
      if (sum(dg$usable) < min(n)) next
      cmp[[length(cmp) + 1]] <- list(label = fmt_pct(want, 1), dose = cd[i, ],
                                     old = ctl_m, new = stat_matrix(dg, stats), aa = FALSE)
    }
    for (c in cmp) {
      for (k in n) {
        r <- calibrate_pair(c$old, c$new, k, if (c$aa) aa_trials else trials, boot,
                            boot_trials, threshold, alpha, seed + k, aa = c$aa)
        if (is.null(r)) next
        out[[length(out) + 1]] <- cbind(data.frame(cell = g$base[1], comparison = c$label,
                                                   added_us = c$dose$added_us,
                                                   dilation = c$dose$dilation,
                                                   intended = c$dose$intended), r)
      }
    }
  }
  if (!length(out)) return(NULL)
  out <- do.call(rbind, out)
  rownames(out) <- NULL
  out
}

# Dose-response: for each base cell, matrix and dose, the intended change
# and the gate's estimate of the mean's change against that matrix's
# control pool, with its two-sided 95% CI (the 97.5% one-sided bounds).
# The control's row compares two random halves of it.
dose_response <- function(rt, stat = "mean", samples = NULL) {
  out <- list()
  gps <- if (is.null(samples)) NULL else with(measured_gps(samples), split(duration_ns, run_id))
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
      qr <- if (is.null(gps) || g$gp_mode[1] != "expedited") NULL else
        pooled_ratio(gps, old_g$id[old_g$usable], new_g$id[new_g$usable])
      out[[length(out) + 1]] <- data.frame(
        cell = g$base[1], matrix = g$matrix[1], added_us = cd$added_us[i],
        dilation = cd$dilation[i],
        control_mean_us = stats::median(ctl_means), intended = cd$intended[i],
        runs = paste0(x$n_old, "+", x$n_new), measured = x$rel, lo = x$rel_lo, hi = x$rel_hi,
        q_ratio = I(list(qr)))
    }
  }
  if (!length(out)) return(NULL)
  out <- do.call(rbind, out)
  out <- out[order(out$cell, out$intended, out$matrix), , drop = FALSE]
  rownames(out) <- NULL
  out
}

# Each run's measured GPs: its samples without the first two (the writer's
# first GP starts everything up: often 50 times the others) and each
# writer's last (rcuscale overwrites it until the test stops).
measured_gps <- function(samples) {
  last <- stats::ave(samples$seq, samples$run_id, samples$writer, FUN = max)
  samples[samples$seq >= 2 & samples$seq < last, , drop = FALSE]
}

# The 10th, 50th and 90th percentiles of all GPs of the runs `new_ids`,
# pooled, over those of `old_ids`, and a 95% bootstrap interval of the p50
# ratio (runs resampled in each pool): a dilation scales every GP, so it
# moves these by its own size, free of the per-run mean's dependence on a
# few slow GPs.  `runs`: each run's measured GPs, named by run id.  NULL
# when a side has no GPs.
pooled_ratio <- function(runs, old_ids, new_ids, boot = 200, seed = 1) {
  old_ids <- intersect(as.character(old_ids), names(runs))
  new_ids <- intersect(as.character(new_ids), names(runs))
  if (!length(old_ids) || !length(new_ids)) return(NULL)
  pool <- function(ids) unlist(runs[ids], use.names = FALSE)
  q <- function(ids) stats::quantile(pool(ids), c(0.1, 0.5, 0.9), names = FALSE)
  est <- q(new_ids) / q(old_ids)
  draw <- function(ids) ids[sample.int(length(ids), replace = TRUE)]
  b <- with_seed(seed, vapply(seq_len(boot), function(k) {
    stats::median(pool(draw(new_ids))) / stats::median(pool(draw(old_ids)))
  }, numeric(1)))
  c(p10 = est[1], p50 = est[2], p90 = est[3],
    p50_lo = stats::quantile(b, 0.025, names = FALSE), p50_hi = stats::quantile(b, 0.975, names = FALSE))
}

# The planted dilation measured inside each boot (gatecal-within.yaml:
# rcutree.planted_exp_alternate=1, so rcuscale's even-numbered samples are
# dilated and the odd ones not).  Per boot: the median, over every dilated
# sample k that has both neighbours and each undilated neighbour j = k - 1
# and k + 1, of log(x_k / x_j), and the log of the ratio of the two halves'
# means, over the run's measured GPs (measured_gps()).  Both neighbours,
# pooled: with nothing planted the pooled set holds each
# consecutive difference once forwards and once backwards, so it is
# symmetric about 0 whatever the order of consecutive GPs does (a GP here
# tends to be a little longer than the one after it: against the next GP
# alone the A/A reads +0.4-0.6%) and however skewed the GPs are (the
# dilated GP against the mean log of its two neighbours reads -0.4%).  A
# boot without a contrast is left out.  Boots are the replicates: each
# statistic's change is expm1 of its mean over boots with a t interval.
within_boot_response <- function(rt, samples, level = 0.95) {
  cr <- calibration_runs(rt)
  cr <- cr[cr$alternate & cr$usable, , drop = FALSE]
  if (!nrow(cr)) return(NULL)
  s <- measured_gps(samples[samples$run_id %in% cr$id, , drop = FALSE])
  per_run <- lapply(split(s, s$run_id), function(x) {
    per_writer <- lapply(split(x, x$writer), function(w) {
      l <- stats::setNames(log(w$duration_ns), w$seq)
      k <- w$seq[w$seq %% 2 == 0]
      k <- k[as.character(k - 1) %in% names(l) & as.character(k + 1) %in% names(l)]
      c(l[as.character(k)] - l[as.character(k - 1)], l[as.character(k)] - l[as.character(k + 1)])
    })
    contrast <- unlist(per_writer, use.names = FALSE)
    if (!length(contrast)) return(NULL)
    ev <- x$duration_ns[x$seq %% 2 == 0]
    od <- x$duration_ns[x$seq %% 2 == 1]
    data.frame(id = x$run_id[1], pairs = length(contrast),
               log_pair = stats::median(contrast),
               log_mean = log(mean(ev) / mean(od)))
  })
  per_run <- Filter(Negate(is.null), per_run)
  if (!length(per_run)) return(NULL)
  pr <- merge(cr[, c("id", "base", "dilation")], do.call(rbind, per_run), by = "id")
  ci <- function(v) {
    m <- mean(v)
    h <- if (length(v) > 1) stats::qt(1 - (1 - level) / 2, length(v) - 1) * stats::sd(v) / sqrt(length(v)) else Inf
    c(expm1(m), expm1(m - h), expm1(m + h))
  }
  out <- lapply(split(pr, list(pr$base, pr$dilation), drop = TRUE), function(g) {
    a <- ci(g$log_pair)
    b <- ci(g$log_mean)
    data.frame(cell = g$base[1], dilation = g$dilation[1], intended = g$dilation[1],
               boots = nrow(g), pairs = round(mean(g$pairs)),
               measured = a[1], lo = a[2], hi = a[3],
               mean_measured = b[1], mean_lo = b[2], mean_hi = b[3])
  })
  out <- do.call(rbind, out)
  out <- out[order(out$cell, out$dilation), , drop = FALSE]
  rownames(out) <- NULL
  out
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
    total <- stats::var(log(g$avg_us))
    within <- mean(cv2[as.character(g$id)], na.rm = TRUE)
    data.frame(cell = g$base[1], runs = nrow(g), sd_log_mean = sqrt(total),
               sd_within = sqrt(within), sd_between = sqrt(max(0, total - within)),
               between_share = if (total > 0) max(0, total - within) / total else NA_real_,
               sd_log_p90 = stats::sd(log(g$p90_us)),
               gps_per_run = mean(g$n))
  })
  do.call(rbind, out)
}

# Runs per side for the gate to call a true slowdown `delta` (fraction)
# SLOWDOWN with probability `power`, at spread sd (log scale): the
# estimate must exceed log(1+threshold) and its lower bound 0 (normal
# approximation, rank-test efficiency).
runs_for_power <- function(sd, delta, power, threshold = 0.05, a = 0.025, cap = RUNS_NEEDED_CAP) {
  vapply(sd, function(s) {
    if (is.na(s)) return(NA_real_)
    for (n in 2:cap) {
      se <- s * sqrt(2 / n / RANK_EFFICIENCY)
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

# How a dose reads in the tables: the planted time per GP, or the dilation.
fmt_dose <- function(added_us, dilation) {
  ifelse(dilation > 0, sprintf("x%.3f (%g permille)", 1 + dilation, 1000 * dilation),
         ifelse(added_us > 0, fmt_time_us(added_us), "0"))
}

# The within-boot table (expedited, gatecal-within.yaml), NULL without it.
within_table <- function(wb) {
  if (is.null(wb) || !nrow(wb)) return(NULL)
  data.frame(
    cell = wb$cell,
    `planted per GP` = ifelse(wb$dilation == 0, "0 (even against odd)", fmt_dose(0, wb$dilation)),
    intended = fmt_pct(wb$intended, 1),
    boots = wb$boots,
    `contrasts per boot` = wb$pairs,
    `against its neighbours [95% CI]` = sprintf("%s [%s, %s]", fmt_pct(wb$measured, 1),
                                                 fmt_pct(wb$lo, 1), fmt_pct(wb$hi, 1)),
    `off by` = sprintf("%+.1f pp", 100 * (wb$measured - wb$intended)),
    `ratio of the halves' means [95% CI]` = sprintf("%s [%s, %s]", fmt_pct(wb$mean_measured, 1),
                                                    fmt_pct(wb$mean_lo, 1), fmt_pct(wb$mean_hi, 1)),
    check.names = FALSE)
}

# The calibration's Markdown: dose-response, rates, variance, runs needed.
calibration_markdown <- function(dr, cal, vd, need, threshold, alpha, rt, wb = NULL) {
  a <- alpha / length(GATE_DEFAULT_STATS)
  dtab <- data.frame(
    cell = dr$cell,
    matrix = dr$matrix,
    `planted per GP` = ifelse(dr$added_us == 0 & dr$dilation == 0, "0 (A/A halves)",
                              fmt_dose(dr$added_us, dr$dilation)),
    `control mean` = fmt_time_us(dr$control_mean_us),
    intended = fmt_pct(dr$intended, 1),
    `runs` = dr$runs,
    `change of the mean [95% CI]` = sprintf("%s [%s, %s]", fmt_pct(dr$measured, 1),
                                            fmt_pct(dr$lo, 1), fmt_pct(dr$hi, 1)),
    `off by` = sprintf("%+.1f pp", 100 * (dr$measured - dr$intended)),
    `pooled GPs: p10 / p50 [95% CI] / p90, dose / control` = vapply(dr$q_ratio, function(q) {
      if (is.null(q) || anyNA(q)) "-" else
        sprintf("%.3f / %.3f [%.3f, %.3f] / %.3f", q[["p10"]], q[["p50"]], q[["p50_lo"]],
                q[["p50_hi"]], q[["p90"]])
    }, character(1)),
    check.names = FALSE)
  wtab <- within_table(wb)
  out <- c(
    "### Dose-response",
    "",
    paste("Each dose slows every grace period of one binary (`planted`) by a known amount.",
          "Normal GPs: whole ticks added to a known share of calls; intended: what the gate's",
          "estimator would find if the dose added exactly that to every control run (median",
          "over control pairs of log((m_i + added) / m_j); for a tight control, added / mean).",
          "Expedited GPs: rcuscale's interval dilated by a factor; intended: the factor minus 1."),
    "",
    paste("**Between boots**: the gate's estimate (Hodges-Lehmann, log scale) of the per-run",
          "mean's change against the control pool of the dose's own matrix, which ran",
          "interleaved with it, with the two-sided 95% interval (the 97.5% one-sided bounds);",
          "the control's row compares two random halves of it. Beside it, for expedited",
          "GPs, the 10th, 50th and 90th percentiles of all the dose's GPs over the",
          "control's, pooled over runs, with a 95% bootstrap interval (runs resampled) of",
          "the p50 ratio: a dilation scales every GP, so it moves these by its own size,",
          "free of the per-run mean's dependence on a few slow GPs; the A/A row shows",
          "how far two halves of one pool differ."),
    "", md_table(dtab))
  if (!is.null(wtab)) {
    out <- c(out, "",
             paste("**Within boots** (expedited, `gatecal-within.yaml`): every second GP of a",
                   "boot dilated, each dilated GP compared with each undilated GP beside it",
                   "(median per boot of log(x_k / x_j) over dilated k and j = k - 1, k + 1: with",
                   "nothing planted that set holds every consecutive difference forwards and",
                   "backwards, so it is symmetric about 0 whatever the order of GPs does; the",
                   "ratio of the two halves' means beside it), mean over boots with a t",
                   "interval; the row 0 is even against odd GPs with nothing planted."),
             "", md_table(wtab))
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
    `10%, 80% power` = fmt_needed(need$n10_80), `10%, 95%` = fmt_needed(need$n10_95),
    `25%, 80%` = fmt_needed(need$n25_80), `25%, 95%` = fmt_needed(need$n25_95),
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
                  "at the measured spread (normal approximation; the estimate must exceed %s",
                  "and its one-sided %.1f%% lower bound 0; rank-test efficiency 3/pi)."),
            fmt_pct(threshold, 0), 100 * (1 - a)),
    "", md_table(ntab), "",
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
