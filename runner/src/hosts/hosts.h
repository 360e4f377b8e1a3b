/* hosts.h: the hosts file: which libvirt hosts a matrix runs on, with a PU budget and a label each. */
#ifndef RCUWB_HOSTS_H
#define RCUWB_HOSTS_H

#include <stdbool.h>

#define HOSTS_MAX 16

struct host_spec {
	char uri[256];			/* libvirt URI: qemu:///system, qemu+ssh://user@big1/system, ... */
	char label[64];			/* stored with every run; "" = the host's name from libvirt */
	unsigned pus;			/* PU budget for guests, 0 = all of the host's (or of cpus) */
	unsigned long long cpus;	/* the host PUs guests may use (bit i = PU i), 0 = any */
	char pool[256];			/* directory of the storage pool on that host */
	int reconnect_s;		/* how long a lost host is retried before its runs move away for good */
};

struct hosts {
	char path[4096];		/* "" = no file: the local host */
	int n;
	struct host_spec h[HOSTS_MAX];
};

#define HOSTS_DEFAULT_POOL "/var/lib/libvirt/rcuwb-pool"
#define HOSTS_DEFAULT_RECONNECT_S 120

/*
 * Read a hosts file (perf-configs/hosts/README.md); every error names the
 * file, line and key.  Labels must be unique and plain (letters, digits,
 * ".", "_", "-"), URIs too.
 */
int hosts_load(const char *path, struct hosts *hs);
/* No hosts file: one host, uri, everything else default. */
void hosts_single(struct hosts *hs, const char *uri);
/*
 * Whether the runner may use this machine's paths for a host (stage files
 * under /var/lib/libvirt, read the console file, hwloc, /proc): only for
 * qemu:///system without a transport.  Every other URI, qemu:///session
 * included (its QEMU runs as another user), gets nothing but the
 * connection: storage volumes, a console stream, libvirt's view of the host.
 */
bool hosts_uri_is_local(const char *uri);

#endif
