# A schedule's history (R/history.R): commits from git, the analysis on a
# database of rounds, change-point state across analyses, the dashboard.

# A database of schedule `schedule`: commits c01..c{n}, k runs each, per-run
# mean `base_us` (1% jitter), times (1 + d) from commit `at` on.
history_db <- function(n = 10, k = 3, d = 0.10, at = 6, base_us = 12000, schedule = "s",
                       path = new_db(), seed = 7) {
  with_seed(seed, {
    for (i in seq_len(n)) {
      for (r in seq_len(k)) {
        v <- base_us * (1 + 0.01 * stats::rnorm(1)) * (if (i >= at) 1 + d else 1)
        id <- add_run(path, sprintf("s.c%02d", i), cell = "v1-n1/normal/w1-r0",
                      samples_ns = round(samples_with_p50(v) / 1.22),
                      rep = r, matrix = sprintf("%s@c%02d", schedule, i))
        con <- DBI::dbConnect(RSQLite::SQLite(), path)
        DBI::dbExecute(con, "UPDATE runs SET schedule = ?, commit_id = ? WHERE id = ?",
                       params = list(schedule, sprintf("c%02d", i), id))
        DBI::dbDisconnect(con)
      }
    }
  })
  path
}
commits_of <- function(n) data.frame(commit = sprintf("c%02d", seq_len(n)), position = seq_len(n),
                                     date = "2026-12-01", subject = paste("subject", seq_len(n)))

test_that("history_commits: first-parent order of a real git branch, oldest first", {
  skip_if(Sys.which("git") == "", "git not installed")
  repo <- tempfile("repo")
  dir.create(repo)
  g <- function(...) system2("git", c("-C", shQuote(repo), ...), stdout = TRUE, stderr = TRUE)
  g("init", "-q")
  for (i in 1:3) {
    writeLines(as.character(i), file.path(repo, "f"))
    g("add", "f")
    g("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", shQuote(paste("commit", i)))
  }
  cm <- history_commits(repo, "HEAD")
  expect_equal(cm$subject, paste("commit", 1:3))
  expect_equal(cm$position, 1:3)
  expect_equal(cm$commit[3], g("rev-parse", "HEAD"))
  expect_error(history_commits(repo, "no-such-branch"), "git log no-such-branch")
})

test_that("history_update finds the shifted commit, stores it once, keeps its state", {
  db <- history_db()
  # another schedule's runs (a 50% shift at c03) are not this schedule's history
  history_db(n = 6, d = 0.5, at = 3, schedule = "other", path = db)
  h <- history_update(db, "s", commits_of(10), stats = "mean", R = 99)
  expect_equal(nrow(h$measured), 10)
  expect_equal(h$changepoints$first_bad, "c06")
  expect_equal(h$changepoints$last_good, "c05")
  expect_true(h$changepoints$is_new)
  expect_gt(h$changepoints$lo, 0.05)
  expect_lt(h$changepoints$lo, 0.10)
  expect_gt(h$changepoints$hi, 0.10)
  again <- history_update(db, "s", commits_of(10), stats = "mean", R = 99)
  expect_equal(again$changepoints$id, h$changepoints$id)
  expect_false(again$changepoints$is_new)
  with_db(db, function(con) changepoint_set_state(con, h$changepoints$id, "invalid", "test"), write = TRUE)
  third <- history_update(db, "s", commits_of(10), stats = "mean", R = 99)
  expect_equal(third$changepoints$state, "invalid")
  expect_equal(nrow(third$stored), 1)
})

test_that("history_update: a change smaller than min_change is not reported", {
  db <- history_db(d = 0.03)
  expect_equal(nrow(history_update(db, "s", commits_of(10), stats = "mean", R = 99,
                                   min_change = 0.05)$changepoints), 0)
  h <- history_update(db, "s", commits_of(10), stats = "mean", R = 99, min_change = 0.02)
  expect_gte(nrow(h$changepoints), 1)
  expect_true(all(abs(h$changepoints$size) >= 0.02))
})

test_that("history_update: no change point in an A/A history", {
  db <- history_db(d = 0)
  h <- history_update(db, "s", commits_of(10), R = 99)
  expect_equal(nrow(h$changepoints), 0)
  expect_match(history_text(h), "no change point")
  j <- jsonlite::fromJSON(history_json(h))
  expect_equal(j$new, 0)
  expect_equal(j$commits_measured, 10)
})

test_that("history_dashboard: a self-contained page with one chart per cell and statistic", {
  db <- history_db()
  h <- history_update(db, "s", commits_of(10), R = 99)
  out <- tempfile("dash")
  p <- history_dashboard(h, out)
  html <- paste(readLines(p[["html"]]), collapse = "\n")
  expect_equal(lengths(regmatches(html, gregexpr('<img class="chart"', html))), 2)
  expect_equal(lengths(regmatches(html, gregexpr('src="data:image/png;base64,', html))), 2)
  expect_false(grepl("https?://", html))
  expect_match(html, 'data-mode="normal"')
  md <- readLines(p[["md"]])
  expect_true(any(grepl("c05..c06", md, fixed = TRUE)))
  expect_true(file.exists(file.path(out, "charts", "chart-01.png")))
})

test_that("rcuwb-history.R: bad input is one line naming it", {
  db <- history_db(n = 2, d = 0)
  r <- run_script("rcuwb-history.R", c("--db", db, "list", "--state", "fixed"))
  expect_equal(r$status, 64)
  expect_equal(r$stderr, "rcuwb history: bad value for --state: 'fixed' (known: new, acknowledged, invalid)")
  r <- run_script("rcuwb-history.R", c("--db", db, "ack", "12", "--why", "x"))
  expect_equal(r$status, 64)
  expect_equal(r$stderr, "rcuwb history: no change point with id 12")
  r <- run_script("rcuwb-history.R", c("--db", db, "ack", "12"))
  expect_match(r$stderr, "ack needs --why TEXT")
})
