/* cmd_boot.c: rcuwb boot: boot guests of one kernel variant and store every run. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runline.h"
#include "session.h"
#include "cli.h"
#include "common.h"
#include "db.h"
#include "job.h"

static const char boot_help[] =
	"Usage: rcuwb boot [OPTIONS]\n"
	"\n"
	"Boot guests of one built kernel variant through libvirt, run rcuscale in\n"
	"them (or the mid-boot probe, or just boot), and store every run, failed or\n"
	"not, in the results database, with its console log, domain XML, command\n"
	"line and kernel config in results/runs/NAME.\n"
	"\n"
	"Kernel and guest:\n"
	"  -k, --variant NAME     kernel variant (kernel-changes/variants/NAME; default stock)\n"
	"  -K, --kconfig NAME     its Kconfig scenario (perf-configs/kconfig/scenarios/NAME.config;\n"
	"                         default tiny)\n"
	"  -n, --vcpus N          vCPUs (default 2)\n"
	"  -N, --numa NODES       NUMA nodes, vCPUs and memory split evenly (default: flat)\n"
	"      --sockets S --cores C --threads T   CPU topology (default: a socket per node)\n"
	"  -m, --mem MIB          guest memory (default 512)\n"
	"  -a, --accel MODE       auto (try KVM, else TCG), kvm or tcg (default auto)\n"
	"  -t, --timeout S        destroy the guest after S seconds (default 300)\n"
	"What to run:\n"
	"  -g, --gp MODES         normal, expedited or normal,expedited (default normal)\n"
	"      --nwriters N --nreaders N --holdoff S|boot   rcuscale parameters\n"
	"                         (defaults: one writer per CPU, 0 readers, holdoff boot:\n"
	"                         measure once boot has ended)\n"
	"  -p, --probe STAGES     mid-boot probe at these stages (0-4, e.g. 1 or 01234)\n"
	"                         instead of rcuscale (whose writers then stay idle)\n"
	"      --probe-prims LIST probe primitives (rcu,rcu_exp,srcu,srcu_exp,tasks)\n"
	"      --probe-calls N    calls of each primitive per stage (default 1)\n"
	"      --watchdog S       seconds before the probe reports a call hung (default 5);\n"
	"                         a hung call without the probe's evidence of a deadlock\n"
	"                         is waited for until --timeout\n"
	"      --emulator apart|shared  QEMU's own threads on host PUs apart from the\n"
	"                         vCPUs' (when there are any) or on the same ones (default)\n"
	"      --boot-only        boot to init and power off (topology check)\n"
	"  -b, --append PARAMS    extra kernel parameters (e.g. rcupdate.rcu_normal=1)\n"
	"  -r, --reps N           runs of each GP mode, interleaved (default 1)\n"
	"  -M, --matrix NAME      label stored with the runs (default adhoc)\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 when every run was stored (whatever its outcome), 1 on errors.\n";

struct boot_opts {
	const char *variant, *kconfig, *accel;
	int vcpus, numa, mem, sockets, cores, threads, reps;
	bool gp_normal, gp_exp;
	struct run_spec proto;
};

static int parse_gp(struct boot_opts *o, const char *val)
{
	char tmp[64], *save = NULL, *m;

	o->gp_normal = o->gp_exp = false;
	snprintf(tmp, sizeof(tmp), "%s", val);
	for (m = strtok_r(tmp, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		if (!strcmp(m, "normal"))
			o->gp_normal = true;
		else if (!strcmp(m, "expedited"))
			o->gp_exp = true;
		else
			return set_err("--gp '%s': give normal, expedited or normal,expedited", m);
	}
	return o->gp_normal || o->gp_exp ? 0 : set_err("--gp '%s': no mode given", val);
}

static int parse_opts(int argc, char **argv, struct boot_opts *o)
{
	enum { O_SOCKETS = 256, O_CORES, O_THREADS, O_NWRITERS, O_NREADERS, O_HOLDOFF,
	       O_PRIMS, O_WATCHDOG, O_CALLS, O_BOOTONLY, O_EMULATOR };
	static const struct option opts[] = {
		{ "variant", required_argument, NULL, 'k' }, { "kconfig", required_argument, NULL, 'K' },
		{ "vcpus", required_argument, NULL, 'n' },
		{ "numa", required_argument, NULL, 'N' }, { "mem", required_argument, NULL, 'm' },
		{ "sockets", required_argument, NULL, O_SOCKETS },
		{ "cores", required_argument, NULL, O_CORES },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "accel", required_argument, NULL, 'a' }, { "timeout", required_argument, NULL, 't' },
		{ "gp", required_argument, NULL, 'g' },
		{ "nwriters", required_argument, NULL, O_NWRITERS },
		{ "nreaders", required_argument, NULL, O_NREADERS },
		{ "holdoff", required_argument, NULL, O_HOLDOFF },
		{ "probe", required_argument, NULL, 'p' },
		{ "probe-prims", required_argument, NULL, O_PRIMS },
		{ "watchdog", required_argument, NULL, O_WATCHDOG },
		{ "probe-calls", required_argument, NULL, O_CALLS },
		{ "boot-only", no_argument, NULL, O_BOOTONLY },
		{ "emulator", required_argument, NULL, O_EMULATOR },
		{ "append", required_argument, NULL, 'b' }, { "reps", required_argument, NULL, 'r' },
		{ "matrix", required_argument, NULL, 'M' }, { "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct run_spec *s = &o->proto;
	int c, ret = 0;

	while (ret == 0 && (c = getopt_long(argc, argv, "k:K:n:N:m:a:t:g:p:b:r:M:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': o->variant = optarg; break;
		case 'K': o->kconfig = optarg; break;
		case 'n': ret = parse_int("--vcpus", optarg, 1, TOPO_MAX_VCPUS, &o->vcpus); break;
		case 'N': ret = parse_int("--numa", optarg, 0, TOPO_MAX_NODES, &o->numa); break;
		case 'm': ret = parse_int("--mem", optarg, 64, 1 << 20, &o->mem); break;
		case O_SOCKETS: ret = parse_int("--sockets", optarg, 1, 64, &o->sockets); break;
		case O_CORES: ret = parse_int("--cores", optarg, 1, 64, &o->cores); break;
		case O_THREADS: ret = parse_int("--threads", optarg, 1, 8, &o->threads); break;
		case 'a': o->accel = optarg; break;
		case 't': ret = parse_int("--timeout", optarg, 1, 86400, &s->timeout_s); break;
		case 'g': ret = parse_gp(o, optarg); break;
		case O_NWRITERS: ret = parse_int("--nwriters", optarg, -1, 1024, &s->nwriters); break;
		case O_NREADERS: ret = parse_int("--nreaders", optarg, -1, 1024, &s->nreaders); break;
		case O_EMULATOR:
			if (strcmp(optarg, "apart") && strcmp(optarg, "shared"))
				return set_err("--emulator '%s': give apart or shared", optarg);
			s->emulator_apart = !strcmp(optarg, "apart");
			break;
		case O_HOLDOFF:
			if (!strcmp(optarg, "boot"))
				s->holdoff_s = HOLDOFF_BOOT;
			else
				ret = parse_int("--holdoff", optarg, 0, 3600, &s->holdoff_s);
			break;
		case 'p':
			if (!run_probe_stages_ok(optarg))
				return set_err("--probe '%s': give stage digits 0-4, e.g. 1 or 01234", optarg);
			s->kind = RUN_PROBE;
			snprintf(s->probe_stages, sizeof(s->probe_stages), "%s", optarg);
			break;
		case O_PRIMS: snprintf(s->probe_prims, sizeof(s->probe_prims), "%s", optarg); break;
		case O_WATCHDOG: ret = parse_int("--watchdog", optarg, 1, 600, &s->probe_watchdog_s); break;
		case O_CALLS: ret = parse_int("--probe-calls", optarg, 1, 100, &s->probe_calls); break;
		case O_BOOTONLY: s->kind = RUN_BOOT; break;
		case 'b':
			if (strlen(optarg) >= sizeof(s->boot_params))
				return set_err("--append: parameters longer than %zu bytes", sizeof(s->boot_params) - 1);
			snprintf(s->boot_params, sizeof(s->boot_params), "%s", optarg);
			break;
		case 'r': ret = parse_int("--reps", optarg, 1, 10000, &o->reps); break;
		case 'M': snprintf(s->matrix, sizeof(s->matrix), "%s", optarg); break;
		case 'h': print_usage(boot_help); return 1;
		default: return bad_usage("boot");
		}
	}
	if (ret == 0 && optind != argc)
		return set_err("boot: unexpected argument '%s': see 'rcuwb boot --help'", argv[optind]);
	return ret;
}

int do_boot(int argc, char **argv)
{
	struct boot_opts o = { .variant = "stock", .kconfig = KCONFIG_DEFAULT, .accel = "auto", .vcpus = 2, .mem = 512,
			       .reps = 1, .gp_normal = true };
	struct session sess = { 0 };
	struct hosts hs;
	struct kernel_build k;
	int ret, rep, m, idx = 0, total, failed = 0;

	run_spec_init(&o.proto);
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : -1;
	if (topo_make(&o.proto.topo, (unsigned)o.vcpus, (unsigned)o.numa, (unsigned)o.mem,
		      (unsigned)o.sockets, (unsigned)o.cores, (unsigned)o.threads) < 0)
		return -1;
	if (kernel_load(o.variant, o.kconfig, &k) < 0)
		return -1;
	if (o.proto.kind == RUN_PROBE && kernel_need_probe(&k, "--probe") < 0) {
		kernel_free(&k);
		return -1;
	}
	o.proto.kernel = &k;
	snprintf(o.proto.kconfig, sizeof(o.proto.kconfig), "%s", k.kconfig);
	hosts_single(&hs, opt_uri);
	if (session_open(&sess, &hs, &k, o.accel, NULL) < 0) {
		session_close(&sess);
		kernel_free(&k);
		return -1;
	}
	total = o.reps * (o.proto.kind == RUN_RCUSCALE ? o.gp_normal + o.gp_exp : 1);
	for (rep = 0; rep < o.reps && !session_interrupted(&sess); rep++) {
		for (m = 0; m < 2 && !session_interrupted(&sess); m++) {
			struct job j = { .spec = o.proto };

			if (o.proto.kind == RUN_RCUSCALE ? !(m ? o.gp_exp : o.gp_normal) : m)
				continue;
			j.spec.gp = m ? GP_EXPEDITED : GP_NORMAL;
			run_cell_key(&j.spec, j.env.cell, sizeof(j.env.cell));
			j.spec.rep = db_next_rep(sess.db, j.spec.matrix, j.env.cell, k.variant);
			ret = job_run(&sess, &j);
			if (ret == 0)
				runline_print(&j, ++idx, total);
			else
				failed++;
			job_free(&j);
			if (ret < 0)
				break;
		}
		if (ret < 0)
			break;
	}
	if (session_interrupted(&sess))
		set_err("interrupted after %d of %d runs; the finished runs are stored in %s", idx, total, opt_db);
	session_close(&sess);
	kernel_free(&k);
	return ret < 0 || session_interrupted(&sess) || failed ? -1 : 0;
}
