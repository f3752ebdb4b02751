/*
 * kfrag-stream: TCP stream throughput and guest CPU, through plain send()
 * and through the sendpage path (sendfile() from tmpfs), to the host
 * (KFRAG_HOST:KFRAG_PORT, host/discard) and over the guest's loopback.
 *
 * Runs the four cases one after another, KFRAG_SECS seconds each, and
 * reports per case:  KFRAG-KV: stream.<target>.<mode>.mbps=...
 *                    KFRAG-KV: stream.<target>.<mode>.cpu_pct=...
 *                    KFRAG-KV: stream.<target>.<mode>.bytes=...
 * (cpu_pct: the guest's busy share of all CPU time, from /proc/stat; it
 * includes softirq work, which per-process accounting would miss).
 *
 * With KFRAG_SRCPORT (host/discard chargen on KFRAG_HOST) a fifth case, host.recv:
 * the guest reads the host's stream for KFRAG_SECS (after 16 MiB of
 * warm-up) and closes. With
 * KFRAG_UDPPORT (host/udpsource) small-packet receive, host.rx<size>:
 * KFRAG_UDPFRAMES (2000) datagrams of each payload size of
 * KFRAG_UDPSIZES ("64,512,1472", up to 3), sent by the host
 * KFRAG_UDPGAP_US (200) apart, counted per byte of payload received
 * (.bytes, .frames; a lost datagram voids the case); with KFRAG_UDPRR=1
 * in lock-step instead: the host sends the next datagram once the guest
 * has read the last and written a byte to its debug port (I/O port
 * 0x402, scripts/vmrun VM_DEBUGCON), so that no two share an interrupt.
 * Either way every datagram is (nearly always) an interrupt that wakes an
 * idle guest: the cost is mostly per datagram, and the MB/s figure is the
 * host's pace. Per case also .irqs: the interrupts and softirqs while its
 * window was open (from /proc, read outside it).
 *
 * With KFRAG_PPPORT (host/discard pingpong) the lock-step TCP cases,
 * host.ppsend, host.ppsendfile and host.pprecv: KFRAG_PPSTEPS (2000)
 * exchanges of KFRAG_PPSTEP (1024) bytes one way and one byte back
 * (pp_case() below), counted per byte of the steps.
 *
 * With KFRAG_IDLEMS (milliseconds) last a window of an idle guest,
 * guest.idle (idle_case() below): its .insns and .irqs give the cost of a
 * timer tick.
 *
 * KFRAG_CASES (default "host,lo,recv,rx") names the groups of cases to
 * run: host and lo are the send() and sendfile() cases to each target,
 * recv, rx and pp the receive and lock-step ones (which also need their
 * port). The
 * benchmark runs each group in a VM of its own, under QEMU's -icount
 * (scripts/bench-stream).
 *
 * Each case is a window of the instruction counter (common/insnmark.h;
 * scripts/vmrun VM_INSNCOUNT reports stream.<target>.<mode>.insns): from
 * the first byte sent until the receiver has read the last one and closed
 * (the drain after SHUT_WR is outside the MB/s figure, inside the count);
 * for host.recv from the first read to the close; for host.rx<size> from
 * the request to the last datagram (a lost one voids the case at its
 * deadline); for host.pp<mode> the steps after the warm-up.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/insnmark.h"
#include "../common/pattern.h"
#include "cpustat.h"

#define CHUNK (64 * 1024)
#define FILE_BYTES (8 << 20)
#define DEBUG_PORT 0x402	/* host.rx in lock-step: scripts/vmrun VM_DEBUGCON */
#define RECV_WARM (16ULL << 20)	/* host.recv: bytes read before its window */

/* 1 if the comma-separated list has the word w */
static int listed(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

static double now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}


static int tcp_connect(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	inet_aton(host, &sa.sin_addr);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("KFRAG-KV: stream.error=connect %s:%d: %s\n", host, port, strerror(errno));
		return -1;
	}
	return s;
}

