# What a setting costs to decide with: the spread of its per-run statistics
# (runs per side the gate needs) against the wall-clock time its runs take
# (runs per hour), so that settings are compared at a fixed budget of
# machine time, not of runs.  Used for "one guest at a time or side by
# side" (make sidebyside) and any two matrices measured alike.

# Wall-clock seconds during which at least one of the runs' guests ran:
# the union of the intervals [start, start + wall_s].  start in seconds
# (the runner stores started_at to the second, so each interval may sit up
# to 1 s early; the union is exact to about that).
occupied_s <- function(start, wall_s) {
  ok <- !is.na(start) & !is.na(wall_s)
  s <- start[ok]
  e <- s + wall_s[ok]
  if (!length(s)) return(0)
  o <- order(s)
  s <- s[o]
  e <- e[o]
  total <- 0
  cur_s <- s[1]
  cur_e <- e[1]
  for (i in seq_along(s)[-1]) {
    if (s[i] > cur_e) {
      total <- total + (cur_e - cur_s)
      cur_s <- s[i]
      cur_e <- e[i]
    } else {
      cur_e <- max(cur_e, e[i])
    }
  }
  total + (cur_e - cur_s)
}

# started_at ("2026-12-05T02:58:56Z") as seconds since the epoch.
iso_seconds <- function(x) {
  as.numeric(as.POSIXct(x, format = "%Y-%m-%dT%H:%M:%OSZ", tz = "UTC"))
}

# Per setting (rt$variant) and cell: runs, the SD of log(per-run mean) and
# of log(per-run p90), the rank spread of log(per-run mean)
# (rank_spread()), runs per side for the gate to call a true 10% and 25%
# slowdown at 80% power at that spread (runs_for_power()), the setting's
# runs per hour of wall clock (all its runs over the time its guests occupied the
# host, whatever ran beside them), and the hours one decision on a 10%
# slowdown costs (both sides' runs at that rate).  Usable rcuscale runs only.
setting_cost <- function(rt, settings, threshold = 0.05, a = 0.025) {
  ok <- rt[rt$kind == "rcuscale" & rt$usable & rt$variant %in% settings, , drop = FALSE]
  rows <- lapply(settings, function(st) {
    g <- ok[ok$variant == st, , drop = FALSE]
    if (!nrow(g)) return(NULL)
    rate <- 3600 * nrow(g) / occupied_s(iso_seconds(g$started_at), g$wall_s)
    per_cell <- lapply(split(g, g$cell), function(c) {
      sd_mean <- if (nrow(c) > 1) stats::sd(log(c$avg_us)) else NA_real_
      spread <- rank_spread(list(log(c$avg_us)))
      n10 <- runs_for_power(spread, 0.10, 0.80, threshold, a)
      data.frame(setting = st, cell = c$cell[1], runs = nrow(c), sd_log_mean = sd_mean,
                 sd_log_p90 = if (nrow(c) > 1) stats::sd(log(c$p90_us)) else NA_real_,
                 spread_mean = spread,
                 n10_80 = n10, n25_80 = runs_for_power(spread, 0.25, 0.80, threshold, a),
                 runs_per_hour = rate, hours_10 = 2 * n10 / rate)
    })
    do.call(rbind, per_cell)
  })
  out <- do.call(rbind, rows)
  if (is.null(out)) {
    return(data.frame(setting = character(), cell = character(), runs = integer(),
                      sd_log_mean = numeric(), sd_log_p90 = numeric(),
                      spread_mean = numeric(), n10_80 = numeric(),
                      n25_80 = numeric(), runs_per_hour = numeric(), hours_10 = numeric()))
  }
  rownames(out) <- NULL
  out[order(out$cell, match(out$setting, settings)), , drop = FALSE]
}

# The table above in markdown.
setting_cost_markdown <- function(cost) {
  tab <- data.frame(
    cell = cost$cell, setting = cost$setting, runs = cost$runs,
    `SD log(mean)` = sprintf("%.3f", cost$sd_log_mean),
    `SD log(p90)` = sprintf("%.3f", cost$sd_log_p90),
    `rank spread log(mean)` = sprintf("%.3f", cost$spread_mean),
    `runs/side, 10% at 80%` = fmt_needed(cost$n10_80),
    `runs/side, 25% at 80%` = fmt_needed(cost$n25_80),
    `runs/h` = sprintf("%.0f", cost$runs_per_hour),
    `hours for one 10% decision` = ifelse(is.finite(cost$hours_10), sprintf("%.2f", cost$hours_10), "-"),
    check.names = FALSE)
  md_table(tab)
}
