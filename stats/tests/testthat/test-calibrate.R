# The gate calibration on synthetic planted runs: doses are read from the
# boot parameters, a planted 10% is measured as 10% and caught, an A/A pair
# of control halves is (almost) never flagged, and the rates carry CIs.

cal_db <- function(seed = 11, reps = 24, sd = 0.005) {
  db <- new_db()
  set.seed(seed)
  ctl <- c("", "rcutree.planted_gp_tick_permille=0 rcutree.planted_exp_delay_ns=0")
  dose <- "rcutree.planted_gp_tick_permille=300 rcutree.planted_exp_delay_ns=1500"
  for (r in seq_len(reps)) {
    for (bp in c(ctl, dose)) {
      base <- 12000 * exp(rnorm(1, 0, sd))
      added <- if (bp == dose) 0.3 * 4000 else 0
      cell <- if (nzchar(bp)) paste0("v1-n1/normal/w1-r0/", bp) else "v1-n1/normal/w1-r0"
      add_run(db, "planted", cell, rep = r, boot_params = bp, matrix = "gatecal-v1",
              cmdline = "rcuscale.holdoff=0",
              samples_ns = round(1000 * (base + added) * rep(1, 20)))
    }
  }
  db
}

test_that("planted doses are read from the boot parameters, in the mode's own unit", {
  d <- planted_dose(c("", "rcutree.planted_gp_tick_permille=300 rcutree.planted_exp_delay_ns=1500",
                      "rcutree.planted_exp_alternate=1 rcutree.planted_exp_permille=250",
                      "xrcutree.planted_exp_permille=7 rcutree.planted_gp_tick_permille=12"))
  expect_equal(d$permille, c(NA, 300, NA, 12))
  expect_equal(d$ns, c(NA, 1500, NA, NA))
  expect_equal(d$exp_permille, c(NA, NA, 250, NA))   # a longer parameter's name is not it
  expect_equal(d$alternate, c(FALSE, FALSE, TRUE, FALSE))
  rt <- data.frame(boot_params = "rcutree.planted_gp_tick_permille=300 rcutree.planted_exp_permille=100",
                   gp_mode = c("normal", "expedited"), kconfig_hz = 250)
  expect_equal(planted_extra_gps(rt), c(0, 0.1))
  expect_equal(planted_added_us(rt), c(1200, 0))
  rt <- data.frame(boot_params = rep("rcutree.planted_gp_tick_permille=300 rcutree.planted_exp_delay_ns=1500", 2),
                   gp_mode = c("normal", "expedited"), kconfig_hz = 250)
  # 0.3 ticks of 4000 us, or 1.5 us
  expect_equal(planted_added_us(rt), c(1200, 1.5))
})

test_that("a planted 10% is measured as 10% and caught; A/A is not flagged", {
  db <- cal_db()
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  cr <- calibration_runs(rt)
  expect_equal(length(unique(cr$base)), 1)
  dr <- dose_response(rt)
  expect_equal(nrow(dr), 2)
  planted <- dr[dr$added_us > 0, ]
  expect_equal(planted$intended, 0.1, tolerance = 0.01)
  expect_lt(abs(planted$measured - planted$intended), 0.02)
  expect_lt(planted$lo, planted$measured)
  cal <- calibrate_gate(rt, n = c(5, 10), trials = 40, boot = 20, boot_trials = 20)
  expect_setequal(cal$comparison, c("A/A", "+10.0%"))
  det <- cal[cal$comparison != "A/A" & cal$n == 10, ]
  expect_equal(det$slowdown, 1)
  aa <- cal[cal$comparison == "A/A", ]
  expect_true(all(aa$slowdown <= 0.1))
  expect_true(all(aa$slowdown_lo <= aa$slowdown & aa$slowdown <= aa$slowdown_hi))
  # pools: 48 control runs, split anew in each A/A trial; the dose has 24
  expect_equal(unique(aa$pool_old), 48)
  expect_equal(unique(aa$pool_new), 0)
  expect_equal(unique(det$pool_new), 24)
  # a pool smaller than n gives no row at all
  expect_null(calibrate_pair(matrix(1:3, ncol = 1), matrix(1:3, ncol = 1), 5))
  md <- calibration_markdown(dr, cal, variance_decomposition(rt, read_samples(db)),
                             data.frame(cell = "c", stat = "mean", sd = 0.1, spread = 0.08,
                                        n10_80 = 5, n10_95 = 8, n25_80 = 3, n25_95 = Inf,
                                        sd_n10_80 = 9, rs_n10_80 = 7), 0.05, 0.05, rt)
  expect_true(any(grepl("Dose-response", md)))
  expect_true(any(grepl("> 10000", md, fixed = TRUE)))
})

