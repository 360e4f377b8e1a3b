/*
 * dispatch.c: the runner's main loop over hosts.
 *
 * The unit of design is the block: every kernel variant of one cell and
 * repetition, run back to back (or side by side where they fit) on one
 * host, so that whatever differs between hosts lands on both sides of each
 * comparison.  Hosts pull blocks in the matrix's seeded order as they have
 * room: capacity decides the spread, nothing is assigned in advance.
 */
#define _GNU_SOURCE
#include "dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "evloop.h"
#include "runline.h"

enum { RS_PENDING, RS_RUNNING, RS_DONE };

struct dispatch_slot {
	struct job job;
	struct placement place;
	size_t run;
};

/* A live line on a terminal: done/total, failures, elapsed, ETA from measured runs. */
static void progress(const struct dispatch *d)
{
	int el = (int)(now_s() - d->t0), total = (int)d->n + d->requeued;
	int eta = d->done ? el * (total - d->done) / d->done : 0;

	if (quiet || json_output || !isatty(2))
		return;
	fprintf(stderr, "\r\033[K[%d/%d] %d not ok, %d:%02d elapsed, ETA %d:%02d", d->done, total, d->failed,
		el / 60, el % 60, eta / 60, eta % 60);
}

void dispatch_clear_progress(void)
{
	if (!quiet && !json_output && isatty(2))
		fprintf(stderr, "\r\033[K");
}

static int host_cap(const struct dispatch *d, const struct vmhost *h)
{
	return d->jobs ? d->jobs : (int)h->pl.npus;
}

static bool same_block(const struct planned_run *a, const struct planned_run *b)
{
	return a->rep == b->rep && !strcmp(a->cell, b->cell);
}

/* The next run of host h: one of its block, else the first free block, claimed whole. */
static long next_run(struct dispatch *d, int h)
{
	size_t i, k;

	for (i = 0; i < d->n; i++)
		if (d->owner[i] == h && d->state[i] == RS_PENDING)
			return (long)i;
	for (i = 0; i < d->n; i++)
		if (d->owner[i] < 0 && d->state[i] == RS_PENDING)
			break;
	if (i == d->n)
		return -1;
	for (k = i; k < d->n; k++)
		if (d->owner[k] < 0 && d->state[k] == RS_PENDING && same_block(&d->runs[i], &d->runs[k]))
			d->owner[k] = h;
	return (long)i;
}

/*
 * A host gone for good (lost longer than its reconnect time, or left out)
 * gives its pending runs back.  One that is only reconnecting keeps its
 * blocks: they wait for it, so that a short outage does not split a block
 * over two hosts.
 */
static void release_down(struct dispatch *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		int h = d->owner[i];

		if (h >= 0 && d->state[i] == RS_PENDING && d->sess->hosts[h].hv.gone)
			d->owner[i] = -1;
	}
}

static int add_active(struct dispatch *d, struct dispatch_slot *s)
{
	if (d->nactive == d->cap) {
		int cap = d->cap ? 2 * d->cap : 8;
		struct dispatch_slot **a = realloc(d->active, (size_t)cap * sizeof(*a));

		if (!a)
			return set_err("out of memory");
		d->active = a;
		d->cap = cap;
	}
	d->active[d->nactive++] = s;
	return 0;
}

