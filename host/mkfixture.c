/*
 * mkfixture: hand-made inputs with a known answer, for the oracles' own
 * tests (tests/t-50-oracles.sh). Frames are written with libpcap's
 * pcap_dump, as QEMU's filter-dump would record them.
 *
 *   mkfixture tcp OUT.pcap     TCP: a clean 8 KiB WRITE in a two-fragment RPC
 *                              record split over 7 segments, resent whole
 *                              (same xid, same bytes); then a WRITE one of
 *                              whose segments is retransmitted with poison:
 *                              poisoned=1 rpc_retrans=1
 *   mkfixture resend OUT.pcap  TCP: a WRITE resent (same xid) with the next
 *                              generation's bytes: poisoned=1 rpc_retrans=1
 *   mkfixture udp OUT.pcap     UDP: a clean 32 KiB WRITE in 23 IP fragments,
 *                              out of order; resent with one poisoned unit:
 *                              poisoned=1 rpc_retrans=1
 *   mkfixture udp-parts OUT.pcap  UDP, wsize=1024: a unit's four 1 KiB
 *                              parts, clean; the third resent with poison,
 *                              the head resent whole; then a last part
 *                              holding poison bytes: poisoned=2 rpc_retrans=2
 *   mkfixture tcp-wrap OUT.pcap  TCP: a WRITE at the start of a 4.1 GiB
 *                              stream, then one segment every 16 MiB (a
 *                              capture of a few segments of it); three
 *                              resent with poison: at 2 GiB + 4 KiB, across
 *                              the sequence-number wrap, at 4 GiB + 4 KiB;
 *                              one resent intact, one resent 48 MiB behind
 *                              the front: poisoned=3 tcp_retrans_segments=4
 *                              tcp_unjudged_segments=1
 *   mkfixture udp-late-dup OUT.pcap  UDP, 32 KiB WRITEs in IP fragments: a
 *                              fragment copy with poison before its datagram
 *                              is complete, one 201 datagrams after it was;
 *                              then the IP id comes round, a new datagram
 *                              with the first one's id: poisoned=2
 *   mkfixture reconnect-late OUT.pcap  TCP: after a reconnect from the same
 *                              port, a copy of the old connection's segment
 *                              with poison, one intact, a late copy of its
 *                              SYN: poisoned=1 tcp_reconnects=1
 *   mkfixture cut OUT.pcap     TCP, connections the client ends: a FIN on
 *                              the segment that ends half a record, then an
 *                              RST (the linger's end); a FIN between two
 *                              records; an RST after half a record, sent
 *                              after the next connection's SYN, with bytes
 *                              not in the capture before it; an RST at the
 *                              end of a record whose last segment is not
 *                              in the capture; an RST after a record whose
 *                              first segment (its marker) is not:
 *                              tcp_cut_fin=1 tcp_cut_rst=1 tcp_end_unknown=1
 *                              tcp_reconnects=4 poisoned=0
 *   mkfixture reconnect-overlap OUT.pcap  TCP: the new connection's ISN
 *                              inside the old one's bytes; a poisoned copy
 *                              of an old segment ahead of the new front,
 *                              told apart by its ACK number: poisoned=1
 *   mkfixture xid-programs OUT.pcap  TCP: WRITEs whose xids MOUNT calls
 *                              (port 801; port 800) had: poisoned=0
 *                              rpc_retrans=0
 *   mkfixture ip-unjudged OUT.pcap  UDP: a late piece of a datagram given
 *                              up, a fragment past 65535 bytes:
 *                              ip_unjudged_fragments=2
 *   mkfixture v40 OUT.pcap     TCP, NFSv4.0 COMPOUNDs (PUTFH WRITE GETATTR): a
 *                              WRITE resent intact, one resent with a
 *                              poisoned unit, one behind a LOOKUP (not
 *                              known: not judged), one clean, a GETATTR
 *                              compound: poisoned=1 rpc_retrans=2
 *                              write_calls=5 v4_unparsed_compounds=1
 *   mkfixture v41 OUT.pcap     the same in NFSv4.1 (SEQUENCE PUTFH WRITE
 *                              GETATTR)
 *   mkfixture v4-fh OUT.pcap   NFSv4.1: the current file handle (PUTFH,
 *                              SAVEFH, RESTOREFH); a unit of file 1 under
 *                              file 0's handle: poisoned=1
 *   mkfixture nfs-mixed OUT.pcap  NFSv3, v4.0 and v4.1 WRITEs in one
 *                              stream, the v4.1 one resent with the next
 *                              generation's bytes: poisoned=1 rpc_retrans=1
 *   mkfixture v4-unparsed OUT.pcap  NFSv4.1 without a WRITE the oracle can
 *                              judge (one behind a LOOKUP):
 *                              v4_unparsed_compounds=1, no WRITE
 *   mkfixture empty OUT.pcap   no frames at all
 *   mkfixture nowrite OUT.pcap TCP traffic to port 2049 without a WRITE
 *   mkfixture disk DIR MANIFEST  two files of 8 units and their manifest,
 *                              one unit poisoned, one in-flight unit one
 *                              generation ahead (allowed): corrupted=1
 *   mkfixture disk-missing DIR MANIFEST  the same, but the manifest lacks
 *                              file 1's line (2 writers started): not judged
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/stamp.h"

static pcap_dumper_t *dump;
static uint32_t cseq = 1000, ipid = 1;
static uint32_t cack;          /* the client's ACK number: the server's bytes it acknowledges */
static uint16_t csport = 800;  /* the client's TCP port */
static double clock_s = 1;

