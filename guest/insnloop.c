/*
 * kfrag-insnloop: known instruction counts for the instruction-counting
 * plugin (qemu-plugin/insncount.c, scripts/vmrun VM_INSNCOUNT), and a
 * small real workload to see how repeatable a kernel path's count is.
 *
 * Windows (common/insnmark.h), in this order:
 *   loop.n     KFRAG_N iterations (default 10,000,000) of a fixed block of
 *              10 instructions, interrupts off: exactly 10 * N + 1
 *              instructions between the markers (the 1: loading the
 *              counter)
 *   loop.2n    the same with 2 * N iterations: 20 * N + 1
 *   loop.irq   N iterations with interrupts on: 10 * N + 1 plus whatever
 *              the timer interrupts executed meanwhile
 *   lo.send    KFRAG_LOMB MiB (default 16) sent with write() over TCP on
 *              the guest's loopback to a reader that discards them, until
 *              the reader has read all: sockets, softirqs, scheduling
 *
 * Interrupts off: iopl(3) lets a root process use cli/sti, so the timer
 * does not interrupt the loop and the window holds the loop alone
 * (insnloop.irqs_off=1; without iopl, 0 and loop.n/2n include ticks too).
 * A loop of 2 * 10^7 iterations takes well under a second under TCG: far
 * from the soft-lockup watchdog's 10 s.
 *
 * Reports KFRAG-KV: insnwin.<id>=<name>, insnloop.expected.<name>=<count>.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/insnmark.h"

#define PER_ITER 10

/*
 * n iterations of 8 additions, a decrement and a branch between the
 * markers of window id; n > 0
 */
#define LOOP(id, n)                                                            \
	__asm__ __volatile__(KFRAG_INSN_MARK_ASM("%c1", "%c2")                 \
			     "mov %0, %%rcx\n\t"                               \
			     "1:\n\t"                                          \
			     "add %%rcx, %%rax\n\t"                            \
			     "add %%rcx, %%rdx\n\t"                            \
			     "add %%rax, %%rdx\n\t"                            \
			     "add %%rdx, %%rax\n\t"                            \
			     "add %%rcx, %%rax\n\t"                            \
			     "add %%rcx, %%rdx\n\t"                            \
			     "add %%rax, %%rdx\n\t"                            \
			     "add %%rdx, %%rax\n\t"                            \
			     "dec %%rcx\n\t"                                   \
			     "jnz 1b\n\t"                                      \
			     KFRAG_INSN_MARK_ASM("%c1", "%c3")                 \
			     :: "r"((unsigned long)(n)), "i"(id),             \
			     "i"(KFRAG_INSN_OP_START),                         \
			     "i"(KFRAG_INSN_OP_STOP)                           \
			     : "rax", "rcx", "rdx", "cc", "memory")

static int irqs_off;

static void cli(void)
{
	if (irqs_off)
		__asm__ __volatile__("cli" ::: "memory");
}

static void sti(void)
{
	if (irqs_off)
		__asm__ __volatile__("sti" ::: "memory");
}

static void name(unsigned id, const char *what, unsigned long long expected)
{
	printf("KFRAG-KV: insnwin.%u=%s\n", id, what);
	if (expected)
		printf("KFRAG-KV: insnloop.expected.%s=%llu\n", what, expected);
	fflush(stdout);
}

/* MiB megabytes over the loopback between markers 4; 0 on success */
static int lo_send(unsigned mib)
{
	static char buf[65536];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int ls = socket(AF_INET, SOCK_STREAM, 0), s, st;
	unsigned long long left = (unsigned long long)mib << 20;
	pid_t pid;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl))
		return -1;
	pid = fork();
	if (pid == 0) {
		int c = accept(ls, NULL, NULL);

		while (c >= 0 && read(c, buf, sizeof(buf)) > 0)
			;
		_exit(c < 0);
	}
	close(ls);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (pid < 0 || s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	memset(buf, 0x5a, sizeof(buf));
	name(4, "lo.send", 0);
	KFRAG_INSN_START(4);
	while (left) {
		ssize_t n = write(s, buf, left < sizeof(buf) ? left : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		left -= n;
	}
	close(s);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	KFRAG_INSN_STOP(4);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

int main(void)
{
	unsigned long long n = getenv("KFRAG_N") ? strtoull(getenv("KFRAG_N"), NULL, 0) : 10000000;
	unsigned mib = getenv("KFRAG_LOMB") ? atoi(getenv("KFRAG_LOMB")) : 16;

	if (!n) {
		printf("KFRAG-KV: insnloop.error=kfrag.n must be > 0\n");
		return 2;
	}
	irqs_off = iopl(3) == 0;
	printf("KFRAG-KV: insnloop.irqs_off=%d\nKFRAG-KV: insnloop.n=%llu\n"
	       "KFRAG-KV: insnloop.per_iter=%d\n", irqs_off, n, PER_ITER);
	/* first, once: the code's pages faulted in, its blocks translated */
	LOOP(0, 1000);
	name(1, "loop.n", PER_ITER * n + 1);
	cli();
	LOOP(1, n);
	sti();
	name(2, "loop.2n", PER_ITER * 2 * n + 1);
	cli();
	LOOP(2, 2 * n);
	sti();
	name(3, "loop.irq", PER_ITER * n + 1);
	LOOP(3, n);
	signal(SIGPIPE, SIG_IGN);
	if (mib && lo_send(mib)) {
		printf("KFRAG-KV: insnloop.error=loopback send: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
