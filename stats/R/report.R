# Reports: report.md (tables + plot links) and a self-contained report.html
# (plots embedded as base64 PNG data URIs), plus CSVs of every table.
# The document is assembled once as a list of blocks and rendered twice.

# ---- base64 -----------------------------------------------------------------

# Base64 of a raw vector in base R (RFC 4648, with padding).
b64_encode_base <- function(x) {
  n <- length(x)
  if (n == 0) return("")
  chars <- c(LETTERS, letters, 0:9, "+", "/")
  pad <- (3 - n %% 3) %% 3
  b <- matrix(c(as.integer(x), rep(0L, pad)), nrow = 3)
  v <- b[1, ] * 65536L + b[2, ] * 256L + b[3, ]
  idx <- rbind(v %/% 262144L, (v %/% 4096L) %% 64L, (v %/% 64L) %% 64L, v %% 64L)
  out <- chars[as.vector(idx) + 1L]
  if (pad) out[(length(out) - pad + 1):length(out)] <- "="
  paste(out, collapse = "")
}

# Base64 of a raw vector, on one line: base64enc if installed, else
# jsonlite (which wraps lines; the breaks are removed), else base R.
b64_encode <- function(x) {
  if (!length(x)) return("")
  if (requireNamespace("base64enc", quietly = TRUE)) {
    return(base64enc::base64encode(x))
  }
  if (requireNamespace("jsonlite", quietly = TRUE)) {
    return(gsub("[\r\n]", "", as.character(jsonlite::base64_enc(x))))
  }
  b64_encode_base(x)
}

data_uri <- function(path, mime = "image/png") {
  raw <- readBin(path, "raw", n = file.info(path)$size)
  paste0("data:", mime, ";base64,", b64_encode(raw))
}

# ---- blocks -----------------------------------------------------------------

blk_h <- function(text, level = 2) list(type = "h", level = level, text = text)
blk_p <- function(text) list(type = "p", text = text)
blk_warn <- function(text) list(type = "warn", text = text)
blk_pre <- function(lines) list(type = "pre", lines = lines)
blk_table <- function(df) list(type = "table", df = df)
blk_img <- function(paths, alt) list(type = "img", paths = paths, alt = alt)
blk_list <- function(items) list(type = "ul", items = items)

render_md <- function(blocks) {
  # plots are written to <out_dir>/plots, so links are relative to out_dir
  rel <- function(p) file.path("plots", basename(p))
  parts <- lapply(blocks, function(b) {
    switch(
      b$type,
      h = c(paste(strrep("#", b$level), b$text), ""),
      p = c(b$text, ""),
      warn = c(paste0("> **", b$text, "**"), ""),
      pre = c("```", b$lines, "```", ""),
      table = c(md_table(b$df), ""),
      img = c(sprintf("![%s](%s)", b$alt, rel(b$paths[["svg"]])),
              "", sprintf("([PNG](%s), [SVG](%s))", rel(b$paths[["png"]]), rel(b$paths[["svg"]])), ""),
      ul = c(paste("-", b$items), "")
    )
  })
  unlist(parts)
}

HTML_STYLE <- paste(
  "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}",
  "table{border-collapse:collapse;margin:1em 0;font-size:90%}",
  "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}",
  "th{background:#eee}",
  "pre{background:#f6f6f6;padding:.8em;overflow-x:auto}",
  ".warn{background:#fff3cd;border-left:5px solid #e0a800;padding:.6em 1em;font-weight:bold}",
  "img{max-width:100%;border:1px solid #ddd}",
  sep = "\n"
)

render_html <- function(blocks, title) {
  parts <- vapply(blocks, function(b) {
    switch(
      b$type,
      h = sprintf("<h%d>%s</h%d>", b$level, html_escape(b$text), b$level),
      p = paste0("<p>", html_escape(b$text), "</p>"),
      warn = paste0('<div class="warn">', html_escape(b$text), "</div>"),
      pre = paste0("<pre>", html_escape(paste(b$lines, collapse = "\n")), "</pre>"),
      table = html_table(b$df),
      img = sprintf('<figure><img alt="%s" src="%s"/></figure>', html_escape(b$alt),
                    data_uri(b$paths[["png"]])),
      ul = paste0("<ul>", paste0("<li>", html_escape(b$items), "</li>", collapse = ""), "</ul>")
    )
  }, character(1))
  c("<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">",
    sprintf("<title>%s</title>", html_escape(title)),
    "<style>", HTML_STYLE, "</style>", "</head>", "<body>", parts, "</body>", "</html>")
}