/*
 * A receive case's deadline. A receive timeout (SO_RCVTIMEO) adds and
 * deletes a timer-wheel timer around every blocking read; while it is the
 * wheel's earliest timer, deleting it makes the next idle entry scan the
 * wheel again (get_next_timer_interrupt(): about 2,300 instructions per
 * datagram), and whether it is the earliest depends on the guest's other
 * timers: virtio's rx cases were bimodal by that much (docs/measure.md).
 * One interval timer (an hrtimer) per case instead, armed before the
 * window and disarmed after it; its SIGALRM interrupts the blocked read.
 */
static volatile sig_atomic_t expired;

static void on_alarm(int sig)
{
	(void)sig;
	expired = 1;
}

/*
 * arm (secs > 0) or disarm (0) the deadline; disarming leaves expired as
 * it was. Once passed, it fires again every 100 ms: a SIGALRM that came
 * between the loop's test of expired and its next read would otherwise
 * leave that read blocked for good. 0, or -1 (errno) if it could not be
 * armed.
 */
static int deadline(double secs)
{
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_sec = (time_t)secs,
		.tv_usec = (suseconds_t)((secs - (time_t)secs) * 1e6) } };

	if (secs > 0) {
		expired = 0;
		it.it_interval.tv_usec = 100000;
		if (sigaction(SIGALRM, &sa, NULL))
			return -1;
	}
	return setitimer(ITIMER_REAL, &it, NULL);
}

/* A loopback receiver that discards; returns its port. */
static int loopback_sink(pid_t *pid)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int ls = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 4) ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl))
		return -1;
	*pid = fork();
	if (*pid == 0) {
		static char buf[CHUNK];

		for (;;) {
			int s = accept(ls, NULL, NULL);

			if (s < 0)
				_exit(1);
			while (read(s, buf, sizeof(buf)) > 0)
				;
			close(s);
		}
	}
	close(ls);
	return ntohs(sa.sin_port);
}

/* the window of case i (0-15): ids 1-16; the id must be a constant */
static void mark(int i, int start)
{
	switch (i * 2 + !start) {
	case 0: KFRAG_INSN_START(1); break;
	case 1: KFRAG_INSN_STOP(1); break;
	case 2: KFRAG_INSN_START(2); break;
	case 3: KFRAG_INSN_STOP(2); break;
	case 4: KFRAG_INSN_START(3); break;
	case 5: KFRAG_INSN_STOP(3); break;
	case 6: KFRAG_INSN_START(4); break;
	case 7: KFRAG_INSN_STOP(4); break;
	case 8: KFRAG_INSN_START(5); break;
	case 9: KFRAG_INSN_STOP(5); break;
	case 10: KFRAG_INSN_START(6); break;
	case 11: KFRAG_INSN_STOP(6); break;
	case 12: KFRAG_INSN_START(7); break;
	case 13: KFRAG_INSN_STOP(7); break;
	case 14: KFRAG_INSN_START(8); break;
	case 15: KFRAG_INSN_STOP(8); break;
	case 16: KFRAG_INSN_START(9); break;
	case 17: KFRAG_INSN_STOP(9); break;
	case 18: KFRAG_INSN_START(10); break;
	case 19: KFRAG_INSN_STOP(10); break;
	case 20: KFRAG_INSN_START(11); break;
	case 21: KFRAG_INSN_STOP(11); break;
	case 22: KFRAG_INSN_START(12); break;
	case 23: KFRAG_INSN_STOP(12); break;
	case 24: KFRAG_INSN_START(13); break;
	case 25: KFRAG_INSN_STOP(13); break;
	case 26: KFRAG_INSN_START(14); break;
	case 27: KFRAG_INSN_STOP(14); break;
	case 28: KFRAG_INSN_START(15); break;
	case 29: KFRAG_INSN_STOP(15); break;
	case 30: KFRAG_INSN_START(16); break;
	case 31: KFRAG_INSN_STOP(16); break;
	}
}

