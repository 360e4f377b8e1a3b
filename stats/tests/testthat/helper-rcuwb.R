# Loaded by testthat before the tests: provides builders for small
# synthetic rcuwb databases (the C runner's schema, made by the runner).
# The package (stats/, R/*.R) is loaded by tests/run.R; a single test file
# run from here (testthat::test_file) loads it here.

stats_root <- normalizePath(file.path(getwd(), "..", ".."))
if (!"rcuwb" %in% loadedNamespaces()) {
  pkgload::load_all(stats_root, helpers = FALSE, quiet = TRUE)
}

# The runner's build (make -C runner; make check and check-unit build it
# first).
rcuwb_bin <- normalizePath(file.path(stats_root, "..", "runner", "rcuwb"), mustWork = FALSE)

# A database with the schema as the runner makes it (runner/src/results/db.c, its
# one home: the tables, the view run_status with the host-busy rule, the
# change-point table), made once by the built runner and copied.
template_db <- local({
  made <- NULL
  function() {
    if (is.null(made)) {
      if (!file.exists(rcuwb_bin)) stop("the stats tests need the runner built: make -C runner")
      p <- tempfile(fileext = ".sqlite")
      out <- suppressWarnings(system2(rcuwb_bin, c("-d", shQuote(p), "summary"), stdout = TRUE, stderr = TRUE))
      if (!is.null(attr(out, "status")) || !file.exists(p)) {
        stop("rcuwb could not make a database: ", paste(out, collapse = "\n"))
      }
      made <<- p
    }
    made
  }
})

# The stable cell key (cell_key()) of a run that add_run() stores with the
# runner's cell name `cell` and the default fields.
K <- function(cell) paste0(cell, "/h3/hz250-full-idle")

new_db <- function(path = tempfile(fileext = ".sqlite")) {
  stopifnot(file.copy(template_db(), path))
  path
}

# Parse "v4-n2/expedited/w2-r0" into topology/parameter columns.
cell_columns <- function(cell) {
  s <- strsplit(cell, "/", fixed = TRUE)[[1]]
  vn <- regmatches(s[1], regexec("^v([0-9]+)-n([0-9]+)", s[1]))[[1]]
  wr <- regmatches(s[3], regexec("^w([0-9]+)-r([0-9]+)", s[3]))[[1]]
  list(vcpus = as.integer(vn[2]), numa_nodes = as.integer(vn[3]), gp_mode = s[2],
       nwriters = as.integer(wr[2]), nreaders = as.integer(wr[3]))
}

# Insert one run; returns its id. `samples_ns`: writer-duration samples.
add_run <- function(path, variant, cell = "v4-n1/normal/w1-r0", outcome = "ok",
                    samples_ns = NULL, kind = "rcuscale", rep = 1L, matrix = "m1",
                    accel = "kvm", oversub = 0.5, host_pus = 8L, boot_params = "",
                    detail = NA_character_, started_at = "2025-01-01T00:00:00Z",
                    host_other_cpu = NA_real_, hz = 250L, qemu = "7.2.22",
                    cmdline = "console=ttyS0 rcuscale.holdoff=3", seq_from = 1L,
                    kconfig = NA_character_, host = "testhost", libvirt = "9.0.0") {
  cc <- cell_columns(cell)
  con <- DBI::dbConnect(RSQLite::SQLite(), path)
  on.exit(DBI::dbDisconnect(con))
  DBI::dbExecute(con, paste(
    "INSERT INTO runs(matrix, cell, rep, kind, variant, kernel_version, gp_mode, nwriters,",
    "nreaders, boot_params, vcpus, sockets, cores, threads, numa_nodes, accel, host, host_pus,",
    "oversub, started_at, outcome, outcome_detail, host_other_cpu, kconfig_hz,",
    "kconfig_preempt, kconfig_nohz, qemu_version, libvirt_version, cmdline, kconfig)",
    "VALUES (?, ?, ?, ?, ?, '6.1.0', ?, ?, ?, ?, ?, 1, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?,",
    "?, 'full', 'idle', ?, ?, ?, ?)"),
    params = list(matrix, cell, rep, kind, variant, cc$gp_mode, cc$nwriters, cc$nreaders,
                  boot_params, cc$vcpus, cc$vcpus, cc$numa_nodes, accel, host, host_pus, oversub,
                  started_at, outcome, detail, host_other_cpu, hz, qemu, libvirt,
                  paste(cmdline, boot_params), kconfig))
  id <- DBI::dbGetQuery(con, "SELECT last_insert_rowid() AS id")$id
  if (length(samples_ns)) {
    DBI::dbExecute(con, "INSERT INTO samples(run_id, writer, seq, duration_ns) VALUES (?, ?, ?, ?)",
                   params = list(rep(id, length(samples_ns)), rep(0L, length(samples_ns)),
                                 seq_from - 1L + seq_along(samples_ns), samples_ns))
  }
  id
}

