# Writing a gate result (see gate()): the text lines, JSON (jsonlite) and
# JUnit XML, the gate's three outputs in one place.

fmt_needed <- function(n) {
  ifelse(is.na(n), "unknown", ifelse(is.infinite(n), sprintf("> %d", RUNS_NEEDED_CAP),
                                     format(n, scientific = FALSE, trim = TRUE)))
}

# One line per row: "mean +1.2% [97.5% bounds -3.0%, +5.9%] p=0.31 n=5+5".
gate_row_text <- function(r) {
  bounds <- sprintf("[%s%% bounds %s, %s]", format(round(100 * r$level, 1)),
                    fmt_pct(r$lower), fmt_pct(r$upper))
  cens <- ifelse(r$censored_old + r$censored_new > 0,
                 sprintf(" (%d+%d timed out)", r$censored_old, r$censored_new), "")
  need <- ifelse(r$verdict == "INCONCLUSIVE",
                 paste0("; decide with ", fmt_needed(r$runs_needed), " runs per side"), "")
  test <- ifelse(is.na(r$look), paste0(" p=", fmt_p(r$p)),
                 sprintf(" look %s of %s", r$look, r$looks))
  sprintf("%s %s %s%s%s n=%d+%d%s%s", r$stat, fmt_pct(r$estimate), bounds, test,
          ifelse(is.na(r$p_holm), "", paste0(" p_holm=", fmt_p(r$p_holm))),
          r$n_old, r$n_new, cens, need)
}

# "tcp (5+5), session (4+4)": a row's hosts with the values per side
# (baseline + candidate) that entered it.
gate_hosts_text <- function(h) {
  paste(sprintf("%s (%d+%d)", h$host, h$n_old, h$n_new), collapse = ", ")
}

# "left out: host big3 (3 runs of 'stock', none of 'cand')", one host per
# clause: the hosts where only one side ran.
gate_left_out_text <- function(lo, baseline, candidate) {
  paste0("left out: ", paste(sprintf("host %s (%d run%s of '%s', none of '%s')", lo$host, lo$runs,
                                     ifelse(lo$runs == 1, "", "s"), lo$variant,
                                     ifelse(lo$variant == baseline, candidate, baseline)),
                             collapse = "; "))
}

# The gated statistics in words: "mean and p90 (normal GPs: mean)".
gated_stats_text <- function(res) {
  txt <- paste(res$stats, collapse = " and ")
  for (m in names(res$mode_stats)) {
    ms <- intersect(res$stats, res$mode_stats[[m]])
    if (!setequal(ms, res$stats)) {
      txt <- sprintf("%s (%s GPs: %s)", txt, m, paste(ms, collapse = " and "))
    }
  }
  txt
}

