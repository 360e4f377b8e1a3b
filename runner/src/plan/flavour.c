/* flavour.c: rcuscale's scale types as rcuwb measures them (kernel/rcu/rcuscale.c, 6.1 and 6.12). */
#include "flavour.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "kernel.h"

/*
 * rcuscale's scale_ops[]: rcu, srcu, srcud always (RCU_SCALE_TEST selects
 * SRCU); tasks #ifdef CONFIG_TASKS_RCU, tasks-tracing #ifdef
 * CONFIG_TASKS_TRACE_RCU, and in 6.12 tasks-rude #ifdef
 * CONFIG_TASKS_RUDE_RCU (6.1's rcuscale has no tasks-rude ops).  The
 * Tasks flavours' .exp_sync is their .sync: synchronize_rcu_tasks(),
 * synchronize_rcu_tasks_trace(), synchronize_rcu_tasks_rude(); every
 * flavour has an .async (call_rcu() and its kin) but 6.12's tasks-rude
 * (call_rcu_tasks_rude() is gone there).
 */
static const struct flavour flavours[] = {
	{ "rcu", NULL, NULL, NULL },
	{ "srcu", NULL, NULL, NULL },
	{ "srcud", NULL, NULL, NULL },
	{ "tasks", "CONFIG_TASKS_RCU",
	  "rcuscale's expedited Tasks RCU GP is synchronize_rcu_tasks() itself", NULL },
	{ "tasks-tracing", "CONFIG_TASKS_TRACE_RCU",
	  "rcuscale's expedited Tasks Trace RCU GP is synchronize_rcu_tasks_trace() itself", NULL },
	{ "tasks-rude", "CONFIG_TASKS_RUDE_RCU",
	  "rcuscale's expedited Tasks Rude RCU GP is synchronize_rcu_tasks_rude() itself",
	  "6.12's rcuscale has no .async for Tasks Rude RCU: it would warn and time synchronous GPs" },
};

const char *flavour_lacks(const struct flavour *f, int mode)
{
	return mode == 1 ? f->no_expedited : mode == 2 ? f->no_async : NULL;
}

const struct flavour *flavour_find(const char *name)
{
	for (size_t i = 0; i < sizeof(flavours) / sizeof(flavours[0]); i++)
		if (!strcmp(flavours[i].name, name))
			return &flavours[i];
	return NULL;
}

const char *flavour_names(void)
{
	static char names[128];

	if (!names[0])
		for (size_t i = 0; i < sizeof(flavours) / sizeof(flavours[0]); i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
				 flavours[i].name);
	return names;
}

/* Linux major.minor of k as one number (6.12 -> 612), 0 when unknown. */
static int kernel_line(const struct kernel_build *k)
{
	int major = 0, minor = 0;

	if (sscanf(k->version, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

int flavour_async_runs(const struct kernel_build *k, const struct flavour *f, unsigned vcpus)
{
	/*
	 * 6.1's rcu_scale_writer() counts callbacks in flight in a per-CPU
	 * n_async_inflight: +1 on the writer's CPU, -1 on the CPU that invokes
	 * the callback.  Tree RCU invokes it where it was queued (no NOCB in
	 * rcuwb's scenarios); SRCU (a small srcu_struct queues on the boot
	 * CPU's srcu_data) and the Tasks flavours (their kthread) do not, so a
	 * writer on another CPU never sees its count drop and retries its
	 * barrier for ever (measured: 6.1 srcu, 2 vCPUs, writer 1 never done).
	 * 6.12 counts per writer (ws_inflight).
	 */
	if (vcpus > 1 && strcmp(f->name, "rcu") && kernel_line(k) < 612)
		return set_err("%s (%s): %s async on %u vCPUs: Linux %s's rcuscale counts callbacks in flight per CPU "
			       "and %s invokes them on another CPU than the writer's, whose count then never drops: "
			       "the writer hangs (kernel/rcu/rcuscale.c, rcu_scale_writer(); 6.12 counts per writer): "
			       "measure it on 1 vCPU, or on 6.12", k->variant, k->kconfig, f->name, vcpus, k->version,
			       f->name);
	return 0;
}

int flavour_offered(const struct kernel_build *k, const struct flavour *f)
{
	if (!strcmp(f->name, FLAVOUR_DEFAULT))
		return 0;
	if (strcmp(k->param_prefix, "rcuscale"))
		return set_err("%s (%s): flavour %s: Linux %s has rcuperf, whose perf_type rcuwb does not set: "
			       "only rcu", k->variant, k->kconfig, f->name, k->version);
	if (!strcmp(f->name, "tasks-rude") && kernel_line(k) < 612)
		return set_err("%s (%s): flavour tasks-rude: Linux %s's rcuscale has no tasks-rude "
			       "(6.12's has, 6.1's has not: kernel/rcu/rcuscale.c)", k->variant, k->kconfig, k->version);
	if (f->kconfig && !kernel_has_option(k, f->kconfig))
		return set_err("%s (%s): flavour %s needs %s=y, which this build lacks: build it in a Kconfig "
			       "scenario that forces it (kconfigs: [flavours])", k->variant, k->kconfig, f->name,
			       f->kconfig);
	return 0;
}
