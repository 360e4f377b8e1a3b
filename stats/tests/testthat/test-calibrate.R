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
  expect_equal(planted_dilation(rt), c(0, 0.1))
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
                             data.frame(cell = "c", stat = "mean", sd = 0.1, n10_80 = 5,
                                        n10_95 = 8, n25_80 = 3, n25_95 = Inf), 0.05, 0.05, rt)
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

test_that("runs for power grow as the spread grows and the slowdown shrinks", {
  n <- runs_for_power(c(0.01, 0.1, 0.3), 0.10, 0.8)
  expect_true(all(diff(n) > 0))
  expect_gte(n[1], 4)   # the exact test needs 4+4 runs to reach 0.025 at all
  expect_lt(runs_for_power(0.1, 0.25, 0.8), runs_for_power(0.1, 0.10, 0.8))
  expect_gt(runs_for_power(0.1, 0.10, 0.95), runs_for_power(0.1, 0.10, 0.8))
})

test_that("the calibration's fast trial rule agrees with the gate's own rows", {
  set.seed(5)
  for (i in 1:30) {
    old <- exp(rnorm(6, 0, 0.2)) * 100
    new <- exp(rnorm(6, log(1.15), 0.2)) * 100
    x <- log_compare(old, new, a = 0.025)
    want <- row_verdict(x$hi, x$shift, x$p, TRUE, 0.05, 0.025)
    got <- fast_verdict(old, new, moses_index(6, 6, 0.025),
                        stats::pwilcox(seq(0, 36) - 1, 6, 6, lower.tail = FALSE), 0.05, 0.025)
    expect_equal(got, want)
  }
})

# Expedited runs of one 1-vCPU cell, bimodal from boot to boot (8 or 14 us):
# the control and a 10% dilation, per-GP noise of 5%.
exp_db <- function(reps = 30, seed = 5) {
  db <- new_db()
  set.seed(seed)
  for (r in seq_len(reps)) {
    for (pm in c(0, 100)) {
      bp <- sprintf("rcutree.planted_exp_permille=%d", pm)
      level <- if (stats::runif(1) < 0.6) 8000 else 14000
      add_run(db, "planted", paste0("v1-n1/expedited/w1-r0/", bp), rep = r, boot_params = bp,
              matrix = "gatecal-v1", cmdline = "rcuscale.holdoff=0",
              samples_ns = round(level * (1 + pm / 1000) * exp(stats::rnorm(40, 0, 0.05))))
    }
  }
  db
}

test_that("a dilation's intended change is the dilation itself, however bimodal the control", {
  db <- exp_db()
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  dr <- dose_response(rt)
  expect_equal(dr$dilation, c(0, 0.1))
  expect_equal(dr$intended, c(0, 0.1))
  # an additive dose of the same mean size would not be 10% to the HL estimator
  ctl <- rt$avg_us[grepl("permille=0", rt$boot_params)]
  expect_gt(abs(intended_change(ctl, 0.1 * mean(ctl)) - 0.1), 0.005)
  expect_true(dr$lo[2] < 0.1 && 0.1 < dr$hi[2])
  # pooled GP quantiles: the dilation moves them by its own size
  drs <- dose_response(rt, samples = read_samples(db))
  q <- drs$q_ratio[[2]]
  expect_equal(unname(q["p10"]), 1.1, tolerance = 0.03)
  expect_true(q[["p50_lo"]] < 1.1 && 1.1 < q[["p50_hi"]])
  expect_false(is.null(drs$q_ratio[[1]]))   # the A/A halves too
  expect_null(dose_response(rt)$q_ratio[[2]])
  md <- calibration_markdown(dr, NULL, variance_decomposition(rt, read_samples(db)),
                             data.frame(cell = "c", stat = "mean", sd = 0.1, n10_80 = 5,
                                        n10_95 = 8, n25_80 = 3, n25_95 = 4), 0.05, 0.05, rt)
  expect_true(any(grepl("x1.100 (100 permille)", md, fixed = TRUE)))
})

