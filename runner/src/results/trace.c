/* trace.c: RCU's trace events out of the ftrace dump on a guest's console. */
#include "trace.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const struct {
	const char *name;
	enum tev_kind kind;
} event_names[] = {
	{ "rcu_grace_period", TEV_GP },
	{ "rcu_quiescent_state_report", TEV_QS_REPORT },
	{ "rcu_fqs", TEV_FQS },
	{ "rcu_callback", TEV_CALLBACK },
	{ "rcu_invoke_callback", TEV_INVOKE },
	{ "rcu_exp_grace_period", TEV_EXP },
	{ "rcu_exp_funnel_lock", TEV_EXP_FUNNEL },
};

const char *tev_kind_name(enum tev_kind k)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(event_names); i++)
		if (event_names[i].kind == k)
			return event_names[i].name;
	return "?";
}

void trace_free(struct trace *t)
{
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

static bool starts(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && !memcmp(s, p, n);
}

static bool contains(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p), i;

	for (i = 0; i + n <= len; i++)
		if (!memcmp(s + i, p, n))
			return true;
	return false;
}

/*
 * Where the timestamp of a latency-format line ends: the "us" of
 * " 4890123us : " (the character after "us" is the delay mark: ' ', '+',
 * '!', '#', '*', '@' or '$', kernel/trace/trace_output.c); 0 if none.
 */
static size_t find_stamp(const char *s, size_t len, size_t *digits)
{
	size_t i;

	for (i = 1; i + 5 <= len; i++) {
		size_t d = i;

		if (s[i] != 'u' || s[i + 1] != 's' || !strchr(" +!#*@$", s[i + 2]) ||
		    s[i + 3] != ':' || s[i + 4] != ' ' || !isdigit((unsigned char)s[i - 1]))
			continue;
		while (d > 0 && isdigit((unsigned char)s[d - 1]))
			d--;
		if (d == 0 || s[d - 1] != ' ')
			continue;
		*digits = d;
		return i;
	}
	return 0;
}

/* "comm-pid  CPUflags" before the timestamp */
static int parse_prefix(struct tevent *e, const char *s, size_t len)
{
	char buf[128], *cpu, *dash;

	while (len && s[len - 1] == ' ')
		len--;
	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	cpu = strrchr(buf, ' ');
	if (!cpu || !isdigit((unsigned char)cpu[1]))
		return -1;
	e->cpu = atoi(cpu + 1);
	while (cpu > buf && cpu[-1] == ' ')
		cpu--;
	*cpu = '\0';
	dash = strrchr(buf, '-');
	if (!dash || !isdigit((unsigned char)dash[1]))
		return -1;
	e->pid = atoi(dash + 1);
	*dash = '\0';
	cpu = buf;
	while (*cpu == ' ')
		cpu++;
	snprintf(e->comm, sizeof(e->comm), "%.16s", cpu);
	return 0;
}

/* The arguments of one event, as its TP_printk() wrote them. */
static int parse_args(struct tevent *e, const char *a)
{
	char rhp[24];
	int n;

	e->seq = -1;
	switch (e->kind) {
	case TEV_GP:
	case TEV_EXP:
		return sscanf(a, "%*s %ld %15s", &e->seq, e->what) == 2 ? 0 : -1;
	case TEV_QS_REPORT:
		n = sscanf(a, "%*s %ld %lx>%lx %d %d %d", &e->seq, &e->mask, &e->qsmask, &e->level,
			   &e->grplo, &e->grphi);
		return n == 6 ? 0 : -1;
	case TEV_FQS:
		return sscanf(a, "%*s %ld %d %15s", &e->seq, &e->fqs_cpu, e->what) == 3 ? 0 : -1;
	case TEV_CALLBACK:
	case TEV_INVOKE:
		if (sscanf(a, "%*s rhp=%23s", rhp) != 1)
			return -1;
		snprintf(e->rhp, sizeof(e->rhp), "%s", rhp);
		return 0;
	case TEV_EXP_FUNNEL:
		return sscanf(a, "%*s %d %d %d %15s", &e->level, &e->grplo, &e->grphi, e->what) == 4 ? 0 : -1;
	case TEV_NR:
		break;
	}
	return -1;
}

