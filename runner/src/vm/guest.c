/*
 * guest.c: a guest's life through libvirt's C API.
 *
 * Every guest is a transient domain started with VIR_DOMAIN_START_AUTODESTROY,
 * so it cannot outlive the runner's connection, whatever happens to the
 * runner.  Lifecycle events end a guest, an inotify watch on the console
 * file delivers console output as it is written (no polling), or a console
 * stream does where the host is remote, and a timer enforces the deadline.
 * What happens to the guests when their connection is lost or comes back
 * (hypervisor.c) is here too: they are the guests' ends.
 */
#define _GNU_SOURCE
#include "guest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "common.h"

static struct guest *find_guest(struct hypervisor *hv, const char *name)
{
	struct guest *g;

	for (g = hv->guests; g; g = g->next)
		if (!strcmp(g->name, name))
			return g;
	return NULL;
}

/*
 * QEMU (or libvirt for it) may create the console file anew when the guest
 * starts, so watch the directory and (re)open the file by name.
 */
static void open_console(struct guest *g)
{
	/* a stream console's file is the runner's own copy: written, never read back */
	if (g->con_fd < 0 && !g->stream_console)
		g->con_fd = open(g->console_path, O_RDONLY | O_CLOEXEC);
}

static void console_bytes(struct hypervisor *hv, struct guest *g, const char *data, size_t len);

static void drain_console(struct hypervisor *hv, struct guest *g)
{
	char chunk[65536];
	ssize_t n;

	while (g->con_fd >= 0 && (n = read(g->con_fd, chunk, sizeof(chunk))) > 0)
		console_bytes(hv, g, chunk, (size_t)n);
}

/* Console bytes: to the local file (stream consoles) and the caller's parser. */
static void console_bytes(struct hypervisor *hv, struct guest *g, const char *data, size_t len)
{
	const char *why;

	if (g->out_fd >= 0 && write(g->out_fd, data, len) != (ssize_t)len) {
		close(g->out_fd);
		g->out_fd = -1;
		info("rcuwb: warning: cannot write %s: %s\n", g->console_path, strerror(errno));
	}
	why = g->on_console ? g->on_console(g, data, len) : NULL;
	if (why && g->running)
		guest_stop(hv, g, END_EARLY, why);
}

static void close_stream(struct guest *g)
{
	if (!g->st)
		return;
	virStreamEventRemoveCallback(g->st);
	virStreamAbort(g->st);
	virStreamFree(g->st);
	g->st = NULL;
}

/* What the stream holds now; the stream ends on EOF or an error. */
static void drain_stream(struct hypervisor *hv, struct guest *g)
{
	char chunk[65536];
	int n;

	while (g->st && (n = virStreamRecv(g->st, chunk, sizeof(chunk))) != -2) {
		if (n <= 0) {
			close_stream(g);
			break;
		}
		console_bytes(hv, g, chunk, (size_t)n);
	}
}

static void finish(struct hypervisor *hv, struct guest *g);

static void on_stream(virStreamPtr st, int events, void *opaque)
{
	struct guest *g = opaque;

	(void)st;
	drain_stream(g->hv, g);
	if (events & (VIR_STREAM_EVENT_HANGUP | VIR_STREAM_EVENT_ERROR))
		close_stream(g);
	if (!g->st && g->ending)
		finish(g->hv, g);
}

static void on_grace(int timer, void *opaque)
{
	struct guest *g = opaque;

	(void)timer;
	finish(g->hv, g);
}

/* libvirt says the guest stopped: done now, or once its console stream has delivered the rest. */
static void end_soon(struct hypervisor *hv, struct guest *g)
{
	g->ended = now_s();
	if (g->st && !hv->lost && !g->ending) {
		g->ending = true;
		g->grace_timer = virEventAddTimeout(STREAM_GRACE_MS, on_grace, g, NULL);
		if (g->grace_timer >= 0)
			return;
	}
	finish(hv, g);
}

