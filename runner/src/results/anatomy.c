/* anatomy.c: each rcuscale writer call cut into the phases of its grace period, from RCU's trace events. */
#include "anatomy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const struct {
	const char *name;
	int mode;		/* 0 normal, 1 expedited, 2 both */
} phases[PH_NR] = {
	[PH_REQUEST] = { "request", 0 },	[PH_INIT] = { "init", 0 },
	[PH_QS] = { "qs", 0 },			[PH_CLEANUP] = { "cleanup", 0 },
	[PH_CALLBACK] = { "callback", 0 },	[PH_FUNNEL] = { "funnel", 1 },
	[PH_HANDOFF] = { "handoff", 1 },	[PH_RESET] = { "reset", 1 },
	[PH_SELECT] = { "select", 1 },		[PH_WAIT] = { "wait", 1 },
	[PH_WAKE] = { "wake", 1 },		[PH_PIGGYBACK] = { "piggyback", 1 },
	[PH_RETURN] = { "return", 2 },
};

const char *anat_phase_name(enum anat_phase p)
{
	return p < PH_NR ? phases[p].name : "?";
}

bool anat_phase_of(enum anat_phase p, bool expedited)
{
	return p < PH_NR && (phases[p].mode == 2 || phases[p].mode == (int)expedited);
}

/* rcuscale's writers (one per vCPU at most, 64 here) and the calls each made so far */
#define ANAT_MAX_WRITERS 128
struct writer_count {
	int pid;
	bool exp;
	int calls;
};

void anatomy_free(struct anatomy *a)
{
	free(a->calls);
	memset(a, 0, sizeof(*a));
}

/* rcuscale's writer threads ("rcu_scale_writer", "rcu_perf_writer" before 5.11), as the dump cuts comm to 8 */
static bool is_writer(const struct tevent *e)
{
	return !strncmp(e->comm, "rcu_scal", 8) || !strncmp(e->comm, "rcu_perf", 8);
}

static bool is(const struct tevent *e, enum tev_kind k, const char *what)
{
	return e->kind == k && (!what || !strcmp(e->what, what));
}

/* The first event from index i on of kind k (and what, and seq when >= 0), or t->n. */
static size_t next_ev(const struct trace *t, size_t i, enum tev_kind k, const char *what, long seq)
{
	for (; i < t->n; i++)
		if (is(&t->ev[i], k, what) && (seq < 0 || t->ev[i].seq == seq))
			return i;
	return t->n;
}

/* The writer's next request after index i: its next call_rcu() or expedited snapshot. */
static size_t next_request(const struct trace *t, size_t i, int pid, bool exp)
{
	for (i++; i < t->n; i++) {
		const struct tevent *e = &t->ev[i];

		if (e->pid == pid && is_writer(e) &&
		    (exp ? is(e, TEV_EXP, "snap") : e->kind == TEV_CALLBACK))
			return i;
	}
	return t->n;
}

static struct anat_call *new_call(struct anatomy *a, const struct tevent *req, bool exp)
{
	struct anat_call *c;
	int p;

	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 256;

		c = realloc(a->calls, cap * sizeof(*c));
		if (!c) {
			set_err("out of memory");
			return NULL;
		}
		a->calls = c;
		a->cap = cap;
	}
	c = &a->calls[a->n];
	memset(c, 0, sizeof(*c));
	c->expedited = exp;
	c->pid = req->pid;
	c->gp_seq = req->seq;
	c->t_us = req->us;
	c->last_cpu = -1;
	for (p = 0; p < PH_NR; p++)
		c->phase_us[p] = NAN;
	return c;
}

/* Phases between boundaries b[0..n-1] (times in order); false if one is missing or out of order. */
static bool cut(struct anat_call *c, const double *b, const enum anat_phase *ph, int n)
{
	int i;

	for (i = 0; i + 1 < n; i++)
		if (isnan(b[i]) || isnan(b[i + 1]) || b[i + 1] < b[i])
			return false;
	for (i = 0; i + 1 < n; i++)
		c->phase_us[ph[i]] = b[i + 1] - b[i];
	c->total_us = b[n - 1] - b[0];
	return true;
}

static double at(const struct trace *t, size_t i)
{
	return i < t->n ? t->ev[i].us : NAN;
}

/* The last quiescent-state report of GP seq before index end, at the deepest level: its time and CPU. */
static double last_report(const struct trace *t, size_t from, size_t end, long seq, int *cpu)
{
	double when = NAN;
	int level = -1;
	size_t i;

	*cpu = -1;
	for (i = from; i < end; i++) {
		const struct tevent *e = &t->ev[i];

		if (e->kind != TEV_QS_REPORT || e->seq != seq)
			continue;
		when = e->us;
		if (e->level >= level && e->mask) {
			level = e->level;
			*cpu = e->grplo + __builtin_ctzl(e->mask);
		}
	}
	return when;
}