/* a case's figures: bytes, MB/s over el seconds, the guest's busy share */
static void report(const char *name, unsigned long long bytes, double el,
		   unsigned long long busy, unsigned long long total,
		   const struct irq_sample *i0, const struct irq_sample *i1)
{
	printf("KFRAG-KV: stream.%s.bytes=%llu\n", name, bytes);
	printf("KFRAG-KV: stream.%s.mbps=%.1f\n", name, bytes / el / 1e6);
	printf("KFRAG-KV: stream.%s.cpu_pct=%.1f\n", name, total ? 100.0 * busy / total : 0.0);
	printf("KFRAG-KV: stream.%s.irqs=timer:%llu,nic:%llu,resched:%llu,net_rx:%llu,softtimer:%llu\n",
	       name, i1->timer - i0->timer, i1->nic - i0->nic, i1->resched - i0->resched,
	       i1->net_rx - i0->net_rx, i1->softtimer - i0->softtimer);
	fflush(stdout);
}

/* host.rx<size>: frames datagrams of size bytes from host/udpsource */
static int udp_case(int win, const char *host, int port, int size, int frames, int gap_us,
		    int rr)
{
	static char buf[CHUNK];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned long long b0, t0, b1, t1, bytes = 0;
	struct irq_sample i0, i1;
	int s, got = 0, err = 0, rcvbuf = 4 << 20;
	char req[64], name[32];
	double start, el;

	inet_aton(host, &sa.sin_addr);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf))) {
		printf("KFRAG-KV: stream.error=udp socket: %s\n", strerror(errno));
		if (s >= 0)
			close(s);
		return 1;
	}
	/*
	 * iopl, not ioperm: an I/O bitmap is copied into the TSS at every
	 * switch to this process, instructions inside the window
	 */
	if (rr && iopl(3)) {
		printf("KFRAG-KV: stream.error=iopl for the debug port: %s\n", strerror(errno));
		close(s);
		return 1;
	}
	if (rr)
		snprintf(req, sizeof(req), "%d %d rr", frames, size);
	else
		snprintf(req, sizeof(req), "%d %d %d", frames, size, gap_us);
	printf("KFRAG-KV: insnwin.%d=stream.host.rx%d\n", win + 1, size);
	fflush(stdout);
	cpu_sample(&b0, &t0, NULL);
	irq_sample(&i0);
	/* the host's pacing three times over (lock-step: 1 ms each), and 2 s */
	if (deadline(3e-6 * frames * (rr ? 1000 : gap_us) + 2)) {
		/* not "host rx": that voids only the case (a lost datagram) */
		printf("KFRAG-KV: stream.error=rx%d deadline timer: %s\n", size, strerror(errno));
		close(s);
		return 1;
	}
	start = now();
	mark(win, 1);
	if (sendto(s, req, strlen(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		mark(win, 0);
		deadline(0);
		printf("KFRAG-KV: stream.error=udp request to %s:%d: %s\n", host, port, strerror(errno));
		close(s);
		return 1;
	}
	while (got < frames && !expired) {
		ssize_t n = recv(s, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue; /* the loop's test: the deadline passed? */
		if (n < 0) {
			err = errno;
			break;
		}
		bytes += n;
		/* lock-step: the host sends the next one on this byte */
		if (++got < frames && rr)
			outb(1, DEBUG_PORT);
	}
	el = now() - start;
	cpu_sample(&b1, &t1, NULL);
	mark(win, 0);
	deadline(0);
	irq_sample(&i1);
	close(s);
	/* a lost one cost the wait for the deadline inside the window: no figure then */
	if (got < frames) {
		printf("KFRAG-KV: stream.error=host rx%d: %d of %d datagrams (%s)\n", size, got,
		       frames, err ? strerror(err) : rr ?
		       "lost in lock-step: see the host's udpsource log" :
		       "lost: raise BENCH_STREAM_RX_PACE (kfrag.udpgap_us)");
		return 1;
	}
	printf("KFRAG-KV: stream.host.rx%d.frames=%d\n", size, got);
	snprintf(name, sizeof(name), "host.rx%d", size);
	report(name, bytes, el, b1 - b0, t1 > t0 ? t1 - t0 : 0, &i0, &i1);
	return 0;
}

/* host.recv: read the host's stream (host/discard chargen) for secs, then close */
static int recv_case(int win, const char *host, int port, double secs)
{
	static char buf[CHUNK];
	struct timeval tmo = { .tv_sec = 30 };
	unsigned long long b0, t0, b1, t1, bytes = 0;
	struct irq_sample i0, i1;
	double start, el;
	int s = tcp_connect(host, port);

	if (s < 0)
		return 1;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	/*
	 * Warm up outside the window: QEMU's user networking (e1000) now and
	 * then stalls a new connection after its first few hundred KB for
	 * a second or more, whatever the kernel; the window starts once
	 * RECV_WARM bytes have arrived.
	 */
	while (bytes < RECV_WARM) {
		ssize_t n = read(s, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			printf("KFRAG-KV: stream.error=host recv (warm-up): %s\n", n ? strerror(errno) : "EOF");
			close(s);
			return 1;
		}
		bytes += n;
	}
	bytes = 0;
	/* in the window, no receive timeout: the case's deadline() */
	tmo.tv_sec = 0;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	printf("KFRAG-KV: insnwin.%d=stream.host.recv\n", win + 1);
	fflush(stdout);
	cpu_sample(&b0, &t0, NULL);
	irq_sample(&i0);
	if (deadline(secs + 30)) {
		printf("KFRAG-KV: stream.error=host recv: no deadline timer: %s\n", strerror(errno));
		close(s);
		return 1;
	}
	start = now();
	mark(win, 1);
	do {
		ssize_t n = expired ? -1 : read(s, buf, sizeof(buf));
		int e = errno;

		if (n < 0 && e == EINTR && !expired)
			continue;
		if (n <= 0) {
			mark(win, 0);
			deadline(0);
			printf("KFRAG-KV: stream.error=host recv: %s\n", !n ? "EOF" :
			       expired ? "no data before the case's deadline" : strerror(e));
			close(s);
			return 1;
		}
		bytes += n;
	} while (now() - start < secs);
	el = now() - start;
	cpu_sample(&b1, &t1, NULL);
	mark(win, 0);
	deadline(0);
	irq_sample(&i1);
	close(s);
	report("host.recv", bytes, el, b1 - b0, t1 > t0 ? t1 - t0 : 0, &i0, &i1);
	return 0;
}

/*
 * host.pp<mode>: TCP in lock-step with host/discard pingpong. send and
 * sendfile: each step sends step bytes (write(), or sendfile() from the
 * tmpfs file) and waits for the host's one-byte answer; recv: each step
 * sends one byte and reads the host's step bytes. One exchange is in
 * flight at a time, each way one segment (step fits one), and each
 * carries the ACK of the last (Linux delays its ACKs once it sees the
 * exchanges, QEMU's user networking by 2 ms): the guest's work per step does not depend on when the
 * host's packets come, as a stream's does (its ACKs, or its data, arrive
 * at the host's real-time pace while the guest works). Nothing is unacked
 * when either end sends, so Nagle never holds a step; TCP_NODELAY only
 * keeps it so should the lock-step break. PP_WARM steps first, outside
 * the window (handshake, slow start, the delayed-ACK modes), then steps
 * steps in it. Per case also .segs: the TCP segments the guest received,
 * sent and retransmitted while the window was open (/proc/net/snmp, read
 * outside it): in lock-step, steps in and steps out, none again.
 */
#define PP_WARM 200

enum pp_mode { PP_SEND, PP_SENDFILE, PP_RECV };

/* pp_step()'s failures beside -1 (errno) */
enum { PP_EOF = -2, PP_LATE = -3, PP_SHORT = -4 };

/* TCP's segment counters since boot, from /proc/net/snmp */
struct tcp_segs {
	unsigned long long in, out, retrans;
};

static void tcp_segs(struct tcp_segs *t)
{
	char head[1024], vals[1024], *h, *v, *hs = NULL, *vs = NULL;
	FILE *f = fopen("/proc/net/snmp", "r");

	memset(t, 0, sizeof(*t));
	while (f && fgets(head, sizeof(head), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(head, "Tcp:", 4))
			continue;
		/* the names' line, then the values' line, in the same order */
		for (h = strtok_r(head + 4, " \n", &hs), v = strtok_r(vals + 4, " \n", &vs);
		     h && v; h = strtok_r(NULL, " \n", &hs), v = strtok_r(NULL, " \n", &vs)) {
			if (!strcmp(h, "InSegs"))
				t->in = strtoull(v, NULL, 10);
			else if (!strcmp(h, "OutSegs"))
				t->out = strtoull(v, NULL, 10);
			else if (!strcmp(h, "RetransSegs"))
				t->retrans = strtoull(v, NULL, 10);
		}
		break;
	}
	if (f)
		fclose(f);
}

/* one lock-step exchange: 0, -1 (errno), PP_EOF, PP_LATE or PP_SHORT */
static int pp_step(int s, int file, off_t *off, enum pp_mode m, char *buf, int step)
{
	/*
	 * recv's request: a fixed byte. QEMU's user networking ACKs at once
	 * a segment of up to 5 bytes that starts with ESC (telnet): that
	 * would be a pure ACK more per exchange.
	 */
	static const char req = '.';
	int len = m == PP_RECV ? 1 : step, want = m == PP_RECV ? step : 1, got = 0;
	ssize_t n;

	for (;;) {
		if (m == PP_SENDFILE && *off + step > FILE_BYTES)
			*off = 0;
		n = m == PP_SENDFILE ? sendfile(s, file, off, step) :
				       write(s, m == PP_RECV ? &req : buf, len);
		if (n == len)
			break;
		if (n >= 0)
			return PP_SHORT;
		if (errno != EINTR)
			return -1;
		if (expired)
			return PP_LATE;
	}
	while (got < want) {
		n = read(s, buf, want - got);
		if (n > 0) {
			got += n;
			continue;
		}
		if (!n)
			return PP_EOF;
		if (errno != EINTR)
			return -1;
		if (expired)
			return PP_LATE;
	}
	return 0;
}

static int pp_case(int win, const char *host, int port, enum pp_mode m, int file,
		   int step, int steps)
{
	static const char *const modes[] = { "send", "sendfile", "recv" };
	static char buf[CHUNK];
	unsigned long long b0, t0, b1, t1;
	struct irq_sample i0, i1;
	struct tcp_segs s0, s1;
	char name[32], hdr[32];
	const char *phase = "warm-up";
	double start = 0, el = 0, limit = 5e-3 * (PP_WARM + steps) + 2;
	off_t off = 0;
	int s, one = 1, i, r = 0, err = 0;

	snprintf(name, sizeof(name), "host.pp%s", modes[m]);
	snprintf(hdr, sizeof(hdr), "%s %d\n", m == PP_RECV ? "recv" : "send", step);
	s = tcp_connect(host, port);
	if (s < 0)
		return 1;
	kfrag_pattern(7, 0, buf, sizeof(buf));
	/* the deadline covers the warm-up too: 5 ms a step, and 2 s */
	if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) || deadline(limit) ||
	    write(s, hdr, strlen(hdr)) != (ssize_t)strlen(hdr)) {
		printf("KFRAG-KV: stream.error=%s setup: %s\n", name, strerror(errno));
		deadline(0);
		close(s);
		return 1;
	}
	for (i = 0; i < PP_WARM; i++)
		if ((r = pp_step(s, file, &off, m, buf, step))) {
			err = errno;	/* before anything else can change it */
			break;
		}
	if (!r) {
		phase = "window";
		printf("KFRAG-KV: insnwin.%d=stream.%s\n", win + 1, name);
		fflush(stdout);
		cpu_sample(&b0, &t0, NULL);
		irq_sample(&i0);
		tcp_segs(&s0);
		start = now();
		mark(win, 1);
		for (i = 0; i < steps; i++)
			if ((r = pp_step(s, file, &off, m, buf, step))) {
				err = errno;
				break;
			}
		el = now() - start;
		cpu_sample(&b1, &t1, NULL);
		mark(win, 0);
		tcp_segs(&s1);
		irq_sample(&i1);
	}
	deadline(0);
	close(s);
	if (r) {
		printf("KFRAG-KV: stream.error=%s: %s, after %d steps: ", name, phase, i);
		if (r == PP_EOF)
			printf("the host closed the connection (host/discard's pingpong log says why)\n");
		else if (r == PP_LATE)
			printf("not done within the case's %.1f s (the host's answers stopped, or "
			       "kfrag.ppport is not host/discard's pingpong port)\n", limit);
		else if (r == PP_SHORT)
			printf("a short write\n");
		else
			printf("%s\n", strerror(err));
		return 1;
	}
	printf("KFRAG-KV: stream.%s.steps=%d\n", name, steps);
	printf("KFRAG-KV: stream.%s.segs=in:%llu,out:%llu,retrans:%llu\n", name, s1.in - s0.in,
	       s1.out - s0.out, s1.retrans - s0.retrans);
	report(name, (unsigned long long)step * steps, el, b1 - b0, t1 > t0 ? t1 - t0 : 0, &i0, &i1);
	return 0;
}