test_that("the within-boot dilation is measured from even against odd samples, last one left out", {
  db <- new_db()
  set.seed(9)
  for (r in 1:6) {
    for (pm in c(0, 250)) {
      bp <- sprintf("rcutree.planted_exp_alternate=1 rcutree.planted_exp_permille=%d", pm)
      level <- if (r %% 2) 8000 else 14000
      x <- level * exp(stats::rnorm(101, 0, 0.05))
      even <- seq(1, 101, by = 2)              # seq 0, 2, 4, ... (0-based) are dilated
      x[even] <- x[even] * (1 + pm / 1000)
      x[101] <- 1e9                            # rcuscale's overwritten last sample
      x[1] <- 50 * x[1]                        # and its warm-up GP
      add_run(db, "planted", paste0("v1-n1/expedited/w1-r0/", bp), rep = r, boot_params = bp,
              matrix = "gatecal-within", cmdline = "rcuscale.holdoff=0",
              samples_ns = round(x), seq_from = 0L)
    }
  }
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  expect_true(all(calibration_runs(rt)$alternate))
  expect_length(between_boot_cells(rt), 0)
  wb <- within_boot_response(rt, read_samples(db))
  expect_equal(wb$dilation, c(0, 0.25))
  expect_equal(wb$boots, c(6, 6))
  expect_equal(wb$pairs, c(96, 96))   # k = 4, 6, ..., 98, each against both neighbours
  expect_lt(abs(wb$measured[2] - 0.25), 0.01)
  expect_lt(abs(wb$measured[1]), 0.01)
  expect_true(all(wb$lo < wb$measured & wb$measured < wb$hi))
  expect_lt(abs(wb$mean_measured[2] - 0.25), 0.02)   # neither outlier is in it
})

test_that("the within-boot contrast cancels a drift that biases dilated-against-next pairs", {
  db <- new_db()
  for (r in 1:4) {
    for (pm in c(0, 100)) {
      bp <- sprintf("rcutree.planted_exp_alternate=1 rcutree.planted_exp_permille=%d", pm)
      k <- 0:100
      x <- 10000 * exp(-0.01 * k)              # each GP 1% shorter than the one before
      x[k %% 2 == 0] <- x[k %% 2 == 0] * (1 + pm / 1000)
      add_run(db, "planted", paste0("v1-n1/expedited/w1-r0/", bp), rep = r, boot_params = bp,
              matrix = "gatecal-within", cmdline = "rcuscale.holdoff=0",
              samples_ns = round(x), seq_from = 0L)
    }
  }
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  wb <- within_boot_response(rt, read_samples(db))
  # dilated against the next GP alone would read +1.0% and +11.1%, against
  # the previous one alone -1.0% and +8.9%
  expect_equal(wb$measured, c(0, 0.1), tolerance = 1e-3)
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

# Independent, right-skewed GPs (one in four three times as long), nothing
# planted: the dilated GP against the mean log of its two neighbours reads
# about -2.4% here (simulated); each neighbour on its own, pooled, reads 0.
skewed_within_db <- function(boots = 40) {
  db <- new_db()
  set.seed(21)
  for (r in seq_len(boots)) {
    for (pm in c(0, 100)) {
      bp <- sprintf("rcutree.planted_exp_alternate=1 rcutree.planted_exp_permille=%d", pm)
      k <- 0:100
      x <- 7000 * exp(stats::rnorm(101, 0, 0.03)) * ifelse(stats::runif(101) < 0.25, 3, 1)
      x[k %% 2 == 0] <- x[k %% 2 == 0] * (1 + pm / 1000)
      add_run(db, "planted", paste0("v1-n1/expedited/w1-r0/", bp), rep = r, boot_params = bp,
              matrix = "gatecal-within", cmdline = "rcuscale.holdoff=0",
              samples_ns = round(x), seq_from = 0L)
    }
  }
  db
}

test_that("the within-boot contrast reads nothing planted as 0 however skewed the GPs", {
  db <- skewed_within_db()
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  s <- read_samples(db)
  wb <- within_boot_response(rt, s)
  expect_lt(abs(wb$measured[1]), 0.008)
  expect_lt(abs(wb$measured[2] - 0.1), 0.01)
  # the contrast against the mean log of both neighbours is biased on the same boots
  cr <- calibration_runs(rt)
  aa <- cr$id[cr$dilation == 0]
  sym <- vapply(split(s[s$run_id %in% aa, ], s$run_id[s$run_id %in% aa]), function(x) {
    l <- stats::setNames(log(x$duration_ns), x$seq)
    k <- seq(4, 98, by = 2)
    stats::median(l[as.character(k)] - (l[as.character(k - 1)] + l[as.character(k + 1)]) / 2)
  }, numeric(1))
  expect_lt(mean(sym), -0.01)
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
