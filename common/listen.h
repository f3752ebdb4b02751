/*
 * The host end of a test: listen on 127.0.0.1 (the guest's 10.0.2.2 under
 * QEMU user networking), or on another local address (a tap's), on an
 * ephemeral port and write that port to a file the orchestrating script
 * waits for.
 */
#ifndef KFRAG_LISTEN_H
#define KFRAG_LISTEN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

/*
 * The listening socket on addr (dotted quad; NULL: 127.0.0.1), or -1
 * after saying why (prefixed by prog).
 */
static inline int kfrag_listen(const char *prog, const char *portfile, int backlog,
			       const char *addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int ls, one = 1;
	FILE *pf;

	if (!addr)
		addr = "127.0.0.1";
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "%s: %s is not an IPv4 address\n", prog, addr);
		return -1;
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, backlog) ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl)) {
		fprintf(stderr, "%s: listen on %s: ", prog, addr);
		perror(NULL);
		return -1;
	}
	pf = fopen(portfile, "w");
	if (!pf || fprintf(pf, "%d\n", ntohs(sa.sin_port)) < 0 || fclose(pf)) {
		fprintf(stderr, "%s: ", prog);
		perror(portfile);
		return -1;
	}
	return ls;
}

#endif
