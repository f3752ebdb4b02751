/*
 * Destructor accounting from the kernel's trace events (series patch
 * "net: trace the lifetime of paged fragment destructors"): every
 * skb_frag_destructor_init must be matched by exactly one _destroy, the
 * count never below zero, no ref after the count reached 0, and none live
 * once the NFS mount is gone.
 *
 * The rules do not depend on the order of events from different CPUs.
 * trace_pipe merges the CPUs' buffers, and on 2 vCPUs a ref's event came
 * out after the next init of its destructor (19 of 46,068 lifetimes of a
 * 105 s run; 44 with the global trace clock), and a destroy's: an event
 * is recorded after its operation, and only the outermost event being
 * written on a CPU makes its buffer's events visible, so a softirq's ref
 * that interrupted another event waits for it while the reference moves
 * on. What each ref and unref event carries is the count its atomic
 * operation returned: a ref must return at least 2, an unref at least 0
 * (init prints 1 whatever the count was). The rest is counted per
 * destructor address, over all its lifetimes, and checked at the end:
 * it was initialised, destroys = inits, unrefs = refs + inits (and, the
 * trace being complete, unrefs that returned 0 = destroys). A double
 * unref, a ref after the count reached 0, a second destroy or a re-init
 * of a live destructor breaks one of them: the count goes below zero,
 * a ref returns 1, or the totals do not balance. Two things these rules
 * assume or cannot see: tracing starts before the first init (the
 * events of a lifetime begun earlier would count against the next one:
 * dtortrace_start() runs before the mount); and a double unref whose
 * extra reference is leaked by another holder of the same lifetime, or
 * a stale holder's ref and unref that land in the next lifetime, leave
 * every count right: those the data oracles must catch (poisoned,
 * corrupted).
 *
 *   dtortrace_start()  enables the events (before the mount) and forks a
 *                      reader that consumes trace_pipe as the run goes,
 *                      so that runs of any length fit the ring buffer;
 *                      returns 0 when the kernel has none (vanilla):
 *                      "absent", or when KFRAG_DTORTRACE=0: "off"
 *                      (benchmarks: the events cost time); -2 when
 *                      the kernel has them but they could not be
 *                      switched on or the reader not started: "lost",
 *                      with the reason in dtor.error
 *   dtortrace_report() first lets the destructors settle: calls that
 *                      outlive the umount (NFSv4's asynchronous CLOSE,
 *                      whose superblock reference umount() does not wait
 *                      for) finish; the reader waits, tracing on, until
 *                      none is live, at most DT_SETTLE_MS. Then it stops
 *                      tracing; the reader drains the pipe and prints KV
 *                      lines:
 *     dtor.settle_ms    how long that took (DT_SETTLE_MS: it did not)
 *     dtor.trace=absent|off|complete|lost   (lost: the ring buffer overran
 *                                            or the reader failed: the
 *                                            counts below are partial)
 *     dtor.inits dtor.destroys dtor.refs dtor.unrefs
 *     dtor.destroys_irqs_off   destroys whose last reference went with
 *                        interrupts off (netpoll), from the context
 *                        flags of options/latency-format
 *     dtor.destroys_noflags    destroys whose line had no such flags
 *     dtor.live_at_end   initialised, not destroyed
 *     dtor.bad           events that break the rules (the first few are
 *                        named in dtor.bad.N lines)
 */
#ifndef KFRAG_DTORTRACE_H
#define KFRAG_DTORTRACE_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DT_DIR "/sys/kernel/debug/tracing"
#define DT_SLOTS 65536 /* distinct destructor addresses: RPC slots, a few hundred */
#define DT_SETTLE_MS 10000

static int dt_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

struct dt_slot {
	unsigned long addr;
	unsigned long inits, destroys, zeros;	/* zeros: unrefs that returned 0 */
	long balance;	/* refs - unrefs + inits, over all lifetimes */
};

struct dt_state {
	struct dt_slot *t;
	unsigned long long inits, destroys, destroys_irqs_off, destroys_noflags, refs, unrefs, bad;
	unsigned long long unparsed;	/* lines not understood: the verdict fails on any */
	int full;	/* more destructors than DT_SLOTS */
};

