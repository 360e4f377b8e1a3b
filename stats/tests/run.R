#!/usr/bin/env Rscript
# Run the rcuwb statistics test suite.
#
#   Rscript stats/tests/run.R [--junit FILE]
#
# Prints testthat's progress table, then one final line
#   stats: N passed, M failed
# (N, M counted in tests, i.e. test_that() blocks; skipped tests are listed
# on the line before). Exits 1 when any test failed or errored.
# The tests run against the package in stats/ (DESCRIPTION, R/*.R), loaded
# from source with pkgload::load_all(): nothing is installed.

local({
  args <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", args[grepl("^--file=", args)])
  here <- if (length(f)) dirname(normalizePath(f[1])) else getwd()
  targs <- commandArgs(trailingOnly = TRUE)
  junit <- NULL
  if (length(targs) >= 2 && targs[1] == "--junit") junit <- targs[2]
  if (length(targs) && is.null(junit)) {
    cat("usage: run.R [--junit FILE]\n", file = stderr())
    quit(save = "no", status = 64)
  }

  suppressPackageStartupMessages(library(testthat))
  loaded <- tryCatch({
    pkgload::load_all(file.path(here, ".."), helpers = FALSE, quiet = TRUE)
    TRUE
  }, error = function(e) {
    cat("stats: the package did not load: ", conditionMessage(e), "\n", sep = "")
    FALSE
  })
  if (!loaded) {
    cat("stats: 0 passed, 1 failed\n")
    quit(save = "no", status = 1)
  }
  # live progress on a terminal, a plain summary (dots + failure details) in CI
  reporter <- if (isatty(stdout())) {
    ProgressReporter$new(show_praise = FALSE)
  } else {
    SummaryReporter$new(show_praise = FALSE)
  }
  if (!is.null(junit)) {
    reporter <- MultiReporter$new(list(reporter, JunitReporter$new(file = junit)))
  }
  res <- tryCatch(
    testthat::test_dir(file.path(here, "testthat"), reporter = reporter,
                       stop_on_failure = FALSE, stop_on_warning = FALSE),
    error = function(e) {
      cat("stats: test run aborted: ", conditionMessage(e), "\n", sep = "")
      NULL
    }
  )
  if (is.null(res)) {
    cat("stats: 0 passed, 1 failed\n")
    quit(save = "no", status = 1)
  }
  df <- as.data.frame(res)
  bad <- df$failed > 0 | df$error
  skipped <- !bad & df$skipped
  n_failed <- sum(bad)
  n_passed <- sum(!bad & !skipped)
  if (any(skipped)) {
    cat(sprintf("stats: %d skipped: %s\n", sum(skipped),
                paste(df$test[skipped], collapse = "; ")))
  }
  cat(sprintf("stats: %d passed, %d failed\n", n_passed, n_failed))
  quit(save = "no", status = if (n_failed > 0) 1 else 0)
})
