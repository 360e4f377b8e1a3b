/* domxml.h: libvirt domain XML for one guest, made from the VMs/domain.xml template. */
#ifndef RCUWB_DOMXML_H
#define RCUWB_DOMXML_H

#include "topo.h"

struct domain_params {
	const char *name;
	const char *description;	/* who started it (stage_owner()), NULL = none */
	bool kvm;			/* domain type kvm (else qemu = TCG) */
	const struct guest_topo *topo;
	const char *kernel, *initrd, *cmdline;
	const char *console;		/* console file on the host; NULL: a pty, read as a stream */
	const char *console_log;	/* with a pty: virtlogd's copy of it on the host, NULL = none */
	/*
	 * Host PUs (os indexes) for the guest, npin = 0: not pinned.  With one
	 * PU per vCPU, vCPU i runs on pin[i]; otherwise every vCPU (and the
	 * emulator) may use all of them.
	 */
	const unsigned *pin;
	unsigned npin;
	const char *mem_nodeset;	/* host NUMA nodes for memory, NULL = none */
	const char *emulator_cpuset;	/* QEMU's own threads, NULL = the vCPUs' PUs */
};

/* Template path: $RCUWB_DOMAIN_TEMPLATE, else VMs/domain.xml of this checkout. */
const char *domxml_template_path(void);
/* Returns malloc'd XML; -1/NULL with set_err() (bad template, bad values). */
char *domxml_build(const char *template_path, const struct domain_params *p);
/*
 * The same domain again (rcuwb rerun): only the name and the staged kernel,
 * initrd and console paths of p change; NULL with set_err() on bad XML.
 */
char *domxml_retarget(const char *xml, const struct domain_params *p);

#endif
