/*
 * console.c: incremental parser of a guest's serial console.
 *
 * rcuscale's lines are read exactly as the kernel's own
 * tools/testing/selftests/rcutorture/bin/kvm-recheck-rcuscale.sh reads them,
 * so that rcuwb and that script agree on any log:
 *   sed -e 's/^\[[^]]*]//'            strip a leading "[ printk time ]"
 *   /-scale: .*writer-duration/       sample = field 5 (ns)
 *   /-scale: .* gps: .* batches:/     ngps = field 9
 * with awk's default field splitting (runs of blanks) and awk's conversion
 * of a field to a number (longest decimal prefix).  Lines are byte strings:
 * NUL bytes and CRs are kept as awk keeps them.
 */
#define _GNU_SOURCE
#include "console.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_FIELDS 12

struct fields {
	const char *p[MAX_FIELDS];
	size_t len[MAX_FIELDS];
	int n;			/* fields seen, may exceed MAX_FIELDS */
};

void console_init(struct console *c)
{
	memset(c, 0, sizeof(*c));
	c->smp_nodes = c->smp_cpus = -1;
	c->boot_time_s = -1;
	c->diag = -1;
	console_set_prefix(c, "rcu-scale");
}

void console_set_prefix(struct console *c, const char *prefix)
{
	const char *flag = strchr(prefix, '-');

	flag = flag ? flag : "-scale";
	snprintf(c->tag, sizeof(c->tag), "%.16s: ", flag);
	snprintf(c->errtag, sizeof(c->errtag), "%.16s:!!! ", flag);
}

void console_free(struct console *c)
{
	free(c->samples);
	free(c->probes);
	buf_free(&c->line);
	console_init(c);
}

const char *badness_name(enum badness_kind k)
{
	static const char *const names[BAD_NR] = {
		[BAD_WARNING] = "warning", [BAD_BUG] = "bug", [BAD_OOPS] = "oops",
		[BAD_PANIC] = "panic", [BAD_STALL] = "rcu-stall",
	};
	return k < BAD_NR ? names[k] : "?";
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n';
}

static void split_fields(const char *s, size_t len, struct fields *f)
{
	size_t i = 0;

	f->n = 0;
	while (i < len) {
		size_t start;

		while (i < len && is_blank(s[i]))
			i++;
		if (i >= len)
			break;
		start = i;
		while (i < len && !is_blank(s[i]))
			i++;
		if (f->n < MAX_FIELDS) {
			f->p[f->n] = s + start;
			f->len[f->n] = i - start;
		}
		f->n++;
	}
}

/* Field k (1-based, as awk's $k) or an empty field. */
static double field_num(const struct fields *f, int k)
{
	if (k > f->n || k > MAX_FIELDS)
		return 0;
	return awk_strtonum(f->p[k - 1], f->len[k - 1]);
}

double awk_strtonum(const char *s, size_t len)
{
	char tmp[64];
	size_t i = 0, n = 0;

	while (i < len && isspace((unsigned char)s[i]))
		i++;
	/* gawk: "+inf", "-nan" (sign required, nothing after); plain "inf" is 0 */
	if (len - i == 4 && (s[i] == '+' || s[i] == '-')) {
		if (!strncasecmp(s + i + 1, "inf", 3))
			return s[i] == '-' ? -INFINITY : INFINITY;
		if (!strncasecmp(s + i + 1, "nan", 3))
			return s[i] == '-' ? -NAN : NAN;
	}
	/* longest prefix [+-]digits[.digits][e[+-]digits]; no hex */
	if (i < len && (s[i] == '+' || s[i] == '-'))
		tmp[n++] = s[i++];
	while (i < len && isdigit((unsigned char)s[i]) && n < sizeof(tmp) - 8)
		tmp[n++] = s[i++];
	if (i < len && s[i] == '.') {
		tmp[n++] = s[i++];
		while (i < len && isdigit((unsigned char)s[i]) && n < sizeof(tmp) - 8)
			tmp[n++] = s[i++];
	}
	if (i + 1 < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1, e = n;

		tmp[e++] = 'e';
		if (j < len && (s[j] == '+' || s[j] == '-'))
			tmp[e++] = s[j++];
		if (j < len && isdigit((unsigned char)s[j])) {
			while (j < len && isdigit((unsigned char)s[j]) && e < sizeof(tmp) - 1)
				tmp[e++] = s[j++];
			n = e;
		}
	}
	tmp[n] = '\0';
	return strtod(tmp, NULL);
}