/* A writer's normal GP: call_rcu() at index r (its callback invoked as rhp). */
static int normal_call(const struct trace *t, size_t r, struct anatomy *a)
{
	const struct tevent *req = &t->ev[r];
	static const enum anat_phase ph[] = { PH_REQUEST, PH_INIT, PH_QS, PH_CLEANUP, PH_CALLBACK };
	size_t start = next_ev(t, r + 1, TEV_GP, "start", -1), wait, end, inv, i;
	struct anat_call *c = new_call(a, req, false);
	double b[6];
	long seq;

	if (!c)
		return -1;
	if (start == t->n) {
		a->skipped++;
		return 0;
	}
	seq = t->ev[start].seq;
	c->gp_seq = seq;
	wait = next_ev(t, start + 1, TEV_GP, "fqswait", seq);
	end = next_ev(t, start + 1, TEV_GP, "end", seq);
	/* callbacks are invoked on the CPU that queued them (no offloading in these kernels) */
	for (inv = r + 1; inv < t->n; inv++)
		if (t->ev[inv].kind == TEV_INVOKE && t->ev[inv].cpu == req->cpu && !strcmp(t->ev[inv].rhp, req->rhp))
			break;
	for (i = start; i < end; i++)
		c->fqs_scans += is(&t->ev[i], TEV_GP, "fqsstart") && t->ev[i].seq == seq;
	b[0] = req->us;
	b[1] = at(t, start);
	b[2] = fmax(b[1], at(t, wait));
	b[3] = fmax(b[2], last_report(t, start, end, seq, &c->last_cpu));
	b[4] = at(t, end);
	b[5] = at(t, inv);
	if (!cut(c, b, ph, 6)) {
		a->skipped++;
		return 0;
	}
	a->n++;
	return 0;
}

/* A writer's expedited GP: its snapshot at index r. */
static int exp_call(const struct trace *t, size_t r, struct anatomy *a)
{
	const struct tevent *req = &t->ev[r];
	static const enum anat_phase own[] = { PH_FUNNEL, PH_HANDOFF, PH_RESET, PH_SELECT, PH_WAIT, PH_WAKE };
	static const enum anat_phase pig[] = { PH_PIGGYBACK };
	/*
	 * "endwake" is no boundary: the requester, woken by the wake-up it
	 * marks the end of, often runs (and traces "done") before it.
	 */
	static const char *const steps[] = { "start", "reset", "select", "startwait", "end" };
	struct anat_call *c = new_call(a, req, true);
	size_t done = r + 1, i, k;
	double b[7];

	if (!c)
		return -1;
	while (done < t->n && !(t->ev[done].pid == req->pid && is(&t->ev[done], TEV_EXP, "done")))
		done++;
	for (i = r + 1; i < done && !(t->ev[i].pid == req->pid && is(&t->ev[i], TEV_EXP, "start")); i++)
		;
	c->own = i < done;
	b[0] = req->us;
	if (!c->own) {
		b[1] = at(t, done);
		if (!cut(c, b, pig, 2)) {
			a->skipped++;
			return 0;
		}
		a->n++;
		return 0;
	}
	for (k = 0; k < ARRAY_SIZE(steps); k++) {
		i = k ? next_ev(t, i + 1, TEV_EXP, steps[k], -1) : i;
		b[k + 1] = i < done ? t->ev[i].us : NAN;
		if (k == 1 && i < done)
			snprintf(c->driver, sizeof(c->driver), "%s", t->ev[i].comm);
	}
	b[6] = at(t, done);
	if (!cut(c, b, own, 7)) {
		a->skipped++;
		return 0;
	}
	a->n++;
	return 0;
}

/* The next number of a call of writer pid in mode exp (the writers' counts in w[], *nw of them). */
static int call_number(struct writer_count *w, size_t *nw, int pid, bool exp)
{
	size_t i;

	for (i = 0; i < *nw && (w[i].pid != pid || w[i].exp != exp); i++)
		;
	if (i == *nw) {
		if (*nw == ANAT_MAX_WRITERS)
			return -1;
		w[(*nw)++] = (struct writer_count){ .pid = pid, .exp = exp };
	}
	return w[i].calls++;
}

int anatomy_build(const struct trace *t, struct anatomy *a)
{
	struct writer_count w[ANAT_MAX_WRITERS];
	size_t r, nw = 0;

	memset(a, 0, sizeof(*a));
	for (r = 0; r < t->n; r++) {
		const struct tevent *e = &t->ev[r];
		bool exp = is(e, TEV_EXP, "snap");
		size_t before = a->n, next;
		struct anat_call *c;

		if (!is_writer(e) || !(exp || e->kind == TEV_CALLBACK))
			continue;
		if ((exp ? exp_call(t, r, a) : normal_call(t, r, a)) < 0)
			return -1;
		if (a->n == before)
			continue;
		c = &a->calls[before];
		c->call = call_number(w, &nw, e->pid, exp);
		/* the return: from the call's end to the writer's next request */
		next = next_request(t, r, e->pid, exp);
		if (next < t->n && t->ev[next].us >= c->t_us + c->total_us)
			c->phase_us[PH_RETURN] = t->ev[next].us - (c->t_us + c->total_us);
	}
	return 0;
}
