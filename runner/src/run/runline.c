/* runline.c: the line a finished run gets (a JSON object with --json): outcome, latencies, host. */
#include "runline.h"

#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "common.h"
#include "gpstats.h"
#include "hostload.h"

void runline_print(const struct job *j, int idx, int total)
{
	const struct console *c = &j->con;
	double *us = gp_samples_us(c);
	struct gp_stats st;

	if (!us)
		return;
	gp_stats_compute(us, c->nsamples, &st);
	free(us);
	if (json_output) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "id", json_object_new_int64(j->id));
		json_object_object_add(o, "cell", json_object_new_string(j->env.cell));
		json_object_object_add(o, "variant", json_object_new_string(j->spec.kernel->variant));
		json_object_object_add(o, "outcome", json_object_new_string(outcome_name(j->result.outcome)));
		json_object_object_add(o, "detail", json_object_new_string(j->result.detail));
		json_object_object_add(o, "samples", json_object_new_int64((int64_t)st.n));
		if (st.n) {
			json_object_object_add(o, "p50_us", json_object_new_double(st.p50));
			json_object_object_add(o, "p90_us", json_object_new_double(st.p90));
			json_object_object_add(o, "p99_us", json_object_new_double(st.p99));
		}
		json_object_object_add(o, "accel", json_object_new_string(j->env.accel));
		json_object_object_add(o, "host", json_object_new_string(j->env.host));
		json_object_object_add(o, "wall_s", json_object_new_double(j->env.ended - j->env.started));
		json_object_object_add(o, "host_other_cpu", j->env.host_other >= 0 ?
				       json_object_new_double(j->env.host_other) : NULL);
		json_object_object_add(o, "host_busy",
				       json_object_new_boolean(load_is_busy(j->env.host_other, j->env.host_pus)));
		json_object_object_add(o, "run_dir", json_object_new_string(j->env.run_dir));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return;
	}
	info("[%d/%d] run %lld %s %s: %s", idx, total, (long long)j->id, j->spec.kernel->variant,
	     j->env.cell, outcome_name(j->result.outcome));
	if (j->result.detail[0])
		info(" (%s)", j->result.detail);
	if (st.n)
		info(", %zu samples, p50 %.0f us p90 %.0f us p99 %.0f us", st.n, st.p50, st.p90, st.p99);
	info(" [%s on %s, %.1f s]", j->env.accel, j->env.host, j->env.ended - j->env.started);
	if (load_is_busy(j->env.host_other, j->env.host_pus))
		info(" HOST BUSY: other processes used %.2f of %u PUs; not used by reports, "
		     "--resume repeats it", j->env.host_other, j->env.host_pus);
	info("\n");
}
