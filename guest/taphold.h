/*
 * A packet tap that holds what it captures (guest/redtest.c KFRAG_TAP).
 *
 * KFRAG_TAP=AT:SECS:MODE: AT seconds into the writers' run a child opens
 * an AF_PACKET socket for every protocol (ETH_P_ALL), as a capture tool
 * that reads with recv() does, with a 4 MiB receive buffer (SO_RCVBUFFORCE:
 * 8 MiB of skb truesize, as the kernel doubles it), and keeps it
 * open for SECS seconds:
 *   unread  never reads it (a stopped tcpdump, a monitor behind on its
 *           backlog): its receive queue keeps the first frames it got
 *           until the socket is read;
 *   slow    reads one frame a second.
 * At AT + SECS it reads everything left, then closes the socket. Every
 * frame it read that the guest sent to the NFS server's port is judged:
 *   - the poison pattern (common/stamp.h: the writer's buffer after
 *     write() returned) anywhere in it: poisoned;
 *   - WRITE calls that start in the frame (NFSv3 WRITE; NFSv4 COMPOUND of
 *     [SEQUENCE,] PUTFH, WRITE): each 4 KiB unit of their data must be
 *     the stamped unit of the call's offset (units_ok), not poison,
 *     another unit or torn (units_wrong);
 *   - every stamp anywhere in the frame must be whole and match its body
 *     (stamps_ok, stamps_bad).
 * A tap handed the writer's own pages (vanilla v3.1: the clone shares
 * them) shows what the buffer holds when the frame is read; a tap handed
 * copies shows the data as written.
 *
 * The writers count the writes that returned in three windows of SECS
 * seconds: before the socket was opened, while it was, and after it was
 * closed (tap.writes_before, tap.writes_during, tap.writes_after): a tap
 * that holds the writer's pages in a way the writer waits for shows as a
 * window without writes.
 */
#ifndef KFRAG_TAPHOLD_H
#define KFRAG_TAPHOLD_H

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/stamp.h"

enum { TAP_OFF, TAP_UNREAD, TAP_SLOW };

struct taphold {
	unsigned at, secs, mode;
	uint16_t nfsport;
	int nfsv4; /* the mount's NFS version is 4.x: COMPOUNDs */
	/* written by the tap's child */
	volatile uint64_t open_us, close_us; /* relative to the run's start */
	volatile uint64_t frames, nfs_frames, write_calls, poisoned;
	volatile uint64_t units_ok, units_wrong, stamps_ok, stamps_bad;
	volatile uint64_t pkt_packets, pkt_drops, truncated;
	volatile int failed;
	char error[160];
};

/* "AT:SECS:unread|slow" -> 0, or -1 */
static inline int taphold_parse(const char *spec, struct taphold *t)
{
	char mode[16];

	memset(t, 0, sizeof(*t));
	if (!spec || !*spec || !strcmp(spec, "0"))
		return 0;
	if (sscanf(spec, "%u:%u:%15s", &t->at, &t->secs, mode) != 3 || !t->secs)
		return -1;
	if (!strcmp(mode, "unread"))
		t->mode = TAP_UNREAD;
	else if (!strcmp(mode, "slow"))
		t->mode = TAP_SLOW;
	else
		return -1;
	return 0;
}

/*
 * The window (0 before, 1 during, 2 after) of a write that returned at
 * t_us, -1 for none: before is [AT - SECS, AT), during [AT, AT + SECS),
 * after SECS seconds from when the tap's child closed the socket (it
 * reads what is left first, up to a second or two: a write returning
 * meanwhile counts nowhere).
 */
static inline int taphold_window(const struct taphold *t, uint64_t t_us)
{
	uint64_t at = (uint64_t)t->at * 1000000, len = (uint64_t)t->secs * 1000000;
	uint64_t closed = t->close_us;

	if (t->mode == TAP_OFF || t_us + len < at)
		return -1;
	if (t_us < at + len)
		return t_us < at ? 0 : 1;
	return closed && t_us >= closed && t_us < closed + len ? 2 : -1;
}

static inline uint32_t taphold_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* XDR opaque<>: length, bytes, padding to 4; 0 when it does not fit */
static inline size_t taphold_opaque(const unsigned char *p, size_t left)
{
	size_t n;

	if (left < 4)
		return 0;
	n = 4 + (((size_t)taphold_be32(p) + 3) & ~(size_t)3);
	return n <= left ? n : 0;
}