static void put32(unsigned char *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static void put16(unsigned char *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }

/* One IPv4 frame guest -> host; frag_off in bytes, mf: more fragments. */
static void ip_frame(int proto, uint16_t id, size_t frag_off, int mf, const unsigned char *l4, size_t len)
{
	unsigned char f[2000];
	struct pcap_pkthdr h;

	memset(f, 0, 34);
	memcpy(f, "\x52\x55\x0a\x00\x02\x02\x52\x54\x00\x12\x34\x56\x08\x00", 14);
	f[14] = 0x45;
	put16(f + 16, 20 + len);
	put16(f + 18, id);
	put16(f + 20, (mf ? 0x2000 : 0) | frag_off / 8);
	f[22] = 64;
	f[23] = proto;
	memcpy(f + 26, "\x0a\x00\x02\x0f\x0a\x00\x02\x02", 8); /* 10.0.2.15 -> 10.0.2.2 */
	memcpy(f + 34, l4, len);
	h.ts.tv_sec = (long)clock_s;
	h.ts.tv_usec = (long)((clock_s - (long)clock_s) * 1e6);
	clock_s += 0.001;
	h.caplen = h.len = 34 + len;
	pcap_dump((u_char *)dump, &h, f);
}

static void tcp_seg(uint32_t seq, int flags, const unsigned char *p, size_t len)
{
	unsigned char t[1600];

	memset(t, 0, 20);
	put16(t, csport);
	put16(t + 2, 2049);
	put32(t + 4, seq);
	put32(t + 8, cack);
	t[12] = 5 << 4;
	t[13] = flags;
	put16(t + 14, 65535);
	if (len) /* tcp_open and the pure ACKs pass no bytes (NULL) */
		memcpy(t + 20, p, len);
	ip_frame(6, ipid++, 0, 0, t, 20 + len);
}

/* An NFSv3 WRITE call of units [unit, unit + n) of file 0 at generation gen. */
static size_t write_call(unsigned char *b, uint32_t xid, uint32_t unit, uint32_t n, uint64_t gen)
{
	static const uint32_t head[] = { 0, 2, 100003, 3, 7, 0, 0, 0, 0, 8 };
	size_t o = 4, i;

	put32(b, xid);
	for (i = 0; i < sizeof(head) / 4; i++, o += 4)
		put32(b + o, head[i]); /* CALL, rpcvers 2, NFS v3 WRITE, AUTH_NULL cred+verf, fh len */
	memcpy(b + o, "FH-FILE0", 8);
	o += 8;
	put32(b + o, 0);
	put32(b + o + 4, unit * KFRAG_UNIT); /* offset */
	put32(b + o + 8, n * KFRAG_UNIT);    /* count */
	put32(b + o + 12, 2);                /* FILE_SYNC */
	put32(b + o + 16, n * KFRAG_UNIT);   /* data length */
	o += 20;
	for (i = 0; i < n; i++, o += KFRAG_UNIT)
		kfrag_stamp_unit(b + o, 0, 0, unit + i, gen);
	return o;
}

/* A WRITE of bytes [at, at + len) of unit `unit` (file 0, generation gen). */
static size_t part_call(unsigned char *b, uint32_t xid, uint32_t unit, size_t at, size_t len,
			uint64_t gen)
{
	unsigned char u[KFRAG_UNIT];
	size_t o = write_call(b, xid, unit, 0, gen);

	put32(b + o - 16, unit * KFRAG_UNIT + at); /* offset */
	put32(b + o - 12, len);                    /* count */
	put32(b + o - 4, len);                     /* data length */
	kfrag_stamp_unit(u, 0, 0, unit, gen);
	memcpy(b + o, u + at, len);
	return o + len;
}

/* Send bytes on the TCP stream in MSS-sized segments from the current seq. */
static void tcp_send(const unsigned char *p, size_t len)
{
	size_t o, n;

	for (o = 0; o < len; o += n) {
		n = len - o < 1448 ? len - o : 1448;
		tcp_seg(cseq, 0x18, p + o, n);
		cseq += n;
	}
}

/* A record with the marker; split into two fragments when twofrag. */
static size_t record(unsigned char *out, const unsigned char *call, size_t len, int twofrag)
{
	size_t a = twofrag ? 100 : len;

	put32(out, (twofrag ? 0 : 0x80000000u) | a);
	memcpy(out + 4, call, a);
	if (!twofrag)
		return 4 + len;
	put32(out + 4 + a, 0x80000000u | (len - a));
	memcpy(out + 8 + a, call + a, len - a);
	return 8 + len;
}

static void tcp_open(void)
{
	tcp_seg(cseq - 1, 0x02, NULL, 0);
}

static void fixture_tcp(int resend_poisoned)
{
	static unsigned char call[70000], rec[70000];
	size_t clen, rlen;
	uint32_t seq0;

	tcp_open();
	/* clean: WRITE units 0-1, two-fragment record, resent whole and identical */
	clen = write_call(call, 0x1001, 0, 2, 1);
	rlen = record(rec, call, clen, 1);
	tcp_send(rec, rlen);
	if (resend_poisoned) {
		/* the resend carries the next generation: what the app put in its buffer */
		clen = write_call(call, 0x1001, 0, 2, 2);
		rlen = record(rec, call, clen, 0);
	}
	tcp_send(rec, rlen);
	if (resend_poisoned)
		return;
	/* WRITE units 4-7; then its third segment again, with the poison */
	clen = write_call(call, 0x1002, 4, 4, 1);
	rlen = record(rec, call, clen, 0);
	seq0 = cseq;
	tcp_send(rec, rlen);
	memset(rec + 2 * 1448, 0xdb, 1448); /* the poison the app wrote after write() returned */
	tcp_seg(seq0 + 2 * 1448, 0x18, rec + 2 * 1448, 1448);
}

/* A WRITE, then the client reconnects from the same port (a new ISN) and
 * sends another WRITE: two streams, nothing poisoned. */
static void fixture_reconnect(void)
{
	static unsigned char call[70000], rec[70000];
	size_t clen, rlen;

	tcp_open();
	clen = write_call(call, 0x2001, 0, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
	cseq += 100000;
	tcp_open();
	clen = write_call(call, 0x2002, 2, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
}

/* The handshake's last segment: a pure ACK at the first data byte. */
static void tcp_handshake_ack(void)
{
	tcp_seg(cseq, 0x10, NULL, 0);
}

/*
 * A copy of an old connection's segment that comes after the client
 * reconnected from the same port (netem still held it, or duplicated it):
 * connection 1 WRITEs units 4-7; the client reconnects from port 800 with
 * a new ISN and WRITEs units 8-9; then connection 1's third segment comes
 * again with poison, its fourth intact, and a late copy of connection 1's
 * SYN (no new connection); connection 2 WRITEs units 10-11:
 * poisoned=1 tcp_retrans_segments=2 tcp_reconnects=1 write_calls=3.
 */
static void fixture_reconnect_late(void)
{
	static unsigned char call[70000], rec1[70000], rec[70000];
	size_t clen, rlen;
	uint32_t seq1;

	tcp_open();
	seq1 = cseq;
	clen = write_call(call, 0x8001, 4, 4, 1);
	rlen = record(rec1, call, clen, 0);
	tcp_send(rec1, rlen);
	cseq += 100000;
	tcp_open();
	clen = write_call(call, 0x8002, 8, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
	memset(rec1 + 2 * 1448, 0xdb, 1448); /* the app's poison, after write() returned */
	tcp_seg(seq1 + 2 * 1448, 0x18, rec1 + 2 * 1448, 1448);
	tcp_seg(seq1 + 3 * 1448, 0x18, rec1 + 3 * 1448, 1448);
	tcp_seg(seq1 - 1, 0x02, NULL, 0);
	clen = write_call(call, 0x8003, 10, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
}

/* A one-fragment record of a WRITE of units [unit, unit + 2), generation 1 */
static size_t write_record(unsigned char *out, uint32_t xid, uint32_t unit)
{
	static unsigned char call[70000];

	return record(out, call, write_call(call, xid, unit, 2, 1), 0);
}

/* The client ends connections in and between records (see the usage). */
static void fixture_cut(void)
{
	static unsigned char rec[70000];
	size_t rlen, half;
	uint32_t end;

	/* 1: a record, then half of the next with the FIN on its last segment */
	tcp_open();
	rlen = write_record(rec, 0x9001, 0);
	tcp_send(rec, rlen);
	write_record(rec, 0x9002, 2); /* half of it sent */
	tcp_send(rec, 2 * 1448);
	tcp_seg(cseq, 0x19, rec + 2 * 1448, 1448);
	cseq += 1448;
	tcp_seg(cseq + 1, 0x04, NULL, 0); /* the RST after the FIN: not counted */
	/* 2: a record, then a FIN at its end */
	cseq += 100000;
	tcp_open();
	rlen = write_record(rec, 0x9003, 4);
	tcp_send(rec, rlen);
	tcp_seg(cseq, 0x11, NULL, 0);
	/* 3: a record and half of the next; 2 more segments never captured */
	cseq += 100000;
	tcp_open();
	rlen = write_record(rec, 0x9004, 6);
	tcp_send(rec, rlen);
	write_record(rec, 0x9005, 8);
	half = 2 * 1448;
	tcp_send(rec, half);
	end = cseq + 2 * 1448;
	/* 4: its SYN before connection 3's RST, then a record */
	cseq += 100000;
	tcp_open();
	tcp_seg(end, 0x04, NULL, 0);
	rlen = write_record(rec, 0x9006, 10);
	tcp_send(rec, rlen);
	/* a record without its last segment, then an RST at its end: no cut */
	rlen = write_record(rec, 0x9007, 12);
	half = rlen - rlen % 1448;
	tcp_send(rec, half);
	tcp_seg(cseq + (rlen - half), 0x04, NULL, 0);
	/* 5: a record without its first segment, then an RST: unknown */
	cseq += 100000;
	tcp_open();
	rlen = write_record(rec, 0x9008, 14);
	cseq += 1448;
	tcp_send(rec + 1448, rlen - 1448);
	tcp_seg(cseq, 0x04, NULL, 0);
}

/*
 * The new connection's ISN lies inside the old one's sequence numbers
 * (Linux's ISN clock runs at 16 MB/s; a connection that sent faster is
 * overtaken): connection 2's bytes take sequence numbers connection 1
 * used, with other bytes. The two are told apart by their ACK numbers
 * (each connection acknowledges its own server's bytes). Connection 1
 * WRITEs units 0-3 (12 segments); connection 2 starts 3000 bytes into
 * them and WRITEs units 4-5; connection 1's tenth segment comes again
 * with poison, ahead of connection 2's front; connection 2 WRITEs units
 * 6-7 over it: poisoned=1 tcp_reconnects=1 write_calls=3.
 */
static void fixture_reconnect_overlap(void)
{
	static unsigned char call[70000], rec1[70000], rec[70000];
	size_t clen, rlen;
	uint32_t seq1;

	cack = 0x11110000;
	tcp_open();
	tcp_handshake_ack();
	seq1 = cseq;
	clen = write_call(call, 0x9001, 0, 4, 1);
	rlen = record(rec1, call, clen, 0);
	tcp_send(rec1, rlen);
	cseq = seq1 + 3000;
	cack = 0x22220000;
	tcp_open();
	tcp_handshake_ack();
	clen = write_call(call, 0x9002, 4, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
	cack = 0x11110000;
	memset(rec1 + 9 * 1448 + 200, 0xdb, 1000);
	tcp_seg(seq1 + 9 * 1448, 0x18, rec1 + 9 * 1448, 1448);
	cack = 0x22220000;
	clen = write_call(call, 0x9003, 6, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
}

/* An RPC call of another program: MOUNT v3 MNT of "/export". */
static size_t mnt_call(unsigned char *b, uint32_t xid)
{
	static const uint32_t head[] = { 0, 2, 100005, 3, 1, 0, 0, 0, 0, 7 };
	size_t o = 4, i;

	put32(b, xid);
	for (i = 0; i < sizeof(head) / 4; i++, o += 4)
		put32(b + o, head[i]);
	memcpy(b + o, "/export\0", 8);
	return o + 8;
}

/*
 * xids are the client's, per RPC client: the MOUNT client (port 801) and
 * the NFS client (port 800) count their own, and a MOUNT call on the NFS
 * client's port is another program. WRITEs whose xid a MOUNT call had
 * before are first transmissions: poisoned=0 rpc_retrans=0 write_calls=2.
 */
static void fixture_xid_programs(void)
{
	static unsigned char call[70000], rec[70000];
	size_t clen, rlen;

	csport = 801;
	tcp_open();
	clen = mnt_call(call, 0x5001);
	tcp_send(rec, record(rec, call, clen, 0));
	csport = 800;
	cseq += 100000;
	tcp_open();
	clen = mnt_call(call, 0x5002);
	tcp_send(rec, record(rec, call, clen, 0));
	clen = write_call(call, 0x5001, 0, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
	clen = write_call(call, 0x5002, 2, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
}

/* Datagram d of n bytes (UDP header and call) into `out`; returns n. */
static size_t udp_build(unsigned char *d, const unsigned char *call, size_t len)
{
	size_t n = 8 + len;

	memset(d, 0, 8);
	put16(d, 800);
	put16(d + 2, 2049);
	put16(d + 4, n);
	memcpy(d + 8, call, len);
	return n;
}

/* Fragment k (1480 bytes each) of datagram d of n bytes, IP id `id`. */
static void udp_frag(uint16_t id, const unsigned char *d, size_t n, size_t k)
{
	size_t o = k * 1480;

	ip_frame(17, id, o, o + 1480 < n, d + o, n - o < 1480 ? n - o : 1480);
}

static void udp_datagram(const unsigned char *call, size_t len, int shuffle)
{
	static unsigned char d[70000];
	size_t n = udp_build(d, call, len), k, nfr = (n + 1479) / 1480;
	uint16_t id = ipid++;

	for (k = 0; k < nfr; k++)
		udp_frag(id, d, n, shuffle ? (k * 7 + 3) % nfr : k); /* 7 is prime to 23: a permutation */
}

/*
 * A 4.1 GiB stream, of which the capture holds a WRITE at the start, then
 * a 100-byte segment every 16 MiB: every jump ahead is within the
 * oracle's window. The first data byte's sequence number makes the 32-bit
 * sequence numbers wrap at 3.75 GiB; at 4 GiB they are the WRITE's again.
 */
static void fixture_tcp_wrap(void)
{
	static unsigned char call[70000], rec[70000], seg[1448], bad[1448];
	const uint64_t at1 = (1ull << 31) + 4096,        /* past 2 GiB */
		at2 = (1ull << 32) - 0x10000800 - 700,   /* seq 0xfffffd44: crosses 2^32 */
		at3 = (1ull << 32) + 4096;               /* past 4 GiB: seq of the WRITE's bytes */
	const uint64_t step = 16 << 20;
	unsigned char u[KFRAG_UNIT], stone[100];
	uint32_t isn = 0x10000800;
	uint64_t k, rel;
	size_t clen, rlen;
	int done1 = 0, done2 = 0, done3 = 0;

	cseq = isn;
	tcp_open();
	clen = write_call(call, 0x6001, 0, 2, 1);
	rlen = record(rec, call, clen, 0);
	tcp_send(rec, rlen);
	memset(stone, 'S', sizeof(stone));
	for (k = 1; k <= 257; k++) {
		rel = k * step + 16384; /* clear of the WRITE's bytes at 4 GiB */
		if (!done1 && at1 < rel) { /* sent; resent with poison */
			kfrag_stamp_unit(u, 0, 0, 40, 1);
			memcpy(seg, u, sizeof(seg));
			memcpy(bad, seg, sizeof(bad));
			memset(bad + 100, 0xdb, 100);
			tcp_seg(isn + (uint32_t)at1, 0x18, seg, sizeof(seg));
			tcp_seg(isn + (uint32_t)at1, 0x18, bad, sizeof(bad));
			done1 = 1;
		}
		if (!done2 && at2 < rel) { /* sent; resent intact; resent with poison */
			kfrag_stamp_unit(u, 0, 0, 41, 1);
			memcpy(seg, u + 1000, sizeof(seg));
			memcpy(bad, seg, sizeof(bad));
			memset(bad + 1400, 0xdb, 48); /* after the wrap */
			tcp_seg(isn + (uint32_t)at2, 0x18, seg, sizeof(seg));
			tcp_seg(isn + (uint32_t)at2, 0x18, seg, sizeof(seg));
			tcp_seg(isn + (uint32_t)at2, 0x18, bad, sizeof(bad));
			done2 = 1;
		}
		if (!done3 && at3 < rel) { /* new bytes where the WRITE was; resent with poison */
			kfrag_stamp_unit(u, 0, 0, 42, 1);
			memcpy(seg, u, sizeof(seg));
			memcpy(bad, seg, sizeof(bad));
			memset(bad + 700, 0xdb, 8);
			tcp_seg(isn + (uint32_t)at3, 0x18, seg, sizeof(seg));
			tcp_seg(isn + (uint32_t)at3, 0x18, bad, sizeof(bad));
			done3 = 1;
		}
		tcp_seg(isn + (uint32_t)rel, 0x18, stone, sizeof(stone));
	}
	/* a segment resent 48 MiB behind the front: no TCP sender does that */
	tcp_seg(isn + (uint32_t)(254 * step + 16384), 0x18, stone, sizeof(stone));
}

static void fixture_udp(void)
{
	static unsigned char call[70000];
	size_t clen;

	clen = write_call(call, 0x2001, 8, 8, 1);
	udp_datagram(call, clen, 1);
	/* resent; the buffer's unit 3 was already overwritten with poison */
	kfrag_poison_unit(call + clen - 5 * KFRAG_UNIT, 0);
	udp_datagram(call, clen, 0);
}

static int fixture_disk(const char *dir, const char *manifest, int missing)
{
	unsigned char u[KFRAG_UNIT];
	char path[4096];
	FILE *f, *m = fopen(manifest, "w");
	unsigned file, i;

	if (!m) {
		fprintf(stderr, "error: %s: %s\n", manifest, strerror(errno));
		return 1;
	}
	/* as guest/redtest.c prints it: the writers started, then their lines */
	fprintf(m, "KFRAG-KV: writers_started=2\n");
	for (file = 0; file < 2; file++) {
		int say = !(missing && file == 1); /* disk-missing: file 1's line lost */

		snprintf(path, sizeof(path), "%s/w%03u.dat", dir, file);
		f = fopen(path, "wb");
		if (!f) {
			fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
			return 1;
		}
		if (say)
			fprintf(m, "noise before\nKFRAG-MANIFEST: file=%u units=8 gens=", file);
		for (i = 0; i < 8; i++) {
			uint64_t gen = 2 + i % 3;
			const char *plus = "";

			if (file == 0 && i == 3) /* in flight at the end: gen+1 landed, allowed */
				kfrag_stamp_unit(u, file, file, i, gen + 1), plus = "+";
			else if (file == 1 && i == 5) /* the one bad block */
				kfrag_poison_unit(u, file);
			else
				kfrag_stamp_unit(u, file, file, i, gen);
			fwrite(u, 1, sizeof(u), f);
			if (say)
				fprintf(m, "%s%lu%s", i ? "," : "", (unsigned long)gen, plus);
		}
		if (say)
			fprintf(m, "\n");
		fclose(f);
	}
	fclose(m);
	return 0;
}

static void fixture_udp_parts(void)
{
	unsigned char call[2048];
	size_t clen, at;

	for (at = 0; at < KFRAG_UNIT; at += 1024) {
		clen = part_call(call, 0x3000 + at, 2, at, 1024, 1);
		udp_datagram(call, clen, 1);
	}
	/* the head part resent intact: an RPC retransmission, not poisoned */
	clen = part_call(call, 0x3000, 2, 0, 1024, 1);
	udp_datagram(call, clen, 1);
	/* the third part resent after write() returned: the buffer is poison */
	clen = part_call(call, 0x3000 + 2048, 2, 2048, 1024, 1);
	memset(call + clen - 1024, 0xdb, 1024);
	udp_datagram(call, clen, 0);
	/* a first transmission of a last part that is already poison */
	clen = part_call(call, 0x4000, 3, 3072, 1024, 1);
	memset(call + clen - 1024 + 100, 0xdb, 40);
	udp_datagram(call, clen, 0);
}

/*
 * Copies of IP fragments: with other bytes before the datagram is
 * complete, and long after it was (more datagrams since than any
 * reassembly queue holds); then the sender's 16-bit IP id comes round and
 * a new datagram takes the first one's id: that is no copy.
 */
static void fixture_udp_late_dup(void)
{
	static unsigned char call[70000], a[70000], b[70000], c[70000];
	size_t clen, an, bn, k, nfr;
	uint16_t ida, idb;
	unsigned i;

	clen = write_call(call, 0x7001, 0, 8, 1);
	an = udp_build(a, call, clen);
	nfr = (an + 1479) / 1480;
	ida = ipid++;
	for (k = 0; k < nfr; k++)
		udp_frag(ida, a, an, k);
	/* B: before its last fragment, a copy of its third with poison */
	clen = write_call(call, 0x7002, 8, 8, 1);
	bn = udp_build(b, call, clen);
	idb = ipid++;
	for (k = 0; k + 1 < nfr; k++)
		udp_frag(idb, b, bn, k);
	memcpy(c, b, bn);
	memset(c + 2 * 1480 + 100, 0xdb, 200);
	udp_frag(idb, c, bn, 2);
	udp_frag(idb, b, bn, nfr - 1);
	/* 200 other datagrams: 1600-byte WRITEs, two fragments each */
	for (i = 0; i < 200; i++) {
		clen = part_call(call, 0x7100 + i, 16 + i, 0, 1600, 1);
		udp_datagram(call, clen, 0);
	}
	/* A's sixth fragment again, intact; its eighth, with poison */
	udp_frag(ida, a, an, 5);
	memcpy(c, a, an);
	memset(c + 7 * 1480 + 300, 0xdb, 64);
	udp_frag(ida, c, an, 7);
	/* the id counter comes round (other packets take most ids): 63 more
	 * datagrams 1024 ids apart, then a new 32 KiB WRITE with A's id */
	for (i = 1; i < 64; i++) {
		ipid = ida + i * 1024;
		clen = part_call(call, 0x7400 + i, 300 + i, 0, 1600, 1);
		udp_datagram(call, clen, 0);
	}
	ipid = ida;
	clen = write_call(call, 0x7500, 24, 8, 1);
	udp_datagram(call, clen, 0);
}

/*
 * IP fragments the oracle cannot judge, counted, never dropped silently:
 * the last fragment of a datagram given up (it comes after 300 other
 * datagrams), and a fragment reaching past 65535 bytes:
 * ip_unjudged_fragments=2, write_calls=300.
 */
static void fixture_ip_unjudged(void)
{
	static unsigned char call[70000], a[70000];
	unsigned char bad[100];
	size_t clen, an, k, nfr;
	uint16_t ida;
	unsigned i;

	clen = write_call(call, 0xa001, 0, 8, 1);
	an = udp_build(a, call, clen);
	nfr = (an + 1479) / 1480;
	ida = ipid++;
	for (k = 0; k + 1 < nfr; k++)
		udp_frag(ida, a, an, k);
	for (i = 0; i < 300; i++) {
		clen = part_call(call, 0xa100 + i, 16 + i, 0, 1600, 1);
		udp_datagram(call, clen, 0);
	}
	udp_frag(ida, a, an, nfr - 1);
	memset(bad, 0xdb, sizeof(bad));
	ip_frame(17, ipid++, 65528, 0, bad, sizeof(bad));
}

/*
 * ---- NFSv4 COMPOUNDs (RFC 7530, RFC 8881) ----
 * Built op by op as the Linux client sends them, with an AUTH_SYS
 * credential; every builder returns the bytes it wrote.
 */
static size_t xdr_opaque(unsigned char *b, const void *p, uint32_t n)
{
	size_t padded = (n + 3) & ~3u;

	put32(b, n);
	memcpy(b + 4, p, n);
	memset(b + 4 + n, 0, padded - n);
	return 4 + padded;
}

/* The RPC call header of a COMPOUND, then its tag, minorversion and op count. */
static size_t v4_head(unsigned char *b, uint32_t xid, const char *tag, uint32_t minor, uint32_t nops)
{
	static const uint32_t head[] = { 0, 2, 100003, 4, 1, 1 }; /* CALL, rpcvers 2, NFS v4 COMPOUND, AUTH_SYS */
	unsigned char sys[28];
	size_t o = 4, i;

	put32(b, xid);
	for (i = 0; i < sizeof(head) / 4; i++, o += 4)
		put32(b + o, head[i]);
	put32(sys, 12345);                       /* stamp */
	xdr_opaque(sys + 4, "kfrag", 5);         /* machinename */
	memset(sys + 16, 0, 12);                 /* uid 0, gid 0, no gids */
	o += xdr_opaque(b + o, sys, sizeof(sys));
	put32(b + o, 0);                         /* verifier: AUTH_NULL */
	put32(b + o + 4, 0);
	o += 8;
	o += xdr_opaque(b + o, tag, strlen(tag));
	put32(b + o, minor);
	put32(b + o + 4, nops);
	return o + 8;
}

/* An op without arguments (PUTROOTFH, SAVEFH, RESTOREFH, ...) */
static size_t op4(unsigned char *b, uint32_t op)
{
	put32(b, op);
	return 4;
}

/* SEQUENCE (53): sessionid[16], sequenceid, slotid, highest_slotid, cachethis */
static size_t op4_sequence(unsigned char *b, uint32_t seqid)
{
	put32(b, 53);
	memcpy(b + 4, "KFRAG-SESSION-01", 16);
	put32(b + 20, seqid);
	put32(b + 24, 0);
	put32(b + 28, 0);
	put32(b + 32, 0);
	return 36;
}

/* PUTFH (22) of file `file`'s handle: 30 bytes (XDR pads them to 32) */
static size_t op4_putfh(unsigned char *b, uint32_t file)
{
	char fh[31];

	snprintf(fh, sizeof(fh), "NFS4-FILEHANDLE-OF-FILE-%06u", file);
	put32(b, 22);
	return 4 + xdr_opaque(b + 4, fh, 30);
}

/* GETATTR (9) of a bitmap of `words` words */
static size_t op4_getattr(unsigned char *b, uint32_t words)
{
	uint32_t i;

	put32(b, 9);
	put32(b + 4, words);
	for (i = 0; i < words; i++)
		put32(b + 8 + 4 * i, 0x0010011a >> i);
	return 8 + 4 * words;
}

/* LOOKUP (15) of a name: an op the oracle does not step over */
static size_t op4_lookup(unsigned char *b, const char *name)
{
	put32(b, 15);
	return 4 + xdr_opaque(b + 4, name, strlen(name));
}

/* WRITE (38) of units [unit, unit + n) of file `file` at generation gen:
 * stateid, offset, stable (UNSTABLE4), data<>; its data at b + 36 */
static size_t op4_write(unsigned char *b, uint32_t file, uint32_t unit, uint32_t n, uint64_t gen)
{
	uint32_t i;

	put32(b, 38);
	put32(b + 4, 1);
	memcpy(b + 8, "KFRAG-STATE1", 12);
	put32(b + 20, 0);
	put32(b + 24, unit * KFRAG_UNIT);
	put32(b + 28, 0);
	put32(b + 32, n * KFRAG_UNIT);
	for (i = 0; i < n; i++)
		kfrag_stamp_unit(b + 36 + i * KFRAG_UNIT, file, 0, unit + i, gen);
	return 36 + n * KFRAG_UNIT;
}

/*
 * The Linux client's WRITE COMPOUND of units [unit, unit + n) of file
 * `file`: v4.0 PUTFH WRITE GETATTR (with a 5-byte tag: padded), v4.1
 * SEQUENCE PUTFH WRITE GETATTR (empty tag). With `lookup`, a LOOKUP
 * before the WRITE (an op the oracle does not know). Its data start at
 * *data.
 */
static size_t v4_write_call(unsigned char *b, uint32_t xid, uint32_t minor, uint32_t file, uint32_t unit,
			    uint32_t n, uint64_t gen, int lookup, size_t *data)
{
	size_t o = v4_head(b, xid, minor ? "" : "write", minor, 3 + !!minor + !!lookup);

	if (minor)
		o += op4_sequence(b + o, xid);
	o += op4_putfh(b + o, file);
	if (lookup)
		o += op4_lookup(b + o, "w001.dat");
	*data = o + 36;
	o += op4_write(b + o, file, unit, n, gen);
	return o + op4_getattr(b + o, minor ? 3 : 2);
}

/* A COMPOUND without a WRITE: [SEQUENCE] PUTFH GETATTR (a revalidation) */
static size_t v4_getattr_call(unsigned char *b, uint32_t xid, uint32_t minor, uint32_t file)
{
	size_t o = v4_head(b, xid, "", minor, 2 + !!minor);

	if (minor)
		o += op4_sequence(b + o, xid);
	o += op4_putfh(b + o, file);
	return o + op4_getattr(b + o, 2);
}

static void tcp_call(const unsigned char *call, size_t len, int twofrag)
{
	static unsigned char rec[70000];

	tcp_send(rec, record(rec, call, len, twofrag));
}

/*
 * NFSv4.<minor> WRITEs on one TCP connection (file 0): a COMPOUND without
 * a WRITE; units 0-1 in a two-fragment record, resent intact; units 2-3,
 * resent after the app poisoned unit 3; units 4-5 (already poison) behind
 * a LOOKUP, an op the oracle does not know; units 6-7:
 * rpc_calls=7 rpc_retrans=2 write_calls=5 write_bytes_first=24576
 * poisoned=1 poisoned_rpc_resends=1 v4_unparsed_compounds=1.
 */
static void fixture_v4(uint32_t minor)
{
	static unsigned char call[70000];
	uint32_t x = minor ? 0xc000 : 0xb000;
	size_t clen, data;

	tcp_open();
	tcp_call(call, v4_getattr_call(call, x + 1, minor, 0), 0);
	clen = v4_write_call(call, x + 2, minor, 0, 0, 2, 1, 0, &data);
	tcp_call(call, clen, 1);
	tcp_call(call, clen, 0);
	clen = v4_write_call(call, x + 3, minor, 0, 2, 2, 1, 0, &data);
	tcp_call(call, clen, 0);
	kfrag_poison_unit(call + data + KFRAG_UNIT, 0);
	tcp_call(call, clen, 0);
	clen = v4_write_call(call, x + 4, minor, 0, 4, 2, 1, 1, &data);
	kfrag_poison_unit(call + data, 0);
	kfrag_poison_unit(call + data + KFRAG_UNIT, 0);
	tcp_call(call, clen, 0);
	clen = v4_write_call(call, x + 5, minor, 0, 6, 2, 1, 0, &data);
	tcp_call(call, clen, 0);
}

/*
 * The file handle of a v4 WRITE is the current one: file 0's WRITE learns
 * file 0's handle; PUTFH(1) SAVEFH PUTFH(0) RESTOREFH WRITE writes file 1
 * (clean); file 1's units under file 0's handle are not file 0's:
 * poisoned=1 write_calls=4 write_bytes_first=24576.
 */
static void fixture_v4_fh(void)
{
	static unsigned char call[70000];
	size_t o, clen, data;

	tcp_open();
	tcp_call(call, v4_write_call(call, 0xd001, 1, 0, 0, 2, 1, 0, &data), 0);
	o = v4_head(call, 0xd002, "", 1, 7);
	o += op4_sequence(call + o, 0xd002);
	o += op4_putfh(call + o, 1);
	o += op4(call + o, 32); /* SAVEFH */
	o += op4_putfh(call + o, 0);
	o += op4(call + o, 31); /* RESTOREFH */
	o += op4_write(call + o, 1, 0, 2, 1);
	o += op4_getattr(call + o, 3);
	tcp_call(call, o, 0);
	clen = v4_write_call(call, 0xd003, 1, 0, 2, 1, 1, 0, &data);
	kfrag_stamp_unit(call + data, 1, 0, 2, 1); /* file 1's unit under file 0's handle */
	tcp_call(call, clen, 0);
	tcp_call(call, v4_write_call(call, 0xd004, 1, 1, 3, 1, 1, 0, &data), 0);
}

/*
 * NFSv3, v4.0 and v4.1 WRITEs in one TCP stream (file 0): v3 units 0-1,
 * v4.0 units 2-3, v4.1 units 4-5 resent with the next generation's bytes,
 * v3 units 6-7: poisoned=1 rpc_retrans=1 write_calls=5
 * write_bytes_first=32768.
 */
static void fixture_nfs_mixed(void)
{
	static unsigned char call[70000];
	size_t data;

	tcp_open();
	tcp_call(call, write_call(call, 0xe001, 0, 2, 1), 0);
	tcp_call(call, v4_write_call(call, 0xe002, 0, 0, 2, 2, 1, 0, &data), 0);
	tcp_call(call, v4_write_call(call, 0xe003, 1, 0, 4, 2, 1, 0, &data), 0);
	tcp_call(call, v4_write_call(call, 0xe003, 1, 0, 4, 2, 2, 0, &data), 0);
	tcp_call(call, write_call(call, 0xe004, 6, 2, 1), 0);
}

/*
 * v4 COMPOUNDs none of which is a WRITE the oracle can judge: one without
 * a WRITE, one whose WRITE follows a LOOKUP: the oracle fails (no WRITE)
 * and counts v4_unparsed_compounds=1.
 */
static void fixture_v4_unparsed(void)
{
	static unsigned char call[70000];
	size_t data;

	tcp_open();
	tcp_call(call, v4_getattr_call(call, 0xf001, 1, 0), 0);
	tcp_call(call, v4_write_call(call, 0xf002, 1, 0, 0, 2, 1, 1, &data), 0);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	pcap_t *pc;

	if ((!strcmp(what, "disk") || !strcmp(what, "disk-missing")) && argc == 4)
		return fixture_disk(argv[2], argv[3], !strcmp(what, "disk-missing"));
	if (argc != 3) {
		fprintf(stderr, "usage: mkfixture tcp|resend|udp|udp-parts|reconnect|reconnect-late|cut|reconnect-overlap|xid-programs|tcp-wrap|udp-late-dup|ip-unjudged|v40|v41|v4-fh|nfs-mixed|v4-unparsed|empty|nowrite OUT.pcap | disk DIR MANIFEST\n");
		return 2;
	}
	pc = pcap_open_dead(DLT_EN10MB, 65535);
	dump = pcap_dump_open(pc, argv[2]);
	if (!dump) {
		fprintf(stderr, "error: %s: %s\n", argv[2], pcap_geterr(pc));
		return 1;
	}
	if (!strcmp(what, "tcp"))
		fixture_tcp(0);
	else if (!strcmp(what, "resend"))
		fixture_tcp(1);
	else if (!strcmp(what, "udp"))
		fixture_udp();
	else if (!strcmp(what, "udp-parts"))
		fixture_udp_parts();
	else if (!strcmp(what, "reconnect"))
		fixture_reconnect();
	else if (!strcmp(what, "tcp-wrap"))
		fixture_tcp_wrap();
	else if (!strcmp(what, "udp-late-dup"))
		fixture_udp_late_dup();
	else if (!strcmp(what, "reconnect-late"))
		fixture_reconnect_late();
	else if (!strcmp(what, "cut"))
		fixture_cut();
	else if (!strcmp(what, "reconnect-overlap"))
		fixture_reconnect_overlap();
	else if (!strcmp(what, "xid-programs"))
		fixture_xid_programs();
	else if (!strcmp(what, "ip-unjudged"))
		fixture_ip_unjudged();
	else if (!strcmp(what, "v40"))
		fixture_v4(0);
	else if (!strcmp(what, "v41"))
		fixture_v4(1);
	else if (!strcmp(what, "v4-fh"))
		fixture_v4_fh();
	else if (!strcmp(what, "nfs-mixed"))
		fixture_nfs_mixed();
	else if (!strcmp(what, "v4-unparsed"))
		fixture_v4_unparsed();
	else if (!strcmp(what, "nowrite")) {
		tcp_open();
		tcp_send((const unsigned char *)"\x80\x00\x00\x04" "abcd", 8);
	} else if (strcmp(what, "empty")) {
		fprintf(stderr, "error: unknown fixture '%s'\n", what);
		return 2;
	}
	pcap_dump_close(dump);
	pcap_close(pc);
	return 0;
}
