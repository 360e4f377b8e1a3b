# Mann-Whitney test, Hodges-Lehmann shift, Holm, benchstat table.

# Brute-force exact permutation p-value over all subsets (reference).
brute_p <- function(new, old) {
  r <- rank(c(new, old))
  n1 <- length(new)
  e <- n1 * (length(r) + 1) / 2
  w <- sum(r[seq_len(n1)])
  sums <- combn(length(r), n1, function(i) sum(r[i]))
  mean(abs(sums - e) >= abs(w - e) - 1e-9)
}

test_that("without ties the p-value equals wilcox.test(exact = TRUE)", {
  set.seed(11)
  for (k in 1:15) {
    n1 <- sample(2:9, 1); n2 <- sample(2:9, 1)
    new <- rnorm(n1, 0.5); old <- rnorm(n2)
    ref <- wilcox.test(new, old, exact = TRUE)
    got <- rank_sum_test(new, old)
    expect_equal(got$p_value, ref$p.value)
    expect_equal(got$U, unname(ref$statistic))
    expect_equal(got$method, "exact")
  }
})

test_that("with ties the p-value is the exact permutation p-value", {
  cases <- list(
    list(new = c(1, 1, 2, 3), old = c(1, 2, 2)),
    list(new = c(5, 5, 5, 6, 7), old = c(4, 5, 5, 5, 5)),
    list(new = c(10, 10), old = c(10, 10, 11, 9))
  )
  for (cs in cases) {
    got <- rank_sum_test(cs$new, cs$old)
    expect_equal(got$p_value, brute_p(cs$new, cs$old))
    expect_equal(got$method, "exact (ties, permutation)")
  }
})

test_that("identical samples give p = 1; complete separation gives 2/choose(10,5)", {
  expect_equal(rank_sum_test(rep(3, 5), rep(3, 5))$p_value, 1)
  expect_equal(rank_sum_test(11:15, 1:5)$p_value, 2 / 252)
  expect_equal(rank_sum_test(1:5, 11:15)$p_value, 2 / 252)
  expect_equal(min_attainable_p(5, 5), 2 / 252)
})

test_that("large samples use the normal approximation like wilcox.test", {
  set.seed(2)
  new <- round(rnorm(60, 0.3), 1); old <- round(rnorm(60), 1)
  got <- rank_sum_test(new, old)
  ref <- suppressWarnings(wilcox.test(new, old, exact = FALSE, correct = TRUE))
  expect_equal(got$method, "normal approximation")
  expect_equal(got$p_value, ref$p.value)
})

test_that("empty side gives NA", {
  expect_true(is.na(rank_sum_test(numeric(), 1:3)$p_value))
  expect_true(is.na(hl_shift(1:3, numeric())[["estimate"]]))
})

test_that("Hodges-Lehmann shift: sign is candidate minus baseline, matches wilcox.test", {
  old <- c(100, 102, 98, 101, 99)
  new <- c(120, 121, 119, 122, 118)
  hl <- hl_shift(new, old)
  ref <- wilcox.test(new, old, conf.int = TRUE, exact = TRUE)
  expect_equal(hl[["estimate"]], unname(ref$estimate))
  expect_equal(unname(hl[c("lo", "hi")]), as.numeric(ref$conf.int))
  expect_equal(hl[["estimate"]], 20)
  expect_gt(hl[["estimate"]], 0)
  expect_lt(hl_shift(old, new)[["estimate"]], 0)
  # achieved level for 5+5 at nominal 95%
  expect_equal(hl[["level"]], 1 - 2 * pwilcox(2, 5, 5))
})

test_that("HL CI widens to the full range when 95% is not achievable", {
  hl <- hl_shift(c(5, 6, 7), c(1, 2, 3))
  expect_equal(unname(hl[c("lo", "hi")]), c(2, 6))
  expect_equal(hl[["level"]], 1 - 2 / choose(6, 3))
  expect_true(is.na(hl_shift(5, c(1, 2))[["lo"]]))
})

test_that("Holm adjustment ignores NA and matches hand values", {
  tab <- data.frame(p_value = c(0.01, 0.04, 0.03))
  h <- add_holm(tab, alpha = 0.05)
  expect_equal(h$p_holm, c(0.03, 0.06, 0.06))
  expect_equal(h$significant, c(TRUE, FALSE, FALSE))
  expect_equal(h$family_size, c(3, 3, 3))
  h2 <- add_holm(data.frame(p_value = c(0.01, NA, 0.04)))
  expect_equal(h2$p_holm, c(0.02, NA, 0.04))
  expect_equal(h2$family_size[1], 2)
})

