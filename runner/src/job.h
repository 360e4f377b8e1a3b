/* job.h: one run from spec to stored result: staging, domain XML, guest, classification, run directory, database. */
#ifndef RCUWB_JOB_H
#define RCUWB_JOB_H

#include <limits.h>
#include <sqlite3.h>

#include "console.h"
#include "db.h"
#include "guest.h"
#include "host.h"
#include "hostload.h"
#include "place.h"
#include "run.h"

/* What every job of one runner invocation shares. */
struct bench {
	struct hypervisor hv;
	struct host_info host;
	sqlite3 *db;			/* NULL: nothing stored (accelerator probe) */
	char results_dir[PATH_MAX];	/* run directories go to results_dir/runs */
	bool kvm;			/* domain type kvm (else TCG) */
	bool numa_host;			/* bind guest memory to the PUs' host nodes */
	unsigned seq;
};

struct job {
	struct run_spec spec;
	const struct placement *place;	/* host PUs given to it, NULL = unpinned */
	const char *xml_again;		/* rerun: this stored domain XML, retargeted */
	struct run_env env;
	struct console con;
	struct guest guest;
	char stage_dir[PATH_MAX];
	char *xml;
	char emu_cpuset[256];		/* emulator: apart, the PUs QEMU's threads get */
	struct run_result result;
	struct load_snap load0;		/* other processes' CPU when the guest started */
	int64_t id;
};

/* Stage kernel/initrd where QEMU may read them, make the XML, start the guest. */
int job_start(struct bench *b, struct job *j);
/* After the guest ended: classify, keep the console and XML in the run dir, store. */
int job_finish(struct bench *b, struct job *j);
void job_free(struct job *j);
/* Remove staging left by runners that were killed (their guests are gone). */
void job_clean_stale(struct hypervisor *hv);
/* Convenience: start, wait, finish. */
int job_run(struct bench *b, struct job *j);

#endif
