/*
 * kfrag-rxmem: slab memory the kernel holds per received frame.
 *
 * A UDP socket with a receive buffer large enough for everything asks the
 * host's udpsource (KFRAG_HOST:KFRAG_PORT) for KFRAG_FRAMES datagrams of
 * KFRAG_SIZE bytes and does not read them: every frame the NIC received
 * stays queued as the skb its driver built (head from kmalloc, the
 * sk_buff from skbuff_head_cache). The growth of /proc/meminfo's Slab
 * while they arrive, divided by the datagrams then read back, is the slab
 * cost of one received frame on this NIC and kernel.
 *
 * Reports  KFRAG-KV: rxmem.frames=  rxmem.slab_bytes=  rxmem.bytes_per_frame=
 *          KFRAG-KV: rxmem.rmem=  (the socket's truesize sum, /proc/net/udp)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RCVBUF (256 << 20)

static long slab_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* the receive queue (sum of truesize) of the UDP socket bound to port */
static long rx_queue(int port)
{
	char line[512];
	long q = -1;
	FILE *f = fopen("/proc/net/udp", "r");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned int lport;
		unsigned long tx, rx;

		if (sscanf(line, " %*d: %*x:%x %*x:%*x %*x %lx:%lx", &lport, &tx, &rx) == 3 &&
		    (int)lport == port)
			q = rx;
	}
	if (f)
		fclose(f);
	return q;
}

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(s, f) < 0 || fclose(f))
		printf("KFRAG-KV: rxmem.warning=cannot write %s: %s\n", path, strerror(errno));
}

int main(void)
{
	const char *host = getenv("KFRAG_HOST") ? getenv("KFRAG_HOST") : "10.0.2.2";
	int port = getenv("KFRAG_PORT") ? atoi(getenv("KFRAG_PORT")) : 0;
	int frames = getenv("KFRAG_FRAMES") ? atoi(getenv("KFRAG_FRAMES")) : 3000;
	int size = getenv("KFRAG_SIZE") ? atoi(getenv("KFRAG_SIZE")) : 1400;
	int gap = getenv("KFRAG_GAP_US") ? atoi(getenv("KFRAG_GAP_US")) : 300;
	struct sockaddr_in sa = { .sin_family = AF_INET }, me = { .sin_family = AF_INET };
	socklen_t ml = sizeof(me);
	int s, buf = RCVBUF, got = 0, stable = 0, waited = 0;
	long before, after, q, lastq = -1;
	char req[64], data[8192];
	char rmem[32];
	ssize_t r;

	if (!port || size <= 0 || size > (int)sizeof(data) || frames <= 0) {
		printf("KFRAG-KV: rxmem.error=need kfrag.port (udpsource), 0 < size <= %zu, frames > 0\n",
		       sizeof(data));
		return 1;
	}
	snprintf(rmem, sizeof(rmem), "%d\n", RCVBUF);
	write_file("/proc/sys/net/core/rmem_max", rmem);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) ||
	    bind(s, (struct sockaddr *)&me, sizeof(me)) ||
	    getsockname(s, (struct sockaddr *)&me, &ml)) {
		printf("KFRAG-KV: rxmem.error=socket: %s\n", strerror(errno));
		return 1;
	}
	sa.sin_port = htons(port);
	inet_aton(host, &sa.sin_addr);

	sleep(1);	/* let boot-time allocations settle */
	before = slab_kb();
	snprintf(req, sizeof(req), "%d %d %d", frames, size, gap);
	if (sendto(s, req, strlen(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("KFRAG-KV: rxmem.error=request to %s:%d: %s\n", host, port, strerror(errno));
		return 1;
	}
	/* done when the queue has not grown for 2 s (or 60 s passed) */
	while (stable < 20 && waited < 600) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		waited++;
		q = rx_queue(ntohs(me.sin_port));
		stable = q > 0 && q == lastq ? stable + 1 : 0;
		lastq = q;
	}
	after = slab_kb();
	while ((r = recv(s, data, sizeof(data), MSG_DONTWAIT)) >= 0)
		if (r == size)
			got++;
	printf("KFRAG-KV: rxmem.frames=%d\n", got);
	printf("KFRAG-KV: rxmem.requested=%d\n", frames);
	printf("KFRAG-KV: rxmem.rmem=%ld\n", lastq);
	printf("KFRAG-KV: rxmem.slab_bytes=%ld\n", (after - before) * 1024);
	if (got == 0 || before < 0 || after < 0) {
		printf("KFRAG-KV: rxmem.error=no datagram received or no Slab in /proc/meminfo\n");
		return 1;
	}
	printf("KFRAG-KV: rxmem.bytes_per_frame=%ld\n", (after - before) * 1024 / got);
	printf("KFRAG-KV: rxmem.truesize_per_frame=%ld\n", lastq / got);
	return 0;
}
