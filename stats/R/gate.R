# The regression gate: candidate variant vs baseline variant, per cell.
#
# Status codes (also the exit code of stats/gate.R), in order of precedence:
#   2  hard failure: some candidate run ended deadlock, rcuscale-aborted,
#      crash, badness, topology-mismatch or rcuscale-error (named).
#   1  significant slowdown beyond the threshold in some cell: Holm-adjusted
#      Mann-Whitney p < alpha AND relative change (Hodges-Lehmann shift /
#      baseline median) > threshold (cell, size and CI named).
#   3  not enough data: some cell has fewer than min_runs usable (ok, with
#      samples) runs on a side (says how many more are needed), or, with
#      check_power, so few runs that the test cannot reach significance at
#      all (smallest attainable p * number of tests >= alpha: even a complete
#      separation of the runs could not pass Holm's first step).
#   0  pass.
# A slowdown found in one cell is reported even if another lacks data (a
# detected slowdown stands on its own); harness failures of the candidate
# (timeout, qemu-failed, interrupted) are not hard failures but reduce the
# usable runs.

GATE_STATUS_NAMES <- c("0" = "PASS", "1" = "SLOWDOWN", "2" = "HARD FAILURE",
                       "3" = "NOT ENOUGH DATA")

# Smallest equal number of runs per side for which a complete separation
# gives p * m < alpha (no ties).
runs_for_decidability <- function(m, alpha) {
  n <- 2
  while (2 / choose(2 * n, n) * m >= alpha && n < 1000) n <- n + 1
  n
}

# Run the gate. `db`: path or DBI connection. threshold: fraction (0.05 = 5%).
# Returns a list: status, status_name, verdicts (one row per cell),
# comparisons (compare_variants() rows), hard_failures (candidate runs),
# caveats, text (human-readable lines) and the parameters.
gate <- function(db, baseline, candidate, threshold = 0.05, alpha = 0.05,
                 min_runs = 5, matrix = NULL, since = NULL, metrics = "p50",
                 conf = 0.95, R = 2000, seed = 1, check_power = TRUE) {
  stopifnot(is.character(baseline), length(baseline) == 1,
            is.character(candidate), length(candidate) == 1,
            is.numeric(threshold), threshold >= 0,
            is.numeric(alpha), alpha > 0, alpha < 1,
            is.numeric(min_runs), min_runs >= 1)
  with_db(db, function(con) {
    runs <- read_runs(con, matrix = matrix, variants = c(baseline, candidate), since = since)
    samples <- read_samples(con, matrix = matrix, variants = c(baseline, candidate), since = since)
    rt <- build_run_table(runs, run_stats(samples))
    gate_run_table(rt, baseline, candidate, threshold, alpha, min_runs,
                   metrics, conf, R, seed, check_power, matrix)
  })
}

