# The regression gate on small synthetic databases, with hand-checked
# numbers.  samples_with_p50(v) gives a run whose mean, p50 and p90 are all
# proportional to v, so every statistic sees the same relative change.

base5 <- c(100, 101, 102, 103, 104)
KEY <- "v4-n1/normal/w1-r0/h3/hz250-full-idle"

test_that("the stable cell key is built from the run's own fields", {
  p <- new_db()
  add_run(p, "a", "v2-n1/expedited/w1-r0/rcutree.x=1", boot_params = "rcutree.x=1",
          samples_ns = samples_with_p50(10), cmdline = "rcuscale.holdoff=2", hz = 1000L)
  add_run(p, "b", "v2-n1/expedited/w1-r0/rcuscale.holdoff=3", boot_params = "rcuscale.holdoff=3",
          samples_ns = samples_with_p50(10), cmdline = "rcuscale.holdoff=2")
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(rt$cell, c("v2-n1/expedited/w1-r0/h2/hz1000-full-idle/rcutree.x=1",
                          "v2-n1/expedited/w1-r0/h3/hz250-full-idle"))
  expect_equal(cell_key(rt, drop = c("config", "holdoff")),
               c("v2-n1/expedited/w1-r0/rcutree.x=1", "v2-n1/expedited/w1-r0"))
  # settings that differ in rcuscale's writers (more GPs per boot) match
  w <- rt[c(2, 2), ]
  w$nwriters <- c(1L, 4L)
  expect_equal(cell_key(w, drop = "config"),
               c("v2-n1/expedited/w1-r0/h3", "v2-n1/expedited/w4-r0/h3"))
  expect_equal(cell_key(w, drop = c("config", "writers")),
               c("v2-n1/expedited/w*-r0/h3", "v2-n1/expedited/w*-r0/h3"))
  # the same whatever else is loaded: a second matrix with the same cell
  add_run(p, "a", "v2-n1/expedited/w1-r0/rcutree.x=1", boot_params = "rcutree.x=1",
          samples_ns = samples_with_p50(10), cmdline = "rcuscale.holdoff=2", hz = 1000L,
          matrix = "other")
  rt2 <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(rt2$cell[1:2], rt$cell)
  expect_equal(rt2$cell[3], rt$cell[1])
  # pairing expedited with normal ignores the holdoff they were given
  expect_equal(cell_pair_key(c("v2-n1/normal/w1-r0/h0/hz250-full-idle",
                               "v2-n1/expedited/w1-r0/h2/hz250-full-idle")),
               rep("v2-n1/*/w1-r0/h*/hz250-full-idle", 2))
})

test_that("the cell key keeps Kconfig scenarios apart; tiny and older runs keep their keys", {
  p <- new_db()
  add_run(p, "a", "v1-n1/normal/w1-r0", samples_ns = samples_with_p50(10))
  add_run(p, "a", "v1-n1/normal/w1-r0", samples_ns = samples_with_p50(10), kconfig = "tiny")
  add_run(p, "a", "v1-n1/normal/w1-r0/k=tree", samples_ns = samples_with_p50(10), hz = 1000L,
          kconfig = "tree")
  add_run(p, "a", "v1-n1/normal/w1-r0/k=preempt-none", samples_ns = samples_with_p50(10),
          hz = 1000L, kconfig = "preempt-none", cmdline = "console=ttyS0 rcuperf.holdoff=2")
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(rt$cell, c("v1-n1/normal/w1-r0/h3/hz250-full-idle",
                          "v1-n1/normal/w1-r0/h3/hz250-full-idle",
                          "v1-n1/normal/w1-r0/h3/hz1000-full-idle/k=tree",
                          "v1-n1/normal/w1-r0/h2/hz1000-full-idle/k=preempt-none"))
  # two scenarios with the same HZ, preemption and NO_HZ are still two cells
  expect_equal(length(unique(cell_key(rt, drop = "config"))), 3)
  expect_equal(unique(cell_key(rt, drop = c("config", "kconfig", "holdoff"))), "v1-n1/normal/w1-r0")
})

