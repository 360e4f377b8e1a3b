# Grace-period anatomy: where the time of rcuscale's writer calls goes,
# phase by phase, from the runner's table gp_anatomy (one row per call of a
# traced run: runner/src/results/anatomy.h; what each phase means:
# docs/anatomy.md).
#
# Runs (boots) are the unit.  A call's phases add up to its time from
# request to the writer's next request, so the mean time per call of each
# phase (a phase a call does not have counts 0 for it) adds up, over the
# phases, to the mean call: a change of the mean call splits exactly into the
# changes of its phases, which medians would not.  Each side's mean per call
# is the mean of its runs' means; the change's interval is a percentile
# bootstrap that resamples runs within each side.  Medians and 90th
# percentiles of the calls are shown beside it, to describe each side.
# Traced runs are cells of their own (Kconfig scenario "trace"): never
# pooled with untraced runs and never gated.

# The Kconfig scenario of traced runs (perf-configs/kconfig/scenarios/trace.config)
ANATOMY_KCONFIG <- "trace"

# TRUE for runs of the tracing scenario: cells of their own, never gated (gate()).
is_traced <- function(runs) {
  k <- runs$kconfig
  if (is.null(k)) return(rep(FALSE, nrow(runs)))
  !is.na(k) & k == ANATOMY_KCONFIG
}

ANATOMY_PHASES <- list(
  normal = c("request", "init", "qs", "cleanup", "callback", "return"),
  expedited = c("funnel", "handoff", "reset", "select", "wait", "wake", "piggyback", "return")
)

# The calls of the ok, not host-busy runs whose trace was whole, with their
# run's variant, cell, vCPUs and Kconfig scenario; matrix/variants filter.
read_anatomy <- function(db, matrix = NULL, variants = NULL) {
  f <- run_filter_sql("r", matrix, variants, NULL, "rcuscale")
  with_db(db, function(con) {
    need_schema(con, "gp_anatomy")
    sql <- paste(
      "SELECT a.*, r.variant, r.cell, r.vcpus, r.kconfig, r.matrix, r.nsamples",
      "FROM gp_anatomy a JOIN run_status r ON r.id = a.run_id",
      "JOIN traces t ON t.run_id = a.run_id", f$sql,
      if (nzchar(f$sql)) "AND" else "WHERE",
      "r.status = 'ok' AND t.incomplete IS NULL ORDER BY a.run_id, a.writer, a.call"
    )
    query(con, sql, f$params)
  })
}

# Per run and phase: calls, mean time per call (absent phases as 0), and
# the median and 90th percentile of the calls that have the phase.
anatomy_runs <- function(calls) {
  out <- list()
  for (mode in names(ANATOMY_PHASES)) {
    d <- calls[calls$mode == mode, , drop = FALSE]
    if (!nrow(d)) next
    for (ph in ANATOMY_PHASES[[mode]]) {
      v <- d[[paste0(ph, "_us")]]
      if (all(is.na(v))) next
      by_run <- split(v, d$run_id)
      out[[length(out) + 1]] <- data.frame(
        run_id = as.numeric(names(by_run)), mode = mode, phase = ph,
        calls = vapply(by_run, length, 0L),
        mean_us = vapply(by_run, function(x) mean(ifelse(is.na(x), 0, x)), 0),
        stringsAsFactors = FALSE
      )
    }
  }
  if (!length(out)) {
    return(data.frame(run_id = numeric(), mode = character(), phase = character(),
                      calls = integer(), mean_us = numeric()))
  }
  r <- do.call(rbind, out)
  rownames(r) <- NULL
  meta <- unique(calls[, c("run_id", "variant", "cell", "vcpus")])
  merge(r, meta, by = "run_id")
}

# The change of the mean of y (cand) over the mean of x (base) and its
# percentile-bootstrap interval, runs resampled within each side.
boot_mean_diff <- function(x, y, level = 0.95, B = 2000, seed = 1) {
  d <- mean(y) - mean(x)
  if (length(x) < 2 || length(y) < 2) return(c(change = d, lo = NA_real_, hi = NA_real_))
  bs <- with_seed(seed, vapply(seq_len(B), function(i) {
    mean(y[sample.int(length(y), replace = TRUE)]) - mean(x[sample.int(length(x), replace = TRUE)])
  }, 0))
  a <- (1 - level) / 2
  q <- stats::quantile(bs, c(a, 1 - a), names = FALSE, type = 6)
  c(change = d, lo = q[1], hi = q[2])
}