# The gate on an already built run table (see build_run_table()).
gate_run_table <- function(rt, baseline, candidate, threshold = 0.05,
                           alpha = 0.05, min_runs = 5, metrics = "p50",
                           conf = 0.95, R = 2000, seed = 1,
                           check_power = TRUE, matrix = NULL) {
  hard <- rt[rt$variant == candidate & rt$outcome %in% RCUWB_HARD_FAILURES, , drop = FALSE]
  hard <- data.frame(
    run_id = hard$id, cell = hard$cell, kind = hard$kind, rep = hard$rep,
    outcome = hard$outcome,
    detail = ifelse(is.na(hard$outcome_detail), "", hard$outcome_detail)
  )
  cmp <- compare_variants(rt, baseline, candidate, metrics = metrics, conf = conf,
                          R = R, seed = seed, alpha = alpha)
  m <- max(1, cmp$family_size[1] %||% 1, na.rm = TRUE)
  cells <- sort(unique(c(cmp$cell, hard$cell)))
  verdicts <- lapply(cells, function(cell) {
    c_rows <- cmp[cmp$cell == cell, , drop = FALSE]
    h_rows <- hard[hard$cell == cell, , drop = FALSE]
    n_old <- if (nrow(c_rows)) c_rows$n_old[1] else 0L
    n_new <- if (nrow(c_rows)) c_rows$n_new[1] else 0L
    slow <- c_rows[c_rows$significant & !is.na(c_rows$rel_change) &
                     c_rows$rel_change > threshold, , drop = FALSE]
    # Probe-only cells (no rcuscale runs) have no latency comparison.
    need_old <- if (nrow(c_rows)) max(0, min_runs - n_old) else 0
    need_new <- if (nrow(c_rows)) max(0, min_runs - n_new) else 0
    msgs <- character()
    verdict <- "pass"
    if (nrow(h_rows)) {
      verdict <- "hard-failure"
      msgs <- c(msgs, sprintf("run %s (%s rep %s) %s%s", h_rows$run_id, h_rows$kind,
                              h_rows$rep, h_rows$outcome,
                              ifelse(nzchar(h_rows$detail), paste0(": ", h_rows$detail), "")))
    }
    if (nrow(slow)) {
      if (verdict == "pass") verdict <- "slowdown"
      msgs <- c(msgs, sprintf(
        "%s %s [%s%% CI %s, %s] p_holm=%s n=%d+%d (%s %s -> %s %s)",
        slow$metric, fmt_pct(slow$rel_change), format(round(100 * slow$ci_level, 1)),
        fmt_pct(slow$rel_lo), fmt_pct(slow$rel_hi), fmt_p(slow$p_holm),
        slow$n_old, slow$n_new, baseline, fmt_time_us(slow$old_median),
        candidate, fmt_time_us(slow$new_median)))
    }
    if (need_old > 0 || need_new > 0) {
      if (verdict == "pass") verdict <- "insufficient"
      parts <- c(
        if (need_old > 0) sprintf("%d more %s run%s", need_old, baseline, if (need_old > 1) "s" else ""),
        if (need_new > 0) sprintf("%d more %s run%s", need_new, candidate, if (need_new > 1) "s" else "")
      )
      msgs <- c(msgs, sprintf("ok runs %d+%d < min %d: need %s", n_old, n_new,
                              as.integer(min_runs), paste(parts, collapse = " and ")))
    } else if (check_power && verdict == "pass" && nrow(c_rows) &&
               !any(c_rows$significant) &&
               min_attainable_p(n_new, n_old) * m >= alpha) {
      verdict <- "underpowered"
      n_req <- runs_for_decidability(m, alpha)
      add_old <- max(0, n_req - n_old)
      add_new <- max(0, n_req - n_new)
      msgs <- c(msgs, sprintf(paste(
        "ok runs %d+%d cannot reach significance: smallest attainable p %.4f x %d tests >= alpha %s;",
        "need %d more %s and %d more %s run(s) (%d per side)"),
        n_old, n_new, min_attainable_p(n_new, n_old), m, format(alpha),
        add_old, baseline, add_new, candidate, n_req))
      need_old <- add_old
      need_new <- add_new
    }
    if (verdict == "pass" && nrow(c_rows)) {
      msgs <- c(msgs, sprintf("%s %s [%s, %s] p_holm=%s n=%d+%d", c_rows$metric,
                              ifelse(c_rows$significant, fmt_pct(c_rows$rel_change),
                                     paste("~", fmt_pct(c_rows$rel_change))),
                              fmt_pct(c_rows$rel_lo), fmt_pct(c_rows$rel_hi),
                              fmt_p(c_rows$p_holm), c_rows$n_old, c_rows$n_new))
    }
    data.frame(cell = cell, verdict = verdict, n_old = n_old, n_new = n_new,
               needed_old = need_old, needed_new = need_new,
               message = paste(msgs, collapse = "; "))
  })
  verdicts <- if (length(verdicts)) do.call(rbind, verdicts) else
    data.frame(cell = character(), verdict = character(), n_old = integer(),
               n_new = integer(), needed_old = numeric(), needed_new = numeric(),
               message = character())

  status <- if (nrow(hard)) {
    2L
  } else if (any(verdicts$verdict == "slowdown")) {
    1L
  } else if (!nrow(verdicts) || any(verdicts$verdict %in% c("insufficient", "underpowered"))) {
    3L
  } else {
    0L
  }
  res <- list(
    status = status,
    status_name = unname(GATE_STATUS_NAMES[as.character(status)]),
    baseline = baseline, candidate = candidate, matrix = matrix,
    threshold = threshold, alpha = alpha, min_runs = min_runs,
    metrics = metrics, conf = conf, family_size = if (nrow(cmp)) cmp$family_size[1] else 0L,
    verdicts = verdicts, comparisons = cmp, hard_failures = hard,
    caveats = caveat_info(rt), caveat_text = caveat_text(rt)
  )
  res$text <- gate_text(res)
  res
}

# Human-readable lines for a gate result.
gate_text <- function(res) {
  head <- sprintf("rcuwb gate: %s (status %d): candidate '%s' vs baseline '%s'%s",
                  res$status_name, res$status, res$candidate, res$baseline,
                  if (is.null(res$matrix)) "" else paste0(" in matrix '", paste(res$matrix, collapse = ","), "'"))
  params <- sprintf(paste(
    "  threshold %s, alpha %s (Mann-Whitney, Holm over %d tests), min %d ok runs per side,",
    "metric %s (median over runs of the per-run kernel percentile)"),
    fmt_pct(res$threshold), format(res$alpha), res$family_size,
    as.integer(res$min_runs), paste(res$metrics, collapse = ","))
  cav <- paste0("  caveat: ", res$caveat_text)
  v <- res$verdicts
  if (!nrow(v)) {
    return(c(head, params, cav, sprintf("  no rcuscale runs of '%s' or '%s' found", res$baseline, res$candidate)))
  }
  label <- c("hard-failure" = "HARD FAILURE", slowdown = "SLOWDOWN",
             insufficient = "NOT ENOUGH", underpowered = "UNDERPOWERED", pass = "pass")
  ord <- order(match(v$verdict, names(label)), v$cell)
  v <- v[ord, , drop = FALSE]
  lines <- align_columns(cbind(paste0("  ", label[v$verdict]), v$cell, v$message))
  c(head, params, cav, lines)
}
