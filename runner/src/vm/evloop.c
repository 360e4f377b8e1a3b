/*
 * evloop.c: the process's libvirt event loop.
 *
 * The runner sleeps in libvirt's default event loop, registered once per
 * process: every connection's lifecycle events and close callbacks, the
 * guests' console watches and deadlines, the reconnect timers.  Signals
 * are the process's, not one connection's: one signalfd, and Ctrl-C stops
 * the guests of every open hypervisor.
 */
#define _GNU_SOURCE
#include "evloop.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common.h"
#include "guest.h"

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
		guests_stop_all(hv, END_INTERRUPTED, "runner interrupted");
	}
}

int evloop_add(struct hypervisor *hv)
{
	static bool loop;
	sigset_t mask;
	size_t i;

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

void evloop_remove(struct hypervisor *hv)
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

static void wake(int timer, void *opaque)
{
	(void)timer;
	*(bool *)opaque = true;
}

int evloop_sleep(struct hypervisor *hv, int ms)
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

int evloop_iterate(void)
{
	return virEventRunDefaultImpl() < 0 ? set_err("libvirt event loop: %s", hv_err()) : 0;
}

int evloop_wait(struct hypervisor *hv, int until)
{
	while (hv->nrunning >= until && hv->nrunning > 0)
		if (virEventRunDefaultImpl() < 0)
			return set_err("libvirt event loop: %s", hv_err());
	return 0;
}