test_that("variance decomposition: identical GPs within a boot put all spread between boots", {
  db <- cal_db(sd = 0.05)
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  vd <- variance_decomposition(rt, read_samples(db))
  expect_equal(vd$sd_within, 0)
  expect_equal(vd$between_share, 1)
  expect_equal(vd$sd_log_mean, vd$sd_between)
})

test_that("runs for power: the normal approximation at se = spread * sqrt(2/n), by hand", {
  # spread 0.2, 10% at 80%: the estimate (sd 0.2 sqrt(2/n)) must exceed
  # max(log 1.05, z(0.975) se); at n = 35 se = 0.0478, the bar z se =
  # 0.0937 and P(est > bar) = pnorm((0.0953 - 0.0937) / 0.0478) = 0.51; the
  # bar falls below log 1.05 only near n = 140, so the first n with 80% is
  # where pnorm((log 1.1 - 1.96 se) / se) >= 0.8: se <= log(1.1) / (1.96 + 0.8416)
  se_max <- log(1.1) / (stats::qnorm(0.975) + stats::qnorm(0.8))
  expect_equal(runs_for_power(0.2, 0.10, 0.8), ceiling(2 * (0.2 / se_max)^2))
})

test_that("variance decomposition reads the rank spread and checks it against resampling", {
  set.seed(3)
  db <- cal_db(sd = 0.05)
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  vd <- variance_decomposition(rt, read_samples(db))
  cr <- calibration_runs(rt)
  ctl <- cr[cr$dose == "0" & cr$usable, ]
  expect_equal(nrow(ctl), 48)
  expect_equal(vd$spread_mean, rank_spread(list(log(ctl$avg_us))))
  expect_equal(vd$hl_n, min(20L, nrow(ctl) %/% 2L))
  expect_true(is.finite(vd$hl_sd_mean) && vd$hl_sd_mean > 0)
})

test_that("hl_resampled_sd is the scatter of A/A Hodges-Lehmann shifts", {
  expect_true(is.na(hl_resampled_sd(1:5, 3)))
  expect_equal(hl_resampled_sd(rep(1, 10), 5, trials = 50), 0)
  set.seed(4)
  # normal data, n = 25 a side: the HL shift's SD is close to
  # sd * sqrt(pi/3) * sqrt(2/25) = 0.1 * 1.023 * 0.283 = 0.0289
  s <- hl_resampled_sd(stats::rnorm(4000, 0, 0.1), 25, trials = 2000, seed = 4)
  expect_equal(s, 0.1 * sqrt(pi / 3) * sqrt(2 / 25), tolerance = 0.08)
})

test_that("runs for power grow as the spread grows and the slowdown shrinks", {
  n <- runs_for_power(c(0.01, 0.1, 0.3), 0.10, 0.8)
  expect_true(all(diff(n) > 0))
  expect_gte(n[1], 4)   # the exact test needs 4+4 runs to reach 0.025 at all
  expect_lt(runs_for_power(0.1, 0.25, 0.8), runs_for_power(0.1, 0.10, 0.8))
  expect_gt(runs_for_power(0.1, 0.10, 0.95), runs_for_power(0.1, 0.10, 0.8))
})

test_that("the calibration's trial verdict is the gate's own, ties and all", {
  set.seed(5)
  for (i in 1:30) {
    # tick-bound values: ties within and across the sides
    old <- round(exp(rnorm(6, 0, 0.2)) * 10) * 10
    new <- round(exp(rnorm(6, log(1.15), 0.2)) * 10) * 10
    p <- gate_db(old, new)
    res <- gate(p, "stock", "cand", threshold = 0.05, stats = "p50")
    want <- res$rows$verdict[res$rows$stat == "p50"]
    expect_equal(trial_verdict(old, new, 0.05, 0.05, 0.025), want)
  }
})

