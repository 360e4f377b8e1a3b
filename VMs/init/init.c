// SPDX-License-Identifier: GPL-2.0
/*
 * VMs/init/init.c: PID 1 of every rcuwb guest (static, built with the
 * kernel tree's tools/include/nolibc, as the rcutorture scripts do).
 *
 * The measurement runs inside the kernel (rcuscale, the mid-boot probe) and
 * powers the guest off itself.  init only has to keep PID 1 alive: if PID 1
 * exits the kernel panics.  It reports what the guest sees (online CPUs and
 * NUMA nodes, from sysfs) in one line the runner can check, and powers the
 * guest off at once when the kernel command line carries "rcuwb_poweroff"
 * (the kernel passes unknown dot-less words to init as arguments), which the
 * runner uses for boot-only guests such as the accelerator probe.
 * "rcuwb_flood" makes init write to its console without end, in 64 KiB
 * lines: the runner's fault test of a guest that floods its console.
 */

#define TCSBRK 0x5409	/* asm-generic/ioctls.h: with arg 1, tcdrain() */

static char line[256];
static size_t len;

static void put(const char *s)
{
	while (*s && len < sizeof(line) - 1)
		line[len++] = *s++;
}

/* Append the first line of a sysfs file, or "?" */
static void put_file(const char *path)
{
	char buf[128];
	ssize_t n;
	int fd = open(path, O_RDONLY, 0);

	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		put("?");
		return;
	}
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	put(buf);
}

/* One write() a line, so that kernel messages are less likely to split it. */
static void flush(void)
{
	write(1, line, len);
	len = 0;
}

/* Never returns: 4 KiB writes, a newline every 16th. */
static void flood(void)
{
	static char buf[4096];
	unsigned long n;

	memset(buf, 'x', sizeof(buf));
	for (n = 0;; n++) {
		buf[sizeof(buf) - 1] = n % 16 == 15 ? '\n' : 'x';
		write(1, buf, sizeof(buf));
	}
}

int main(int argc, char **argv)
{
	int i, poweroff = 0, flooding = 0;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "rcuwb_poweroff"))
			poweroff = 1;
		else if (!strcmp(argv[i], "rcuwb_flood"))
			flooding = 1;

	mount("sysfs", "/sys", "sysfs", 0, 0);
	put("rcuwb-init: up cpus=");
	put_file("/sys/devices/system/cpu/online");
	put(" nodes=");
	put_file("/sys/devices/system/node/online");
	put("\n");
	flush();

	if (flooding)
		flood();
	if (poweroff) {
		put("rcuwb-init: powering off\n");
		flush();
		/* let the UART drain: power-off discards what is still queued */
		ioctl(1, TCSBRK, (void *)1);
		reboot(LINUX_REBOOT_CMD_POWER_OFF);
	}
	for (;;)
		sleep(3600);
	return 0;
}