/* 0 started (or failed to start, stored later), 1 no room now, -1 error. */
static int start_one(struct dispatch *d, struct vmhost *h, size_t i)
{
	const struct planned_run *p = &d->runs[i];
	struct dispatch_slot *s = calloc(1, sizeof(*s));
	int placed;

	if (!s)
		return set_err("out of memory");
	placed = place_take(&h->pl, d->m->topos[p->topo].vcpus, &s->place);
	if (placed != 0) {
		free(s);
		return placed;
	}
	s->run = i;
	matrix_spec(d->m, p, &s->job.spec);
	s->job.spec.kernel = &d->kernels[p->variant * d->m->nkconfigs + p->kconfig];
	s->job.host = h;
	s->job.place = &s->place;
	s->job.env.seed = d->m->seed;
	if (add_active(d, s) < 0) {
		place_release(&h->pl, &s->place);
		free(s);
		return -1;
	}
	d->state[i] = RS_RUNNING;
	d->host_running[h->idx]++;
	if (job_start(d->sess, &s->job) < 0 && s->job.guest.end != END_START_FAILED &&
	    !s->job.guest.lost_with_conn) {
		bool host_went = !vmhost_usable(h);

		d->nactive--;
		d->state[i] = RS_PENDING;
		d->host_running[h->idx]--;
		place_release(&h->pl, &s->place);
		job_free(&s->job);
		free(s);
		/* the host went away before the guest existed (e.g. in the upload): nothing to store */
		if (host_went && d->fleet) {
			dispatch_clear_progress();
			info("rcuwb: host %s went away while a run was being started: %s\n", h->info.name, last_err());
			return 1;
		}
		return -1;
	}
	return 0;
}

/* Start what fits on every usable host; whether anything started. */
static int fill_hosts(struct dispatch *d, bool *started)
{
	int hi;

	*started = false;
	for (hi = 0; hi < d->sess->nhosts && !d->errors; hi++) {
		struct vmhost *h = &d->sess->hosts[hi];

		while (vmhost_usable(h) && d->host_running[hi] < host_cap(d, h)) {
			long i = next_run(d, hi);
			int r;

			if (i < 0)
				break;
			r = start_one(d, h, (size_t)i);
			if (r < 0)
				return -1;
			if (r > 0)
				break;
			*started = true;
		}
	}
	return 0;
}

/* A run lost with its host's connection goes again, elsewhere. */
static bool lost_with_host(const struct dispatch *d, const struct dispatch_slot *s)
{
	return d->fleet && s->job.result.outcome == OUT_HOST_FAILED && s->job.guest.lost_with_conn;
}

static void reap(struct dispatch *d)
{
	int k = 0, i;

	for (i = 0; i < d->nactive; i++) {
		struct dispatch_slot *s = d->active[i];
		struct vmhost *h = s->job.host;

		if (s->job.guest.running) {
			d->active[k++] = s;
			continue;
		}
		if (job_finish(d->sess, &s->job) < 0) {
			dispatch_clear_progress();
			info("rcuwb: %s\n", last_err());
			d->errors++;
		}
		place_release(&h->pl, &s->place);
		d->host_running[h->idx]--;
		d->done++;
		if (s->job.result.outcome != OUT_OK)
			d->failed++;
		if (lost_with_host(d, s)) {
			/* again in its block, on its host once back; elsewhere if it is gone for good */
			d->state[s->run] = RS_PENDING;
			d->owner[s->run] = h->hv.gone ? -1 : h->idx;
			d->requeued++;
		} else {
			d->state[s->run] = RS_DONE;
		}
		dispatch_clear_progress();
		runline_print(&s->job, d->done, (int)d->n + d->requeued);
		if (d->state[s->run] == RS_PENDING)
			info("rcuwb: run %lld went down with host %s: it runs again\n",
			     (long long)s->job.id, h->info.name);
		progress(d);
		job_free(&s->job);
		free(s);
	}
	d->nactive = k;
}

static bool all_done(const struct dispatch *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->state[i] != RS_DONE)
			return false;
	return true;
}

/* Hosts that came up (again, or for the first time) get set up. */
static void join_hosts(struct dispatch *d)
{
	int i;

	for (i = 0; i < d->sess->nhosts; i++) {
		struct vmhost *h = &d->sess->hosts[i];

		if (h->ready || !h->hv.conn || h->hv.lost || h->hv.gone || h->hv.interrupted)
			continue;
		if (session_host_ready(d->sess, h, &d->kernels[0], d->accel, d->locks) < 0) {
			info("rcuwb: %s: left out of this matrix\n", last_err());
			h->hv.gone = true;
		}
	}
}

