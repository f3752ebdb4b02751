/*
 * kfrag-redtest: the red test's guest side. Puts netem on eth0, mounts the
 * host's NFS export with mount(2) and runs an application-like O_DIRECT
 * writer workload on it: each writer reuses ONE buffer, and the moment
 * write() returns it overwrites the buffer (poison, then the next write's
 * stamped units, common/stamp.h). A retransmission that still references
 * the user pages then carries the new bytes: the host oracles see it.
 *
 * Environment (kfrag.<key>= on the kernel command line):
 *   KFRAG_SERVER (10.0.2.2) KFRAG_EXPORT (path on the server, required)
 *   KFRAG_NFSPORT (2049) KFRAG_MNTPORT (required) KFRAG_PROTO tcp|udp
 *   KFRAG_MOUNTOPTS extra mount options (timeo=,retrans=,wsize=...)
 *   KFRAG_NETEM link spec (guest/netem.h), "-" for none
 *   KFRAG_WRITERS (4) KFRAG_UNITS units of 4 KiB per file (256)
 *   KFRAG_MINKB smallest write (4) KFRAG_MAXKB largest write (64)
 *   KFRAG_SECS run time (30)
 *   KFRAG_DEADLINE a write slower than this (s) is hung (10)
 *   KFRAG_GAP_MS idle time before each write (0); with one writer, every
 *     write is an isolated one on an idle link
 *   KFRAG_SEED
 *   KFRAG_RPC_DEBUG sunrpc's rpc_debug flags from the mount on (default:
 *     129, XPRT|TRANS, set only when a write hangs)
 * Faults (the robustness scenarios):
 *   KFRAG_KILL_AT s: SIGKILL every writer s seconds in, mid-write
 *   KFRAG_BLACKHOLE s:d: from s seconds in, drop every packet to the
 *     server for d seconds (netem loss=100), then restore the profile
 *   KFRAG_UMOUNT_F_AT s: umount -f (MNT_FORCE: aborts the calls in flight),
 *     once every writer has its file open (for up to KFRAG_DEADLINE s more)
 *   KFRAG_CYCLES n: n mount, write, umount cycles before the workload
 *   KFRAG_VOLUMES_WAIT s: after a kill or umount -f, wait up to s (30) for
 *     the NFS volume to go before the destructor accounting
 *   KFRAG_KMSG_MS ms: a child writes a long line to /dev/kmsg every ms
 *     during the writers' run (kmsg_lines= how many). printk() keeps
 *     1,023 bytes of it, more than netconsole's 1,000-byte chunk: with
 *     netconsole on a virtio NIC each line is several netpoll sends with
 *     interrupts off, and netpoll frees the NIC's sent skbs there
 *   KFRAG_CHASE_MS ms: a child sends one small UDP datagram to the
 *     server's discard port (9) when a write() has been in flight for ms,
 *     once per write (chased= how many): a packet without fragment
 *     destructors queued right behind the write's, and then nothing more
 *     from the guest until the write returns (tests/t-50's virtio test)
 *   KFRAG_TAP at:secs:unread|slow: a packet socket (ETH_P_ALL) opened at
 *     `at` s for `secs` s, never read or read once a second, then read
 *     and judged (guest/taphold.h: tap.* lines, and the writes that
 *     returned in the windows before, during and after it)
 *   KFRAG_RELAY 1: mount 127.0.0.1, where a relay that splices the
 *     client's bytes to the server listens (guest/relay.h): the WRITE
 *     data crosses a local receiver and goes on from its pipe
 *   KFRAG_ERRORS_OK 1: a failed write (EIO from a soft mount) is counted,
 *     its units may hold either generation, and the writer goes on
 *   KFRAG_TCP_WMEM min:default:max: net.ipv4.tcp_wmem before the mount
 *     (the RPC socket's send buffer: a small one keeps a request half
 *     sent while the task waits for room)
 * Host self-test (tests/t-54-disk-drain.sh):
 *   KFRAG_DIR path: run the workload in this directory of the machine it
 *     runs on instead of mounting the export at /mnt: no netem, no mount,
 *     no tracing, no rpc_debug, no kmemleak (the faults that need them are
 *     refused), so the workload's own logic and its manifest can be
 *     checked against host/disk-oracle without a VM
 *   Test hooks, with KFRAG_DIR only (refused otherwise):
 *   KFRAG_TEST_WRITE_DELAY_MS ms: every write() sleeps this long after
 *     pwrite() before it returns (a slow server): writes are in flight at
 *     KFRAG_SECS, and the drain has something to wait for
 *   KFRAG_TEST_STALL w:phase:ms: writer w sleeps ms the first time it
 *     enters phase open|gap|write|close (a writer stuck outside write())
 *
 * The end of the run: at KFRAG_SECS the writers stop issuing writes (in
 * the first in-order pass too), and the writes then in flight are drained:
 * waited for until each write() returned, for up to KFRAG_DEADLINE. A
 * writer still alive after the drain is hung, whatever it was doing: in
 * write(), or stuck in open(), close() or between writes (the gap). It
 * counts in hung_writes (hung.writer<N>= says where it was) and is killed.
 * Only then the manifest is written, the export unmounted and the
 * destructor accounting reported, so that it does not count the RPCs of
 * writes that were merely slow (a long-delay link) as live.
 *
 * Output: KFRAG-KV lines (writes, MB/s, latencies, hung writes, RPC
 * counters, netem counters, guest CPU busy %, the destructor accounting of dtortrace.h
 * after the umount, kmemleak's report count when the kernel has it), among them:
 *   inflight_at_stop=N  writes in flight when KFRAG_SECS was reached
 *   drain_ms=N          how long they took to return (0: none was out);
 *                       bounded by KFRAG_DEADLINE
 *   writers_started=N   writers forked, printed just before the manifest:
 *                       host/disk-oracle wants one manifest line for each
 *   drained_writes=N    of those, the ones that returned during the drain (a
 *                       complete one is counted in writes and the manifest)
 *   stuck_writers=N     writers still alive after the drain, killed; each
 *                       one is in hung_writes too
 *   hung.writer<N>=...  a hung write, or a writer stuck at the give-up:
 *                       "(not in write(): in open|gap|close)"
 *   writers_failed=N    writers that ended otherwise than by exiting 0 or by
 *                       the SIGKILL of KFRAG_KILL_AT or of the drain
 *                       (writer<N>.exit= says how each ended)
 * and one KFRAG-MANIFEST line per writer's file:
 *   KFRAG-MANIFEST: file=F units=U gens=G,G,...   (G = last generation whose
 *   write() returned; "G+" when a write of G+1 was still in flight)
 * Exit: 0 the workload ran; 2 bad arguments; 3 netem; 4 mount; 5 writes failed
 * (unless KFRAG_ERRORS_OK) or none completed; 6 a writer could not be
 * started, died of a signal we did not send, or exited non-zero otherwise
 * than after a failed write.
 *
 * The writers' run, from before the first fork to the end of the drain (the
 * span of cpu_busy_pct), is window 1 of the instruction counter
 * (common/insnmark.h): scripts/vmrun VM_INSNCOUNT reports it as
 * redtest.insns, every guest instruction meanwhile on every vCPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <termios.h>
#include <unistd.h>

#include "../common/insnmark.h"
#include "../common/stamp.h"
#include "cpustat.h"
#include "dtortrace.h"
#include "netem.h"
#include "nfsmount.h"
#include "relay.h"
#include "taphold.h"

#define MAXWRITERS 32
#define MAXLAT 50000

/* why a writer exits 1: a write failed (no KFRAG_ERRORS_OK), no file or buffer */
enum { WHY_NONE, WHY_WRITE, WHY_OPEN };