static struct dt_slot *dt_slot(struct dt_slot *t, unsigned long a)
{
	unsigned long h = (a >> 4) * 0x9e3779b97f4a7c15UL;
	unsigned i;

	for (i = 0; i < DT_SLOTS; i++) {
		struct dt_slot *s = &t[(h + i) % DT_SLOTS];

		if (s->addr == a || !s->addr) {
			s->addr = a;
			return s;
		}
	}
	return NULL;
}

/*
 * Whether the event that starts at e in line was recorded with
 * interrupts off. With options/latency-format every line begins
 * "comm-pid cpu" and the context flags, in one word, e.g. "1d.s2": the
 * CPU's number, 'd' when interrupts were off ('.' when on, 'X' when the
 * arch cannot tell), '.' or 'N' (need_resched), '.', 'h', 's' or 'H'
 * (hard/soft interrupt). The last such word before the event is it.
 */
static int dt_irqs_off(const char *line, const char *e)
{
	const char *p = line, *t, *w;
	int off = -1;

	while (p < e) {
		p += strspn(p, " \t");
		t = w = p;
		p += strcspn(p, " \t");
		if (p > e)
			break;
		while (w < p && *w >= '0' && *w <= '9')
			w++;
		if (w > t && p - w >= 3 && strchr("dX.", w[0]) && strchr("N.", w[1]) &&
		    strchr("Hhs.", w[2]))
			off = w[0] == 'd' ? 1 : w[0] == '.' ? 0 : -1;	/* X: cannot tell */
	}
	return off;
}

/* One line of the trace: check it against the rules, count it. */
static void dt_line(struct dt_state *d, char *line)
{
	char *e = strstr(line, "skb_frag_destructor_"), ev[32];
	const char *why = NULL;
	struct dt_slot *s;
	unsigned long a;
	int ref = 0;

	if (line[0] == '#' || !line[strspn(line, " \t")] || d->full)
		return;
	/* only our events are enabled: a line we cannot read is a format we do not know */
	if (!e || sscanf(e, "skb_frag_destructor_%31[a-z]: destructor=%lx ref=%d", ev, &a, &ref) < 2 ||
	    (strcmp(ev, "init") && strcmp(ev, "destroy") && strcmp(ev, "ref") && strcmp(ev, "unref"))) {
		if (++d->unparsed <= 3)
			printf("KFRAG-KV: dtor.unparsed.%llu=%.200s\n", d->unparsed, line);
		return;
	}
	s = dt_slot(d->t, a);
	if (!s) {
		printf("KFRAG-KV: dtor.error=more than %d destructors\n", DT_SLOTS);
		d->full = 1;
		return;
	}
	/* the counts the atomic operations returned; the rest in dt_end() */
	if (!strcmp(ev, "init")) {
		d->inits++;
		s->inits++;
		s->balance++;
	} else if (!strcmp(ev, "destroy")) {
		d->destroys++;
		s->destroys++;
		switch (dt_irqs_off(line, e)) {
		case 1: d->destroys_irqs_off++; break;
		case -1: d->destroys_noflags++; break;
		}
	} else {
		*(ev[0] == 'r' ? &d->refs : &d->unrefs) += 1;
		s->balance += ev[0] == 'r' ? 1 : -1;
		if (ref < 0)
			why = "count below zero";
		else if (ev[0] == 'r' && ref <= 1)
			why = "ref of a destructor whose count had reached 0";
		else if (ev[0] == 'u' && ref == 0)
			s->zeros++;
	}
	if (why && ++d->bad <= 5) {
		e[strcspn(e, "\n")] = 0;
		printf("KFRAG-KV: dtor.bad.%llu=%s: %s\n", d->bad, why, e);
	}
}

/*
 * The end of the trace: every destructor, over all its lifetimes,
 * destroyed once per init, its count at 0 once per destroy, and its
 * refs and unrefs balanced. Returns how many are live (inits not
 * destroyed).
 */