/* The longest reconnect window of the hosts: how long the runner waits with every host down. */
static int longest_reconnect(const struct dispatch *d)
{
	int i, s = 0;

	for (i = 0; i < d->sess->nhosts; i++)
		if (d->sess->hosts[i].hv.reconnect_s > s)
			s = d->sess->hosts[i].hv.reconnect_s;
	return s;
}

/* Nothing runs and nothing started: hosts down, or PUs held by another runner. */
static int idle_wait(struct dispatch *d, bool *told)
{
	struct vmhost *any = NULL;
	int i;

	for (i = 0; i < d->sess->nhosts; i++)
		if (vmhost_usable(&d->sess->hosts[i]))
			any = &d->sess->hosts[i];
	if (!any) {
		if (!d->down_since)
			d->down_since = now_s();
		if (!d->fleet && d->sess->hosts[0].hv.gone)
			return set_err("libvirt at %s did not come back within %d s: %d of %zu runs stored; "
				       "continue with: rcuwb run --resume", d->sess->hosts[0].hv.uri,
				       d->sess->hosts[0].hv.reconnect_s, d->done, d->n);
		if (now_s() - d->down_since > longest_reconnect(d))
			return set_err("no host came back within %d s: %d runs stored, %zu planned; "
				       "continue with: rcuwb run --resume", longest_reconnect(d), d->done, d->n);
		return evloop_sleep(&d->sess->hosts[0].hv, 500);
	}
	d->down_since = 0;
	for (i = 0; i < d->sess->nhosts && !*told; i++)
		if (d->sess->hosts[i].hv.lost) {
			info("rcuwb: waiting for host %s to come back: its blocks wait up to %d s for it\n",
			     d->sess->hosts[i].info.name, d->sess->hosts[i].hv.reconnect_s);
			*told = true;
		}
	if (!*told && any->pl.locks)
		info("rcuwb: waiting for host PUs that another rcuwb process holds (%s)\n", any->pl.locks->dir);
	*told = true;
	/* 300-700 ms, differing between runners, so that two never retry in step */
	return evloop_sleep(&any->hv, 300 + (int)((unsigned)getpid() * 7919u % 400u));
}

int dispatch_run(struct dispatch *d)
{
	bool told = false;

	d->state = calloc(d->n ? d->n : 1, sizeof(*d->state));
	d->owner = malloc((d->n ? d->n : 1) * sizeof(*d->owner));
	d->host_running = calloc((size_t)d->sess->nhosts, sizeof(*d->host_running));
	if (!d->state || !d->owner || !d->host_running)
		return set_err("out of memory");
	for (size_t i = 0; i < d->n; i++)
		d->owner[i] = -1;
	d->t0 = now_s();
	while (!session_interrupted(d->sess)) {
		bool started;

		join_hosts(d);
		release_down(d);
		if (fill_hosts(d, &started) < 0)
			return -1;
		if (started)
			continue;	/* start as many as fit before sleeping */
		reap(d);	/* guests that ended while starting others, or at once */
		if (!d->nactive && (all_done(d) || d->errors))
			break;
		if (d->nactive) {
			if (evloop_iterate() < 0)
				return -1;
			reap(d);
		} else if (idle_wait(d, &told) < 0) {
			return -1;
		}
	}
	/* interrupted: what runs on a host that is away cannot be stopped now */
	for (int i = 0; i < d->sess->nhosts; i++)
		hv_abandon(&d->sess->hosts[i].hv, "runner interrupted while libvirt was away");
	reap(d);
	return 0;
}

void dispatch_free(struct dispatch *d)
{
	free(d->state);
	free(d->owner);
	free(d->host_running);
	free(d->active);
	d->state = NULL;
	d->owner = d->host_running = NULL;
	d->active = NULL;
}