static const char *find(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle));
}

/* Copy at most cap-1 printable bytes (the log may hold anything). */
static void copy_text(char *dst, size_t cap, const char *s, size_t len)
{
	size_t n = 0;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	for (; len && n + 1 < cap; s++, len--)
		if (*s != '\r' && *s != '\n')
			dst[n++] = isprint((unsigned char)*s) ? *s : '?';
	dst[n] = '\0';
}

/*
 * A field's number as an integer: out-of-range values (a garbled console)
 * saturate and NaN is 0, where a plain conversion would be undefined.
 */
static long long to_ll(double v, long long lo, long long hi)
{
	if (v != v)
		return 0;
	if (v <= (double)lo)
		return lo;
	if (v >= (double)hi)
		return hi;
	return (long long)v;
}

static unsigned long long to_ull(double v)
{
	if (v != v || v <= 0)
		return 0;
	if (v >= 18446744073709549568.0)	/* the largest double below 2^64 */
		return ULLONG_MAX;
	return (unsigned long long)v;
}

static int add_sample(struct console *c, const struct fields *f)
{
	if (c->nsamples == c->cap_samples) {
		size_t cap = c->cap_samples ? 2 * c->cap_samples : 1024;
		struct gp_sample *s = realloc(c->samples, cap * sizeof(*s));

		if (!s)
			return set_err("out of memory");
		c->samples = s;
		c->cap_samples = cap;
	}
	c->samples[c->nsamples++] = (struct gp_sample){
		.writer = (int)to_ll(field_num(f, 2), INT_MIN, INT_MAX),
		.seq = (int)to_ll(field_num(f, 4), INT_MIN, INT_MAX),
		.ns = field_num(f, 5),
	};
	return 0;
}

static void parse_summary(struct console *c, const struct fields *f)
{
	c->have_summary = true;
	c->summary_gps = field_num(f, 9);
	c->start_ns = to_ull(field_num(f, 3));
	c->end_ns = to_ull(field_num(f, 5));
	c->duration_ns = to_ull(field_num(f, 7));
	c->gps = to_ll(field_num(f, 9), LLONG_MIN, LLONG_MAX);
	c->batches = to_ll(field_num(f, 11), LLONG_MIN, LLONG_MAX);
}