# Expedited runs of one 1-vCPU cell, bimodal from boot to boot (8 or 14 us),
# per-GP noise of 5%, the first ten GPs warming up: the control and doses
# of extra GPs, each extra GP one more GP of the run's own kind, on the
# calls the kernel's running sum picks (rcuscale's seq 0-100).
exp_db <- function(reps = 30, seed = 5, doses = c(0, 100), matrix = "gatecal-v1") {
  set.seed(seed)
  add_exp_runs(new_db(), reps, doses, function(k, pm) {
    level <- if (stats::runif(1) < 0.6) 8000 else 14000
    gp <- function() level * exp(stats::rnorm(101, 0, 0.05)) * ifelse(k < 10, 3, 1)
    gp() + planted_extra_at(k, pm) * gp()
  }, matrix)
}

# Adds `reps` runs of each expedited dose (permille) in `doses` to `db`,
# in that order, rcuscale's samples seq 0-100 given by x(seq, permille).
add_exp_runs <- function(db, reps, doses, x, matrix = "gatecal-v1",
                         bp = function(pm) sprintf("rcutree.planted_exp_permille=%d", pm)) {
  for (r in seq_len(reps)) {
    for (pm in doses) {
      add_run(db, "planted", paste0("v1-n1/expedited/w1-r0/", bp(pm)), rep = r,
              boot_params = bp(pm), matrix = matrix, cmdline = "rcuscale.holdoff=0",
              samples_ns = round(x(0:100, pm)), seq_from = 0L)
    }
  }
  db
}

test_that("the kernel's running sum is what marks the slowed calls", {
  expect_equal(which(planted_extra_at(0:99, 100) > 0) - 1, seq(9, 99, 10))
  expect_equal(sum(planted_extra_at(0:999, 250)), 250)
  expect_equal(planted_extra_at(0:3, 1500), c(1, 2, 1, 2))
  expect_equal(planted_extra_at(0:9, 0), rep(0, 10))
})

test_that("an extra-GP dose's intended change is its share of calls, however bimodal the control", {
  db <- exp_db()
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  dr <- dose_response(rt)
  expect_equal(dr$extra, c(0, 0.1))
  expect_equal(dr$intended, c(0, 0.1))
  # an additive dose of the same mean size would not be 10% to the HL estimator
  ctl <- rt$avg_us[grepl("permille=0", rt$boot_params)]
  expect_gt(abs(intended_change(ctl, 0.1 * mean(ctl)) - 0.1), 0.005)
  expect_true(dr$lo[2] < 0.1 && 0.1 < dr$hi[2])
  md <- calibration_markdown(dr, NULL, variance_decomposition(rt, read_samples(db)),
                             data.frame(cell = "c", stat = "mean", sd = 0.1, spread = 0.08,
                                        n10_80 = 5, n10_95 = 8, n25_80 = 3, n25_95 = 4,
                                        sd_n10_80 = 9, rs_n10_80 = 7), 0.05, 0.05, rt)
  expect_true(any(grepl("+0.1 GP per call (100 permille)", md, fixed = TRUE)))
})