/* where a writer is: the gap is everything between two write()s */
enum { PH_OPEN, PH_GAP, PH_WRITE, PH_CLOSE, NPHASES };
static const char *const phase_name[NPHASES] = { "open", "gap", "write", "close" };

struct writer_state {
	volatile uint64_t inflight_start_us; /* 0: no write in flight */
	volatile uint32_t inflight_unit, inflight_n;
	volatile int hung_reported;
	volatile uint64_t writes, bytes, errors, hung;
	volatile int last_errno, done, why;
	volatile int drained; /* a write issued before the stop returned after it */
	volatile int phase;   /* PH_*: what the writer is doing */
	volatile uint64_t tapwin[3]; /* KFRAG_TAP: writes returned before, during, after */
	volatile uint64_t tapwin_max_us[3]; /* the slowest write begun in each */
	uint32_t nlat;
	uint32_t lat_us[MAXLAT];
};

static struct writer_state *ws;
static volatile int *stop;        /* shared: KFRAG_SECS reached, no new write() */
static struct taphold *tap;       /* shared: KFRAG_TAP, or NULL */
static uint64_t run_t0;           /* the writers' run began */
static uint64_t end_us;           /* when KFRAG_SECS is reached */
static volatile uint32_t *gens;   /* [writer][unit] */
static volatile uint8_t *unsure;  /* [writer][unit]: a write of gens+1 failed */
static int errors_ok;
static const char *mntdir = "/mnt"; /* KFRAG_DIR: a directory of this machine */
static int hostdir;                 /* KFRAG_DIR given: touch nothing but it */
static unsigned nwriters, units, minunits, maxunits, secs, deadline, gap_ms;
static unsigned long seed;
/* test hooks (KFRAG_DIR only): a slow write(), one writer stalled once */
static unsigned write_delay_ms, stall_ms;
static int stall_w = -1, stall_phase = -1, stall_done;

