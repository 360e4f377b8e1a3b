/*
 * hostload.c: how much host CPU other work took while a run was going.
 *
 * Guests under TCG, and oversubscribed guests under any accelerator, measure
 * the host's scheduler along with the kernel: anything else runnable on the
 * host moves their grace-period latencies.  Around every run the runner
 * takes two snapshots of the CPU time of all processes that are not its own
 * and stores the difference with the run, so that reports and gates can
 * leave disturbed runs out and --resume can repeat them.
 *
 * Sums of per-process times rather than /proc/stat: the host-wide counters
 * cannot tell rcuwb's own QEMUs from anything else, and a QEMU that exits
 * within the run is gone before the second snapshot.
 */
#define _GNU_SOURCE
#include "hostload.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define PF_KTHREAD 0x00200000u

struct stat_fields {
	char comm[32];
	unsigned flags;
	unsigned long long utime, stime, cutime, cstime, start;
};

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* /proc/PID/stat: the command sits in parentheses and may hold any byte. */
static int parse_stat(const char *text, struct stat_fields *f)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	long long cutime, cstime;
	size_t len;

	if (!open || !close || close < open)
		return -1;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(f->comm))
		len = sizeof(f->comm) - 1;
	memcpy(f->comm, open + 1, len);
	f->comm[len] = '\0';
	if (sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %llu %llu %lld %lld"
		   " %*d %*d %*d %*d %llu", &f->flags, &f->utime, &f->stime, &cutime, &cstime,
		   &f->start) != 6)
		return -1;
	f->cutime = cutime > 0 ? (unsigned long long)cutime : 0;
	f->cstime = cstime > 0 ? (unsigned long long)cstime : 0;
	return 0;
}

/*
 * Is this QEMU one of ours: an argument "guest=rcuwb-...TAG..."?  A QEMU
 * that has exited but is not yet reaped (a zombie: pid 1 reaps daemonized
 * QEMUs in its own time, seconds later here) has no command line left to
 * tell, and one reaped since its stat was read has none at all; either is
 * taken for ours, as the QEMU that just ended beside a run almost always is.
 * (Counting it made 6 of 339 1-vCPU runs, which run two at a time, look
 * host-busy.)
 */
static bool our_qemu(const char *proc_root, int pid, const char *tag)
{
	char path[320], args[8192];
	ssize_t n;
	char *p;

	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, pid);
	n = read_small(path, args, sizeof(args));
	if (n <= 0)
		return true;
	for (p = args; n > 0 && p < args + n; p += strlen(p) + 1)
		if (!strncmp(p, "guest=rcuwb-", 12) && strstr(p, tag))
			return true;
	return false;
}

static bool ours(const char *proc_root, int pid, int self, const char *tag, const struct stat_fields *f)
{
	if (pid == self || (f->flags & PF_KTHREAD))
		return true;
	if (!strcmp(f->comm, "libvirtd") || !strcmp(f->comm, "virtlogd"))
		return true;
	return !strncmp(f->comm, "qemu", 4) && our_qemu(proc_root, pid, tag);
}

static int cmp_pid(const void *a, const void *b)
{
	const struct proc_cpu *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int add_proc(struct load_snap *s, size_t *cap, const struct proc_cpu *p)
{
	if (s->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct proc_cpu *np = realloc(s->procs, ncap * sizeof(*np));

		if (!np)
			return set_err("out of memory");
		s->procs = np;
		*cap = ncap;
	}
	s->procs[s->n++] = *p;
	return 0;
}

int load_snapshot(const char *proc_root, int self, const char *tag, struct load_snap *s)
{
	DIR *d = opendir(proc_root);
	struct dirent *e;
	size_t cap = 0;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	if (!d)
		return set_err("cannot read %s", proc_root);
	while (ret == 0 && (e = readdir(d))) {
		char path[320], text[1024];
		struct stat_fields f;
		struct proc_cpu p;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		p.pid = atoi(e->d_name);
		snprintf(path, sizeof(path), "%s/%s/stat", proc_root, e->d_name);
		/* a process may exit between readdir and open: skip it */
		if (read_small(path, text, sizeof(text)) <= 0 || parse_stat(text, &f) < 0 ||
		    ours(proc_root, p.pid, self, tag, &f))
			continue;
		p.start = f.start;
		p.ticks = f.utime + f.stime + (p.pid == 1 ? 0 : f.cutime + f.cstime);
		ret = add_proc(s, &cap, &p);
	}
	closedir(d);
	if (ret < 0) {
		load_snap_free(s);
		return -1;
	}
	qsort(s->procs, s->n, sizeof(*s->procs), cmp_pid);
	s->t = now_s();
	return 0;
}

double load_other_cpu_s(const struct load_snap *a, const struct load_snap *b, long ticks_per_s)
{
	unsigned long long ticks = 0;
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct proc_cpu *p = &b->procs[i];
		const struct proc_cpu *q = bsearch(p, a->procs, a->n, sizeof(*p), cmp_pid);

		if (q && q->start == p->start)
			ticks += p->ticks > q->ticks ? p->ticks - q->ticks : 0;
		else
			ticks += p->ticks;	/* started during the run */
	}
	return (double)ticks / (double)(ticks_per_s > 0 ? ticks_per_s : 100);
}

void load_snap_free(struct load_snap *s)
{
	free(s->procs);
	s->procs = NULL;
	s->n = 0;
	s->t = 0;
}

double load_other_pus(const struct load_snap *a, const struct load_snap *b)
{
	double wall = b->t - a->t;

	if (a->t <= 0 || b->t <= 0 || wall <= 0)
		return -1;
	return load_other_cpu_s(a, b, sysconf(_SC_CLK_TCK)) / wall;
}

bool load_is_busy(double other_pus, unsigned host_pus)
{
	return other_pus >= 0 && host_pus > 0 && other_pus > HOST_BUSY_SHARE * host_pus;
}