test_that("the cell key keeps RCU flavours apart; rcu's cells keep their keys", {
  p <- new_db()
  add_run(p, "a", "v1-n1/normal/w1-r0", samples_ns = samples_with_p50(10))
  add_run(p, "a", "v1-n1/normal/w1-r0/f=srcu/k=flavours", samples_ns = samples_with_p50(10),
          kconfig = "flavours", cmdline = "console=ttyS0 rcuscale.holdoff=3 rcuscale.scale_type=srcu")
  add_run(p, "a", "v1-n1/normal/w1-r0/f=tasks-tracing/k=flavours", samples_ns = samples_with_p50(10),
          kconfig = "flavours",
          cmdline = "console=ttyS0 rcuscale.holdoff=3 rcuscale.scale_type=tasks-tracing")
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(rt$cell, c("v1-n1/normal/w1-r0/h3/hz250-full-idle",
                          "v1-n1/normal/w1-r0/h3/hz250-full-idle/f=srcu/k=flavours",
                          "v1-n1/normal/w1-r0/h3/hz250-full-idle/f=tasks-tracing/k=flavours"))
  # async cells: their backlog in the writers' part
  add_run(p, "a", "v1-n1/async/w1-r0-a10/f=srcu/k=flavours", samples_ns = samples_with_p50(10),
          kconfig = "flavours",
          cmdline = "console=ttyS0 rcuscale.holdoff=3 rcuscale.scale_type=srcu rcuscale.gp_async=1 rcuscale.gp_async_max=10")
  rt4 <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(rt4$cell[4], "v1-n1/async/w1-r0-a10/h3/hz250-full-idle/f=srcu/k=flavours")
  # the flavour stays when the scenario is left out
  expect_equal(cell_key(rt, drop = c("config", "kconfig", "holdoff")),
               c("v1-n1/normal/w1-r0", "v1-n1/normal/w1-r0/f=srcu", "v1-n1/normal/w1-r0/f=tasks-tracing"))
})

test_that("async cells of 6.1 and 6.12 are not compared: their samples time different things", {
  p <- new_db()
  cmd <- "console=ttyS0 rcuscale.holdoff=3 rcuscale.gp_async=1 rcuscale.gp_async_max=10"
  for (r in 1:3) {
    add_run(p, "old", "v1-n1/async/w1-r0-a10", samples_ns = samples_with_p50(10), cmdline = cmd, rep = r)
    add_run(p, "new", "v1-n1/async/w1-r0-a10", samples_ns = samples_with_p50(10), cmdline = cmd, rep = r)
  }
  con <- DBI::dbConnect(RSQLite::SQLite(), p)
  DBI::dbExecute(con, "UPDATE runs SET kernel_version = '6.12.118' WHERE variant = 'new'")
  DBI::dbDisconnect(con)
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(unique(rt$async_samples[rt$variant == "old"]), "a call with its barrier wait (6.1's rcuscale)")
  expect_equal(unique(rt$async_samples[rt$variant == "new"]), "the enqueue alone (6.12's rcuscale)")
  r <- gate(p, "old", "new", threshold = 0.05)
  expect_equal(r$status, 2L)
  expect_equal(r$refused$field, "what rcuscale's async samples time")
})

