# Grace-period anatomy (R/anatomy.R) on a synthetic database of the
# runner's schema: traced runs whose calls are cut into phases (gp_anatomy)
# as runner/src/results/anatomy.c cuts them.

# A traced run of `variant` with `calls` normal calls: phases around the
# 1-vCPU figures (request, qs and callback a 4 ms tick each), each call's
# return `extra_return` us longer; `incomplete` stores a trace that lost events.
add_traced_run <- function(p, variant, rep, seed, calls = 40, extra_return = 0, incomplete = NA,
                           host_other_cpu = NA_real_) {
  id <- add_run(p, variant, cell = "v1-n1/normal/w1-r0", rep = rep, matrix = "anat", kconfig = "trace",
                host_other_cpu = host_other_cpu)
  con <- DBI::dbConnect(RSQLite::SQLite(), p)
  on.exit(DBI::dbDisconnect(con))
  DBI::dbExecute(con, "UPDATE runs SET nsamples = ? WHERE id = ?", params = list(calls, id))
  DBI::dbExecute(con, "INSERT INTO traces (run_id, events, lost, incomplete, calls) VALUES (?, 2000, 0, ?, ?)",
                 params = list(id, incomplete, calls))
  with_seed(seed, {
    d <- data.frame(run_id = id, mode = "normal", writer = 20, call = seq_len(calls) - 1,
                    request_us = 4000 + stats::rnorm(calls, 0, 40), init_us = 13 + stats::rnorm(calls, 0, 2),
                    qs_us = 3950 + stats::rnorm(calls, 0, 40), cleanup_us = 64 + stats::rnorm(calls, 0, 8),
                    callback_us = 3930 + stats::rnorm(calls, 0, 40),
                    return_us = 66 + extra_return + stats::rnorm(calls, 0, 8))
  })
  d$return_us[calls] <- NA	# the writer's last call has no next request
  DBI::dbAppendTable(con, "gp_anatomy", d)
  id
}

anatomy_db <- function(extra = 4000) {
  p <- new_db()
  for (r in 1:5) {
    add_traced_run(p, "after", r, seed = r)
    add_traced_run(p, "planted", r, seed = 100 + r, extra_return = extra)
  }
  # never read: a trace that lost events, and a host-busy run
  add_traced_run(p, "planted", 6, seed = 7, extra_return = 1e6, incomplete = "the trace buffer lost events")
  add_traced_run(p, "planted", 7, seed = 8, extra_return = 1e6, host_other_cpu = 8)
  p
}

test_that("read_anatomy: calls of whole traces of ok, quiet runs only", {
  calls <- read_anatomy(anatomy_db(), matrix = "anat")
  expect_equal(nrow(calls), 10 * 40)
  expect_setequal(unique(calls$variant), c("after", "planted"))
  expect_true(all(calls$kconfig == "trace"))
})

test_that("anatomy_compare: a delay planted in the return shows there, and only there", {
  cmp <- anatomy_compare(read_anatomy(anatomy_db(), matrix = "anat"), "after", "planted", B = 500)
  ph <- cmp$phases
  expect_equal(ph$phase, ANATOMY_PHASES$normal)
  expect_true(all(ph$base_runs == 5 & ph$cand_runs == 5))
  ret <- ph[ph$phase == "return", ]
  # 39 of 40 calls have a return: the mean per call counts the last as 0
  expect_equal(ret$change_us, 4000 * 39 / 40, tolerance = 0.01)
  expect_true(ret$lo_us > 3800 && ret$hi_us < 4100)
  others <- ph[ph$phase != "return", ]
  expect_true(all(others$lo_us < 0 & others$hi_us > 0 | abs(others$change_us) < 30))
  expect_equal(cmp$cells$carrier, "return")
  expect_equal(c(cmp$cells$base_gps_per_sample, cmp$cells$cand_gps_per_sample), c(1, 1))
  expect_gt(ret$share, 0.97)
  # the phases' means add up to the mean call
  expect_equal(cmp$cells$cand_call_us - cmp$cells$base_call_us, sum(ph$change_us))
  expect_equal(ret$cand_median_us - ret$base_median_us, 4000, tolerance = 0.01)
  txt <- anatomy_text(cmp)
  expect_true(any(grepl("most of the change is in return", txt, fixed = TRUE)))
  js <- jsonlite::fromJSON(anatomy_json(cmp))
  expect_equal(js$cells$carrier, "return")
  expect_equal(nrow(js$phases), length(ANATOMY_PHASES$normal))
})