static unsigned long long dt_end(struct dt_state *d)
{
	unsigned long long live = 0;
	int i;

	for (i = 0; i < DT_SLOTS; i++) {
		struct dt_slot *s = &d->t[i];
		const char *why = NULL;

		if (!s->addr)
			continue;
		if (!s->inits) {
			why = "events of a destructor never initialised";
		} else if (s->destroys < s->inits) {
			/* live: judged by live_at_end; the first few named */
			if (live < 5)
				printf("KFRAG-KV: dtor.live.%llu=destructor=%lx inits=%lu destroys=%lu "
				       "balance=%ld\n", live + 1, s->addr, s->inits, s->destroys, s->balance);
			live += s->inits - s->destroys;
			continue;
		} else if (s->destroys > s->inits) {
			why = "more destroys than inits";
		} else if (s->balance) {
			why = "refs and unrefs do not balance";
		} else if (s->zeros != s->destroys) {
			why = "unrefs that returned 0 and destroys differ (an event lost?)";
		}
		if (why && ++d->bad <= 5)
			printf("KFRAG-KV: dtor.bad.%llu=%s: destructor=%lx inits=%lu destroys=%lu zeros=%lu "
			       "balance=%ld\n", d->bad, why, s->addr, s->inits, s->destroys, s->zeros,
			       s->balance);
	}
	return live;
}

/* The counts, as KV lines; trace: complete or lost. */
static void dt_print(const struct dt_state *d, unsigned long long live, const char *trace)
{
	printf("KFRAG-KV: dtor.trace=%s\nKFRAG-KV: dtor.inits=%llu\nKFRAG-KV: dtor.destroys=%llu\n"
	       "KFRAG-KV: dtor.destroys_irqs_off=%llu\nKFRAG-KV: dtor.destroys_noflags=%llu\n"
	       "KFRAG-KV: dtor.refs=%llu\nKFRAG-KV: dtor.unrefs=%llu\n"
	       "KFRAG-KV: dtor.live_at_end=%llu\nKFRAG-KV: dtor.bad=%llu\nKFRAG-KV: dtor.unparsed=%llu\n",
	       trace, d->inits, d->destroys, d->destroys_irqs_off, d->destroys_noflags, d->refs,
	       d->unrefs, live, d->bad, d->unparsed);
}

