# Calibrating the gate on planted slowdowns of known size (variant
# `planted`, patch 0008) against the same binary with its delays at zero.
#
# The calibration matrices (perf-configs/gate-calibration*.yaml) run one
# binary, `planted`, with boot parameters as the dose:
#   rcutree.planted_gp_tick_permille=N  normal GPs: N/1000 ticks per call
#   rcutree.planted_exp_delay_ns=N      expedited GPs: N ns per call
# and a control cell without them.  Each dose adds a known absolute time to
# every GP's latency.  Its intended relative change is what the gate's
# estimator (the Hodges-Lehmann shift of log per-run means) would find if
# the dose added exactly that to every run of the control: the median over
# control pairs of log((m_i + added) / m_j) (intended_change()).  For a
# tight control this is added / mean; for the bimodal expedited controls
# measured here it is what "10%" can mean at all.
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

# Parse the planted dose out of boot parameters: list(kind, value) where
# kind is "ticks" (permille of a tick per call), "ns" or NA (control).
planted_dose <- function(boot_params) {
  bp <- ifelse(is.na(boot_params), "", boot_params)
  tick <- suppressWarnings(as.numeric(sub(".*rcutree\\.planted_gp_tick_permille=([0-9]+).*", "\\1", bp)))
  ns <- suppressWarnings(as.numeric(sub(".*rcutree\\.planted_exp_delay_ns=([0-9]+).*", "\\1", bp)))
  tick[!grepl("planted_gp_tick_permille=", bp)] <- NA
  ns[!grepl("planted_exp_delay_ns=", bp)] <- NA
  data.frame(permille = tick, ns = ns)
}

# Added latency (us) per GP of each run of the calibration: ticks for
# normal-mode runs, ns for expedited ones (0 for the control).
planted_added_us <- function(rt) {
  d <- planted_dose(rt$boot_params)
  tick_us <- 1e6 / ifelse(is.na(rt$kconfig_hz), 250, rt$kconfig_hz)
  ifelse(rt$gp_mode == "expedited", ifelse(is.na(d$ns), 0, d$ns / 1000),
         ifelse(is.na(d$permille), 0, d$permille / 1000 * tick_us))
}

