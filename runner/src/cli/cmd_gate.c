/* cmd_gate.c: rcuwb gate: the regression gate on the results database (stats/exec/rcuwb-gate.R). */
#include "cli.h"
#include "common.h"

static const char gate_help[] =
	"Usage: rcuwb gate --baseline V1 --candidate V2 [OPTIONS]\n"
	"\n"
	"Decide, cell by cell, whether V2 is slower than V1 beyond a threshold, and exit:\n"
	"  0  PASS: in every cell a slowdown beyond the threshold is ruled out (the\n"
	"     one-sided upper confidence bound of the relative change is below it)\n"
	"  1  SLOWDOWN: shown in some cell (one-sided rank-sum test, Holm over the\n"
	"     testable cells, and an estimate above the threshold), or the candidate\n"
	"     fails (timeout, qemu-failed, ...) significantly more often\n"
	"  2  hard failure in the candidate (deadlock, rcuscale abort, crash, badness,\n"
	"     topology mismatch), or sides not comparable (accelerator, QEMU, libvirt,\n"
	"     host, oversubscription or kernel config differ: named)\n"
	"  3  INCONCLUSIVE: neither shown nor ruled out; says how many runs per side\n"
	"     would decide\n"
	"Gated: the per-run mean and p90 of the GP latency, on the log scale (normal\n"
	"GPs, which end on ticks: the mean; their p90 reported); PASS splits alpha\n"
	"between mean and p90, SLOWDOWN between them and the failure test, so the\n"
	"false-alarm rate is at most alpha; p50 and p99 reported.  --stat gates what it\n"
	"names in both modes.  A timed-out run counts as a latency of at least the\n"
	"timeout.  Options go to stats/exec/rcuwb-gate.R:\n"
	"  --threshold 5%% --alpha 0.05 --stat mean,p90 --min-runs 3 --matrix NAME\n"
	"  --since TIME --allow-config --junit FILE; --looks ID,... --max-runs N [--final]:\n"
	"  one look of a sequential design (what 'rcuwb compare' runs); with rcuwb\n"
	"  --json the verdict is JSON on stdout.\n";

int do_gate(int argc, char **argv)
{
	const char *extra[1] = { "--json" };

	if (wants_help(argc, argv)) {
		print_usage(gate_help);
		return 0;
	}
	return run_rscript("gate.R", argc, argv, extra, json_output ? 1 : 0);
}
