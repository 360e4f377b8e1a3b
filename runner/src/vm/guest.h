/* guest.h: a guest through libvirt's C API: started transient, its console read, ended on events or a deadline. */
#ifndef RCUWB_GUEST_H
#define RCUWB_GUEST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>

#include "hypervisor.h"
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

/*
 * A guest read over a stream has stopped when libvirt says so, but the end
 * of its console may still be on the way: it ends at the stream's EOF, or
 * after this long.
 */
#define STREAM_GRACE_MS 3000

/* Start a transient, autodestroyed domain; -1 with set_err() (g->end_detail set). */
int guest_start(struct hypervisor *hv, struct guest *g);
/* Destroy a running guest, recording why. */
void guest_stop(struct hypervisor *hv, struct guest *g, enum guest_end why, const char *detail);


/*
 * The guests of one connection, for its owner (hypervisor.c, evloop.c):
 * stop every one (one pass: while libvirt is away, they wait for the
 * reconnect); end them all as the host's failure (unreachable for good;
 * their domains become orphans); end those whose console stream went with
 * the connection; find them again by name after a reconnect (one that
 * ended meanwhile ends now); libvirt's lifecycle events.
 */
void guests_stop_all(struct hypervisor *hv, enum guest_end why, const char *detail);
void guests_give_up(struct hypervisor *hv, const char *why);
void guests_drop_streamed(struct hypervisor *hv);
void guests_readopt(struct hypervisor *hv);
int guests_on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque);

#endif
