/*
 * The host end of a test: listen on 127.0.0.1 (the guest's 10.0.2.2 under
 * QEMU user networking) on an ephemeral port and write that port to a file
 * the orchestrating script waits for.
 */
#ifndef KFRAG_LISTEN_H
#define KFRAG_LISTEN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

/* The listening socket, or -1 after saying why (prefixed by prog). */
static inline int kfrag_listen_loopback(const char *prog, const char *portfile, int backlog)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int ls, one = 1;
	FILE *pf;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, backlog) ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl)) {
		fprintf(stderr, "%s: ", prog);
		perror("listen on 127.0.0.1");
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
