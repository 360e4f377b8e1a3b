/* run.c: run specs, kernel command lines and outcome classification (pure logic). */
#include "run.h"

#include <stdio.h>
#include <string.h>

#include "common.h"

const char *outcome_name(enum outcome o)
{
	static const char *const names[OUT_NR] = {
		[OUT_OK] = "ok", [OUT_TIMEOUT] = "timeout", [OUT_CRASH] = "crash",
		[OUT_BADNESS] = "badness", [OUT_RCUSCALE_ERROR] = "rcuscale-error",
		[OUT_RCUSCALE_ABORTED] = "rcuscale-aborted", [OUT_DEADLOCK] = "deadlock",
		[OUT_TOPOLOGY_MISMATCH] = "topology-mismatch", [OUT_QEMU_FAILED] = "qemu-failed",
		[OUT_INTERRUPTED] = "interrupted", [OUT_HOST_FAILED] = "host-failed",
	};
	return o < OUT_NR ? names[o] : "?";
}

const char *gp_mode_name(enum gp_mode g)
{
	return g == GP_EXPEDITED ? "expedited" : g == GP_ASYNC ? "async" : "normal";
}

void run_spec_init(struct run_spec *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->matrix, "adhoc");
	s->kind = RUN_RCUSCALE;
	topo_make(&s->topo, 2, 0, 512, 0, 0, 0);
	s->gp = GP_NORMAL;
	s->nwriters = -1;
	s->nreaders = 0;
	s->holdoff_s = HOLDOFF_BOOT;
	s->probe_watchdog_s = 5;
	s->probe_calls = 1;
	s->timeout_s = 300;
}

bool run_probe_stages_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n > 5 || strspn(s, "01234") != n)
		return false;
	for (i = 0; i < n; i++)
		if (strchr(s + i + 1, s[i]))
			return false;
	return true;
}

int run_holdoff_s(const struct run_spec *s)
{
	return s->holdoff_s == HOLDOFF_BOOT ? 2 : s->holdoff_s;
}

/* "/k=NAME" for a scenario other than the default, else "" */
static void kconfig_part(const struct run_spec *s, char *out, size_t cap)
{
	out[0] = '\0';
	if (s->kconfig[0] && strcmp(s->kconfig, KCONFIG_DEFAULT))
		snprintf(out, cap, "/k=%s", s->kconfig);
}

/* rcuscale.scale_type when the run sets one (not rcu, the kernel's default) */
static const char *scale_type(const struct run_spec *s)
{
	return s->kind == RUN_RCUSCALE && s->flavour[0] && strcmp(s->flavour, "rcu") ? s->flavour : NULL;
}

void run_cell_key(const struct run_spec *s, char *out, unsigned cap)
{
	char topo[48], kc[100];

	topo_key(&s->topo, topo, sizeof(topo));
	kc[0] = '\0';
	if (scale_type(s))
		snprintf(kc, sizeof(kc), "/f=%s", scale_type(s));
	kconfig_part(s, kc + strlen(kc), sizeof(kc) - strlen(kc));
	if (s->kind == RUN_BOOT)
		snprintf(out, cap, "%s/boot%s", topo, kc);
	else if (s->kind == RUN_PROBE)
		snprintf(out, cap, "%s/probe-%s%s%s%s%.0d%s%s%s", topo, s->probe_stages,
			 s->probe_prims[0] ? "-" : "", s->probe_prims,
			 s->probe_calls > 1 ? "-x" : "", s->probe_calls > 1 ? s->probe_calls : 0,
			 kc, s->boot_params[0] ? "/" : "", s->boot_params);
	else
		snprintf(out, cap, "%s/%s/w%d-r%d%s%.0d%s%.0d%s%.0d%s%s%s%s", topo, gp_mode_name(s->gp),
			 s->nwriters, s->nreaders, s->gp == GP_ASYNC ? "-a" : "", s->gp == GP_ASYNC ? s->async_max : 0,
			 s->writer_holdoff_us ? "-h" : "", s->writer_holdoff_us,
			 s->minruntime_s ? "-m" : "", s->minruntime_s, s->emulator_apart ? "-ea" : "", kc, s->boot_params[0] ? "/" : "", s->boot_params);
}