# The calibration's cells: one row per run with base (the cell without the
# dose) and added_us.
calibration_runs <- function(rt) {
  rt <- rt[rt$kind == "rcuscale", , drop = FALSE]
  rt$added_us <- planted_added_us(rt)
  bp <- ifelse(is.na(rt$boot_params), "", rt$boot_params)
  strip <- trimws(gsub("rcutree\\.planted_(gp_tick_permille|exp_delay_ns)=[0-9]+", "", bp))
  rt$base <- cell_key(transform(rt, boot_params = strip))
  rt
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

# The calibration table: per base cell, A/A (disjoint random halves of the
# control pool) and each dose against the whole control pool, at each n.
calibrate_gate <- function(rt, n = c(5, 10, 20), doses = NULL, trials = 400,
                           boot = 100, boot_trials = 100, threshold = 0.05,
                           alpha = 0.05, seed = 1, stats = GATE_DEFAULT_STATS) {
  cr <- calibration_runs(rt)
  out <- list()
  for (b in sort(unique(cr$base))) {
    g <- cr[cr$base == b, , drop = FALSE]
    ctl <- g[g$added_us == 0, , drop = FALSE]
    ctl_m <- stat_matrix(ctl, stats)
    ctl_means <- ctl$avg_us[ctl$usable]
    cmp <- list(list(label = "A/A", added = 0, old = ctl_m, new = ctl_m, aa = TRUE))
    for (d in sort(unique(g$added_us[g$added_us > 0]))) {
      want <- intended_change(ctl_means, d)
      if (!is.null(doses) && !any(abs(want - doses) < 0.01)) next
      dg <- g[g$added_us == d, , drop = FALSE]
      if (sum(dg$usable) < min(n)) next
      cmp[[length(cmp) + 1]] <- list(label = fmt_pct(want, 1),
                                     added = d, old = ctl_m, new = stat_matrix(dg, stats), aa = FALSE)
    }
    for (c in cmp) {
      for (k in n) {
        r <- calibrate_pair(c$old, c$new, k, trials, boot, boot_trials, threshold, alpha,
                            seed + k, aa = c$aa)
        if (is.null(r)) next
        out[[length(out) + 1]] <- cbind(data.frame(cell = b, comparison = c$label,
                                                   added_us = c$added,
                                                   intended = intended_change(ctl_means, c$added)), r)
      }
    }
  }
  if (!length(out)) return(NULL)
  out <- do.call(rbind, out)
  rownames(out) <- NULL
  out
}

# Dose-response: for each base cell and dose, the intended change
# (added / control median per-run mean) and the gate's estimate of the
# mean's change with its two-sided 95% CI (the 97.5% one-sided bounds).
dose_response <- function(rt, stat = "mean") {
  cr <- calibration_runs(rt)
  out <- list()
  for (b in sort(unique(cr$base))) {
    g <- cr[cr$base == b, , drop = FALSE]
    ctl <- g[g$added_us == 0, , drop = FALSE]
    base_mean <- stats::median(ctl$avg_us[ctl$usable])
    ctl_means <- ctl$avg_us[ctl$usable]
    for (d in sort(unique(g$added_us))) {
      dg <- g[g$added_us == d, , drop = FALSE]
      if (d == 0) {
        halves <- with_seed(1, sample(rep(1:2, length.out = nrow(dg))))
        x <- log_compare(side_values(dg[halves == 1, ], stat), side_values(dg[halves == 2, ], stat), 0.025)
      } else {
        x <- log_compare(side_values(ctl, stat), side_values(dg, stat), 0.025)
      }
      out[[length(out) + 1]] <- data.frame(
        cell = b, added_us = d, control_mean_us = base_mean,
        intended = intended_change(ctl_means, d),
        runs = paste0(x$n_old, "+", x$n_new), measured = x$rel, lo = x$rel_lo, hi = x$rel_hi)
    }
  }
  do.call(rbind, out)
}

# Between-boot and within-boot parts of the variance of log(per-run mean)
# in each control cell: within = the mean over runs of (s_run / mean_run)^2
# / n_samples (the delta-method variance of a run's log mean if its GPs were
# independent), between = total - within (floored at 0).
variance_decomposition <- function(rt, samples) {
  cr <- calibration_runs(rt)
  ctl <- cr[cr$added_us == 0 & cr$usable, , drop = FALSE]
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

# The calibration's Markdown: dose-response, rates, variance, runs needed.
calibration_markdown <- function(dr, cal, vd, need, threshold, alpha, rt) {
  a <- alpha / length(GATE_DEFAULT_STATS)
  dtab <- data.frame(
    cell = dr$cell,
    `planted per GP` = ifelse(dr$added_us == 0, "0 (A/A halves)", fmt_time_us(dr$added_us)),
    `control mean` = fmt_time_us(dr$control_mean_us),
    intended = fmt_pct(dr$intended, 1),
    `runs` = dr$runs,
    `measured change of the mean [95% CI]` = sprintf("%s [%s, %s]", fmt_pct(dr$measured, 1),
                                                   fmt_pct(dr$lo, 1), fmt_pct(dr$hi, 1)),
    `off by` = sprintf("%+.1f pp", 100 * (dr$measured - dr$intended)),
    check.names = FALSE)
  out <- c(
    "### Dose-response",
    "",
    paste("Each dose adds a known time to every grace period of one binary (`planted`).",
          "Intended: what the gate's estimator would find if the dose added exactly that to",
          "every control run (median over control pairs of log((m_i + added) / m_j); for a",
          "tight control, added / mean). Measured: the gate's estimate (Hodges-Lehmann, log",
          "scale) of the per-run mean's change against the control pool, with the two-sided",
          "95% interval (the 97.5% one-sided bounds)."),
    "", md_table(dtab))
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
               "each; the 95%% CI is a bootstrap over the pools (%d resamples of each pool's",
               "runs, %d trials each), so it carries the pools' own size. A/A: each trial draws",
               "2n distinct runs of the control pool and splits them at random; every SLOWDOWN",
               "is a false alarm."),
               fmt_pct(threshold, 0), format(alpha), 100 * (1 - a), cal$trials[1], cal$boot[1],
               100),
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
