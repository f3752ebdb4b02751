/*
 * kfrag-exits: the ways out of an NFS call when the link dies, as a user
 * meets them (scripts/exits runs it, vanilla beside the series).
 *
 * kfrag.scenario=symlink-kill: a process loops on symlink() (new names) on
 * the NFS mount (an NFSv3 SYMLINK, or an NFSv4 CREATE of a link, is a
 * synchronous call whose target travels as a page through sendpage;
 * kfrag.nfsvers= picks the version, guest/nfsmount.h); after
 * kfrag.run_s seconds netem drops every packet (loss 100 %);
 * kfrag.kill_after_s seconds later the process gets SIGKILL.
 *
 * kfrag.scenario=umount-f: kfrag.writers processes (2) loop on 64 KiB
 * O_DIRECT writes, each to its own file, and stop at the first error
 * (keeping the file open); after kfrag.run_s seconds the link drops every
 * packet, and kfrag.kill_after_s seconds later (calls stuck, their data
 * queued in the socket) comes umount -f (MNT_FORCE: the client ends the
 * calls in flight with EIO; the umount itself fails, EBUSY: the files
 * are open).
 *
 * Then, for both:
 *   calls          symlink() calls / writes that returned before the kill
 *   exit_ms        symlink-kill: how long until the process was reaped
 *                  after the SIGKILL; umount-f: until every writer's
 *                  write had failed after the umount -f (-1: not within
 *                  kfrag.wait_s)
 *   nfs_tx_queue   (umount-f) bytes queued to the server, unacknowledged,
 *                  just before umount -f (the stuck calls' data)
 *   failed_before_umount_f  writers whose write failed before it (0)
 *   umount_f_ms    (umount-f) how long umount -f took to return, and
 *                  umount_f_errno what it returned (EBUSY; 0: it did
 *                  unmount, and the mount is made again after the link
 *                  heals)
 *   heal_write_ms  the link healed, a new 4 KiB write + fsync on the
 *                  mount: how long it took (-1: not within kfrag.wait_s)
 *   umount_ms      umount of the mount (-1: not within kfrag.wait_s)
 * kfrag.tap_hold=1: 300 ms before the link drops, open a packet socket for
 * every protocol (ETH_P_ALL, a 32 MiB receive buffer) and never read it,
 * as a stopped capture tool: it holds the last frames sent before the
 * loss (netem drops later ones before a tap sees them), among them the
 * stuck calls' data, through the SIGKILL or umount -f. At that moment
 * tap_hold.packets= how many frames it holds, tap_hold.drops= how many it
 * dropped (0: it held all it was handed; scripts/exits asks for both).
 * Exit 0 when every step finished in time, 1 otherwise (the KV lines say
 * which); 2/3/4 bad arguments, netem, mount.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netem.h"
#include "nfsmount.h"
#include "taphold.h"

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static unsigned long env_num(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

static int tap = -1; /* kfrag.tap_hold: the unread packet socket */

/* the scenario's run until the link drops; kfrag.tap_hold opens the tap */
static int run_until_loss(unsigned run_s)
{
	const char *what;

	if (!env_num("KFRAG_TAP_HOLD", 0)) {
		sleep(run_s);
		return 0;
	}
	usleep(run_s > 0 ? run_s * 1000000 - 300000 : 0);
	tap = taphold_socket(32 << 20, &what);
	if (tap < 0) {
		printf("KFRAG-KV: exits.error=kfrag.tap_hold: %s: %s\n", what, strerror(errno));
		return -1;
	}
	usleep(300000);
	return 0;
}

/* what the tap holds, said when the SIGKILL or umount -f comes */
static void tap_hold_report(void)
{
	uint64_t packets, drops;

	if (tap >= 0 && !taphold_stats(tap, &packets, &drops))
		printf("KFRAG-KV: tap_hold.packets=%llu\nKFRAG-KV: tap_hold.drops=%llu\n",
		       (unsigned long long)packets, (unsigned long long)drops);
	fflush(stdout);
}

