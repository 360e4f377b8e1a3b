# Per-cell summaries: medians over runs with bootstrap CIs.

test_that("row_medians equals apply(m, 1, median) for odd and even widths", {
  set.seed(3)
  for (n in c(1, 2, 5, 6)) {
    m <- matrix(rnorm(50 * n), nrow = 50)
    expect_equal(row_medians(m), apply(m, 1, median))
  }
})

test_that("boot_median_ci: n = 0 and n = 1 are degenerate", {
  expect_true(all(is.na(boot_median_ci(numeric()))))
  b <- boot_median_ci(42)
  expect_equal(b[["median"]], 42)
  expect_true(is.na(b[["lo"]]) && is.na(b[["hi"]]))
})

test_that("boot_median_ci is reproducible, seed-dependent, and leaves the RNG alone", {
  x <- c(10, 12, 11, 15, 9, 30, 11)
  set.seed(99)
  before <- .Random.seed
  a <- boot_median_ci(x, seed = 1)
  expect_identical(.Random.seed, before)
  expect_identical(a, boot_median_ci(x, seed = 1))
  expect_equal(a[["median"]], 11)
  # the CI is the 2.5% / 97.5% quantile of R medians of resampled runs
  y <- c(10.13, 12.31, 11.72, 15.24, 9.41, 30.83, 11.15, 13.02)
  ref <- with_seed(5, {
    m <- matrix(y[sample.int(8, 8 * 2500, replace = TRUE)], nrow = 2500)
    quantile(apply(m, 1, median), c(0.025, 0.975), names = FALSE)
  })
  expect_equal(unname(boot_median_ci(y, R = 2500, seed = 5)[2:3]), ref)
  expect_true(a[["lo"]] <= 11 && a[["hi"]] >= 11)
  expect_true(a[["lo"]] >= min(x) && a[["hi"]] <= max(x))
  expect_error(boot_median_ci(x, R = 100), "R >= 2000")
})

test_that("constant runs give a zero-width CI", {
  b <- boot_median_ci(rep(7, 5))
  expect_equal(unname(b), c(7, 7, 7))
})

summary_db <- function() {
  p <- new_db()
  cell <- "v4-n1/normal/w1-r0"
  for (i in 1:3) add_run(p, "stock", cell, samples_ns = samples_with_p50(c(100, 200, 300)[i]), rep = i)
  add_run(p, "stock", cell, outcome = "timeout", rep = 4)
  add_run(p, "stock", cell, outcome = "crash", rep = 5)
  add_run(p, "stock", cell, outcome = "ok", rep = 6) # ok but no samples
  add_run(p, "cand", cell, outcome = "deadlock", rep = 1)
  add_run(p, "cand", cell, outcome = "timeout", rep = 2)
  add_run(p, "stock", "v2-n1/normal/w1-r0", samples_ns = samples_with_p50(50), rep = 1)
  p
}

test_that("summarise_cells counts ok and failed runs separately, by outcome", {
  p <- summary_db()
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  cs <- summarise_cells(rt)
  s <- cs[cs$variant == "stock" & cs$cell == K("v4-n1/normal/w1-r0"), ]
  expect_equal(s$runs, 6)
  expect_equal(s$ok, 3)
  expect_equal(s$failed, 3)
  expect_equal(s$outcomes, "ok=3 crash=1 ok-no-samples=1 timeout=1")
  expect_equal(s$samples, 30)
  expect_equal(s$p50_median, 200)
  expect_true(s$p50_lo >= 100 && s$p50_hi <= 300)
})

test_that("a cell whose runs all failed has ok = 0 and NA statistics", {
  p <- summary_db()
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  cs <- summarise_cells(rt)
  s <- cs[cs$variant == "cand", ]
  expect_equal(nrow(s), 1)
  expect_equal(c(s$runs, s$ok, s$failed, s$samples), c(2, 0, 2, 0))
  expect_true(all(is.na(unlist(s[, grep("^p[0-9]+_", names(s))]))))
})

test_that("a single-run cell has a median but no CI", {
  p <- summary_db()
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  s <- summarise_cells(rt)
  s <- s[s$cell == K("v2-n1/normal/w1-r0"), ]
  expect_equal(s$p50_median, 50)
  expect_true(is.na(s$p50_lo))
})

test_that("empty inputs give empty summaries", {
  p <- new_db()
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(nrow(rt), 0)
  cs <- summarise_cells(rt)
  expect_equal(nrow(cs), 0)
  expect_true(all(c("cell", "variant", "ok", "p50_median", "p99_hi") %in% names(cs)))
})

test_that("read_runs filters by matrix, variant and start time", {
  p <- new_db()
  add_run(p, "a", matrix = "m1", started_at = "2025-01-01T00:00:00Z")
  add_run(p, "b", matrix = "m1", started_at = "2025-02-01T00:00:00Z")
  add_run(p, "a", matrix = "m2", started_at = "2025-03-01 00:00:00")
  expect_equal(nrow(read_runs(p)), 3)
  expect_equal(nrow(read_runs(p, matrix = "m1")), 2)
  expect_equal(nrow(read_runs(p, variants = "a")), 2)
  expect_equal(nrow(read_runs(p, since = "2025-01-15")), 2)
  expect_equal(nrow(read_runs(p, matrix = "m1", variants = "a", since = "2025-01-15")), 0)
})

test_that("durations beyond 32 bits are read as exact doubles", {
  p <- new_db()
  id <- add_run(p, "a", samples_ns = c(5e9, 6e9 + 1))
  s <- read_samples(p)
  expect_type(s$duration_ns, "double")
  expect_equal(s$duration_ns, c(5e9, 6e9 + 1))
})

test_that("a cell measured by two matrices keeps its name and is summarised per matrix", {
  p <- new_db()
  cell <- "v2-n1/normal/w1-r0"
  for (i in 1:3) {
    add_run(p, "a", cell, samples_ns = samples_with_p50(100), rep = i, matrix = "quick")
    add_run(p, "a", cell, samples_ns = samples_with_p50(900), rep = i, matrix = "full")
  }
  add_run(p, "a", "v8-n1/normal/w1-r0", samples_ns = samples_with_p50(5), matrix = "full")
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_setequal(unique(rt$cell), K(c("v2-n1/normal/w1-r0", "v8-n1/normal/w1-r0")))
  cs <- summarise_cells(rt)
  expect_equal(cs$p50_median[cs$cell == K(cell) & cs$matrix == "quick"], 100)
  expect_equal(cs$p50_median[cs$cell == K(cell) & cs$matrix == "full"], 900)
  expect_equal(cs$matrix[cs$cell == K("v8-n1/normal/w1-r0")], "full")
  # one matrix loaded: the same names
  rt1 <- build_run_table(read_runs(p, matrix = "quick"), run_stats(read_samples(p, matrix = "quick")))
  expect_equal(unique(rt1$cell), K(cell))
  g <- plot_latency_vs_vcpus(cs, rt)
  expect_equal(rlang::as_label(g$mapping$shape), "matrix")
  expect_equal(length(unique(ggplot2::ggplot_build(g)$data[[2]]$shape)), 2)
})
