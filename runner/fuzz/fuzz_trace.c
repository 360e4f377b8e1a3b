/*
 * fuzz_trace.c: libFuzzer harness of the ftrace-dump reader (trace.c), the
 * cutting of writer calls into phases (anatomy.c) and the emulation of
 * kvm-recheck-rcuscale-ftrace.sh (kvmftrace.c): all three read a traced
 * guest's console, whatever its kernel printed.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "anatomy.h"
#include "kvmftrace.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace t = { 0 };
	struct anatomy a;
	FILE *null = fopen("/dev/null", "w");
	size_t i;
	int p;

	if (trace_parse(&t, (const char *)data, size) == 0 && anatomy_build(&t, &a) == 0) {
		/* the phases of a call are times in order: none negative, and they add up */
		for (i = 0; i < a.n; i++) {
			double sum = 0;

			for (p = 0; p < PH_NR; p++) {
				if (isnan(a.calls[i].phase_us[p]))
					continue;
				if (a.calls[i].phase_us[p] < 0)
					__builtin_trap();
				if (p != PH_RETURN)
					sum += a.calls[i].phase_us[p];
			}
			if (fabs(sum - a.calls[i].total_us) > 1e-6 * (1 + fabs(sum)))
				__builtin_trap();
		}
		anatomy_free(&a);
	}
	trace_incomplete(&t);
	trace_free(&t);
	if (null) {
		kvm_recheck_ftrace(null, (const char *)data, size);
		fclose(null);
	}
	return 0;
}