/*
 * guest.idle: what the guest's clock costs while nothing else happens,
 * for the benchmark to take the periodic tick out of the lock-step cases'
 * counts. With nohz=off under -icount sleep=on an idle guest takes a tick
 * every millisecond of the host's time, so a case's ticks follow how fast
 * the host answers; the benchmark subtracts each case's ticks times the
 * instructions per tick of these windows (scripts/bench-stream). It
 * runs after the cases, when what the guest does after boot (probably
 * its address configuration, not checked: three windows in a row saw a
 * NIC interrupt there) is done. A window is one sleep of ms milliseconds, 100 ms after
 * the last (for the console's last lines to drain); one that saw any
 * other interrupt (the NIC's: e1000's watchdog raises one every 2 s; a
 * rescheduling IPI) is discarded: IDLE_TRIES windows at most, ids win + 1
 * to win + IDLE_TRIES.
 */
#define IDLE_TRIES 5
static int idle_case(int win, int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	struct timespec settle = { .tv_nsec = 100000000L };
	struct irq_sample i0, i1;
	int a, r = 0;

	for (a = 0; a < IDLE_TRIES; a++) {
		nanosleep(&settle, NULL);
		irq_sample(&i0);
		mark(win + a, 1);
		r = nanosleep(&ts, NULL);
		mark(win + a, 0);
		irq_sample(&i1);
		if (r)
			break;
		if (i1.nic == i0.nic && i1.resched == i0.resched && i1.net_rx == i0.net_rx)
			break;
		printf("KFRAG-KV: stream.guest.idle.discarded%d=nic:%llu,resched:%llu,net_rx:%llu\n",
		       a + 1, i1.nic - i0.nic, i1.resched - i0.resched, i1.net_rx - i0.net_rx);
	}
	if (r) {
		printf("KFRAG-KV: stream.error=guest.idle: nanosleep: %s\n", strerror(errno));
		return 1;
	}
	if (a == IDLE_TRIES) {
		printf("KFRAG-KV: stream.error=guest.idle: all %d windows saw other interrupts than "
		       "the tick (the discarded lines say which); fix: a shorter kfrag.idlems "
		       "(BENCH_STREAM_IDLE_MS), or find what interrupts an idle guest\n", IDLE_TRIES);
		return 1;
	}
	printf("KFRAG-KV: insnwin.%d=stream.guest.idle\n", win + a + 1);
	printf("KFRAG-KV: stream.guest.idle.ms=%d\n", ms);
	printf("KFRAG-KV: stream.guest.idle.irqs=timer:%llu,nic:%llu,resched:%llu,net_rx:%llu,softtimer:%llu\n",
	       i1.timer - i0.timer, i1.nic - i0.nic, i1.resched - i0.resched,
	       i1.net_rx - i0.net_rx, i1.softtimer - i0.softtimer);
	fflush(stdout);
	return 0;
}

