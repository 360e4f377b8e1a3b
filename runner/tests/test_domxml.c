/* test_domxml.c: unit tests of the domain XML: values escaped, schema-valid (virt-xml-validate). */
#include <unistd.h>

#include "unit.h"

#include "common.h"
#include "domxml.h"

static char *build(bool kvm, unsigned vcpus, unsigned nodes, const char *cmdline, unsigned npin)
{
	static const unsigned pus[] = { 2, 3, 4, 5 };
	struct guest_topo t;
	struct domain_params p = {
		.name = "rcuwb-test", .kvm = kvm, .topo = &t,
		.kernel = "/var/lib/libvirt/rcuwb/x/vmlinux", .initrd = "/var/lib/libvirt/rcuwb/x/initramfs.cpio",
		.cmdline = cmdline, .console = "/var/lib/libvirt/rcuwb/x/console.log", .pin = pus, .npin = npin,
	};

	assert_int_equal(topo_make(&t, vcpus, nodes, 512, 0, 0, 0), 0);
	return domxml_build(domxml_template_path(), &p);
}

/* virt-xml-validate against libvirt's own domain schema. */
static int validate(const char *xml)
{
	char path[] = "/tmp/rcuwb-domxml-XXXXXX";
	char cmd[128];
	int fd = mkstemp(path), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, xml, strlen(xml)), (ssize_t)strlen(xml));
	close(fd);
	snprintf(cmd, sizeof(cmd), "virt-xml-validate %s domain >/dev/null 2>&1", path);
	rc = system(cmd);
	unlink(path);
	return rc;
}

static void test_numa_guest(void **state)
{
	char *xml = build(false, 4, 2, "console=ttyS0", 0);

	(void)state;
	assert_non_null(xml);
	assert_non_null(strstr(xml, "<domain type=\"qemu\">"));
	assert_non_null(strstr(xml, "<vcpu placement=\"static\">4</vcpu>"));
	assert_non_null(strstr(xml, "<topology sockets=\"2\" dies=\"1\" cores=\"2\" threads=\"1\"/>"));
	assert_non_null(strstr(xml, "<cell id=\"0\" cpus=\"0-1\" memory=\"256\" unit=\"MiB\"/>"));
	assert_non_null(strstr(xml, "<cell id=\"1\" cpus=\"2-3\" memory=\"256\" unit=\"MiB\"/>"));
	assert_non_null(strstr(xml, "<source path=\"/var/lib/libvirt/rcuwb/x/console.log\"/>"));
	assert_int_equal(validate(xml), 0);
	free(xml);
}

static char *build_emu(unsigned vcpus, const char *emu)
{
	static const unsigned pus[] = { 2, 3, 4, 5 };
	struct guest_topo t;
	struct domain_params p = {
		.name = "rcuwb-test", .kvm = false, .topo = &t, .kernel = "/k", .initrd = "/i",
		.cmdline = "console=ttyS0", .console = "/var/lib/libvirt/rcuwb/x/console.log",
		.pin = pus, .npin = vcpus, .emulator_cpuset = emu,
	};

	topo_make(&t, vcpus, 0, 512, 0, 0, 0);
	return domxml_build(domxml_template_path(), &p);
}

static void test_flat_kvm_pinned(void **state)
{
	char *xml = build(true, 2, 0, "console=ttyS0", 2);

	(void)state;
	assert_non_null(xml);
	assert_non_null(strstr(xml, "<domain type=\"kvm\">"));
	assert_non_null(strstr(xml, "mode=\"host-passthrough\""));
	assert_null(strstr(xml, "<numa>"));
	/* one PU per vCPU: vCPU i on PU i */
	assert_non_null(strstr(xml, "<vcpupin vcpu=\"0\" cpuset=\"2\"/>"));
	assert_non_null(strstr(xml, "<vcpupin vcpu=\"1\" cpuset=\"3\"/>"));
	assert_non_null(strstr(xml, "<emulatorpin cpuset=\"2,3\"/>"));
	assert_int_equal(validate(xml), 0);
	free(xml);
	/* emulator: apart: QEMU's own threads on the PUs given to it */
	xml = build_emu(1, "0,1,3");
	assert_non_null(strstr(xml, "<vcpupin vcpu=\"0\" cpuset=\"2\"/>"));
	assert_non_null(strstr(xml, "<emulatorpin cpuset=\"0,1,3\"/>"));
	assert_int_equal(validate(xml), 0);
	free(xml);
	/* oversubscribed: 4 vCPUs share 2 PUs */
	xml = build(false, 4, 2, "console=ttyS0", 2);
	assert_non_null(strstr(xml, "<vcpupin vcpu=\"3\" cpuset=\"2,3\"/>"));
	assert_int_equal(validate(xml), 0);
	free(xml);
}

/* Whatever a value holds, it stays a value. */
static void test_escaping(void **state)
{
	char *xml = build(false, 1, 0, "a<b & c=\"d\" '</cmdline><x/>", 0);

	(void)state;
	assert_non_null(xml);
	assert_non_null(strstr(xml, "<cmdline>a&lt;b &amp; c=\"d\" '&lt;/cmdline&gt;&lt;x/&gt;</cmdline>"));
	assert_null(strstr(xml, "<x/>"));
	assert_int_equal(validate(xml), 0);
	free(xml);
}

static void test_bad_template(void **state)
{
	struct guest_topo t;
	struct domain_params p = { .name = "x", .topo = &t, .kernel = "k", .initrd = "i",
				   .cmdline = "c", .console = "/c" };
	char path[] = "/tmp/rcuwb-tmpl-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	topo_make(&t, 1, 0, 512, 0, 0, 0);
	assert_int_equal(write(fd, "<domain><name>", 14), 14);
	close(fd);
	assert_null(domxml_build(path, &p));
	assert_non_null(strstr(last_err(), "not well-formed XML"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numa_guest),
		cmocka_unit_test(test_flat_kvm_pinned),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_bad_template),
	};
	RUN_UNIT_TESTS("domxml", tests);
}