/* "key=value" anywhere after the probe tag, copied into out. */
static bool kv(const char *s, size_t len, const char *key, char *out, size_t cap)
{
	char pat[32];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = find(s, len, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (p < s + len && !is_blank(*p) && *p != '\r' && n + 1 < cap)
		out[n++] = *p++;
	out[n] = '\0';
	return true;
}

static struct probe_result *new_probe(struct console *c)
{
	if (c->nprobes == c->cap_probes) {
		size_t cap = c->cap_probes ? 2 * c->cap_probes : 16;
		struct probe_result *p = realloc(c->probes, cap * sizeof(*p));

		if (!p) {
			set_err("out of memory");
			return NULL;
		}
		c->probes = p;
		c->cap_probes = cap;
	}
	return &c->probes[c->nprobes++];
}

/* The HUNG entry a completion line belongs to, or NULL. */
static struct probe_result *hung_entry(struct console *c, const struct probe_result *r)
{
	size_t i;

	for (i = c->nprobes; i-- > 0;) {
		struct probe_result *p = &c->probes[i];

		if (p->hung && p->stage == r->stage && p->call == r->call && !strcmp(p->prim, r->prim))
			return p;
	}
	return NULL;
}

static int kv_int(const char *s, size_t len, const char *key, int dflt)
{
	char v[32];

	return kv(s, len, key, v, sizeof(v)) ? (int)to_ll((double)strtol(v, NULL, 10), INT_MIN, INT_MAX) : dflt;
}

/* "diag end": decide whether the hung call's deadlock is certain. */
static void end_diag(struct console *c)
{
	struct probe_result *p = &c->probes[c->diag];
	bool kthread = !strcmp(p->needs, "gp_kthread");
	/* "exp": an expedited GP; with no worker and work pending on rcu_gp_wq it was handed there */
	bool worker = (!strcmp(p->needs, "wq_worker") || !strcmp(p->needs, "exp")) && p->wq_pending;

	p->evidence = p->hung && p->caller_pid == 1 && p->stage <= 3 && p->missing == 1 &&
		      (kthread || worker);
	if (p->evidence)
		snprintf(p->evidence_text, sizeof(p->evidence_text),
			 "the boot task (pid 1) waits for %s, which does not exist and which only it would create",
			 kthread ? "RCU's grace-period kthread" :
				   "a workqueue worker to run the work pending on rcu_gp_wq");
	c->diag = -1;
	c->diag_wq = false;
}

/* A line of RCU's diagnostics after a HUNG line (not a probe line). */
static void parse_diag(struct console *c, const char *s, size_t len)
{
	const char *p;

	if ((p = find(s, len, "workqueue ")))
		c->diag_wq = find(p, len - (size_t)(p - s), "workqueue rcu_gp:") != NULL;
	else if (c->diag_wq && find(s, len, " pending:"))
		c->probes[c->diag].wq_pending = true;
}

static int parse_probe(struct console *c, const char *s, size_t len)
{
	struct probe_result r = { .ns = -1, .gp_exp = -1, .gp_normal = -1, .missing = -1, .caller_pid = -1 };
	struct probe_result *p;
	char v[32];

	if (find(s, len, " diag end")) {
		if (c->diag >= 0)
			end_diag(c);
		return 0;
	}
	if (find(s, len, " done")) {
		c->probe_done = true;
		return 0;
	}
	if (find(s, len, " state stage="))
		return 0;	/* the state at the start of a stage: in the log only */
	r.hung = find(s, len, " HUNG ") != NULL;
	if (!kv(s, len, "stage", v, sizeof(v)))
		return 0;	/* not one of ours: ignore */
	r.stage = (int)to_ll((double)strtol(v, NULL, 10), INT_MIN, INT_MAX);
	r.call = kv_int(s, len, "call", 1);
	kv(s, len, "point", r.point, sizeof(r.point));
	kv(s, len, "prim", r.prim, sizeof(r.prim));
	kv(s, len, "sched", r.sched, sizeof(r.sched));
	if (!r.hung && kv(s, len, "ns", v, sizeof(v)))
		r.ns = strtoll(v, NULL, 10);
	r.skipped = find(s, len, " skipped=") != NULL;
	r.gp_exp = kv_int(s, len, "gp_exp", -1);
	r.gp_normal = kv_int(s, len, "gp_normal", -1);
	if (r.hung) {
		kv(s, len, "needs", r.needs, sizeof(r.needs));
		r.missing = kv_int(s, len, "missing", -1);
		r.caller_pid = kv_int(s, len, "caller_pid", -1);
	} else if ((p = hung_entry(c, &r))) {
		/* returned after its watchdog fired: slow, not hung */
		p->hung = false;
		p->slow = true;
		p->evidence = false;
		p->ns = r.ns;
		p->gp_exp = r.gp_exp;
		p->gp_normal = r.gp_normal;
		snprintf(p->sched, sizeof(p->sched), "%s", r.sched);
		return 0;
	}
	if (!(p = new_probe(c)))
		return -1;
	*p = r;
	if (r.hung)
		c->diag = (long)(p - c->probes);
	return 0;
}

static void note_badness(struct console *c, enum badness_kind k, const char *s, size_t len)
{
	if (!c->bad_count[0] && !c->bad_count[1] && !c->bad_count[2] &&
	    !c->bad_count[3] && !c->bad_count[4])
		copy_text(c->first_bad, sizeof(c->first_bad), s, len);
	c->bad_count[k]++;
}

static void parse_guest_line(struct console *c, const char *raw, size_t rawlen,
			     const char *s, size_t len)
{
	const char *p;

	if ((p = find(s, len, "smp: Brought up "))) {
		char tmp[64];

		copy_text(tmp, sizeof(tmp), p, len - (size_t)(p - s));
		sscanf(tmp, "smp: Brought up %d node%*[s,] %d CPU", &c->smp_nodes, &c->smp_cpus);
	}
	if (find(s, len, "Run /init as init process") && raw[0] == '[')
		c->boot_time_s = awk_strtonum(raw + 1, rawlen - 1);
	if ((p = find(s, len, "rcuwb-init: up"))) {
		c->init_up = true;
		kv(p, len - (size_t)(p - s), "cpus", c->init_cpus, sizeof(c->init_cpus));
		kv(p, len - (size_t)(p - s), "nodes", c->init_nodes, sizeof(c->init_nodes));
	}
	if (find(s, len, "reboot: Power down"))
		c->power_down = true;
	if (find(s, len, "Kernel panic - not syncing"))
		note_badness(c, BAD_PANIC, s, len);
	else if (find(s, len, "Oops:") || find(s, len, "general protection fault"))
		note_badness(c, BAD_OOPS, s, len);
	else if (find(s, len, "BUG:") || find(s, len, "kernel BUG at"))
		note_badness(c, BAD_BUG, s, len);
	else if (find(s, len, "WARNING:"))
		note_badness(c, BAD_WARNING, s, len);
	else if (find(s, len, "detected stalls on CPUs/tasks") ||
		 find(s, len, "self-detected stall on CPU") ||
		 (find(s, len, "rcu_") && find(s, len, "kthread starved for")))
		note_badness(c, BAD_STALL, s, len);
}

static int parse_line(struct console *c, const char *raw, size_t rawlen)
{
	const char *s = raw, *p, *scale;
	size_t len = rawlen, taglen = strlen(c->tag), errlen = strlen(c->errtag);
	struct fields f;

	/* sed -e 's/^\[[^]]*]//' */
	if (len && s[0] == '[' && (p = memchr(s, ']', len))) {
		len -= (size_t)(p + 1 - s);
		s = p + 1;
	}
	scale = find(s, len, c->tag);
	if (scale) {
		size_t rest = len - (size_t)(scale - s) - taglen;
		const char *after = scale + taglen;

		if (find(after, rest, "writer-duration")) {
			split_fields(s, len, &f);
			if (add_sample(c, &f) < 0)
				return -1;
		}
		if ((p = find(after, rest, " gps: ")) &&
		    find(p + 6, rest - (size_t)(p + 6 - after), " batches:")) {
			split_fields(s, len, &f);
			parse_summary(c, &f);
		}
		if (find(after, rest, "Test complete"))
			c->test_complete = true;
	}
	/* SCALEOUT_ERRSTRING: "<type>-scale:!!! <message>" */
	if ((p = find(s, len, c->errtag))) {
		p += errlen;
		if (!c->nerrors++)
			copy_text(c->first_error, sizeof(c->first_error), p, len - (size_t)(p - s));
		/*
		 * At init (v4.10 and the midboot variant) this check aborts the
		 * test; after 9683937df9eb it runs at cleanup, after "Test
		 * complete", and only warns that the samples are not of the
		 * kind asked for.
		 */
		if (find(p, len - (size_t)(p - s), "All grace periods ") && !c->test_complete) {
			c->aborted = true;
			copy_text(c->abort_msg, sizeof(c->abort_msg), p, len - (size_t)(p - s));
		}
	}
	if ((p = find(s, len, "midboot-probe:"))) {
		if (parse_probe(c, p, len - (size_t)(p - s)) < 0)
			return -1;
	} else if (c->diag >= 0) {
		parse_diag(c, s, len);
	}
	parse_guest_line(c, raw, rawlen, s, len);
	return 0;
}

/*
 * A line longer than this is cut: nothing the parser reads is that long,
 * and a guest that prints without newlines must not grow the runner.
 */
#define CONSOLE_MAX_LINE 4096

int console_feed(struct console *c, const char *data, size_t len)
{
	c->bytes += len;
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;
		size_t room = c->line.len < CONSOLE_MAX_LINE ? CONSOLE_MAX_LINE - c->line.len : 0;

		if (buf_append(&c->line, data, n < room ? n : room) < 0)
			return -1;
		if (!nl)
			break;
		if (parse_line(c, c->line.data, c->line.len) < 0)
			return -1;
		c->line.len = 0;
		data += n + 1;
		len -= n + 1;
	}
	return 0;
}

int console_finish(struct console *c)
{
	int ret = 0;

	if (c->line.len)
		ret = parse_line(c, c->line.data, c->line.len);
	c->line.len = 0;
	return ret;
}

int console_parse_file(struct console *c, const char *path)
{
	struct buf b = { 0 };
	int ret = read_file(path, &b);

	if (ret == 0)
		ret = console_feed(c, b.data, b.len);
	buf_free(&b);
	return ret < 0 ? -1 : console_finish(c);
}

static size_t count_probes(const struct console *c, bool need_evidence,
			   const struct probe_result **first)
{
	size_t i, n = 0;

	for (i = 0; i < c->nprobes; i++)
		if (c->probes[i].hung && (!need_evidence || c->probes[i].evidence) &&
		    !n++ && first)
			*first = &c->probes[i];
	return n;
}

size_t console_hung(const struct console *c, const struct probe_result **first)
{
	return count_probes(c, false, first);
}

size_t console_deadlocks(const struct console *c, const struct probe_result **first)
{
	return count_probes(c, true, first);
}
