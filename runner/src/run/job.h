/* job.h: one run from spec to stored result: staging, domain XML, guest, classification, run directory, database. */
#ifndef RCUWB_JOB_H
#define RCUWB_JOB_H

#include <limits.h>
#include <sqlite3.h>

#include "console.h"
#include "db.h"
#include "run.h"
#include "vmhost.h"

struct session;		/* session.h: what the jobs of one invocation share */

struct job {
	struct run_spec spec;
	struct vmhost *host;		/* where it runs; NULL = the session's first host */
	const struct placement *place;	/* host PUs given to it, NULL = unpinned */
	const char *xml_again;		/* rerun: this stored domain XML, retargeted */
	struct run_env env;
	struct console con;
	struct guest guest;
	char stage_dir[PATH_MAX];
	char remote_log[PATH_MAX];	/* a remote guest's console log on its host */
	char *xml;
	char emu_cpuset[256];		/* emulator: apart, the PUs QEMU's threads get */
	struct run_result result;
	struct host_mark load0;		/* other work's CPU on the host when the guest started */
	/*
	 * The accelerator trial (accel.c): a guest booted only to see whether
	 * KVM runs it; neither stored nor given a run directory.
	 */
	bool trial;
	int64_t id;
};

/* Stage kernel/initrd where its host's QEMU may read them, make the XML, start the guest. */
int job_start(struct session *sess, struct job *j);
/* After the guest ended: classify, keep the console and XML in the run dir, store. */
int job_finish(struct session *sess, struct job *j);
void job_free(struct job *j);
/* Convenience: start, wait, finish. */
int job_run(struct session *sess, struct job *j);

#endif
