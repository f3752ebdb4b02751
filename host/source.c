/*
 * source: the host end of the stream benchmark's receive case. Listens
 * on ADDR (default 127.0.0.1, the guest's 10.0.2.2 under user networking;
 * a tap's host address for a tap), writes its port to PORTFILE, and sends
 * the pattern stream 9 (common/pattern.h) on every connection until the
 * peer closes it; prints the bytes of each. Runs until killed or
 * TIMEOUT_S passes.
 *
 *   source PORTFILE [TIMEOUT_S [ADDR]]
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../common/listen.h"
#include "../common/pattern.h"

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	int ls, s;

	if (argc < 2) {
		fprintf(stderr, "usage: source PORTFILE [TIMEOUT_S [ADDR]]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm(argc > 2 ? atoi(argv[2]) : 600);
	ls = kfrag_listen("source", argv[1], 4, argc > 3 ? argv[3] : NULL);
	if (ls < 0)
		return 2;
	kfrag_pattern(9, 0, buf, sizeof(buf));
	while ((s = accept(ls, NULL, NULL)) >= 0) {
		/* a guest gone without a FIN must not hold the next run's accept */
		struct timeval tmo = { .tv_sec = 30 };
		unsigned long long bytes = 0;
		ssize_t n;

		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));

		while ((n = write(s, buf, sizeof(buf))) > 0)
			bytes += n;
		close(s);
		printf("source: %llu bytes\n", bytes);
		fflush(stdout);
	}
	perror("source: accept");
	return 1;
}