static unsigned long long dt_overruns(void)
{
	unsigned long long sum = 0, n;
	char path[128], line[256];
	int cpu;

	for (cpu = 0; cpu < 64; cpu++) {
		FILE *f;

		snprintf(path, sizeof(path), DT_DIR "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &n) == 1)
				sum += n;
		fclose(f);
	}
	return sum;
}

static volatile sig_atomic_t dt_stop, dt_settle;
static void dt_on_stop(int sig) { (void)sig; dt_stop = 1; }
static void dt_on_settle(int sig) { (void)sig; dt_settle = 1; }
static int dt_settled[2] = { -1, -1 }; /* reader -> parent: none live (or gave up) */

static long long dt_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * The reader (a child process): consume trace_pipe; once asked to settle
 * (SIGUSR2), tell the parent (a byte on dt_settled) when no destructor is
 * live or DT_SETTLE_MS passed; when told to stop (SIGUSR1, sent once
 * tracing is off) and the pipe is empty, print the report.
 */
static void dt_reader(void)
{
	static char buf[1 << 16];
	struct dt_state d = { 0 };
	size_t len = 0;
	int fd, failed = 0;
	unsigned long long live;
	long long settle_t0 = -1, settle_ms = -1;

	signal(SIGUSR1, dt_on_stop);
	signal(SIGUSR2, dt_on_settle);
	close(dt_settled[0]);
	d.t = calloc(DT_SLOTS, sizeof(*d.t));
	fd = open(DT_DIR "/trace_pipe", O_RDONLY | O_NONBLOCK);
	if (!d.t || fd < 0) {
		printf("KFRAG-KV: dtor.trace=lost\nKFRAG-KV: dtor.error=cannot read "
		       DT_DIR "/trace_pipe\n");
		fflush(stdout);
		_exit(1);
	}
	for (;;) {
		int stop = dt_stop; /* read before the pipe: empty after it means drained */
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		char *p, *nl;

		if (dt_settle && settle_t0 < 0)
			settle_t0 = dt_now_ms();
		/*
		 * Settled: none live and every reference's unref seen (judged
		 * once the pipe is empty: a late event from a stalled vCPU may
		 * still come) or DT_SETTLE_MS passed (however busy the pipe).
		 */
		if (settle_t0 >= 0 && settle_ms < 0 &&
		    ((n <= 0 && d.destroys >= d.inits && d.inits + d.refs == d.unrefs) ||
		     dt_now_ms() - settle_t0 >= DT_SETTLE_MS)) {
			settle_ms = dt_now_ms() - settle_t0;
			if (write(dt_settled[1], "s", 1) != 1)
				failed = 1;
		}
		if (n > 0) {
			len += n;
			buf[len] = 0;
			for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
				*nl = 0;
				dt_line(&d, p);
			}
			len -= p - buf;
			memmove(buf, p, len);
			if (len == sizeof(buf) - 1) { /* a line longer than buf: never */
				d.unparsed++;
				len = 0;
			}
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			printf("KFRAG-KV: dtor.error=reading trace_pipe: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		if (stop)
			break;
		usleep(20000);
	}
	close(fd);
	live = dt_end(&d);
	printf("KFRAG-KV: dtor.settle_ms=%lld\n", settle_ms);
	dt_print(&d, live, failed || d.full || dt_overruns() ? "lost" : "complete");
	fflush(stdout);
	_exit(0);
}

static pid_t dt_pid;

/*
 * 1: tracing, a reader runs; 0: the kernel has no such events; -1: off;
 * -2: the kernel has them, but accounting could not start (said why)
 */
static int dtortrace_start(void)
{
	static const char *ev[] = { "init", "ref", "unref", "destroy" };
	const char *knob = getenv("KFRAG_DTORTRACE");
	char p[256];
	unsigned i;

	mkdir("/sys/kernel/debug", 0755);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(DT_DIR "/events/skb/skb_frag_destructor_init/enable", W_OK))
		return 0;
	if (knob && !strcmp(knob, "0"))
		return -1;
	dt_write(DT_DIR "/tracing_on", "0");
	dt_write(DT_DIR "/trace", "");
	/* the reader keeps up; this covers its scheduling delays */
	dt_write(DT_DIR "/buffer_size_kb", "16384");
	/* the context flags of each event: dt_irqs_off() reads them */
	if (dt_write(DT_DIR "/options/latency-format", "1")) {
		printf("KFRAG-KV: dtor.error=options/latency-format: %s\n", strerror(errno));
		return -2;
	}
	for (i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), DT_DIR "/events/skb/skb_frag_destructor_%s/enable", ev[i]);
		if (dt_write(p, "1")) {
			printf("KFRAG-KV: dtor.error=enabling %s: %s\n", ev[i], strerror(errno));
			return -2;
		}
	}
	if (pipe(dt_settled)) {
		printf("KFRAG-KV: dtor.error=pipe: %s\n", strerror(errno));
		return -2;
	}
	fflush(stdout); /* the child must not print the parent's buffered lines */
	dt_pid = fork();
	if (dt_pid == 0)
		dt_reader();
	if (dt_pid < 0) {
		printf("KFRAG-KV: dtor.error=fork: %s\n", strerror(errno));
		return -2;
	}
	close(dt_settled[1]);
	dt_write(DT_DIR "/tracing_on", "1");
	return 1;
}

static void dtortrace_report(int started)
{
	struct pollfd pfd;
	int status, n;
	char c;

	if (started <= 0) {
		printf("KFRAG-KV: dtor.trace=%s\n",
		       started == -2 ? "lost" : started ? "off" : "absent");
		return;
	}
	/* what is still live when the mount is gone gets DT_SETTLE_MS */
	kill(dt_pid, SIGUSR2);
	/* the reader answers within DT_SETTLE_MS; a dead or stuck one not */
	pfd.fd = dt_settled[0];
	pfd.events = POLLIN;
	while ((n = poll(&pfd, 1, DT_SETTLE_MS + 5000)) < 0 && errno == EINTR)
		;
	if (n != 1 || read(dt_settled[0], &c, 1) != 1)
		printf("KFRAG-KV: dtor.error=the trace reader did not settle\n");
	close(dt_settled[0]);
	dt_write(DT_DIR "/tracing_on", "0");
	fflush(stdout);
	kill(dt_pid, SIGUSR1);
	if (waitpid(dt_pid, &status, 0) != dt_pid || !WIFEXITED(status) || WEXITSTATUS(status))
		printf("KFRAG-KV: dtor.trace=lost\nKFRAG-KV: dtor.error=the trace reader failed\n");
}

#endif