# ---- tables -------------------------------------------------------------------

fmt_ci <- function(med, lo, hi) {
  ifelse(is.na(med), "-",
         ifelse(is.na(lo), paste(fmt_time_us(med), "[n=1]"),
                sprintf("%s [%s, %s]", fmt_time_us(med), fmt_time_us(lo), fmt_time_us(hi))))
}

runs_overview_table <- function(rt) {
  if (!nrow(rt)) return(data.frame())
  key <- split(seq_len(nrow(rt)), list(rt$variant, rt$kind), drop = TRUE, sep = "\r")
  rows <- lapply(key, function(i) {
    g <- rt[i, , drop = FALSE]
    data.frame(variant = g$variant[1], kind = g$kind[1], runs = nrow(g),
               usable = sum(g$usable), outcomes = outcome_counts(g$status),
               hard_failures = sum(g$outcome %in% RCUWB_HARD_FAILURES))
  })
  out <- do.call(rbind, rows)
  out[order(out$variant, out$kind), , drop = FALSE]
}

cells_display_table <- function(cells, metrics) {
  out <- data.frame(cell = cells$cell, variant = cells$variant, runs = cells$runs,
                    ok = cells$ok, failed = cells$failed, outcomes = cells$outcomes,
                    samples = cells$samples)
  # which hosts a cell ran on, once there is more than one
  if (!is.null(cells$hosts) && length(unique(unlist(strsplit(cells$hosts, ",")))) > 1) {
    out$hosts <- cells$hosts
  }
  for (m in metrics) {
    out[[paste(m, "median [95% CI]")]] <- fmt_ci(cells[[paste0(m, "_median")]],
                                                 cells[[paste0(m, "_lo")]],
                                                 cells[[paste0(m, "_hi")]])
  }
  out
}

comparison_display_table <- function(cmp) {
  data.frame(
    cell = cmp$cell, metric = cmp$metric, n = paste0(cmp$n_old, "+", cmp$n_new),
    baseline = fmt_time_us(cmp$old_median), candidate = fmt_time_us(cmp$new_median),
    change = fmt_pct(cmp$rel_change),
    `change CI` = ifelse(is.na(cmp$rel_lo), "-",
                         sprintf("[%s, %s] (%s%%)", fmt_pct(cmp$rel_lo), fmt_pct(cmp$rel_hi),
                                 format(round(100 * cmp$ci_level, 1)))),
    p = fmt_p(cmp$p_value), test = cmp$p_method, p_holm = fmt_p(cmp$p_holm),
    significant = ifelse(is.na(cmp$p_holm), "-", ifelse(cmp$significant, "yes", "no")),
    check.names = FALSE
  )
}

# Wide mid-boot table: variant x rcu_normal x stage rows, one column per
# primitive holding the median latency or "DEADLOCK" (k/n when not all runs).
midboot_table <- function(mb) {
  if (!nrow(mb)) return(data.frame())
  mb$value <- midboot_label(mb)
  mb$row <- paste(mb$variant, mb$rcu_normal, mb$stage, sep = "\r")
  rows <- unique(mb[, c("row", "variant", "rcu_normal", "stage")])
  out <- data.frame(variant = rows$variant, rcu_normal = rows$rcu_normal, stage = rows$stage)
  out$point <- vapply(rows$row, function(r) paste(unique(mb$point[mb$row == r]), collapse = ","),
                      character(1))
  for (p in sort(unique(mb$prim))) {
    v <- mb$value[mb$prim == p][match(rows$row, mb$row[mb$prim == p])]
    out[[p]] <- ifelse(is.na(v), "", v)
  }
  out
}

# The variant a matrix lists first: the variant of the first run of the
# first repetition (the runner runs a repetition's variants in the matrix's
# order, then the reverse order in the next one).
first_variant <- function(rt) {
  s <- rt[rt$kind == "rcuscale", , drop = FALSE]
  if (!nrow(s)) return(NULL)
  s <- s[order(s$id), , drop = FALSE]
  r1 <- s[!is.na(s$rep) & s$rep == min(s$rep, na.rm = TRUE), , drop = FALSE]
  if (nrow(r1)) r1$variant[1] else s$variant[1]
}

