/*
 * fuzz_console.c: libFuzzer harness of the console parser (console.c).
 *
 * A guest's console is whatever the kernel under test prints, and the runner
 * reads it incrementally as it arrives, so the input is fed in chunks whose
 * sizes come from the input itself: the first byte seeds the split (and
 * picks the rcuscale prefix), the rest is the console.
 */
#include <stddef.h>
#include <stdint.h>

#include "console.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct probe_result *first;
	struct console c;
	uint32_t seed;
	size_t off = 1;

	if (size < 1)
		return 0;
	seed = data[0] * 2654435761u + 1;
	console_init(&c);
	if (data[0] & 1)
		console_set_prefix(&c, "rcu-perf");
	while (off < size) {
		size_t n;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % (seed & 0x100 ? 4096 : 17);
		if (n > size - off)
			n = size - off;
		if (console_feed(&c, (const char *)data + off, n) < 0)
			break;
		off += n;
	}
	console_finish(&c);
	console_hung(&c, &first);
	console_deadlocks(&c, &first);
	console_free(&c);
	return 0;
}
