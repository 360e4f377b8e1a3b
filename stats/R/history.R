# A schedule's history (issue 12, items 4-5): the runs of its nightly
# rounds in the branch's first-parent commit order, the change points found
# in them (changepoint.R) with their triage state, and the dashboard (a
# self-contained HTML page and its Markdown twin).

# The branch's first-parent commits ending at `head`, oldest first:
# data.frame(commit, position, date, subject).  `repo`: a git directory.
history_commits <- function(repo, head) {
  err <- tempfile()
  on.exit(unlink(err))
  # git's warnings go to their own file, never among the commits
  out <- suppressWarnings(system2("git", c("-C", shQuote(repo), "log", "--first-parent",
                                           "--format=%H%x09%cI%x09%s", shQuote(head)),
                                  stdout = TRUE, stderr = err))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) {
    stop(sprintf("git log %s in %s failed: %s", head, repo,
                 paste(readLines(err, warn = FALSE), collapse = " ")), call. = FALSE)
  }
  parts <- strsplit(out, "\t", fixed = TRUE)
  commits <- data.frame(commit = vapply(parts, `[`, "", 1),
                        date = vapply(parts, `[`, "", 2),
                        subject = vapply(parts, function(p) paste(p[-(1:2)], collapse = "\t"), ""))
  commits <- commits[rev(seq_len(nrow(commits))), , drop = FALSE]
  commits$position <- seq_len(nrow(commits))
  rownames(commits) <- NULL
  commits
}

# The run table of a schedule's runs (every round, baseline repeats
# included: a run belongs to the commit it measured, runs.commit_id).
history_run_table <- function(db, schedule) {
  with_db(db, function(con) {
    runs <- select_runs(con, "WHERE r.schedule = ?", list(schedule))
    # run id -1: no samples, with the columns
    build_run_table(runs, run_stats(read_samples(con, run_ids = c(-1, runs$id))))
  })
}

# One analysis of a schedule's history: series, change points (stored and
# merged with their state), per-commit summaries.  Returns a list: commits,
# series, changepoints (changepoints_upsert() rows: state, is_new), open
# (every stored change point of the schedule not marked invalid), noise.
#
# `min_change`: a change point whose size (relative change of the per-run
# values between the adjacent segments) is smaller than this is not
# reported (default 0.05, the gate's default threshold; a schedule's
# history.min_change, else its gate threshold).  Why: the 1-vCPU normal-GP
# cells have a per-run spread of about 0.1%, so level shifts of 0.2-0.8%
# between nightly rounds (the host, not the kernel) are statistically
# clear; measured here on an A/A branch with two guests side by side (the
# nightly test), E-divisive found two such, -0.22% and +0.84%.  A change
# the gate would pass is not one to notify.
history_update <- function(db, schedule, commits, stats = GATE_DEFAULT_STATS, min_commits = 2,
                           alpha = 0.05, R = 199, seed = 1, store = TRUE, min_change = 0.05) {
  rt <- history_run_table(db, schedule)
  series <- history_series(rt, commits, stats = stats, commit_col = "commit_id")
  cps <- history_changepoints(series, commits, min_commits = min_commits, alpha = alpha, R = R,
                              seed = seed)
  cps <- cps[!is.na(cps$size) & abs(cps$size) >= min_change, , drop = FALSE]
  measured <- unique(series[, c("commit", "position")])
  stored <- with_db(db, function(con) {
    if (store) cps <<- changepoints_upsert(con, schedule, cps, commits = measured)
    changepoints_list(con, schedule = schedule)
  }, write = store)
  if (!store) {
    cps$id <- rep(NA_real_, nrow(cps))
    cps$state <- rep("new", nrow(cps))
    cps$is_new <- rep(FALSE, nrow(cps))
  }
  subj <- commits$subject[match(stored$first_bad, commits$commit)]
  stored$subject <- ifelse(is.na(subj), "", subj)
  list(schedule = schedule, commits = commits, runs = rt, series = series, changepoints = cps,
       stored = stored, measured = measured)
}