test_that("PASS: the one-sided upper bound is below the threshold (hand-checked bound)", {
  p <- gate_db(base5, base5 * 1.005)
  r <- gate(p, "stock", "cand", threshold = 0.05)
  expect_equal(r$status, 0L)
  expect_equal(r$status_name, "PASS")
  expect_equal(r$alpha_stat, 0.025)
  mean_row <- r$rows[r$rows$stat == "mean", ]
  # 5+5 runs at one-sided 2.5%: qwilcox gives k = 3, P(U <= 2) = 4/252, so
  # the bound is the 3rd largest of the 25 log-ratios (104/100, 103/100,
  # then 104/101), times 1.005: +3.49%
  expect_equal(moses_index(5, 5, 0.025), 3)
  d <- sort(log(outer(base5 * 1.005, base5, "/")), decreasing = TRUE)
  expect_equal(mean_row$upper, exp(d[3]) - 1)
  expect_equal(mean_row$upper, 1.005 * 104 / 101 - 1, tolerance = 1e-12)
  expect_equal(mean_row$estimate, 0.005, tolerance = 1e-12)
  expect_equal(mean_row$level, 0.975)
  expect_equal(mean_row$verdict, "PASS")
  # the same data with a 3% threshold: the bound (+3.49%) is above it, the
  # estimate (+0.5%) is not: neither PASS nor SLOWDOWN
  r4 <- gate(p, "stock", "cand", threshold = 0.03)
  expect_equal(r4$status, 3L)
  expect_equal(r4$cells$verdict, "INCONCLUSIVE")
  expect_true(is.finite(r4$cells$runs_needed))
})

test_that("normal GPs gate the mean alone: a p90 one tick up is reported, not gated", {
  # ten GPs a run, ticks of 4 ms: the baseline's are all four ticks; the
  # candidate's have two GPs of five ticks and eight a little under four,
  # so the mean is the same and the p90 (the 9th of ten) is +25%
  tick <- 4e6
  base <- rep(4 * tick, 10)
  cand <- c(rep((40 - 10) / 8 * tick, 8), 5 * tick, 5 * tick)
  p <- new_db()
  for (cell in c("v2-n1/normal/w1-r0", "v2-n1/expedited/w1-r0")) {
    for (i in 1:8) {
      add_run(p, "stock", cell, samples_ns = base * (1 + i / 1000), rep = i)
      add_run(p, "cand", cell, samples_ns = cand * (1 + i / 1000), rep = i)
    }
  }
  r <- gate(p, "stock", "cand", threshold = 0.05)
  row <- function(res, cell, stat) res$rows[startsWith(res$rows$cell, cell) & res$rows$stat == stat, ]
  expect_equal(row(r, "v2-n1/normal", "p90")$gated, FALSE)
  expect_equal(row(r, "v2-n1/normal", "p90")$verdict, "(slowdown)")
  expect_equal(row(r, "v2-n1/normal", "mean")$verdict, "PASS")
  expect_equal(row(r, "v2-n1/expedited", "p90")$verdict, "SLOWDOWN")
  expect_equal(r$cells$verdict[startsWith(r$cells$cell, "v2-n1/normal")], "PASS")
  expect_equal(r$cells$verdict[startsWith(r$cells$cell, "v2-n1/expedited")], "SLOWDOWN")
  # the level split is the same in both modes
  expect_equal(r$alpha_stat, 0.025)
  expect_match(paste(r$text, collapse = "\n"), "mean and p90 (normal GPs: mean)", fixed = TRUE)
  expect_equal(jsonlite::fromJSON(gate_json(r))$stats_by_mode$normal, "mean")
  # asked for by name, p90 is gated in every mode
  r2 <- gate(p, "stock", "cand", threshold = 0.05, stats = c("mean", "p90"))
  expect_equal(row(r2, "v2-n1/normal", "p90")$verdict, "SLOWDOWN")
  expect_equal(r2$status, 1L)
  expect_false(grepl("normal GPs:", paste(r2$text, collapse = "\n")))
})

test_that("one-sided: a clear speedup passes, it is not a 'significant change'", {
  p <- gate_db(base5, base5 * 0.8)
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 0L)
  m <- r$rows[r$rows$stat == "mean", ]
  expect_equal(m$estimate, -0.2, tolerance = 1e-12)
  # P(U >= 0) = 1: no evidence of a slowdown at all
  expect_equal(m$p, 1)
  expect_lt(m$upper, 0)
})

