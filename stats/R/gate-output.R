# Serialising a gate result: JSON (jsonlite) and JUnit XML.

# JSON text of a gate result (see gate()). NA -> null; numbers at full
# precision; data.frames as arrays of row objects.
gate_json <- function(res, pretty = TRUE) {
  cav <- res$caveats
  rows <- res$rows
  if (!is.null(rows)) {
    rows$runs_needed <- ifelse(is.infinite(rows$runs_needed), NA, rows$runs_needed)
    # +-Inf bounds (not reachable with so few runs) become null
    for (k in c("lower", "upper", "estimate")) rows[[k]][!is.finite(rows[[k]])] <- NA
  }
  cells <- res$cells
  cells$runs_needed_unbounded <- is.infinite(cells$runs_needed)
  cells$runs_needed[is.infinite(cells$runs_needed)] <- NA
  obj <- list(
    status = res$status,
    status_name = res$status_name,
    baseline = res$baseline,
    candidate = res$candidate,
    matrix = if (is.null(res$matrix)) NULL else res$matrix,
    threshold = res$threshold,
    alpha = res$alpha,
    alpha_per_stat = res$alpha_stat,
    alpha_slowdown = res$alpha_slow,
    stats = I(res$stats),
    stats_by_mode = if (length(res$mode_stats)) lapply(res$mode_stats, function(x) I(intersect(res$stats, x))) else NULL,
    reported = I(res$reported),
    min_runs = res$min_runs,
    rule = if (is.null(res$seq)) {
      paste("PASS: one-sided upper bound < threshold; SLOWDOWN: Holm-adjusted one-sided",
            "rank-sum p < alpha_per_stat and estimate > threshold; else INCONCLUSIVE")
    } else {
      paste("sequential: PASS: repeated one-sided upper bound < threshold; SLOWDOWN: rank-sum",
            "statistic over its O'Brien-Fleming-type spending boundary (Holm over cells) and",
            "estimate > threshold; each keeps its level over all looks; else INCONCLUSIVE")
    },
    sequential = if (is.null(res$seq)) NULL else list(
      looks_before = I(res$seq$cutoffs), max_runs = res$seq$max_runs, final = isTRUE(res$seq$final)),
    caveats = list(
      text = res$caveat_text,
      accel = I(cav$accel),
      max_oversub = cav$max_oversub,
      oversubscribed = cav$oversubscribed,
      host_pus = I(cav$host_pus),
      hosts = I(cav$hosts)
    ),
    cells = cells,
    rows = rows,
    failures = res$failures,
    # per row and host: the values per side that entered it (n_old, n_new)
    # and the runs; hosts where only one side ran, left out
    hosts = res$hosts,
    left_out = res$left_out,
    refused = res$refused,
    hard_failures = res$hard_failures,
    text = I(res$text)
  )
  obj <- obj[!vapply(obj, is.null, logical(1))]
  as.character(jsonlite::toJSON(
    obj, auto_unbox = TRUE, pretty = pretty, na = "null", null = "null",
    digits = NA, dataframe = "rows"
  ))
}

# Escape text for XML content and attribute values, dropping characters that
# XML 1.0 does not allow (control characters other than tab, LF, CR).
xml_escape <- function(x, attr = FALSE) {
  x <- ifelse(is.na(x), "", as.character(x))
  x <- gsub("[\x01-\x08\x0B\x0C\x0E-\x1F]", "", x, perl = TRUE)
  x <- gsub("&", "&amp;", x, fixed = TRUE)
  x <- gsub("<", "&lt;", x, fixed = TRUE)
  x <- gsub(">", "&gt;", x, fixed = TRUE)
  if (attr) {
    x <- gsub("\"", "&quot;", x, fixed = TRUE)
    x <- gsub("\n", "&#10;", x, fixed = TRUE)
    x <- gsub("\r", "&#13;", x, fixed = TRUE)
    x <- gsub("\t", "&#9;", x, fixed = TRUE)
  }
  x
}