test_that("anatomy_compare: an A/A pair names no phase with a change it cannot tell from zero", {
  cmp <- anatomy_compare(read_anatomy(anatomy_db(extra = 0), matrix = "anat"), "after", "planted", B = 500)
  expect_true(all(abs(cmp$phases$change_us) < 40))
  expect_false(any(cmp$phases$lo_us > 10 | cmp$phases$hi_us < -10))
})

test_that("anatomy_compare: no common cell says so", {
  cmp <- anatomy_compare(read_anatomy(anatomy_db(), matrix = "anat"), "after", "nosuch")
  expect_null(cmp$phases)
  expect_match(anatomy_text(cmp), "no cell has whole traced runs")
})

test_that("plot_anatomy: paired bars per phase", {
  skip_if_not_installed("ggplot2")
  cmp <- anatomy_compare(read_anatomy(anatomy_db(), matrix = "anat"), "after", "planted", B = 200)
  p <- plot_anatomy(cmp)
  expect_s3_class(p, "ggplot")
  f <- tempfile(fileext = ".png")
  ggplot2::ggsave(f, p, width = 8, height = 4, dpi = 60)
  expect_gt(file.size(f), 1000)
})

test_that("tracing_overhead: a traced cell against the same cell untraced, runs as the unit", {
  p <- new_db()
  for (r in 1:4) {
    add_run(p, "after", cell = "v1-n1/normal/w1-r0", rep = r, matrix = "ov",
            samples_ns = rep(12000e3 + 100e3 * r, 50))
    add_run(p, "after", cell = "v1-n1/normal/w1-r0/k=trace", rep = r, matrix = "ov", kconfig = "trace",
            samples_ns = rep(12500e3 + 100e3 * r, 50))
  }
  add_run(p, "after", cell = "v1-n1/normal/w1-r0/k=trace", rep = 5, matrix = "ov", outcome = "timeout")
  ov <- tracing_overhead(p, matrix = "ov", B = 500)
  expect_equal(nrow(ov), 1)
  expect_equal(ov$cell, "v1-n1/normal/w1-r0")
  expect_equal(c(ov$untraced_runs, ov$traced_runs), c(4, 4))
  expect_equal(ov$change, 12750 / 12250 - 1)
  expect_true(ov$lo < ov$change && ov$change < ov$hi && ov$lo > 0)
  expect_match(tracing_overhead_text(ov)[3], "v1-n1/normal/w1-r0")
  expect_null(tracing_overhead(p, matrix = "nosuch"))
})

test_that("anatomy_describe: one variant's phases in call order, shares adding up to 1", {
  d <- anatomy_describe(read_anatomy(anatomy_db(), matrix = "anat"), "after")
  expect_equal(d$phase, ANATOMY_PHASES$normal)
  expect_equal(sum(d$share), 1)
  expect_true(all(d$runs == 5 & d$calls %in% c(200, 195)))
  expect_match(anatomy_describe_text(d, "after")[1], "after v1-n1/normal/w1-r0 \\(normal GPs\\): 5 runs")
  expect_null(anatomy_describe(read_anatomy(anatomy_db(), matrix = "anat"), "nosuch"))
})

test_that("gate: traced runs are never gated", {
  p <- new_db()
  for (r in 1:4) {
    add_run(p, "a", cell = "v1-n1/normal/w1-r0/k=trace", rep = r, kconfig = "trace",
            samples_ns = rep(12000e3, 20))
    add_run(p, "b", cell = "v1-n1/normal/w1-r0/k=trace", rep = r, kconfig = "trace",
            samples_ns = rep(16000e3, 20))
  }
  expect_true(all(is_traced(read_runs(p))))
  expect_false(any(is_traced(data.frame(kconfig = c(NA, "tiny", "leaf2")))))
  g <- gate(p, "a", "b")
  expect_equal(nrow(g$cells), 0)
  expect_equal(g$status, 3L)	# nothing to gate: not enough data, never a verdict on traced runs
})

test_that("write_report: a section on where the time goes, traced runs not gated", {
  out <- tempfile("report")
  r <- write_report(anatomy_db(), out, matrix = "anat", baseline = "after", plots = FALSE, R = 200)
  md <- readLines(file.path(out, "report.md"))
  expect_true(any(md == "## Where the time goes (traced runs)"))
  expect_true(any(grepl("most of the change is in return", md, fixed = TRUE)))
  expect_equal(nrow(r$comparisons$planted$cells), 0)	# the traced cells were not gated
})