# Nearest-rank quantile (as the runner's summaries), NA for no values.
nr_quantile <- function(x, p) {
  x <- sort(x[!is.na(x)])
  if (!length(x)) return(NA_real_)
  x[max(1, ceiling(p * length(x)))]
}

# The comparison of cand against base in every cell both have: one row per
# cell and phase (runs and calls per side, median and p90 of the calls, mean
# per call, the change of the mean per call with its interval, its share of
# the mean call's change) and, per cell, the phase that carries most of it.
anatomy_compare <- function(calls, base, cand, level = 0.95, B = 2000, seed = 1) {
  runs <- anatomy_runs(calls)
  cells <- intersect(unique(runs$cell[runs$variant == base]), unique(runs$cell[runs$variant == cand]))
  rows <- list()
  for (cell in sort(cells)) {
    rc <- runs[runs$cell == cell, , drop = FALSE]
    mode <- rc$mode[1]
    for (ph in ANATOMY_PHASES[[mode]]) {
      x <- rc$mean_us[rc$variant == base & rc$phase == ph]
      y <- rc$mean_us[rc$variant == cand & rc$phase == ph]
      if (!length(x) && !length(y)) next
      cb <- calls[calls$cell == cell & calls$variant == base, paste0(ph, "_us")]
      cc <- calls[calls$cell == cell & calls$variant == cand, paste0(ph, "_us")]
      if (all(is.na(cb)) && all(is.na(cc))) next	# no call of the cell has it
      ch <- if (length(x) && length(y)) boot_mean_diff(x, y, level, B, seed) else c(NA, NA, NA)
      rows[[length(rows) + 1]] <- data.frame(
        cell = cell, mode = mode, phase = ph,
        base_runs = length(x), cand_runs = length(y),
        base_calls = sum(!is.na(cb)), cand_calls = sum(!is.na(cc)),
        base_median_us = nr_quantile(cb, 0.5), base_p90_us = nr_quantile(cb, 0.9),
        cand_median_us = nr_quantile(cc, 0.5), cand_p90_us = nr_quantile(cc, 0.9),
        base_mean_us = if (length(x)) mean(x) else NA_real_,
        cand_mean_us = if (length(y)) mean(y) else NA_real_,
        change_us = ch[[1]], lo_us = ch[[2]], hi_us = ch[[3]],
        stringsAsFactors = FALSE
      )
    }
  }
  if (!length(rows)) return(list(phases = NULL, cells = NULL, base = base, cand = cand, level = level))
  ph <- do.call(rbind, rows)
  total <- tapply(ph$change_us, ph$cell, sum, na.rm = TRUE)
  ph$share <- as.numeric(ph$change_us / total[ph$cell])
  # GPs waited for per rcuscale sample: 1, unless the writers wait for more
  # than one per measured interval (patch 0008's expedited plant does)
  per_sample <- function(cell, v) {
    d <- calls[calls$cell == cell & calls$variant == v, c("run_id", "nsamples")]
    nrow(d) / sum(unique(d)$nsamples)
  }
  cells <- do.call(rbind, lapply(split(ph, ph$cell), function(d) {
    i <- which.max(abs(d$change_us))
    data.frame(cell = d$cell[1], mode = d$mode[1],
               base_gps_per_sample = per_sample(d$cell[1], base), cand_gps_per_sample = per_sample(d$cell[1], cand),
               base_call_us = sum(d$base_mean_us, na.rm = TRUE),
               cand_call_us = sum(d$cand_mean_us, na.rm = TRUE), change_us = sum(d$change_us, na.rm = TRUE),
               carrier = d$phase[i], carrier_change_us = d$change_us[i],
               carrier_lo_us = d$lo_us[i], carrier_hi_us = d$hi_us[i], stringsAsFactors = FALSE)
  }))
  rownames(ph) <- NULL
  rownames(cells) <- NULL
  list(phases = ph, cells = cells, base = base, cand = cand, level = level)
}

# a share of the change as a whole percentage ("0%", never "-0%")
fmt_share <- function(x) {
  s <- round(100 * x)
  ifelse(is.na(x), "-", sprintf("%d%%", as.integer(s + 0)))
}

fmt_us1 <- function(x) ifelse(is.na(x), "-", sprintf("%.1f", x))
fmt_signed_us <- function(x) ifelse(is.na(x), "-", sprintf("%+.1f", x))

