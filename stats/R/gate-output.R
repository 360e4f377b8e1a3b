# Serialising a gate result: JSON (jsonlite) and JUnit XML.

# JSON text of a gate result (see gate()). NA -> null; numbers at full
# precision; data.frames as arrays of row objects.
gate_json <- function(res, pretty = TRUE) {
  cav <- res$caveats
  obj <- list(
    status = res$status,
    status_name = res$status_name,
    baseline = res$baseline,
    candidate = res$candidate,
    matrix = if (is.null(res$matrix)) NULL else res$matrix,
    threshold = res$threshold,
    alpha = res$alpha,
    min_runs = res$min_runs,
    metrics = I(res$metrics),
    conf = res$conf,
    family_size = res$family_size,
    caveats = list(
      text = res$caveat_text,
      accel = I(cav$accel),
      max_oversub = cav$max_oversub,
      oversubscribed = cav$oversubscribed,
      host_pus = I(cav$host_pus),
      hosts = I(cav$hosts)
    ),
    cells = res$verdicts,
    comparisons = res$comparisons,
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
# significant slowdown, <error> for a hard failure, <skipped> for not enough
# data (or too little power); passing cells are empty testcases.
gate_junit <- function(res) {
  v <- res$verdicts
  suite <- sprintf("rcuwb.gate.%s-vs-%s", res$candidate, res$baseline)
  n_fail <- sum(v$verdict == "slowdown")
  n_err <- sum(v$verdict == "hard-failure")
  n_skip <- sum(v$verdict %in% c("insufficient", "underpowered"))
  cases <- vapply(seq_len(nrow(v)), function(i) {
    msg <- v$message[i]
    body <- switch(
      v$verdict[i],
      "hard-failure" = sprintf('      <error type="hard-failure" message="%s">%s</error>\n',
                               xml_escape(msg, TRUE), xml_escape(msg)),
      slowdown = sprintf('      <failure type="slowdown" message="%s">%s</failure>\n',
                         xml_escape(msg, TRUE), xml_escape(msg)),
      insufficient = sprintf('      <skipped message="%s"/>\n', xml_escape(msg, TRUE)),
      underpowered = sprintf('      <skipped message="%s"/>\n', xml_escape(msg, TRUE)),
      ""
    )
    open <- sprintf('    <testcase classname="%s" name="%s" time="0"',
                    xml_escape(suite, TRUE), xml_escape(v$cell[i], TRUE))
    if (nzchar(body)) {
      paste0(open, ">\n", body, "    </testcase>\n")
    } else {
      paste0(open, "/>\n")
    }
  }, character(1))
  if (!nrow(v)) {
    n_skip <- 1L
    cases <- sprintf(paste0('    <testcase classname="%s" name="(no cells)" time="0">\n',
                            '      <skipped message="%s"/>\n    </testcase>\n'),
                     xml_escape(suite, TRUE),
                     xml_escape(sprintf("no rcuscale runs of '%s' or '%s'", res$baseline, res$candidate), TRUE))
  }
  props <- c(
    baseline = res$baseline, candidate = res$candidate,
    threshold = format(res$threshold), alpha = format(res$alpha),
    min_runs = format(res$min_runs), metrics = paste(res$metrics, collapse = ","),
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
