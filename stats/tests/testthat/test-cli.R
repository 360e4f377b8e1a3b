# Entry scripts: argument parsing, exit codes, output files.

test_that("parse_cli accepts --k v, --k=v, flags and optional values", {
  spec <- c(db = "value", json = "optional", quiet = "flag")
  expect_equal(parse_cli(c("--db", "x.db", "--json"), spec), list(db = "x.db", json = TRUE))
  expect_equal(parse_cli(c("--json", "out.json", "--quiet"), spec), list(json = "out.json", quiet = TRUE))
  expect_equal(parse_cli(c("--db=a=b"), spec), list(db = "a=b"))
  expect_error(parse_cli("--nope", spec), "unknown option '--nope'", class = "rcuwb_usage")
  expect_error(parse_cli("--db", spec), "needs a value", class = "rcuwb_usage")
  expect_error(parse_cli("stray", spec), "unexpected argument 'stray'", class = "rcuwb_usage")
})

test_that("value parsers name the bad value", {
  expect_equal(parse_fraction("5%", "threshold"), 0.05)
  expect_equal(parse_fraction("0.05", "threshold"), 0.05)
  expect_equal(parse_fraction("12.5%", "threshold"), 0.125)
  expect_error(parse_fraction("abc", "threshold"), "bad value for --threshold: 'abc'", class = "rcuwb_usage")
  expect_error(parse_fraction("5", "threshold"), "bad value for --threshold: '5'", class = "rcuwb_usage")
  expect_error(parse_alpha("1.5"), "bad value for --alpha: '1.5'", class = "rcuwb_usage")
  expect_error(parse_int("x", "min-runs"), "bad value for --min-runs: 'x'", class = "rcuwb_usage")
  expect_error(parse_int("100", "resamples", 2000), "'100'", class = "rcuwb_usage")
  expect_error(parse_metrics("p50,p95"), "bad value for --metrics: 'p95'", class = "rcuwb_usage")
  expect_error(parse_since("yesterday"), "bad value for --since: 'yesterday'", class = "rcuwb_usage")
  expect_equal(parse_since("2025-01-31T10:00:00Z"), "2025-01-31T10:00:00Z")
})

test_that("rcuwb-gate.R exits with the gate status and writes JSON and JUnit", {
  p <- gate_db(c(100, 102, 98, 101, 99), c(120, 121, 119, 122, 118))
  junit <- tempfile(fileext = ".xml")
  json <- tempfile(fileext = ".json")
  r <- run_script("rcuwb-gate.R", c("--db", p, "--baseline", "stock", "--candidate", "cand",
                              "--threshold", "5%", "--alpha", "0.05", "--json", json,
                              "--junit", junit))
  expect_equal(r$status, 1)
  expect_match(r$stdout[1], "SLOWDOWN \\(status 1\\)")
  expect_equal(jsonlite::fromJSON(json)$status, 1)
  expect_true(xml_well_formed(paste(readLines(junit), collapse = "\n")))
  # --json alone: JSON on stdout, text on stderr
  r2 <- run_script("rcuwb-gate.R", c("--db", p, "--baseline", "stock", "--candidate", "cand",
                               "--threshold=25%", "--json"))
  expect_equal(r2$status, 0)
  expect_equal(jsonlite::fromJSON(paste(r2$stdout, collapse = "\n"))$status_name, "PASS")
  expect_match(r2$stderr[1], "PASS")
})

test_that("rcuwb-gate.R rejects bad input with one line naming the value (exit 64)", {
  p <- gate_db(c(100, 102), c(120, 121))
  bad <- list(
    list(c("--db", p, "--baseline", "stock", "--candidate", "cand", "--threshold", "abc"),
         "bad value for --threshold: 'abc'"),
    list(c("--db", p, "--baseline", "stokc", "--candidate", "cand"),
         "bad value for --baseline: 'stokc' \\(not in the database; known: cand, stock\\)"),
    list(c("--db", file.path(tempdir(), "nope.sqlite"), "--baseline", "a", "--candidate", "b"),
         "bad value for --db: '.*nope.sqlite' \\(no such file\\)"),
    list(c("--db", p, "--candidate", "cand"), "missing required option '--baseline'")
  )
  for (b in bad) {
    r <- run_script("rcuwb-gate.R", b[[1]])
    expect_equal(r$status, 64)
    expect_length(r$stderr, 1)
    expect_match(r$stderr, paste0("^rcuwb gate: ", b[[2]]))
  }
})

test_that("rcuwb-report.R writes the report and rejects bad input", {
  p <- gate_db(c(100, 102, 98), c(120, 121, 119))
  out <- file.path(tempdir(), "cli-report")
  r <- run_script("rcuwb-report.R", c("--db", p, "--out", out, "--baseline", "stock",
                                "--candidate", "cand", "--no-plots"))
  expect_equal(r$status, 0)
  expect_true(file.exists(file.path(out, "report.md")))
  expect_true(file.exists(file.path(out, "report.html")))
  r2 <- run_script("rcuwb-report.R", c("--db", p, "--out", out, "--metrics", "p42"))
  expect_equal(r2$status, 64)
  expect_equal(r2$stderr, "rcuwb report: bad value for --metrics: 'p42' (known metrics: p50, p90, p99)")
})
