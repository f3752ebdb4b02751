/*
 * kfrag-exits: the ways out of an NFS call when the link dies, as a user
 * meets them (scripts/exits runs it, vanilla beside the series).
 *
 * kfrag.scenario=symlink-kill: a process loops on symlink() (new names) on
 * the NFS mount (an NFSv3 SYMLINK is a synchronous call whose target
 * travels as a page through sendpage); after kfrag.run_s seconds netem
 * drops every packet (loss 100 %); kfrag.kill_after_s seconds later the
 * process gets SIGKILL. Then:
 *   kill_exit_ms   how long it took to be reaped after the SIGKILL
 *                  (-1: not within kfrag.wait_s)
 *   heal_write_ms  the link healed, a new 4 KiB write + fsync on the
 *                  mount: how long it took (-1: not within kfrag.wait_s)
 *   umount_ms      umount of the mount (-1: not within kfrag.wait_s)
 *   symlinks       symlink() calls that returned before the kill
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

static int symlink_kill(void)
{
	unsigned run_s = env_num("KFRAG_RUN_S", 3), kill_after = env_num("KFRAG_KILL_AFTER_S", 4);
	long long wait_ms = env_num("KFRAG_WAIT_S", 60) * 1000LL, t_kill, exit_ms, write_ms, umount_ms;
	volatile unsigned long long *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
						   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct netem_spec hole, clear;
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
	sleep(run_s);
	netem_parse("loss=100", &hole, err, sizeof(err));
	if (netem_setup("eth0", &hole, err, sizeof(err))) {
		printf("KFRAG-KV: exits.error=%s\n", err);
		kill(pid, SIGKILL);
		return 3;
	}
	printf("KFRAG-KV: symlinks_before_loss=%llu\n", *count);
	fflush(stdout);
	sleep(kill_after);
	printf("KFRAG-KV: symlinks=%llu\n", *count);
	fflush(stdout);
	t_kill = now_ms();
	kill(pid, SIGKILL);
	exit_ms = reap_within(pid, t_kill, wait_ms, &status);
	printf("KFRAG-KV: kill_exit_ms=%lld\n", exit_ms);
	fflush(stdout);
	ok &= exit_ms >= 0;
	netem_parse("-", &clear, err, sizeof(err));
	if (netem_setup("eth0", &clear, err, sizeof(err))) {
		printf("KFRAG-KV: exits.error=healing the link: %s\n", err);
		return 3;
	}
	write_ms = timed_write(wait_ms);
	printf("KFRAG-KV: heal_write_ms=%lld\n", write_ms);
	fflush(stdout);
	ok &= write_ms >= 0;
	umount_ms = write_ms >= 0 ? timed_umount(wait_ms) : -1;
	printf("KFRAG-KV: umount_ms=%lld\n", umount_ms);
	fflush(stdout);
	ok &= umount_ms >= 0;
	return ok ? 0 : 1;
}

int main(void)
{
	const char *scenario = getenv("KFRAG_SCENARIO");
	char err[800];
	int rc;

	if (!scenario || strcmp(scenario, "symlink-kill")) {
		printf("KFRAG-KV: exits.error=kfrag.scenario must be symlink-kill\n");
		return 2;
	}
	rc = kfrag_nfs_mount(err, sizeof(err));
	if (rc) {
		printf("KFRAG-KV: exits.error=%s\n", err);
		return rc;
	}
	return symlink_kill();
}