/*
 * A WRITE call starting at p (its XID): NFSv3 WRITE, or (v4) a COMPOUND
 * whose ops up to its WRITE are SEQUENCE and PUTFH. Gives the data's
 * offset in the frame, the file offset and the data's length; 0 if p is
 * not one, or it is cut short.
 */
static inline int taphold_write_call(const unsigned char *p, size_t left, int v4,
				     size_t *data, uint64_t *off, uint32_t *len)
{
	/* CALL, RPC v2, NFS, v3 WRITE (7) or v4 COMPOUND (1) */
	const uint32_t call[5] = { 0, 2, 100003, v4 ? 4 : 3, v4 ? 1 : 7 };
	size_t q = 24, n;
	uint32_t ops, op;
	int i;

	if (left < 24)
		return 0;
	for (i = 0; i < 5; i++)
		if (taphold_be32(p + 4 + 4 * i) != call[i])
			return 0;
	for (i = 0; i < 2; i++) { /* credential, verifier: flavour, body */
		if (left < q + 4)
			return 0;
		q += 4;
		n = taphold_opaque(p + q, left - q);
		if (!n)
			return 0;
		q += n;
	}
	if (!v4) { /* file handle, offset, count, stable, data */
		n = taphold_opaque(p + q, left - q);
		if (!n || left < q + n + 20)
			return 0;
		q += n;
		*off = (uint64_t)taphold_be32(p + q) << 32 | taphold_be32(p + q + 4);
		*len = taphold_be32(p + q + 16);
		*data = q + 20;
		return 1;
	}
	n = taphold_opaque(p + q, left - q); /* tag */
	if (!n || left < q + n + 8)
		return 0;
	q += n + 4; /* minorversion */
	for (ops = taphold_be32(p + q), q += 4; ops; ops--) {
		if (left < q + 4)
			return 0;
		op = taphold_be32(p + q);
		q += 4;
		if (op == 53) { /* SEQUENCE: sessionid, seqid, slotid, highest, cachethis */
			q += 32;
		} else if (op == 22) { /* PUTFH */
			n = left > q ? taphold_opaque(p + q, left - q) : 0;
			if (!n)
				return 0;
			q += n;
		} else if (op == 38) { /* WRITE: stateid, offset, stable, data */
			if (left < q + 32)
				return 0;
			*off = (uint64_t)taphold_be32(p + q + 16) << 32 | taphold_be32(p + q + 20);
			*len = taphold_be32(p + q + 28);
			*data = q + 32;
			return 1;
		} else {
			return 0;
		}
	}
	return 0;
}

static inline int taphold_has_poison(const unsigned char *p, size_t len)
{
	static const unsigned char run[32] = {
		0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb,
		0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb,
		0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb,
	};
	uint64_t m = KFRAG_POISON_MAGIC;

	return memmem(p, len, &m, 8) || memmem(p, len, run, sizeof(run));
}

/* judge one TCP payload the guest sent to the NFS server */
static inline void taphold_judge(struct taphold *t, const unsigned char *p, size_t len)
{
	uint64_t magic = KFRAG_STAMP_MAGIC, off;
	const unsigned char *s;
	size_t i, data, n;
	uint32_t dlen, k;

	t->nfs_frames++;
	if (taphold_has_poison(p, len))
		t->poisoned++;
	/* every whole stamp: torn, or its body not its own */
	for (s = p; (s = memmem(s, len - (s - p), &magic, 8)); s++) {
		struct kfrag_stamp st;

		if ((size_t)(s - p) + KFRAG_UNIT > len)
			break;
		memcpy(&st, s, sizeof(st));
		if (kfrag_check_unit(s, ~0u, st.unit, NULL) == KFRAG_OK)
			t->stamps_ok++;
		else
			t->stamps_bad++;
	}
	/* WRITE calls in the frame: the units where the offset says */
	for (i = 0; i + 24 <= len; i++) {
		if (!taphold_write_call(p + i, len - i, t->nfsv4, &data, &off, &dlen))
			continue;
		t->write_calls++;
		data += i;
		for (k = 0; k * KFRAG_UNIT < dlen && data + (size_t)k * KFRAG_UNIT < len; k++) {
			n = len - data - (size_t)k * KFRAG_UNIT;
			if (n > KFRAG_UNIT)
				n = KFRAG_UNIT;
			if (n > dlen - (size_t)k * KFRAG_UNIT)
				n = dlen - (size_t)k * KFRAG_UNIT;
			if (kfrag_check_part(p + data + (size_t)k * KFRAG_UNIT, 0, n, ~0u,
					     off / KFRAG_UNIT + k) == KFRAG_OK)
				t->units_ok++;
			else
				t->units_wrong++;
		}
		i = data - 1; /* the next call's XID is not inside this header */
	}
}

