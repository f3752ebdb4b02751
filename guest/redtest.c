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
 *   KFRAG_MAXKB largest write (64) KFRAG_SECS run time (30)
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
 *   KFRAG_UMOUNT_F_AT s: umount -f (MNT_FORCE: aborts the calls in flight)
 *   KFRAG_CYCLES n: n mount, write, umount cycles before the workload
 *   KFRAG_ERRORS_OK 1: a failed write (EIO from a soft mount) is counted,
 *     its units may hold either generation, and the writer goes on
 * Output: KFRAG-KV lines (writes, MB/s, latencies, hung writes, RPC
 * counters, netem counters, guest CPU busy %, the destructor accounting of dtortrace.h
 * after the umount, kmemleak's report count when the kernel has it) and one KFRAG-MANIFEST line per file:
 *   KFRAG-MANIFEST: file=F units=U gens=G,G,...   (G = last generation whose
 *   write() returned; "G+" when a write of G+1 was still in flight)
 * Exit: 0 the workload ran; 2 bad arguments; 3 netem; 4 mount; 5 writes failed
 * (unless KFRAG_ERRORS_OK) or none completed.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/stamp.h"
#include "cpustat.h"
#include "dtortrace.h"
#include "netem.h"

#define MAXWRITERS 32
#define MAXLAT 50000

struct writer_state {
	volatile uint64_t inflight_start_us; /* 0: no write in flight */
	volatile uint32_t inflight_unit, inflight_n;
	volatile int hung_reported;
	volatile uint64_t writes, bytes, errors, hung;
	volatile int last_errno, done;
	uint32_t nlat;
	uint32_t lat_us[MAXLAT];
};

static struct writer_state *ws;
static volatile uint32_t *gens;   /* [writer][unit] */
static volatile uint8_t *unsure;  /* [writer][unit]: a write of gens+1 failed */
static int errors_ok;
static unsigned nwriters, units, maxunits, secs, deadline, gap_ms;
static unsigned long seed;

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

static void kv_error(const char *what)
{
	printf("KFRAG-KV: redtest.error=%s\n", what);
	fflush(stdout);
}

static int do_write(int w, int fd, unsigned char *buf, uint32_t unit, uint32_t n)
{
	struct writer_state *s = &ws[w];
	volatile uint32_t *g = gens + (size_t)w * units;
	size_t len = (size_t)n * KFRAG_UNIT;
	uint64_t t0, dt;
	ssize_t r;
	uint32_t i;

	for (i = 0; i < n; i++)
		kfrag_stamp_unit(buf + (size_t)i * KFRAG_UNIT, w, w, unit + i, g[unit + i] + 1);
	s->inflight_unit = unit;
	s->inflight_n = n;
	s->hung_reported = 0;
	if (gap_ms)
		usleep(gap_ms * 1000);
	t0 = now_us();
	s->inflight_start_us = t0;
	r = pwrite(fd, buf, len, (off_t)unit * KFRAG_UNIT);
	dt = now_us() - t0;
	if (r == (ssize_t)len)
		for (i = 0; i < n; i++) {
			g[unit + i]++;
			unsure[(size_t)w * units + unit + i] = 0;
		}
	else /* the server may or may not have the new generation */
		for (i = 0; i < n; i++)
			unsure[(size_t)w * units + unit + i] = 1;
	s->inflight_start_us = 0;
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
	s->writes++;
	s->bytes += len;
	if (s->nlat < MAXLAT)
		s->lat_us[s->nlat++] = dt > UINT32_MAX ? UINT32_MAX : dt;
	return 0;
}

static void writer(int w, uint64_t end_us)
{
	unsigned char *buf;
	char path[64];
	uint32_t u, n;
	int fd;

	srandom(seed * 1000 + w);
	snprintf(path, sizeof(path), "/mnt/w%03d.dat", w);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	if (fd < 0 || posix_memalign((void **)&buf, KFRAG_UNIT, (size_t)maxunits * KFRAG_UNIT)) {
		ws[w].errors++;
		ws[w].last_errno = errno;
		_exit(1);
	}
	/* every unit gets generation 1, in order; then random rewrites */
	for (u = 0; u < units; u += n) {
		n = units - u < maxunits ? units - u : maxunits;
		if (do_write(w, fd, buf, u, n) && !errors_ok)
			_exit(1);
	}
	while (now_us() < end_us) {
		n = 1 + random() % maxunits;
		u = random() % (units - n + 1);
		if (do_write(w, fd, buf, u, n) && !errors_ok)
			_exit(1);
	}
	close(fd);
	ws[w].done = 1;
	_exit(0);
}

/*
 * A write hangs: the kernel lists its RPC tasks and their wait queues
 * (any write to rpc_debug does), and from then on logs what the RPC
 * transport does (RPCDBG_XPRT | RPCDBG_TRANS, or KFRAG_RPC_DEBUG).
 */
static void rpc_show_tasks(void)
{
	const char *v = env_str("KFRAG_RPC_DEBUG", "129");
	int fd = open("/proc/sys/sunrpc/rpc_debug", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
			perror("rpc_debug");
		close(fd);
	}
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
	const char *server = env_str("KFRAG_SERVER", "10.0.2.2");
	const char *export = getenv("KFRAG_EXPORT");
	const char *proto = env_str("KFRAG_PROTO", "tcp");
	const char *extra = env_str("KFRAG_MOUNTOPTS", "");
	unsigned long mntport = env_num("KFRAG_MNTPORT", 0);
	char src[512], opts[1024];

	if (!export || !mntport) {
		kv_error("need kfrag.export= and kfrag.mntport= (from scripts/nfs-server start)");
		return 2;
	}
	if (strcmp(proto, "tcp") && strcmp(proto, "udp")) {
		kv_error("kfrag.proto must be tcp or udp");
		return 2;
	}
	snprintf(src, sizeof(src), "%s:%s", server, export);
	/*
	 * No mount.nfs in the guest: the kernel's text options. addr= and
	 * mountport= replace what mount.nfs would ask rpcbind; nolock because
	 * there is no statd; mountproto=tcp whatever the data transport.
	 */
	snprintf(opts, sizeof(opts),
		 "vers=3,proto=%s,addr=%s,port=%lu,mountaddr=%s,mountport=%lu,mountproto=tcp,"
		 "mountvers=3,nolock,hard%s%s",
		 proto, server, env_num("KFRAG_NFSPORT", 2049), server, mntport,
		 *extra ? "," : "", extra);
	printf("KFRAG-KV: mount.src=%s\nKFRAG-KV: mount.opts=%s\n", src, opts);
	fflush(stdout);
	mkdir("/mnt", 0755);
	if (mount(src, "/mnt", "nfs", 0, opts)) {
		char e[700];

		snprintf(e, sizeof(e), "mount %s failed: %s (is the host's NFS server up, "
			 "export and mntport right? see mount.opts)", src, strerror(errno));
		kv_error(e);
		return 4;
	}
	return 0;
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

/* kmemleak (debug kernels): two scans, then the number of reports. */
static void kmemleak_report(void)
{
	char line[256];
	unsigned n = 0;
	FILE *f;
	int i;

	if (access("/sys/kernel/debug/kmemleak", W_OK))
		return;
	for (i = 0; i < 2; i++) {
		f = fopen("/sys/kernel/debug/kmemleak", "w");
		if (!f)
			return;
		fputs("scan", f);
		fclose(f);
	}
	f = fopen("/sys/kernel/debug/kmemleak", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "unreferenced object", 19))
			continue;
		if (++n <= 3) {
			line[strcspn(line, "\n")] = 0;
			printf("KFRAG-KV: kmemleak.%u=%s\n", n, line);
		}
	}
	if (f)
		fclose(f);
	printf("KFRAG-KV: kmemleak=%u\n", n);
	fflush(stdout);
}