/* Reap pid within wait_ms: the ms it took, or -1 (the child is left). */
static long long reap_within(pid_t pid, long long start, long long wait_ms, int *status)
{
	while (now_ms() - start < wait_ms) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return now_ms() - start;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	return -1;
}

/* A 4 KiB write + fsync on the mount, in a child: ms, or -1. */
static long long timed_write(long long wait_ms)
{
	long long t0 = now_ms(), ms;
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		static char buf[4096];
		int fd = open("/mnt/after-heal", O_CREAT | O_WRONLY | O_TRUNC, 0644);

		memset(buf, 0x5a, sizeof(buf));
		_exit(fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd) ? 1 : 0);
	}
	if (pid < 0)
		return -1;
	ms = reap_within(pid, t0, wait_ms, &status);
	if (ms >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		printf("KFRAG-KV: heal_write.error=the write or fsync failed (status %d)\n", status);
		return -1;
	}
	return ms;
}

static long long timed_umount(long long wait_ms)
{
	long long t0 = now_ms();
	pid_t pid = fork();
	int status = 0;

	if (pid == 0)
		_exit(umount("/mnt") ? 1 : 0);
	if (pid < 0)
		return -1;
	return reap_within(pid, t0, wait_ms, &status) >= 0 && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0 ? now_ms() - t0 : -1;
}

static int heal_and_umount(long long wait_ms, int ok, int remount);

static int symlink_kill(void)
{
	unsigned run_s = env_num("KFRAG_RUN_S", 3), kill_after = env_num("KFRAG_KILL_AFTER_S", 4);
	long long wait_ms = env_num("KFRAG_WAIT_S", 60) * 1000LL, t_kill, exit_ms;
	volatile unsigned long long *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
						   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct netem_spec hole;
	char err[512], target[200];
	int status = 0, ok = 1;
	pid_t pid;

	if (count == MAP_FAILED)
		return 2;
	/* a target longer than the RPC header's slack: it goes as page data */
	memset(target, 'k', sizeof(target) - 1);
	target[sizeof(target) - 1] = 0;
	pid = fork();
	if (pid == 0) {
		char name[64];
		unsigned long long i;

		/* every call a SYMLINK that creates: new names, no unlink between */
		for (i = 0;; i++) {
			snprintf(name, sizeof(name), "/mnt/link%llu", i);
			if (symlink(target, name) == 0)
				(*count)++;
		}
	}
	if (pid < 0)
		return 2;
	if (run_until_loss(run_s)) {
		kill(pid, SIGKILL);
		return 2;
	}
	netem_parse("loss=100", &hole, err, sizeof(err));
	if (netem_setup("eth0", &hole, err, sizeof(err))) {
		printf("KFRAG-KV: exits.error=%s\n", err);
		kill(pid, SIGKILL);
		return 3;
	}
	printf("KFRAG-KV: calls_before_loss=%llu\n", *count);
	fflush(stdout);
	sleep(kill_after);
	printf("KFRAG-KV: calls=%llu\n", *count);
	tap_hold_report();
	t_kill = now_ms();
	kill(pid, SIGKILL);
	exit_ms = reap_within(pid, t_kill, wait_ms, &status);
	printf("KFRAG-KV: exit_ms=%lld\n", exit_ms);
	fflush(stdout);
	ok &= exit_ms >= 0;
	return heal_and_umount(wait_ms, ok, 0);
}

/*
 * For a diagnosis (kfrag.stall_sysrq=KEY, e.g. w: the blocked tasks, t:
 * every task): a child that, unless killed first, dumps the tasks' stacks
 * to the console after ms. Off by default: vmrun takes a call trace on
 * the console for a kernel error and fails the run.
 */
