# Caveats that qualify every number: how the guests were run.
#
# Grace-period latency in a guest depends on the accelerator (TCG emulation
# is far slower than KVM and its timing is not representative), on whether
# vCPUs were oversubscribed on host PUs (then vCPU preemption by the host
# inflates GP latency), on the host's size, and on other work on the host
# (host-busy runs are named here and left out of every statistic).

# Facts about a set of runs: accelerators, max oversubscription, host PUs.
caveat_info <- function(runs) {
  accel <- sort(unique(stats::na.omit(runs$accel)))
  ovs <- suppressWarnings(as.numeric(runs$oversub))
  max_ovs <- if (any(!is.na(ovs))) max(ovs, na.rm = TRUE) else NA_real_
  pus <- sort(unique(stats::na.omit(runs$host_pus)))
  hosts <- sort(unique(stats::na.omit(runs$host)))
  list(
    runs = nrow(runs),
    accel = accel,
    max_oversub = max_ovs,
    oversubscribed = !is.na(max_ovs) && max_ovs > 1,
    host_pus = pus,
    hosts = hosts,
    host_busy = sum(host_busy(runs)),
    host_busy_share = host_busy_share(runs)
  )
}

# One line for plot captions and report headers, e.g.
# "accel: kvm | max oversub 0.50 (not oversubscribed) | host PUs: 16".
caveat_text <- function(runs) {
  ci <- caveat_info(runs)
  accel <- if (length(ci$accel)) paste(ci$accel, collapse = "+") else "unknown"
  if ("tcg" %in% ci$accel) accel <- paste0(accel, " (TCG: emulated, timings not representative)")
  ovs <- if (is.na(ci$max_oversub)) {
    "oversub unknown"
  } else if (ci$oversubscribed) {
    sprintf("OVERSUBSCRIBED: max %.2f vCPUs per host PU (latencies inflated by host scheduling)",
            ci$max_oversub)
  } else {
    sprintf("max oversub %.2f (not oversubscribed)", ci$max_oversub)
  }
  pus <- if (length(ci$host_pus)) paste(ci$host_pus, collapse = ",") else "unknown"
  hosts <- if (length(ci$hosts)) paste0(" (", paste(ci$hosts, collapse = ","), ")") else ""
  busy <- if (ci$host_busy > 0) {
    sprintf(" | HOST BUSY: %d run%s left out (other processes used > %.0f%% of the host's PUs)",
            ci$host_busy, if (ci$host_busy > 1) "s" else "", 100 * ci$host_busy_share)
  } else ""
  sprintf("accel: %s | %s | host PUs: %s%s%s", accel, ovs, pus, hosts, busy)
}