test_that("SLOWDOWN: Holm p < alpha/2 and estimate above the threshold, cell named", {
  p <- gate_db(base5, base5 * 1.2, cells = c("v4-n1/normal/w1-r0", "v4-n2/normal/w1-r0"))
  r <- gate(p, "stock", "cand", threshold = 0.05)
  expect_equal(r$status, 1L)
  expect_equal(r$cells$verdict, c("SLOWDOWN", "SLOWDOWN"))
  m <- r$rows[r$rows$stat == "mean", ]
  # complete separation of 5+5 runs: one-sided p = 1/choose(10, 5) = 1/252;
  # Holm over the two cells: 2/252 < 0.025
  expect_equal(m$p, rep(1 / 252, 2))
  expect_equal(m$p_holm, rep(2 / 252, 2))
  expect_equal(m$estimate, rep(0.2, 2), tolerance = 1e-12)
  line <- grep("^  SLOWDOWN +v4-n1/normal/w1-r0/h3/hz250-full-idle$", r$text)
  expect_length(line, 1)
  expect_match(r$text[line + 1], "mean \\+20.00% \\[97.5% bounds \\+[0-9.]+%, \\+[0-9.]+%\\] p=0.004 p_holm=0.008 n=5\\+5")
  # with a 25% threshold the same +20% is not a slowdown, and the upper
  # bound (1.2 * 104/101: +23.6%) rules out one beyond 25%: PASS
  r25 <- gate(p, "stock", "cand", threshold = 0.25)
  expect_equal(r25$status, 0L)
  expect_equal(r25$rows$upper[1], 1.2 * 104 / 101 - 1, tolerance = 1e-12)
})

test_that("Holm counts only the testable rows: a 1+1 or 3+3 cell costs no power", {
  cells7 <- sprintf("v%d-n1/normal/w1-r0", 1:7)
  # seven 5+5 cells: Holm's first step needs 7/252 = 0.028 > 0.025
  p7 <- gate_db(base5, base5 * 1.2, cells = cells7)
  r7 <- gate(p7, "stock", "cand")
  expect_equal(r7$status, 3L)
  expect_true(all(r7$cells$verdict == "INCONCLUSIVE"))
  # two 5+5 cells plus five 1+1 and 3+3 cells: the small ones cannot reject
  # at 0.025 (min p 1/2 and 1/20), so the family is 2
  p <- gate_db(base5, base5 * 1.2, cells = c("v1-n1/normal/w1-r0", "v2-n1/normal/w1-r0"))
  gate_db(100, 130, cells = sprintf("v%d-n1/normal/w1-r0", 3:5), path = p)
  gate_db(base5[1:3], base5[1:3] * 1.3, cells = sprintf("v%d-n1/normal/w1-r0", 6:7), path = p)
  r <- gate(p, "stock", "cand")
  m <- r$rows[r$rows$stat == "mean", ]
  expect_equal(sum(m$testable), 2)
  expect_equal(m$family, rep(2, 7))
  expect_equal(r$cells$verdict[r$cells$n_old == 5], c("SLOWDOWN", "SLOWDOWN"))
  expect_true(all(r$cells$verdict[r$cells$n_old < 5] == "INCONCLUSIVE"))
  expect_equal(r$status, 1L)
  expect_equal(tarone_testable(c(1 / 252, 1 / 252, 0.5, 0.05), 0.025), c(TRUE, TRUE, FALSE, FALSE))
})

