/*
 * tcpsink: the host end of the smoke test. Listens on 127.0.0.1 (QEMU user
 * networking forwards the guest's 10.0.2.2 there), or on ADDR (a tap's host
 * address), accepts one connection,
 * checks every byte the guest sends against the pattern named in its
 * header, answers "OK" or "BAD", then sends the downstream pattern.
 *
 *   tcpsink PORTFILE [TIMEOUT_S [ADDR]]
 *
 * Writes the ephemeral port it listens on to PORTFILE. Exit 0 only if the
 * whole exchange happened and every byte matched.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/listen.h"
#include "../common/io.h"
#include "../common/pattern.h"

#define CHUNK 65536

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "tcpsink: timed out: the guest did not complete the exchange\n");
	_exit(3);
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	unsigned long long seed, up, down, off;
	char line[128];
	long long bad = -1;
	int ls, s;
	size_t n;

	if (argc < 2) {
		fprintf(stderr, "usage: tcpsink PORTFILE [TIMEOUT_S [ADDR]]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(argc > 2 ? atoi(argv[2]) : 300);

	ls = kfrag_listen("tcpsink", argv[1], 1, argc > 3 ? argv[3] : NULL);
	if (ls < 0)
		return 2;

	s = accept(ls, NULL, NULL);
	if (s < 0) {
		perror("tcpsink: accept");
		return 2;
	}
	for (n = 0; n < sizeof(line) - 1; n++) {
		if (read(s, line + n, 1) != 1) {
			fprintf(stderr, "tcpsink: connection closed before the header\n");
			return 1;
		}
		if (line[n] == '\n')
			break;
	}
	line[n] = 0;
	if (sscanf(line, "KFRAG-SMOKE seed=%llu up=%llu down=%llu", &seed, &up, &down) != 3) {
		fprintf(stderr, "tcpsink: bad header '%s'\n", line);
		return 1;
	}
	for (off = 0; off < up; ) {
		ssize_t r = read(s, buf, up - off < CHUNK ? up - off : CHUNK);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "tcpsink: upstream ended at %llu of %llu bytes\n", off, up);
			return 1;
		}
		if (bad < 0) {
			bad = kfrag_pattern_check(seed, off, buf, r);
		}
		off += r;
	}
	n = bad < 0 ? snprintf(line, sizeof(line), "OK up=%llu\n", up)
		    : snprintf(line, sizeof(line), "BAD offset=%lld\n", bad);
	if (kfrag_write_all(s, line, n))
		return 1;
	if (bad >= 0) {
		fprintf(stderr, "tcpsink: upstream byte %lld differs from the pattern\n", bad);
		return 1;
	}
	for (off = 0; off < down; off += n) {
		n = down - off < CHUNK ? down - off : CHUNK;
		kfrag_pattern(seed + 1, off, buf, n);
		if (kfrag_write_all(s, buf, n)) {
			fprintf(stderr, "tcpsink: downstream failed at %llu: %s\n", off, strerror(errno));
			return 1;
		}
	}
	shutdown(s, SHUT_WR);
	while (read(s, buf, sizeof(buf)) > 0)
		;
	printf("tcpsink: up=%llu bytes verified, down=%llu bytes sent\n", up, down);
	return 0;
}
