/* hypervisor.h: one libvirt connection: opened, lost, reconnected with backoff, closed. */
#ifndef RCUWB_HYPERVISOR_H
#define RCUWB_HYPERVISOR_H

#include <stdbool.h>

#include <libvirt/libvirt.h>

struct guest;

struct hypervisor {
	virConnectPtr conn;
	char uri[256];
	unsigned long qemu_version, libvirt_version;
	int lifecycle_cb;
	bool interrupted;
	/*
	 * The connection closed under the runner (libvirtd killed or
	 * restarted): lost until a reconnect (once a second) succeeds; gone
	 * when libvirtd did not come back within HV_RECONNECT_S.
	 */
	bool lost, gone, closing;
	double lost_at;
	int reconnect_timer, backoff_ms;
	int reconnect_s;		/* lost this long: gone (the caller moves its work away) */
	/*
	 * Guests read over a console stream end with the connection
	 * (END_HOST_FAILED): their names wait here to be destroyed once
	 * the host is back.
	 */
	char (*orphans)[64];
	int norphans;
	struct guest *guests;		/* running */
	int nrunning;
	/* the owner's work for a connection that is back (after a reconnect) */
	void (*on_back)(void *opaque);
	void *back_opaque;
};

#define HV_RECONNECT_S 120
#define HV_BACKOFF_MAX_MS 30000

/*
 * Connect (after registering libvirt's default event loop) and catch
 * SIGINT/SIGTERM.  When the connection closes under the runner (libvirtd
 * killed or restarted, the host unreachable), the runner reconnects with
 * backoff (1 s doubling to 30 s), for good: after reconnect_s it marks the
 * host gone (its caller gives up or moves the work elsewhere), and a host
 * that comes back later is usable again.  Guests with a console file go on
 * (QEMU does not need libvirtd) and are found again by name; one that ended
 * while libvirtd was away ends with END_HOST_FAILED (its console decides
 * whether it had finished), one stopped meanwhile is destroyed on the
 * reconnect.  Guests with a console stream lose it with the connection:
 * they end at once with END_HOST_FAILED and are destroyed on the reconnect.
 */
int hv_open(struct hypervisor *hv, const char *uri);
/*
 * The same, for a host that may be down now: a connection that fails is
 * retried as above (hv->lost set, 0 returned); -1 only for errors of this
 * process.
 */
int hv_open_lazy(struct hypervisor *hv, const char *uri, int reconnect_s);
/* Stop its guests, destroy what it left, close. */
void hv_close(struct hypervisor *hv);
/* libvirt's last error message, never NULL (for set_err()). */
const char *hv_err(void);
/* "7.2.0" */
void hv_version_str(unsigned long v, char out[16]);
/* Does libvirt offer domain type kvm on this host at all? */
bool hv_has_kvm(struct hypervisor *hv);

/*
 * Give up the guests of a host that is away (interrupted meanwhile, or
 * exiting): they end as END_HOST_FAILED now and are destroyed by name if
 * the connection comes back before the runner exits.
 */
void hv_abandon(struct hypervisor *hv, const char *why);
/* A domain of this host to destroy by name once the connection is back. */
void hv_add_orphan(struct hypervisor *hv, const char *name);

#endif
