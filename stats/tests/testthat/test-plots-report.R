# Plots write files; reports are written with caveats, tables and embedded
# images.

report_db <- function(oversub = 0.5, accel = "kvm") {
  p <- new_db()
  for (v in c("stock", "cand")) {
    for (cell in c("v2-n1/normal/w1-r0", "v2-n1/expedited/w1-r0", "v4-n2/normal/w1-r0")) {
      for (i in 1:3) {
        add_run(p, v, cell, rep = i, oversub = oversub, accel = accel,
                samples_ns = samples_with_p50(if (grepl("expedited", cell)) 50 + i else 5000 + 10 * i))
      }
    }
    for (rn in c("", "rcupdate.rcu_normal=1")) {
      id <- add_run(p, v, "v2-n1/normal/w1-r0", kind = "probe", boot_params = rn,
                    oversub = oversub, accel = accel,
                    outcome = if (v == "stock" && nzchar(rn)) "deadlock" else "ok")
      for (st in 1:2) {
        for (prim in c("synchronize_rcu", "synchronize_rcu_expedited")) {
          dead <- v == "stock" && nzchar(rn) && st == 2 && prim == "synchronize_rcu_expedited"
          add_probe(p, id, st, c("early", "late")[st], prim,
                    if (dead) NA else 1000 * st, if (dead) "deadlock" else "ok")
        }
      }
    }
  }
  p
}

test_that("caveat text names accelerator, oversubscription and host PUs", {
  runs <- data.frame(accel = c("kvm", "tcg"), oversub = c(0.5, 2), host_pus = c(8, 8), host = "h")
  txt <- caveat_text(runs)
  expect_match(txt, "accel: kvm\\+tcg")
  expect_match(txt, "OVERSUBSCRIBED: max 2.00 vCPUs per host PU")
  expect_match(txt, "host PUs: 8")
  expect_match(caveat_text(runs[1, ]), "max oversub 0.50 \\(not oversubscribed\\)")
})

test_that("rcu_normal is parsed from boot parameters", {
  expect_equal(parse_rcu_normal(c("", NA, "rcupdate.rcu_normal=1", "a=1 rcupdate.rcu_normal=0",
                                  "rcupdate.rcu_normal_after_boot=1", "x rcupdate.rcu_normal=1 y")),
               c(FALSE, FALSE, TRUE, FALSE, FALSE, TRUE))
})

test_that("plots are written as PNG and SVG with caveat captions", {
  p <- report_db(oversub = 2)
  runs <- read_runs(p)
  samples <- read_samples(p)
  probes <- read_probes(p)
  rt <- build_run_table(runs, run_stats(samples))
  cells <- summarise_cells(rt)
  dir <- file.path(tempdir(), "plots-test")
  g1 <- plot_latency_vs_vcpus(cells, rt[rt$kind == "rcuscale", ])
  g2 <- plot_ecdf(samples, rt)
  g3 <- plot_midboot(probes, rt[rt$kind == "probe", ])
  for (g in list(g1, g2, g3)) {
    expect_s3_class(g, "ggplot")
    expect_match(g$labels$caption, "OVERSUBSCRIBED")
    expect_match(g$labels$caption, "accel: kvm")
    expect_match(g$labels$caption, "host PUs: 8")
  }
  paths <- save_plot(g3, dir, "midboot", 6, 4)
  expect_true(all(file.exists(paths)))
  expect_identical(readBin(paths[["png"]], "raw", 4), as.raw(c(0x89, 0x50, 0x4e, 0x47)))
  expect_match(paste(readLines(paths[["svg"]], n = 5), collapse = ""), "<svg")
  mb <- midboot_cells(probes)
  dead <- mb[mb$deadlocks > 0, ]
  expect_equal(nrow(dead), 1)
  expect_equal(c(dead$variant, dead$rcu_normal, dead$stage, dead$prim),
               c("stock", "rcu_normal=1", "2", "synchronize_rcu_expedited"))
})

test_that("mid-boot cells count boots, not calls, and keep hung, slow and skipped apart", {
  p <- new_db()
  for (b in 1:3) {
    id <- add_run(p, "v", "v2-n1/probe-1-rcu-x2", kind = "probe", rep = b)
    add_probe(p, id, 1, "dead-zone", "synchronize_rcu", if (b == 3) NA else 1000 * b,
              if (b == 3) "deadlock" else "ok")
    add_probe(p, id, 1, "dead-zone", "synchronize_rcu", if (b == 2) 9000 else 2000 * b,
              if (b == 2) "slow" else if (b == 3) "hung" else "ok")
    add_probe(p, id, 0, "pre-workqueues", "synchronize_rcu_tasks", NA, "skipped")
  }
  mb <- midboot_cells(read_probes(p))
  s1 <- mb[mb$stage == 1, ]
  expect_equal(c(s1$runs, s1$calls, s1$deadlocks, s1$hung, s1$slow), c(3, 6, 1, 1, 1))
  # the calls that returned: 1000, 2000, 2000, 9000 ns (the slow one counts, with its latency)
  # nearest rank (sorted[max(1, n * p %/% 100)]), as rcuwb summary --probes
  expect_equal(s1$median_us, 2)
  expect_equal(c(s1$q1_us, s1$q3_us), c(1, 2))
  expect_equal(midboot_label(s1), "DEADLOCK 1/3")
  s0 <- mb[mb$stage == 0, ]
  expect_equal(midboot_label(s0), "n/a")
})

