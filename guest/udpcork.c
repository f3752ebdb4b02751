/*
 * kfrag-udpcork: corked UDP datagrams larger than the MTU, appended to in
 * pieces, on a NIC with scatter-gather (e1000).
 *
 * __ip_append_data() puts the data of a corked datagram into page
 * fragments when the device does scatter-gather. When a piece fills the
 * MTU, the datagram continues in a new skb whose data is all in its head;
 * the next piece then looks at "the last fragment" of an skb without
 * fragments, frags[-1], to see whether it can extend it. Before the fix
 * (patch "net: add support for per-paged-fragment destructors") the
 * series' skb_frag_page() dereferenced that word (dataref and padding)
 * as an owner record: an oops on the first few rounds.
 *
 * Each round: cork, send 100 bytes, KFRAG_BIG bytes (3000), 100, 100,
 * uncork. KFRAG_ROUNDS (500) rounds to KFRAG_HOST:KFRAG_PORT (port 9 of
 * the host, 10.0.2.2 by default; nothing needs to listen). The test sends
 * them over a tap, where the host kernel reassembles them.
 * Reports  KFRAG-KV: udpcork.rounds=  udpcork.bytes=  udpcork.fragcreates=
 * (IP fragments the guest created, from /proc/net/snmp: proof that the
 * datagrams were larger than the MTU).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static long env(const char *name, long def)
{
	const char *v = getenv(name);

	return v ? atol(v) : def;
}

/* IP FragCreates from /proc/net/snmp: the header line, then the values */
static long fragcreates(void)
{
	char names[1024], values[1024], *n, *v, *sn, *sv;
	long r = -1;
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
		if (strncmp(names, "Ip:", 3))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(values, " \n", &sv);
		while (n && v) {
			if (!strcmp(n, "FragCreates"))
				r = atol(v);
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
		break;
	}
	fclose(f);
	return r;
}

/* /proc/net/arp has a complete entry (flags ATF_COM) for ip */
static int arp_complete(const char *ip)
{
	char line[256], addr[64];
	unsigned type, flags;
	int ok = 0;
	FILE *f = fopen("/proc/net/arp", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s 0x%x 0x%x", addr, &type, &flags) == 3 &&
		    !strcmp(addr, ip) && (flags & 0x2))
			ok = 1;
	if (f)
		fclose(f);
	return ok;
}

static struct sockaddr_in sa = { .sin_family = AF_INET };

/* unconnected: an ICMP port unreachable must not fail the next send */
static int sendall(int s, const char *buf, size_t len, int flags)
{
	ssize_t r = sendto(s, buf, len, flags, (struct sockaddr *)&sa,
			   sizeof(sa));

	if (r != (ssize_t)len) {
		printf("KFRAG-KV: udpcork.error=send %zu bytes: %zd %m\n", len, r);
		return -1;
	}
	return 0;
}

int main(void)
{
	static char buf[65536];
	const char *host = getenv("KFRAG_HOST") ?: "10.0.2.2";
	long rounds = env("KFRAG_ROUNDS", 500), big = env("KFRAG_BIG", 3000);
	long i, bytes = 0, frag0 = fragcreates();
	int on = 1, off = 0, pmtu = IP_PMTUDISC_DONT;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	sa.sin_port = htons(env("KFRAG_PORT", 9));

	if (s < 0 || big < 1 || big > (long)sizeof(buf) - 1000 ||
	    inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    setsockopt(s, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu))) {
		printf("KFRAG-KV: udpcork.error=setup (host %s, big %ld): %m\n",
		       host, big);
		return 1;
	}
	memset(buf, 0x5a, sizeof(buf));
	/*
	 * One small datagram first, then wait (up to 5 s) for the
	 * destination's neighbour entry to resolve: until ARP answers, the
	 * guest keeps only the last 3 packets for it and drops the others,
	 * and the rounds take ~100 ms. (QEMU's user network answers ARP for
	 * its own addresses at once; a tap's host kernel takes its time.)
	 */
	if (sendall(s, buf, 1, 0))
		return 1;
	for (i = 0; i < 500 && !arp_complete(host); i++)
		usleep(10000);
	printf("KFRAG-KV: udpcork.arp_ms=%ld\n", i * 10);
	for (i = 0; i < rounds; i++) {
		if (setsockopt(s, IPPROTO_UDP, UDP_CORK, &on, sizeof(on)) ||
		    sendall(s, buf, 100, MSG_MORE) ||
		    sendall(s, buf, big, MSG_MORE) ||
		    sendall(s, buf, 100, MSG_MORE) ||
		    sendall(s, buf, 100, 0) ||
		    setsockopt(s, IPPROTO_UDP, UDP_CORK, &off, sizeof(off)))
			return 1;
		bytes += 300 + big;
		if (i % 50 == 49)
			usleep(10000);	/* let the NIC's ring drain */
	}
	printf("KFRAG-KV: udpcork.rounds=%ld\n", i);
	printf("KFRAG-KV: udpcork.bytes=%ld\n", bytes);
	printf("KFRAG-KV: udpcork.fragcreates=%ld\n", fragcreates() - frag0);
	return 0;
}