/* The guest is gone: final console bytes, release everything, unlink. */
static void finish(struct hypervisor *hv, struct guest *g)
{
	struct guest **pp;

	if (!g->running)
		return;
	g->running = false;
	if (!g->ending || !g->ended)
		g->ended = now_s();
	if (g->grace_timer >= 0)
		virEventRemoveTimeout(g->grace_timer);
	g->grace_timer = -1;
	open_console(g);
	drain_console(hv, g);
	if (!hv->lost)
		drain_stream(hv, g);
	close_stream(g);
	if (g->out_fd >= 0)
		close(g->out_fd);
	g->out_fd = -1;
	if (g->timer >= 0)
		virEventRemoveTimeout(g->timer);
	if (g->ino_watch >= 0)
		virEventRemoveHandle(g->ino_watch);
	if (g->ino_fd >= 0)
		close(g->ino_fd);
	if (g->con_fd >= 0)
		close(g->con_fd);
	g->timer = g->ino_watch = g->ino_fd = g->con_fd = -1;
	if (g->dom)
		virDomainFree(g->dom);
	g->dom = NULL;
	for (pp = &hv->guests; *pp; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	hv->nrunning--;
}

void guest_stop(struct hypervisor *hv, struct guest *g, enum guest_end why, const char *detail)
{
	char text[sizeof(g->end_detail)];

	if (!g->running)
		return;
	if (g->ending) {	/* already stopped: its end stands */
		finish(hv, g);
		return;
	}
	snprintf(text, sizeof(text), "%s", detail);	/* detail may be g->end_detail itself */
	g->end = why;
	snprintf(g->end_detail, sizeof(g->end_detail), "%s", text);
	if (hv->lost) {
		g->stop_pending = true;	/* nothing can destroy it now: on the reconnect */
		return;
	}
	/* Synchronous: when it returns, QEMU is gone. */
	if (g->dom && virDomainDestroy(g->dom) < 0 && virDomainIsActive(g->dom) == 1)
		info("rcuwb: warning: could not destroy %s: %s\n", g->name, hv_err());
	finish(hv, g);
}

int guests_on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct hypervisor *hv = opaque;
	struct guest *g = find_guest(hv, virDomainGetName(dom));

	(void)conn;
	if (!g || !g->running || g->ending)
		return 0;
	if (event == VIR_DOMAIN_EVENT_CRASHED ||
	    (event == VIR_DOMAIN_EVENT_STOPPED && (detail == VIR_DOMAIN_EVENT_STOPPED_CRASHED ||
						    detail == VIR_DOMAIN_EVENT_STOPPED_FAILED))) {
		/*
		 * STOPPED_FAILED: QEMU died under the guest (killed from
		 * outside, as by the OOM killer): a harness failure unless
		 * the console shows the kernel going down first.
		 */
		bool qemu_died = event == VIR_DOMAIN_EVENT_STOPPED && detail == VIR_DOMAIN_EVENT_STOPPED_FAILED;

		g->end = qemu_died ? END_HOST_FAILED : END_CRASHED;
		snprintf(g->end_detail, sizeof(g->end_detail), "libvirt reported the guest %s",
			 qemu_died ? "failed (QEMU died; killed from outside?)" : "crashed");
		if (event == VIR_DOMAIN_EVENT_CRASHED)
			virDomainDestroy(g->dom);
		end_soon(hv, g);
	} else if (event == VIR_DOMAIN_EVENT_STOPPED) {
		/* on_poweroff/on_reboot = destroy: a power-off or reboot lands here */
		g->end = END_SHUTDOWN;
		end_soon(hv, g);
	}
	return 0;
}

static void on_deadline(int timer, void *opaque)
{
	struct guest *g = opaque;
	char why[64];

	(void)timer;
	snprintf(why, sizeof(why), "no result after %d s", g->timeout_s);
	guest_stop(g->hv, g, END_TIMEOUT, why);
}