test_that("a wide interval like v4-n2/expedited's -17% [-79%, +40%] is INCONCLUSIVE with runs needed", {
  old <- c(100, 180, 60, 140, 90)
  new <- c(100, 180, 60, 140, 90)[c(3, 1, 5, 2, 4)] * 0.83
  p <- gate_db(old, new)
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 3L)
  m <- r$rows[r$rows$stat == "mean", ]
  expect_equal(m$verdict, "INCONCLUSIVE")
  expect_equal(m$estimate, -0.17, tolerance = 1e-12)
  expect_gt(m$upper, 0.05)
  expect_gt(m$lower, -1)
  # runs-needed, hand-computed: PASS needs -0.186 + 1.96 * s * sqrt(2/n) <
  # log(1.05) at the rank spread s: 1 / (sqrt(12) h(0)), h(0) the Gaussian
  # kernel estimate at 0 over the 2 x 10 differences within each side (new
  # is a permutation of old, times 0.83: the same differences), symmetrised
  d <- outer(log(old), log(old), "-")
  d <- rep(c(d[upper.tri(d)], -d[upper.tri(d)]), 2)
  s <- 1 / (sqrt(12) * mean(stats::dnorm(d, 0, stats::bw.nrd0(d))))
  expect_equal(m$spread_log, s)
  n <- ceiling(2 * (stats::qnorm(0.975) * s / (log(1.05) - log(0.83)))^2)
  expect_equal(m$runs_needed, n)
  expect_equal(r$cells$runs_needed, max(r$rows$runs_needed[r$rows$gated], na.rm = TRUE))
  expect_match(r$text, "INCONCLUSIVE +v4-n1/normal/w1-r0/h3/hz250-full-idle: decide with [0-9]+ runs per side",
               all = FALSE)
})

test_that("a timed-out run is a censored latency, not a dropped one", {
  # five equal runs each, plus three candidate timeouts: they rank above
  # every finished run
  p <- gate_db(base5, base5)
  for (i in 1:3) add_run(p, "cand", outcome = "timeout", rep = 10 + i)
  r <- gate(p, "stock", "cand")
  m <- r$rows[r$rows$stat == "mean", ]
  expect_equal(m$n_new, 8)
  expect_equal(m$censored_new, 3)
  # U = 3 * 5 (the censored ones) + 12.5 (the ties of equal runs) = 27.5 of 40
  expect_gt(m$estimate, 0)
  expect_equal(m$verdict, "INCONCLUSIVE")
  expect_match(r$text, "\\(0\\+3 timed out\\)", all = FALSE)
  # every candidate run timed out: an infinite slowdown, significant
  p2 <- gate_db(base5, numeric())
  for (i in 1:5) add_run(p2, "cand", outcome = "timeout", rep = i)
  r2 <- gate(p2, "stock", "cand")
  expect_equal(r2$rows$estimate[r2$rows$stat == "mean"], Inf)
  expect_equal(r2$status, 1L)
})

test_that("failure rates are compared with a one-sided Fisher test", {
  # 5 of 10 candidate runs fail (qemu-failed, timeout), none of 10 baseline
  # runs: p = choose(10, 5) / choose(20, 5) = 252 / 15504
  b10 <- c(base5, base5 + 1)
  p <- gate_db(b10, b10[1:5])
  for (i in 1:3) add_run(p, "cand", outcome = "qemu-failed", rep = 20 + i)
  for (i in 1:2) add_run(p, "cand", outcome = "timeout", rep = 30 + i)
  r <- gate(p, "stock", "cand")
  expect_equal(r$failures$p, 252 / 15504)
  expect_equal(r$failures$verdict, "MORE FAILURES")
  expect_equal(r$cells$verdict, "SLOWDOWN")
  expect_equal(r$status, 1L)
  expect_match(r$text, "MORE FAILURES failures 5/10 vs 0/10 \\(ok=0? ?qemu-failed=3 timeout=2\\)|MORE FAILURES failures 5/10 vs 0/10", all = FALSE)
  # one failure of 6 against none of 5: p = 6/11, no verdict from it
  expect_equal(failure_test(0, 5, 1, 6), 6 / 11)
  # interrupted runs (Ctrl-C) are nobody's failure
  p2 <- gate_db(base5, base5)
  add_run(p2, "cand", outcome = "interrupted", rep = 9)
  expect_equal(gate(p2, "stock", "cand")$failures$runs_new, 5)
})

