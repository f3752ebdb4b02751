/*
 * /init of the test VM. Mounts what the tests need, opens the serial
 * console, checks the network the kernel configured (ip=dhcp), runs the
 * test named by kfrag.test= on the kernel command line and reports on the
 * console in a form scripts/vmrun parses:
 *
 *   KFRAG-INIT: start kernel=<release> uptime=<s since kernel start>
 *   KFRAG-NET: eth0 addr=<a.b.c.d>
 *   KFRAG-KV: vcpus=<CPUs online>      (what the run really had)
 *   KFRAG-KV: <key>=<value>           (printed by the tests)
 *   KFRAG-RESULT: test=<name> status=pass|fail rc=<n>
 *
 * Every other kfrag.<key>=<value> of the command line reaches the test as
 * the environment variable KFRAG_<KEY>=<value>. Then it powers off.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
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

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void power_off(void)
{
	/*
	 * Let the console finish our last line before the kernel prints its
	 * shutdown messages: on 2+ CPUs they interleaved with it mid-line,
	 * and vmrun could not read the result.
	 */
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

/* Report eth0's address; 0 if it has one. */
static int check_net(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	int rc = -1;

	if (s < 0)
		return -1;
	if_up(s, "lo");
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

/* Tests of the harness itself, built in so they exist in every image. */
static int builtin(const char *test, int *rc)
{
	if (!strcmp(test, "selftest-pass"))
		*rc = 0;
	else if (!strcmp(test, "selftest-fail"))
		*rc = 1;
	else if (!strcmp(test, "selftest-hang"))
		for (;;)
			pause();
	else if (!strcmp(test, "selftest-crash")) {
		/* a real kernel crash, for the log checker's own test */
		int fd = open("/proc/sysrq-trigger", O_WRONLY);

		if (fd >= 0 && write(fd, "c", 1) == 1)
			pause();
		*rc = 1;
	}
	else
		return 0;
	return 1;
}

static int run_test(const char *test)
{
	char path[256];
	int status, rc;
	pid_t pid;

	if (builtin(test, &rc))
		return rc;
	snprintf(path, sizeof(path), "/bin/kfrag-%s", test);
	if (access(path, X_OK)) {
		say("KFRAG-INIT: no such test '%s' (%s missing)\n", test, path);
		return 127;
	}
	pid = fork();
	if (pid == 0) {
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
	do_mount("proc", "/proc", "proc");
	do_mount("sysfs", "/sys", "sysfs");
	do_mount("tmpfs", "/tmp", "tmpfs");
	setenv("PATH", "/bin", 1);
	uname(&u);
	say("KFRAG-INIT: start kernel=%s uptime=%s\n", u.release, uptime());
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