test_that("within boots, a dose reads its share of calls and the placebo 0, warm-up left out", {
  db <- exp_db(reps = 12, doses = c(0, 100, 250))
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  wb <- within_boot_response(rt, read_samples(db))
  expect_equal(wb$extra, c(0.1, 0.25))
  expect_equal(wb$boots, c(12, 12))
  expect_equal(wb$calls, c(90, 90))         # seq 10-99: warm-up and rcuscale's last left out
  expect_equal(wb$slowed, c(9, 23))         # seq 19, 29, ..., 99 and 11, 15, ..., 99
  expect_lt(max(abs(wb$measured - c(0.1, 0.25))), 0.01)
  expect_true(all(wb$lo < wb$measured & wb$measured < wb$hi))
  expect_lt(max(abs(wb$placebo)), 0.01)
  expect_equal(wb$placebo_boots, c(12, 12))
  expect_equal(wb$cost, c(2, 2), tolerance = 0.03)
  wt <- within_table(wb)
  expect_match(wt$`one extra GP costs (medians)`, "^(0[.]9[5-9]|1[.]0[0-5]) GPs$")
  # an extra GP adds a GP of its boot (8 or 14 us, 60:40); delivered to the
  # run's mean, warm-up included, it is far less than the share of calls
  expect_equal(wb$cost_us, c(10.4, 10.4), tolerance = 0.1)
  expect_true(all(wb$cost_lo < wb$cost_us & wb$cost_us < wb$cost_hi))
  ctl <- rt$avg_us[grepl("permille=0", rt$boot_params)]
  expect_equal(wb$delivered, intended_change(ctl, c(0.1, 0.25) * wb$cost_us))
  expect_lt(max(wb$delivered - c(0.1, 0.25)), -0.02)
  expect_true(all(wb$delivered_lo < wb$delivered & wb$delivered < wb$delivered_hi))
  # nothing left behind for the next call: within a tenth of a GP of 0
  expect_lt(max(abs(wb$spill_us)), 0.1 * 8)
  expect_true(all(wb$spill_lo < wb$spill_us & wb$spill_us < wb$spill_hi))
})

test_that("within boots, work an extra GP leaves for the next call is seen there", {
  set.seed(6)
  # each extra GP costs a GP, and 3 us more lands in the next call
  db <- add_exp_runs(new_db(), 12, c(0, 100), function(k, pm) {
    8000 * exp(stats::rnorm(101, 0, 0.02)) * (1 + planted_extra_at(k, pm)) +
      3000 * planted_extra_at(k - 1, pm)
  })
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  wb <- within_boot_response(rt, read_samples(db))
  expect_equal(wb$spill_us, 3, tolerance = 0.05)
  expect_gt(wb$spill_lo, 2)
  expect_match(within_table(wb)$`the next call took longer by, µs [95% CI]`, "^[+](2[.]9[5-9]|3[.]0[0-5]) ")
})

test_that("within boots, a dose whose extra GPs cost more than a GP reads more", {
  set.seed(4)
  db <- add_exp_runs(new_db(), 10, c(0, 100), function(k, pm) {
    8000 * exp(stats::rnorm(101, 0, 0.02)) + planted_extra_at(k, pm) * 12000
  })
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  wb <- within_boot_response(rt, read_samples(db))
  # 9 of 90 calls each 1.5 GPs longer: the mean grows by 15%, not 10%
  expect_equal(wb$measured, 0.15, tolerance = 0.01)
  expect_equal(wb$cost, 2.5, tolerance = 0.02)
})

test_that("runs of 0008's dilating revision are left out of both readings", {
  db <- add_exp_runs(new_db(), 6, c(0, 250), function(k, pm) rep(8000, length(k)),
                     "gatecal-within", function(pm) {
                       sprintf("rcutree.planted_exp_alternate=1 rcutree.planted_exp_permille=%d", pm)
                     })
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  expect_true(all(calibration_runs(rt)$alternate))
  expect_length(between_boot_cells(rt), 0)
  expect_null(within_boot_response(rt, read_samples(db)))
})

test_that("each dose is compared with the control of its own matrix", {
  db <- new_db()
  set.seed(3)
  for (r in 1:8) {
    for (m in c("gatecal-v1", "gatecal-doses-v1")) {
      # the second matrix ran later, on a host 20% slower for everything
      level <- if (m == "gatecal-v1") 12000 else 14400
      bps <- if (m == "gatecal-v1") c(0, 300) else c(0, 150)
      for (pm in bps) {
        bp <- sprintf("rcutree.planted_gp_tick_permille=%d", pm)
        add_run(db, "planted", paste0("v1-n1/normal/w1-r0/", bp), rep = r, boot_params = bp,
                matrix = m, cmdline = "rcuscale.holdoff=0",
                samples_ns = round(1000 * (level * exp(rnorm(1, 0, 0.002)) + pm * 4) * rep(1, 20)))
      }
    }
  }
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  dr <- dose_response(rt)
  expect_equal(nrow(dr), 4)
  expect_setequal(dr$matrix, c("gatecal-v1", "gatecal-doses-v1"))
  d5 <- dr[dr$added_us == 600, ]
  expect_equal(d5$matrix, "gatecal-doses-v1")
  # 600 us on 14.4 ms, not 5% + the host's 20%
  expect_equal(d5$intended, 600 / 14400, tolerance = 0.002)
  expect_lt(abs(d5$measured - d5$intended), 0.005)
  expect_equal(sum(dr$added_us == 0), 2)
})

