# Reading the rcuwb SQLite database (schema written by the C runner).
#
# Every reader takes `db` as either a path to the SQLite file or an open DBI
# connection. A path is opened read-only for the duration of the call.
# 64-bit INTEGER columns come back as plain doubles (never integer64), so the
# rest of the package can use ordinary arithmetic on nanosecond durations.

# Outcomes, as written by the runner.
RCUWB_OUTCOMES <- c(
  "ok", "timeout", "crash", "badness", "rcuscale-error", "rcuscale-aborted",
  "deadlock", "topology-mismatch", "qemu-failed", "interrupted", "host-failed"
)

# Outcomes that are a verdict on the kernel under test (not on the harness).
RCUWB_HARD_FAILURES <- c(
  "deadlock", "rcuscale-aborted", "crash", "badness", "topology-mismatch",
  "rcuscale-error"
)

# A run is host-busy when processes other than rcuwb's own used more than a
# share of the host's PUs while it ran: its latencies measure the host's
# scheduler too, so it is not a data point, and `rcuwb run --resume`
# repeats it.  The rule is the runner's (HOST_BUSY_SHARE,
# runner/src/hosts/hostload.h), read here from the database's view run_status
# (runner/src/results/db.c): its columns host_busy (0/1), host_busy_share and
# status (the outcome, or host-busy for such an ok run), which read_runs()
# returns with every column of runs.

# TRUE for host-busy runs (any outcome); a frame without the view's
# host_busy (not read from a database) has none.
host_busy <- function(runs) {
  b <- runs$host_busy
  if (is.null(b)) return(rep(FALSE, nrow(runs)))
  !is.na(b) & as.numeric(b) != 0
}

# The share of the host's PUs beyond which a run of `runs` is host-busy (NA
# when not read from a database), for texts that name the rule.
host_busy_share <- function(runs) {
  s <- unique(stats::na.omit(suppressWarnings(as.numeric(runs$host_busy_share))))
  if (length(s)) max(s) else NA_real_
}

# Stop unless the database has `name`, a table or view of the runner's
# schema (runner/src/results/db.c makes them all; the R side creates none).
need_schema <- function(con, name) {
  if (!DBI::dbExistsTable(con, name)) {
    stop(sprintf(paste("the database has no %s (an older rcuwb schema): open it once with",
                       "this rcuwb, e.g. rcuwb -d DB summary, to bring it up to date"), name),
         call. = FALSE)
  }
  invisible(con)
}

# Open `db` (a path or a connection) and call `fn(con)`; close it again if we
# opened it.  Read-only unless `write` (the change-point state is the only
# thing the R side writes; it waits up to 10 s for a runner's write).
with_db <- function(db, fn, write = FALSE) {
  if (inherits(db, "DBIConnection")) {
    return(fn(db))
  }
  if (!is.character(db) || length(db) != 1 || is.na(db) || !nzchar(db)) {
    stop("db must be a path to an SQLite file or a DBI connection", call. = FALSE)
  }
  if (!file.exists(db)) {
    stop(sprintf("database file not found: %s", db), call. = FALSE)
  }
  con <- DBI::dbConnect(
    RSQLite::SQLite(), db,
    flags = if (write) RSQLite::SQLITE_RW else RSQLite::SQLITE_RO, bigint = "numeric"
  )
  on.exit(DBI::dbDisconnect(con), add = TRUE)
  if (write) DBI::dbExecute(con, "PRAGMA busy_timeout = 10000")
  fn(con)
}

# integer64 (from a caller's own connection) -> double; leave the rest alone.
undo_integer64 <- function(df) {
  for (nm in names(df)) {
    if (inherits(df[[nm]], "integer64")) {
      df[[nm]] <- as.numeric(df[[nm]])
    }
  }
  df
}

