# The regression gate on small synthetic databases.

base5 <- c(100, 102, 98, 101, 99)

test_that("status 0: no change", {
  p <- gate_db(base5, c(101, 99, 100, 103, 97))
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 0L)
  expect_equal(r$status_name, "PASS")
  expect_equal(r$verdicts$verdict, "pass")
  expect_match(r$text[1], "PASS \\(status 0\\)")
})

test_that("status 0: significant change below the threshold, or a speedup", {
  tight <- c(100, 100.5, 99.5, 100.2, 99.8)
  p <- gate_db(tight, tight * 1.03)
  r <- gate(p, "stock", "cand", threshold = 0.05)
  expect_true(r$comparisons$significant)
  expect_equal(r$status, 0L)
  p <- gate_db(base5, base5 * 0.7)
  expect_equal(gate(p, "stock", "cand")$status, 0L)
})

test_that("status 1: significant slowdown beyond the threshold names cell, size and CI", {
  p <- gate_db(base5, c(120, 121, 119, 122, 118), cells = c("v4-n1/normal/w1-r0", "v4-n2/normal/w1-r0"))
  r <- gate(p, "stock", "cand", threshold = 0.05)
  expect_equal(r$status, 1L)
  expect_equal(r$verdicts$verdict, c("slowdown", "slowdown"))
  line <- grep("SLOWDOWN +v4-n1/normal/w1-r0", r$text, value = TRUE)
  expect_length(line, 1)
  expect_match(line, "p50 \\+20.00% \\[96.8% CI \\+17.00%, \\+23.00%\\] p_holm=0.016 n=5\\+5")
  # the same data pass with a 25% threshold
  expect_equal(gate(p, "stock", "cand", threshold = 0.25)$status, 0L)
})

test_that("status 2: hard failure in the candidate, named, and it outranks a slowdown", {
  p <- gate_db(base5, c(120, 121, 119, 122, 118))
  add_run(p, "cand", "v4-n1/normal/w1-r0", outcome = "deadlock", rep = 9,
          detail = "rcu_sched kthread starved <&\"> for 21002 jiffies")
  add_run(p, "cand", "v4-n2/normal/w1-r0", outcome = "badness", rep = 1, kind = "probe")
  add_run(p, "stock", "v4-n1/normal/w1-r0", outcome = "crash", rep = 9)
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 2L)
  expect_equal(sort(r$hard_failures$outcome), c("badness", "deadlock"))
  expect_equal(r$verdicts$verdict, c("hard-failure", "hard-failure"))
  expect_true(any(grepl("HARD FAILURE +v4-n1/normal/w1-r0 +run [0-9]+ \\(rcuscale rep 9\\) deadlock: rcu_sched", r$text)))
  expect_true(any(grepl("SLOWDOWN|\\+20.00%", r$verdicts$message[1])))
  # harness failures (timeout etc.) are not hard failures
  p2 <- gate_db(base5, base5)
  add_run(p2, "cand", outcome = "timeout", rep = 7)
  add_run(p2, "cand", outcome = "qemu-failed", rep = 8)
  expect_equal(gate(p2, "stock", "cand")$status, 0L)
})

test_that("status 3: too few ok runs, with how many more are needed", {
  p <- gate_db(c(100, 101, 99), c(100, 102))
  r <- gate(p, "stock", "cand", min_runs = 5)
  expect_equal(r$status, 3L)
  expect_equal(r$verdicts$needed_old, 2)
  expect_equal(r$verdicts$needed_new, 3)
  expect_match(r$verdicts$message, "need 2 more stock runs and 3 more cand runs")
  # failed runs do not count
  p2 <- gate_db(base5, base5[1:4])
  add_run(p2, "cand", outcome = "timeout")
  r2 <- gate(p2, "stock", "cand")
  expect_equal(r2$status, 3L)
  expect_match(r2$verdicts$message, "need 1 more cand run$")
})