static unsigned long env_num(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

static const char *env_str(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* since the writers' run began (KFRAG_TAP's clock) */
static uint64_t run_us(void)
{
	return now_us() - run_t0;
}

static void kv_error(const char *what)
{
	printf("KFRAG-KV: redtest.error=%s\n", what);
	fflush(stdout);
}

static void sleep_ms(unsigned ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* writer w enters phase ph (KFRAG_TEST_STALL: and stalls there, once) */
static void enter(int w, int ph)
{
	ws[w].phase = ph;
	if (w == stall_w && ph == stall_phase && !stall_done) {
		stall_done = 1;
		sleep_ms(stall_ms);
	}
}

/* SECS reached: by the main process's word, or by the clock if it is late */
static int stopping(void)
{
	return *stop || now_us() >= end_us;
}

/*
 * One write() of n units at unit: 0 it returned complete, -1 it failed,
 * 1 it was not issued because the run is stopping.
 */
static int do_write(int w, int fd, unsigned char *buf, uint32_t unit, uint32_t n)
{
	struct writer_state *s = &ws[w];
	volatile uint32_t *g = gens + (size_t)w * units;
	size_t len = (size_t)n * KFRAG_UNIT;
	uint64_t t0, dt;
	ssize_t r;
	uint32_t i;

	if (stopping())
		return 1;
	for (i = 0; i < n; i++)
		kfrag_stamp_unit(buf + (size_t)i * KFRAG_UNIT, w, w, unit + i, g[unit + i] + 1);
	s->inflight_unit = unit;
	s->inflight_n = n;
	s->hung_reported = 0;
	enter(w, PH_GAP);
	if (gap_ms)
		usleep(gap_ms * 1000);
	t0 = now_us();
	s->inflight_start_us = t0;
	s->phase = PH_WRITE;
	/*
	 * In flight first, then the stop looked at (the main process sets the
	 * stop, then looks at what is in flight): no write starts after SECS
	 * unseen. Its stamps in the buffer are never sent: gens stay.
	 */
	__sync_synchronize();
	if (stopping()) {
		s->inflight_start_us = 0;
		s->phase = PH_GAP;
		return 1;
	}
	enter(w, PH_WRITE);
	r = pwrite(fd, buf, len, (off_t)unit * KFRAG_UNIT);
	if (write_delay_ms) /* the data is written; the reply is late */
		sleep_ms(write_delay_ms);
	dt = now_us() - t0;
	if (stopping()) /* issued before the stop, returned after it: drained */
		s->drained = 1;
	if (r == (ssize_t)len)
		for (i = 0; i < n; i++) {
			g[unit + i]++;
			unsure[(size_t)w * units + unit + i] = 0;
		}
	else /* the server may or may not have the new generation */
		for (i = 0; i < n; i++)
			unsure[(size_t)w * units + unit + i] = 1;
	s->inflight_start_us = 0;
	s->phase = PH_GAP;
	/* write() returned: the application reuses its buffer at once */
	for (i = 0; i < n; i++)
		kfrag_poison_unit(buf + (size_t)i * KFRAG_UNIT, w);
	if (r != (ssize_t)len) {
		s->errors++;
		s->last_errno = r < 0 ? errno : EIO;
		return -1;
	}
	if (dt > (uint64_t)deadline * 1000000 && !s->hung_reported)
		s->hung++;
	if (tap) {
		/*
		 * counted where it returned; its latency where it began, so
		 * that a write held past the window counts, and one begun
		 * before the tap opened and returned after counts as during:
		 * it was in flight meanwhile
		 */
		int ended = taphold_window(tap, run_us());
		int began = taphold_window(tap, t0 - run_t0);

		if (ended >= 0)
			s->tapwin[ended]++;
		if (began == 0 && ended != 0)
			began = 1;
		if (began >= 0 && dt > s->tapwin_max_us[began])
			s->tapwin_max_us[began] = dt;
	}
	s->writes++;
	s->bytes += len;
	if (s->nlat < MAXLAT)
		s->lat_us[s->nlat++] = dt > UINT32_MAX ? UINT32_MAX : dt;
	return 0;
}

/* A writer: stops issuing writes at SECS, in its first pass too */
static void writer(int w)
{
	unsigned char *buf;
	char path[4096];
	uint32_t u, n;
	int fd, rc;

	srandom(seed * 1000 + w);
	snprintf(path, sizeof(path), "%s/w%03d.dat", mntdir, w);
	enter(w, PH_OPEN);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	if (fd < 0 || posix_memalign((void **)&buf, KFRAG_UNIT, (size_t)maxunits * KFRAG_UNIT)) {
		ws[w].errors++;
		ws[w].last_errno = fd < 0 ? errno : ENOMEM;
		ws[w].why = WHY_OPEN;
		_exit(1);
	}
	ws[w].phase = PH_GAP;
	/* every unit gets generation 1, in order; then random rewrites */
	for (u = 0, rc = 0; u < units && rc <= 0; u += n) {
		n = units - u < maxunits ? units - u : maxunits;
		rc = do_write(w, fd, buf, u, n);
		if (rc < 0 && !errors_ok) {
			ws[w].why = WHY_WRITE;
			_exit(1);
		}
	}
	while (rc <= 0) {
		n = minunits + random() % (maxunits - minunits + 1);
		u = random() % (units - n + 1);
		rc = do_write(w, fd, buf, u, n);
		if (rc < 0 && !errors_ok) {
			ws[w].why = WHY_WRITE;
			_exit(1);
		}
	}
	enter(w, PH_CLOSE);
	close(fd);
	ws[w].done = 1;
	_exit(0);
}

/*
 * A write hangs: the kernel lists its RPC tasks and their wait queues
 * (any write to rpc_debug does), and from then on logs what the RPC
 * transport does (RPCDBG_XPRT | RPCDBG_TRANS, or KFRAG_RPC_DEBUG).
 */
static void rpc_debug_set(const char *v)
{
	int fd = hostdir ? -1 : open("/proc/sys/sunrpc/rpc_debug", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
			perror("rpc_debug");
		close(fd);
	}
}

static int rpc_debug_ours; /* turned on by a hang, not asked for */

static void rpc_show_tasks(void)
{
	rpc_debug_set(env_str("KFRAG_RPC_DEBUG", "129"));
	rpc_debug_ours = !getenv("KFRAG_RPC_DEBUG");
}

/*
 * The drain is over: sunrpc's log, on the console, would bury the rest
 * of the run's kernel messages (and slow it). Off again if a hang turned
 * it on (the write lists the tasks left once more); kept when asked for
 * from the start. The report is on its own port (guest/init.c).
 */
static void rpc_debug_quiet(void)
{
	if (rpc_debug_ours) {
		fflush(stdout);
		tcdrain(1);
		rpc_debug_set("0");
		rpc_debug_ours = 0;
	}
}

/* NFS volumes the kernel still has (/proc/fs/nfsfs/volumes, less its header) */
static int nfs_volumes(void)
{
	char line[512];
	int n = -1;
	FILE *f = fopen("/proc/fs/nfsfs/volumes", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static void nfs_volumes_wait(unsigned ms)
{
	uint64_t t0 = now_us();
	int n;

	while ((n = nfs_volumes()) > 0 && now_us() - t0 < (uint64_t)ms * 1000)
		usleep(100000);
	printf("KFRAG-KV: nfs.volumes_left=%d\nKFRAG-KV: nfs.volumes_wait_ms=%llu\n", n,
	       (unsigned long long)(now_us() - t0) / 1000);
	fflush(stdout);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The client's RPC counters: /proc/net/rpc/nfs "rpc calls retrans authrefresh" */
static void rpc_counters(long long *calls, long long *retrans)
{
	char line[256];
	FILE *f = fopen("/proc/net/rpc/nfs", "r");

	*calls = *retrans = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rpc %lld %lld", calls, retrans) == 2)
			break;
	fclose(f);
}

static int do_mount(void)
{
	char err[800];
	int rc = kfrag_nfs_mount(err, sizeof(err));

	if (rc)
		kv_error(err);
	return rc;
}

/* One small O_DIRECT file per mount/umount cycle, read back. */
static int cycle_write(unsigned c)
{
	unsigned char *buf, *back;
	char path[64];
	int fd, ok;

	snprintf(path, sizeof(path), "/mnt/cycle%03u.dat", c);
	if (posix_memalign((void **)&buf, KFRAG_UNIT, KFRAG_UNIT) ||
	    posix_memalign((void **)&back, KFRAG_UNIT, KFRAG_UNIT))
		return -1;
	kfrag_stamp_unit(buf, 1000 + c, 0, 0, 1);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	ok = fd >= 0 && pwrite(fd, buf, KFRAG_UNIT, 0) == KFRAG_UNIT &&
	     pread(fd, back, KFRAG_UNIT, 0) == KFRAG_UNIT && !memcmp(buf, back, KFRAG_UNIT);
	if (fd >= 0)
		close(fd);
	free(buf);
	free(back);
	return ok ? 0 : -1;
}

/* a backtrace frame's function without the compiler's .part.N/.isra.N/.constprop.N */
static void frame_name(char *fn)
{
	static const char *const sfx[] = { ".part.", ".isra.", ".constprop.", ".cold" };
	unsigned i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		char *p = strstr(fn, sfx[i]);

		if (p)
			*p = 0;
	}
}

/* the allocators' own frames, left out of a leak's backtrace */
static int allocator_frame(const char *fn)
{
	static const char *const pfx[] = { "kmemleak_", "kmem_cache_alloc", "__kmalloc", "kmalloc",
					   "kzalloc", "kcalloc", "krealloc", "kstrdup", "kstrndup",
					   "kmemdup", "vmalloc", "vzalloc", "__vmalloc", "pcpu_alloc",
					   "__alloc_percpu" };
	unsigned i;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(fn, pfx[i], strlen(pfx[i])))
			return 1;
	return 0;
}

/*
 * kmemleak (debug kernels): after 6 s (kmemleak never reports an object
 * younger than 5 s: the umount's would be missed), two scans, then the
 * number of reports, and for the first 32 the object's size, the task
 * that allocated it and the allocating backtrace's functions, innermost
 * first, the allocators' own frames left out:
 *   kmemleak.<n>=size 64, comm "mount": nfs4_init_client < nfs4_set_client < ...
 * (what scripts/redtest compares with the known leaks of v3.1, lib.sh
 * kmemleak_unknown). A scan or read that fails: kmemleak=unavailable.
 */
static void kmemleak_report(void)
{
	char line[256], what[200] = "", bt[600] = "";
	unsigned n = 0, frames = 0;
	FILE *f;
	int i;

	if (hostdir || access("/sys/kernel/debug/kmemleak", W_OK))
		return;
	sleep(6);
	for (i = 0; i < 2; i++) {
		f = fopen("/sys/kernel/debug/kmemleak", "w");
		if (!f || fputs("scan", f) < 0 || fclose(f)) {
			printf("KFRAG-KV: kmemleak=unavailable\n");
			return;
		}
	}
	f = fopen("/sys/kernel/debug/kmemleak", "r");
	if (!f) {
		printf("KFRAG-KV: kmemleak=unavailable\n");
		return;
	}
	for (;;) {
		char fn[128], comm[64];
		unsigned size;
		int eof = !fgets(line, sizeof(line), f);

		if (eof || !strncmp(line, "unreferenced object", 19)) {
			if (n && n <= 32)
				printf("KFRAG-KV: kmemleak.%u=%s:%s\n", n, what, bt);
			if (eof)
				break;
			n++;
			bt[0] = 0;
			frames = 0;
			snprintf(what, sizeof(what), "size %u",
				 sscanf(line, "unreferenced object %*s (size %u)", &size) == 1 ? size : 0);
		} else if (sscanf(line, " comm \"%63[^\"]\"", comm) == 1) {
			snprintf(what + strlen(what), sizeof(what) - strlen(what), ", comm \"%s\"", comm);
		} else if (sscanf(line, " [<%*x>] %127[^+ \n]", fn) == 1 && frames < 8) {
			frame_name(fn);
			if (allocator_frame(fn))
				continue;
			snprintf(bt + strlen(bt), sizeof(bt) - strlen(bt), "%s %s", frames ? " <" : "", fn);
			frames++;
		}
	}
	fclose(f);
	printf("KFRAG-KV: kmemleak=%u\n", n);
	fflush(stdout);
}

/*
 * KFRAG_KMSG_MS: printk a line longer than netconsole's 1,000-byte chunk
 * every ms until *stop: the console is written with interrupts off, and
 * netpoll's next send frees the skbs its first one reclaimed from a
 * virtio NIC (which orphans them). Returns the child's pid, 0 when not
 * asked for, -1 on failure (said in redtest.error).
 */
static pid_t kmsg_start(unsigned ms, volatile int *stopflag, unsigned long long *lines)
{
	char line[1101];
	pid_t pid;
	int fd;

	if (!ms)
		return 0;
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd < 0) {
		snprintf(line, sizeof(line), "kfrag.kmsg_ms: open /dev/kmsg: %s", strerror(errno));
		kv_error(line);
		return -1;
	}
	pid = fork();
	if (pid) {
		close(fd);
		return pid;
	}
	memset(line, 'k', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	memcpy(line, "<6>kfrag-kmsg ", 14);
	while (!*stopflag) {
		/* v3.1 returns what printk() took: its buffer keeps 1,023 bytes */
		if (write(fd, line, sizeof(line)) <= 0)
			_exit(1);
		__sync_fetch_and_add(lines, 1);
		usleep(ms * 1000);
	}
	_exit(0);
}

/*
 * The module parameters set on the kernel command line (mod.name=value,
 * kfrag's own aside), as the kernel has them: param.mod.name=value, or
 * "absent" when the kernel has no such parameter (an unknown one is
 * silently ignored: a test that relies on a knob must see it here).
 */
static void show_cmdline_params(void)
{
	char line[4096], *tok, *save = NULL;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *dot = strchr(tok, '.'), *eq = strchr(tok, '='), path[300], val[100] = "absent";
		FILE *p;

		if (!dot || !eq || dot > eq || !strncmp(tok, "kfrag.", 6))
			continue;
		*eq = 0;
		*dot = 0;
		snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", tok, dot + 1);
		p = fopen(path, "r");
		if (p) {
			if (!fgets(val, sizeof(val), p))
				val[0] = 0;
			val[strcspn(val, "\n")] = 0;
			fclose(p);
		}
		printf("KFRAG-KV: param.%s.%s=%s\n", tok, dot + 1, val);
	}
}

/*
 * KFRAG_CHASE_MS: once a write() has been in flight for ms, send one small
 * UDP datagram to the server's discard port; once per write, until *stop.
 * Polls the writers' state every millisecond. Returns the child's pid, 0
 * when not asked for, -1 on failure (said in redtest.error).
 */
static pid_t chase_start(unsigned ms, volatile int *stopflag, unsigned long long *sent)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9) };
	uint64_t chased[MAXWRITERS] = { 0 };
	char msg[200];
	pid_t pid;
	unsigned w;
	int fd;

	if (!ms)
		return 0;
	if (hostdir || inet_pton(AF_INET, env_str("KFRAG_SERVER", "10.0.2.2"), &sa.sin_addr) != 1) {
		kv_error("kfrag.chase_ms needs the NFS server's IPv4 address (no kfrag.dir)");
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "kfrag.chase_ms: socket: %s", strerror(errno));
		kv_error(msg);
		return -1;
	}
	pid = fork();
	if (pid) {
		close(fd);
		return pid;
	}
	while (!*stopflag) {
		for (w = 0; w < nwriters; w++) {
			uint64_t st = ws[w].inflight_start_us;

			if (!st || st == chased[w] || now_us() - st < (uint64_t)ms * 1000)
				continue;
			if (sendto(fd, "kfrag-chase", 11, 0, (struct sockaddr *)&sa, sizeof(sa)) != 11)
				_exit(1);
			chased[w] = st;
			__sync_fetch_and_add(sent, 1);
		}
		usleep(1000);
	}
	_exit(0);
}

