/* fuzz_schedule.c: libFuzzer harness of the schedule parser (schedule.c, perf-configs/schedules/NAME.yaml). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_file.h"
#include "schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("fuzz.yaml", data, size);
	struct schedule s;
	char repo[4096];

	if (schedule_load(path, &s) == 0) {
		schedule_repo(&s, repo, sizeof(repo));
		schedule_free(&s);
	}
	return 0;
}
