/*
 * discard: the host end of the stream benchmark. Listens on ADDR
 * (default 127.0.0.1, the guest's 10.0.2.2 under user networking; a tap's
 * host address for a tap), writes its port to PORTFILE, and serves every
 * connection until killed or TIMEOUT_S passes; prints the bytes of each.
 * It reads and discards them, or with "chargen" sends the pattern stream
 * 9 (common/pattern.h) until the peer closes (the receive case,
 * host.recv; a write gives up after 30 s, so that a guest gone without
 * a FIN does not hold the next run's accept).
 *
 *   discard PORTFILE [TIMEOUT_S [ADDR [chargen]]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../common/listen.h"
#include "../common/pattern.h"

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	int ls, s, send = argc > 4 && !strcmp(argv[4], "chargen");

	if (argc < 2 || (argc > 4 && !send)) {
		fprintf(stderr, "usage: discard PORTFILE [TIMEOUT_S [ADDR [chargen]]]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm(argc > 2 ? atoi(argv[2]) : 600);
	ls = kfrag_listen("discard", argv[1], 4, argc > 3 ? argv[3] : NULL);
	if (ls < 0)
		return 2;
	if (send)
		kfrag_pattern(9, 0, buf, sizeof(buf));
	while ((s = accept(ls, NULL, NULL)) >= 0) {
		struct timeval tmo = { .tv_sec = 30 };
		unsigned long long bytes = 0;
		ssize_t n;

		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
		while ((n = send ? write(s, buf, sizeof(buf)) : read(s, buf, sizeof(buf))) > 0)
			bytes += n;
		close(s);
		printf("discard: %llu bytes %s\n", bytes, send ? "sent" : "read");
		fflush(stdout);
	}
	perror("discard: accept");
	return 1;
}