/* KFRAG_TAP: the packet socket's child is done by SECS; its verdicts */
static void tap_report(pid_t pid)
{
	uint64_t win[3] = { 0, 0, 0 }, max[3] = { 0, 0, 0 };
	unsigned w, i;
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) || tap->failed)
		printf("KFRAG-KV: tap.error=%s\n", tap->failed ? tap->error : "the tap's child failed");
	for (w = 0; w < nwriters; w++)
		for (i = 0; i < 3; i++) {
			win[i] += ws[w].tapwin[i];
			if (ws[w].tapwin_max_us[i] > max[i])
				max[i] = ws[w].tapwin_max_us[i];
		}
	printf("KFRAG-KV: tap.lat_max_before_ms=%llu\nKFRAG-KV: tap.lat_max_during_ms=%llu\n"
	       "KFRAG-KV: tap.lat_max_after_ms=%llu\n", (unsigned long long)max[0] / 1000,
	       (unsigned long long)max[1] / 1000, (unsigned long long)max[2] / 1000);
	printf("KFRAG-KV: tap.mode=%s\nKFRAG-KV: tap.at=%u\nKFRAG-KV: tap.secs=%u\n"
	       "KFRAG-KV: tap.open_ms=%llu\nKFRAG-KV: tap.close_ms=%llu\n"
	       "KFRAG-KV: tap.writes_before=%llu\nKFRAG-KV: tap.writes_during=%llu\n"
	       "KFRAG-KV: tap.writes_after=%llu\nKFRAG-KV: tap.frames=%llu\n"
	       "KFRAG-KV: tap.nfs_frames=%llu\nKFRAG-KV: tap.write_calls=%llu\n"
	       "KFRAG-KV: tap.poisoned=%llu\nKFRAG-KV: tap.units_ok=%llu\n"
	       "KFRAG-KV: tap.units_wrong=%llu\nKFRAG-KV: tap.stamps_ok=%llu\n"
	       "KFRAG-KV: tap.stamps_bad=%llu\nKFRAG-KV: tap.truncated=%llu\n"
	       "KFRAG-KV: tap.pkt_packets=%llu\nKFRAG-KV: tap.pkt_drops=%llu\n",
	       tap->mode == TAP_UNREAD ? "unread" : "slow", tap->at, tap->secs,
	       (unsigned long long)tap->open_us / 1000, (unsigned long long)tap->close_us / 1000,
	       (unsigned long long)win[0], (unsigned long long)win[1], (unsigned long long)win[2],
	       (unsigned long long)tap->frames, (unsigned long long)tap->nfs_frames,
	       (unsigned long long)tap->write_calls, (unsigned long long)tap->poisoned,
	       (unsigned long long)tap->units_ok, (unsigned long long)tap->units_wrong,
	       (unsigned long long)tap->stamps_ok, (unsigned long long)tap->stamps_bad,
	       (unsigned long long)tap->truncated, (unsigned long long)tap->pkt_packets,
	       (unsigned long long)tap->pkt_drops);
	fflush(stdout);
}

