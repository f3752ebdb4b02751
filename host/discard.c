/*
 * discard: the host end of the stream benchmark. Listens on ADDR
 * (default 127.0.0.1, the guest's 10.0.2.2 under user networking; a tap's
 * host address for a tap), writes its port to PORTFILE, and serves every
 * connection until killed or TIMEOUT_S passes; prints the bytes of each.
 * MODE:
 *   (none)    read and discard;
 *   chargen   send the pattern stream 9 (common/pattern.h) until the peer
 *             closes (the receive case, host.recv);
 *   pingpong  the lock-step cases (host.pp*, guest/stream.c): the guest's
 *             first line is "send STEP" or "recv STEP" (STEP 1 to 65536
 *             bytes). send: for every STEP bytes read, answer one byte;
 *             recv: for every byte read, answer STEP bytes. The guest's
 *             next step only follows the answer: one exchange in flight,
 *             whatever the host's timing (nothing is unacked when either
 *             end sends, so Nagle holds nothing; TCP_NODELAY keeps it so
 *             should the lock-step break). The log line says how each
 *             connection ended.
 * A write (and pingpong's read) gives up after 30 s, so that a guest gone
 * without a FIN does not hold the next run's accept.
 *
 *   discard PORTFILE [TIMEOUT_S [ADDR [MODE]]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../common/io.h"
#include "../common/listen.h"
#include "../common/pattern.h"

#define BUF (1 << 16)

/*
 * One pingpong connection: its header line, then the exchanges; the
 * bytes the guest sent or received, or -1 on a bad header. *why: how the
 * exchanges ended.
 */
static long long pingpong(int s, const char *buf, const char **why)
{
	static char in[BUF];
	char line[32], dir[8];
	unsigned long long bytes = 0;
	unsigned int step;
	size_t n;
	int one = 1, end = 0, send;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (n = 0; n < sizeof(line) - 1; n++)
		if (kfrag_read_all(s, line + n, 1) || line[n] == '\n')
			break;
	line[n] = 0;
	if (sscanf(line, "%7s %u%n", dir, &step, &end) != 2 || line[end] ||
	    (strcmp(dir, "send") && strcmp(dir, "recv")) || step < 1 || step > BUF) {
		fprintf(stderr, "discard: bad pingpong header '%s' (want \"send STEP\" or \"recv STEP\", STEP 1 to %d)\n",
			line, BUF);
		return -1;
	}
	send = !strcmp(dir, "send");
	for (;;) {
		size_t ask = send ? step : 1, answer = send ? 1 : step;
		ssize_t n;

		if (kfrag_read_all(s, in, ask)) {
			*why = !errno ? "the guest closed" : errno == EAGAIN ?
			       "nothing from the guest for 30 s" : strerror(errno);
			return bytes;
		}
		n = write(s, buf, answer);
		if (n != (ssize_t)answer) {
			*why = n >= 0 ? "a short write" : strerror(errno);
			return bytes;
		}
		bytes += step;
	}
}

int main(int argc, char **argv)
{
	static char buf[BUF];
	const char *mode = argc > 4 ? argv[4] : "";
	int ls, s, send = !strcmp(mode, "chargen"), pp = !strcmp(mode, "pingpong");

	if (argc < 2 || (argc > 4 && !send && !pp)) {
		fprintf(stderr, "usage: discard PORTFILE [TIMEOUT_S [ADDR [chargen|pingpong]]]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm(argc > 2 ? atoi(argv[2]) : 600);
	ls = kfrag_listen("discard", argv[1], 4, argc > 3 ? argv[3] : NULL);
	if (ls < 0)
		return 2;
	kfrag_pattern(9, 0, buf, sizeof(buf));
	while ((s = accept(ls, NULL, NULL)) >= 0) {
		struct timeval tmo = { .tv_sec = 30 };
		const char *why = "";
		long long bytes = 0;
		ssize_t n;

		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
		if (pp) {
			setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
			bytes = pingpong(s, buf, &why);
		} else {
			while ((n = send ? write(s, buf, sizeof(buf)) : read(s, buf, sizeof(buf))) > 0)
				bytes += n;
		}
		close(s);
		if (bytes >= 0 && pp)
			printf("discard: %lld bytes exchanged (%s)\n", bytes, why);
		else if (bytes >= 0)
			printf("discard: %lld bytes %s\n", bytes, send ? "sent" : "read");
		fflush(stdout);
	}
	perror("discard: accept");
	return 1;
}
