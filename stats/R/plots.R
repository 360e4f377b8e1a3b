# Plots (ggplot2). Each plot's caption states the accelerator(s), the
# oversubscription (max vCPUs per host PU, flagged when > 1) and the host PUs
# of the runs it shows. Every plot function returns NULL when there is
# nothing to draw.

plot_caption <- function(runs, extra = NULL) {
  txt <- paste(c(extra, caveat_text(runs)), collapse = " | ")
  paste(strwrap(txt, width = 120), collapse = "\n")
}

# Short axis labels: "70µs", "1.5ms" (3 significant digits, no trailing 0s).
time_labels <- function(x) {
  vapply(x, function(v) {
    if (is.na(v)) return(NA_character_)
    u <- if (abs(v) < 1) c(1e-3, "ns") else if (abs(v) < 1e3) c(1, "\u00b5s") else
      if (abs(v) < 1e6) c(1e3, "ms") else c(1e6, "s")
    paste0(format(signif(v / as.numeric(u[1]), 3), drop0trailing = TRUE, scientific = FALSE), u[2])
  }, character(1))
}

# Parameters of a cell beyond topology and GP mode, for telling lines apart.
cell_params_label <- function(nwriters, nreaders, boot_params) {
  bp <- ifelse(is.na(boot_params) | !nzchar(boot_params), "", paste0(" ", boot_params))
  paste0("w", nwriters, "-r", nreaders, bp)
}

# Median over runs of the per-run `metric` (p50 by default) with its
# bootstrap CI, vs vCPUs; one line per variant (and parameter set), faceted
# by GP mode (rows) and NUMA nodes (columns).
# cells: summarise_cells() output; runs: the runs shown (for the caption).
plot_latency_vs_vcpus <- function(cells, runs, metric = "p50") {
  mcol <- paste0(metric, "_median")
  d <- cells[!is.na(cells[[mcol]]) & !is.na(cells$vcpus), , drop = FALSE]
  if (!nrow(d)) return(NULL)
  d$y <- d[[mcol]]
  d$lo <- d[[paste0(metric, "_lo")]]
  d$hi <- d[[paste0(metric, "_hi")]]
  d$params <- cell_params_label(d$nwriters, d$nreaders, d$boot_params)
  d$matrix <- if (is.null(d$matrix)) "" else ifelse(is.na(d$matrix), "", d$matrix)
  # a cell split by host shape ("cell@big1") draws its own line per shape
  d$shape_group <- ifelse(grepl("@", d$cell, fixed = TRUE), sub("^[^@]*", "", d$cell), "")
  d$line <- interaction(d$variant, d$params, d$matrix, d$shape_group, drop = TRUE)
  d$numa_nodes <- ifelse(is.na(d$numa_nodes), 1, d$numa_nodes)
  if (is.null(d$max_oversub)) d$max_oversub <- NA_real_
  several_params <- length(unique(d$params)) > 1
  several_matrices <- length(unique(d$matrix)) > 1
  dodge <- ggplot2::position_dodge(width = 0.12)
  aes_line <- ggplot2::aes(x = vcpus, y = y, colour = variant, group = line)
  if (several_params) aes_line$linetype <- quote(params)
  if (several_matrices) aes_line$shape <- quote(matrix)
  shown <- runs[paste(runs$cell, runs$variant) %in% paste(sub("@.*", "", d$cell), d$variant), ,
                drop = FALSE]
  # lines only where a line has two or more points (ggplot2 notes the rest)
  multi <- d[stats::ave(seq_len(nrow(d)), d$line, FUN = length) > 1, , drop = FALSE]
  over <- d[!is.na(d$max_oversub) & d$max_oversub > 1, , drop = FALSE]
  over$what <- rep("oversubscribed (> 1 vCPU per host PU)", nrow(over))
  ggplot2::ggplot(d, aes_line) +
    ggplot2::geom_line(data = multi, position = dodge) +
    ggplot2::geom_point(position = dodge, size = 2) +
    ggplot2::geom_point(data = over, ggplot2::aes(fill = what), position = dodge, size = 4.5,
                        shape = 21, colour = "black", alpha = 0.25, stroke = 0.8) +
    ggplot2::scale_fill_manual(values = c("oversubscribed (> 1 vCPU per host PU)" = "grey20"),
                               name = NULL) +
    ggplot2::scale_colour_manual(values = RCUWB_PALETTE) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = lo, ymax = hi), width = 0.1,
                           position = dodge, na.rm = TRUE) +
    ggplot2::scale_x_continuous(trans = "log2", breaks = sort(unique(d$vcpus))) +
    ggplot2::scale_y_log10(labels = time_labels) +
    ggplot2::facet_grid(gp_mode ~ numa_nodes, scales = "free_y",
                        labeller = ggplot2::labeller(numa_nodes = function(x) paste("NUMA nodes:", x),
                                                     gp_mode = function(x) paste("GP:", x))) +
    ggplot2::labs(
      title = sprintf("Grace-period latency: median over runs of per-run %s", metric),
      subtitle = "error bars: 95% percentile-bootstrap CI over runs",
      x = "vCPUs", y = sprintf("%s GP latency", metric), colour = "variant",
      linetype = "parameters", shape = "matrix",
      caption = plot_caption(shown)
    ) +
    ggplot2::theme_bw() +
    ggplot2::theme(plot.caption = ggplot2::element_text(hjust = 0, size = 8))
}