int main(void)
{
	struct netem_spec ns;
	char err[512];
	const char *spec = env_str("KFRAG_NETEM", "-");
	uint64_t t0, give_up, wall, drain_end, drain_ms;
	unsigned w, i, stuck = 0, cycles, umount_f_at, umount_f_done = 0, kill_at, bh_at, bh_for, killed = 0, bh_state = 0;
	unsigned started, stopped = 0, inflight_at_stop = 0, drained_writes = 0, writers_failed = 0;
	struct netem_spec hole;
	unsigned long long writes = 0, bytes = 0, errors = 0, hung = 0, nlat = 0;
	long long calls, retrans, sent, drops;
	unsigned long long busy0, total0, busy1, total1, ctxt0, ctxt1;
	uint32_t *lat;
	int rc, tracing, unexpected = 0;
	pid_t pids[MAXWRITERS], kmsg_pid, chase_pid, tap_pid = 0, relay_pid = 0;
	struct relaystat *relay = NULL;
	struct taphold tapspec;
	unsigned long long *kmsg_lines, *chased;
	int wstatus[MAXWRITERS] = { 0 };
	/* ended: reaped, wstatus holds how; ours: we sent it SIGKILL (1 KILL_AT, 2 the drain) */
	char ended[MAXWRITERS] = { 0 }, ours[MAXWRITERS] = { 0 }, alive_at_stop[MAXWRITERS] = { 0 };
	char fail[300] = "";

	nwriters = env_num("KFRAG_WRITERS", 4);
	units = env_num("KFRAG_UNITS", 256);
	minunits = env_num("KFRAG_MINKB", 4) / 4;
	maxunits = env_num("KFRAG_MAXKB", 64) / 4;
	secs = env_num("KFRAG_SECS", 30);
	deadline = env_num("KFRAG_DEADLINE", 10);
	errors_ok = env_num("KFRAG_ERRORS_OK", 0) != 0;
	kill_at = env_num("KFRAG_KILL_AT", 0);
	umount_f_at = env_num("KFRAG_UMOUNT_F_AT", 0);
	if (sscanf(env_str("KFRAG_BLACKHOLE", "0:0"), "%u:%u", &bh_at, &bh_for) != 2) {
		kv_error("kfrag.blackhole must be START:SECONDS");
		return 2;
	}
	gap_ms = env_num("KFRAG_GAP_MS", 0);
	seed = env_num("KFRAG_SEED", 1);
	if (taphold_parse(env_str("KFRAG_TAP", "0"), &tapspec)) {
		kv_error("kfrag.tap must be AT:SECS:unread|slow (SECS > 0)");
		return 2;
	}
	if (tapspec.mode != TAP_OFF && (tapspec.at + tapspec.secs > secs || *env_str("KFRAG_DIR", ""))) {
		kv_error("kfrag.tap: the socket must close by kfrag.secs (AT + SECS <= secs), and "
			 "needs the guest's network (no kfrag.dir)");
		return 2;
	}
	tapspec.nfsport = env_num("KFRAG_NFSPORT", 2049);
	tapspec.nfsv4 = env_str("KFRAG_NFSVERS", "3")[0] == '4';
	cycles = env_num("KFRAG_CYCLES", 0);
	if (*env_str("KFRAG_DIR", "")) {
		mntdir = getenv("KFRAG_DIR");
		hostdir = 1;
		if (strcmp(spec, "-") || bh_for || umount_f_at || cycles || getenv("KFRAG_RPC_DEBUG")) {
			kv_error("kfrag.dir runs without netem, mount or tracing: no netem, blackhole, "
				 "umount_f_at, cycles or rpc_debug with it");
			return 2;
		}
	}
	write_delay_ms = env_num("KFRAG_TEST_WRITE_DELAY_MS", 0);
	if (!hostdir && (write_delay_ms || *env_str("KFRAG_TEST_STALL", ""))) {
		kv_error("kfrag.test_write_delay_ms and kfrag.test_stall are test hooks of the host "
			 "self-test: kfrag.dir only");
		return 2;
	}
	if (*env_str("KFRAG_TEST_STALL", "")) {
		char ph[16];

		if (sscanf(getenv("KFRAG_TEST_STALL"), "%d:%15[a-z]:%u", &stall_w, ph, &stall_ms) != 3 ||
		    stall_w < 0 || (unsigned)stall_w >= nwriters || !stall_ms) {
			kv_error("kfrag.test_stall must be WRITER:PHASE:MS (a writer of this run, MS > 0)");
			return 2;
		}
		for (i = 0; i < NPHASES && strcmp(ph, phase_name[i]); i++)
			;
		if (i == NPHASES) {
			kv_error("kfrag.test_stall: the phase is one of open, gap, write, close");
			return 2;
		}
		stall_phase = i;
	}
	if (!nwriters || nwriters > MAXWRITERS || !minunits || maxunits < minunits ||
	    units < maxunits) {
		kv_error("bad workload size (writers 1..32, 4 <= minkb <= maxkb, units >= maxkb/4)");
		return 2;
	}
	if (netem_parse(spec, &ns, err, sizeof(err))) {
		kv_error(err);
		return 2;
	}
	if (netem_active(&ns) && netem_setup("eth0", &ns, err, sizeof(err))) {
		kv_error(err);
		return 3;
	}
	printf("KFRAG-KV: netem=%s\n", spec);
	if (*env_str("KFRAG_TCP_WMEM", "")) {
		unsigned a, b, c;
		char v[64];
		int fd;

		if (hostdir || sscanf(getenv("KFRAG_TCP_WMEM"), "%u:%u:%u", &a, &b, &c) != 3 ||
		    !a || a > b || b > c) {
			kv_error("kfrag.tcp_wmem must be MIN:DEFAULT:MAX bytes, ascending (not with kfrag.dir)");
			return 2;
		}
		snprintf(v, sizeof(v), "%u %u %u", a, b, c);
		fd = open("/proc/sys/net/ipv4/tcp_wmem", O_WRONLY);
		if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v)) {
			kv_error("kfrag.tcp_wmem: cannot write /proc/sys/net/ipv4/tcp_wmem");
			return 3;
		}
		close(fd);
		printf("KFRAG-KV: tcp_wmem=%s\n", v);
	}
	if (!hostdir) {
		char feat[200];
		FILE *ff = fopen("/sys/class/net/eth0/device/features", "r");

		show_cmdline_params();
		/* a virtio NIC's negotiated features, bit i at position i */
		if (ff && fgets(feat, sizeof(feat), ff))
			printf("KFRAG-KV: nic.virtio_features=%.*s\n", (int)strcspn(feat, "\n"), feat);
		if (ff)
			fclose(ff);
	}
	tracing = hostdir ? -1 : dtortrace_start();
	if (env_num("KFRAG_RELAY", 0)) {
		char port[16];

		relay = mmap(NULL, sizeof(*relay), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (hostdir || relay == MAP_FAILED) {
			kv_error("kfrag.relay needs the guest's network (no kfrag.dir) and memory");
			return 2;
		}
		memset(relay, 0, sizeof(*relay));
		relay_pid = relay_start(env_str("KFRAG_SERVER", "10.0.2.2"),
					env_num("KFRAG_NFSPORT", 2049), relay);
		if (relay_pid < 0) {
			kv_error(relay->error);
			return 4;
		}
		snprintf(port, sizeof(port), "%u", KFRAG_RELAY_PORT);
		setenv("KFRAG_NFSADDR", "127.0.0.1", 1);
		setenv("KFRAG_NFSPORT", port, 1);
	}
	for (w = 0; w < cycles; w++) {
		rc = do_mount();
		if (rc)
			return rc;
		if (cycle_write(w)) {
			kv_error("a write in a mount/umount cycle failed");
			return 5;
		}
		if (umount("/mnt")) {
			kv_error("umount in a mount/umount cycle failed");
			return 5;
		}
	}
	if (cycles)
		printf("KFRAG-KV: mount_cycles=%u\n", cycles);
	rc = hostdir ? 0 : do_mount();
	if (rc)
		return rc;
	if (getenv("KFRAG_RPC_DEBUG")) /* asked for from the start */
		rpc_show_tasks();

	ws = mmap(NULL, sizeof(*ws) * nwriters, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gens = mmap(NULL, sizeof(*gens) * nwriters * units, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsure = mmap(NULL, nwriters * units, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	kmsg_lines = mmap(NULL, 2 * sizeof(*kmsg_lines), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	chased = kmsg_lines + 1;
	if (tapspec.mode != TAP_OFF) {
		tap = mmap(NULL, sizeof(*tap), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (tap == MAP_FAILED)
			tap = NULL;
		else
			*tap = tapspec;
	}
	if (ws == MAP_FAILED || gens == MAP_FAILED || unsure == MAP_FAILED || stop == MAP_FAILED ||
	    kmsg_lines == MAP_FAILED || (tapspec.mode != TAP_OFF && !tap)) {
		kv_error("mmap failed");
		return 5;
	}
	printf("KFRAG-KV: insnwin.1=redtest\n");
	fflush(stdout);
	cpu_sample(&busy0, &total0, &ctxt0);
	KFRAG_INSN_START(1);
	t0 = now_us();
	run_t0 = t0;
	end_us = t0 + (uint64_t)secs * 1000000;
	fflush(stdout);
	kmsg_pid = kmsg_start(env_num("KFRAG_KMSG_MS", 0), stop, kmsg_lines);
	if (kmsg_pid < 0)
		return 5;
	chase_pid = chase_start(env_num("KFRAG_CHASE_MS", 0), stop, chased);
	if (chase_pid < 0)
		return 5;
	if (tap) {
		tap_pid = fork();
		if (tap_pid == 0)
			taphold_child(tap, run_us);
		if (tap_pid < 0) {
			kv_error("kfrag.tap: fork failed");
			return 5;
		}
	}
	for (w = 0; w < nwriters; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			writer(w);
		if (pids[w] < 0) { /* the run is broken: the others stop at once */
			snprintf(fail, sizeof(fail), "writer %u could not be started: fork: %s", w,
				 strerror(errno));
			printf("KFRAG-KV: writer%u.exit=not started: fork: %s\n", w, strerror(errno));
			pids[w] = 0;
			*stop = 1;
			break;
		}
	}
	started = w;
	/*
	 * watchdog: a write in flight longer than the deadline is hung. At SECS
	 * the writers stop issuing writes (*stop; they watch the clock too) and
	 * the writes in flight drain: waited for until every writer has ended,
	 * for up to the deadline (give_up).
	 */
	give_up = end_us + (uint64_t)deadline * 1000000;
	for (;;) {
		unsigned running = 0;
		uint64_t now = now_us();

		for (w = 0; w < started; w++) {
			struct writer_state *s = &ws[w];
			uint64_t st = s->inflight_start_us;

			now = now_us(); /* after st: st <= now */

			if (pids[w] && waitpid(pids[w], &wstatus[w], WNOHANG) == pids[w]) {
				pids[w] = 0;
				ended[w] = 1;
			}
			if (pids[w])
				running++;
			if (st && now - st > (uint64_t)deadline * 1000000 && !s->hung_reported) {
				s->hung_reported = 1;
				s->hung++;
				printf("KFRAG-KV: hung.writer%u=unit %u x%u, in write() for %llus\n", w,
				       s->inflight_unit, s->inflight_n,
				       (unsigned long long)(now - st) / 1000000);
				fflush(stdout);
				rpc_show_tasks();
			}
		}
		if (!stopped && now >= end_us) {
			*stop = 1;
			__sync_synchronize();
			stopped = 1;
			for (w = 0; w < started; w++)
				alive_at_stop[w] = pids[w] != 0;
		}
		if (!running || now > give_up)
			break;
		if (kill_at && !killed && now - t0 >= (uint64_t)kill_at * 1000000) {
			unsigned mid = 0;

			for (w = 0; w < started; w++) {
				mid += ws[w].inflight_start_us != 0;
				if (pids[w]) {
					ours[w] = 1; /* an expected SIGKILL */
					kill(pids[w], SIGKILL);
				}
			}
			killed = 1;
			printf("KFRAG-KV: killed_writers=%u\nKFRAG-KV: killed_mid_write=%u\n",
			       started, mid);
			fflush(stdout);
		}
		if (umount_f_at && !umount_f_done && now - t0 >= (uint64_t)umount_f_at * 1000000) {
			unsigned opening = 0;

			/*
			 * The fault is for writes: not while a writer still opens
			 * its file (a failed open ends the writer and the run),
			 * for up to DEADLINE seconds more
			 */
			for (w = 0; w < started; w++)
				opening += pids[w] && ws[w].phase == PH_OPEN;
			if (!opening || now - t0 >= (uint64_t)(umount_f_at + deadline) * 1000000) {
				uint64_t late = (now - t0) / 1000 - (uint64_t)umount_f_at * 1000;

				/* busy: it stays mounted, the calls in flight fail */
				printf("KFRAG-KV: umount_f=%s\n",
				       umount2("/mnt", MNT_FORCE) ? strerror(errno) : "unmounted");
				if (late >= 100)
					printf("KFRAG-KV: umount_f_late_ms=%llu (%u writer(s) opening)\n",
					       (unsigned long long)late, opening);
				fflush(stdout);
				umount_f_done = 1;
			}
		}
		if (bh_for && bh_state == 0 && now - t0 >= (uint64_t)bh_at * 1000000) {
			netem_parse("loss=100", &hole, err, sizeof(err));
			if (netem_setup("eth0", &hole, err, sizeof(err)))
				printf("KFRAG-KV: blackhole.error=%s\n", err);
			bh_state = 1;
		} else if (bh_state == 1 && now - t0 >= (uint64_t)(bh_at + bh_for) * 1000000) {
			if (netem_setup("eth0", &ns, err, sizeof(err)))
				printf("KFRAG-KV: blackhole.error=%s\n", err);
			bh_state = 2;
			printf("KFRAG-KV: blackhole_secs=%u\n", bh_for);
			fflush(stdout);
		}
		/* wake at SECS on time; while draining, see each writer end */
		now = now_us();
		usleep(stopped ? 10000 : now >= end_us ? 0 : end_us - now < 100000 ? end_us - now : 100000);
	}
	*stop = 1;
	drain_end = now_us();
	/*
	 * the loop may end (every writer killed and reaped) inside a
	 * blackhole: lift it, or the RPCs the killed writers left behind
	 * would be sent into it until the VM ends, and the accounting would
	 * count them as live
	 */
	if (bh_state == 1) {
		if (netem_setup("eth0", &ns, err, sizeof(err)))
			printf("KFRAG-KV: blackhole.error=%s\n", err);
		bh_state = 2;
		printf("KFRAG-KV: blackhole_lifted_early=1\n");
	}
	if (kmsg_pid > 0) {
		int st;

		if (waitpid(kmsg_pid, &st, 0) != kmsg_pid || !WIFEXITED(st) || WEXITSTATUS(st))
			printf("KFRAG-KV: kmsg.error=the /dev/kmsg writer failed\n");
		printf("KFRAG-KV: kmsg_lines=%llu\n", *kmsg_lines);
	}
	if (chase_pid > 0) {
		int st;

		if (waitpid(chase_pid, &st, 0) != chase_pid || !WIFEXITED(st) || WEXITSTATUS(st))
			printf("KFRAG-KV: chase.error=the datagram sender failed\n");
		printf("KFRAG-KV: chased=%llu\n", *chased);
	}
	if (tap_pid > 0)
		tap_report(tap_pid);
	drain_ms = stopped && drain_end > end_us ? (drain_end - end_us) / 1000 : 0;
	wall = drain_end - t0;
	KFRAG_INSN_STOP(1);
	cpu_sample(&busy1, &total1, &ctxt1);
	/*
	 * a writer still alive after the drain is hung, in write() or not
	 * (stuck in open, close, between writes): it is killed
	 */
	for (w = 0; w < started; w++)
		if (pids[w]) {
			stuck++;
			ours[w] = 2;
			kill(pids[w], SIGKILL);
		}
	/* and reaped, so that its state is final (SIGKILL ends an NFS wait) */
	for (i = 0; i < 50; i++) {
		unsigned left = 0;

		for (w = 0; w < started; w++)
			if (pids[w] && waitpid(pids[w], &wstatus[w], WNOHANG) == pids[w]) {
				pids[w] = 0;
				ended[w] = 1;
			} else if (pids[w])
				left++;
		if (!left)
			break;
		usleep(100000);
	}
	for (w = 0; w < started; w++) {
		struct writer_state *s = &ws[w];

		if (pids[w])
			printf("KFRAG-KV: writer%u.exit=not reaped 5 s after SIGKILL\n", w);
		/* issued before the stop: in flight then, drained or not */
		inflight_at_stop += s->drained || (alive_at_stop[w] && s->inflight_start_us);
		drained_writes += s->drained;
		if (ours[w] != 2)
			continue;
		/* killed at the give-up: hung, counted once (the watchdog may have) */
		if (s->inflight_start_us) {
			if (s->hung_reported)
				continue;
			s->hung_reported = 1;
			s->hung++;
			printf("KFRAG-KV: hung.writer%u=unit %u x%u, still in write() after the drain "
			       "(%.1f s)\n", w, s->inflight_unit, s->inflight_n,
			       (drain_end - s->inflight_start_us) / 1e6);
		} else {
			s->hung++;
			printf("KFRAG-KV: hung.writer%u=alive after the drain, %.1f s after SECS "
			       "(not in write(): in %s)\n", w, (drain_end - end_us) / 1e6,
			       phase_name[s->phase >= 0 && s->phase < NPHASES ? s->phase : PH_GAP]);
		}
	}
	rpc_debug_quiet();
	/* how each writer ended: exit 0, or the SIGKILL we sent */
	for (w = 0; w < started; w++) {
		char what[200];
		int st = wstatus[w];

		if (!ended[w] || (WIFEXITED(st) && !WEXITSTATUS(st)) ||
		    (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && ours[w]))
			continue;
		if (WIFEXITED(st))
			snprintf(what, sizeof(what), "exited with status %d%s%s", WEXITSTATUS(st),
				 ws[w].why == WHY_OPEN ? ": open: " : ws[w].why == WHY_WRITE ? ": write: " : "",
				 ws[w].why ? strerror(ws[w].last_errno) : "");
		else
			snprintf(what, sizeof(what), "died of signal %d (%s)%s", WTERMSIG(st),
				 strsignal(WTERMSIG(st)), WTERMSIG(st) == SIGKILL ? ", not sent by the workload" : "");
		printf("KFRAG-KV: writer%u.exit=%s\n", w, what);
		if (!writers_failed++ && !fail[0])
			snprintf(fail, sizeof(fail), "writer %u %s", w, what);
		/* a failed write without KFRAG_ERRORS_OK: exit 5, as before */
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 1 && ws[w].why == WHY_WRITE))
			unexpected = 1;
	}

	lat = malloc(sizeof(*lat) * MAXLAT * nwriters);
	for (w = 0; w < started; w++) {
		writes += ws[w].writes;
		bytes += ws[w].bytes;
		errors += ws[w].errors;
		hung += ws[w].hung;
		memcpy(lat + nlat, ws[w].lat_us, ws[w].nlat * sizeof(*lat));
		nlat += ws[w].nlat;
		if (ws[w].errors)
			printf("KFRAG-KV: error.writer%u=%s\n", w, strerror(ws[w].last_errno));
	}
	qsort(lat, nlat, sizeof(*lat), cmp_u32);
	rpc_counters(&calls, &retrans);
	if (hostdir)
		sent = drops = -1;
	else
		netem_stats("eth0", &sent, &drops);
	printf("KFRAG-KV: writers=%u\nKFRAG-KV: writes=%llu\nKFRAG-KV: bytes=%llu\n"
	       "KFRAG-KV: write_errors=%llu\nKFRAG-KV: hung_writes=%llu\nKFRAG-KV: stuck_writers=%u\n"
	       "KFRAG-KV: inflight_at_stop=%u\nKFRAG-KV: drained_writes=%u\nKFRAG-KV: drain_ms=%llu\n"
	       "KFRAG-KV: writers_failed=%u\nKFRAG-KV: secs=%.1f\nKFRAG-KV: mbps=%.2f\n",
	       nwriters, writes, bytes, errors, hung, stuck, inflight_at_stop, drained_writes,
	       (unsigned long long)drain_ms, writers_failed + (started < nwriters), wall / 1e6,
	       wall ? bytes / (wall / 1e6) / 1e6 : 0.0);
	if (total1 > total0)
		printf("KFRAG-KV: cpu_busy_pct=%.1f\n", 100.0 * (busy1 - busy0) / (total1 - total0));
	if (writes)
		printf("KFRAG-KV: ctxt_per_write=%.1f\n", (double)(ctxt1 - ctxt0) / writes);
	if (nlat)
		printf("KFRAG-KV: lat_p50_ms=%.1f\nKFRAG-KV: lat_p99_ms=%.1f\nKFRAG-KV: lat_max_ms=%.1f\n",
		       lat[nlat / 2] / 1e3, lat[nlat * 99 / 100] / 1e3, lat[nlat - 1] / 1e3);
	printf("KFRAG-KV: rpc_calls=%lld\nKFRAG-KV: rpc_retrans=%lld\n"
	       "KFRAG-KV: qdisc_sent=%lld\nKFRAG-KV: qdisc_drops=%lld\n", calls, retrans, sent, drops);
	fflush(stdout);

	/*
	 * the manifest: what the disk must hold, after the drain. One line for
	 * each writer started, and their number first: host/disk-oracle fails
	 * a manifest that lacks a line.
	 */
	printf("KFRAG-KV: writers_started=%u\n", started);
	for (w = 0; w < started; w++) {
		volatile uint32_t *g = gens + (size_t)w * units;
		uint32_t u;
		int inflight = ws[w].inflight_start_us != 0;

		printf("KFRAG-MANIFEST: file=%u units=%u gens=", w, units);
		for (u = 0; u < units; u++)
			printf("%s%u%s", u ? "," : "", g[u],
			       unsure[(size_t)w * units + u] ||
			       (inflight && u >= ws[w].inflight_unit &&
				u < ws[w].inflight_unit + ws[w].inflight_n) ? "+" : "");
		printf("\n");
	}
	fflush(stdout);
	/*
	 * killed writers' RPCs may still run: give them the deadline to end
	 * (the umount fails with EBUSY until they have). Not after a hung
	 * write: it holds the mount for good.
	 */
	for (w = 0, rc = -1; !hostdir && !stuck && w < deadline * 10; w++) {
		rc = umount("/mnt");
		if (!rc || errno != EBUSY)
			break;
		usleep(100000);
	}
	if (!hostdir && !stuck && rc)
		printf("KFRAG-KV: umount.error=%s\n", strerror(errno));
	/*
	 * umount() returns before the superblock goes while RPCs of killed
	 * writers still run (a hard mount's async WRITEs: v3.1 keeps the
	 * superblock active for their open contexts), e.g. in an NFSv4.1
	 * state recovery after a server restart. Their destructors are live
	 * calls, not leaks: after a kill or umount -f the accounting waits
	 * for the last NFS volume to go, up to KFRAG_VOLUMES_WAIT s (30), and
	 * says how long it took or that one is left.
	 */
	if (!hostdir && !rc && (killed || umount_f_done))
		nfs_volumes_wait(env_num("KFRAG_VOLUMES_WAIT", 30) * 1000);
	/* the destructor accounting: after the drain and the umount, never before */
	t0 = now_us();
	dtortrace_report(tracing);
	printf("KFRAG-KV: dtor.report_secs=%.1f\n", (now_us() - t0) / 1e6);
	if (relay) {
		kill(-relay_pid, SIGKILL);
		printf("KFRAG-KV: relay.conns=%llu\nKFRAG-KV: relay.spliced=%llu\n"
		       "KFRAG-KV: relay.copied=%llu\n", relay->conns, relay->spliced, relay->copied);
		if (relay->failed)
			printf("KFRAG-KV: relay.error=%s\n", relay->error);
	}
	kmemleak_report();
	if (writers_failed || started < nwriters) {
		char e[400];

		snprintf(e, sizeof(e), "%s%s", fail,
			 writers_failed > 1 ? " (and more: see the writer<N>.exit lines)" : "");
		kv_error(e);
		return unexpected || started < nwriters ? 6 : 5;
	}
	if (!writes) {
		kv_error("no write completed");
		return 5;
	}
	return errors && !errors_ok ? 5 : 0;
}
