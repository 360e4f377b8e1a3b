# Per-cell summaries across runs.
#
# The unit of replication is the RUN (one guest boot): samples within a run
# share the boot, the host state and the rcuscale writer phase, so they are
# not independent. Each run is first reduced to its kernel-defined
# percentiles (percentiles.R); a cell is then summarised by the median over
# its runs of those per-run values, with a percentile-bootstrap confidence
# interval that resamples runs.

RCUWB_METRICS <- c("p50", "p90", "p99")

# Join runs (read_runs()) with their per-run statistics. Sets `status` (the
# view's: the outcome or host-busy; or "ok-no-samples" for an ok run without
# samples) and adds `usable` (ok, not host-busy, with samples: the rcuscale
# runs that enter the statistics; probe runs are never usable here).
build_run_table <- function(runs, stats) {
  if (is.null(runs$status)) stop("build_run_table: runs without status (not from read_runs())", call. = FALSE)
  # the runner also stores its own per-run summary (nsamples, p50_us, ...):
  # the statistics recomputed here from the samples are the ones used
  runs <- runs[, setdiff(names(runs), setdiff(names(stats), "run_id")), drop = FALSE]
  rt <- merge(runs, stats, by.x = "id", by.y = "run_id", all.x = TRUE, sort = FALSE)
  rt <- rt[order(rt$id), , drop = FALSE]
  rt$n[is.na(rt$n)] <- 0L
  scale <- rt$kind == "rcuscale"
  rt$usable <- scale & rt$status == "ok" & rt$n > 0
  rt$status <- ifelse(scale & rt$status == "ok" & rt$n == 0, "ok-no-samples", rt$status)
  # the runner's plan name stays in run_cell; cell is the stable key
  rt$run_cell <- rt$cell
  rt$cell <- cell_key(rt)
  rt$async_samples <- async_samples(rt)
  rownames(rt) <- NULL
  rt
}

# What an async run's samples time (rcuscale.gp_async; NA for other runs).
# 6.1's rcu_scale_writer() times the barrier wait inside the sample whose
# call found async_max callbacks in flight (its "goto retry"), so the mean
# is the time per callback with that backlog; 6.12's does not count that
# iteration (gp_succeeded stays false and the slot is written again), so
# its samples time the enqueue alone (kernel/rcu/rcuscale.c in the Debian
# trees).  rcuwb has read the two lines only: other kernels are "unknown".
async_samples <- function(rt) {
  if (is.null(rt$gp_mode) || is.null(rt$kernel_version)) return(rep(NA_character_, nrow(rt)))
  v <- regmatches(rt$kernel_version, regexec("^([0-9]+)\\.([0-9]+)", rt$kernel_version))
  line <- vapply(v, function(x) if (length(x) == 3) as.numeric(x[2]) * 100 + as.numeric(x[3]) else NA_real_,
                 numeric(1))
  ifelse(is.na(rt$gp_mode) | rt$gp_mode != "async", NA_character_,
         ifelse(is.na(line) | !(line %in% c(601, 612)), "unknown (rcuwb read 6.1's and 6.12's rcuscale)",
                ifelse(line == 601, "a call with its barrier wait (6.1's rcuscale)",
                       "the enqueue alone (6.12's rcuscale)")))
}

# Median of each row of a numeric matrix without NAs (one global sort,
# much faster than apply(m, 1, median) for many short rows).
row_medians <- function(m) {
  n <- ncol(m)
  s <- matrix(m[order(row(m), m)], nrow = nrow(m), byrow = TRUE)
  if (n %% 2 == 1) s[, (n + 1) / 2] else (s[, n / 2] + s[, n / 2 + 1]) / 2
}

# Median of x with a percentile-bootstrap CI (resampling the values of x,
# i.e. runs, with replacement R times). Returns c(median, lo, hi).
# n = 0 -> all NA; n = 1 -> CI NA (no variability to resample).
boot_median_ci <- function(x, R = 2000, conf = 0.95, seed = 1) {
  x <- x[!is.na(x)]
  n <- length(x)
  if (n == 0) return(c(median = NA_real_, lo = NA_real_, hi = NA_real_))
  med <- stats::median(x)
  if (n == 1) return(c(median = med, lo = NA_real_, hi = NA_real_))
  if (R < 2000) stop("bootstrap needs R >= 2000 resamples", call. = FALSE)
  boots <- with_seed(seed, {
    row_medians(matrix(x[sample.int(n, n * R, replace = TRUE)], nrow = R))
  })
  a <- (1 - conf) / 2
  q <- stats::quantile(boots, c(a, 1 - a), names = FALSE, type = 7)
  c(median = med, lo = q[1], hi = q[2])
}

# Compact "outcome=count" description, e.g. "ok=5 timeout=1".
outcome_counts <- function(status) {
  if (!length(status)) return("")
  tab <- table(factor(status, levels = unique(c("ok", sort(unique(status))))))
  tab <- tab[tab > 0]
  paste(sprintf("%s=%d", names(tab), as.integer(tab)), collapse = " ")
}

