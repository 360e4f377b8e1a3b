/* gpstats.h: grace-period statistics as the kernel's kvm-recheck-rcuscale.sh computes them. */
#ifndef RCUWB_GPSTATS_H
#define RCUWB_GPSTATS_H

#include <stddef.h>
#include <stdio.h>

#include "console.h"

/* All values in microseconds (the script divides ns by 1000). */
struct gp_stats {
	size_t n;
	double avg, min, p50, p90, p99, max;
};

/*
 * Nearest rank as kvm-recheck-rcuscale.sh defines it: sort ascending,
 * index = int(n * pct / 100), at least 1 (1-based).
 */
size_t gp_rank(size_t n, int pct);
/* Sorts us[] in place.  n == 0 leaves *st zeroed. */
void gp_stats_compute(double *us, size_t n, struct gp_stats *st);
/* Samples of a parsed console, in microseconds, sorted; caller frees. */
double *gp_samples_us(const struct console *c);
/*
 * Print what kvm-recheck-rcuscale.sh prints for the same log, line for line
 * (histogram, statistics, grace periods), with awk's number formatting.
 * Returns 0, or 2 where the script's awk stops on a division by zero.
 */
int gp_print_kvm_recheck(FILE *out, const struct console *c);
/*
 * The script's "Histogram bucket size" line and histogram of us[n] (sorted,
 * n > 0); 2 where its awk stops on a division by zero (bucket size 0).
 */
int gp_print_histogram(FILE *out, const double *us, size_t n);
/* Its "Average" to "Maximum grace-period duration" lines (sum: of us, in log order). */
void gp_print_percentiles(FILE *out, const double *us, size_t n, double sum);
/* awk's number-to-string conversion (integers as %d, others as %.6g). */
void awk_fmt(double v, char out[64]);

#endif