/* one frame from the packet socket: the guest's TCP to the server's port */
static inline void taphold_frame(struct taphold *t, const unsigned char *f, size_t len,
				 const struct sockaddr_ll *from)
{
	size_t ihl, doff;

	t->frames++;
	if (from->sll_pkttype != PACKET_OUTGOING || len < 14 + 20 ||
	    f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != 6 /* TCP */)
		return;
	ihl = (f[14] & 15) * 4;
	if (len < 14 + ihl + 20)
		return;
	if (((unsigned)f[14 + ihl + 2] << 8 | f[14 + ihl + 3]) != t->nfsport)
		return;
	doff = (f[14 + ihl + 12] >> 4) * 4;
	if (len <= 14 + ihl + doff)
		return;
	taphold_judge(t, f + 14 + ihl + doff, len - 14 - ihl - doff);
}

static inline void taphold_fail(struct taphold *t, const char *what)
{
	snprintf(t->error, sizeof(t->error), "%s: %s", what, strerror(errno));
	t->failed = 1;
}

/* read one frame, if one is queued, and judge it; 0 none was there */
static inline int taphold_read(struct taphold *t, int fd, unsigned char *buf, size_t size)
{
	struct sockaddr_ll from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(fd, buf, size, MSG_TRUNC | MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

	if (n < 0)
		return 0;
	if ((size_t)n > size) {
		t->truncated++;
		n = size;
	}
	taphold_frame(t, buf, n, &from);
	return 1;
}

/*
 * A packet socket for every protocol with a receive buffer of `bytes`
 * (SO_RCVBUFFORCE: root; the kernel counts twice that of skb truesize),
 * as a capture tool opens it; -1 with errno set, *what saying which call.
 */
static inline int taphold_socket(int bytes, const char **what)
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	*what = "socket(AF_PACKET)";
	if (fd < 0)
		return -1;
	*what = "SO_RCVBUFFORCE";
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes))) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* the socket's PACKET_STATISTICS: frames handed to it, and dropped; -1 */
static inline int taphold_stats(int fd, uint64_t *packets, uint64_t *drops)
{
	struct tpacket_stats st;
	socklen_t sl = sizeof(st);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl))
		return -1;
	*packets = st.tp_packets;
	*drops = st.tp_drops;
	return 0;
}

/*
 * The tap's child: run_us() gives the time since the writers' run began.
 * Exits 0, or 1 with t->error set.
 */
static inline void taphold_child(struct taphold *t, uint64_t (*run_us)(void))
{
	static unsigned char buf[65536 + 256];
	uint64_t at = (uint64_t)t->at * 1000000, end = at + (uint64_t)t->secs * 1000000, now;
	uint64_t packets, drops;
	const char *what;
	int fd;

	while ((now = run_us()) < at)
		usleep(at - now < 100000 ? at - now : 100000);
	fd = taphold_socket(4 << 20, &what);
	if (fd < 0) {
		taphold_fail(t, what);
		_exit(1);
	}
	t->open_us = run_us();
	while ((now = run_us()) < end) {
		uint64_t next = now + 1000000 < end ? now + 1000000 : end;

		if (t->mode == TAP_SLOW)
			taphold_read(t, fd, buf, sizeof(buf));
		while ((now = run_us()) < next)
			usleep(next - now < 100000 ? next - now : 100000);
	}
	while (taphold_read(t, fd, buf, sizeof(buf)))
		;
	if (!taphold_stats(fd, &packets, &drops)) {
		t->pkt_packets = packets;
		t->pkt_drops = drops;
	}
	close(fd);
	t->close_us = run_us();
	_exit(0);
}

#endif