# One row per (cell, variant) of rcuscale runs (every outcome counted).
# Columns: cell, variant, topology/parameters, runs, ok (usable runs),
# failed (runs - ok), outcomes, samples (in usable runs), hosts (the host
# labels of the runs) and, per metric m,
# m_median / m_lo / m_hi: median over usable runs of the per-run m, with its
# bootstrap CI. The same seed is used for every cell, so a cell's CI does not
# depend on which other cells are in the report.
# A cell run on hosts of different shape (accelerator, host PUs, QEMU,
# libvirt: strata.R) is one row per shape group, named "cell@host,host" as
# in the gate: a median over a KVM and a TCG host, or a small and a big one,
# describes neither.  Hosts of one shape share a row.
summarise_cells <- function(run_table, metrics = RCUWB_METRICS, R = 2000,
                            conf = 0.95, seed = 1) {
  rt <- run_table[run_table$kind == "rcuscale", , drop = FALSE]
  keep <- c("matrix", "gp_mode", "vcpus", "numa_nodes", "sockets", "cores", "threads",
            "nwriters", "nreaders", "boot_params")
  if (nrow(rt) == 0) {
    out <- data.frame(cell = character(), variant = character())
    for (k in keep) out[[k]] <- run_table[[k]][0]
    out$runs <- integer(); out$ok <- integer(); out$failed <- integer()
    out$outcomes <- character(); out$samples <- numeric(); out$hosts <- character()
    out$max_oversub <- numeric()
    for (m in metrics) {
      out[[paste0(m, "_median")]] <- numeric()
      out[[paste0(m, "_lo")]] <- numeric()
      out[[paste0(m, "_hi")]] <- numeric()
    }
    return(out)
  }
  # a cell measured by several matrices (quick and full) is kept apart per
  # matrix: each matrix interleaves its own variants
  rt$cell <- paste0(rt$cell, shape_suffix(rt))
  groups <- split(seq_len(nrow(rt)), list(rt$matrix, rt$cell, rt$variant), drop = TRUE, sep = "\r")
  rows <- lapply(groups, function(i) {
    g <- rt[i, , drop = FALSE]
    u <- g[g$usable, , drop = FALSE]
    row <- data.frame(cell = g$cell[1], variant = g$variant[1])
    for (k in keep) row[[k]] <- g[[k]][1]
    row$runs <- nrow(g)
    row$ok <- nrow(u)
    row$failed <- nrow(g) - nrow(u)
    row$outcomes <- outcome_counts(g$status)
    row$samples <- sum(u$n)
    row$hosts <- paste(sort(unique(run_hosts(g))), collapse = ",")
    ovs <- suppressWarnings(as.numeric(g$oversub))
    row$max_oversub <- if (any(!is.na(ovs))) max(ovs, na.rm = TRUE) else NA_real_
    for (m in metrics) {
      ci <- boot_median_ci(u[[paste0(m, "_us")]], R = R, conf = conf, seed = seed)
      row[[paste0(m, "_median")]] <- ci[[1]]
      row[[paste0(m, "_lo")]] <- ci[[2]]
      row[[paste0(m, "_hi")]] <- ci[[3]]
    }
    row
  })
  out <- do.call(rbind, rows)
  out <- out[order(out$cell, out$matrix, out$variant), , drop = FALSE]
  rownames(out) <- NULL
  out
}

# One row per host (the label from the hosts file): its shape and its runs
# of every kind.  Columns: host, accel, host_pus, qemu_version,
# libvirt_version (distinct values, comma-separated), runs, ok (outcome ok
# and not host-busy; for rcuscale runs also with samples), failed (runs -
# ok), failures (the failed runs by status, e.g. "timeout=1
# qemu-failed=2"), variants (runs per variant, e.g. "cand=10 stock=10":
# the runner runs both sides of a repetition on one host, so these match).
summarise_hosts <- function(run_table) {
  cols <- c("accel", "host_pus", "qemu_version", "libvirt_version")
  if (!nrow(run_table)) {
    out <- data.frame(host = character())
    for (k in cols) out[[k]] <- character()
    out$runs <- integer(); out$ok <- integer(); out$failed <- integer()
    out$failures <- character(); out$variants <- character()
    return(out)
  }
  hosts <- run_hosts(run_table)
  rows <- lapply(split(seq_len(nrow(run_table)), hosts), function(i) {
    g <- run_table[i, , drop = FALSE]
    row <- data.frame(host = hosts[i[1]])
    for (k in cols) row[[k]] <- if (is.null(g[[k]])) "" else field_vals(g[[k]])
    ok <- g$status == "ok"
    row$runs <- nrow(g)
    row$ok <- sum(ok)
    row$failed <- sum(!ok)
    row$failures <- outcome_counts(g$status[!ok])
    row$variants <- outcome_counts(g$variant)
    row
  })
  out <- do.call(rbind, rows)
  rownames(out) <- NULL
  out
}