int main(void)
{
	struct netem_spec ns;
	char err[512];
	const char *spec = env_str("KFRAG_NETEM", "-");
	uint64_t t0, end_us, give_up, wall;
	unsigned w, stuck = 0, cycles, umount_f_at, umount_f_done = 0, kill_at, bh_at, bh_for, killed = 0, bh_state = 0;
	struct netem_spec hole;
	unsigned long long writes = 0, bytes = 0, errors = 0, hung = 0, nlat = 0;
	long long calls, retrans, sent, drops;
	unsigned long long busy0, total0, busy1, total1, ctxt0, ctxt1;
	uint32_t *lat;
	int rc, status, tracing;
	pid_t pids[MAXWRITERS];

	nwriters = env_num("KFRAG_WRITERS", 4);
	units = env_num("KFRAG_UNITS", 256);
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
	if (!nwriters || nwriters > MAXWRITERS || !maxunits || units < maxunits) {
		kv_error("bad workload size (writers 1..32, maxkb >= 4, units >= maxkb/4)");
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
	tracing = dtortrace_start();
	cycles = env_num("KFRAG_CYCLES", 0);
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
	rc = do_mount();
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
	if (ws == MAP_FAILED || gens == MAP_FAILED || unsure == MAP_FAILED) {
		kv_error("mmap failed");
		return 5;
	}
	cpu_sample(&busy0, &total0, &ctxt0);
	t0 = now_us();
	end_us = t0 + (uint64_t)secs * 1000000;
	for (w = 0; w < nwriters; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			writer(w, end_us);
	}
	/* watchdog: a write in flight longer than the deadline is hung */
	give_up = end_us + (uint64_t)deadline * 1000000;
	for (;;) {
		unsigned running = 0;
		uint64_t now = now_us();

		for (w = 0; w < nwriters; w++) {
			struct writer_state *s = &ws[w];
			uint64_t st = s->inflight_start_us;

			now = now_us(); /* after st: st <= now */

			if (pids[w] && waitpid(pids[w], &status, WNOHANG) == pids[w])
				pids[w] = 0;
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
		if (!running || now > give_up)
			break;
		if (kill_at && !killed && now - t0 >= (uint64_t)kill_at * 1000000) {
			unsigned mid = 0;

			for (w = 0; w < nwriters; w++) {
				mid += ws[w].inflight_start_us != 0;
				if (pids[w])
					kill(pids[w], SIGKILL);
			}
			killed = 1;
			printf("KFRAG-KV: killed_writers=%u\nKFRAG-KV: killed_mid_write=%u\n",
			       nwriters, mid);
			fflush(stdout);
		}
		if (umount_f_at && !umount_f_done && now - t0 >= (uint64_t)umount_f_at * 1000000) {
			/* busy: it stays mounted, the calls in flight fail */
			printf("KFRAG-KV: umount_f=%s\n",
			       umount2("/mnt", MNT_FORCE) ? strerror(errno) : "unmounted");
			fflush(stdout);
			umount_f_done = 1;
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
		usleep(100000);
	}
	wall = now_us() - t0;
	cpu_sample(&busy1, &total1, &ctxt1);
	for (w = 0; w < nwriters; w++)
		if (pids[w]) {
			stuck++;
			kill(pids[w], SIGKILL);
		}

	lat = malloc(sizeof(*lat) * MAXLAT * nwriters);
	for (w = 0; w < nwriters; w++) {
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
	netem_stats("eth0", &sent, &drops);
	printf("KFRAG-KV: writers=%u\nKFRAG-KV: writes=%llu\nKFRAG-KV: bytes=%llu\n"
	       "KFRAG-KV: write_errors=%llu\nKFRAG-KV: hung_writes=%llu\nKFRAG-KV: stuck_writers=%u\n"
	       "KFRAG-KV: secs=%.1f\nKFRAG-KV: mbps=%.2f\n",
	       nwriters, writes, bytes, errors, hung, stuck, wall / 1e6,
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

	/* the manifest: what the disk must hold */
	for (w = 0; w < nwriters; w++) {
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
	/* killed writers' RPCs may still run: give them the deadline to end */
	for (w = 0, rc = -1; !stuck && w < deadline * 10; w++) {
		rc = umount("/mnt");
		if (!rc || errno != EBUSY)
			break;
		usleep(100000);
	}
	if (!stuck && rc)
		printf("KFRAG-KV: umount.error=%s\n", strerror(errno));
	t0 = now_us();
	dtortrace_report(tracing);
	printf("KFRAG-KV: dtor.report_secs=%.1f\n", (now_us() - t0) / 1e6);
	kmemleak_report();
	if (!writes) {
		kv_error("no write completed");
		return 5;
	}
	return errors && !errors_ok ? 5 : 0;
}
