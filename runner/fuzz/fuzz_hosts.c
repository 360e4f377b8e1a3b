/* fuzz_hosts.c: libFuzzer harness of the hosts file parser (hosts.c, perf-configs/hosts/NAME.yaml). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_file.h"
#include "hosts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("hosts.yaml", data, size);
	struct hosts hs;

	if (hosts_load(path, &hs) == 0 && hs.n > 0)
		(void)hosts_uri_is_local(hs.h[0].uri);
	return 0;
}
