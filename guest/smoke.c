/*
 * kfrag-smoke: TCP data exchange with host/tcpsink through the virtio NIC.
 *
 * Sends KFRAG_UP bytes of pattern stream KFRAG_SEED to KFRAG_HOST:KFRAG_PORT,
 * the first half with write() and the second with sendfile() from a tmpfs
 * file (the sendpage path), reads the sink's verdict, then receives
 * KFRAG_DOWN bytes of stream seed+1 and checks every byte.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../common/io.h"
#include "../common/pattern.h"

#define CHUNK 65536

static unsigned long long env_num(const char *name, unsigned long long def)
{
	const char *v = getenv(name);

	return v ? strtoull(v, NULL, 0) : def;
}

static int fail(const char *what)
{
	printf("KFRAG-KV: smoke.error=%s:%s\n", what, strerror(errno));
	return 1;
}

int main(void)
{
	static char buf[CHUNK];
	const char *host = getenv("KFRAG_HOST") ? getenv("KFRAG_HOST") : "10.0.2.2";
	unsigned long long seed = env_num("KFRAG_SEED", 1);
	unsigned long long up = env_num("KFRAG_UP", 4 << 20);
	unsigned long long down = env_num("KFRAG_DOWN", 4 << 20);
	unsigned long long half = up / 2, off;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval t0, t1;
	char line[128];
	int s, f;
	size_t n;

	sa.sin_port = htons(env_num("KFRAG_PORT", 0));
	if (!inet_aton(host, &sa.sin_addr) || !sa.sin_port) {
		printf("KFRAG-KV: smoke.error=need kfrag.host and kfrag.port\n");
		return 2;
	}
	/* The sendfile() half comes from a tmpfs file holding its bytes. */
	f = open("/tmp/smoke.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0)
		return fail("open");
	for (off = half; off < up; off += n) {
		n = up - off < CHUNK ? up - off : CHUNK;
		kfrag_pattern(seed, off, buf, n);
		if (kfrag_write_all(f, buf, n))
			return fail("tmpfs-write");
	}

	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		return fail("connect");
	gettimeofday(&t0, NULL);
	n = snprintf(line, sizeof(line), "KFRAG-SMOKE seed=%llu up=%llu down=%llu\n",
		     seed, up, down);
	if (kfrag_write_all(s, line, n))
		return fail("send-header");
	for (off = 0; off < half; off += n) {
		n = half - off < CHUNK ? half - off : CHUNK;
		kfrag_pattern(seed, off, buf, n);
		if (kfrag_write_all(s, buf, n))
			return fail("send");
	}
	{
		off_t fo = 0;
		size_t left = up - half;

		while (left) {
			ssize_t r = sendfile(s, f, &fo, left);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return fail("sendfile");
			left -= r;
		}
	}
	close(f);

	/* The verdict: one line, "OK ..." or "BAD ...". */
	for (n = 0; n < sizeof(line) - 1; n++) {
		if (read(s, line + n, 1) != 1)
			return fail("read-verdict");
		if (line[n] == '\n')
			break;
	}
	line[n] = 0;
	printf("KFRAG-KV: smoke.verdict=%s\n", line);
	if (strncmp(line, "OK ", 3))
		return 1;

	for (off = 0; off < down; ) {
		ssize_t r = read(s, buf, down - off < CHUNK ? down - off : CHUNK);
		long long bad;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail("recv");
		bad = kfrag_pattern_check(seed + 1, off, buf, r);
		if (bad >= 0) {
			printf("KFRAG-KV: smoke.error=received byte %lld differs\n", bad);
			return 1;
		}
		off += r;
	}
	gettimeofday(&t1, NULL);
	{
		/* the segment sizes the connection ran at: the RX page paths
		 * of a NIC at MTU 9000 see only frames larger than 1500 */
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);

		memset(&ti, 0, sizeof(ti));
		if (!getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &tl)) {
			printf("KFRAG-KV: smoke.rcv_mss=%u\n", ti.tcpi_rcv_mss);
			printf("KFRAG-KV: smoke.snd_mss=%u\n", ti.tcpi_snd_mss);
		}
	}
	close(s);
	printf("KFRAG-KV: smoke.up_bytes=%llu\n", up);
	printf("KFRAG-KV: smoke.down_bytes=%llu\n", down);
	printf("KFRAG-KV: smoke.ms=%ld\n",
	       (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000);
	return 0;
}
