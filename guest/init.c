/*
 * /init of the test VM. Mounts what the tests need, opens the serial
 * console, checks the network the kernel configured (ip=dhcp), runs the
 * test named by kfrag.test= on the kernel command line and reports in a
 * form scripts/vmrun parses:
 *
 *   KFRAG-INIT: start kernel=<release> uptime=<s since kernel start>
 *   KFRAG-NET: eth0 addr=<a.b.c.d>
 *   KFRAG-KV: vcpus=<CPUs online>      (what the run really had)
 *   KFRAG-KV: nic.driver=<eth0's driver> nic.mtu=<n> nic.sg= nic.csum=
 *             nic.tso=<0|1>           (ethtool's view of its offloads)
 *   KFRAG-KV: <key>=<value>           (printed by the tests)
 *   KFRAG-RESULT: test=<name> status=pass|fail rc=<n>
 *
 * The report goes to the second serial port (/dev/ttyS1), where nothing
 * else writes: on the console, the kernel's messages (a WARNING, an RPC
 * debug line, a netconsole test's noise) cut into a line at any byte,
 * and vmrun lost a writer's manifest line that way. The test's stdout is
 * that port; its stderr, and a copy of init's own lines, the console.
 * Without a second port, the report shares the console as before.
 *
 * Every other kfrag.<key>=<value> of the command line reaches the test as
 * the environment variable KFRAG_<KEY>=<value>. Then it powers off.
 * Two of them init applies itself, before the test: kfrag.mtu=N (eth0's
 * MTU; the host side must carry it: scripts/vmrun VM_MTU) and
 * kfrag.offload=on (scatter-gather, checksum and TSO on, as ethtool -K
 * would: 8139cp has them off by default).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/serial.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* the report port's descriptor; the console's (1) without one */
static int report_fd = STDOUT_FILENO;

/* init's own lines: on the report port, and on the console to read there */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (report_fd != STDOUT_FILENO) {
		va_start(ap, fmt);
		vdprintf(report_fd, fmt, ap);
		va_end(ap);
	}
}