static int push(struct trace *t, const struct tevent *e)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct tevent *ev = realloc(t->ev, cap * sizeof(*ev));

		if (!ev)
			return set_err("out of memory");
		t->ev = ev;
		t->cap = cap;
	}
	t->ev[t->n++] = *e;
	return 0;
}

/* An event line of the dump: -1 out of memory, 0 otherwise. */
static int event_line(struct trace *t, const char *s, size_t len)
{
	struct tevent e = { 0 };
	char name[40], args[256];
	size_t digits, us = find_stamp(s, len, &digits), i, nlen;
	const char *p, *colon;

	if (!us || parse_prefix(&e, s, digits) < 0) {
		t->bad++;
		return 0;
	}
	e.us = strtod(s + digits, NULL);
	p = s + us + 5;
	colon = memchr(p, ':', len - (size_t)(p - s));
	nlen = colon ? (size_t)(colon - p) : 0;
	if (!colon || nlen >= sizeof(name)) {
		t->bad++;
		return 0;
	}
	memcpy(name, p, nlen);
	name[nlen] = '\0';
	for (i = 0; i < ARRAY_SIZE(event_names) && strcmp(name, event_names[i].name); i++)
		;
	if (i == ARRAY_SIZE(event_names)) {
		t->other++;
		return 0;
	}
	e.kind = event_names[i].kind;
	p = colon + 1;
	nlen = len - (size_t)(p - s);
	if (nlen >= sizeof(args))
		nlen = sizeof(args) - 1;
	memcpy(args, p, nlen);
	args[nlen] = '\0';
	if (parse_args(&e, args) < 0) {
		t->bad++;
		return 0;
	}
	return push(t, &e);
}

int trace_line(struct trace *t, const char *s, size_t len)
{
	long n;

	while (len && (s[len - 1] == '\r' || s[len - 1] == '\n'))
		len--;
	if (len && s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (close) {
			len -= (size_t)(close + 1 - s);
			s = close + 1;
		}
	}
	while (len && *s == ' ') {
		s++;
		len--;
	}
	if (starts(s, len, "Dumping ftrace buffer:")) {
		t->dump_begun = true;
		return 0;
	}
	if (!t->dump_begun || t->dump_ended)
		return 0;
	if (starts(s, len, "---------------------------------")) {
		t->dump_ended = t->n > 0 || t->other > 0;
		return 0;
	}
	if (starts(s, len, "(ftrace buffer empty)")) {
		t->dump_ended = true;
		return 0;
	}
	if (starts(s, len, "** ") && sscanf(s, "** %ld printk messages dropped", &n) == 1) {
		t->printk_dropped += n;
		return 0;
	}
	if (starts(s, len, "CPU:") && contains(s, len, "[LOST ")) {
		if (contains(s, len, "[LOST EVENTS]"))
			t->lost_unknown = true;
		else if (sscanf(strstr(s, "[LOST ") + 6, "%ld", &n) == 1)
			t->lost += n;
		return 0;
	}
	return event_line(t, s, len);
}

int trace_parse(struct trace *t, const char *text, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (trace_line(t, text + i, end - i) < 0)
			return -1;
		i = end + 1;
	}
	return 0;
}

int trace_parse_file(struct trace *t, const char *path)
{
	struct buf text = { 0 };
	int ret = read_file(path, &text);

	if (!ret)
		ret = trace_parse(t, text.data ? text.data : "", text.len);
	buf_free(&text);
	return ret;
}

const char *trace_incomplete(const struct trace *t)
{
	if (!t->dump_begun)
		return "no ftrace dump on the console (is the kernel of a tracing scenario?)";
	if (!t->dump_ended)
		return "the ftrace dump was cut off";
	if (!t->n)
		return "the ftrace dump holds no RCU event (trace_event= on the command line?)";
	if (t->lost || t->lost_unknown)
		return "the trace buffer lost events (make trace_buf_size larger)";
	if (t->printk_dropped)
		return "printk dropped lines of the dump";
	return NULL;
}
