/*
 * guest.c: guests through libvirt's C API.
 *
 * Every guest is a transient domain started with VIR_DOMAIN_START_AUTODESTROY,
 * so it cannot outlive the runner's connection, whatever happens to the
 * runner.  The runner sleeps in libvirt's event loop: lifecycle events end a
 * guest, an inotify watch on the console file delivers console output as it
 * is written (no polling), a timer enforces the deadline, and a signalfd
 * turns Ctrl-C into destroying every guest.  A close callback notices
 * libvirtd going away; the guests run on without it (QEMU does not need
 * it) and are found again by name once a reconnect succeeds.
 */
#define _GNU_SOURCE
#include "guest.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "common.h"

const char *hv_err(void)
{
	const char *m = virGetLastErrorMessage();

	return m ? m : "unknown libvirt error";
}

/* libvirt's default handler prints every error on stderr; we report once. */
static void quiet_virt_errors(void *opaque, virErrorPtr err)
{
	(void)opaque;
	(void)err;
}

void hv_version_str(unsigned long v, char out[16])
{
	snprintf(out, 16, "%u.%u.%u", (unsigned)(v / 1000000 % 1000), (unsigned)(v / 1000 % 1000),
		 (unsigned)(v % 1000));
}

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

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
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
static void stop_all(struct hypervisor *hv, enum guest_end why, const char *detail)
{
	struct guest *g, *next;

	for (g = hv->guests; g; g = next) {
		next = g->next;
		guest_stop(hv, g, why, detail);
	}
}

static void add_orphan(struct hypervisor *hv, const char *name);

/*
 * Unreachable for good: every guest ends here as the host's failure (its
 * console may still show it finished); its domain, which may still run,
 * is destroyed by name if the host comes back.
 */
static void give_up(struct hypervisor *hv, const char *why)
{
	while (hv->guests) {
		struct guest *g = hv->guests;

		if (g->dom_started)
			add_orphan(hv, g->name);
		g->end = g->stop_pending ? g->end : END_HOST_FAILED;
		g->lost_with_conn = !g->stop_pending;
		if (!g->stop_pending)
			snprintf(g->end_detail, sizeof(g->end_detail), "%s", why);
		finish(hv, g);
	}
}

void hv_abandon(struct hypervisor *hv, const char *why)
{
	if (hv->lost)
		give_up(hv, why);
}

static void add_orphan(struct hypervisor *hv, const char *name)
{
	char (*o)[64] = realloc(hv->orphans, (size_t)(hv->norphans + 1) * sizeof(*o));

	if (!o)
		return;	/* the next runner's stale cleanup destroys it */
	hv->orphans = o;
	snprintf(hv->orphans[hv->norphans++], 64, "%s", name);
}

/* Guests whose console went with the connection: they end now, destroyed on the reconnect. */
static void drop_streamed(struct hypervisor *hv)
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
		add_orphan(hv, g->name);
		if (!g->stop_pending) {
			g->end = END_HOST_FAILED;
			g->lost_with_conn = true;
			snprintf(g->end_detail, sizeof(g->end_detail),
				 "lost the connection to libvirt at %.100s, and the console with it", hv->uri);
		}
		finish(hv, g);
	}
}

static void destroy_orphans(struct hypervisor *hv)
{
	int i;

	for (i = 0; i < hv->norphans; i++) {
		virDomainPtr dom = virDomainLookupByName(hv->conn, hv->orphans[i]);

		if (dom) {
			info("rcuwb: destroying %s on %s, left when the connection was lost\n",
			     hv->orphans[i], hv->uri);
			virDomainDestroy(dom);
			virDomainFree(dom);
		}
	}
	free(hv->orphans);
	hv->orphans = NULL;
	hv->norphans = 0;
}

/* After a reconnect: every guest again by name; one that ended meanwhile ends now. */
static void readopt(struct hypervisor *hv)
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

static void on_close(virConnectPtr conn, int reason, void *opaque);
static void go_lost(struct hypervisor *hv);
static int hv_versions(struct hypervisor *hv);

/* Lifecycle events and the close callback on hv->conn. */
static int hv_attach(struct hypervisor *hv)
{
	hv->lifecycle_cb = virConnectDomainEventRegisterAny(hv->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
							    VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), hv, NULL);
	if (hv->lifecycle_cb < 0)
		return set_err("libvirt lifecycle events: %s", hv_err());
	if (virConnectRegisterCloseCallback(hv->conn, on_close, hv, NULL) < 0)
		return set_err("libvirt close callback: %s", hv_err());
	return 0;
}

