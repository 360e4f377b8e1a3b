/*
 * fuzz_matrix.c: libFuzzer harness of the matrix parser (matrix.c, yamlcfg.c):
 * load, expand into runs, and make every run's spec, as `rcuwb run` does.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_file.h"
#include "matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("fuzz.yaml", data, size);
	struct planned_run *runs = NULL;
	struct matrix m;
	unsigned long long cells;
	size_t n = 0, i;

	if (matrix_load(path, &m) < 0)
		return 0;
	/*
	 * Expand what a person would run (up to a few thousand runs); the
	 * bound on larger ones (MATRIX_MAX_RUNS) has its unit test, and
	 * expanding a million runs per input would starve the fuzzer.
	 */
	cells = (unsigned long long)m.ntopos * (2ULL + (unsigned long long)(m.nprobes * m.nprims)) *
		(unsigned long long)m.nboot_params * (unsigned long long)m.nkconfigs;
	if (cells * (unsigned long long)m.reps * (unsigned long long)m.nvariants > 5000)
		return 0;
	if (matrix_expand(&m, &runs, &n) == 0)
		for (i = 0; i < n; i++) {
			struct run_spec s;

			matrix_spec(&m, &runs[i], &s);
		}
	free(runs);
	return 0;
}