# Per commit of one series: the median of its per-run values with a
# bootstrap CI (runs resampled), for the trend charts.
history_commit_summary <- function(series, R = 2000, seed = 1) {
  if (!nrow(series)) {
    return(data.frame(cell = character(), stat = character(), commit = character(),
                      position = numeric(), runs = integer(), median = numeric(),
                      lo = numeric(), hi = numeric()))
  }
  keys <- unique(series[, c("cell", "stat", "commit", "position")])
  rows <- lapply(seq_len(nrow(keys)), function(i) {
    v <- series$value[series$cell == keys$cell[i] & series$stat == keys$stat[i] &
                        series$commit == keys$commit[i]]
    ci <- boot_median_ci(v, R = R, seed = seed)
    data.frame(keys[i, ], runs = length(v), median = stats::median(v), lo = ci[["lo"]],
               hi = ci[["hi"]])
  })
  out <- do.call(rbind, rows)
  rownames(out) <- NULL
  out
}

# The JSON a nightly round attaches: the change points of this analysis
# with their state and whether they are new, and every open one.
history_json <- function(h) {
  cp <- h$changepoints
  keep <- c("id", "cell", "stat", "last_good", "first_bad", "first_suspect", "size", "lo",
            "hi", "p", "state", "is_new")
  cp <- cp[, intersect(keep, names(cp)), drop = FALSE]
  open <- h$stored[h$stored$state != "invalid", , drop = FALSE]
  jsonlite::toJSON(list(schedule = h$schedule, commits_measured = nrow(h$measured),
                        runs = sum(h$runs$usable), changepoints = cp,
                        new = sum(cp$is_new & cp$state == "new"),
                        open = open),
                   auto_unbox = TRUE, digits = NA, dataframe = "rows", na = "null", pretty = TRUE)
}

# Text lines for people: the change points of the analysis.
history_text <- function(h) {
  cp <- h$changepoints
  if (!nrow(cp)) {
    return(sprintf("history %s: %d commits measured, no change point", h$schedule,
                   nrow(h$measured)))
  }
  c(sprintf("history %s: %d commits measured, %d change points (%d new)", h$schedule,
            nrow(h$measured), nrow(cp), sum(cp$is_new)),
    sprintf("  #%s %-5s %-12s %s: %s [%s, %s] p=%.3f, in (%s, %s], first suspect %s%s",
            cp$id, cp$state, cp$stat, cp$cell, fmt_pct(cp$size), fmt_pct(cp$lo), fmt_pct(cp$hi),
            cp$p, substr(cp$last_good, 1, 12), substr(cp$first_bad, 1, 12),
            substr(cp$first_suspect, 1, 12), ifelse(cp$is_new, " NEW", "")))
}

# ---------------------------------------------------------------------------
# Dashboard

# One trend chart: per-run values (points), per-commit median and its CI
# band, change points (dashed lines between last_good and first_bad).
plot_history <- function(series, summary, cps, commits) {
  lab <- substr(commits$commit, 1, 7)
  p <- ggplot2::ggplot() +
    ggplot2::geom_ribbon(data = summary, ggplot2::aes(x = position, ymin = lo, ymax = hi),
                         fill = "#56B4E9", alpha = 0.35) +
    ggplot2::geom_line(data = summary, ggplot2::aes(x = position, y = median), colour = "#0072B2") +
    ggplot2::geom_point(data = series, ggplot2::aes(x = position, y = value), colour = "#000000",
                        alpha = 0.55, size = 1.4)
  if (nrow(cps)) {
    p <- p + ggplot2::geom_vline(xintercept = (cps$last_good_pos + cps$first_bad_pos) / 2,
                                 colour = "#D55E00", linetype = "dashed", linewidth = 0.8)
  }
  p + ggplot2::scale_x_continuous(breaks = commits$position, labels = lab) +
    ggplot2::labs(x = "commit (first-parent order)", y = "per-run value (us)") +
    ggplot2::theme_bw(base_size = 10) +
    ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 45, hjust = 1, family = "mono"))
}

DASHBOARD_SCRIPT <- paste(
  "function rcuwbFilter() {",
  "  var t = document.getElementById('f-topo').value, m = document.getElementById('f-mode').value;",
  "  document.querySelectorAll('section.cell').forEach(function (s) {",
  "    var ok = (!t || s.dataset.topology === t) && (!m || s.dataset.mode === m);",
  "    s.style.display = ok ? '' : 'none';",
  "  });",
  "}",
  "window.addEventListener('load', function () {",
  "  var imgs = document.querySelectorAll('img.chart'), ok = 0;",
  "  imgs.forEach(function (i) {",
  "    if (i.complete && i.naturalWidth > 0) ok++;",
  "    else console.error('rcuwb dashboard: chart did not load: ' + i.alt);",
  "  });",
  "  document.body.setAttribute('data-charts-loaded', String(ok));",
  "  document.body.setAttribute('data-charts', String(imgs.length));",
  "});",
  sep = "\n")