test_that("a matrix whose doses have no control of their own is left out, and says so", {
  db <- new_db()
  for (r in 1:6) {
    for (m in c("gatecal-v1", "gatecal-doses-v1")) {
      bps <- if (m == "gatecal-v1") c(0, 300) else 150
      for (pm in bps) {
        bp <- sprintf("rcutree.planted_gp_tick_permille=%d", pm)
        add_run(db, "planted", paste0("v1-n1/normal/w1-r0/", bp), rep = r, boot_params = bp,
                matrix = m, cmdline = "rcuscale.holdoff=0",
                samples_ns = round(1000 * (12000 + r + pm * 4) * rep(1, 20)))
      }
    }
  }
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  expect_message(dr <- dose_response(rt), "no usable control .* gatecal-doses-v1")
  expect_equal(unique(dr$matrix), "gatecal-v1")
  expect_equal(nrow(dr), 2)
})

test_that("the time plant's report is read from the kernel's line, last one wins", {
  expect_equal(parse_bit_list("1-5,9,12-13"), c(1:5, 9L, 12L, 13L))
  expect_equal(parse_bit_list(""), integer(0))
  l <- c("[    4.1] rcu-scale: rcu_scale_writer 0 has 100 measurements",
         "[    4.2] rcu: planted_exp_time_permille=100: calls 7 measured_ns 5 extra_ns 1 extras 1 at 3",
         "[    4.3] rcu: planted_exp_time_permille=250: calls 101 measured_ns 1500000 extra_ns 375100 extras 31 at 1-11,14,18")
  r <- planted_report(l)
  expect_equal(r$permille, 250)
  expect_equal(c(r$calls, r$measured_ns, r$extra_ns, r$extras), c(101, 1500000, 375100, 31))
  expect_equal(r$at[[1]], c(1:11, 14L, 18L))
  expect_equal(planted_report("rcu: planted_exp_time_permille=0: calls 101 measured_ns 9 extra_ns 0 extras 0 at ")$at[[1]],
               integer(0))
  expect_null(planted_report(c("rcu-scale: writer-duration: 0 0 8000", "")))
})

# The kernel's time plant, as 0008 runs it: before call i's own GP counts,
# an extra GP (extra_gp(i) ns) is due if the extra time so far is under
# permille/1000 of the measured time so far; `spill` ns land in the call
# after a slowed one (measured time there, as in the kernel).
sim_time_plant <- function(base, permille, extra_gp, spill = 0) {
  m <- 0
  e <- 0
  at <- integer(0)
  x <- base
  for (i in seq_along(base)) {
    if (i > 1 && (i - 2L) %in% at) x[i] <- x[i] + spill
    due <- e * 1000 < m * permille
    m <- m + x[i]
    if (due) {
      xe <- extra_gp(i)
      x[i] <- x[i] + xe
      e <- e + xe
      at <- c(at, i - 1L)
    }
  }
  list(samples = x, measured = m, extra = e, at = at)
}

# The kernel's "%*pbl" form of a set of bits.
to_pbl <- function(at) {
  if (!length(at)) return("")
  runs <- split(at, cumsum(c(1, diff(at) != 1)))
  paste(vapply(runs, function(r) if (length(r) > 1) sprintf("%d-%d", r[1], r[length(r)])
                 else as.character(r), character(1)), collapse = ",")
}

