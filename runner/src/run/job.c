/*
 * job.c: one run from spec to stored result.
 *
 * The kernel and initramfs are staged where the host's QEMU can read them
 * (stage.c): a directory libvirt owns on the local host, storage volumes
 * on a remote one.  The console log ends in the run's own directory, next
 * to the domain XML, command line, kernel config and patch list that
 * reproduce it: moved there from the stage directory, or written there as
 * the console stream of a remote guest arrives.
 */
#define _GNU_SOURCE
#include "job.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "anatomy.h"
#include "common.h"
#include "domxml.h"
#include "evloop.h"
#include "session.h"
#include "stage.h"

static void name_job(struct session *sess, struct job *j)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(j->guest.name, sizeof(j->guest.name), "rcuwb-%s-%d-%u", stamp, (int)getpid(), ++sess->seq);
}

/* An empty console parser for the job's kernel. */
static void console_start(struct job *j)
{
	console_init(&j->con);
	console_set_prefix(&j->con, j->spec.kernel->console_prefix);
}

static const char *on_console(struct guest *g, const char *data, size_t len)
{
	struct job *j = g->opaque;

	if (console_feed(&j->con, data, len) < 0)
		return "console parser out of memory";
	return run_early_verdict(&j->spec, &j->con);
}

/* Kernel and initramfs where the host's QEMU reads them; the console file here. */
static int stage_files(struct job *j, char *kernel, char *initrd, size_t cap)
{
	const struct kernel_build *k = j->spec.kernel;
	struct vmhost *h = j->host;

	if (!h->remote)
		return stage_local(j->guest.name, k->vmlinux, k->initramfs, j->stage_dir,
				   sizeof(j->stage_dir), kernel, initrd, j->guest.console_path, cap);
	j->guest.stream_console = true;
	if (stage_volume(h->hv.conn, h->spec.pool, k->vmlinux, "vmlinux", kernel, cap) < 0 ||
	    stage_volume(h->hv.conn, h->spec.pool, k->initramfs, "initramfs.cpio", initrd, cap) < 0 ||
	    stage_log_path(kernel, j->guest.name, j->remote_log, sizeof(j->remote_log)) < 0 ||
	    vmhost_track_log(h, j->guest.name) < 0)
		return -1;
	if (j->env.run_dir[0])
		return mkdir_p(j->env.run_dir) < 0 ? -1 :
			path_fmt(j->guest.console_path, sizeof(j->guest.console_path), "%s/console.log",
				 j->env.run_dir);
	/* nothing kept (accelerator probe): a file of its own while it runs */
	return path_fmt(j->guest.console_path, sizeof(j->guest.console_path), "%s/%s.console.log",
			getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", j->guest.name);
}

/* The host PUs (0..npus-1) not given to the guest, in libvirt syntax; false if none. */
static bool other_pus(unsigned npus, const struct placement *pl, char *out, size_t cap)
{
	size_t len = 0;
	unsigned pu, i;

	out[0] = '\0';
	for (pu = 0; pu < npus && len < cap; pu++) {
		for (i = 0; i < pl->npus && pl->os[i] != pu; i++)
			;
		if (i == pl->npus)
			len += (size_t)snprintf(out + len, cap - len, "%s%u", len ? "," : "", pu);
	}
	return len > 0 && len < cap;
}

int job_start(struct session *sess, struct job *j)
{
	char kernel[PATH_MAX], initrd[PATH_MAX], owner[320];
	struct domain_params dp = { 0 };
	struct run_env *e = &j->env;
	struct vmhost *h;

	if (!j->host)
		j->host = &sess->hosts[0];
	h = j->host;
	console_start(j);
	if (!j->spec.kconfig[0])
		snprintf(j->spec.kconfig, sizeof(j->spec.kconfig), "%s", j->spec.kernel->kconfig);
	name_job(sess, j);
	run_cell_key(&j->spec, e->cell, sizeof(e->cell));
	if (run_cmdline(&j->spec, e->cmdline, sizeof(e->cmdline)) < 0)
		return -1;
	snprintf(e->accel, sizeof(e->accel), "%s", h->kvm ? "kvm" : "tcg");
	hv_version_str(h->hv.qemu_version, e->qemu_version);
	hv_version_str(h->hv.libvirt_version, e->libvirt_version);
	snprintf(e->host, sizeof(e->host), "%s", h->info.name);
	snprintf(e->host_uri, sizeof(e->host_uri), "%s", h->spec.uri);
	e->host_pus = h->info.pus;
	e->oversub = (double)j->spec.topo.vcpus / (h->info.pus ? h->info.pus : 1);
	if (j->place) {
		e->oversub = j->place->oversub;
		snprintf(e->pinned, sizeof(e->pinned), "%s", j->place->cpuset);
		dp.pin = j->place->os;
		dp.npin = j->place->npus;
		if (j->spec.emulator_apart && other_pus(h->info.pus, j->place, j->emu_cpuset,
							sizeof(j->emu_cpuset))) {
			int w = snprintf(e->pinned, sizeof(e->pinned), "%s emulator:%s",
					 j->place->cpuset, j->emu_cpuset);

			if (w < 0 || (size_t)w >= sizeof(e->pinned))
				return set_err("pinning %s emulator:%s is too long to store",
					       j->place->cpuset, j->emu_cpuset);
			dp.emulator_cpuset = j->emu_cpuset;
		}
		if (h->numa_host)
			dp.mem_nodeset = j->place->nodeset;
	}
	if (!j->trial &&
	    path_fmt(e->run_dir, sizeof(e->run_dir), "%s/runs/%s", sess->results_dir, j->guest.name))
		return -1;
	if (stage_files(j, kernel, initrd, sizeof(kernel)) < 0)
		return -1;
	stage_owner(owner, sizeof(owner));
	snprintf(owner + strlen(owner), sizeof(owner) - strlen(owner), ", pid %d", (int)getpid());
	dp.name = j->guest.name;
	dp.description = owner;
	dp.kvm = h->kvm;
	dp.topo = &j->spec.topo;
	dp.kernel = kernel;
	dp.initrd = initrd;
	dp.cmdline = e->cmdline;
	dp.console = j->guest.stream_console ? NULL : j->guest.console_path;
	dp.console_log = j->remote_log[0] ? j->remote_log : NULL;
	j->xml = j->xml_again ? domxml_retarget(j->xml_again, &dp) : domxml_build(domxml_template_path(), &dp);
	if (!j->xml)
		return -1;
	j->guest.xml = j->xml;
	j->guest.timeout_s = j->spec.timeout_s;
	j->guest.on_console = on_console;
	j->guest.opaque = j;
	vmhost_mark(h, &j->load0);
	e->started = now_s();
	return guest_start(&h->hv, &j->guest);
}

static json_object *run_json(const struct job *j)
{
	const struct run_spec *s = &j->spec;
	json_object *o = json_object_new_object();
	char t[32];

	json_object_object_add(o, "id", json_object_new_int64(j->id));
	json_object_object_add(o, "name", json_object_new_string(j->guest.name));
	json_object_object_add(o, "matrix", json_object_new_string(s->matrix));
	json_object_object_add(o, "cell", json_object_new_string(j->env.cell));
	json_object_object_add(o, "variant", json_object_new_string(s->kernel->variant));
	json_object_object_add(o, "kconfig", json_object_new_string(s->kernel->kconfig));
	json_object_object_add(o, "kernel_version", json_object_new_string(s->kernel->version));
	json_object_object_add(o, "config_sha", json_object_new_string(s->kernel->config_sha));
	json_object_object_add(o, "cmdline", json_object_new_string(j->env.cmdline));
	json_object_object_add(o, "vcpus", json_object_new_int((int)s->topo.vcpus));
	json_object_object_add(o, "numa_nodes", json_object_new_int((int)(s->topo.nnodes ? s->topo.nnodes : 1)));
	json_object_object_add(o, "accel", json_object_new_string(j->env.accel));
	json_object_object_add(o, "host_pus", json_object_new_int((int)j->env.host_pus));
	json_object_object_add(o, "oversub", json_object_new_double(j->env.oversub));
	json_object_object_add(o, "host_other_cpu", j->env.host_other >= 0 ?
			       json_object_new_double(j->env.host_other) : NULL);
	iso_time(j->env.started, t);
	json_object_object_add(o, "started_at", json_object_new_string(t));
	json_object_object_add(o, "wall_s", json_object_new_double(j->env.ended - j->env.started));
	json_object_object_add(o, "outcome", json_object_new_string(outcome_name(j->result.outcome)));
	json_object_object_add(o, "outcome_detail", json_object_new_string(j->result.detail));
	json_object_object_add(o, "samples", json_object_new_int64((int64_t)j->con.nsamples));
	return o;
}

/* Console, XML, command line, kernel config and patch list: enough to rerun by hand. */
static int keep_run_dir(struct job *j)
{
	const char *d = j->env.run_dir;
	char path[PATH_MAX + 32], src[PATH_MAX + 32];
	json_object *o;
	int ret;

	if (mkdir_p(d) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/console.log", d);
	/* no console at all (the guest never started): nothing to keep */
	if (rename(j->guest.console_path, path) < 0 && errno != ENOENT &&
	    (errno != EXDEV || copy_file(j->guest.console_path, path) < 0))
		return set_err("cannot keep the console log in %s: %s", d, strerror(errno));
	snprintf(path, sizeof(path), "%s/domain.xml", d);
	if (write_file(path, j->xml, strlen(j->xml)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cmdline", d);
	if (write_file(path, j->env.cmdline, strlen(j->env.cmdline)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/kernel.config", d);
	if (copy_file(j->spec.kernel->config, path) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s", j->spec.kernel->build_json);
	snprintf(path, sizeof(path), "%s/build.json", d);
	if (copy_file(src, path) < 0)
		return -1;
	o = run_json(j);
	snprintf(path, sizeof(path), "%s/run.json", d);
	ret = json_object_to_file_ext(path, o, JSON_C_TO_STRING_PRETTY) < 0 ?
		set_err("cannot write %s", path) : 0;
	json_object_put(o);
	return ret;
}

static void unstage(struct job *j)
{
	char kept[PATH_MAX + 32];

	if (!j->guest.stream_console) {
		stage_local_remove(j->stage_dir);
		return;
	}
	/* a remote guest's console file is removed only when it was not the run directory's */
	snprintf(kept, sizeof(kept), "%s/console.log", j->env.run_dir);
	if (j->guest.console_path[0] && (!j->env.run_dir[0] || strcmp(kept, j->guest.console_path)))
		unlink(j->guest.console_path);
}

/*
 * A remote guest that ran: its whole console from the host's log replaces
 * what the stream delivered (which may miss the end), parsed again from
 * the start.  Without the log (the host unreachable, or the run lost with
 * the connection) the stream's copy stands.
 */
static void fetch_remote_log(struct job *j)
{
	struct buf all = { 0 };
	struct vmhost *h = j->host;

	if (!j->guest.dom_started || j->guest.lost_with_conn || h->hv.lost || !h->hv.conn)
		return;
	if (stage_fetch_log(h->hv.conn, j->remote_log, j->guest.console_path) < 0 ||
	    read_file(j->guest.console_path, &all) < 0) {
		info("rcuwb: warning: %s: keeping the console as streamed\n", last_err());
		buf_free(&all);
		return;
	}
	console_free(&j->con);
	console_start(j);
	if (all.len && console_feed(&j->con, all.data, all.len) < 0)
		info("rcuwb: warning: console parser out of memory\n");
	buf_free(&all);
}

/*
 * A run of a kernel with RCU's trace events: what its console's ftrace dump
 * held and, when whole, its writers' calls cut into phases, stored.
 */
static int store_anatomy(struct session *sess, struct job *j)
{
	char path[PATH_MAX + 32];
	struct trace t = { 0 };
	struct anatomy a = { 0 };
	const char *why;
	int ret;

	snprintf(path, sizeof(path), "%s/console.log", j->env.run_dir);
	ret = trace_parse_file(&t, path);
	why = ret ? NULL : trace_incomplete(&t);
	if (!ret && !why)
		ret = anatomy_build(&t, &a);
	if (!ret)
		ret = db_store_anatomy(sess->db, j->id, &t, &a);
	if (!ret && why && j->result.outcome == OUT_OK)
		info("rcuwb: run %lld: its trace is not analysed: %s\n", (long long)j->id, why);
	anatomy_free(&a);
	trace_free(&t);
	return ret;
}

int job_finish(struct session *sess, struct job *j)
{
	int kept = 0, stored = 0;

	struct host_mark load1;

	if (j->remote_log[0]) {	/* nothing of the guest stays on its host, however it ended */
		fetch_remote_log(j);
		vmhost_drop_log(j->host, j->guest.name);
	}
	console_finish(&j->con);
	j->env.ended = j->guest.ended ? j->guest.ended : now_s();
	vmhost_mark(j->host, &load1);
	j->env.host_other = vmhost_other_pus(j->host, &j->load0, &load1);
	run_classify(&j->spec, &j->con, j->guest.end, j->guest.end_detail, &j->result);
	if (!j->trial)	/* stored even when the run directory cannot be written */
		stored = db_store_run(sess->db, &j->spec, &j->env, &j->con, &j->result, &j->id);
	if (j->env.run_dir[0])
		kept = keep_run_dir(j);
	if (!stored && !kept && j->id > 0 && j->env.run_dir[0] && j->spec.kind == RUN_RCUSCALE &&
	    j->spec.kernel->rcu_trace)
		stored = store_anatomy(sess, j);
	unstage(j);
	return stored < 0 || kept < 0 ? -1 : 0;
}

void job_free(struct job *j)
{
	console_free(&j->con);
	vmhost_mark_free(&j->load0);
	free(j->xml);
	j->xml = NULL;
}

int job_run(struct session *sess, struct job *j)
{
	if (job_start(sess, j) < 0 && j->guest.end != END_START_FAILED)
		return -1;
	if (evloop_wait(&j->host->hv, 1) < 0)
		return -1;
	return job_finish(sess, j);
}
