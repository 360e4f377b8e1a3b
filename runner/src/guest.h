/* guest.h: guests through libvirt's C API: start transient, stream the console, end on events or a deadline. */
#ifndef RCUWB_GUEST_H
#define RCUWB_GUEST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>

#include "run.h"

struct guest;

/*
 * Called with console bytes as the guest writes them.  Return a reason to
 * stop the guest now (a verdict that the rest of the boot cannot change),
 * or NULL to let it run.
 */
typedef const char *(*console_fn)(struct guest *g, const char *data, size_t len);

struct guest {
	/* set by the caller */
	char name[64];
	const char *xml;
	char console_path[PATH_MAX];	/* created empty by guest_start() */
	bool stream_console;		/* read the console over libvirt (a pty stream) into console_path */
	int timeout_s;
	console_fn on_console;
	void *opaque;

	/* state */
	struct hypervisor *hv;
	virDomainPtr dom;
	int timer, ino_fd, ino_watch, con_fd;
	virStreamPtr st;		/* stream console */
	int out_fd;			/* stream console: console_path, written */
	bool running;
	enum guest_end end;
	char end_detail[160];
	double started, ended;
	bool stop_pending;		/* stopped while libvirt was away: destroy on reconnect */
	bool lost_with_conn;		/* ended because the connection to its host was lost */
	bool ending;			/* stopped; its console stream still delivering */
	bool dom_started;		/* libvirt started the domain */
	int grace_timer;
	struct guest *next;
};

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
 * A guest read over a stream has stopped when libvirt says so, but the end
 * of its console may still be on the way: it ends at the stream's EOF, or
 * after this long.
 */
#define STREAM_GRACE_MS 3000

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
void hv_close(struct hypervisor *hv);
/* libvirt's last error message, never NULL (for set_err()). */
const char *hv_err(void);
/* "7.2.0" */
void hv_version_str(unsigned long v, char out[16]);
/* Does libvirt offer domain type kvm on this host at all? */
bool hv_has_kvm(struct hypervisor *hv);

/* Start a transient, autodestroyed domain; -1 with set_err() (g->end_detail set). */
int guest_start(struct hypervisor *hv, struct guest *g);
/* One round of the event loop (every connection's events and timers). */
int hv_iterate(void);
/* Run the event loop until fewer than `until` guests are running. */
int hv_wait(struct hypervisor *hv, int until);
/* Run the event loop for ms milliseconds (or until interrupted): waiting for another runner's PUs. */
int hv_sleep(struct hypervisor *hv, int ms);
/*
 * Give up the guests of a host that is away (interrupted meanwhile, or
 * exiting): they end as END_HOST_FAILED now and are destroyed by name if
 * the connection comes back before the runner exits.
 */
void hv_abandon(struct hypervisor *hv, const char *why);
/* Destroy every running guest (END_INTERRUPTED, "runner exiting"); hv_close() does it first. */
void hv_stop_guests(struct hypervisor *hv);
/* Destroy a running guest, recording why. */
void guest_stop(struct hypervisor *hv, struct guest *g, enum guest_end why, const char *detail);

#endif