/* rcuscale's module-parameter prefix in the run's kernel ("rcuperf" before 5.11) */
static const char *param_prefix(const struct run_spec *s)
{
	return s->kernel && s->kernel->param_prefix[0] ? s->kernel->param_prefix : "rcuscale";
}

int run_cmdline(const struct run_spec *s, char *out, unsigned cap)
{
	const char *p = param_prefix(s);
	struct buf b = { 0 };
	int ret;

	/* boot-only guests: rcuscale waits an hour and never starts */
	buf_printf(&b, "console=ttyS0 panic=-1 %s.gp_exp=%d %s.holdoff=%d %s.nreaders=%d", p,
		   s->gp == GP_EXPEDITED, p, s->kind == RUN_BOOT ? 3600 : run_holdoff_s(s), p, s->nreaders);
	/* probe boots time the probe's calls alone: no rcuscale writers */
	if (s->kind == RUN_PROBE)
		buf_printf(&b, " %s.nwriters=0", p);
	else if (s->nwriters >= 0)
		buf_printf(&b, " %s.nwriters=%d", p, s->nwriters);
	if (s->writer_holdoff_us > 0)
		buf_printf(&b, " %s.writer_holdoff=%d", p, s->writer_holdoff_us);
	if (s->minruntime_s > 0 && s->kind == RUN_RCUSCALE)
		buf_printf(&b, " %s.minruntime=%d", p, s->minruntime_s);
	if (scale_type(s))
		buf_printf(&b, " %s.scale_type=%s", p, scale_type(s));
	if (s->kind == RUN_RCUSCALE && s->gp == GP_ASYNC)
		buf_printf(&b, " %s.gp_async=1 %s.gp_async_max=%d", p, p, s->async_max);
	if (s->kind == RUN_BOOT) {
		buf_printf(&b, " %s.shutdown=0 rcuwb_poweroff", p);
	} else if (s->kind == RUN_PROBE) {
		/* the probe powers the guest off; rcuscale is built in but idle */
		buf_printf(&b, " %s.shutdown=0 midboot.stages=%s midboot.watchdog_s=%d midboot.shutdown=1",
			   p, s->probe_stages, s->probe_watchdog_s);
		if (s->probe_calls > 1)
			buf_printf(&b, " midboot.calls=%d", s->probe_calls);
		if (s->probe_prims[0])
			buf_printf(&b, " midboot.prims=%s", s->probe_prims);
	} else {
		buf_printf(&b, " %s.shutdown=1", p);
	}
	if (s->kernel && s->kernel->scenario_boot[0])
		buf_printf(&b, " %s", s->kernel->scenario_boot);
	if (s->boot_params[0])
		buf_printf(&b, " %s", s->boot_params);
	if (!b.data)
		return set_err("out of memory");
	ret = b.len < cap ? 0 : set_err("kernel command line longer than %u bytes", cap - 1);
	if (!ret)
		memcpy(out, b.data, b.len + 1);
	buf_free(&b);
	return ret;
}

const char *run_early_verdict(const struct run_spec *s, const struct console *c)
{
	if (console_deadlocks(c, NULL))
		return "mid-boot probe: a grace period that can never complete";
	if (s->kind == RUN_RCUSCALE && c->aborted && !c->nsamples)
		return "rcuscale aborted";
	if (c->bad_count[BAD_PANIC])
		return "kernel panic";
	if (c->bytes > CONSOLE_MAX_BYTES)
		return "console flood";
	return NULL;
}