static void on_console_event(int watch, int fd, int events, void *opaque)
{
	struct guest *g = opaque;
	char evbuf[4096];

	(void)watch;
	(void)events;
	while (read(fd, evbuf, sizeof(evbuf)) > 0)
		;
	open_console(g);
	drain_console(g->hv, g);
}

/* Stop every running guest (one pass: while libvirt is away, they wait for the reconnect). */
void guests_stop_all(struct hypervisor *hv, enum guest_end why, const char *detail)
{
	struct guest *g, *next;

	for (g = hv->guests; g; g = next) {
		next = g->next;
		guest_stop(hv, g, why, detail);
	}
}

/*
 * Unreachable for good: every guest ends here as the host's failure (its
 * console may still show it finished); its domain, which may still run,
 * is destroyed by name if the host comes back.
 */
void guests_give_up(struct hypervisor *hv, const char *why)
{
	while (hv->guests) {
		struct guest *g = hv->guests;

		if (g->dom_started)
			hv_add_orphan(hv, g->name);
		g->end = g->stop_pending ? g->end : END_HOST_FAILED;
		g->lost_with_conn = !g->stop_pending;
		if (!g->stop_pending)
			snprintf(g->end_detail, sizeof(g->end_detail), "%s", why);
		finish(hv, g);
	}
}

/* Guests whose console went with the connection: they end now, destroyed on the reconnect. */
void guests_drop_streamed(struct hypervisor *hv)
{
	struct guest *g, *next;

	for (g = hv->guests; g; g = next) {
		next = g->next;
		if (!g->stream_console)
			continue;
		if (g->ending) {	/* it had stopped: its end stands, its console is what came */
			finish(hv, g);
			continue;
		}
		hv_add_orphan(hv, g->name);
		if (!g->stop_pending) {
			g->end = END_HOST_FAILED;
			g->lost_with_conn = true;
			snprintf(g->end_detail, sizeof(g->end_detail),
				 "lost the connection to libvirt at %.100s, and the console with it", hv->uri);
		}
		finish(hv, g);
	}
}

/* After a reconnect: every guest again by name; one that ended meanwhile ends now. */
void guests_readopt(struct hypervisor *hv)
{
	struct guest *g, *next;

	for (g = hv->guests; g; g = next) {
		virDomainPtr dom = virDomainLookupByName(hv->conn, g->name);

		next = g->next;
		if (g->dom)
			virDomainFree(g->dom);
		g->dom = dom;
		if (!dom || virDomainIsActive(dom) != 1) {
			if (!g->stop_pending) {
				g->end = END_HOST_FAILED;
				g->lost_with_conn = true;
				snprintf(g->end_detail, sizeof(g->end_detail),
					 "the guest ended while libvirtd was away");
			}
			finish(hv, g);
		} else if (g->stop_pending) {
			g->stop_pending = false;
			guest_stop(hv, g, g->end, g->end_detail);
		}
	}
}

static int watch_console(struct guest *g)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", g->console_path);
	slash = strrchr(dir, '/');
	if (!slash)
		return set_err("console path %s is not absolute", g->console_path);
	*slash = '\0';
	unlink(g->console_path);
	g->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (g->ino_fd < 0 || inotify_add_watch(g->ino_fd, dir, IN_MODIFY | IN_CREATE) < 0)
		return set_err("cannot watch %s: %s", dir, strerror(errno));
	g->ino_watch = virEventAddHandle(g->ino_fd, VIR_EVENT_HANDLE_READABLE, on_console_event, g, NULL);
	return g->ino_watch < 0 ? set_err("libvirt event loop: cannot watch the console") : 0;
}

