/*
 * udpsource: the host end of the receive-memory measurement (guest/rxmem.c).
 * Binds a UDP socket on ADDR (default 127.0.0.1, the guest's 10.0.2.2
 * under QEMU user networking), writes its port to PORTFILE, and answers
 * each request "N SIZE GAP_US" with N datagrams of SIZE bytes to the
 * requester, GAP_US microseconds apart (the guest under TCG is slow: a
 * burst would only be dropped at its NIC). Runs until killed or TIMEOUT_S.
 *
 *   udpsource PORTFILE [TIMEOUT_S [ADDR]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_SIZE 8192

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	static char buf[MAX_SIZE];
	const char *addr;
	FILE *pf;
	int s;

	if (argc < 2) {
		fprintf(stderr, "usage: udpsource PORTFILE [TIMEOUT_S [ADDR]]\n");
		return 2;
	}
	alarm(argc > 2 ? atoi(argv[2]) : 600);
	addr = argc > 3 ? argv[3] : "127.0.0.1";
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "udpsource: %s is not an IPv4 address\n", addr);
		return 2;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(s, (struct sockaddr *)&sa, &sl)) {
		perror("udpsource: bind");
		return 2;
	}
	pf = fopen(argv[1], "w");
	if (!pf || fprintf(pf, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(pf)) {
		perror(argv[1]);
		return 2;
	}
	memset(buf, 0x5a, sizeof(buf));
	for (;;) {
		struct sockaddr_in peer;
		socklen_t pl = sizeof(peer);
		unsigned int n, size, gap, i, sent = 0;
		char req[64];
		ssize_t r;

		r = recvfrom(s, req, sizeof(req) - 1, 0, (struct sockaddr *)&peer, &pl);
		if (r < 0) {
			perror("udpsource: recvfrom");
			return 1;
		}
		req[r] = 0;
		if (sscanf(req, "%u %u %u", &n, &size, &gap) != 3 || size > MAX_SIZE) {
			fprintf(stderr, "udpsource: bad request '%s'\n", req);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (sendto(s, buf, size, 0, (struct sockaddr *)&peer, pl) == (ssize_t)size)
				sent++;
			if (gap)
				usleep(gap);
		}
		printf("udpsource: sent %u of %u datagrams of %u bytes to %s:%d\n", sent, n,
		       size, inet_ntoa(peer.sin_addr), ntohs(peer.sin_port));
		fflush(stdout);
	}
}