# Step points of each run's ECDF: (x_i, i/n) for the sorted samples, thinned
# to at most `max_points` per run (evenly spaced in rank; first and last kept)
# so large runs stay cheap to draw.
ecdf_points <- function(d, max_points = 300) {
  d$us <- pmax(d$duration_ns / 1000, 1e-3)
  d <- d[order(d$run_id, d$us), , drop = FALSE]
  n <- stats::ave(d$us, d$run_id, FUN = length)
  i <- stats::ave(d$us, d$run_id, FUN = seq_along)
  d$frac <- i / n
  step <- pmax(1, ceiling(n / max_points))
  keep <- (i - 1) %% step == 0 | i == n
  d[keep, c("run_id", "cell", "variant", "us", "frac"), drop = FALSE]
}

# Per-cell ECDFs of the writer-duration samples, one thin line per usable
# run (the unit of replication), coloured by variant; one facet per cell.
# samples: read_samples() output; run_table: build_run_table() output.
# Runs share a budget of `total_points` step points (at least 15 and at most
# 300 a run), so the plot's SVG stays small however many runs it shows.
plot_ecdf <- function(samples, run_table, total_points = 8000) {
  u <- run_table[run_table$usable & run_table$kind == "rcuscale", , drop = FALSE]
  d <- samples[samples$run_id %in% u$id & !is.na(samples$duration_ns), , drop = FALSE]
  if (!nrow(d)) return(NULL)
  idx <- match(d$run_id, u$id)
  d$cell <- u$cell[idx]
  d$variant <- u$variant[idx]
  per_run <- floor(total_points / length(unique(d$run_id)))
  d <- ecdf_points(d, max_points = max(15, min(300, per_run)))
  ggplot2::ggplot(d, ggplot2::aes(x = us, y = frac, colour = variant, group = run_id)) +
    ggplot2::geom_step(alpha = 0.6, linewidth = 0.4) +
    ggplot2::scale_colour_manual(values = RCUWB_PALETTE) +
    ggplot2::scale_x_log10(labels = time_labels,
                           guide = ggplot2::guide_axis(check.overlap = TRUE)) +
    ggplot2::facet_wrap(~cell, scales = "free_x") +
    ggplot2::labs(
      title = "ECDF of grace-period durations (writer-duration samples)",
      subtitle = "one line per run",
      x = "GP duration", y = "fraction of grace periods <= x", colour = "variant",
      caption = plot_caption(u)
    ) +
    ggplot2::theme_bw() +
    ggplot2::theme(plot.caption = ggplot2::element_text(hjust = 0, size = 8),
                   panel.spacing.x = ggplot2::unit(1.5, "lines"))
}

