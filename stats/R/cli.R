# Command-line parsing and validation for the entry scripts (exec/rcuwb-*.R). Bad input raises an "rcuwb_usage" condition whose message is one
# line naming the option and the bad value; the scripts print it and exit 64.

EXIT_USAGE <- 64L
EXIT_INTERNAL <- 70L

usage_error <- function(fmt, ...) {
  msg <- sprintf(fmt, ...)
  stop(structure(class = c("rcuwb_usage", "error", "condition"),
                 list(message = msg, call = NULL)))
}

# Parse args against a spec: a named character vector mapping option name
# (without "--") to "value", "flag" or "optional" (a value may follow; when
# the next argument is missing or starts with "--", the value is TRUE).
# Accepts "--name value" and "--name=value". Returns a named list.
parse_cli <- function(args, spec) {
  out <- list()
  i <- 1
  while (i <= length(args)) {
    a <- args[i]
    if (!startsWith(a, "--")) usage_error("unexpected argument '%s'", a)
    name <- sub("^--", "", a)
    value <- NULL
    if (grepl("=", name, fixed = TRUE)) {
      value <- sub("^[^=]*=", "", name)
      name <- sub("=.*$", "", name)
    }
    if (!name %in% names(spec)) usage_error("unknown option '--%s'", name)
    type <- spec[[name]]
    if (type == "flag") {
      if (!is.null(value)) usage_error("option '--%s' takes no value (got '%s')", name, value)
      value <- TRUE
    } else if (is.null(value)) {
      nxt <- if (i < length(args)) args[i + 1] else NA_character_
      if (!is.na(nxt) && (!startsWith(nxt, "--") || nxt == "--")) {
        value <- nxt
        i <- i + 1
      } else if (type == "optional") {
        value <- TRUE
      } else {
        usage_error("option '--%s' needs a value", name)
      }
    }
    out[[name]] <- value
    i <- i + 1
  }
  out
}

require_opts <- function(opts, names) {
  for (n in names) {
    if (is.null(opts[[n]]) || isTRUE(opts[[n]]) || !nzchar(opts[[n]])) {
      usage_error("missing required option '--%s'", n)
    }
  }
}

# "5%" -> 0.05, "0.05" -> 0.05. A bare number must be a fraction (< 1).
parse_fraction <- function(x, name) {
  s <- trimws(x)
  if (grepl("^[+]?[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?%$", s)) {
    v <- as.numeric(sub("%$", "", s)) / 100
  } else if (grepl("^[+]?[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?$", s)) {
    v <- as.numeric(s)
    if (v >= 1) usage_error("bad value for --%s: '%s' (write a percentage like 5%% or a fraction like 0.05)", name, x)
  } else {
    usage_error("bad value for --%s: '%s' (expected a percentage like 5%% or a fraction like 0.05)", name, x)
  }
  v
}

parse_alpha <- function(x, name = "alpha") {
  v <- suppressWarnings(as.numeric(x))
  if (is.na(v) || v <= 0 || v >= 1) {
    usage_error("bad value for --%s: '%s' (expected a number in (0, 1), e.g. 0.05)", name, x)
  }
  v
}

parse_int <- function(x, name, min = 1) {
  if (!grepl("^[0-9]+$", trimws(x))) {
    usage_error("bad value for --%s: '%s' (expected an integer >= %d)", name, x, as.integer(min))
  }
  v <- as.numeric(x)
  if (v < min) usage_error("bad value for --%s: '%s' (expected an integer >= %d)", name, x, as.integer(min))
  v
}

parse_list <- function(x, name) {
  v <- trimws(strsplit(x, ",", fixed = TRUE)[[1]])
  v <- v[nzchar(v)]
  if (!length(v)) usage_error("bad value for --%s: '%s' (expected a comma-separated list)", name, x)
  v
}

parse_metrics <- function(x, name = "metrics") {
  v <- parse_list(x, name)
  bad <- setdiff(v, RCUWB_METRICS)
  if (length(bad)) {
    usage_error("bad value for --%s: '%s' (known metrics: %s)", name, bad[1],
                paste(RCUWB_METRICS, collapse = ", "))
  }
  v
}

parse_since <- function(x) {
  if (!grepl("^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9:]+)?)?$", x)) {
    usage_error("bad value for --since: '%s' (expected an ISO-8601 date such as 2025-01-31)", x)
  }
  x
}

# The database must be a readable SQLite file with a runs table.
check_db <- function(path) {
  if (!file.exists(path)) usage_error("bad value for --db: '%s' (no such file)", path)
  ok <- tryCatch(with_db(path, function(con) DBI::dbExistsTable(con, "runs")),
                 error = function(e) FALSE)
  if (!isTRUE(ok)) usage_error("bad value for --db: '%s' (not an rcuwb SQLite database)", path)
  path
}

# Every named variant (and matrix) must occur in the database.
check_known <- function(db, column, values, option) {
  known <- with_db(db, function(con) {
    DBI::dbGetQuery(con, sprintf("SELECT DISTINCT %s AS v FROM runs ORDER BY 1", column))$v
  })
  for (v in values) {
    if (!v %in% known) {
      shown <- utils::head(stats::na.omit(known), 20)
      usage_error("bad value for --%s: '%s' (not in the database; known: %s)", option, v,
                  if (length(shown)) paste(shown, collapse = ", ") else "none")
    }
  }
  values
}

# Run an entry script's main(args) and exit with its status: one line on
# stderr for bad input (EXIT_USAGE) or an internal error (EXIT_INTERNAL).
run_main <- function(name, main) {
  status <- tryCatch(
    main(commandArgs(trailingOnly = TRUE)),
    rcuwb_usage = function(e) {
      cat("rcuwb ", name, ": ", conditionMessage(e), "\n", sep = "", file = stderr())
      EXIT_USAGE
    },
    error = function(e) {
      cat("rcuwb ", name, ": internal error: ", conditionMessage(e), "\n", sep = "", file = stderr())
      EXIT_INTERNAL
    }
  )
  quit(save = "no", status = status)
}