static pid_t stall_dump_after(long long ms)
{
	pid_t pid = getenv("KFRAG_STALL_SYSRQ") ? fork() : -1;

	if (pid == 0) {
		const char *key = getenv("KFRAG_STALL_SYSRQ");
		const char *dbg = getenv("KFRAG_STALL_RPC_DEBUG");
		int fd;

		usleep(ms * 1000);
		/* kfrag.stall_rpc_debug=FLAGS: sunrpc's dprintks for 300 ms */
		fd = dbg ? open("/proc/sys/sunrpc/rpc_debug", O_WRONLY) : -1;
		if (fd >= 0) {
			if (write(fd, dbg, strlen(dbg)) > 0) {
				usleep(300000);
				lseek(fd, 0, SEEK_SET);
				if (write(fd, "0", 1) != 1)
					perror("rpc_debug");
			}
			close(fd);
		}
		fd = open("/proc/sysrq-trigger", O_WRONLY);
		if (fd >= 0 && write(fd, key, 1) == 1)
			printf("KFRAG-KV: stall_dump=a step took over %lld ms: blocked tasks on the console\n", ms);
		fflush(stdout);
		_exit(0);
	}
	return pid;
}

static void stall_dump_cancel(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/*
 * Both scenarios end so: the link healed, a write, the umount. remount:
 * umount -f did unmount (the writers had closed their files in time), so
 * the write needs the mount again.
 */
static int heal_and_umount(long long wait_ms, int ok, int remount)
{
	struct netem_spec clear;
	char err[800];
	long long write_ms, umount_ms;
	pid_t dump;
	int rc;

	netem_parse("-", &clear, err, sizeof(err));
	if (netem_setup("eth0", &clear, err, sizeof(err))) {
		printf("KFRAG-KV: exits.error=healing the link: %s\n", err);
		return 3;
	}
	dump = stall_dump_after(wait_ms / 2);
	if (remount) {
		rc = kfrag_nfs_mount(err, sizeof(err));
		if (rc) {
			stall_dump_cancel(dump);
			printf("KFRAG-KV: exits.error=mounting again after umount -f: %s\n", err);
			return rc;
		}
	}
	write_ms = timed_write(wait_ms);
	printf("KFRAG-KV: heal_write_ms=%lld\n", write_ms);
	fflush(stdout);
	ok &= write_ms >= 0;
	umount_ms = write_ms >= 0 ? timed_umount(wait_ms) : -1;
	printf("KFRAG-KV: umount_ms=%lld\n", umount_ms);
	fflush(stdout);
	stall_dump_cancel(dump);
	ok &= umount_ms >= 0;
	return ok ? 0 : 1;
}

/*
 * Bytes queued, not yet acknowledged, in the TCP sockets to the NFS port
 * (kfrag.nfsport; /proc/net/tcp tx_queue): the stuck calls' data is
 * there; -1 unknown.
 */
static long long nfs_tx_queue(void)
{
	char line[512];
	unsigned rport, txq, port = env_num("KFRAG_NFSPORT", 2049);
	long long sum = -1;
	FILE *f = fopen("/proc/net/tcp", "r");

	while (f && fgets(line, sizeof(line), f)) {
		/* sl local_address rem_address(hex ip:port) st tx_queue:rx_queue */
		if (sscanf(line, " %*u: %*x:%*x %*x:%x %*x %x:%*x", &rport, &txq) != 2)
			continue;
		if (sum < 0)
			sum = 0;
		if (rport == port)
			sum += txq;
	}
	if (f)
		fclose(f);
	return sum;
}

/*
 * umount -f while O_DIRECT writers' calls are stuck on a dead link. The
 * writers keep their files open after their write failed, so umount -f
 * finds the mount busy (EBUSY) and leaves it: what is measured is how
 * soon it ends the calls, not the unmount.
 */
static int umount_f(void)
{
	unsigned run_s = env_num("KFRAG_RUN_S", 3), kill_after = env_num("KFRAG_KILL_AFTER_S", 4);
	unsigned writers = env_num("KFRAG_WRITERS", 2), i;
	long long wait_ms = env_num("KFRAG_WAIT_S", 60) * 1000LL, t0, exit_ms = -1, uf_ms;
	/* [0]: writes that returned; [1]: writers whose write failed */
	volatile unsigned long long *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
						   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct netem_spec hole;
	char err[512];
	int status, ok = 1, uf_errno = 0;
	pid_t pid[16], uf;

	if (count == MAP_FAILED || writers < 1 || writers > 16)
		return 2;
	for (i = 0; i < writers; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			char name[64];
			void *buf;
			unsigned long long n;
			int fd;

			snprintf(name, sizeof(name), "/mnt/uf%u", i);
			fd = open(name, O_CREAT | O_WRONLY | O_DIRECT, 0644);
			if (fd < 0 || posix_memalign(&buf, 4096, 65536))
				_exit(2);
			memset(buf, 0x5a, 65536);
			/* until the first error: umount -f's EIO */
			for (n = 0; pwrite(fd, buf, 65536, (n % 16) * 65536) == 65536; n++)
				__sync_fetch_and_add(&count[0], 1);
			__sync_fetch_and_add(&count[1], 1);
			for (;;)
				pause();	/* the file stays open until SIGKILL */
		}
		if (pid[i] < 0)
			return 2;
	}
	if (run_until_loss(run_s)) {
		for (i = 0; i < writers; i++)
			kill(pid[i], SIGKILL);
		return 2;
	}
	netem_parse("loss=100", &hole, err, sizeof(err));
	if (netem_setup("eth0", &hole, err, sizeof(err))) {
		printf("KFRAG-KV: exits.error=%s\n", err);
		for (i = 0; i < writers; i++)
			kill(pid[i], SIGKILL);
		return 3;
	}
	printf("KFRAG-KV: calls_before_loss=%llu\n", count[0]);
	fflush(stdout);
	sleep(kill_after);
	printf("KFRAG-KV: calls=%llu\nKFRAG-KV: failed_before_umount_f=%llu\n"
	       "KFRAG-KV: nfs_tx_queue=%lld\n", count[0], count[1], nfs_tx_queue());
	tap_hold_report();
	t0 = now_ms();
	uf = fork();
	if (uf == 0)
		_exit(umount2("/mnt", MNT_FORCE) ? errno : 0);
	status = 0;
	uf_ms = uf < 0 ? -1 : reap_within(uf, t0, wait_ms, &status);
	if (uf_ms >= 0 && WIFEXITED(status))
		uf_errno = WEXITSTATUS(status);
	printf("KFRAG-KV: umount_f_ms=%lld\nKFRAG-KV: umount_f_errno=%d\n", uf_ms, uf_errno);
	fflush(stdout);
	ok &= uf_ms >= 0;
	/* every writer's write failed (the calls ended) */
	while (now_ms() - t0 < wait_ms) {
		if (count[1] == writers) {
			exit_ms = now_ms() - t0;
			break;
		}
		usleep(5000);
	}
	printf("KFRAG-KV: exit_ms=%lld\n", exit_ms);
	fflush(stdout);
	ok &= exit_ms >= 0;
	for (i = 0; i < writers; i++) {
		kill(pid[i], SIGKILL);
		if (reap_within(pid[i], now_ms(), wait_ms, &status) < 0)
			ok = 0;
	}
	/* 0: it did unmount after all (it should not, with the files open) */
	return heal_and_umount(wait_ms, ok, uf_ms >= 0 && uf_errno == 0);
}

int main(void)
{
	const char *scenario = getenv("KFRAG_SCENARIO");
	char err[800];
	int rc;

	if (!scenario || (strcmp(scenario, "symlink-kill") && strcmp(scenario, "umount-f"))) {
		printf("KFRAG-KV: exits.error=kfrag.scenario must be symlink-kill or umount-f\n");
		return 2;
	}
	rc = kfrag_nfs_mount(err, sizeof(err));
	if (rc) {
		printf("KFRAG-KV: exits.error=%s\n", err);
		return rc;
	}
	return strcmp(scenario, "umount-f") ? symlink_kill() : umount_f();
}
