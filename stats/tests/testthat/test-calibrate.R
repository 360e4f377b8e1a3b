# The gate calibration: a planted shift far beyond the threshold is caught
# in every trial; identical pools are (almost) never flagged.

test_that("calibrate_gate catches a large planted slowdown and not an A/A", {
  db <- new_db()
  set.seed(11)
  for (r in 1:12) {
    add_run(db, "base", cell = "v1-n1/normal/w1-r0", rep = r,
            samples_ns = round(rnorm(50, 12e6, 2e5)))
    add_run(db, "same", cell = "v1-n1/normal/w1-r0", rep = r,
            samples_ns = round(rnorm(50, 12e6, 2e5)))
    add_run(db, "base", cell = "v1-n1/normal/w1-r0/rcutree.planted_gp_delay_us=3000", rep = r,
            boot_params = "rcutree.planted_gp_delay_us=3000",
            samples_ns = round(rnorm(50, 12e6, 2e5)))
    add_run(db, "slow", cell = "v1-n1/normal/w1-r0/rcutree.planted_gp_delay_us=3000", rep = r,
            boot_params = "rcutree.planted_gp_delay_us=3000",
            samples_ns = round(rnorm(50, 15e6, 2e5)))
  }
  rt <- build_run_table(read_runs(db), run_stats(read_samples(db)))
  cmp <- data.frame(label = c("A/A", "planted"), baseline = "base",
                    candidate = c("same", "slow"),
                    cell = c("v1-n1/normal/w1-r0",
                             "v1-n1/normal/w1-r0/rcutree.planted_gp_delay_us=3000"))
  cal <- calibrate_gate(rt, cmp, n = c(5, 20), trials = 20)
  expect_equal(nrow(cal), 4)
  planted5 <- cal[cal$comparison == "planted" & cal$n == 5, ]
  expect_equal(planted5$flagged, 20)
  expect_equal(planted5$pool_old, 12)
  expect_gt(planted5$pool_shift, 0.2)
  aa5 <- cal[cal$comparison == "A/A" & cal$n == 5, ]
  expect_lte(aa5$rate, 0.2)
  # a pool smaller than n: no trials, said so
  expect_equal(cal$trials[cal$n == 20], c(0, 0))
  md <- calibration_md(cal, 0.05, 0.05)
  expect_true(any(grepl("20 (100.0%)", md, fixed = TRUE)))
})
