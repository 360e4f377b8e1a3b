/* gpstats.c: grace-period statistics as kvm-recheck-rcuscale.sh computes them. */
#include "gpstats.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

size_t gp_rank(size_t n, int pct)
{
	size_t r = n * (size_t)pct / 100;

	return r < 1 ? 1 : r;
}

void gp_stats_compute(double *us, size_t n, struct gp_stats *st)
{
	double sum = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!n)
		return;
	qsort(us, n, sizeof(*us), cmp_double);
	for (i = 0; i < n; i++)
		sum += us[i];
	st->n = n;
	st->avg = sum / (double)n;
	st->min = us[0];
	st->max = us[n - 1];
	st->p50 = us[gp_rank(n, 50) - 1];
	st->p90 = us[gp_rank(n, 90) - 1];
	st->p99 = us[gp_rank(n, 99) - 1];
}

double *gp_samples_us(const struct console *c)
{
	double *us = malloc((c->nsamples ? c->nsamples : 1) * sizeof(*us));
	size_t i;

	if (!us)
		return NULL;
	for (i = 0; i < c->nsamples; i++)
		us[i] = c->samples[i].ns / 1000.;
	qsort(us, c->nsamples, sizeof(*us), cmp_double);
	return us;
}

void awk_fmt(double v, char out[64])
{
	/* gawk: an integral value that fits a long prints as an integer */
	if (isfinite(v) && v == trunc(v) && v > (double)LONG_MIN && v < (double)LONG_MAX)
		snprintf(out, 64, "%ld", (long)v);
	else if (isnan(v))
		snprintf(out, 64, "%snan", signbit(v) ? "-" : "+");
	else if (isinf(v))
		snprintf(out, 64, "%sinf", v < 0 ? "-" : "+");
	else
		snprintf(out, 64, "%.6g", v);
}

static void print_histogram(FILE *out, const double *us, size_t n, double div)
{
	char a[64], b[64];
	double last = us[0] - 10;
	long count = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double current = div * trunc(us[i] / div);

		if (last == current) {
			count++;
			continue;
		}
		if (count > 0) {
			awk_fmt(last, a);
			awk_fmt((double)count, b);
			fprintf(out, "%s %s\n", a, b);
		}
		count = 1;
		last = current;
	}
	if (count > 0) {
		awk_fmt(last, a);
		awk_fmt((double)count, b);
		fprintf(out, "%s %s\n", a, b);
	}
}

int gp_print_histogram(FILE *out, const double *us, size_t n)
{
	double div = pow(10, trunc(log(us[gp_rank(n, 90) - 1]) / log(10) + .5)) / 100;
	char v[64];

	awk_fmt(div, v);
	fprintf(out, "Histogram bucket size: %s\n", v);
	if (div == 0)
		return 2;	/* awk: division by zero attempted */
	print_histogram(out, us, n, div);
	return 0;
}

void gp_print_percentiles(FILE *out, const double *us, size_t n, double sum)
{
	static const struct { const char *label; int pct; } rows[] = {
		{ "50th percentile", 50 }, { "90th percentile", 90 }, { "99th percentile", 99 },
	};
	char v[64];
	size_t i;

	awk_fmt(sum / (double)n, v);
	fprintf(out, "Average grace-period duration: %s microseconds\n", v);
	awk_fmt(us[0], v);
	fprintf(out, "Minimum grace-period duration: %s\n", v);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		awk_fmt(us[gp_rank(n, rows[i].pct) - 1], v);
		fprintf(out, "%s grace-period duration: %s\n", rows[i].label, v);
	}
	awk_fmt(us[n - 1], v);
	fprintf(out, "Maximum grace-period duration: %s\n", v);
}

int gp_print_kvm_recheck(FILE *out, const struct console *c)
{
	double *us, sum = 0;
	size_t i, n = c->nsamples;
	char v[64], w[64];

	if (!n) {
		fprintf(out, "No rcuscale records found???\n");
		return 0;
	}
	us = gp_samples_us(c);
	if (!us)
		return -1;
	for (i = 0; i < c->nsamples; i++)	/* summed in log order, as awk does */
		sum += c->samples[i].ns / 1000.;
	if (gp_print_histogram(out, us, n)) {
		free(us);
		return 2;
	}
	gp_print_percentiles(out, us, n, sum);
	free(us);
	if (!c->have_summary)
		return 2;	/* awk: ngps / nbatches with nbatches == 0 */
	awk_fmt(c->summary_gps, v);
	awk_fmt(c->summary_gps / 1, w);
	fprintf(out, "Grace periods: %s Batches: 1 Ratio: %s\n", v, w);
	fprintf(out, "Computed from rcuscale printk output.\n");
	return 0;
}
