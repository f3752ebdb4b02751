/*
 * udpsource: the host end of the receive-memory measurement (guest/rxmem.c).
 * Binds a UDP socket on ADDR (default 127.0.0.1, the guest's 10.0.2.2
 * under QEMU user networking), writes its port to PORTFILE, and answers
 * each request "N SIZE GAP_US" with N datagrams of SIZE bytes to the
 * requester, GAP_US (0 to 1000000) microseconds apart (the guest under
 * TCG is slow: a burst would only be dropped at its NIC). Runs until
 * killed or TIMEOUT_S.
 *
 * With TOKENSOCK, udpsource listens there for the guest's debug port
 * (QEMU's isa-debugcon, whose chardev connects to it when QEMU starts:
 * scripts/vmrun VM_DEBUGCON), and a request "N SIZE rr" is answered in
 * lock-step: the first datagram at once, each further one when the guest
 * has written a byte to that port (it does once it has read the previous
 * datagram; guest/stream.c). One datagram is in flight at a time, so each
 * is an interrupt of its own whatever the host's timing, and the guest's
 * side of the handshake is one OUT instruction. QEMU connected before the
 * guest booted, so no byte can come before the connection: the request is
 * served on the newest one (each VM is a new QEMU). What comes between
 * exchanges (the BIOS's log goes to the same port, and an exchange cut
 * short leaves bytes) is read and dropped. The exchange ends early if no
 * byte comes for 2 s (the guest's own deadline voids the case); the log
 * line counts the bytes it waited for (N - 1 when all went well).
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

/* listen at path for QEMU's debug-port connections; -1 on failure */
static int token_listen(const char *path)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	int l;

	if (strlen(path) >= sizeof(su.sun_path)) {
		fprintf(stderr, "udpsource: TOKENSOCK %s: a unix socket's path must be under %zu bytes\n",
			path, sizeof(su.sun_path));
		return -1;
	}
	strcpy(su.sun_path, path);
	unlink(path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&su, sizeof(su)) || listen(l, 8)) {
		fprintf(stderr, "udpsource: cannot listen at %s: %s\n", path, strerror(errno));
		return -1;
	}
	return l;
}

/* take a new QEMU's connection: the newest counts (each VM is a new QEMU) */
static void token_accept(int l, int *t)
{
	int c = accept(l, NULL, NULL);

	if (c < 0)
		return;
	if (*t >= 0)
		close(*t);
	*t = c;
}

/* read and drop what has come (the BIOS's log, leftovers); close at EOF */
static void token_drain(int *t)
{
	char junk[4096];
	ssize_t r;

	while ((r = recv(*t, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
		;
	if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
		close(*t);	/* that VM has exited */
		*t = -1;
	}
}

/*
 * Wait for a request on s. Meanwhile take QEMU's connections and read
 * what comes on them: the BIOS writes its log to the same port, and a
 * socket left full would stop the VM.
 */
static void wait_request(int s, int l, int *t)
{
	struct pollfd p[3] = { { .fd = s, .events = POLLIN }, { .fd = l, .events = POLLIN } };

	for (;;) {
		p[2].fd = *t;	/* poll ignores -1 */
		p[2].events = POLLIN;
		if (poll(p, l >= 0 ? 3 : 1, -1) < 0)
			return;
		if (p[1].revents & POLLIN)
			token_accept(l, t);
		if (p[2].fd >= 0 && p[2].fd == *t && p[2].revents)
			token_drain(t);
		if (p[0].revents)
			return;
	}
}

/*
 * The connection of the newest VM, with nothing unread; if there is none
 * yet, wait up to 2 s for one. Returns it (in *t), or -1.
 */
static int token_current(int l, int *t)
{
	struct pollfd p = { .fd = l, .events = POLLIN };

	while (poll(&p, 1, 0) == 1)
		token_accept(l, t);
	if (*t >= 0)
		token_drain(t);
	if (*t < 0 && poll(&p, 1, 2000) == 1) {
		token_accept(l, t);
		if (*t >= 0)
			token_drain(t);
	}
	if (*t < 0)
		fprintf(stderr, "udpsource: no VM connected to the debug port "
			"(is it running with VM_DEBUGCON at udpsource's TOKENSOCK?)\n");
	return *t;
}

/* 1 once the guest wrote a byte to its debug port, 0 after 2 s without */
static int token_wait(int t)
{
	struct pollfd p = { .fd = t, .events = POLLIN };
	char c;

	return poll(&p, 1, 2000) == 1 && read(t, &c, 1) == 1;
}

/*
 * "N SIZE GAP_US" or "N SIZE rr": 1 to 1000000 datagrams of 1 to MAX_SIZE
 * bytes, 0 to 1000000 us apart or in lock-step; 0 if it is one of those
 */
static int parse_request(const char *req, unsigned int *n, unsigned int *size,
			 unsigned int *gap, int *rr)
{
	char mode[16];
	int end = 0;

	if (strspn(req, "0123456789 r") != strlen(req) ||
	    sscanf(req, "%u %u %15s%n", n, size, mode, &end) != 3 || req[end] ||
	    *n < 1 || *n > 1000000 || *size < 1 || *size > MAX_SIZE)
		return -1;
	*rr = !strcmp(mode, "rr");
	*gap = 0;
	if (*rr)
		return 0;
	return strspn(mode, "0123456789") == strlen(mode) && sscanf(mode, "%u", gap) == 1 &&
	       *gap <= 1000000 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	static char buf[MAX_SIZE];
	const char *addr, *tokens;
	int s, l = -1, t = -1;
	FILE *pf;

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
	if (tokens) {
		l = token_listen(tokens);
		if (l < 0)
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
		unsigned int n, size, gap, i, sent = 0, tokens_read = 0;
		char req[64];
		ssize_t r;
		int rr;

		wait_request(s, l, &t);
		r = recvfrom(s, req, sizeof(req) - 1, 0, (struct sockaddr *)&peer, &pl);
		if (r < 0) {
			perror("udpsource: recvfrom");
			return 1;
		}
		req[r] = 0;
		if (parse_request(req, &n, &size, &gap, &rr)) {
			fprintf(stderr, "udpsource: bad request '%s'\n", req);
			continue;
		}
		if (rr) {
			if (l < 0) {
				fprintf(stderr, "udpsource: request '%s' needs TOKENSOCK\n", req);
				continue;
			}
			if (token_current(l, &t) < 0)
				continue;
		}
		for (i = 0; i < n; i++) {
			if (rr && i > 0) {
				if (!token_wait(t))
					break;
				tokens_read++;
			}
			if (sendto(s, buf, size, 0, (struct sockaddr *)&peer, pl) == (ssize_t)size)
				sent++;
			if (gap)
				usleep(gap);
		}
		printf("udpsource: sent %u of %u datagrams of %u bytes to %s:%d", sent, n, size,
		       inet_ntoa(peer.sin_addr), ntohs(peer.sin_port));
		if (rr)
			printf(", in lock-step on %u bytes from the guest", tokens_read);
		printf("\n");
		fflush(stdout);
	}
}