static int run(int win, const char *target, const char *mode, const char *host, int port,
	       int file, double secs)
{
	static char buf[CHUNK];
	struct timeval tmo = { .tv_sec = 30 };
	unsigned long long b0, t0, b1, t1, bytes = 0;
	struct irq_sample i0, i1;
	char name[32];
	double start, el;
	off_t off = 0;
	int s = tcp_connect(host, port);

	if (s < 0)
		return 1;
	kfrag_pattern(7, 0, buf, sizeof(buf));
	printf("KFRAG-KV: insnwin.%d=stream.%s.%s\n", win + 1, target, mode);
	fflush(stdout);
	cpu_sample(&b0, &t0, NULL);
	irq_sample(&i0);
	start = now();
	mark(win, 1);
	do {
		ssize_t n;

		if (!strcmp(mode, "sendfile")) {
			if (off >= FILE_BYTES)
				off = 0;
			n = sendfile(s, file, &off, FILE_BYTES - off < CHUNK * 4 ?
				     FILE_BYTES - off : CHUNK * 4);
		} else {
			n = write(s, buf, sizeof(buf));
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			mark(win, 0);
			printf("KFRAG-KV: stream.error=%s %s: %s\n", target, mode, strerror(errno));
			close(s);
			return 1;
		}
		bytes += n;
	} while (now() - start < secs);
	shutdown(s, SHUT_WR);
	el = now() - start;
	cpu_sample(&b1, &t1, NULL);
	/* the receiver closes at EOF: then every byte sent was processed */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	while (read(s, buf, sizeof(buf)) > 0)
		;
	mark(win, 0);
	irq_sample(&i1);
	close(s);
	snprintf(name, sizeof(name), "%s.%s", target, mode);
	report(name, bytes, el, b1 - b0, t1 > t0 ? t1 - t0 : 0, &i0, &i1);
	return 0;
}

