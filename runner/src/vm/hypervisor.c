/*
 * hypervisor.c: one libvirt connection.
 *
 * A close callback notices libvirtd going away; the connection is then
 * "lost" and a timer reconnects with backoff, for good.  The guests run on
 * without libvirtd (QEMU does not need it) and are found again by name
 * once a reconnect succeeds (guest.c, guests_readopt()); what cannot be
 * found or was left running with a lost console is destroyed by name
 * (the orphans).
 */
#define _GNU_SOURCE
#include "hypervisor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "common.h"
#include "evloop.h"
#include "guest.h"

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

void hv_abandon(struct hypervisor *hv, const char *why)
{
	if (hv->lost)
		guests_give_up(hv, why);
}

/* A domain to destroy by name once the host is back. */
void hv_add_orphan(struct hypervisor *hv, const char *name)
{
	char (*o)[64] = realloc(hv->orphans, (size_t)(hv->norphans + 1) * sizeof(*o));

	if (!o)
		return;	/* the next runner's stale cleanup destroys it */
	hv->orphans = o;
	snprintf(hv->orphans[hv->norphans++], 64, "%s", name);
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

static void on_close(virConnectPtr conn, int reason, void *opaque);
static void go_lost(struct hypervisor *hv);
static int hv_versions(struct hypervisor *hv);

/* Lifecycle events and the close callback on hv->conn. */
static int hv_attach(struct hypervisor *hv)
{
	hv->lifecycle_cb = virConnectDomainEventRegisterAny(hv->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
							    VIR_DOMAIN_EVENT_CALLBACK(guests_on_lifecycle), hv, NULL);
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
			guests_give_up(hv, "libvirtd went away and did not come back");
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
		guests_give_up(hv, "libvirt came back without events");
		return;
	}
	info("rcuwb: reconnected to libvirt at %s after %.0f s; %d guest(s) to find again\n", hv->uri,
	     now_s() - hv->lost_at, hv->nrunning);
	destroy_orphans(hv);
	guests_readopt(hv);
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
	guests_drop_streamed(hv);
	hv->backoff_ms = 1000;
	hv->reconnect_timer = virEventAddTimeout(hv->backoff_ms, on_reconnect, hv, NULL);
	if (hv->reconnect_timer < 0) {
		hv->gone = true;
		guests_give_up(hv, "lost the connection to libvirt");
	}
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
	virSetErrorFunc(NULL, quiet_virt_errors);
	return evloop_add(hv);
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

void hv_close(struct hypervisor *hv)
{
	guests_stop_all(hv, END_INTERRUPTED, "runner exiting");
	guests_give_up(hv, "runner exiting while libvirt was away");	/* what could not be destroyed */
	if (hv->conn && !hv->lost)
		destroy_orphans(hv);
	free(hv->orphans);
	hv->orphans = NULL;
	hv->norphans = 0;
	if (hv->reconnect_timer >= 0)
		virEventRemoveTimeout(hv->reconnect_timer);
	evloop_remove(hv);
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