test_that("runs needed for decidability", {
  expect_equal(runs_for_decidability(1, 0.05), 4)   # 2/70 < .05, 2/20 not
  expect_equal(runs_for_decidability(12, 0.05), 6)  # 12 * 2/924 < .05, 12 * 2/252 not
})

# Expedited against normal GPs of three cell pairs: +20% (significant after
# Holm), no change, and one without a usable expedited run (an NA row, out
# of the Holm family).
cmp_table <- function() {
  p <- new_db()
  normal <- c(100, 102, 98, 101, 99)
  for (i in 1:5) {
    add_run(p, "stock", "v4-n1/normal/w1-r0", samples_ns = samples_with_p50(normal[i]), rep = i)
    add_run(p, "stock", "v4-n1/expedited/w1-r0", samples_ns = samples_with_p50(c(120, 121, 119, 122, 118)[i]),
            rep = i)
    add_run(p, "stock", "v4-n2/normal/w1-r0", samples_ns = samples_with_p50(normal[i]), rep = i)
    add_run(p, "stock", "v4-n2/expedited/w1-r0", samples_ns = samples_with_p50(c(101, 99, 100, 103, 97)[i]),
            rep = i)
  }
  add_run(p, "stock", "v8-n1/normal/w1-r0", samples_ns = samples_with_p50(10))
  add_run(p, "stock", "v8-n1/expedited/w1-r0", outcome = "timeout")
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  compare_gp_modes(rt)
}

test_that("compare_gp_modes: one row per cell pair, Holm over testable pairs", {
  cmp <- cmp_table()
  expect_equal(cmp$cell, paste0(c("v4-n1", "v4-n2", "v8-n1"), "/*/w1-r0/h*/hz250-full-idle"))
  expect_equal(cmp$n_new, c(5, 5, 0))
  expect_equal(cmp$family_size, c(2, 2, 2))
  expect_equal(cmp$p_value[1], 2 / 252)
  expect_equal(cmp$p_holm[1], 4 / 252)
  expect_true(cmp$significant[1])
  expect_false(cmp$significant[2])
  expect_true(is.na(cmp$p_value[3]))
  expect_equal(cmp$rel_change[1], 0.2)
  expect_equal(cmp$ratio_of_medians[1], 0.2)
})

test_that("benchstat table: ~ for non-significant, delta and (p= n=) otherwise", {
  lines <- benchstat_lines(cmp_table())
  expect_match(lines[1], "^cell +stock:normal p50 +stock:expedited p50 +delta$")
  l1 <- grep("^v4-n1/", lines, value = TRUE)
  expect_match(l1, "100.0\u00b5s \u00b1 2% +120.0\u00b5s \u00b1 2% +\\+20.00% +\\(p=0.016 n=5\\+5\\)$")
  l2 <- grep("^v4-n2/", lines, value = TRUE)
  expect_match(l2, " ~ +\\(p=[0-9.]+ n=5\\+5\\)$")
  l3 <- grep("^v8-n1/", lines, value = TRUE)
  expect_match(l3, "10.00\u00b5s \u00b1 \u221e +-$")
  expect_match(lines[length(lines)], "^geomean ")
})

test_that("expedited vs normal pairs cells within each variant", {
  p <- new_db()
  for (i in 1:5) {
    add_run(p, "stock", "v4-n1/normal/w1-r0", samples_ns = samples_with_p50(1000 + i))
    add_run(p, "stock", "v4-n1/expedited/w1-r0", samples_ns = samples_with_p50(50 + i))
  }
  add_run(p, "stock", "v8-n1/normal/w1-r0", samples_ns = samples_with_p50(2000))
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  g <- compare_gp_modes(rt)
  expect_equal(nrow(g), 1)
  expect_equal(g$cell, "v4-n1/*/w1-r0/h*/hz250-full-idle")
  expect_equal(g$baseline, "stock:normal")
  expect_equal(g$candidate, "stock:expedited")
  expect_lt(g$rel_change, 0)
  expect_equal(g$p_value, 2 / 252)
  expect_equal(cell_pair_key("v4-n2/expedited/w2-r0"), "v4-n2/*/w2-r0")
})

test_that("formatting helpers", {
  expect_equal(fmt_time_us(c(0.5, 12.346, 1234.4, 2.5e6, NA)),
               c("500.0ns", "12.35\u00b5s", "1.234ms", "2.500s", "-"))
  expect_equal(fmt_pct(c(0.1234, -0.05, NA)), c("+12.34%", "-5.00%", "-"))
  expect_equal(fmt_pm(100, 95, 103), "\u00b1 5%")
  expect_equal(fmt_pm(100, NA, NA), "\u00b1 \u221e")
})