# The comparison as text, a table per cell.
anatomy_text <- function(cmp) {
  if (is.null(cmp$phases)) {
    return(sprintf("anatomy: no cell has whole traced runs of both %s and %s", cmp$base, cmp$cand))
  }
  out <- character()
  for (cell in cmp$cells$cell) {
    d <- cmp$phases[cmp$phases$cell == cell, ]
    s <- cmp$cells[cmp$cells$cell == cell, ]
    out <- c(out, sprintf("%s (%s GPs): %s %d runs, %s %d runs; times per call in us", cell, s$mode,
                          cmp$base, max(d$base_runs), cmp$cand, max(d$cand_runs)))
    m <- rbind(
      c("phase", paste(cmp$base, c("median", "p90", "mean")), paste(cmp$cand, c("median", "p90", "mean")),
        sprintf("change [%g%% CI]", 100 * cmp$level), "share"),
      cbind(d$phase, fmt_us1(d$base_median_us), fmt_us1(d$base_p90_us), fmt_us1(d$base_mean_us),
            fmt_us1(d$cand_median_us), fmt_us1(d$cand_p90_us), fmt_us1(d$cand_mean_us),
            sprintf("%s [%s, %s]", fmt_signed_us(d$change_us), fmt_signed_us(d$lo_us), fmt_signed_us(d$hi_us)),
            fmt_share(d$share))
    )
    out <- c(out, paste0("  ", align_columns(m)))
    out <- c(out, sprintf("  the mean call: %s -> %s us (%s us); most of the change is in %s: %s us [%s, %s]",
                          fmt_us1(s$base_call_us), fmt_us1(s$cand_call_us), fmt_signed_us(s$change_us),
                          s$carrier, fmt_signed_us(s$carrier_change_us), fmt_signed_us(s$carrier_lo_us),
                          fmt_signed_us(s$carrier_hi_us)),
             sprintf("  GPs per rcuscale sample: %s %.3f, %s %.3f", cmp$base, s$base_gps_per_sample,
                     cmp$cand, s$cand_gps_per_sample), "")
  }
  out
}

anatomy_json <- function(cmp) {
  jsonlite::toJSON(list(base = cmp$base, cand = cmp$cand, level = cmp$level,
                        cells = cmp$cells, phases = cmp$phases),
                   dataframe = "rows", auto_unbox = TRUE, digits = NA, na = "null", pretty = TRUE)
}

# Paired bars, one panel per cell: each phase's mean time per call, base
# beside cand, with the change's interval on cand's bar (Okabe-Ito colours).
plot_anatomy <- function(cmp) {
  d <- cmp$phases
  long <- rbind(
    data.frame(cell = d$cell, phase = d$phase, side = cmp$base, us = d$base_mean_us, lo = NA_real_, hi = NA_real_),
    data.frame(cell = d$cell, phase = d$phase, side = cmp$cand, us = d$cand_mean_us,
               lo = d$base_mean_us + d$lo_us, hi = d$base_mean_us + d$hi_us)
  )
  long$phase <- factor(long$phase, levels = unique(unlist(ANATOMY_PHASES)))
  long$side <- factor(long$side, levels = c(cmp$base, cmp$cand))
  ggplot2::ggplot(long, ggplot2::aes(x = phase, y = us, fill = side)) +
    ggplot2::geom_col(position = ggplot2::position_dodge(width = 0.8), width = 0.75) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = lo, ymax = hi),
                           position = ggplot2::position_dodge(width = 0.8), width = 0.25, na.rm = TRUE) +
    ggplot2::facet_wrap(~cell, scales = "free") +
    ggplot2::scale_fill_manual(values = c("#0072B2", "#E69F00")) +
    ggplot2::labs(x = "phase", y = "mean time per call (us)", fill = NULL,
                  title = sprintf("Where the time goes: %s against %s", cmp$cand, cmp$base),
                  caption = sprintf("bars: mean of run means; whiskers: %g%% interval of the change (runs resampled)",
                                    100 * cmp$level)) +
    ggplot2::theme_bw() +
    ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 30, hjust = 1), legend.position = "top")
}