test_that("plot functions return NULL when there is nothing to draw", {
  p <- new_db()
  rt <- build_run_table(read_runs(p), run_stats(read_samples(p)))
  expect_null(plot_latency_vs_vcpus(summarise_cells(rt), rt))
  expect_null(plot_ecdf(read_samples(p), rt))
  expect_null(plot_midboot(read_probes(p), rt))
})

test_that("base R base64 encoder agrees with jsonlite", {
  set.seed(1)
  for (n in c(0, 1, 2, 3, 4, 5, 100)) {
    x <- as.raw(sample(0:255, n, replace = TRUE))
    expect_equal(b64_encode_base(x), if (n) gsub("\n", "", jsonlite::base64_enc(x)) else "")
    expect_equal(b64_encode(x), b64_encode_base(x))
  }
  expect_equal(b64_encode_base(charToRaw("Man")), "TWFu")
  expect_equal(b64_encode_base(charToRaw("Ma")), "TWE=")
})

test_that("write_report writes md + self-contained html with caveats first", {
  p <- report_db(oversub = 1.5, accel = "tcg")
  out <- file.path(tempdir(), "report-test")
  r <- write_report(p, out, baseline = "stock", candidates = "cand")
  expect_true(all(file.exists(c(r$md, r$html, r$csv))))
  md <- readLines(r$md, encoding = "UTF-8")
  first <- paste(md[1:8], collapse = "\n")
  expect_match(first, "## Caveats")
  expect_match(first, "Oversubscribed: up to 1.50 vCPUs per host PU")
  expect_match(first, "TCG")
  expect_true(any(grepl("accel: tcg", md)))
  expect_true(any(grepl("^### cand vs stock: (PASS|SLOWDOWN|INCONCLUSIVE|HARD FAILURE)$", md)))
  # the report shows the gate's verdict on the same runs
  g <- gate(p, "stock", "cand")
  expect_equal(r$comparisons$cand$status, g$status)
  expect_true(any(grepl(g$text[1], md, fixed = TRUE)))
  expect_true(any(grepl("plots/forest_cand.svg", md, fixed = TRUE)))
  expect_true(any(grepl("Expedited vs normal", md)))
  expect_true(any(grepl("Too few runs to decide", md)))
  expect_true(any(grepl("\\| stock \\| rcu_normal=1 \\| 2 \\| late \\| [^|]+ \\| DEADLOCK \\|", md)))
  expect_true(any(grepl("plots/latency_vs_vcpus.svg", md, fixed = TRUE)))
  html <- paste(readLines(r$html, encoding = "UTF-8"), collapse = "\n")
  expect_equal(lengths(regmatches(html, gregexpr("src=\"data:image/png;base64,", html))), 4)
  expect_false(grepl("src=\"plots/", html, fixed = TRUE))
  expect_match(html, "DEADLOCK")
  cells <- read.csv(r$csv[["cells"]])
  expect_equal(nrow(cells), 6)
})

test_that("the report's baseline is the matrix's first variant, not the alphabetical first", {
  p <- new_db()
  for (i in 1:3) {
    # the runner runs rep 1 in the matrix's order: zeta first
    add_run(p, "zeta", "v2-n1/normal/w1-r0", samples_ns = samples_with_p50(100 + i), rep = i)
    add_run(p, "alpha", "v2-n1/normal/w1-r0", samples_ns = samples_with_p50(100 + i), rep = i)
  }
  r <- write_report(p, file.path(tempdir(), "report-first"), plots = FALSE)
  expect_equal(r$baseline, "zeta")
  expect_equal(r$candidates, "alpha")
})

test_that("the forest plot marks the threshold band and colours verdicts colour-blind-safely", {
  p <- gate_db(c(100, 101, 102, 103, 104), c(100, 101, 102, 103, 104) * 1.2)
  res <- gate(p, "stock", "cand")
  g <- plot_forest(res)
  b <- ggplot2::ggplot_build(g)
  expect_true(all(unlist(lapply(b$data, function(d) d$colour)) %in%
                    c(VERDICT_COLOURS, "grey40", "grey30", NA, "black")))
  expect_equal(unname(VERDICT_COLOURS[["SLOWDOWN"]]), "#D55E00")
  expect_true(any(vapply(b$data, function(d) "xmin" %in% names(d) && any(d$xmin == -0.05), logical(1))))
  expect_null(plot_forest(gate(new_db(), "a", "b")))
})

test_that("write_report copes with a database without runs", {
  out <- file.path(tempdir(), "report-empty")
  r <- write_report(new_db(), out)
  expect_true(file.exists(r$md) && file.exists(r$html))
  expect_length(r$plots, 0)
})
