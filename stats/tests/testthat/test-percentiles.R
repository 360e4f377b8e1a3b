# Per-run percentiles as kvm-recheck-rcuscale.sh defines them.

test_that("kernel_rank is floor(n * pct / 100), at least 1", {
  expect_equal(kernel_rank(1, c(50, 90, 99)), c(1, 1, 1))
  expect_equal(kernel_rank(2, c(50, 90, 99)), c(1, 1, 1))
  expect_equal(kernel_rank(3, c(50, 90, 99)), c(1, 2, 2))
  expect_equal(kernel_rank(10, c(50, 90, 99)), c(5, 9, 9))
  expect_equal(kernel_rank(100, c(50, 90, 99)), c(50, 90, 99))
  expect_equal(kernel_rank(101, c(50, 90, 99)), c(50, 90, 99))
  expect_equal(kernel_rank(1000, c(50, 90, 99)), c(500, 900, 990))
})

test_that("n = 1: every statistic is the single sample", {
  s <- kernel_percentiles(12345)
  expect_equal(s$n, 1)
  expect_equal(unlist(s[, -1], use.names = FALSE), rep(12.345, 6))
})

test_that("n = 2: all percentiles pick the smaller sample", {
  s <- kernel_percentiles(c(3000, 1000))
  expect_equal(s$n, 2)
  expect_equal(s$min_us, 1)
  expect_equal(s$max_us, 3)
  expect_equal(s$avg_us, 2)
  expect_equal(c(s$p50_us, s$p90_us, s$p99_us), c(1, 1, 1))
})

test_that("n = 10: p50 = 5th, p90 = p99 = 9th smallest", {
  s <- kernel_percentiles(rev(1:10) * 1000)
  expect_equal(c(s$min_us, s$p50_us, s$p90_us, s$p99_us, s$max_us), c(1, 5, 9, 9, 10))
  expect_equal(s$avg_us, 5.5)
})

test_that("n = 101: p50 = 50th, p90 = 90th, p99 = 99th smallest", {
  x <- sample(1:101) * 1000
  s <- kernel_percentiles(x)
  expect_equal(c(s$min_us, s$p50_us, s$p90_us, s$p99_us, s$max_us), c(1, 50, 90, 99, 101))
  expect_equal(s$avg_us, 51)
})

test_that("ties are handled by plain sorting", {
  s <- kernel_percentiles(c(5, 5, 9, 1, 5) * 1000)
  expect_equal(c(s$p50_us, s$p90_us, s$p99_us), c(5, 5, 5))
  expect_equal(s$avg_us, 5)
})

test_that("nanoseconds become microseconds without rounding", {
  s <- kernel_percentiles(c(1500, 2501))
  expect_equal(s$min_us, 1.5)
  expect_equal(s$max_us, 2.501)
})

test_that("no samples gives NA statistics", {
  s <- kernel_percentiles(numeric())
  expect_equal(s$n, 0)
  expect_true(all(is.na(unlist(s[, -1]))))
  expect_equal(nrow(run_stats(data.frame(run_id = numeric(), duration_ns = numeric()))), 0)
})

test_that("run_stats (vectorised) equals kernel_percentiles run by run", {
  set.seed(7)
  sizes <- c(1, 2, 10, 101, 37)
  d <- do.call(rbind, lapply(seq_along(sizes), function(i) {
    data.frame(run_id = i * 10, duration_ns = round(rlnorm(sizes[i], 10, 1)))
  }))
  d <- d[sample(nrow(d)), ]
  rs <- run_stats(d)
  expect_equal(rs$run_id, sort(unique(d$run_id)))
  for (i in seq_len(nrow(rs))) {
    ref <- kernel_percentiles(d$duration_ns[d$run_id == rs$run_id[i]])
    expect_equal(unlist(rs[i, -1]), unlist(ref), ignore_attr = TRUE)
  }
})

test_that("matches the kernel's awk program on a synthetic console.log", {
  # The kernel tree: $RCUWB_KERNEL_SRC, or the one build/tree.sh recorded in
  # the cache.  `make check` exports RCUWB_CACHE and makes the tree first, so
  # there a missing tree is a failure; only a bare run.R may skip.
  src <- Sys.getenv("RCUWB_KERNEL_SRC", "")
  under_make <- nzchar(Sys.getenv("RCUWB_CACHE", ""))
  if (!nzchar(src)) {
    cache <- Sys.getenv("RCUWB_CACHE", file.path(Sys.getenv("HOME"), ".cache", "rcuwb"))
    pristine <- file.path(cache, "src", "pristine")
    src <- if (file.exists(pristine)) readLines(pristine, n = 1) else ""
  }
  script <- file.path(src, "tools/testing/selftests/rcutorture/bin/kvm-recheck-rcuscale.sh")
  need <- function(ok, why) {
    if (!ok && under_make) fail(why)
    skip_if_not(ok, why)
  }
  need(file.exists(script), paste("kernel source tree not available: no", script, "(make tree)"))
  need(nzchar(Sys.which("gawk")), "gawk not installed (make deps)")
  lines <- readLines(script)
  start <- grep("^awk '$", lines)
  end <- grep("^}'$", lines)
  need(length(start) == 1 && length(end) == 1, paste("unexpected layout of", script))
  prog <- c(lines[(start + 1):(end - 1)], "}")
  prog_file <- tempfile(fileext = ".awk")
  writeLines(prog, prog_file)
  for (n in c(1, 2, 10, 101, 250)) {
    dur <- sample(1000:999999, n, replace = TRUE)
    log <- c(sprintf("rcu-scale: start: 1 end: 2 duration: 1 gps: %d batches: 0", n),
             sprintf("rcu-scale: %4d writer-duration: %5d %d", 0, seq_len(n) - 1, dur))
    log_file <- tempfile()
    writeLines(log, log_file)
    out <- system2("gawk", c("-f", shQuote(prog_file), shQuote(log_file)), stdout = TRUE)
    grab <- function(pat) as.numeric(sub(".*: ([0-9.e+-]+).*", "\\1", grep(pat, out, value = TRUE)))
    s <- kernel_percentiles(dur)
    expect_equal(s$p50_us, grab("^50th"), tolerance = 1e-5)
    expect_equal(s$p90_us, grab("^90th"), tolerance = 1e-5)
    expect_equal(s$p99_us, grab("^99th"), tolerance = 1e-5)
    expect_equal(s$min_us, grab("^Minimum"), tolerance = 1e-5)
    expect_equal(s$max_us, grab("^Maximum"), tolerance = 1e-5)
    expect_equal(s$avg_us, grab("^Average"), tolerance = 1e-5)
  }
})
