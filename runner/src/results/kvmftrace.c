/* kvmftrace.c: what the kernel's kvm-recheck-rcuscale-ftrace.sh prints for a console log, line for line. */
#include "kvmftrace.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "console.h"
#include "gpstats.h"

#define NF_MAX 16

/* One awk record: its fields split on blanks, as gawk's default FS does. */
struct rec {
	char *f[NF_MAX + 1];	/* f[1..nf]; "" beyond nf */
	int nf;
};

static const char *field(const struct rec *r, int k)
{
	return k <= r->nf ? r->f[k] : "";
}

/* A field gawk takes for a number (a "strnum"): blanks, sign, digits, point, exponent. */
static bool strnum(const char *s)
{
	bool digit = false;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '+' || *s == '-')
		s++;
	for (; isdigit((unsigned char)*s); s++)
		digit = true;
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++)
			digit = true;
	if (digit && (*s == 'e' || *s == 'E')) {
		const char *e = s + 1;

		if (*e == '+' || *e == '-')
			e++;
		if (isdigit((unsigned char)*e)) {
			while (isdigit((unsigned char)*e))
				e++;
			s = e;
		}
	}
	while (*s == ' ' || *s == '\t')
		s++;
	return digit && !*s;
}

static double num(const char *s)
{
	return awk_strtonum(s, strlen(s));
}

/* awk's == between two fields' values: numbers when both are strnums, else strings */
static bool awk_eq(const char *a, bool a_set, const char *b)
{
	if (!a_set)	/* an uninitialised variable: 0 against a number, "" against a string */
		return strnum(b) ? num(b) == 0 : !*b;
	if (strnum(a) && strnum(b))
		return num(a) == num(b);
	return !strcmp(a, b);
}

/* An awk array of counts (or strings), in the order of first appearance. */
struct assoc {
	char **key, **val;
	long *count;
	size_t n, cap;
};

static long find_key(const struct assoc *a, const char *k)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (!strcmp(a->key[i], k))
			return (long)i;
	return -1;
}

/* The element k, created ("" / 0) when missing, as an awk reference creates it; -1 out of memory. */
static long elem(struct assoc *a, const char *k)
{
	long i = find_key(a, k);

	if (i >= 0)
		return i;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		char **key = realloc(a->key, cap * sizeof(*key)), **val;
		long *count;

		if (key)
			a->key = key;
		val = key ? realloc(a->val, cap * sizeof(*val)) : NULL;
		if (val)
			a->val = val;
		count = val ? realloc(a->count, cap * sizeof(*count)) : NULL;
		if (!count)
			return -1;
		a->count = count;
		a->cap = cap;
	}
	a->key[a->n] = strdup(k);
	a->val[a->n] = strdup("");
	a->count[a->n] = 0;
	if (!a->key[a->n] || !a->val[a->n])
		return -1;
	return (long)a->n++;
}

static int set_val(struct assoc *a, const char *k, const char *v)
{
	long i = elem(a, k);
	char *d = i < 0 ? NULL : strdup(v);

	if (!d)
		return -1;
	free(a->val[i]);
	a->val[i] = d;
	return 0;
}

static void assoc_free(struct assoc *a)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		free(a->key[i]);
		free(a->val[i]);
	}
	free(a->key);
	free(a->val);
	free(a->count);
}

struct state {
	char starttask[256], starttime[256], startseq[256];
	bool startseq_set;		/* assigned at all (else uninitialised) */
	double *gptimes, sum;
	size_t n, cap;
	long nlost;
	struct assoc seqtask, gptaskcnt, piggybackcnt;
};

static int add_time(struct state *s, double v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		double *g = realloc(s->gptimes, cap * sizeof(*g));

		if (!g)
			return -1;
		s->gptimes = g;
		s->cap = cap;
	}
	s->gptimes[s->n++] = v;
	s->sum += v;
	return 0;
}

/* The awk program's three rules, for one record. */
static int rules(FILE *out, struct state *s, const struct rec *r)
{
	const char *what = field(r, 8), *seq = field(r, 7), *task = field(r, 1), *t = field(r, 3);
	long i;

	if (!strcmp(what, "start")) {
		if (s->startseq_set && *s->startseq)
			s->nlost++;
		snprintf(s->starttask, sizeof(s->starttask), "%s", task);
		snprintf(s->starttime, sizeof(s->starttime), "%s", t);
		snprintf(s->startseq, sizeof(s->startseq), "%s", seq);
		s->startseq_set = true;
		if (set_val(&s->seqtask, seq, task) < 0)
			return -1;
	}
	if (!strcmp(what, "end")) {
		if (awk_eq(s->startseq, s->startseq_set, seq)) {
			double d = num(t) - (s->startseq_set ? num(s->starttime) : 0);
			char a[64];

			if (add_time(s, d) < 0 || (i = elem(&s->gptaskcnt, s->starttask)) < 0)
				return -1;
			s->gptaskcnt.count[i]++;
			awk_fmt(d, a);
			if (d > 1000)
				fprintf(out, "Long GP %sus to %sus (%sus)\n", s->starttime, t, a);
		} else {
			s->nlost++;
		}
		s->startseq[0] = '\0';
		s->startseq_set = true;
	}
	if (!strcmp(what, "done")) {
		if ((i = elem(&s->seqtask, seq)) < 0)
			return -1;
		if (strcmp(s->seqtask.val[i], task)) {
			if ((i = elem(&s->piggybackcnt, task)) < 0)
				return -1;
			s->piggybackcnt.count[i]++;
		}
	}
	return 0;
}