# `reps` runs of each time dose (permille) in `doses`, rcuscale's samples
# seq 0-100 planted by sim_time_plant(), each with its console log (the
# kernel's report) in a run directory of its own.
add_time_runs <- function(db, reps, doses, spill = 0, matrix = "gatecal-v1") {
  dir <- tempfile("runs")
  for (r in seq_len(reps)) {
    for (pm in doses) {
      level <- if (stats::runif(1) < 0.6) 8000 else 14000
      gp <- function(k) level * exp(stats::rnorm(k, 0, 0.05))
      k <- 0:100
      base <- gp(101) * ifelse(k < 10, 3, 1) * ifelse(k == 0, 20, 1)
      p <- sim_time_plant(base, pm, function(i) gp(1), spill)
      bp <- sprintf("rcutree.planted_exp_time_permille=%d", pm)
      id <- add_run(db, "planted", paste0("v1-n1/expedited/w1-r0/", bp), rep = r,
                    boot_params = bp, matrix = matrix, cmdline = "rcuscale.holdoff=0",
                    samples_ns = round(p$samples), seq_from = 0L)
      rd <- file.path(dir, id)
      dir.create(rd, recursive = TRUE)
      writeLines(c("[    3.9] rcu-scale: rcu_scale_writer 0 has 100 measurements",
                   sprintf("[    4.0] rcu: planted_exp_time_permille=%d: calls 101 measured_ns %.0f extra_ns %.0f extras %d at %s",
                           pm, p$measured, p$extra, length(p$at), to_pbl(p$at))),
                 file.path(rd, "console.log"))
      con <- DBI::dbConnect(RSQLite::SQLite(), db)
      DBI::dbExecute(con, "UPDATE runs SET run_dir = ? WHERE id = ?", params = list(rd, id))
      DBI::dbDisconnect(con)
    }
  }
  db
}

test_that("the gate's estimand for multiplied runs is the factor, and one outlier boot barely moves it", {
  set.seed(3)
  m <- 10 * exp(stats::rnorm(40, 0, 0.25))
  expect_equal(intended_change_mult(m, rep(0.1, 20)), 0.1, tolerance = 1e-12)
  # one boot of 20 at +500%: the HL estimator moves by a fraction of a
  # point, where the mean of the factors moves by 25 points
  out <- intended_change_mult(m, c(rep(0.1, 19), 5))
  expect_gt(out, 0.1)
  expect_lt(out, 0.12)
  expect_true(is.na(intended_change_mult(numeric(0), 0.1)))
})

test_that("a time dose's intended change is its share, and inside boots it delivers that share", {
  set.seed(11)
  db <- add_time_runs(new_db(), 12, c(0, 100, 250))
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  dr <- dose_response(rt)
  expect_equal(dr$share, c(0, 0.1, 0.25))
  expect_equal(dr$intended, c(0, 0.1, 0.25))
  wt <- within_time_response(rt, read_samples(db), planted_reports(rt))
  expect_equal(wt$share, c(0.1, 0.25))
  expect_equal(wt$boots, c(12, 12))
  # the plant's own sums: within a GP a boot of the share
  expect_lt(max(abs(wt$planted - c(0.1, 0.25))), 0.005)
  # the samples see what the plant's clock saw, and nothing is left behind
  expect_equal(wt$cost_us, wt$plant_cost_us, tolerance = 0.05)
  expect_lt(max(abs(wt$spill_us)), 0.1 * 8)
  expect_lt(max(abs(wt$placebo_us)), 0.1 * 8)
  expect_equal(wt$placebo_boots, c(12, 12))
  expect_lt(max(abs(wt$delivered - c(0.1, 0.25))), 0.01)
  expect_lt(max(abs(wt$dose - c(0.1, 0.25))), 0.005)
  expect_true(all(wt$delivered_lo < wt$delivered & wt$delivered < wt$delivered_hi))
  # the first GPs' share is paid back at once: calls 1, 2, ... in a row
  id <- rt$id[grepl("permille=250", rt$boot_params)][1]
  expect_true(all(1:3 %in% planted_reports(rt)[[as.character(id)]]$at[[1]]))
  tab <- within_time_table(wt)
  expect_equal(tab$planted[1], "extra GPs, 10% of the time (100 permille)")
  expect_match(tab$`off by`, "^[+-]0[.][0-9] pp$")
  md <- calibration_markdown(dr, NULL, variance_decomposition(rt, read_samples(db)),
                             data.frame(cell = "c", stat = "mean", sd = 0.1, spread = 0.08,
                                        n10_80 = 5, n10_95 = 8, n25_80 = 3, n25_95 = 4,
                                        sd_n10_80 = 9, rs_n10_80 = 7), 0.05, 0.05, rt,
                             NULL, wt)
  expect_true(any(grepl("plant's clock sees all", md, fixed = TRUE)))
})