int main(void)
{
	static char buf[CHUNK];
	const char *host = getenv("KFRAG_HOST") ? getenv("KFRAG_HOST") : "10.0.2.2";
	int port = getenv("KFRAG_PORT") ? atoi(getenv("KFRAG_PORT")) : 0;
	int srcport = getenv("KFRAG_SRCPORT") ? atoi(getenv("KFRAG_SRCPORT")) : 0;
	int udpport = getenv("KFRAG_UDPPORT") ? atoi(getenv("KFRAG_UDPPORT")) : 0;
	int frames = getenv("KFRAG_UDPFRAMES") ? atoi(getenv("KFRAG_UDPFRAMES")) : 2000;
	int gap_us = getenv("KFRAG_UDPGAP_US") ? atoi(getenv("KFRAG_UDPGAP_US")) : 200;
	int rr = getenv("KFRAG_UDPRR") && atoi(getenv("KFRAG_UDPRR"));
	int ppport = getenv("KFRAG_PPPORT") ? atoi(getenv("KFRAG_PPPORT")) : 0;
	int ppsteps = getenv("KFRAG_PPSTEPS") ? atoi(getenv("KFRAG_PPSTEPS")) : 2000;
	int ppstep = getenv("KFRAG_PPSTEP") ? atoi(getenv("KFRAG_PPSTEP")) : 1024;
	int idle_ms = getenv("KFRAG_IDLEMS") ? atoi(getenv("KFRAG_IDLEMS")) : 0;
	char sizes[64], *sz, *save = NULL;
	int usizes[3] = { 0 };
	double secs = getenv("KFRAG_SECS") ? atof(getenv("KFRAG_SECS")) : 4;
	const char *cases = getenv("KFRAG_CASES") ? getenv("KFRAG_CASES") : "host,lo,recv,rx";
	const char *modes[] = { "send", "sendfile" };
	int f, lport, i, rc = 0;
	pid_t sink = -1;
	off_t o;

	signal(SIGPIPE, SIG_IGN);
	f = open("/tmp/stream.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (o = 0; f >= 0 && o < FILE_BYTES; o += CHUNK) {
		kfrag_pattern(7, o, buf, CHUNK);
		if (write(f, buf, CHUNK) != CHUNK)
			f = -1;
	}
	lport = loopback_sink(&sink);
	if (f < 0 || lport < 0 || !port) {
		printf("KFRAG-KV: stream.error=setup (tmpfs file, loopback sink, kfrag.port)\n");
		if (lport >= 0)
			kill(sink, SIGKILL);
		return 2;
	}
	snprintf(sizes, sizeof(sizes), "%s",
		 getenv("KFRAG_UDPSIZES") ? getenv("KFRAG_UDPSIZES") : "64,512,1472");
	for (i = 0, sz = strtok_r(sizes, ",", &save); sz; i++, sz = strtok_r(NULL, ",", &save))
		usizes[i < 3 ? i : 2] = atoi(sz) > 0 && atoi(sz) <= 8192 ? atoi(sz) : -1;
	if (udpport && (i < 1 || i > 3 || frames <= 0 || gap_us < 0 || usizes[0] < 0 ||
			usizes[1] < 0 || usizes[2] < 0)) {
		printf("KFRAG-KV: stream.error=kfrag.udpsizes: 1 to 3 sizes of 1..8192 bytes, "
		       "kfrag.udpframes > 0, kfrag.udpgap_us >= 0\n");
		kill(sink, SIGKILL);
		return 2;
	}
	/* one segment a step: 1448 bytes fit every MSS here (1460, 1448 with timestamps) */
	if (ppport && (ppsteps < 1 || ppsteps > 100000 || ppstep < 1 || ppstep > 1448)) {
		printf("KFRAG-KV: stream.error=kfrag.ppsteps=%d, kfrag.ppstep=%d: give 1 to 100000 "
		       "steps of 1 to 1448 bytes\n", ppsteps, ppstep);
		kill(sink, SIGKILL);
		return 2;
	}
	if (!listed(cases, "host") && !listed(cases, "lo") &&
	    !(listed(cases, "recv") && srcport) && !(listed(cases, "rx") && udpport) &&
	    !(listed(cases, "pp") && ppport)) {
		printf("KFRAG-KV: stream.error=kfrag.cases '%s' names no case to run "
		       "(host, lo, recv with kfrag.srcport, rx with kfrag.udpport, "
		       "pp with kfrag.ppport)\n", cases);
		kill(sink, SIGKILL);
		return 2;
	}
	if (idle_ms < 0 || idle_ms > 10000) {
		printf("KFRAG-KV: stream.error=kfrag.idlems=%d: give 0 (no idle window) to 10000\n",
		       idle_ms);
		kill(sink, SIGKILL);
		return 2;
	}
	for (i = 0; i < 2; i++) {
		if (listed(cases, "host"))
			rc |= run(2 * i, "host", modes[i], host, port, f, secs);
		if (listed(cases, "lo"))
			rc |= run(2 * i + 1, "lo", modes[i], "127.0.0.1", lport, f, secs);
	}
	if (srcport && listed(cases, "recv"))
		rc |= recv_case(4, host, srcport, secs);
	for (i = 0; udpport && listed(cases, "rx") && i < 3 && usizes[i] > 0; i++)
		rc |= udp_case(5 + i, host, udpport, usizes[i], frames, gap_us, rr);
	for (i = 0; ppport && listed(cases, "pp") && i < 3; i++)
		rc |= pp_case(8 + i, host, ppport, (enum pp_mode)i, f, ppstep, ppsteps);
	if (idle_ms)
		rc |= idle_case(11, idle_ms);
	kill(sink, SIGKILL);
	return rc;
}
