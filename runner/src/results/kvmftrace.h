/* kvmftrace.h: what the kernel's kvm-recheck-rcuscale-ftrace.sh prints for a console log, line for line. */
#ifndef RCUWB_KVMFTRACE_H
#define RCUWB_KVMFTRACE_H

#include <stddef.h>
#include <stdio.h>

/*
 * tools/testing/selftests/rcutorture/bin/kvm-recheck-rcuscale-ftrace.sh
 * (6.1): the expedited GPs of an ftrace dump (rcu_exp_grace_period start to
 * end), the tasks that ran them, piggy-backed requests and lost events,
 * read from the lines that hold "us : rcu_exp_grace_period" (a line whose
 * timestamp carries a delay mark is not read, as in the script).  Returns
 * KVMFTRACE_NOT_MINE (printing nothing) where the script exits 10 because
 * fewer than 100 lines match 'rcu_exp_grace_period.*start' and
 * kvm-recheck-rcuscale.sh then reads rcuscale's own lines; else 0, or -1
 * (set_err) when out of memory.  Where gawk walks an array with for-in,
 * the order of the "Distribution" lines is gawk's hash order: here it is
 * the order of first appearance.  grep takes a log with a NUL byte for
 * binary: the lines from the one with the first NUL on are not read.
 */
#define KVMFTRACE_NOT_MINE 10
int kvm_recheck_ftrace(FILE *out, const char *text, size_t len);

#endif