# The gate's rows as a display table: one line per cell and statistic.
gate_display_table <- function(res) {
  r <- res$rows
  data.frame(cell = r$cell, stat = ifelse(r$gated, r$stat, paste(r$stat, "(reported)")),
             runs = paste0(r$n_old, "+", r$n_new),
             change = fmt_pct(r$estimate),
             bounds = sprintf("[%s, %s]", fmt_pct(r$lower), fmt_pct(r$upper)),
             level = sprintf("%.1f%%", 100 * r$level), p = fmt_p(r$p), p_holm = fmt_p(r$p_holm),
             verdict = r$verdict,
             `runs needed` = ifelse(r$verdict == "INCONCLUSIVE", fmt_needed(r$runs_needed), ""),
             check.names = FALSE)
}

# Runs per host as a display table (summarise_hosts()).
hosts_display_table <- function(hosts) {
  data.frame(host = hosts$host, accel = hosts$accel, `host PUs` = hosts$host_pus,
             QEMU = hosts$qemu_version, libvirt = hosts$libvirt_version, runs = hosts$runs,
             ok = hosts$ok, failed = hosts$failed, `failed by outcome` = hosts$failures,
             `runs per variant` = hosts$variants, check.names = FALSE)
}

# A gate result's hosts per row: the values per side on each host, and the
# hosts left out because only one side ran there.
gate_hosts_display_table <- function(res) {
  h <- res$hosts
  out <- data.frame(cell = h$cell, host = h$host, accel = h$accel, `host PUs` = h$host_pus,
                    runs = paste0(h$n_old, "+", h$n_new), compared = "yes", check.names = FALSE)
  lo <- res$left_out
  if (!is.null(lo) && nrow(lo)) {
    out <- rbind(out, data.frame(
      cell = lo$cell, host = lo$host, accel = "", `host PUs` = "",
      runs = ifelse(lo$variant == res$baseline, paste0(lo$runs, "+0"), paste0("0+", lo$runs)),
      compared = "no: one side only", check.names = FALSE))
  }
  out
}

# Every candidate's gate rows in one CSV-ready data.frame.
gate_rows_table <- function(comparisons) {
  rows <- lapply(names(comparisons), function(cand) {
    r <- comparisons[[cand]]$rows
    if (is.null(r) || !nrow(r)) return(NULL)
    cbind(data.frame(baseline = comparisons[[cand]]$baseline, candidate = cand), r)
  })
  rows <- Filter(Negate(is.null), rows)
  if (!length(rows)) return(data.frame(baseline = character(), candidate = character()))
  do.call(rbind, rows)
}

# Warnings when compared variants were not run under the same conditions.
comparability_warnings <- function(rt, a, b) {
  ra <- rt[rt$variant == a, , drop = FALSE]
  rb <- rt[rt$variant == b, , drop = FALSE]
  w <- character()
  same <- function(x, y) identical(sort(unique(stats::na.omit(x))), sort(unique(stats::na.omit(y))))
  if (!same(ra$accel, rb$accel)) w <- c(w, "accelerators differ")
  # hosts where only one of the two ran: the gate leaves them out (or
  # refuses when the two share no host)
  ha <- sort(unique(run_hosts(ra)))
  hb <- sort(unique(run_hosts(rb)))
  if (nrow(ra) && nrow(rb) && !identical(ha, hb)) {
    only <- c(if (length(setdiff(ha, hb))) sprintf("only %s: %s", a, paste(setdiff(ha, hb), collapse = ",")),
              if (length(setdiff(hb, ha))) sprintf("only %s: %s", b, paste(setdiff(hb, ha), collapse = ",")))
    w <- c(w, sprintf("hosts differ (%s)", paste(only, collapse = "; ")))
  }
  if (!same(ra$host_pus, rb$host_pus)) w <- c(w, "host PU counts differ")
  if (!same(ra$kernel_version, rb$kernel_version)) w <- c(w, "kernel versions differ")
  if (!same(ra$qemu_version, rb$qemu_version)) w <- c(w, "QEMU versions differ")
  if (!length(w)) return(character())
  sprintf("%s vs %s: %s - differences may not be caused by the variant.", b, a, paste(w, collapse = ", "))
}

# ---- the report -------------------------------------------------------------