test_that("sides that differ in accelerator, QEMU or kernel config are refused (status 2)", {
  p <- gate_db(base5, numeric())
  for (i in 1:5) add_run(p, "cand", samples_ns = samples_with_p50(base5[i]), rep = i, accel = "tcg")
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 2L)
  expect_null(r$rows)
  expect_match(r$text, "REFUSED +v4-n1/normal/w1-r0/h3/hz250-full-idle \\[m1\\] +accelerator differs: stock 'kvm', cand 'tcg'",
               all = FALSE)
  p2 <- gate_db(base5, numeric())
  for (i in 1:5) add_run(p2, "cand", samples_ns = samples_with_p50(base5[i]), rep = i, qemu = "8.2.0")
  expect_match(gate(p2, "stock", "cand")$text, "QEMU version differs: stock '7.2.22', cand '8.2.0'", all = FALSE)
  p3 <- gate_db(base5, numeric())
  for (i in 1:5) add_run(p3, "cand", samples_ns = samples_with_p50(base5[i]), rep = i, hz = 1000L)
  r3 <- gate(p3, "stock", "cand")
  expect_equal(r3$status, 2L)
  expect_match(r3$text, "kernel config differs: stock 'hz250-full-idle', cand 'hz1000-full-idle'", all = FALSE)
  # a comparison that is about the config may say so
  r3b <- gate(p3, "stock", "cand", allow_config = TRUE)
  expect_equal(r3b$status, 3L)
  expect_equal(nrow(r3b$refused), 0)
})

test_that("status 2: hard failure in the candidate, named, and it outranks a slowdown", {
  p <- gate_db(base5, base5 * 1.2)
  add_run(p, "cand", "v4-n1/normal/w1-r0", outcome = "deadlock", rep = 9,
          detail = "rcu_sched kthread starved <&\"> for 21002 jiffies")
  add_run(p, "cand", "v4-n2/normal/w1-r0", outcome = "badness", rep = 1, kind = "probe")
  add_run(p, "stock", "v4-n1/normal/w1-r0", outcome = "crash", rep = 9)
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 2L)
  expect_equal(sort(r$hard_failures$outcome), c("badness", "deadlock"))
  expect_true(any(grepl("HARD FAILURE +v4-n1/normal/w1-r0/h3/hz250-full-idle +run [0-9]+ \\(rcuscale rep 9\\) deadlock: rcu_sched", r$text)))
})

test_that("INCONCLUSIVE (3) with nothing to compare; JSON and JUnit carry bounds and runs-needed", {
  r0 <- gate(new_db(), "stock", "cand")
  expect_equal(r0$status, 3L)
  x0 <- gate_junit(r0)
  expect_true(xml_well_formed(x0))
  expect_match(x0, 'tests="1" failures="0" errors="0" skipped="1"', fixed = TRUE)

  p <- gate_db(base5, base5 * 1.2, cells = "v4-n1/normal/w1-r0")
  gate_db(base5, base5 * 1.01, cells = "v4-n2/normal/w1-r0", path = p)
  gate_db(c(100, 180, 60, 140, 90), c(100, 180, 60, 140, 90) * 0.83, cells = "v2-n1/normal/w1-r0", path = p)
  add_run(p, "cand", "v8-n1/normal/w1-r0", outcome = "deadlock", detail = "hung <task> & \"quote\"\001")
  r <- gate(p, "stock", "cand")
  j <- jsonlite::fromJSON(gate_json(r))
  expect_equal(j$status, 2)
  expect_setequal(j$cells$verdict, c("SLOWDOWN", "PASS", "INCONCLUSIVE"))
  expect_true(all(c("estimate", "lower", "upper", "level", "p", "p_holm", "runs_needed") %in% names(j$rows)))
  expect_equal(j$alpha_per_stat, 0.025)
  x <- gate_junit(r)
  expect_true(xml_well_formed(x))
  # four cells (v8-n1 has only the deadlocked candidate run: inconclusive)
  # and the hard failure
  expect_equal(lengths(regmatches(x, gregexpr("<testcase ", x))), 5)
  expect_equal(lengths(regmatches(x, gregexpr("<failure ", x))), 1)
  expect_equal(lengths(regmatches(x, gregexpr("<error ", x))), 1)
  expect_equal(lengths(regmatches(x, gregexpr("<skipped ", x))), 2)
  expect_match(x, "decide with [0-9]+ runs per side", fixed = FALSE)
  expect_match(x, "97.5% bounds", fixed = TRUE)
  expect_match(x, "hung &lt;task&gt; &amp; &quot;quote&quot;", fixed = TRUE)
  expect_false(grepl("\001", x, fixed = TRUE))
  expect_error(xml_well_formed("<a><b></a></b>"))
})