static long print_counts(FILE *out, const struct assoc *a)
{
	long total = 0;
	char v[64];
	size_t i;

	for (i = 0; i < a->n; i++) {
		awk_fmt((double)a->count[i], v);
		fprintf(out, "\t%s %s\n", a->key[i], v);
		total += a->count[i];
	}
	return total;
}

/* The awk program's END rule. */
static void end_rule(FILE *out, struct state *s)
{
	long nbatches, ngps;
	char a[64], b[64], c[64], d[64];
	double sum = s->sum;

	if (!s->n) {
		fprintf(out, "No ftrace records found???\n");
		return;
	}
	qsort(s->gptimes, s->n, sizeof(*s->gptimes), cmp_double);
	if (gp_print_histogram(out, s->gptimes, s->n))
		return;
	fprintf(out, "Distribution of grace periods across tasks:\n");
	nbatches = print_counts(out, &s->gptaskcnt);
	fprintf(out, "Distribution of piggybacking across tasks:\n");
	ngps = nbatches + print_counts(out, &s->piggybackcnt);
	gp_print_percentiles(out, s->gptimes, s->n, sum);
	awk_fmt((double)ngps, a);
	awk_fmt((double)nbatches, b);
	awk_fmt((double)ngps / (double)nbatches, c);
	awk_fmt((double)s->nlost, d);
	fprintf(out, "Grace periods: %s Batches: %s Ratio: %s Lost: %s\n", a, b, c, d);
	fprintf(out, "Computed from ftrace data.\n");
}

static bool has_after(const char *s, size_t len, const char *first, const char *then)
{
	size_t i, n = strlen(first), m = strlen(then), j;

	for (i = 0; i + n <= len; i++) {
		if (memcmp(s + i, first, n))
			continue;
		for (j = i + n; j + m <= len; j++)
			if (!memcmp(s + j, then, m))
				return true;
		return false;
	}
	return false;
}

/* sed 's/^\[[^]]*]//' | grep 'us : rcu_exp_grace_period' | sed 's/us : / : /' | tr -d '\015', split */
static bool to_record(const char *line, size_t len, char *buf, size_t cap, struct rec *r)
{
	size_t i, o = 0;
	const char *hit, *p = line, *end = line + len;
	char *save = NULL, *tok;

	if (len && line[0] == '[') {
		const char *close = memchr(line, ']', len);

		if (close)
			p = close + 1;
	}
	if (len >= cap)
		return false;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	hit = strstr(buf, "us : rcu_exp_grace_period");
	if (!hit)
		return false;
	hit = strstr(buf, "us : ");
	memmove((char *)hit, hit + 2, strlen(hit + 2) + 1);
	for (i = 0; buf[i]; i++)
		if (buf[i] != '\r')
			buf[o++] = buf[i];
	buf[o] = '\0';
	r->nf = 0;
	for (tok = strtok_r(buf, " \t", &save); tok && r->nf < NF_MAX; tok = strtok_r(NULL, " \t", &save))
		r->f[++r->nf] = tok;
	return true;
}

int kvm_recheck_ftrace(FILE *out, const char *text, size_t len)
{
	struct state s = { 0 };
	size_t i = 0, starts = 0;
	char *buf = malloc(len + 1);
	int ret = 0;

	if (!buf)
		return set_err("out of memory");
	for (i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;

		starts += has_after(text + i, end - i, "rcu_exp_grace_period", "start");
		i = end + 1;
	}
	if (starts < 100) {
		free(buf);
		return KVMFTRACE_NOT_MINE;
	}
	for (i = 0; i < len && !ret;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		struct rec r;

		/*
		 * grep takes input with a NUL byte for binary: from there it
		 * prints "Binary file (standard input) matches", a record no
		 * rule takes, and nothing more (its 32 KiB buffers, which can
		 * make that happen some lines before the NUL, are not modelled)
		 */
		if (memchr(text + i, 0, end - i))
			break;
		if (to_record(text + i, end - i, buf, len + 1, &r))
			ret = rules(out, &s, &r);
		i = end + 1;
	}
	if (!ret)
		end_rule(out, &s);
	else
		set_err("out of memory");
	free(buf);
	free(s.gptimes);
	assoc_free(&s.seqtask);
	assoc_free(&s.gptaskcnt);
	assoc_free(&s.piggybackcnt);
	return ret;
}