# Aggregate probes to one tile per variant x rcu_normal x stage x primitive:
# boots (runs) and calls, boots in which a call deadlocked, calls hung without
# a verdict, slow or skipped, and the median and quartiles (us, nearest rank)
# of the calls that returned. Boots, not calls, are the unit of replication.
midboot_cells <- function(probes) {
  if (!nrow(probes)) {
    return(data.frame(variant = character(), rcu_normal = character(), stage = integer(),
                      point = character(), prim = character(), runs = integer(),
                      calls = integer(), deadlocks = integer(), hung = integer(),
                      slow = integer(), skipped = integer(), median_us = numeric(),
                      q1_us = numeric(), q3_us = numeric()))
  }
  probes$rcu_normal <- ifelse(parse_rcu_normal(probes$boot_params), "rcu_normal=1", "rcu_normal=0")
  probes$point[is.na(probes$point)] <- ""
  key <- interaction(probes$variant, probes$rcu_normal, probes$stage, probes$prim,
                     drop = TRUE, sep = "\r", lex.order = TRUE)
  rows <- lapply(split(seq_len(nrow(probes)), key), function(i) {
    g <- probes[i, , drop = FALSE]
    done <- g$outcome %in% c("ok", "slow") & !is.na(g$duration_ns)
    # nearest rank as the kernel's script and "rcuwb summary --probes" define it
    us <- sort(g$duration_ns[done] / 1000)
    q <- if (length(us)) us[kernel_rank(length(us), c(25, 50, 75))] else rep(NA_real_, 3)
    data.frame(
      variant = g$variant[1], rcu_normal = g$rcu_normal[1], stage = g$stage[1],
      point = paste(unique(g$point), collapse = ","), prim = g$prim[1],
      runs = length(unique(g$run_id)), calls = nrow(g),
      deadlocks = length(unique(g$run_id[g$outcome %in% "deadlock"])),
      hung = sum(g$outcome %in% "hung"), slow = sum(g$outcome %in% "slow"),
      skipped = sum(g$outcome %in% "skipped"),
      median_us = q[2], q1_us = q[1], q3_us = q[3]
    )
  })
  out <- do.call(rbind, rows)
  out <- out[order(out$variant, out$rcu_normal, out$stage, out$prim), , drop = FALSE]
  rownames(out) <- NULL
  out
}

# A cell's text: DEADLOCK (k/n boots when not all), n/a when the probe could
# not call the primitive there, else the median latency.
midboot_label <- function(mb) {
  ifelse(mb$deadlocks > 0,
         ifelse(mb$deadlocks == mb$runs, "DEADLOCK", sprintf("DEADLOCK %d/%d", mb$deadlocks, mb$runs)),
         ifelse(mb$skipped == mb$calls, "n/a", fmt_time_us(mb$median_us)))
}

# Mid-boot outcome grid: stage (x) x primitive (y), faceted variant x
# rcu_normal; fill = median latency (log scale); DEADLOCK tiles marked.
# probes: read_probes() output; runs: the probe runs (for the caption).
plot_midboot <- function(probes, runs) {
  d <- midboot_cells(probes)
  if (!nrow(d)) return(NULL)
  d$stage_label <- ifelse(nzchar(d$point), paste0(d$stage, ": ", d$point), as.character(d$stage))
  lv <- unique(d$stage_label[order(d$stage, d$stage_label)])
  d$stage_label <- factor(d$stage_label, levels = lv)
  d$label <- midboot_label(d)
  d$dead <- d$deadlocks > 0
  d$fill <- ifelse(d$dead, NA_real_, d$median_us)
  ggplot2::ggplot(d, ggplot2::aes(x = stage_label, y = prim)) +
    ggplot2::geom_tile(ggplot2::aes(fill = fill), colour = "white") +
    ggplot2::geom_tile(data = d[d$dead, , drop = FALSE], fill = NA, colour = "red",
                       linewidth = 1) +
    ggplot2::geom_text(ggplot2::aes(label = label, fontface = ifelse(dead, "bold", "plain")),
                       size = 2.6) +
    ggplot2::scale_fill_viridis_c(trans = "log10", labels = time_labels,
                                  na.value = "grey75", option = "C") +
    ggplot2::facet_grid(variant ~ rcu_normal) +
    ggplot2::labs(
      title = "Mid-boot RCU primitives: latency by boot stage",
      subtitle = "fill: median latency of the calls that returned (log scale); red outline: DEADLOCK",
      x = "stage", y = "primitive", fill = "latency",
      caption = plot_caption(runs)
    ) +
    ggplot2::theme_bw() +
    ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 30, hjust = 1),
                   plot.caption = ggplot2::element_text(hjust = 0, size = 8))
}