static void power_off(void)
{
	/*
	 * Let the console finish our last line before the kernel prints its
	 * shutdown messages: on 2+ CPUs they interleaved with it mid-line,
	 * and vmrun could not read the result.
	 */
	tcdrain(report_fd);
	tcdrain(STDOUT_FILENO);
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void do_mount(const char *src, const char *dst, const char *type)
{
	mkdir(dst, 0755);
	if (mount(src, dst, type, 0, NULL) && errno != EBUSY)
		say("KFRAG-INIT: warning: mount %s on %s: %s\n", type, dst, strerror(errno));
}

static void open_console(void)
{
	int fd = open("/dev/console", O_RDWR | O_NOCTTY);

	if (fd < 0)
		fd = open("/dev/ttyS0", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return; /* nothing to report on; vmrun will time out */
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

/*
 * ttyS1, when QEMU has a second -serial. Without one, 8250 still opens
 * the port and drops what is written to it: a port of unknown type.
 */
static void open_report(void)
{
	struct serial_struct ss;
	struct termios t;
	int fd = open("/dev/ttyS1", O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (ioctl(fd, TIOCGSERIAL, &ss) || ss.type == PORT_UNKNOWN) {
		close(fd);
		return;
	}
	if (tcgetattr(fd, &t) == 0) {
		t.c_oflag &= ~OPOST; /* lines as written: no \r added */
		tcsetattr(fd, TCSANOW, &t);
	}
	report_fd = fd;
}

static int if_up(int s, const char *name)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		return -1;
	ifr.ifr_flags |= IFF_UP;
	return ioctl(s, SIOCSIFFLAGS, &ifr);
}

/* ethtool's ETHTOOL_G* value of eth0, or -1 */
static int ethtool_value(int s, __u32 cmd, __u32 data)
{
	struct ethtool_value ev = { .cmd = cmd, .data = data };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "eth0");
	ifr.ifr_data = (void *)&ev;
	if (ioctl(s, SIOCETHTOOL, &ifr))
		return -1;
	return ev.data;
}

/* eth0's carrier (sysfs), 1 up, 0 down or unknown */
static int carrier(void)
{
	char c = 0;
	int fd = open("/sys/class/net/eth0/carrier", O_RDONLY);

	if (fd < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1';
}

/*
 * kfrag.mtu and kfrag.offload=on applied to eth0; then its driver, MTU and
 * offloads reported. A driver that refuses is said, and fails the run (the
 * run would not test what it names). A new MTU resets some NICs (e1000):
 * wait up to 10 s for the carrier.
 */
static int nic_setup(int s)
{
	const char *mtu = getenv("KFRAG_MTU"), *off = getenv("KFRAG_OFFLOAD");
	char link[PATH_MAX], drv[PATH_MAX] = "none";
	struct ifreq ifr;
	ssize_t n;
	int i, rc = 0;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "eth0");
	if (off && !strcmp(off, "on")) {
		/* checksum before SG and TSO: the stack refuses SG without it */
		if (ethtool_value(s, ETHTOOL_STXCSUM, 1) < 0 || ethtool_value(s, ETHTOOL_SSG, 1) < 0 ||
		    ethtool_value(s, ETHTOOL_STSO, 1) < 0) {
			say("KFRAG-NET: eth0: offload on refused: %s\n", strerror(errno));
			rc = -1;
		}
	}
	if (mtu) {
		ifr.ifr_mtu = atoi(mtu);
		if (ioctl(s, SIOCSIFMTU, &ifr)) {
			say("KFRAG-NET: eth0: MTU %s refused: %s\n", mtu, strerror(errno));
			rc = -1;
		}
		for (i = 0; i < 100 && !carrier(); i++)
			usleep(100000);
		if (!carrier()) {
			say("KFRAG-NET: eth0: no carrier 10 s after the MTU change to %s\n", mtu);
			rc = -1;
		}
	}
	n = readlink("/sys/class/net/eth0/device/driver", link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = 0;
		snprintf(drv, sizeof(drv), "%s", basename(link));
	}
	if (ioctl(s, SIOCGIFMTU, &ifr))
		ifr.ifr_mtu = -1;
	say("KFRAG-KV: nic.driver=%s\n", drv);
	say("KFRAG-KV: nic.mtu=%d\n", ifr.ifr_mtu);
	say("KFRAG-KV: nic.sg=%d\n", ethtool_value(s, ETHTOOL_GSG, 0));
	say("KFRAG-KV: nic.csum=%d\n", ethtool_value(s, ETHTOOL_GTXCSUM, 0));
	say("KFRAG-KV: nic.tso=%d\n", ethtool_value(s, ETHTOOL_GTSO, 0));
	say("KFRAG-KV: nic.carrier=%d\n", carrier());
	return rc;
}

/* Report eth0's address; 0 if it has one. */
static int check_net(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	int rc = -1;

	if (s < 0)
		return -1;
	if_up(s, "lo");
	if (nic_setup(s)) {
		close(s);
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "eth0");
	if (ioctl(s, SIOCGIFADDR, &ifr) == 0) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

		say("KFRAG-NET: eth0 addr=%s\n", inet_ntoa(sin->sin_addr));
		rc = 0;
	} else {
		say("KFRAG-NET: eth0 has no address: %s\n", strerror(errno));
	}
	close(s);
	return rc;
}

/* Seconds since the kernel started, as /proc/uptime has it. */
static const char *uptime(void)
{
	static char buf[32] = "?";
	FILE *f = fopen("/proc/uptime", "r");

	if (f) {
		if (fscanf(f, "%31s", buf) != 1)
			strcpy(buf, "?");
		fclose(f);
	}
	return buf;
}

/* kfrag.<key>=<value> words of the command line become KFRAG_<KEY>. */
static const char *parse_cmdline(void)
{
	static char buf[4096];
	const char *test = NULL;
	char *w, *save = NULL;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
		char env[256], *eq, *p;

		if (strncmp(w, "kfrag.", 6) || !(eq = strchr(w, '=')))
			continue;
		if (!strncmp(w, "kfrag.test=", 11))
			test = w + 11;
		snprintf(env, sizeof(env), "KFRAG_%.*s", (int)(eq - w - 6), w + 6);
		for (p = env; *p; p++)
			*p = toupper((unsigned char)*p);
		setenv(env, eq + 1, 1);
	}
	return test;
}

