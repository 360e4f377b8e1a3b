# Formatting: durations, percentages, benchstat-style tables, Markdown and
# HTML tables.

# Duration given in microseconds -> "812ns", "12.35µs", "3.210ms", "1.500s"
# (4 significant digits, like benchstat's auto-scaled units).
fmt_time_us <- function(us) {
  vapply(us, function(x) {
    if (is.na(x)) return("-")
    ax <- abs(x)
    if (ax < 1) {
      v <- x * 1000; unit <- "ns"
    } else if (ax < 1000) {
      v <- x; unit <- "\u00b5s"
    } else if (ax < 1e6) {
      v <- x / 1000; unit <- "ms"
    } else {
      v <- x / 1e6; unit <- "s"
    }
    paste0(formatC(signif(v, 4), digits = 4, format = "fg", flag = "#"), unit)
  }, character(1))
}

# Signed percentage: 0.1234 -> "+12.34%".
fmt_pct <- function(x, digits = 2) {
  ifelse(is.na(x), "-", sprintf(paste0("%+.", digits, "f%%"), 100 * x))
}

# A value with its interval, "x [lo, hi]", each formatted by `f`; "-" where
# x is NA.
fmt_num_ci <- function(x, lo, hi, f) {
  ifelse(is.na(x), "-", sprintf("%s [%s, %s]", f(x), f(lo), f(hi)))
}

# A relative change with its interval, "+x% [+lo%, +hi%]"; "-" where NA.
fmt_pct_ci <- function(x, lo, hi, digits = 1) fmt_num_ci(x, lo, hi, function(v) fmt_pct(v, digits))

fmt_p <- function(p) ifelse(is.na(p), "-", sprintf("%.3f", p))

# benchstat's "± x%": the larger distance from the median to a CI bound,
# relative to the median; "± ∞" when there is no CI (fewer than 2 runs).
fmt_pm <- function(med, lo, hi) {
  ifelse(
    is.na(med), "",
    ifelse(is.na(lo) | is.na(hi) | med == 0, "\u00b1 \u221e",
           sprintf("\u00b1 %.0f%%", 100 * pmax(hi - med, med - lo) / abs(med)))
  )
}

# Median with its "± x%" (or "-" when there are no runs).
fmt_center <- function(med, lo, hi) {
  ifelse(is.na(med), "-", paste(fmt_time_us(med), fmt_pm(med, lo, hi)))
}

# Pad a character matrix into aligned text columns (left-aligned first
# column, two spaces between columns).
align_columns <- function(m) {
  w <- apply(m, 2, function(col) max(nchar(col, type = "width")))
  lines <- apply(m, 1, function(row) {
    pad <- w - nchar(row, type = "width")
    paste(paste0(row, strrep(" ", pad)), collapse = "  ")
  })
  sub("[[:space:]]+$", "", lines)
}

# benchstat-style text table of one comparison (rows of compare_gp_modes()
# for one metric):
#   cell   old p50 ± ci   new p50 ± ci   delta   (p=0.xxx n=5+5)
# delta is the Hodges-Lehmann relative change; "~" when the change is not
# significant after Holm correction (p shown is the Holm-adjusted one).
# A geomean row of the medians closes the table, as in benchstat.
benchstat_lines <- function(cmp, metric = "p50") {
  cmp <- cmp[cmp$metric == metric, , drop = FALSE]
  if (!nrow(cmp)) return(character())
  old_name <- paste(cmp$baseline[1], metric)
  new_name <- paste(cmp$candidate[1], metric)
  if (length(unique(cmp$baseline)) > 1) old_name <- paste("old", metric)
  if (length(unique(cmp$candidate)) > 1) new_name <- paste("new", metric)
  label <- if (length(unique(cmp$baseline)) > 1) {
    paste0(sub(":.*", "", cmp$baseline), " ", cmp$cell)
  } else {
    cmp$cell
  }
  testable <- !is.na(cmp$p_holm)
  delta <- ifelse(!testable, "",
                  ifelse(cmp$significant, fmt_pct(cmp$rel_change), "~"))
  pn <- ifelse(!testable, "", sprintf("(p=%s n=%d+%d)", fmt_p(cmp$p_holm), cmp$n_old, cmp$n_new))
  m <- cbind(
    label,
    fmt_center(cmp$old_median, cmp$old_lo, cmp$old_hi),
    fmt_center(cmp$new_median, cmp$new_lo, cmp$new_hi),
    delta, pn
  )
  both <- !is.na(cmp$old_median) & !is.na(cmp$new_median)
  if (sum(both) > 1) {
    go <- geomean(cmp$old_median[both])
    gn <- geomean(cmp$new_median[both])
    m <- rbind(m, c("geomean", fmt_time_us(go), fmt_time_us(gn), fmt_pct(gn / go - 1), ""))
  }
  m <- rbind(c("cell", old_name, new_name, "delta", ""), m)
  align_columns(m)
}

# One descriptive line for a comparison table's header.
benchstat_header <- function(cmp, alpha) {
  if (!nrow(cmp)) return("")
  sprintf(paste(
    "delta = Hodges-Lehmann shift / baseline median; '~' = not significant",
    "(Mann-Whitney, Holm-adjusted over %d tests, alpha = %s); ± = bootstrap %s CI of the median over runs."),
    cmp$family_size[1], format(alpha), "95%")
}

md_escape <- function(x) gsub("|", "\\|", x, fixed = TRUE)

# data.frame -> GitHub Markdown table lines.
md_table <- function(df) {
  if (!nrow(df)) return("_(none)_")
  cells <- lapply(df, function(col) md_escape(ifelse(is.na(col), "", as.character(col))))
  body <- do.call(paste, c(cells, sep = " | "))
  c(
    paste("|", paste(md_escape(names(df)), collapse = " | "), "|"),
    paste("|", paste(rep("---", ncol(df)), collapse = " | "), "|"),
    paste("|", body, "|")
  )
}

html_escape <- function(x) {
  x <- gsub("&", "&amp;", x, fixed = TRUE)
  x <- gsub("<", "&lt;", x, fixed = TRUE)
  x <- gsub(">", "&gt;", x, fixed = TRUE)
  gsub("\"", "&quot;", x, fixed = TRUE)
}

# data.frame -> HTML <table> string.
html_table <- function(df) {
  if (!nrow(df)) return("<p><em>(none)</em></p>")
  head <- paste0("<tr>", paste0("<th>", html_escape(names(df)), "</th>", collapse = ""), "</tr>")
  cells <- lapply(df, function(col) html_escape(ifelse(is.na(col), "", as.character(col))))
  rows <- do.call(paste0, c(lapply(cells, function(col) paste0("<td>", col, "</td>"))))
  paste0("<table>\n<thead>", head, "</thead>\n<tbody>\n",
         paste0("<tr>", rows, "</tr>", collapse = "\n"), "\n</tbody>\n</table>")
}