static void on_reconnect(int timer, void *opaque)
{
	struct hypervisor *hv = opaque;
	virConnectPtr conn, old;

	(void)timer;
	if (!hv->lost)
		return;
	conn = virConnectOpen(hv->uri);
	if (!conn) {
		if (!hv->gone && now_s() - hv->lost_at >= hv->reconnect_s) {
			hv->gone = true;
			info("rcuwb: libvirt at %s did not come back within %d s\n", hv->uri, hv->reconnect_s);
			give_up(hv, "libvirtd went away and did not come back");
		}
		/* back off: 1 s doubling to HV_BACKOFF_MAX_MS */
		hv->backoff_ms = hv->backoff_ms * 2 > HV_BACKOFF_MAX_MS ? HV_BACKOFF_MAX_MS : hv->backoff_ms * 2;
		virEventUpdateTimeout(hv->reconnect_timer, hv->backoff_ms);
		return;
	}
	virEventRemoveTimeout(hv->reconnect_timer);
	hv->reconnect_timer = -1;
	old = hv->conn;
	hv->conn = conn;
	hv->lost = hv->gone = false;
	if (old) {
		virConnectUnregisterCloseCallback(old, on_close);
		virConnectClose(old);
	}
	if (hv_versions(hv) < 0 || hv_attach(hv) < 0) {
		info("rcuwb: %s\n", last_err());
		hv->gone = true;
		give_up(hv, "libvirt came back without events");
		return;
	}
	info("rcuwb: reconnected to libvirt at %s after %.0f s; %d guest(s) to find again\n", hv->uri,
	     now_s() - hv->lost_at, hv->nrunning);
	destroy_orphans(hv);
	readopt(hv);
	if (hv->on_back)
		hv->on_back(hv->back_opaque);
}

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
	struct hypervisor *hv = opaque;

	if (conn != hv->conn || hv->lost || hv->closing)
		return;	/* an old connection, or our own close */
	info("rcuwb: lost the connection to libvirt at %s (%s) with %d guest(s) running: reconnecting\n",
	     hv->uri, reason == VIR_CONNECT_CLOSE_REASON_EOF ? "libvirtd went away" : "closed", hv->nrunning);
	go_lost(hv);
}

/* Start reconnecting (a lost connection, or none at the start). */
static void go_lost(struct hypervisor *hv)
{
	hv->lost = true;
	hv->lost_at = now_s();
	hv->lifecycle_cb = -1;
	drop_streamed(hv);
	hv->backoff_ms = 1000;
	hv->reconnect_timer = virEventAddTimeout(hv->backoff_ms, on_reconnect, hv, NULL);
	if (hv->reconnect_timer < 0) {
		hv->gone = true;
		give_up(hv, "lost the connection to libvirt");
	}
}

/*
 * Signals are the process's, not one connection's: one signalfd, and
 * Ctrl-C stops the guests of every open hypervisor.
 */
static struct hypervisor *open_hvs[16];
static int sig_fd = -1, sig_watch = -1;

static void on_signal(int watch, int fd, int events, void *opaque)
{
	struct signalfd_siginfo si;
	size_t i;

	(void)watch;
	(void)events;
	(void)opaque;
	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	for (i = 0; i < ARRAY_SIZE(open_hvs); i++) {
		struct hypervisor *hv = open_hvs[i];

		if (!hv)
			continue;
		hv->interrupted = true;
		info("\nrcuwb: %s: destroying %d running guest(s) on %s\n", strsignal((int)si.ssi_signo),
		     hv->nrunning, hv->uri);
		stop_all(hv, END_INTERRUPTED, "runner interrupted");
	}
}

/* The event loop (once per process) and the signal watch. */
static int hv_register(struct hypervisor *hv)
{
	static bool loop;
	sigset_t mask;
	size_t i;

	virSetErrorFunc(NULL, quiet_virt_errors);
	if (!loop && virEventRegisterDefaultImpl() < 0)
		return set_err("libvirt event loop: %s", hv_err());
	loop = true;
	for (i = 0; i < ARRAY_SIZE(open_hvs) && open_hvs[i]; i++)
		;
	if (i == ARRAY_SIZE(open_hvs))
		return set_err("more than %zu libvirt connections", ARRAY_SIZE(open_hvs));
	open_hvs[i] = hv;
	if (sig_fd >= 0)
		return 0;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sig_fd < 0)
		return set_err("signalfd: %s", strerror(errno));
	sig_watch = virEventAddHandle(sig_fd, VIR_EVENT_HANDLE_READABLE, on_signal, NULL, NULL);
	return sig_watch < 0 ? set_err("libvirt event loop: cannot watch signals") : 0;
}

