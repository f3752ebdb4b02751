/*
 * A local receiver that splices (guest/redtest.c KFRAG_RELAY=1).
 *
 * The NFS client mounts 127.0.0.1 instead of the server: this relay, a
 * TCP proxy in the guest such as an splice()-based load balancer or TLS
 * terminator would be, accepts the client's connections on loopback and
 * forwards each to the real server's NFS port. Client to server it moves
 * the bytes with splice(): socket -> pipe -> socket, without reading
 * them, so the pipe and then the upstream socket refer to the pages the
 * loopback skbs carried. Server to client it copies.
 *
 * The client's WRITE data thus crosses a local receiver: the transmitted
 * skbs are delivered to the relay's socket over loopback, and their pages
 * go on to the relay's own TCP connection, which retransmits them over
 * the guest's link (netem) after the write may have returned. If the
 * relay got the writer's own pages (vanilla v3.1: the loopback skb shares
 * them), or pages the writer was told it may reuse (splice takes plain
 * page references), the upstream retransmissions carry the reused buffer:
 * the host's wire oracle sees them on the server's port as it sees the
 * client's own.
 *
 * NFSv3 mounts with mountaddr= the real server (the MOUNT call is not
 * relayed), NFSv4 needs nothing else.
 */
#ifndef KFRAG_RELAY_H
#define KFRAG_RELAY_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define KFRAG_RELAY_PORT 12049

struct relaystat {
	volatile unsigned long long conns, spliced, copied;
	volatile int failed;
	char error[160];
};

static inline void relay_fail(struct relaystat *st, const char *what)
{
	snprintf(st->error, sizeof(st->error), "%s: %s", what, strerror(errno));
	st->failed = 1;
}

/* one client connection, until either side closes it */
static inline void relay_conn(int c, const struct sockaddr_in *up, struct relaystat *st)
{
	static char buf[65536];
	int s = socket(AF_INET, SOCK_STREAM, 0), p[2];
	struct pollfd pf[2];
	ssize_t n, m;

	if (s < 0 || connect(s, (const struct sockaddr *)up, sizeof(*up)) || pipe(p)) {
		relay_fail(st, "relay: connect to the server");
		_exit(1);
	}
	fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
	pf[0] = (struct pollfd){ .fd = c, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = s, .events = POLLIN };
	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[0].revents) { /* client -> server: splice, the pages move on */
			n = splice(c, NULL, p[1], NULL, 1 << 20, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n <= 0 && !(n < 0 && errno == EAGAIN))
				break;
			while (n > 0) {
				m = splice(p[0], NULL, s, NULL, n, SPLICE_F_MOVE);
				if (m <= 0)
					goto out;
				n -= m;
				__sync_fetch_and_add(&st->spliced, m);
			}
		}
		if (pf[1].revents) { /* server -> client: copied */
			n = read(s, buf, sizeof(buf));
			if (n <= 0)
				break;
			for (m = 0; m < n;) {
				ssize_t w = write(c, buf + m, n - m);

				if (w <= 0)
					goto out;
				m += w;
			}
			__sync_fetch_and_add(&st->copied, n);
		}
	}
out:
	_exit(0);
}

/*
 * Listen on 127.0.0.1:KFRAG_RELAY_PORT and relay to server:port; returns
 * the accepting child's pid (kill it with SIGKILL: it and its connection
 * children are one process group), or -1 with st->error set.
 */
static inline pid_t relay_start(const char *server, unsigned port, struct relaystat *st)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(KFRAG_RELAY_PORT) };
	struct sockaddr_in up = { .sin_family = AF_INET, .sin_port = htons(port) };
	int l, one = 1;
	pid_t pid;

	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (inet_pton(AF_INET, server, &up.sin_addr) != 1) {
		errno = EINVAL;
		relay_fail(st, "relay: the server's address");
		return -1;
	}
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&lo, sizeof(lo)) || listen(l, 8)) {
		relay_fail(st, "relay: listen on 127.0.0.1");
		return -1;
	}
	pid = fork();
	if (pid) {
		close(l);
		return pid;
	}
	setpgid(0, 0);
	signal(SIGCHLD, SIG_IGN); /* connection children reap themselves */
	for (;;) {
		int c = accept(l, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			relay_fail(st, "relay: accept");
			_exit(1);
		}
		st->conns++;
		if (fork() == 0) {
			close(l);
			relay_conn(c, &up, st);
		}
		close(c);
	}
}

#endif