/*
 * selftest-report: 400 long report lines, each cut in two by a kernel
 * message: the first half written, a line to /dev/kmsg (printk, on the
 * console at once), then the rest. Each value is derived from its line's
 * number, so vmrun's caller can tell a cut or lost line
 * (tests/t-40-harness.sh). On the console the message lands inside the
 * line, as a WARNING or an RPC debug line would; on the report port it
 * cannot.
 */
static int report_selftest(void)
{
	static const char noise[] = "kfrag-noise: a kernel message amid a report line\n";
	int kmsg = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	char line[256];
	int i, k, n;

	if (kmsg < 0) {
		perror("selftest-report: /dev/kmsg");
		return 1;
	}
	for (i = 0; i < 400; i++) {
		n = snprintf(line, sizeof(line), "KFRAG-KV: report.%d=", i);
		for (k = 0; k < 160; k++)
			line[n++] = 'a' + (i + k) % 26;
		line[n++] = '\n';
		if (write(STDOUT_FILENO, line, n / 2) != n / 2 ||
		    write(kmsg, noise, sizeof(noise) - 1) != sizeof(noise) - 1 ||
		    write(STDOUT_FILENO, line + n / 2, n - n / 2) != n - n / 2) {
			perror("selftest-report: write");
			return 1;
		}
	}
	close(kmsg);
	return 0;
}

static int selftest_pass(void) { return 0; }
static int selftest_fail(void) { return 1; }

static int selftest_hang(void)
{
	for (;;)
		pause();
	return 1; /* not reached */
}

/* a real kernel crash, for the log checker's own test */
static int selftest_crash(void)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	if (fd >= 0 && write(fd, "c", 1) == 1)
		pause();
	return 1;
}

/* Tests of the harness itself, built in so they exist in every image. */
static const struct {
	const char *name;
	int (*run)(void);	/* in the test's child; returns its exit status */
} builtins[] = {
	{ "selftest-pass", selftest_pass },
	{ "selftest-fail", selftest_fail },
	{ "selftest-hang", selftest_hang },
	{ "selftest-crash", selftest_crash },
	{ "selftest-report", report_selftest },
};

static int (*builtin(const char *test))(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(test, builtins[i].name))
			return builtins[i].run;
	return NULL;
}

static int run_test(const char *test)
{
	char path[256];
	int status, rc;
	pid_t pid;

	snprintf(path, sizeof(path), "/bin/kfrag-%s", test);
	if (!builtin(test) && access(path, X_OK)) {
		say("KFRAG-INIT: no such test '%s' (%s missing)\n", test, path);
		return 127;
	}
	pid = fork();
	if (pid < 0)
		return 126;
	if (pid == 0) {
		dup2(report_fd, STDOUT_FILENO);
		if (builtin(test)) {
			rc = builtin(test)();
			fflush(stdout);
			_exit(rc);
		}
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 126;
	if (WIFSIGNALED(status)) {
		say("KFRAG-INIT: test killed by signal %d\n", WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

int main(void)
{
	struct utsname u;
	const char *test;
	int rc;

	do_mount("devtmpfs", "/dev", "devtmpfs");
	open_console();
	open_report();
	do_mount("proc", "/proc", "proc");
	do_mount("sysfs", "/sys", "sysfs");
	do_mount("tmpfs", "/tmp", "tmpfs");
	setenv("PATH", "/bin", 1);
	uname(&u);
	say("KFRAG-INIT: start kernel=%s uptime=%s report=%s\n", u.release, uptime(),
	    report_fd == STDOUT_FILENO ? "console" : "ttyS1");
	say("KFRAG-KV: vcpus=%ld\n", sysconf(_SC_NPROCESSORS_ONLN));

	test = parse_cmdline();
	if (!test) {
		say("KFRAG-INIT: no kfrag.test= on the kernel command line\n");
		say("KFRAG-RESULT: test=none status=fail rc=2\n");
		power_off();
	}
	if (check_net()) {
		say("KFRAG-RESULT: test=%s status=fail rc=3\n", test);
		power_off();
	}
	rc = run_test(test);
	say("KFRAG-RESULT: test=%s status=%s rc=%d\n", test, rc ? "fail" : "pass", rc);
	power_off();
	return 0;
}