/* Stream console: the local copy, and the pty stream opened while the guest is still paused. */
static int open_console_file(struct guest *g)
{
	g->out_fd = open(g->console_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return g->out_fd < 0 ? set_err("cannot write %s: %s", g->console_path, strerror(errno)) : 0;
}

static int attach_stream(struct hypervisor *hv, struct guest *g)
{
	g->st = virStreamNew(hv->conn, VIR_STREAM_NONBLOCK);
	if (!g->st)
		return set_err("libvirt: no stream for the console of %s: %s", g->name, hv_err());
	if (virDomainOpenConsole(g->dom, NULL, g->st, VIR_DOMAIN_CONSOLE_FORCE) < 0 ||
	    virStreamEventAddCallback(g->st, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_HANGUP |
				      VIR_STREAM_EVENT_ERROR, on_stream, g, NULL) < 0) {
		set_err("libvirt: cannot open the console of %s: %s", g->name, hv_err());
		virStreamFree(g->st);
		g->st = NULL;
		return -1;
	}
	if (virDomainResume(g->dom) < 0)
		return set_err("libvirt: cannot resume %s: %s", g->name, hv_err());
	return 0;
}

int guest_start(struct hypervisor *hv, struct guest *g)
{
	unsigned flags = VIR_DOMAIN_START_AUTODESTROY;

	g->hv = hv;
	g->timer = g->ino_watch = g->ino_fd = g->con_fd = g->out_fd = -1;
	g->st = NULL;
	g->dom = NULL;
	g->running = g->stop_pending = g->lost_with_conn = g->ending = g->dom_started = false;
	g->grace_timer = -1;
	g->ended = 0;
	g->end_detail[0] = '\0';
	if (hv->lost) {	/* went away just now (noticed in an earlier call): the host's failure */
		set_err("libvirt at %s is not connected", hv->uri);
		g->end = END_HOST_FAILED;
		g->lost_with_conn = true;
		snprintf(g->end_detail, sizeof(g->end_detail), "lost the connection to libvirt at %.100s "
			 "before the guest started", hv->uri);
		return -1;
	}
	if (g->stream_console ? open_console_file(g) < 0 : watch_console(g) < 0)
		goto fail;
	g->started = now_s();
	/* registered before the domain exists: a guest that dies at once still counts */
	g->next = hv->guests;
	hv->guests = g;
	hv->nrunning++;
	g->running = true;
	/* a stream console must be open before the guest writes: start it paused */
	if (g->stream_console)
		flags |= VIR_DOMAIN_START_PAUSED;
	g->dom = virDomainCreateXML(hv->conn, g->xml, flags);
	g->dom_started = g->dom != NULL;
	if (!g->dom)
		set_err("libvirt could not start %s: %s", g->name, hv_err());
	if (!g->dom || (g->stream_console && attach_stream(hv, g) < 0)) {
		g->end = END_START_FAILED;
		snprintf(g->end_detail, sizeof(g->end_detail), "%s", last_err());
		if (hv->lost) {
			/* the connection closed under the start: the host's failure, not the guest's */
			g->end = END_HOST_FAILED;
			g->lost_with_conn = true;
			hv_add_orphan(hv, g->name);
			snprintf(g->end_detail, sizeof(g->end_detail),
				 "lost the connection to libvirt at %.100s while starting the guest", hv->uri);
		} else if (g->dom) {
			virDomainDestroy(g->dom);
		}
		if (g->running)
			finish(hv, g);
		return -1;
	}
	if (g->running)
		g->timer = virEventAddTimeout(g->timeout_s * 1000, on_deadline, g, NULL);
	return 0;
fail:
	g->end = END_START_FAILED;
	snprintf(g->end_detail, sizeof(g->end_detail), "%s", last_err());
	if (g->ino_fd >= 0)
		close(g->ino_fd);
	if (g->con_fd >= 0)
		close(g->con_fd);
	if (g->out_fd >= 0)
		close(g->out_fd);
	g->ino_fd = g->con_fd = g->out_fd = -1;
	return -1;
}
