/* evloop.h: the process's libvirt event loop: every connection's events and timers, and Ctrl-C. */
#ifndef RCUWB_EVLOOP_H
#define RCUWB_EVLOOP_H

#include "hypervisor.h"

/*
 * Register libvirt's default event loop (once per process) and the signal
 * watch, and count hv among the connections whose guests SIGINT, SIGTERM
 * and SIGHUP stop (hv->interrupted is set).  -1 with set_err().
 */
int evloop_add(struct hypervisor *hv);
/* hv is closing: no longer stopped by signals (the watch goes with the last one). */
void evloop_remove(struct hypervisor *hv);
/* One round of the event loop (every connection's events and timers). */
int evloop_iterate(void);
/* Run the event loop until fewer than `until` guests of hv are running. */
int evloop_wait(struct hypervisor *hv, int until);
/* Run the event loop for ms milliseconds (or until interrupted): waiting for another runner's PUs. */
int evloop_sleep(struct hypervisor *hv, int ms);

#endif