# Write report.md, report.html, plots/ (PNG + SVG) and CSVs to out_dir.
#   db: path or connection; matrix, variants, since: run filters;
#   baseline: variant compared against ("stock" if present, else the first
#   variant alphabetically); candidates: variants compared with it (default
#   all others); metrics: per-run percentiles summarised; compare_metrics:
#   those compared (one Holm family per candidate); seed, R: bootstrap.
# Returns (invisibly) a list of the paths written and the computed tables.
write_report <- function(db, out_dir, matrix = NULL, variants = NULL, since = NULL,
                         baseline = NULL, candidates = NULL,
                         metrics = RCUWB_METRICS, compare_metrics = "p50",
                         alpha = 0.05, threshold = 0.05, conf = 0.95, R = 2000, seed = 1,
                         title = "rcuwb: RCU grace-period latency report",
                         plots = TRUE) {
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
  data <- with_db(db, function(con) {
    list(
      runs = read_runs(con, matrix = matrix, variants = variants, since = since),
      samples = read_samples(con, matrix = matrix, variants = variants, since = since),
      probes = read_probes(con, matrix = matrix, variants = variants, since = since)
    )
  })
  rt <- build_run_table(data$runs, run_stats(data$samples))
  cells <- summarise_cells(rt, metrics = metrics, R = R, conf = conf, seed = seed)
  hosts <- summarise_hosts(rt)
  scale_variants <- sort(unique(rt$variant[rt$kind == "rcuscale"]))
  if (is.null(baseline) && length(scale_variants)) baseline <- first_variant(rt)
  if (is.null(candidates)) candidates <- setdiff(scale_variants, baseline)
  # the same verdicts as `rcuwb gate` on the same runs
  # (traced runs describe where the time goes below; they are never gated)
  comparisons <- lapply(candidates, function(cand) {
    gate_run_table(rt[!is_traced(rt), , drop = FALSE], baseline, cand, threshold = threshold,
                   alpha = alpha, matrix = matrix)
  })
  names(comparisons) <- candidates
  gp_cmp <- compare_gp_modes(rt, metrics = compare_metrics, conf = conf, R = R,
                             seed = seed, alpha = alpha)
  mb <- midboot_cells(data$probes)
  anat <- report_anatomy(db, matrix, variants, baseline, candidates, conf, seed)

  # plots
  plot_dir <- file.path(out_dir, "plots")
  plot_paths <- list()
  if (plots) {
    scale_runs <- rt[rt$kind == "rcuscale", , drop = FALSE]
    p <- plot_latency_vs_vcpus(cells, scale_runs, metric = "p50")
    if (!is.null(p)) plot_paths$latency <- save_plot(p, plot_dir, "latency_vs_vcpus", 10, 6)
    n_cells <- length(unique(cells$cell[cells$ok > 0]))
    p <- plot_ecdf(data$samples, rt)
    if (!is.null(p)) {
      cols <- ceiling(sqrt(max(1, n_cells)))
      plot_paths$ecdf <- save_plot(p, plot_dir, "ecdf_samples", max(8, 3.2 * cols),
                                   max(5, 2.6 * ceiling(n_cells / cols) + 1.5))
    }
    for (cand in candidates) {
      p <- plot_forest(comparisons[[cand]], rt[rt$variant %in% c(baseline, cand) &
                                                rt$kind == "rcuscale", , drop = FALSE])
      if (!is.null(p)) {
        n_rows <- length(unique(comparisons[[cand]]$rows$cell))
        plot_paths[[paste0("forest_", cand)]] <- save_plot(p, plot_dir, paste0("forest_", cand),
                                                           10, max(3, 0.45 * n_rows + 2))
      }
    }
    probe_runs <- rt[rt$id %in% data$probes$run_id, , drop = FALSE]
    p <- plot_midboot(data$probes, probe_runs)
    if (!is.null(p)) {
      nv <- length(unique(mb$variant))
      plot_paths$midboot <- save_plot(p, plot_dir, "midboot_grid", 11, max(4, 2.5 * nv + 1.5))
    }
  }

  # CSVs
  csv <- function(df, name) {
    path <- file.path(out_dir, name)
    utils::write.csv(df, path, row.names = FALSE, na = "")
    path
  }
  per_run <- rt[, intersect(c("id", "matrix", "cell", "rep", "kind", "variant", "gp_mode",
                              "vcpus", "numa_nodes", "accel", "oversub", "host", "host_pus",
                              "outcome", "status", "usable", "n", "avg_us", "min_us", "p50_us",
                              "p90_us", "p99_us", "max_us"), names(rt)), drop = FALSE]
  csv_paths <- c(
    runs = csv(per_run, "runs.csv"),
    cells = csv(cells, "cells.csv"),
    hosts = csv(hosts, "hosts.csv"),
    comparisons = csv(gate_rows_table(comparisons), "comparisons.csv"),
    gp_modes = csv(gp_cmp, "gp_modes.csv"),
    midboot = csv(mb, "midboot.csv")
  )

  # document
  blocks <- list(blk_h(title, 1))
  filt <- c(
    if (!is.null(matrix)) paste("matrix:", paste(matrix, collapse = ", ")),
    if (!is.null(variants)) paste("variants:", paste(variants, collapse = ", ")),
    if (!is.null(since)) paste("runs started since:", since)
  )
  blocks <- c(blocks, list(blk_h("Caveats", 2)))
  cav <- caveat_info(rt)
  if (cav$oversubscribed) {
    blocks <- c(blocks, list(blk_warn(sprintf(
      "Oversubscribed: up to %.2f vCPUs per host PU. vCPU preemption by the host inflates grace-period latency; treat absolute numbers with suspicion.",
      cav$max_oversub))))
  }
  if ("tcg" %in% cav$accel) {
    blocks <- c(blocks, list(blk_warn(
      "Some runs used TCG (emulation): absolute latencies are not representative of hardware.")))
  }
  if (cav$host_busy > 0) {
    blocks <- c(blocks, list(blk_warn(sprintf(paste(
      "%d runs ran while other processes used more than %.0f%% of the host's PUs (host-busy):",
      "they are left out of every statistic below; `rcuwb run --resume` repeats them."),
      cav$host_busy, 100 * cav$host_busy_share))))
  }
  cmp_warn <- unlist(lapply(candidates, function(cand) comparability_warnings(rt, baseline, cand)))
  for (w in cmp_warn) blocks <- c(blocks, list(blk_warn(w)))
  blocks <- c(blocks, list(
    blk_list(c(
      caveat_text(rt),
      sprintf("%d runs (%d usable rcuscale runs), %d samples; generated %s",
              nrow(rt), sum(rt$usable & rt$kind == "rcuscale"), nrow(data$samples),
              format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z")),
      filt
    )),
    blk_p(paste(
      "Per run, p50/p90/p99 are the kernel's nearest-rank percentiles of the writer-duration",
      "samples (kvm-recheck-rcuscale.sh). A cell is summarised by the median over its usable",
      "runs (outcome ok, with samples) with a 95% percentile-bootstrap CI resampling runs",
      sprintf("(%d resamples, seed %s).", as.integer(R), format(seed))))
  ))

  blocks <- c(blocks, list(blk_h("Runs", 2), blk_table(runs_overview_table(rt))))
  if (nrow(hosts)) {
    blocks <- c(blocks, list(
      blk_h("Hosts", 2),
      blk_p(paste("Runs per host (the label from the hosts file). The gate compares the variants",
                  "within a host and combines hosts of the same shape (accelerator, host PUs,",
                  "QEMU, libvirt); hosts of different shape are compared separately",
                  "(cells named cell@host).")),
      blk_table(hosts_display_table(hosts))))
  }
  blocks <- c(blocks, list(blk_h("Cells", 2),
                           blk_table(cells_display_table(cells, metrics))))

  if (length(comparisons)) {
    blocks <- c(blocks, list(
      blk_h(sprintf("Candidates vs baseline '%s'", baseline), 2),
      blk_p(paste("The verdicts of `rcuwb gate` on these runs (the baseline is the matrix's",
                  "first variant unless --baseline names another).",
                  "PASS: a slowdown beyond the threshold is ruled out;",
                  "SLOWDOWN: shown; INCONCLUSIVE: neither, with the runs per side that would decide."))))
    for (cand in candidates) {
      res <- comparisons[[cand]]
      blocks <- c(blocks, list(blk_h(sprintf("%s vs %s: %s", cand, baseline, res$status_name), 3),
                               blk_pre(res$text)))
      if (!is.null(res$rows) && nrow(res$rows)) {
        blocks <- c(blocks, list(blk_table(gate_display_table(res))))
        if (isTRUE(res$several_hosts)) {
          blocks <- c(blocks, list(blk_table(gate_hosts_display_table(res))))
        }
      }
      key <- paste0("forest_", cand)
      if (!is.null(plot_paths[[key]])) {
        blocks <- c(blocks, list(blk_img(plot_paths[[key]], sprintf("gate: %s vs %s", cand, baseline))))
      }
    }
  }
  if (nrow(gp_cmp)) {
    blocks <- c(blocks, list(
      blk_h("Expedited vs normal grace periods (within each variant)", 2),
      blk_p(paste(benchstat_header(gp_cmp, alpha),
                  "Baseline = normal, candidate = expedited; cell shows '*' for the GP mode.")),
      if (!is.null(power_note(gp_cmp, alpha))) blk_warn(power_note(gp_cmp, alpha)),
      blk_pre(unlist(lapply(compare_metrics, function(m) c(benchstat_lines(gp_cmp, m), "")))),
      blk_table(comparison_display_table(gp_cmp))
    ))
  }
  if (nrow(mb)) {
    blocks <- c(blocks, list(
      blk_h("Mid-boot probes", 2),
      blk_p(paste("Median latency of each primitive at each boot stage over probe runs;",
                  "DEADLOCK when the primitive hung (k/n: in k of n runs).",
                  "rcu_normal from rcupdate.rcu_normal in the boot parameters.")),
      blk_p(caveat_text(rt[rt$id %in% data$probes$run_id, , drop = FALSE])),
      blk_table(midboot_table(mb))
    ))
  }
  if (length(anat$describe)) {
    blocks <- c(blocks, list(
      blk_h("Where the time goes (traced runs)", 2),
      blk_p(paste("Each rcuscale writer call of the traced runs (Kconfig scenario trace) cut into",
                  "the phases of its grace period from RCU's trace events (docs/anatomy.md): the",
                  "median and p90 of the calls, the mean per call over the runs and its share.",
                  "Traced runs are cells of their own and are not gated."))))
    for (v in names(anat$describe)) {
      blocks <- c(blocks, list(blk_h(v, 3), blk_table(anat$describe[[v]])))
    }
    for (cand in names(anat$compare)) {
      blocks <- c(blocks, list(blk_h(sprintf("%s against %s, phase by phase", cand, baseline), 3),
                               blk_pre(anatomy_text(anat$compare[[cand]]))))
      if (plots) {
        p <- plot_anatomy(anat$compare[[cand]])
        blocks <- c(blocks, list(blk_img(save_plot(p, plot_dir, paste0("anatomy_", cand), 10, 5.5),
                                         sprintf("anatomy: %s vs %s", cand, baseline))))
      }
    }
  }
  if (length(plot_paths)) {
    blocks <- c(blocks, list(blk_h("Plots", 2)))
    alts <- c(latency = "GP latency vs vCPUs", ecdf = "ECDF of GP durations per cell",
              midboot = "Mid-boot outcome grid")
    for (k in setdiff(names(plot_paths), grep("^forest_", names(plot_paths), value = TRUE))) {
      blocks <- c(blocks, list(blk_h(alts[[k]], 3), blk_img(plot_paths[[k]], alts[[k]])))
    }
  }
  blocks <- c(blocks, list(blk_h("Files", 2), blk_list(basename(csv_paths))))

  blocks <- Filter(Negate(is.null), blocks)
  md_path <- file.path(out_dir, "report.md")
  html_path <- file.path(out_dir, "report.html")
  write_utf8(render_md(blocks), md_path)
  write_utf8(render_html(blocks, title), html_path)
  invisible(list(
    md = md_path, html = html_path, plots = plot_paths, csv = csv_paths,
    run_table = rt, cells = cells, hosts = hosts, comparisons = comparisons, gp_modes = gp_cmp,
    midboot = mb, baseline = baseline, candidates = candidates
  ))
}

# The report's anatomy: per variant with traced runs, its phases described
# (a table per variant), and per candidate with traced runs, the comparison
# with the baseline's (R/anatomy.R).  Empty lists where nothing was traced.
report_anatomy <- function(db, matrix, variants, baseline, candidates, conf, seed) {
  calls <- tryCatch(read_anatomy(db, matrix = matrix, variants = variants), error = function(e) NULL)
  out <- list(describe = list(), compare = list())
  if (is.null(calls) || !nrow(calls)) return(out)
  for (v in unique(calls$variant)) {
    d <- anatomy_describe(calls, v)
    if (is.null(d)) next
    out$describe[[v]] <- data.frame(cell = d$cell, phase = d$phase, runs = d$runs, calls = d$calls,
                                    median_us = fmt_us1(d$median_us), p90_us = fmt_us1(d$p90_us),
                                    mean_us = fmt_us1(d$mean_us), share = fmt_share(d$share))
  }
  if (!is.null(baseline) && baseline %in% calls$variant) {
    for (cand in intersect(candidates, unique(calls$variant))) {
      cmp <- anatomy_compare(calls, baseline, cand, level = conf, seed = seed)
      if (!is.null(cmp$phases)) out$compare[[cand]] <- cmp
    }
  }
  out
}