test_that("host-busy runs are left out of statistics and failure counts", {
  p <- gate_db(base5, base5 * 1.01)
  add_run(p, "cand", "v4-n1/normal/w1-r0", samples_ns = samples_with_p50(300), rep = 6,
          host_other_cpu = 1.5)
  r <- gate(p, "stock", "cand")
  expect_equal(r$status, 0L)
  expect_equal(r$rows$n_new[1], 5)
  expect_equal(r$failures$runs_new, 5)
  expect_match(r$caveat_text, "HOST BUSY: 1 run left out")
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_equal(rt$status[rt$rep == 6 & rt$variant == "cand"], "host-busy")
  expect_equal(host_busy(data.frame(host_pus = c(2, 8))), c(FALSE, FALSE))
})

test_that("host-busy is the runner's rule, read from the view run_status", {
  p <- new_db()
  add_run(p, "v", host_other_cpu = 0.4, host_pus = 8L)  # at the share of 8 PUs: not over it
  add_run(p, "v", rep = 2, host_other_cpu = 0.41, host_pus = 8L)
  add_run(p, "v", rep = 3, outcome = "timeout", host_other_cpu = 8, host_pus = 8L)
  add_run(p, "v", rep = 4)  # not measured: not busy
  runs <- read_runs(p)
  expect_equal(host_busy(runs), c(FALSE, TRUE, TRUE, FALSE))
  expect_equal(runs$status, c("ok", "host-busy", "timeout", "ok"))
  expect_match(caveat_text(runs), "HOST BUSY: 2 runs left out (other processes used > 5% of the host's PUs)",
               fixed = TRUE)
  # a database the runner has not brought up to date is refused, not guessed at
  con <- DBI::dbConnect(RSQLite::SQLite(), p)
  DBI::dbExecute(con, "DROP VIEW run_status")
  DBI::dbDisconnect(con)
  expect_error(read_runs(p), "no run_status .*rcuwb -d DB summary")
})

test_that("verdict helpers: bounds unreachable with few runs are infinite, rules exact", {
  expect_equal(moses_index(2, 2, 0.025), 0)
  x <- log_compare(c(1, 2), c(3, 4), a = 0.025)
  expect_equal(x$hi, Inf)
  expect_equal(x$lo, -Inf)
  expect_equal(row_verdict(log(1.049), 0, NA, FALSE, 0.05, 0.025), "PASS")
  expect_equal(row_verdict(log(1.05), 0, NA, FALSE, 0.05, 0.025), "INCONCLUSIVE")
  expect_equal(row_verdict(Inf, log(1.051), 0.01, TRUE, 0.05, 0.025), "SLOWDOWN")
  expect_equal(row_verdict(Inf, log(1.049), 0.01, TRUE, 0.05, 0.025), "INCONCLUSIVE")
  expect_equal(row_verdict(Inf, log(1.2), 0.03, TRUE, 0.05, 0.025), "INCONCLUSIVE")
  expect_equal(runs_needed(log(1.05), 0.1, 0.05, 0.025), Inf)
  # SLOWDOWN side, by hand: 0.2 > 1.96 * 0.3 * sqrt(2/n) from n = 18
  expect_equal(runs_needed(0.2, 0.3, 0.05, 0.025), ceiling(2 * (stats::qnorm(0.975) * 0.3 / 0.2)^2))
  # exact one-sided p with ties equals a full enumeration
  new <- c(1, 2, 2, 3); old <- c(2, 2, 1)
  all_sets <- utils::combn(7, 4)
  r <- rank(c(new, old))
  u <- apply(all_sets, 2, function(i) sum(r[i]))
  expect_equal(rank_sum_greater(new, old), mean(u >= sum(r[1:4])))
})

