/* vmhost.h: one libvirt host a runner uses: its connection, identity, placement, staging kind and load accounting. */
#ifndef RCUWB_VMHOST_H
#define RCUWB_VMHOST_H

#include <stdbool.h>

#include "guest.h"
#include "host.h"
#include "hostload.h"
#include "hosts.h"
#include "nodeload.h"
#include "place.h"

struct vmhost {
	struct host_spec spec;
	int idx;			/* in the hosts file */
	struct hypervisor hv;
	/*
	 * remote: nothing but the connection (volumes, a console stream,
	 * libvirt's topology and CPU statistics); else this machine's paths
	 * (a stage directory, the console file, hwloc, /proc).
	 */
	bool remote;
	bool ready;			/* identity, placement and accelerator known */
	struct host_info info;		/* name: the label (default: the host's name from libvirt) */
	/*
	 * The machine's name as libvirt reports it (virConnectGetHostname; the
	 * local host's gethostname()), "" unknown: two hosts with one name are taken to be one
	 * machine.  Not the capabilities' host UUID: a daemon without SMBIOS
	 * data makes one up at every start.
	 */
	char machine[256];
	struct placer pl;
	bool kvm, numa_host;
	struct nodeload load;		/* remote hosts */
	/*
	 * The console logs this runner's guests have on the host (remote
	 * hosts): each is deleted when its guest has ended, or, if the host
	 * cannot be reached then, when it is back and before the runner exits
	 * (else by the next runner's stale cleanup).
	 */
	struct host_log *logs;
	int nlogs;
};

struct host_log {
	char guest[64];
	bool ended;
};

/* Other load at one moment: from /proc (local) or libvirt (remote). */
struct host_mark {
	struct load_snap snap;
	struct nodeload_mark nl;
};

/*
 * Connect.  lazy: a host that cannot be reached now is retried in the
 * background (hv.lost) instead of failing; vmhost_setup() once it is up.
 */
int vmhost_open(struct vmhost *h, const struct host_spec *spec, int idx, bool lazy);
/*
 * Identity, topology and placement (PU budget spec.pus, locks for the local
 * host's PUs shared with other runners, or NULL), load accounting.  The
 * accelerator is the caller's (accel_choose()).
 */
int vmhost_setup(struct vmhost *h, struct pulocks *locks);
void vmhost_close(struct vmhost *h);
/*
 * Hosts that are one machine (the same host name: two daemons on it) count each
 * other's guests as the runner's own, not as other load: h, set up, is
 * linked with those of hosts[0..n).
 */
void vmhost_link_same_machine(struct vmhost *h, struct vmhost *hosts, int n);
/*
 * A remote guest's console log: on the host from its start (track), to be
 * deleted once the guest has ended (drop): now, or as soon as the host can
 * be reached again.  -1 only when out of memory; nothing for the local host.
 */
int vmhost_track_log(struct vmhost *h, const char *guest);
void vmhost_drop_log(struct vmhost *h, const char *guest);
/* Usable for new guests now: connected, set up and not interrupted. */
bool vmhost_usable(const struct vmhost *h);

void vmhost_mark(struct vmhost *h, struct host_mark *m);
/* PUs other work used on the host between two marks, -1 unknown; frees both marks' memory. */
double vmhost_other_pus(struct vmhost *h, struct host_mark *a, struct host_mark *b);
void vmhost_mark_free(struct host_mark *m);

#endif
