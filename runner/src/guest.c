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

static const char *virt_msg(void)
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
	if (g->con_fd < 0)
		g->con_fd = open(g->console_path, O_RDONLY | O_CLOEXEC);
}

static void drain_console(struct hypervisor *hv, struct guest *g)
{
	char chunk[65536];
	ssize_t n;

	while (g->con_fd >= 0 && (n = read(g->con_fd, chunk, sizeof(chunk))) > 0) {
		const char *why = g->on_console ? g->on_console(g, chunk, (size_t)n) : NULL;

		if (why && g->running)
			guest_stop(hv, g, END_EARLY, why);
	}
}

/* The guest is gone: final console bytes, release everything, unlink. */
static void finish(struct hypervisor *hv, struct guest *g)
{
	struct guest **pp;

	if (!g->running)
		return;
	g->running = false;
	g->ended = now_s();
	open_console(g);
	drain_console(hv, g);
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
	snprintf(text, sizeof(text), "%s", detail);	/* detail may be g->end_detail itself */
	g->end = why;
	snprintf(g->end_detail, sizeof(g->end_detail), "%s", text);
	if (hv->lost) {
		g->stop_pending = true;	/* nothing can destroy it now: on the reconnect */
		return;
	}
	/* Synchronous: when it returns, QEMU is gone. */
	if (g->dom && virDomainDestroy(g->dom) < 0 && virDomainIsActive(g->dom) == 1)
		info("rcuwb: warning: could not destroy %s: %s\n", g->name, virt_msg());
	finish(hv, g);
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct hypervisor *hv = opaque;
	struct guest *g = find_guest(hv, virDomainGetName(dom));

	(void)conn;
	if (!g || !g->running)
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
		finish(hv, g);
	} else if (event == VIR_DOMAIN_EVENT_STOPPED) {
		/* on_poweroff/on_reboot = destroy: a power-off or reboot lands here */
		g->end = END_SHUTDOWN;
		finish(hv, g);
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

/* Unreachable for good: every guest ends here as the host's failure (its console may still show it finished). */
static void give_up(struct hypervisor *hv, const char *why)
{
	while (hv->guests) {
		struct guest *g = hv->guests;

		g->end = g->stop_pending ? g->end : END_HOST_FAILED;
		if (!g->stop_pending)
			snprintf(g->end_detail, sizeof(g->end_detail), "%s", why);
		finish(hv, g);
	}
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

/* Lifecycle events and the close callback on hv->conn. */
static int hv_attach(struct hypervisor *hv)
{
	hv->lifecycle_cb = virConnectDomainEventRegisterAny(hv->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
							    VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), hv, NULL);
	if (hv->lifecycle_cb < 0)
		return set_err("libvirt lifecycle events: %s", virt_msg());
	if (virConnectRegisterCloseCallback(hv->conn, on_close, hv, NULL) < 0)
		return set_err("libvirt close callback: %s", virt_msg());
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
		if (now_s() - hv->lost_at < HV_RECONNECT_S)
			return;	/* again in a second */
		virEventRemoveTimeout(hv->reconnect_timer);
		hv->reconnect_timer = -1;
		hv->gone = true;
		info("rcuwb: libvirt at %s did not come back within %d s\n", hv->uri, HV_RECONNECT_S);
		give_up(hv, "libvirtd went away and did not come back");
		return;
	}
	virEventRemoveTimeout(hv->reconnect_timer);
	hv->reconnect_timer = -1;
	old = hv->conn;
	hv->conn = conn;
	hv->lost = false;
	if (old) {
		virConnectUnregisterCloseCallback(old, on_close);
		virConnectClose(old);
	}
	if (hv_attach(hv) < 0) {
		info("rcuwb: %s\n", last_err());
		hv->gone = true;
		give_up(hv, "libvirt came back without events");
		return;
	}
	info("rcuwb: reconnected to libvirt at %s after %.0f s; %d guest(s) to find again\n", hv->uri,
	     now_s() - hv->lost_at, hv->nrunning);
	readopt(hv);
}

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
	struct hypervisor *hv = opaque;

	if (conn != hv->conn || hv->lost || hv->closing)
		return;	/* an old connection, or our own close */
	hv->lost = true;
	hv->lost_at = now_s();
	hv->lifecycle_cb = -1;
	info("rcuwb: lost the connection to libvirt at %s (%s) with %d guest(s) running: reconnecting\n",
	     hv->uri, reason == VIR_CONNECT_CLOSE_REASON_EOF ? "libvirtd went away" : "closed", hv->nrunning);
	hv->reconnect_timer = virEventAddTimeout(1000, on_reconnect, hv, NULL);
	if (hv->reconnect_timer < 0) {
		hv->gone = true;
		give_up(hv, "lost the connection to libvirt");
	}
}

