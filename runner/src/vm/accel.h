/* accel.h: choose the accelerator: KVM where the host really runs a guest with it, else TCG. */
#ifndef RCUWB_ACCEL_H
#define RCUWB_ACCEL_H

#include "session.h"

/*
 * mode "kvm", "tcg" or "auto".  auto boots a real guest under KVM (short
 * timeout) and falls back to TCG if it does not come up: /dev/kvm existing
 * proves nothing (a PVM-based host has it and cannot run a stock kernel).
 * The verdict is cached for every rcuwb process of the host until it reboots
 * (the runtime directory, /run/rcuwb/accel): for the local host per boot and
 * QEMU version, for a remote one per URI, host name and QEMU version.
 */
int accel_choose(struct session *sess, struct vmhost *h, const struct kernel_build *k, const char *mode);

#endif
