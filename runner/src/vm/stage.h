/* stage.h: where a guest's kernel and initramfs live while it runs: a local directory, or volumes of a storage pool on its host. */
#ifndef RCUWB_STAGE_H
#define RCUWB_STAGE_H

#include <limits.h>
#include <stdbool.h>

#include <libvirt/libvirt.h>

#include "guest.h"

/*
 * Local host: copies in $RCUWB_STAGE/NAME (default /var/lib/libvirt/rcuwb),
 * which QEMU (as libvirt-qemu) may read, with the console file beside them.
 */
int stage_local(const char *name, const char *vmlinux, const char *initramfs, char *dir, size_t dcap,
		char *kernel, char *initrd, char *console, size_t cap);
/* Remove a local stage directory and its files (virtlogd's rotations included). */
void stage_local_remove(const char *dir);
/* Destroy guests and remove stage directories left by runners that were killed. */
void stage_local_clean_stale(struct hypervisor *hv);

/* "rcuwb runner on HOSTNAME": the description of every guest a runner of this machine starts. */
void stage_owner(char *out, size_t cap);
/* Whether a guest name rcuwb-STAMP-PID-N belongs to a runner of this machine that is gone. */
bool stage_orphaned(const char *name);

/*
 * Any host, through its connection only: the file as a volume of the
 * transient directory pool "rcuwb" at pool_dir on the host (created when
 * missing), named by the file's SHA-256 and uploaded once
 * (virStorageVolUpload); a marker volume NAME.ok says the upload finished.
 * path gets the volume's path on that host.
 */
int stage_volume(virConnectPtr conn, const char *pool_dir, const char *file, const char *suffix,
		 char *path, size_t cap);
/*
 * Destroy rcuwb guests on a host whose runner was one of this machine's
 * (their description) and is gone, and delete such runners' console logs
 * from the pool.
 */
void stage_remote_clean_stale(virConnectPtr conn);
/*
 * A remote guest's console log: virtlogd writes it on the host, in the pool
 * directory beside its kernel (kernel_path), as NAME.console.log.  The
 * console stream can miss the last bytes a guest writes before it powers
 * off (the pty goes with QEMU), the log cannot: once the guest is gone,
 * stage_fetch_log() downloads it (virStorageVolDownload) to local_path,
 * and stage_drop_log() deletes the log of guest NAME from the host however
 * the guest ended (0 when there is none).
 */
int stage_log_path(const char *kernel_path, const char *name, char *out, size_t cap);
int stage_fetch_log(virConnectPtr conn, const char *remote_path, const char *local_path);
int stage_drop_log(virConnectPtr conn, const char *name);

#endif