# Build "WHERE ..." for the common run filters. Returns list(sql, params).
run_filter_sql <- function(alias = "r", matrix = NULL, variants = NULL,
                           since = NULL, kinds = NULL, run_ids = NULL) {
  clauses <- character()
  params <- list()
  col <- function(x) paste0(alias, ".", x)
  add_in <- function(column, values) {
    values <- unique(as.character(values))
    clauses <<- c(clauses, sprintf(
      "%s IN (%s)", col(column), paste(rep("?", length(values)), collapse = ", ")
    ))
    params <<- c(params, as.list(values))
  }
  if (!is.null(matrix)) add_in("matrix", matrix)
  if (!is.null(variants)) add_in("variant", variants)
  if (!is.null(kinds)) add_in("kind", kinds)
  if (!is.null(run_ids)) {
    ids <- unique(as.numeric(run_ids))
    clauses <- c(clauses, sprintf(
      "%s IN (%s)", col("id"), paste(rep("?", length(ids)), collapse = ", ")
    ))
    params <- c(params, as.list(ids))
  }
  if (!is.null(since)) {
    # started_at is ISO-8601 text; SQLite's datetime() normalises "T" vs " "
    # separators and "Z" / "+hh:mm" zone suffixes before comparing.
    clauses <- c(clauses, sprintf("datetime(%s) >= datetime(?)", col("started_at")))
    params <- c(params, list(as.character(since)))
  }
  sql <- if (length(clauses)) paste("WHERE", paste(clauses, collapse = " AND ")) else ""
  list(sql = sql, params = unname(params))
}

query <- function(con, sql, params) {
  res <- if (length(params)) {
    DBI::dbGetQuery(con, sql, params = params)
  } else {
    DBI::dbGetQuery(con, sql)
  }
  undo_integer64(res)
}

# The runs of view run_status (runs and their status: see host_busy()) that
# `where` ("WHERE ..." on alias r, with `params`) selects, ordered by id.
select_runs <- function(con, where = "", params = list()) {
  need_schema(con, "run_status")
  runs <- query(con, paste("SELECT r.* FROM run_status r", where, "ORDER BY r.id"), params)
  runs$boot_params[is.na(runs$boot_params)] <- ""
  runs
}

# All runs (every kind and outcome) matching the filters, ordered by id.
# matrix, variants, kinds: character vectors (NULL = no filter);
# since: ISO-8601 timestamp string, keeps runs with started_at >= since.
read_runs <- function(db, matrix = NULL, variants = NULL, since = NULL,
                      kinds = NULL) {
  f <- run_filter_sql("r", matrix, variants, since, kinds)
  with_db(db, function(con) select_runs(con, f$sql, f$params))
}

# Writer-duration samples (run_id, writer, seq, duration_ns) of the runs
# matching the filters (default: rcuscale runs only), or of `run_ids`.
read_samples <- function(db, matrix = NULL, variants = NULL, since = NULL,
                         run_ids = NULL, kinds = "rcuscale") {
  f <- run_filter_sql("r", matrix, variants, since, kinds, run_ids)
  with_db(db, function(con) {
    sql <- paste(
      "SELECT s.run_id, s.writer, s.seq, s.duration_ns",
      "FROM samples s JOIN runs r ON r.id = s.run_id", f$sql,
      "ORDER BY s.run_id, s.writer, s.seq"
    )
    out <- query(con, sql, f$params)
    out$duration_ns <- as.numeric(out$duration_ns)
    out
  })
}

# Mid-boot probe results joined with the run's variant and boot parameters.
read_probes <- function(db, matrix = NULL, variants = NULL, since = NULL) {
  f <- run_filter_sql("r", matrix, variants, since)
  with_db(db, function(con) {
    sql <- paste(
      "SELECT p.run_id, r.variant, r.cell, r.boot_params, r.outcome AS run_outcome,",
      "p.stage, p.point, p.prim, p.duration_ns, p.outcome, p.gp_exp, p.gp_normal",
      "FROM probes p JOIN runs r ON r.id = p.run_id", f$sql,
      "ORDER BY r.variant, p.stage, p.prim, p.run_id"
    )
    out <- query(con, sql, f$params)
    out$duration_ns <- as.numeric(out$duration_ns)
    out$boot_params[is.na(out$boot_params)] <- ""
    out
  })
}
