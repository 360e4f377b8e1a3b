# What a setting costs to decide with (stats/R/cost.R).

test_that("occupied_s is the union of the runs' intervals", {
  # [0,5] and [1,6] overlap (two guests side by side): 6 s; [10,12]: 2 s more
  expect_equal(occupied_s(c(0, 1, 10), c(5, 5, 2)), 8)
  # one at a time: the sum
  expect_equal(occupied_s(c(0, 6, 12), c(5, 5, 5)), 15)
  # order does not matter, NA is skipped, a run inside another adds nothing
  expect_equal(occupied_s(c(10, NA, 0, 1), c(2, 3, 5, 1)), 7)
  expect_equal(occupied_s(numeric(), numeric()), 0)
})

test_that("iso_seconds reads the runner's started_at", {
  expect_equal(iso_seconds("1970-01-01T00:01:40Z"), 100)
})

test_that("setting_cost: spread, runs needed, runs per hour and hours to decide", {
  t0 <- 1e9
  mk <- function(setting, starts, means) {
    data.frame(kind = "rcuscale", usable = TRUE, variant = setting, cell = "v1-n1/expedited",
               started_at = format(as.POSIXct(t0 + starts, origin = "1970-01-01", tz = "UTC"),
                                   "%Y-%m-%dT%H:%M:%SZ"),
               wall_s = 5, avg_us = means, p90_us = 2 * means)
  }
  solo <- mk("solo", c(0, 5, 10, 15), c(100, 110, 100, 110))
  pair <- mk("pair", c(0, 0, 5, 5), c(100, 121, 100, 121))
  c <- setting_cost(rbind(solo, pair), c("solo", "pair"))
  expect_equal(c$setting, c("solo", "pair"))
  # SD of log(mean): two values each side, log(1.1) and log(1.21) apart
  expect_equal(c$sd_log_mean, c(sd(log(c(100, 110, 100, 110))), sd(log(c(100, 121, 100, 121)))))
  expect_equal(c$sd_log_p90, c$sd_log_mean)
  # 4 runs in 20 s of wall clock against 4 runs in 10 s (two at a time)
  expect_equal(c$runs_per_hour, c(720, 1440))
  # 4 runs (6 differences) are too few for the kernel estimate: the rank
  # spread is the SD over the rank test's efficiency 3/pi
  expect_equal(c$spread_mean, c$sd_log_mean * sqrt(pi / 3))
  expect_equal(c$n10_80, runs_for_power(c$spread_mean, 0.10, 0.80))
  expect_equal(c$hours_10, 2 * c$n10_80 / c$runs_per_hour)
  # the doubled spread side by side costs more runs than the doubled rate saves
  expect_gt(c$n10_80[2], 2 * c$n10_80[1])
  md <- setting_cost_markdown(c)
  expect_match(md[1], "hours for one 10% decision")
  expect_length(md, 4)
})

test_that("setting_cost leaves unusable runs out and copes with no runs", {
  solo <- data.frame(kind = "rcuscale", usable = c(TRUE, FALSE), variant = "solo", cell = "c",
                     started_at = "2026-12-05T00:00:00Z", wall_s = 5, avg_us = c(100, 1e6),
                     p90_us = 1)
  c <- setting_cost(solo, "solo")
  expect_equal(c$runs, 1)
  expect_true(is.na(c$sd_log_mean))
  expect_equal(nrow(setting_cost(solo, "none")), 0)
})