test_that("rank_spread is the spread the Hodges-Lehmann estimate and the rank test see", {
  set.seed(21)
  # normal data: SD * sqrt(pi/3) (the rank test's efficiency 3/pi)
  expect_equal(rank_spread(list(stats::rnorm(1500, 0, 0.2))), 0.2 * sqrt(pi / 3), tolerance = 0.05)
  # Laplace with scale b: integral of f^2 = 1/(4b), so 4b/sqrt(12); its SD
  # is b sqrt(2), and the rank test needs 2/3 of the t-test's runs there
  b <- 0.1
  lap <- b * (stats::rexp(1500) - stats::rexp(1500))
  expect_equal(rank_spread(list(lap)), 4 * b / sqrt(12), tolerance = 0.07)
  # heavy tails (one run in ten from a ten times wider spread, as a slow
  # boot): the SD's figure is far too wide; the rank spread predicts how
  # the HL shift of 30 runs a side scatters
  heavy <- function(n) stats::rnorm(n, 0, ifelse(stats::runif(n) < 0.1, 1, 0.1))
  x <- heavy(1500)
  hl <- replicate(1500, stats::median(outer(heavy(30), heavy(30), "-")))
  expect_equal(rank_spread(list(x)) * sqrt(2 / 30), stats::sd(hl), tolerance = 0.12)
  expect_lt(rank_spread(list(x)), 0.5 * stats::sd(x) * sqrt(pi / 3))
  # only differences within a group count: a shift between the sides (or
  # hosts) does not widen it
  y <- stats::rnorm(40)
  expect_equal(rank_spread(list(y[1:20], y[21:40] + 5)), rank_spread(list(y[1:20], y[21:40])))
  # censored runs (+Inf) are left out
  expect_equal(rank_spread(list(c(y, Inf))), rank_spread(list(y)))
})

test_that("rank_spread falls back to the SD over 3/pi for few runs or ties", {
  # 4 + 4 runs: 12 differences, under 20: pooled SD (df 6) * sqrt(pi/3)
  a <- log(c(100, 110, 90, 105))
  b <- log(c(200, 230, 190, 210))
  ss <- sum((a - mean(a))^2) + sum((b - mean(b))^2)
  expect_equal(rank_spread(list(a, b)), sqrt(ss / 6) * sqrt(pi / 3))
  # tick-bound values: 12 runs on two ticks, 30 of 66 differences are 0
  t <- log(rep(c(4000, 8000), each = 6))
  expect_equal(rank_spread(list(t)), stats::sd(t) * sqrt(pi / 3))
  expect_equal(rank_spread(list(rep(1, 10))), 0)
  expect_true(is.na(rank_spread(list(1, 2))))
  expect_true(is.na(rank_spread(list(numeric()))))
})

test_that("the failure test spends its share of alpha, not all of it", {
  p <- new_db()
  for (i in 1:10) add_run(p, "stock", samples_ns = samples_with_p50(10), rep = i)
  for (i in 1:6) add_run(p, "cand", samples_ns = samples_with_p50(10), rep = i)
  for (i in 7:10) add_run(p, "cand", outcome = "qemu-failed", rep = i)
  res <- gate(p, "stock", "cand", threshold = 0.1)
  # 4 of 10 failed against none of 10: Fisher's one-sided p = C(10,4) / C(20,4)
  expect_equal(res$failures$p, choose(10, 4) / choose(20, 4))
  expect_lt(res$failures$p, 0.05)
  # above alpha / 3, the share of the failure test beside mean and p90
  expect_equal(res$alpha_slow, 0.05 / 3)
  expect_equal(res$failures$verdict, "ok")
  expect_false(res$status == 1L)
  expect_true(any(grepl("Fisher, p < 0.0167", res$text)))
  # with one gated statistic the share is alpha / 2
  expect_equal(gate(p, "stock", "cand", threshold = 0.1, stats = "mean")$alpha_slow, 0.025)
})