test_that("status 3: a cell with no candidate runs, or nothing at all", {
  p <- gate_db(base5, base5)
  for (i in 1:5) add_run(p, "stock", "v8-n1/normal/w1-r0", samples_ns = samples_with_p50(100))
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 3L)
  expect_equal(r$verdicts$verdict, c("pass", "insufficient"))
  r0 <- gate(new_db(), "stock", "cand")
  expect_equal(r0$status, 3L)
  x <- gate_junit(r0)
  expect_true(xml_well_formed(x))
  expect_match(x, 'tests="1" failures="0" errors="0" skipped="1"', fixed = TRUE)
})

test_that("status 3 when Holm makes every cell undecidable; 0 without the power check", {
  cells <- sprintf("v%d-n1/normal/w1-r0", 1:7)
  p <- gate_db(base5, c(101, 99, 100, 103, 97), cells = cells)
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 3L)
  expect_true(all(r$verdicts$verdict == "underpowered"))
  expect_match(r$verdicts$message[1], "need 1 more stock and 1 more cand run\\(s\\) \\(6 per side\\)")
  expect_equal(gate(p, "stock", "cand", check_power = FALSE)$status, 0L)
})

test_that("JSON output parses and carries the status and cells", {
  p <- gate_db(base5, c(120, 121, 119, 122, 118))
  r <- gate(p, "stock", "cand")
  j <- jsonlite::fromJSON(gate_json(r))
  expect_equal(j$status, 1)
  expect_equal(j$status_name, "SLOWDOWN")
  expect_equal(j$cells$verdict, "slowdown")
  expect_equal(j$comparisons$rel_change, 0.2)
  expect_false(j$caveats$oversubscribed)
})

test_that("JUnit XML is well-formed with failure / error / skipped per cell", {
  p <- gate_db(base5, c(120, 121, 119, 122, 118), cells = "v4-n1/normal/w1-r0")
  gate_db(base5, base5, cells = "v4-n2/normal/w1-r0", path = p)
  gate_db(base5[1:2], base5[1:2], cells = "v2-n1/normal/w1-r0", path = p)
  add_run(p, "cand", "v8-n1/normal/w1-r0", outcome = "deadlock",
          detail = "hung <task> & \"quote\"\001")
  r <- gate(p, "stock", "cand")
  x <- gate_junit(r)
  expect_true(xml_well_formed(x))
  expect_equal(lengths(regmatches(x, gregexpr("<testcase ", x))), 4)
  expect_equal(lengths(regmatches(x, gregexpr("<failure ", x))), 1)
  expect_equal(lengths(regmatches(x, gregexpr("<error ", x))), 1)
  expect_equal(lengths(regmatches(x, gregexpr("<skipped ", x))), 1)
  expect_match(x, '<testsuites name="rcuwb gate" tests="4" failures="1" errors="1" skipped="1">', fixed = TRUE)
  expect_match(x, "hung &lt;task&gt; &amp; &quot;quote&quot;", fixed = TRUE)
  expect_false(grepl("\001", x, fixed = TRUE))
  # the mini checker itself rejects broken XML
  expect_error(xml_well_formed("<a><b></a></b>"))
  expect_error(xml_well_formed("<a x=\"1 & 2\"/>"))
})

test_that("host-busy runs are left out: the gate counts them as missing and says why", {
  p <- gate_db(base5, c(101, 99, 100, 103, 97))
  # a sixth candidate run, 3x slower, while other work held 1.5 of 8 host PUs
  add_run(p, "cand", "v4-n1/normal/w1-r0", samples_ns = samples_with_p50(300), rep = 6,
          host_other_cpu = 1.5)
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 0L)
  expect_equal(r$comparisons$n_new, 5)
  expect_match(r$caveat_text, "HOST BUSY: 1 run left out")
  # under the share (0.3 of 8 PUs < 5%): an ordinary run
  add_run(p, "cand", "v4-n1/normal/w1-r0", samples_ns = samples_with_p50(101), rep = 7,
          host_other_cpu = 0.3)
  expect_equal(gate(p, "stock", "cand")$comparisons$n_new, 6)
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(rt$status[rt$rep == 6 & rt$variant == "cand"], "host-busy")
  expect_false(rt$usable[rt$rep == 6 & rt$variant == "cand"])
  # a database from before schema 2 has no such column: nothing is busy
  expect_equal(host_busy(data.frame(host_pus = c(2, 8))), c(FALSE, FALSE))
})