# Human-readable lines for a gate result.
gate_text <- function(res) {
  head <- sprintf("rcuwb gate: %s (status %d): candidate '%s' vs baseline '%s'%s",
                  res$status_name, res$status, res$candidate, res$baseline,
                  if (is.null(res$matrix)) "" else paste0(" in matrix '", paste(res$matrix, collapse = ","), "'"))
  rule <- sprintf(paste(
    "  rule: PASS when the one-sided %s%% upper bound of the slowdown is below %s;",
    "SLOWDOWN when the one-sided rank-sum test (Holm over testable cells) has p < %s and the",
    "estimate is above %s, or the candidate fails more often (Fisher, p < %s); per-run %s on",
    "the log scale (alpha %s split), %s reported"),
    format(round(100 * (1 - res$alpha_stat), 2)), fmt_pct(res$threshold), format(signif(res$alpha_slow, 3)),
    fmt_pct(res$threshold), format(signif(res$alpha_slow, 3)), gated_stats_text(res),
    format(res$alpha),
    paste(res$reported, collapse = ", "))
  if (!is.null(res$seq)) {
    rule <- sprintf(paste(
      "  rule (sequential, at most %d runs a side%s): PASS when the repeated one-sided %s%% upper",
      "bound of the slowdown is below %s, SLOWDOWN when the rank-sum statistic crosses its",
      "O'Brien-Fleming-type spending boundary (Holm over cells) and the estimate is above %s;",
      "each decision keeps its level over every look; per-run %s on the log scale (alpha %s split)"),
      res$seq$max_runs, if (isTRUE(res$seq$final)) ", final look" else "",
      format(round(100 * (1 - res$alpha_stat), 2)), fmt_pct(res$threshold), fmt_pct(res$threshold),
      gated_stats_text(res), format(res$alpha))
  }
  cav <- paste0("  caveat: ", res$caveat_text)
  lines <- c(head, rule, cav)
  if (isTRUE(res$several_hosts)) {
    lines <- c(lines, paste(
      "  hosts: runs compared within each host and combined over hosts of one shape (stratified",
      "Hodges-Lehmann estimate, one-sided van Elteren test, bounds by inverting it); hosts of",
      "another accelerator, host PUs, QEMU or libvirt are separate rows (cell@hosts)"))
  }
  if (nrow(res$hard_failures)) {
    h <- res$hard_failures
    lines <- c(lines, sprintf("  HARD FAILURE  %s  run %s (%s rep %s) %s%s", h$cell, h$run_id,
                              h$kind, h$rep, h$outcome,
                              ifelse(nzchar(h$detail), paste0(": ", h$detail), "")))
  }
  if (nrow(res$refused)) {
    f <- res$refused
    lines <- c(lines, sprintf(
      "  REFUSED  %s%s  %s differs: %s '%s', %s '%s' (measure both sides alike)",
      f$cell, ifelse(nzchar(f$matrix), paste0(" [", f$matrix, "]"), ""), f$field,
      res$baseline, f$baseline, res$candidate, f$candidate))
    return(lines)
  }
  if (!nrow(res$cells)) {
    return(c(lines, sprintf("  no rcuscale runs of '%s' or '%s' found", res$baseline, res$candidate)))
  }
  several <- length(unique(res$cells$matrix)) > 1
  r <- res$rows
  ord <- order(match(res$cells$verdict, c("SLOWDOWN", "INCONCLUSIVE", "PASS")), res$cells$cell)
  told <- character()
  for (i in ord) {
    cl <- res$cells[i, ]
    x <- r[r$cell == cl$cell & r$matrix == cl$matrix, , drop = FALSE]
    f <- res$failures[res$failures$cell == cl$cell & res$failures$matrix == cl$matrix, , drop = FALSE]
    name <- paste0(cl$cell, if (several) paste0(" [", cl$matrix, "]") else "")
    extra <- if (cl$verdict == "INCONCLUSIVE") {
      paste0(": decide with ", fmt_needed(cl$runs_needed), " runs per side")
    } else ""
    lines <- c(lines, sprintf("  %-12s  %s%s", cl$verdict, name, extra))
    # on several hosts: the hosts of the row with their runs per side, and
    # the hosts of the cell left out (under the cell's first row)
    if (isTRUE(res$several_hosts)) {
      h <- res$hosts[res$hosts$cell == cl$cell & res$hosts$matrix == cl$matrix, , drop = FALSE]
      if (nrow(h)) {
        lines <- c(lines, paste0("      hosts: ", gate_hosts_text(h)))
        base <- h$base_cell[1]
        lo <- res$left_out[res$left_out$cell == base & res$left_out$matrix == cl$matrix, ,
                           drop = FALSE]
        if (nrow(lo) && !(paste(base, cl$matrix) %in% told)) {
          told <- c(told, paste(base, cl$matrix))
          lines <- c(lines, paste0("      ", gate_left_out_text(lo, res$baseline, res$candidate)))
        }
      }
    }
    lines <- c(lines, paste0("      ", ifelse(x$gated, sprintf("%-12s ", x$verdict),
                                                  sprintf("%-12s ", "(reported)")),
                             gate_row_text(x)))
    if (nrow(f) && (f$failed_old + f$failed_new) > 0) {
      lines <- c(lines, sprintf("      %-12s failures %d/%d vs %d/%d%s p=%s", f$verdict,
                                f$failed_new, f$runs_new, f$failed_old, f$runs_old,
                                ifelse(nzchar(f$what_new), paste0(" (", f$what_new, ")"), ""),
                                fmt_p(f$p)))
    }
  }
  lines
}

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