add_probe <- function(path, run_id, stage, point, prim, duration_ns, outcome = "ok") {
  con <- DBI::dbConnect(RSQLite::SQLite(), path)
  on.exit(DBI::dbDisconnect(con))
  DBI::dbExecute(con, paste(
    "INSERT INTO probes(run_id, stage, point, prim, duration_ns, outcome, gp_exp, gp_normal)",
    "VALUES (?, ?, ?, ?, ?, ?, 0, 0)"),
    params = list(run_id, stage, point, prim, duration_ns, outcome))
}

# Samples (ns) of a run whose kernel p50 is exactly p50_us microseconds:
# 10 samples, sorted index floor(10 * 50 / 100) = 5 holds p50.
samples_with_p50 <- function(p50_us) {
  p50_us * 1000 * c(0.5, 0.6, 0.7, 0.8, 1, 1.1, 1.2, 1.3, 1.5, 3)
}

# A database with one or more cells, n runs per variant and cell whose
# per-run p50 values are `base` and `cand` (vectors, microseconds).
gate_db <- function(base, cand, cells = "v4-n1/normal/w1-r0",
                    baseline = "stock", candidate = "cand", path = new_db()) {
  for (cell in cells) {
    for (i in seq_along(base)) add_run(path, baseline, cell, samples_ns = samples_with_p50(base[i]), rep = i)
    for (i in seq_along(cand)) add_run(path, candidate, cell, samples_ns = samples_with_p50(cand[i]), rep = i)
  }
  path
}

# Run an entry script of stats/exec with Rscript; returns list(status,
# stdout, stderr).
run_script <- function(script, args) {
  out <- tempfile(); err <- tempfile()
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c(shQuote(file.path(stats_root, "exec", script)), shQuote(args)),
                    stdout = out, stderr = err)
  list(status = status, stdout = readLines(out, warn = FALSE), stderr = readLines(err, warn = FALSE))
}

# Minimal XML well-formedness check (used when xml2 is not installed):
# balanced and properly nested tags, quoted attributes without raw '<' or
# '&', no stray '&' outside entities, a single root element.
# Returns TRUE or stops with the reason.
xml_well_formed <- function(text) {
  if (requireNamespace("xml2", quietly = TRUE)) {
    xml2::read_xml(text)
    return(TRUE)
  }
  body <- sub("^<\\?xml[^>]*\\?>\\s*", "", text)
  if (grepl("&(?!(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)", body, perl = TRUE)) {
    stop("stray '&'")
  }
  tags <- regmatches(body, gregexpr("<[^<>]*>", body))[[1]]
  rest <- gsub("<[^<>]*>", "", body)
  if (grepl("[<>]", rest)) stop("stray '<' or '>' in text")
  stack <- character()
  roots <- 0
  for (t in tags) {
    if (startsWith(t, "<!--")) next
    if (startsWith(t, "</")) {
      name <- sub("^</([^[:space:]>]+).*", "\\1", t)
      if (!length(stack) || stack[length(stack)] != name) stop("mismatched </", name, ">")
      stack <- stack[-length(stack)]
      next
    }
    name <- sub("^<([^[:space:]/>]+).*", "\\1", t)
    attrs <- sub("^<[^[:space:]/>]+", "", sub("/?>$", "", t))
    if (!grepl("^(\\s+[A-Za-z_:][-A-Za-z0-9_:.]*=\"[^\"<]*\")*\\s*$", attrs)) {
      stop("bad attributes in ", t)
    }
    if (!length(stack)) roots <- roots + 1
    if (!endsWith(t, "/>")) stack <- c(stack, name)
  }
  if (length(stack)) stop("unclosed <", stack[length(stack)], ">")
  if (roots != 1) stop("expected one root element, got ", roots)
  TRUE
}

# The Monte Carlo checks of error rates take about half of this suite's
# time: make check runs them, the inner loop (make check-unit, with
# RCUWB_SKIP_MONTE_CARLO=1) leaves them out and says so.
skip_monte_carlo <- function() {
  if (nzchar(Sys.getenv("RCUWB_SKIP_MONTE_CARLO"))) skip("a Monte Carlo check (make check runs it)")
}