# Write DIR/index.html (self-contained: charts as data URIs, no network)
# and DIR/index.md (charts in DIR/charts/).  Returns the two paths.
history_dashboard <- function(h, out_dir, title = NULL) {
  dir.create(file.path(out_dir, "charts"), recursive = TRUE, showWarnings = FALSE)
  title <- title %||% sprintf("rcuwb history: %s", h$schedule)
  commits <- h$commits[h$commits$commit %in% h$measured$commit |
                         h$commits$position >= min(c(Inf, h$measured$position)), , drop = FALSE]
  summ <- history_commit_summary(h$series)
  keys <- unique(h$series[, c("cell", "stat")])
  keys <- keys[order(keys$cell, keys$stat), , drop = FALSE]
  open <- h$stored[h$stored$state != "invalid", , drop = FALSE]
  cp_tab <- data.frame(id = open$id, state = open$state, cell = open$cell, stat = open$stat,
                       change = sprintf("%s [%s, %s]", fmt_pct(open$size), fmt_pct(open$lo),
                                        fmt_pct(open$hi)),
                       range = sprintf("%s..%s", substr(open$last_good, 1, 12),
                                       substr(open$first_bad, 1, 12)),
                       subject = open$subject)
  topo <- sub("/.*", "", keys$cell)
  mode <- sub("^[^/]*/([^/]*).*", "\\1", keys$cell)
  md <- c(sprintf("# %s", title), "",
          sprintf("%d commits measured, %d usable runs; open change points: %d.",
                  nrow(h$measured), sum(h$runs$usable), nrow(open)), "",
          "## Open change points", "",
          if (nrow(cp_tab)) md_table(cp_tab) else "None.", "")
  sections <- character()
  for (i in seq_len(nrow(keys))) {
    s <- h$series[h$series$cell == keys$cell[i] & h$series$stat == keys$stat[i], , drop = FALSE]
    sm <- summ[summ$cell == keys$cell[i] & summ$stat == keys$stat[i], , drop = FALSE]
    cp <- h$changepoints[h$changepoints$cell == keys$cell[i] &
                           h$changepoints$stat == keys$stat[i], , drop = FALSE]
    name <- sprintf("chart-%02d", i)
    png <- file.path(out_dir, "charts", paste0(name, ".png"))
    ggplot2::ggsave(png, plot_history(s, sm, cp, commits), width = 8, height = 3.2, dpi = 96)
    heading <- sprintf("%s: %s", keys$cell[i], keys$stat[i])
    md <- c(md, sprintf("## %s", heading), "", sprintf("![%s](charts/%s.png)", heading, name), "")
    sections <- c(sections, sprintf(
      paste0('<section class="cell" data-topology="%s" data-mode="%s"><h2>%s</h2>',
             '<img class="chart" alt="%s" src="%s"/></section>'),
      html_escape(topo[i]), html_escape(mode[i]), html_escape(heading), html_escape(heading),
      data_uri(png)))
  }
  opt <- function(v) paste0('<option value="">all</option>',
                            paste0(sprintf('<option value="%s">%s</option>', html_escape(v),
                                           html_escape(v)), collapse = ""))
  html <- c("<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            sprintf("<title>%s</title>", html_escape(title)), "<style>", HTML_STYLE, "</style>",
            "</head>", "<body>", sprintf("<h1>%s</h1>", html_escape(title)),
            sprintf("<p>%d commits measured, %d usable runs.</p>", nrow(h$measured),
                    sum(h$runs$usable)),
            "<h2>Open change points</h2>",
            if (nrow(cp_tab)) html_table(cp_tab) else "<p>None.</p>",
            sprintf(paste0('<p>topology <select id="f-topo" onchange="rcuwbFilter()">%s</select> ',
                           'mode <select id="f-mode" onchange="rcuwbFilter()">%s</select></p>'),
                    opt(sort(unique(topo))), opt(sort(unique(mode)))),
            sections, "<script>", DASHBOARD_SCRIPT, "</script>", "</body>", "</html>")
  paths <- c(html = file.path(out_dir, "index.html"), md = file.path(out_dir, "index.md"))
  write_utf8(html, paths[["html"]])
  write_utf8(md, paths[["md"]])
  paths
}