# What tracing costs: per variant and cell, rcuscale's mean latency (the
# mean of the runs' means) in the traced cell (".../k=trace") against the
# same cell untraced, its relative change and a 95% bootstrap interval
# (runs resampled within each side).  ok, not host-busy runs only.
tracing_overhead <- function(db, matrix = NULL, level = 0.95, B = 2000, seed = 1) {
  runs <- read_runs(db, matrix = matrix, kinds = "rcuscale")
  runs <- runs[runs$status == "ok", , drop = FALSE]
  if (!nrow(runs)) return(NULL)
  s <- read_samples(db, run_ids = runs$id)
  m <- tapply(s$duration_ns / 1000, s$run_id, mean)
  runs$mean_us <- as.numeric(m[as.character(runs$id)])
  runs$traced <- grepl("/k=trace", runs$cell, fixed = TRUE)
  runs$plain <- sub("/k=trace", "", runs$cell, fixed = TRUE)
  out <- list()
  for (key in unique(paste(runs$variant, runs$plain[runs$traced]))) {
    v <- sub(" .*", "", key)
    cell <- sub("^[^ ]* ", "", key)
    x <- runs$mean_us[runs$variant == v & runs$plain == cell & !runs$traced]
    y <- runs$mean_us[runs$variant == v & runs$plain == cell & runs$traced]
    x <- x[!is.na(x)]
    y <- y[!is.na(y)]
    if (length(x) < 2 || length(y) < 2) next
    bs <- with_seed(seed, vapply(seq_len(B), function(i) {
      mean(y[sample.int(length(y), replace = TRUE)]) / mean(x[sample.int(length(x), replace = TRUE)]) - 1
    }, 0))
    a <- (1 - level) / 2
    q <- stats::quantile(bs, c(a, 1 - a), names = FALSE, type = 6)
    out[[length(out) + 1]] <- data.frame(variant = v, cell = cell, untraced_runs = length(x),
                                         traced_runs = length(y), untraced_mean_us = mean(x),
                                         traced_mean_us = mean(y), change = mean(y) / mean(x) - 1,
                                         lo = q[1], hi = q[2], stringsAsFactors = FALSE)
  }
  if (!length(out)) return(NULL)
  r <- do.call(rbind, out)
  rownames(r) <- NULL
  r[order(r$variant, r$cell), ]
}

tracing_overhead_text <- function(ov) {
  if (is.null(ov)) return("tracing overhead: no cell has both traced and untraced ok runs (2 or more each)")
  m <- rbind(c("variant", "cell", "runs", "untraced mean", "traced mean", "change [95% CI]"),
             cbind(ov$variant, ov$cell, sprintf("%d+%d", ov$untraced_runs, ov$traced_runs),
                   fmt_us1(ov$untraced_mean_us), fmt_us1(ov$traced_mean_us),
                   fmt_pct_ci(ov$change, ov$lo, ov$hi)))
  c("tracing overhead: rcuscale's mean latency per call (us), traced cell against the same cell untraced",
    paste0("  ", align_columns(m)))
}

# One variant's anatomy, per cell and phase: runs, calls, the median and
# p90 of the calls, the mean per call (the mean of the runs' means) and its
# share of the mean call.
anatomy_describe <- function(calls, variant) {
  calls <- calls[calls$variant == variant, , drop = FALSE]
  runs <- anatomy_runs(calls)
  if (!nrow(runs)) return(NULL)
  rows <- lapply(split(runs, list(runs$cell, runs$phase), drop = TRUE), function(d) {
    v <- calls[calls$cell == d$cell[1], paste0(d$phase[1], "_us")]
    data.frame(cell = d$cell[1], vcpus = d$vcpus[1], mode = d$mode[1], phase = d$phase[1],
               runs = nrow(d), calls = sum(!is.na(v)), median_us = nr_quantile(v, 0.5),
               p90_us = nr_quantile(v, 0.9), mean_us = mean(d$mean_us), stringsAsFactors = FALSE)
  })
  r <- do.call(rbind, rows)
  r <- r[r$calls > 0, , drop = FALSE]	# a phase no call of the cell has
  r$share <- r$mean_us / as.numeric(tapply(r$mean_us, r$cell, sum)[r$cell])
  r$order <- mapply(function(m, p) match(p, ANATOMY_PHASES[[m]]), r$mode, r$phase)
  r <- r[order(r$mode, r$vcpus, r$cell, r$order), ]
  r$order <- NULL
  rownames(r) <- NULL
  r
}

anatomy_describe_text <- function(d, variant) {
  if (is.null(d)) return(sprintf("anatomy: no whole traced runs of %s", variant))
  out <- character()
  for (cell in unique(d$cell)) {
    x <- d[d$cell == cell, ]
    out <- c(out, sprintf("%s %s (%s GPs): %d runs, %d calls; times per call in us", variant, cell,
                          x$mode[1], max(x$runs), max(x$calls)))
    m <- rbind(c("phase", "median", "p90", "mean", "share"),
               cbind(x$phase, fmt_us1(x$median_us), fmt_us1(x$p90_us), fmt_us1(x$mean_us), fmt_share(x$share)))
    out <- c(out, paste0("  ", align_columns(m)), sprintf("  the mean call: %s us", fmt_us1(sum(x$mean_us))), "")
  }
  out
}
