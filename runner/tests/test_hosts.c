/* test_hosts.c: unit tests of the hosts file, libvirt's host topology (capabilities) and placement on a listed set of PUs. */
#include <limits.h>
#include <unistd.h>

#include "unit.h"

#include "capstopo.h"
#include "common.h"
#include "domxml.h"
#include "hosts.h"
#include "place.h"

static char path[64];

static void write_text(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/rcuwb-hosts-%d.yaml", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void expect_error(const char *text, const char *msg)
{
	struct hosts hs;
	char want[1024];

	write_text(text);
	assert_int_equal(hosts_load(path, &hs), -1);
	snprintf(want, sizeof(want), "%s:%s", path, msg);
	if (strcmp(last_err(), want))
		fail_msg("got  '%s'\nwant '%s'", last_err(), want);
}

static void test_load(void **state)
{
	struct hosts hs;

	(void)state;
	write_text("hosts:\n"
		   "  - uri: qemu+ssh://bench@big1/system\n    label: big1\n    pus: 32\n"
		   "  - uri: qemu+tcp://127.0.0.1/system\n    cpus: \"0,2-3\"\n    pool: /srv/pool\n"
		   "    reconnect: 5\n");
	assert_int_equal(hosts_load(path, &hs), 0);
	assert_int_equal(hs.n, 2);
	assert_string_equal(hs.h[0].uri, "qemu+ssh://bench@big1/system");
	assert_string_equal(hs.h[0].label, "big1");
	assert_int_equal(hs.h[0].pus, 32);
	assert_string_equal(hs.h[0].pool, HOSTS_DEFAULT_POOL);
	assert_int_equal(hs.h[0].reconnect_s, HOSTS_DEFAULT_RECONNECT_S);
	assert_string_equal(hs.h[1].label, "");
	assert_true(hs.h[1].cpus == 0xdULL);
	assert_string_equal(hs.h[1].pool, "/srv/pool");
	assert_int_equal(hs.h[1].reconnect_s, 5);
	unlink(path);
}

/* Every hosts file the project ships reads cleanly. */
static void test_shipped(void **state)
{
	char file[PATH_MAX];
	struct hosts hs;

	(void)state;
	snprintf(file, sizeof(file), "%s/perf-configs/hosts/example.yaml", RCUWB_SRCDIR);
	if (hosts_load(file, &hs) < 0)
		fail_msg("%s", last_err());
	assert_int_equal(hs.n, 2);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("hosts: []\n", "1: hosts: the list is empty");
	expect_error("hosts:\n  - label: a\n", "2: uri: missing: the libvirt URI of the host, e.g. qemu+ssh://user@host/system");
	expect_error("hosts:\n  - uri: qemu:///system\n    pus: 0\n", "3: pus: give a whole number from 1 to 4096");
	expect_error("hosts:\n  - uri: qemu:///system\n    cpus: x\n",
		     "3: cpus: give host PUs 0-63 as a list, e.g. \"1\" or \"0-3,8\"");
	expect_error("hosts:\n  - uri: qemu:///system\n    colour: red\n",
		     "3: colour: unknown key (uri, label, pus, cpus, pool, reconnect)");
	expect_error("hosts:\n  - uri: qemu:///system\n  - uri: qemu:///system\n", "3: uri: listed twice");
	expect_error("hosts:\n  - uri: qemu+ssh://a/system\n    label: x\n  - uri: qemu+ssh://b/system\n    label: x\n",
		     "4: label: two hosts with one label");
	expect_error("hosts:\n  - uri: qemu+ssh://a/system;rm\n", "2: uri: no spaces, quotes or shell characters in a URI");
	expect_error("hosts:\n  - uri: qemu+ssh://a/system\n    label: a b\n",
		     "2: label: letters, digits, '.', '_' and '-' only");
	expect_error("hosts:\n  - uri: qemu+ssh://a/system\n    pool: rel\n", "2: pool: give an absolute directory on that host");
	expect_error("machines: []\n", "1: machines: unknown key (hosts)");
	unlink(path);
}

static void test_local(void **state)
{
	(void)state;
	assert_true(hosts_uri_is_local("qemu:///system"));
	assert_false(hosts_uri_is_local("qemu:///session"));
	assert_false(hosts_uri_is_local("qemu+tcp://127.0.0.1/system"));
	assert_false(hosts_uri_is_local("qemu+ssh://root@localhost/system"));
}

/* Two NUMA cells, two sockets, SMT siblings listed out of order, as libvirt writes them. */
static const char caps[] =
	"<capabilities><host><uuid>67bd01f2-c04c-4b0f-9e3d-0c9adce1959c</uuid><topology><cells num='2'>"
	"<cell id='0'><cpus num='4'>"
	"<cpu id='0' socket_id='0' die_id='0' core_id='0' siblings='0,4'/>"
	"<cpu id='1' socket_id='0' die_id='0' core_id='1' siblings='1,5'/>"
	"<cpu id='4' socket_id='0' die_id='0' core_id='0' siblings='0,4'/>"
	"<cpu id='5' socket_id='0' die_id='0' core_id='1' siblings='1,5'/>"
	"</cpus></cell>"
	"<cell id='1'><cpus num='4'>"
	"<cpu id='2' socket_id='1' die_id='0' core_id='0' siblings='2,6'/>"
	"<cpu id='3' socket_id='1' die_id='0' core_id='1' siblings='3,7'/>"
	"<cpu id='6' socket_id='1' die_id='0' core_id='0' siblings='2,6'/>"
	"<cpu id='7' socket_id='1' die_id='0' core_id='1' siblings='3,7'/>"
	"</cpus></cell></cells></topology></host></capabilities>";

static void test_caps(void **state)
{
	struct caps_cpu c[16];
	struct host_info h = { 0 };
	unsigned n, i, os[16], node[16];
	static const unsigned want[] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	struct placer p;
	struct placement pl;

	(void)state;
	assert_int_equal(capstopo_parse(caps, &h, c, 16, &n), 0);
	assert_int_equal(n, 8);
	assert_int_equal(h.pus, 8);
	assert_int_equal(h.cores, 4);
	assert_int_equal(h.nodes, 2);
	for (i = 0; i < n; i++) {
		assert_int_equal(c[i].id, want[i]);	/* siblings side by side */
		os[i] = c[i].id;
		node[i] = c[i].node;
	}
	/* a 2-vCPU guest goes within one node, on a core's two siblings */
	assert_int_equal(place_init_cpus(&p, os, node, n, 0), 0);
	assert_int_equal(p.nnodes, 2);
	assert_int_equal(place_take(&p, 2, &pl), 0);
	assert_string_equal(pl.cpuset, "0,4");
	assert_string_equal(pl.nodeset, "0");
	assert_int_equal(capstopo_parse("<capabilities><host/></capabilities>", &h, c, 16, &n), -1);
	assert_int_equal(capstopo_parse(caps, &h, c, 4, &n), -1);
}

static void test_restrict(void **state)
{
	static const unsigned os[] = { 0, 1, 2, 3 }, node[] = { 0, 0, 1, 1 };
	struct placer p;
	struct placement pl;

	(void)state;
	assert_int_equal(place_init_cpus(&p, os, node, 4, 0), 0);
	assert_int_equal(place_restrict(&p, 0x6ULL, 0), 0);	/* PUs 1 and 2 */
	assert_int_equal(p.npus, 2);
	assert_int_equal(place_take(&p, 1, &pl), 0);
	assert_string_equal(pl.cpuset, "1");
	assert_int_equal(place_take(&p, 1, &pl), 0);
	assert_string_equal(pl.cpuset, "2");
	assert_int_equal(place_take(&p, 1, &pl), 1);		/* full */
	assert_int_equal(place_init_cpus(&p, os, node, 4, 0), 0);
	assert_int_equal(place_restrict(&p, 0x30ULL, 0), -1);	/* none of them */
	assert_int_equal(place_init_cpus(&p, os, node, 4, 0), 0);
	assert_int_equal(place_restrict(&p, 0x3ULL, 3), -1);	/* budget beyond the list */
}

/* A remote guest: a pty console logged into the pool, no file source. */
static void test_pty_xml(void **state)
{
	struct guest_topo t;
	struct domain_params dp = { .name = "g", .kernel = "/pool/k", .initrd = "/pool/i", .cmdline = "c",
				    .console_log = "/pool/g.console.log" };
	char *xml;

	(void)state;
	assert_int_equal(topo_make(&t, 1, 0, 256, 0, 0, 0), 0);
	dp.topo = &t;
	xml = domxml_build(domxml_template_path(), &dp);
	assert_non_null(xml);
	assert_non_null(strstr(xml, "<serial type=\"pty\">"));
	assert_non_null(strstr(xml, "<log file=\"/pool/g.console.log\" append=\"off\"/>\n      <target"));
	assert_null(strstr(xml, "<source"));
	free(xml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load), cmocka_unit_test(test_shipped), cmocka_unit_test(test_errors), cmocka_unit_test(test_local),
		cmocka_unit_test(test_caps), cmocka_unit_test(test_restrict), cmocka_unit_test(test_pty_xml),
	};

	RUN_UNIT_TESTS("hosts", tests);
}
