/*
 * fuzz_probe.c: libFuzzer harness of the mid-boot probe's line parser
 * (console.c, parse_probe() and the diagnostics after a HUNG line).
 *
 * Every input line gets the probe's "midboot-probe: " tag, so that the
 * fuzzer spends its time in the key=value parser; a line that starts with
 * '|' goes to the console as it is (the workqueue diagnostics that follow
 * a HUNG line carry no tag).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "console.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tag[] = "[    1.000000] midboot-probe: ";
	const char *s = (const char *)data, *end = s + size;
	const struct probe_result *first;
	struct console c;

	console_init(&c);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);

		if (*s == '|') {
			if (console_feed(&c, s + 1, n - 1) < 0)
				break;
		} else if (console_feed(&c, tag, sizeof(tag) - 1) < 0 || console_feed(&c, s, n) < 0) {
			break;
		}
		if (!nl && console_feed(&c, "\n", 1) < 0)
			break;
		s += n;
	}
	console_finish(&c);
	console_hung(&c, &first);
	console_deadlocks(&c, &first);
	console_free(&c);
	return 0;
}