static void hv_unregister(struct hypervisor *hv)
{
	size_t i;
	bool any = false;

	for (i = 0; i < ARRAY_SIZE(open_hvs); i++) {
		if (open_hvs[i] == hv)
			open_hvs[i] = NULL;
		any |= open_hvs[i] != NULL;
	}
	if (any || sig_fd < 0)
		return;
	if (sig_watch >= 0)
		virEventRemoveHandle(sig_watch);
	close(sig_fd);
	sig_fd = sig_watch = -1;
}

static int hv_versions(struct hypervisor *hv)
{
	if (virConnectGetVersion(hv->conn, &hv->qemu_version) < 0 ||
	    virConnectGetLibVersion(hv->conn, &hv->libvirt_version) < 0)
		return set_err("libvirt at %s: %s", hv->uri, hv_err());
	return 0;
}

static int hv_init(struct hypervisor *hv, const char *uri, int reconnect_s)
{
	memset(hv, 0, sizeof(*hv));
	hv->lifecycle_cb = hv->reconnect_timer = -1;
	hv->reconnect_s = reconnect_s;
	snprintf(hv->uri, sizeof(hv->uri), "%s", uri);
	return hv_register(hv);
}

int hv_open(struct hypervisor *hv, const char *uri)
{
	if (hv_init(hv, uri, HV_RECONNECT_S) < 0)
		return -1;
	hv->conn = virConnectOpen(uri);
	if (!hv->conn)
		return set_err("cannot connect to libvirt at %s (%s): run 'make libvirt' to start libvirtd",
			       uri, hv_err());
	if (hv_versions(hv) < 0 || hv_attach(hv) < 0)
		return -1;
	return 0;
}

int hv_open_lazy(struct hypervisor *hv, const char *uri, int reconnect_s)
{
	if (hv_init(hv, uri, reconnect_s) < 0)
		return -1;
	hv->conn = virConnectOpen(uri);
	if (hv->conn && hv_versions(hv) == 0 && hv_attach(hv) == 0)
		return 0;
	info("rcuwb: cannot reach libvirt at %s (%s): retrying in the background\n", uri,
	     hv->conn ? last_err() : hv_err());
	if (hv->conn) {
		virConnectClose(hv->conn);
		hv->conn = NULL;
	}
	go_lost(hv);
	return 0;
}

void hv_stop_guests(struct hypervisor *hv)
{
	stop_all(hv, END_INTERRUPTED, "runner exiting");
}

void hv_close(struct hypervisor *hv)
{
	hv_stop_guests(hv);
	give_up(hv, "runner exiting while libvirt was away");	/* what could not be destroyed */
	if (hv->conn && !hv->lost)
		destroy_orphans(hv);
	free(hv->orphans);
	hv->orphans = NULL;
	hv->norphans = 0;
	if (hv->reconnect_timer >= 0)
		virEventRemoveTimeout(hv->reconnect_timer);
	hv_unregister(hv);
	hv->closing = true;
	if (hv->conn) {
		if (!hv->lost) {
			if (hv->lifecycle_cb >= 0)
				virConnectDomainEventDeregisterAny(hv->conn, hv->lifecycle_cb);
			virConnectUnregisterCloseCallback(hv->conn, on_close);
		}
		virConnectClose(hv->conn);
	}
	hv->conn = NULL;
	hv->reconnect_timer = -1;
}

bool hv_has_kvm(struct hypervisor *hv)
{
	char *caps = virConnectGetCapabilities(hv->conn);
	bool kvm = caps && strstr(caps, "<domain type='kvm'");

	free(caps);
	return kvm;
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
			add_orphan(hv, g->name);
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

static void wake(int timer, void *opaque)
{
	(void)timer;
	*(bool *)opaque = true;
}

int hv_sleep(struct hypervisor *hv, int ms)
{
	bool woke = false;
	int timer = virEventAddTimeout(ms, wake, &woke, NULL), ret = 0;

	if (timer < 0)
		return set_err("libvirt event loop: cannot add a timer");
	while (!woke && !hv->interrupted && ret == 0)
		if (virEventRunDefaultImpl() < 0)
			ret = set_err("libvirt event loop: %s", hv_err());
	virEventRemoveTimeout(timer);
	return ret;
}

int hv_iterate(void)
{
	return virEventRunDefaultImpl() < 0 ? set_err("libvirt event loop: %s", hv_err()) : 0;
}

int hv_wait(struct hypervisor *hv, int until)
{
	while (hv->nrunning >= until && hv->nrunning > 0)
		if (virEventRunDefaultImpl() < 0)
			return set_err("libvirt event loop: %s", hv_err());
	return 0;
}
