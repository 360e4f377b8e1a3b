/*
 * fuzz_variant.c: libFuzzer harness of the variant and series file parsers
 * (variant.c): the first byte picks which, the rest is the file.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_file.h"
#include "variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct variant v;
	static char names[VARIANT_MAX_PATCHES][128];
	const char *path;

	if (size < 1)
		return 0;
	path = fuzz_file("variant", data + 1, size - 1);
	if (data[0] & 1)
		series_load(path, names, VARIANT_MAX_PATCHES);
	else
		variant_load(path, &v);
	return 0;
}
