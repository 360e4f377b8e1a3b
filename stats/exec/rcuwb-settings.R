#!/usr/bin/env Rscript
# rcuwb settings comparison: two settings of one kernel, interleaved in one
# matrix, told apart by a boot parameter (e.g. perf-configs/studies/holdoff.yaml:
# rcuscale.holdoff=3 against holdoff "boot"), or by where QEMU's threads
# ran (--by emulator: shared is the baseline, apart the candidate), or by
# the guest kernel's Kconfig scenario (--by kconfig: the first of --names is
# the baseline, the second the candidate; without --names, tiny against the
# matrix's one other scenario;
# their configurations differ by design, so the gate allows it), or by
# matrix (--by matrix: the runs of the first of --matrix are the baseline,
# of the second the candidate, e.g. one guest at a time against side by
# side; then the cost table, setting_cost(), replaces the wall-time one).  The runs
# whose boot parameters contain --baseline-param are the baseline, the
# others the candidate; the cells are matched with --drop (holdoff) left out
# of the key.  Prints the gate's verdict on the candidate setting and, per cell,
# runs per hour of each setting (from the runs' wall time, one guest at a
# time).
#
# Usage:
#   Rscript stats/exec/rcuwb-settings.R --db PATH --matrix NAME[,NAME] (--baseline-param TEXT | --by emulator|kconfig|matrix)
#       [--names BASE,CAND] [--drop holdoff|writers|...] [--threshold 5%] [--alpha 0.05]
# Exit status: the gate's (0 pass, 1 slowdown, 2 hard failure/refused, 3
# inconclusive); 64 bad command line.

# The package rcuwb (stats/), loaded from source: exec/load-package.R.
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])),
                 "load-package.R"))

settings_main <- function(args) {
  spec <- c(db = "value", matrix = "value", "baseline-param" = "value", by = "value", drop = "value",
            names = "value", threshold = "value", alpha = "value", help = "flag")
  o <- parse_cli(args, spec)
  if (isTRUE(o$help)) {
    cat("usage: rcuwb-settings.R --db PATH --matrix NAME (--baseline-param TEXT | --by emulator|kconfig|matrix)",
        "[--names B,C] [--drop holdoff|config|emulator|kconfig|writers]",
        "[--threshold 5%] [--alpha 0.05]\n")
    return(0L)
  }
  require_opts(o, c("db", "matrix"))
  db <- check_db(o$db)
  matrix <- check_known(db, "matrix", parse_list(o$matrix, "matrix"), "matrix")
  by_emu <- identical(o$by, "emulator")
  by_kc <- identical(o$by, "kconfig")
  by_mx <- identical(o$by, "matrix")
  if (!is.null(o$by) && !by_emu && !by_kc && !by_mx) {
    usage_error("bad value for --by: '%s' (emulator, kconfig or matrix)", o$by)
  }
  if (is.null(o$by) && is.null(o[["baseline-param"]])) {
    usage_error("give --baseline-param TEXT or --by emulator|kconfig|matrix")
  }
  if (by_mx && length(matrix) != 2) usage_error("--by matrix: give two matrices, baseline first")
  threshold <- parse_fraction(o$threshold %||% "5%", "threshold")
  alpha <- parse_alpha(o$alpha %||% "0.05")
  drop <- parse_list(o$drop %||% (if (by_emu) "emulator" else if (by_kc) "config,kconfig" else
    if (by_mx) "none" else "holdoff"), "drop")
  drop <- setdiff(drop, "none")
  bad <- setdiff(drop, c("holdoff", "config", "emulator", "kconfig", "writers"))
  if (length(bad)) {
    usage_error("bad value for --drop: '%s' (holdoff, config, emulator, kconfig or writers)", bad[1])
  }
  rt <- build_run_table(read_runs(db, matrix = matrix), run_stats(read_samples(db, matrix = matrix)))
  if (by_kc) {
    kc <- ifelse(is.na(rt$kconfig) | !nzchar(rt$kconfig), "tiny", rt$kconfig)
    have <- sort(unique(kc))
    if (is.null(o$names)) {
      if (!("tiny" %in% have) || length(have) != 2) {
        usage_error("--by kconfig: matrix %s has scenarios %s: give --names BASE,CAND", matrix, paste(have, collapse = ", "))
      }
      nm <- c("tiny", setdiff(have, "tiny"))
    } else {
      nm <- parse_list(o$names, "names")
    }
    if (length(nm) != 2) usage_error("bad value for --names: '%s' (give two scenarios, baseline first)", o$names)
    for (k in nm) {
      if (!any(kc == k)) usage_error("bad value for --names: '%s' (no run of scenario %s)", o$names, k)
    }
    rt <- rt[kc %in% nm, , drop = FALSE]
    param <- nm[1]
    is_base <- kc[kc %in% nm] == nm[1]
  } else if (by_emu) {
    param <- "emulator shared"
    is_base <- !grepl("emulator:", rt$pinned)
  } else if (by_mx) {
    param <- matrix[1]
    is_base <- rt$matrix == matrix[1]
  } else {
    param <- o[["baseline-param"]]
    is_base <- grepl(param, rt$boot_params, fixed = TRUE)
    if (!any(is_base)) usage_error("bad value for --baseline-param: '%s' (no run has it)", param)
    rt$boot_params <- trimws(sub(param, "", rt$boot_params, fixed = TRUE))
  }
  rt$matrix <- paste(matrix, collapse = "+")
  rt$cell <- cell_key(rt, drop = drop)
  if (!by_kc) {
    nm <- if (is.null(o$names)) c(param, "other") else parse_list(o$names, "names")
    if (length(nm) != 2) usage_error("bad value for --names: '%s' (give two names, baseline first)", o$names)
  }
  base_name <- nm[1]
  cand_name <- nm[2]
  rt$variant <- ifelse(is_base, base_name, cand_name)
  res <- gate_run_table(rt, base_name, cand_name, threshold = threshold, alpha = alpha,
                        matrix = unique(rt$matrix), allow_config = by_kc)
  cat(res$text, sep = "\n")
  if (by_mx) {
    cat("\nWhat deciding costs (runs per side for a true slowdown at 80% power, at each setting's",
        "spread; runs per hour of wall clock; hours for one 10% decision, both sides):\n\n")
    cat(setting_cost_markdown(setting_cost(rt, c(base_name, cand_name), threshold = threshold,
                                           a = alpha / length(GATE_DEFAULT_STATS))), sep = "\n")
    return(res$status)
  }
  ok <- rt[rt$kind == "rcuscale" & !is.na(rt$wall_s), , drop = FALSE]
  per <- aggregate(wall_s ~ cell + variant, data = ok, FUN = mean)
  per$runs_per_hour <- round(3600 / per$wall_s)
  wide <- merge(per[per$variant == base_name, c("cell", "wall_s", "runs_per_hour")],
                per[per$variant == cand_name, c("cell", "wall_s", "runs_per_hour")],
                by = "cell", suffixes = c("_base", "_cand"))
  cat("\nWall time per run (domain creation to power-off), one guest at a time:\n\n")
  tab <- data.frame(cell = wide$cell,
                    s_base = sprintf("%.1f s", wide$wall_s_base),
                    rph_base = wide$runs_per_hour_base,
                    s_cand = sprintf("%.1f s", wide$wall_s_cand),
                    rph_cand = wide$runs_per_hour_cand)
  names(tab) <- c("cell", paste(base_name, "s/run"), paste(base_name, "runs/h"),
                  paste(cand_name, "s/run"), paste(cand_name, "runs/h"))
  cat(md_table(tab), sep = "\n")
  res$status
}

run_main("settings", settings_main)