static void on_signal(int watch, int fd, int events, void *opaque)
{
	struct hypervisor *hv = opaque;
	struct signalfd_siginfo si;

	(void)watch;
	(void)events;
	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	hv->interrupted = true;
	info("\nrcuwb: %s: destroying %d running guest(s)\n", strsignal((int)si.ssi_signo), hv->nrunning);
	stop_all(hv, END_INTERRUPTED, "runner interrupted");
}

int hv_open(struct hypervisor *hv, const char *uri)
{
	sigset_t mask;

	memset(hv, 0, sizeof(*hv));
	hv->sig_fd = hv->sig_watch = hv->lifecycle_cb = hv->reconnect_timer = -1;
	snprintf(hv->uri, sizeof(hv->uri), "%s", uri);
	virSetErrorFunc(NULL, quiet_virt_errors);
	if (virEventRegisterDefaultImpl() < 0)
		return set_err("libvirt event loop: %s", virt_msg());
	hv->conn = virConnectOpen(uri);
	if (!hv->conn)
		return set_err("cannot connect to libvirt at %s (%s): run 'make libvirt' to start libvirtd",
			       uri, virt_msg());
	if (virConnectGetVersion(hv->conn, &hv->qemu_version) < 0 ||
	    virConnectGetLibVersion(hv->conn, &hv->libvirt_version) < 0)
		return set_err("libvirt at %s: %s", uri, virt_msg());
	if (hv_attach(hv) < 0)
		return -1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	hv->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (hv->sig_fd < 0)
		return set_err("signalfd: %s", strerror(errno));
	hv->sig_watch = virEventAddHandle(hv->sig_fd, VIR_EVENT_HANDLE_READABLE, on_signal, hv, NULL);
	return hv->sig_watch < 0 ? set_err("libvirt event loop: cannot watch signals") : 0;
}

void hv_close(struct hypervisor *hv)
{
	stop_all(hv, END_INTERRUPTED, "runner exiting");
	give_up(hv, "runner exiting while libvirt was away");	/* what could not be destroyed */
	if (hv->reconnect_timer >= 0)
		virEventRemoveTimeout(hv->reconnect_timer);
	if (hv->sig_watch >= 0)
		virEventRemoveHandle(hv->sig_watch);
	if (hv->sig_fd >= 0)
		close(hv->sig_fd);
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
	hv->reconnect_timer = hv->sig_watch = -1;
	hv->sig_fd = -1;
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

int guest_start(struct hypervisor *hv, struct guest *g)
{
	g->hv = hv;
	g->timer = g->ino_watch = g->ino_fd = g->con_fd = -1;
	g->dom = NULL;
	g->running = g->stop_pending = false;
	g->end_detail[0] = '\0';
	if (watch_console(g) < 0)
		goto fail;
	g->started = now_s();
	/* registered before the domain exists: a guest that dies at once still counts */
	g->next = hv->guests;
	hv->guests = g;
	hv->nrunning++;
	g->running = true;
	g->dom = virDomainCreateXML(hv->conn, g->xml, VIR_DOMAIN_START_AUTODESTROY);
	if (!g->dom) {
		set_err("libvirt could not start %s: %s", g->name, virt_msg());
		g->end = END_START_FAILED;
		snprintf(g->end_detail, sizeof(g->end_detail), "%s", last_err());
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
	g->ino_fd = g->con_fd = -1;
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
			ret = set_err("libvirt event loop: %s", virt_msg());
	virEventRemoveTimeout(timer);
	return ret;
}

int hv_wait(struct hypervisor *hv, int until)
{
	while (hv->nrunning >= until && hv->nrunning > 0)
		if (virEventRunDefaultImpl() < 0)
			return set_err("libvirt event loop: %s", virt_msg());
	return 0;
}
