/*
 * discard: the host end of the stream benchmark. Listens on ADDR
 * (default 127.0.0.1, the guest's 10.0.2.2 under user networking; a tap's
 * host address for a tap), writes its port to PORTFILE, and reads and
 * discards every connection until killed or TIMEOUT_S passes; prints the
 * bytes of each connection.
 *
 *   discard PORTFILE [TIMEOUT_S [ADDR]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/listen.h"

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	int ls, s;

	if (argc < 2) {
		fprintf(stderr, "usage: discard PORTFILE [TIMEOUT_S [ADDR]]\n");
		return 2;
	}
	alarm(argc > 2 ? atoi(argv[2]) : 600);
	ls = kfrag_listen("discard", argv[1], 4, argc > 3 ? argv[3] : NULL);
	if (ls < 0)
		return 2;
	while ((s = accept(ls, NULL, NULL)) >= 0) {
		unsigned long long bytes = 0;
		ssize_t n;

		while ((n = read(s, buf, sizeof(buf))) > 0)
			bytes += n;
		close(s);
		printf("discard: %llu bytes\n", bytes);
		fflush(stdout);
	}
	perror("discard: accept");
	return 1;
}