# JUnit XML of a gate result: one <testcase> per cell; <failure> for a
# slowdown, <error> for a hard failure or a refused comparison, <skipped>
# for an inconclusive cell; passing cells are empty testcases.  The
# message carries the rows: estimate, bounds, level, p and runs-needed.
gate_junit <- function(res) {
  v <- res$cells
  suite <- sprintf("rcuwb.gate.%s-vs-%s", res$candidate, res$baseline)
  blocked <- nrow(res$hard_failures) > 0 || nrow(res$refused) > 0
  msg_of <- function(i) {
    r <- res$rows[res$rows$cell == v$cell[i] & res$rows$matrix == v$matrix[i], , drop = FALSE]
    h <- res$hosts[res$hosts$cell == v$cell[i] & res$hosts$matrix == v$matrix[i], , drop = FALSE]
    hosts <- if (isTRUE(res$several_hosts) && nrow(h)) paste("hosts:", gate_hosts_text(h))
    paste(c(v$verdict[i], gate_row_text(r), hosts), collapse = "; ")
  }
  cases <- vapply(seq_len(nrow(v)), function(i) {
    msg <- msg_of(i)
    body <- switch(
      v$verdict[i],
      SLOWDOWN = sprintf('      <failure type="slowdown" message="%s">%s</failure>\n',
                         xml_escape(msg, TRUE), xml_escape(msg)),
      INCONCLUSIVE = sprintf('      <skipped message="%s"/>\n', xml_escape(msg, TRUE)),
      ""
    )
    open <- sprintf('    <testcase classname="%s" name="%s" time="0"',
                    xml_escape(suite, TRUE), xml_escape(v$cell[i], TRUE))
    if (nzchar(body)) paste0(open, ">\n", body, "    </testcase>\n") else paste0(open, "/>\n")
  }, character(1))
  n_fail <- sum(v$verdict == "SLOWDOWN")
  n_skip <- sum(v$verdict == "INCONCLUSIVE")
  n_err <- 0L
  if (blocked) {
    bad <- c(if (nrow(res$hard_failures)) {
      h <- res$hard_failures
      sprintf("%s: run %s %s%s", h$cell, h$run_id, h$outcome,
              ifelse(nzchar(h$detail), paste0(": ", h$detail), ""))
    }, if (nrow(res$refused)) {
      f <- res$refused
      sprintf("%s: %s differs (%s vs %s)", f$cell, f$field, f$baseline, f$candidate)
    })
    for (b in bad) {
      cases <- c(cases, sprintf(paste0('    <testcase classname="%s" name="%s" time="0">\n',
                                       '      <error type="hard-failure" message="%s">%s</error>\n',
                                       '    </testcase>\n'),
                                xml_escape(suite, TRUE), xml_escape(sub(":.*", "", b), TRUE),
                                xml_escape(b, TRUE), xml_escape(b)))
      n_err <- n_err + 1L
    }
  }
  if (!length(cases)) {
    n_skip <- 1L
    cases <- sprintf(paste0('    <testcase classname="%s" name="(no cells)" time="0">\n',
                            '      <skipped message="%s"/>\n    </testcase>\n'),
                     xml_escape(suite, TRUE),
                     xml_escape(sprintf("no rcuscale runs of '%s' or '%s'", res$baseline, res$candidate), TRUE))
  }
  props <- c(
    baseline = res$baseline, candidate = res$candidate,
    threshold = format(res$threshold), alpha = format(res$alpha),
    alpha_per_stat = format(res$alpha_stat), stats = paste(res$stats, collapse = ","),
    status = format(res$status), status_name = res$status_name,
    caveats = res$caveat_text
  )
  props_xml <- paste0(sprintf('      <property name="%s" value="%s"/>\n',
                              names(props), xml_escape(props, TRUE)), collapse = "")
  paste0(
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    sprintf('<testsuites name="rcuwb gate" tests="%d" failures="%d" errors="%d" skipped="%d">\n',
            length(cases), n_fail, n_err, n_skip),
    sprintf('  <testsuite name="%s" tests="%d" failures="%d" errors="%d" skipped="%d" time="0">\n',
            xml_escape(suite, TRUE), length(cases), n_fail, n_err, n_skip),
    "    <properties>\n", props_xml, "    </properties>\n",
    paste0(cases, collapse = ""),
    "    <system-out>", xml_escape(paste(res$text, collapse = "\n")), "</system-out>\n",
    "  </testsuite>\n",
    "</testsuites>\n"
  )
}

write_utf8 <- function(text, path) {
  con <- file(path, open = "w", encoding = "UTF-8")
  on.exit(close(con))
  writeLines(text, con, sep = if (length(text) == 1 && grepl("\n$", text)) "" else "\n")
}
