/* fuzz_variant.c: libFuzzer harness of the variant file parser (variant.c): the input is the file. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_file.h"
#include "variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct variant v;

	variant_load(fuzz_file("variant", data, size), &v);
	return 0;
}