# Write a plot as <dir>/<name>.png and <dir>/<name>.svg (Cairo devices from
# base R). Returns the two paths.
save_plot <- function(p, dir, name, width = 10, height = 6, dpi = 110) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  png_path <- file.path(dir, paste0(name, ".png"))
  svg_path <- file.path(dir, paste0(name, ".svg"))
  grDevices::png(png_path, width = width, height = height, units = "in", res = dpi,
                 type = "cairo")
  tryCatch(print(p), finally = grDevices::dev.off())
  grDevices::svg(svg_path, width = width, height = height)
  tryCatch(print(p), finally = grDevices::dev.off())
  c(png = png_path, svg = svg_path)
}

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
RCUWB_PALETTE <- c("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                   "#56B4E9", "#F0E442", "#000000")
VERDICT_COLOURS <- c(PASS = "#0072B2", SLOWDOWN = "#D55E00", INCONCLUSIVE = "#E69F00")

# Forest plot of a gate result: per cell (rows) and gated statistic
# (columns), the estimated relative change with its one-sided bounds (the
# two of them together: the (1 - 2a) two-sided interval) against the
# +/- threshold band, coloured by the row's verdict.  Bounds beyond the
# axis are drawn to its edge with an arrow.
plot_forest <- function(res, runs = NULL, limits = c(-0.6, 1.5)) {
  r <- res$rows
  if (is.null(r) || !nrow(r)) return(NULL)
  r <- r[r$gated, , drop = FALSE]
  r$label <- if (length(unique(r$matrix)) > 1) paste0(r$cell, " [", r$matrix, "]") else r$cell
  clamp <- function(x) pmin(pmax(x, limits[1]), limits[2])
  r$est <- clamp(r$estimate)
  r$lo <- clamp(ifelse(is.na(r$lower), limits[1], r$lower))
  r$hi <- clamp(ifelse(is.na(r$upper), limits[2], r$upper))
  r$open_hi <- is.na(r$upper) | r$upper > limits[2]
  r$open_lo <- is.na(r$lower) | r$lower < limits[1]
  r$verdict <- factor(r$verdict, levels = names(VERDICT_COLOURS))
  r$label <- factor(r$label, levels = rev(sort(unique(r$label))))
  thr <- res$threshold
  level <- 100 * (1 - 2 * res$alpha_stat)
  arrow <- ggplot2::arrow(length = ggplot2::unit(0.08, "inches"), type = "closed")
  p <- ggplot2::ggplot(r, ggplot2::aes(y = label, colour = verdict)) +
    ggplot2::annotate("rect", xmin = -thr, xmax = thr, ymin = -Inf, ymax = Inf,
                      fill = "grey85", alpha = 0.6) +
    ggplot2::geom_vline(xintercept = 0, colour = "grey40") +
    ggplot2::geom_vline(xintercept = c(-thr, thr), linetype = "dashed", colour = "grey30") +
    ggplot2::geom_segment(ggplot2::aes(x = lo, xend = hi, yend = label), linewidth = 0.8) +
    ggplot2::geom_point(ggplot2::aes(x = est), size = 2.2)
  if (any(r$open_hi)) {
    p <- p + ggplot2::geom_segment(data = r[r$open_hi, , drop = FALSE],
                                   ggplot2::aes(x = limits[2] - 0.05, xend = limits[2], yend = label),
                                   arrow = arrow)
  }
  if (any(r$open_lo)) {
    p <- p + ggplot2::geom_segment(data = r[r$open_lo, , drop = FALSE],
                                   ggplot2::aes(x = limits[1] + 0.05, xend = limits[1], yend = label),
                                   arrow = arrow)
  }
  p +
    ggplot2::scale_colour_manual(values = VERDICT_COLOURS, drop = FALSE) +
    ggplot2::scale_x_continuous(labels = function(x) sprintf("%+.0f%%", 100 * x),
                                limits = limits) +
    ggplot2::facet_grid(. ~ stat, labeller = ggplot2::labeller(stat = function(x) paste("per-run", x))) +
    ggplot2::labs(
      title = sprintf("rcuwb gate: %s vs %s: %s", res$candidate, res$baseline, res$status_name),
      subtitle = sprintf(paste("relative change (Hodges-Lehmann, log scale) with its %.0f%% interval",
                               "(one-sided %.1f%% bounds); band: +/-%s; PASS needs the upper bound",
                               "inside it"), level, 100 * (1 - res$alpha_stat), fmt_pct(thr, 0)),
      x = "candidate vs baseline", y = NULL, colour = "verdict",
      caption = if (is.null(runs)) res$caveat_text else plot_caption(runs)
    ) +
    ggplot2::theme_bw() +
    ggplot2::theme(plot.caption = ggplot2::element_text(hjust = 0, size = 8),
                   legend.position = "bottom")
}
