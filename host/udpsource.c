/*
 * udpsource: the host end of the receive-memory measurement (guest/rxmem.c).
 * Binds a UDP socket on ADDR (default 127.0.0.1, the guest's 10.0.2.2
 * under QEMU user networking), writes its port to PORTFILE, and answers
 * each request "N SIZE GAP_US" with N datagrams of SIZE bytes to the
 * requester, GAP_US (0 to 1000000) microseconds apart (the guest under
 * TCG is slow: a burst would only be dropped at its NIC). Runs until
 * killed or TIMEOUT_S.
 *
 * With TOKENSOCK (the path of the guest's debug port, QEMU's isa-debugcon
 * on a unix socket: scripts/vmrun VM_DEBUGCON), a request "N SIZE rr" is
 * answered in lock-step: the first datagram 20 ms after connecting to it
 * (QEMU accepts the connection from its event loop), each further one when
 * the guest has written a byte to that port (it does once it has read the
 * previous datagram; guest/stream.c). One datagram is in flight at a time,
 * so each is an interrupt of its own whatever the host's timing, and the
 * guest's side of the handshake is one OUT instruction. The exchange ends
 * early if no byte comes for 2 s (the guest's own deadline voids the case);
 * the log line counts the bytes it waited for (N - 1 when all went well).
 *
 *   udpsource PORTFILE [TIMEOUT_S [ADDR [TOKENSOCK]]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_SIZE 8192

/*
 * The guest's debug port (QEMU's chardev socket server at path): a fresh
 * connection per request, since each VM is a new server; -1 on failure
 */
static int token_open(const char *path)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	int t = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(su.sun_path, sizeof(su.sun_path), "%s", path);
	if (t >= 0 && strlen(path) < sizeof(su.sun_path) &&
	    !connect(t, (struct sockaddr *)&su, sizeof(su))) {
		/* QEMU accepts from its event loop: a byte before that is lost */
		usleep(20000);
		return t;
	}
	fprintf(stderr, "udpsource: cannot connect to the guest's debug port %s: %s "
		"(is the VM running with VM_DEBUGCON=%s?)\n", path,
		strlen(path) < sizeof(su.sun_path) ? strerror(errno) : "path too long", path);
	if (t >= 0)
		close(t);
	return -1;
}

/* 1 once the guest wrote a byte to its debug port, 0 after 2 s without */
static int token_wait(int t)
{
	struct pollfd p = { .fd = t, .events = POLLIN };
	char c;

	return poll(&p, 1, 2000) == 1 && read(t, &c, 1) == 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	static char buf[MAX_SIZE];
	const char *addr, *tokens;
	FILE *pf;
	int s;

	if (argc < 2) {
		fprintf(stderr, "usage: udpsource PORTFILE [TIMEOUT_S [ADDR [TOKENSOCK]]]\n");
		return 2;
	}
	alarm(argc > 2 ? atoi(argv[2]) : 600);
	addr = argc > 3 ? argv[3] : "127.0.0.1";
	tokens = argc > 4 ? argv[4] : NULL;
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
		unsigned int n, size, gap = 0, i, sent = 0, tokens_read = 0;
		char req[64], mode[16];
		ssize_t r;
		int t = -1;

		r = recvfrom(s, req, sizeof(req) - 1, 0, (struct sockaddr *)&peer, &pl);
		if (r < 0) {
			perror("udpsource: recvfrom");
			return 1;
		}
		req[r] = 0;
		if (sscanf(req, "%u %u %15s", &n, &size, mode) != 3 || size > MAX_SIZE ||
		    (strcmp(mode, "rr") && (strspn(mode, "0123456789") != strlen(mode) ||
					    sscanf(mode, "%u", &gap) != 1 || gap > 1000000))) {
			fprintf(stderr, "udpsource: bad request '%s'\n", req);
			continue;
		}
		if (!strcmp(mode, "rr")) {
			if (!tokens) {
				fprintf(stderr, "udpsource: request '%s' needs TOKENSOCK\n", req);
				continue;
			}
			t = token_open(tokens);
			if (t < 0)
				continue;
		}
		for (i = 0; i < n; i++) {
			if (t >= 0 && i > 0) {
				if (!token_wait(t))
					break;
				tokens_read++;
			}
			if (sendto(s, buf, size, 0, (struct sockaddr *)&peer, pl) == (ssize_t)size)
				sent++;
			if (gap)
				usleep(gap);
		}
		if (t >= 0)
			close(t);
		printf("udpsource: sent %u of %u datagrams of %u bytes to %s:%d", sent, n, size,
		       inet_ntoa(peer.sin_addr), ntohs(peer.sin_port));
		if (t >= 0)
			printf(", in lock-step on %u bytes from the guest", tokens_read);
		printf("\n");
		fflush(stdout);
	}
}