test_that("inside boots, work an extra GP of a time dose leaves behind counts as delivered", {
  set.seed(12)
  db <- add_time_runs(new_db(), 12, c(0, 250), spill = 3000)
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  wt <- within_time_response(rt, read_samples(db), planted_reports(rt))
  expect_equal(wt$spill_us, 3, tolerance = 0.1)
  expect_gt(wt$spill_lo, 2)
  # the plant keeps its share of a measured time that the spill inflates,
  # so the run's mean grows by more than the share
  expect_lt(abs(wt$planted - 0.25), 0.005)
  expect_lt(abs(wt$dose - 0.25), 0.005)
  expect_gt(wt$delivered - 0.25, 0.02)
  expect_gt(wt$delivered_lo, 0.25)
})

test_that("a time dose without its console log is left out of the within-boot reading", {
  set.seed(13)
  db <- add_time_runs(new_db(), 3, c(0, 100))
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  rt$run_dir <- NA_character_
  expect_length(planted_reports(rt), 0)
  expect_null(within_time_response(rt, read_samples(db), planted_reports(rt)))
})

test_that("the placebo marks the calls the kernel's time plant would pick", {
  set.seed(14)
  base <- 8000 * exp(stats::rnorm(101, 0, 0.3))
  p <- sim_time_plant(base, 250, function(i) 9000)
  expect_equal(time_plant_marks(base, 250, 9000), p$at)
  expect_equal(time_plant_marks(base, 0, 9000), integer(0))
})

test_that("median_of_sums is the median of all sums, without forming them", {
  expect_equal(median_of_sums(c(0, 10), c(1, 2, 3)), 7)        # 1 2 3 | 11 12 13
  expect_equal(median_of_sums(c(1, 2, 3), 0), 2)
  expect_equal(median_of_sums(c(5, 5, 5), c(1, 1)), 6)          # all tie
  set.seed(8)
  for (i in 1:100) {
    x <- round(stats::rnorm(sample(1:30, 1)), sample(0:3, 1))   # ties, odd and even counts
    y <- stats::rnorm(sample(1:12, 1), 0, 2)
    expect_equal(median_of_sums(x, y), stats::median(outer(x, y, "+")), tolerance = 1e-12)
  }
})

test_that("the sequential compare on pools: A/A within its level, a clear slowdown decided early", {
  skip_if_not_installed("rpact")
  set.seed(11)
  ctl <- cbind(mean = exp(rnorm(40, log(20), 0.15)), p90 = exp(rnorm(40, log(30), 0.1)))
  slow <- ctl * 1.5
  aa <- seq_calibrate_pair(ctl, ctl, trials = 60, threshold = 0.10, alpha = 0.05, seed = 2)
  # a false alarm needs the estimate above +10% and the boundary crossed
  expect_lte(aa$slowdown, 5)
  expect_equal(aa$slowdown + aa$pass + aa$inconclusive, 100)
  expect_true(aa$pass_lo <= aa$pass && aa$pass <= aa$pass_hi)
  expect_equal(aa$fixed_n, 20)
  s <- seq_calibrate_pair(ctl, slow, trials = 60, threshold = 0.10, alpha = 0.05, seed = 3)
  expect_equal(s$slowdown, 100)
  expect_equal(s$fixed_slowdown, 100)
  # +50% at an SD of 0.15: decided before the design's 20 runs a side
  expect_lt(s$n_mean, 20)
  expect_true(s$n_median %% 4 == 0)
  # one trial: the verdict, the runs at the decision, the fixed-n verdict
  with_seed(4, tr <- seq_trial(ctl, slow, 0.10, 0.025, 0.05 / 3, 4, 20))
  expect_equal(tr$seq, "SLOWDOWN")
  expect_true(tr$n %in% c(4, 8, 12, 16, 20))
  expect_equal(tr$fixed, "SLOWDOWN")
  md <- seq_calibration_markdown(cbind(data.frame(cell = "c", stats = "mean+p90", comparison = "A/A",
                                                  intended = 0, seen = 0, seen_p90 = 0), aa))
  expect_length(md, 3)
  expect_match(md[3], "^\\| c \\| mean\\+p90 \\| A/A \\| 40 \\+ 40 \\|")
})