/* The guest's own view of its CPUs and nodes must be what was asked. */
static bool topology_mismatch(const struct run_spec *s, const struct console *c, char *why, size_t cap)
{
	unsigned want_nodes = s->topo.nnodes ? s->topo.nnodes : 1;

	if (c->smp_cpus < 0)
		return false;	/* never got that far: classified otherwise */
	if ((unsigned)c->smp_cpus != s->topo.vcpus || (unsigned)c->smp_nodes != want_nodes) {
		snprintf(why, cap, "asked for %u vCPUs on %u nodes, guest brought up %d CPUs on %d nodes",
			 s->topo.vcpus, want_nodes, c->smp_cpus, c->smp_nodes);
		return true;
	}
	return false;
}

static void set_result(struct run_result *r, enum outcome o, const char *detail)
{
	r->outcome = o;
	snprintf(r->detail, sizeof(r->detail), "%s", detail ? detail : "");
}

void run_classify(const struct run_spec *s, const struct console *c, enum guest_end end,
		  const char *end_detail, struct run_result *r)
{
	const struct probe_result *hung = NULL;
	char why[256];

	if (end == END_START_FAILED)
		return set_result(r, OUT_QEMU_FAILED, end_detail);
	/*
	 * A guest that printed "reboot: Power down" had finished: how QEMU
	 * went after that (killed, or ended while libvirtd was away, or not
	 * before the deadline) says nothing about the kernel.
	 */
	if (c->power_down && (end == END_HOST_FAILED || end == END_TIMEOUT))
		end = END_SHUTDOWN;
	if (console_deadlocks(c, &hung)) {
		snprintf(why, sizeof(why), "stage %d (%s) %s did not return: %s", hung->stage,
			 hung->point, hung->prim, hung->evidence_text);
		return set_result(r, OUT_DEADLOCK, why);
	}
	if (console_hung(c, &hung) && end == END_TIMEOUT) {
		snprintf(why, sizeof(why), "stage %d (%s) %s did not return within the run's %d s timeout",
			 hung->stage, hung->point, hung->prim, s->timeout_s);
		return set_result(r, OUT_DEADLOCK, why);
	}
	if (c->bad_count[BAD_PANIC] || c->bad_count[BAD_OOPS] || c->bad_count[BAD_BUG])
		return set_result(r, OUT_CRASH, c->first_bad);
	if (c->bytes > CONSOLE_MAX_BYTES) {
		snprintf(why, sizeof(why), "console flood: the guest wrote more than %llu KiB to its console",
			 CONSOLE_MAX_BYTES >> 10);
		return set_result(r, OUT_BADNESS, why);
	}
	if (end == END_INTERRUPTED)
		return set_result(r, OUT_INTERRUPTED, end_detail);
	/* no panic on the console: the host took the guest away, the kernel said nothing */
	if (end == END_HOST_FAILED)
		return set_result(r, OUT_HOST_FAILED, end_detail);
	if (s->kind == RUN_RCUSCALE && c->aborted && !c->nsamples)
		return set_result(r, OUT_RCUSCALE_ABORTED, c->abort_msg);
	if (topology_mismatch(s, c, why, sizeof(why)))
		return set_result(r, OUT_TOPOLOGY_MISMATCH, why);
	if (end == END_TIMEOUT)
		return set_result(r, OUT_TIMEOUT, end_detail);
	if (end == END_CRASHED)
		return set_result(r, OUT_CRASH, end_detail);
	if (c->bad_count[BAD_STALL] || c->bad_count[BAD_WARNING])
		return set_result(r, OUT_BADNESS, c->first_bad);
	if (s->kind == RUN_RCUSCALE && c->nerrors)
		return set_result(r, OUT_RCUSCALE_ERROR, c->first_error);
	if (s->kind == RUN_RCUSCALE && (!c->have_summary || !c->nsamples))
		return set_result(r, OUT_CRASH, "guest stopped without rcuscale results");
	if (s->kind == RUN_BOOT && !c->init_up)
		return set_result(r, OUT_CRASH, "guest stopped before init started");
	if (s->kind == RUN_PROBE && !c->probe_done)
		return set_result(r, OUT_CRASH, "guest stopped before the probe finished");
	set_result(r, OUT_OK, NULL);
}
