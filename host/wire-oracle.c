/*
 * wire-oracle PCAP [NFS_PORT [VNET_HDR]]: the on-wire oracle of the red test.
 *
 * Reads the guest NIC's frames (scripts/vmrun VM_PCAP=), and for the
 * client->server direction to NFS_PORT (2049): reassembles IPv4 fragments
 * and TCP streams (every transmission of a stream byte is compared with the
 * first one; a retransmitted segment with other bytes is poisoned), splits
 * RPC record marking (multi-fragment records), takes UDP datagrams as one
 * call each, parses ONC RPC calls and their NFS WRITEs, and checks every
 * 4 KiB unit of every WRITE's data against its stamp (common/stamp.h):
 * stamp intact, body matches, stamp's unit = WRITE offset, same file as
 * the file handle's other WRITEs. A call whose xid was seen before (from
 * the same client port, same program) is an RPC retransmission; its data
 * must equal the first's.
 *
 * The WRITEs, by each call's NFS version (one capture may hold both):
 * NFSv3 WRITE (100003/3/7): its file handle, offset, data. NFSv4.x
 * COMPOUND (100003/4/1: tag, minorversion, ops), whose WRITE op (38)
 * follows PUTFH (v4.0: PUTFH WRITE GETATTR; v4.1: SEQUENCE PUTFH WRITE
 * GETATTR): the ops are walked by their arguments' layout (SEQUENCE,
 * PUTFH, PUTROOTFH, PUTPUBFH, SAVEFH, RESTOREFH, GETFH, GETATTR, COMMIT,
 * WRITE), each WRITE op judged with the current file handle (PUTFH's). An
 * op of another kind ends the walk: the compound is counted in
 * v4_unparsed_compounds, and a WRITE after that op is not judged.
 *
 * VNET_HDR: bytes of virtio-net header before each frame: QEMU's
 * filter-dump on a tap with vnet headers records them (10 or 12 bytes,
 * by NIC model). Default "auto": the first frame that is IPv4 behind 0,
 * 10 or 12 bytes decides for the whole capture.
 *
 * Prints KEY=VALUE lines; the counts that matter:
 *   rpc_retrans  calls whose xid was already seen
 *   poisoned     WRITE transmissions (RPC calls, TCP segments, IP fragments)
 *                that carry other bytes than the application passed
 *   poisoned_rpc_resends  of those, RPC calls whose xid was seen before
 *                (what copy-on-resend is meant to fix)
 *   tcp_unjudged_segments  segments not compared: no kept connection of
 *                their port pair (the last KEEP_STREAMS) has them in its
 *                window (further behind its front than TCP_WINDOW, 8 MiB
 *                for a superseded connection, or ahead of it: no TCP sender
 *                does that; or before its first byte)
 *   ip_unjudged_fragments  IP fragments not compared: a piece of a
 *                datagram given up FRAG_PENDING ids before, or one that
 *                reaches past 65535 bytes
 *   unjudged     the two together: anything above 0 means bytes of the
 *                capture that may have reached the server were not judged
 *   tcp_ambiguous_segments  segments that the windows of two connections
 *                of a port pair hold and neither their bytes nor their ACK
 *                number told apart: judged in the newest (informational)
 *   write_calls, write_bytes  WRITE calls (v4: WRITE ops) and their data
 *                bytes, every transmission; write_bytes_first: each xid's
 *                once, from its first transmission (what the guest's
 *                bytes= counts, plus the writes that failed or never
 *                returned)
 *   tcp_cut_fin, tcp_cut_rst  connections the client ended (its first FIN,
 *                or an RST before any FIN) while its last record was
 *                incomplete: bytes of a request sent, its end not. After a
 *                FIN the server waits for the rest it cannot get, and the
 *                client's socket lingers until the server closes too
 *   tcp_end_unknown  connections the client ended where the capture
 *                lacks the marker of the record after the last complete
 *                one (its segments came later, or never): not counted
 *                above, either way
 *   v4_unparsed_compounds  COMPOUND transmissions with an op the walk does
 *                not know (or cut short): a WRITE after it is neither
 *                judged nor counted above. Every compound without a WRITE
 *                that has another op (OPEN, LOOKUP...) counts too, so it is
 *                not in unjudged: write_bytes_first says whether the
 *                guest's WRITE data were all judged (scripts/lib.sh
 *                wire_covers)
 * and up to 20 "detail=" lines naming the poisoned ones.
 * Exit 0 analysed; 1 unusable input (no such file, not a pcap, no frames,
 * no NFS WRITE at all: never a silent "0 poisoned"); 2 usage.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/stamp.h"

static unsigned nfs_port = 2049;
static int vnet_hdr = -1; /* -1: not known yet (auto) */
static uint64_t frames, ip_frags, ip_frag_dup, tcp_segs, tcp_retrans_segs, udp_calls;
static uint64_t tcp_reconnects;
static uint64_t tcp_cut_fin, tcp_cut_rst;
static uint64_t tcp_end_unknown;
static uint64_t calls, write_calls, rpc_retrans, poisoned, poisoned_rpc_resends, details;
static uint64_t write_bytes, write_bytes_first;

static void detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void detail(const char *fmt, ...)
{
	va_list ap;

	if (details++ >= 20)
		return;
	printf("detail=");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p && n) {
		fprintf(stderr, "error: out of memory (%zu bytes)\n", n);
		exit(1);
	}
	return p;
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

/*
 * ---- xid table: first transmission of every call ----
 * An xid is the RPC client's: keyed by the client (address, port,
 * transport: the kernel's NFS client keeps its port across reconnects, so
 * a resend on the new connection is found), the program and the xid. The
 * MOUNT client counts its own xids, and its calls are not NFS resends.
 */
struct client {
	uint32_t saddr;
	uint16_t sport;
	uint8_t proto;
};
struct xid_ent {
	uint32_t saddr, xid, prog;
	uint16_t sport;
	uint8_t proto, used;
	uint64_t hash; /* of the WRITE data (0 for other calls) */
};
static struct xid_ent *xids;
static size_t nxid_slots = 1 << 20, nxids;

static int xid_is(const struct xid_ent *e, const struct client *cl, uint32_t prog, uint32_t xid)
{
	return e->xid == xid && e->prog == prog && e->saddr == cl->saddr && e->sport == cl->sport &&
	       e->proto == cl->proto;
}

static struct xid_ent *xid_slot(struct xid_ent *t, size_t n, const struct client *cl, uint32_t prog,
				uint32_t xid)
{
	uint64_t k = ((uint64_t)cl->saddr << 32 | (uint64_t)cl->sport << 8 | cl->proto) ^
		     ((uint64_t)prog << 32 | xid) * 0x9e3779b97f4a7c15ULL;
	size_t i = kfrag_mix64(k) & (n - 1);

	while (t[i].used && !xid_is(&t[i], cl, prog, xid))
		i = (i + 1) & (n - 1);
	return &t[i];
}

/* Keep the table at most half full: a long UDP run has ~600,000 calls. */
static void xid_grow(void)
{
	size_t n = nxid_slots * 2, i;
	struct xid_ent *t = calloc(n, sizeof(*t));

	if (!t) {
		fprintf(stderr, "error: out of memory for %zu RPC calls\n", nxids);
		exit(1);
	}
	for (i = 0; i < nxid_slots; i++)
		if (xids[i].used) {
			struct client cl = { .saddr = xids[i].saddr, .sport = xids[i].sport, .proto = xids[i].proto };

			*xid_slot(t, n, &cl, xids[i].prog, xids[i].xid) = xids[i];
		}
	free(xids);
	xids = t;
	nxid_slots = n;
}

static struct xid_ent *xid_lookup(const struct client *cl, uint32_t prog, uint32_t xid, int *fresh)
{
	struct xid_ent *e;

	if (!xids)
		xids = calloc(nxid_slots, sizeof(*xids));
	if (!xids) {
		fprintf(stderr, "error: out of memory for the RPC call table\n");
		exit(1);
	}
	e = xid_slot(xids, nxid_slots, cl, prog, xid);
	*fresh = !e->used;
	if (*fresh) {
		if (++nxids > nxid_slots / 2) {
			xid_grow();
			e = xid_slot(xids, nxid_slots, cl, prog, xid);
		}
		*e = (struct xid_ent){ .saddr = cl->saddr, .xid = xid, .prog = prog, .sport = cl->sport,
				       .proto = cl->proto, .used = 1 };
	}
	return e;
}

/* ---- file handle -> file id (learnt from its first valid stamp) ---- */
#define FHSIZE 128 /* NFS4_FHSIZE; NFSv3's are at most 64 bytes */
#define MAXFH 256
static struct { unsigned len; unsigned char fh[FHSIZE]; uint32_t file; } fhs[MAXFH];
static unsigned nfhs;

static uint32_t *fh_file(const unsigned char *fh, unsigned len)
{
	unsigned i;

	if (!fh || len > FHSIZE)
		return NULL;
	for (i = 0; i < nfhs; i++)
		if (fhs[i].len == len && !memcmp(fhs[i].fh, fh, len))
			return &fhs[i].file;
	if (nfhs == MAXFH)
		return NULL;
	fhs[nfhs].len = len;
	memcpy(fhs[nfhs].fh, fh, len);
	fhs[nfhs].file = ~0u;
	return &fhs[nfhs++].file;
}

/*
 * ---- XDR: a cursor over one RPC call ----
 * A read past the call's end sets bad and yields 0 (NULL for bytes):
 * a group of reads is checked once, after it.
 */
struct xdr {
	const unsigned char *p;
	size_t len, o;
	int bad;
};

static uint32_t xdr_u32(struct xdr *x)
{
	uint32_t v;

	if (x->bad || x->len - x->o < 4) {
		x->bad = 1;
		return 0;
	}
	v = be32(x->p + x->o);
	x->o += 4;
	return v;
}

static uint64_t xdr_u64(struct xdr *x)
{
	uint64_t hi = xdr_u32(x);

	return hi << 32 | xdr_u32(x);
}

/* n bytes and their padding to a multiple of 4 (which may be missing at
 * the very end of the call): where they start */
static const unsigned char *xdr_bytes(struct xdr *x, uint64_t n)
{
	uint64_t left = x->len - x->o, padded = (n + 3) & ~(uint64_t)3;
	const unsigned char *s = x->p + x->o;

	if (x->bad || n > left) {
		x->bad = 1;
		return NULL;
	}
	x->o += padded < left ? padded : left;
	return s;
}

/* opaque<>: its length in *n, then its bytes */
static const unsigned char *xdr_opaque(struct xdr *x, uint32_t *n)
{
	*n = xdr_u32(x);
	return xdr_bytes(x, *n);
}

/* One WRITE's arguments: an NFSv3 WRITE call's, or a WRITE op's of an
 * NFSv4 COMPOUND (whose file handle is the current one, set by PUTFH). */
struct nfs_write {
	const unsigned char *fh; /* NULL: not in the call (PUTROOTFH, PUTPUBFH) */
	uint32_t fhlen, count, dlen;
	uint64_t off;
	const unsigned char *data;
};
#define MAXW 16 /* WRITE ops judged per COMPOUND (the Linux client sends one) */

/* WRITE3args (RFC 1813): file, offset, count, stable, data<>. 1 if the
 * call holds them all; 0 if cut short: nothing to judge. */
static unsigned v3_write(struct xdr *x, struct nfs_write *w)
{
	w->fh = xdr_opaque(x, &w->fhlen);
	w->off = xdr_u64(x);
	w->count = xdr_u32(x);
	xdr_u32(x); /* stable_how */
	w->data = xdr_opaque(x, &w->dlen);
	return !x->bad;
}

/* The NFSv4 ops whose arguments the walk knows (RFC 7530, RFC 8881) */
enum {
	OP4_COMMIT = 5,
	OP4_GETATTR = 9,
	OP4_GETFH = 10,
	OP4_PUTFH = 22,
	OP4_PUTPUBFH = 23,
	OP4_PUTROOTFH = 24,
	OP4_RESTOREFH = 31,
	OP4_SAVEFH = 32,
	OP4_WRITE = 38,
	OP4_SEQUENCE = 53,
};
static uint64_t v4_unparsed;

/*
 * The argarray of a COMPOUND4args (after its tag and minorversion): the
 * WRITE ops (at most MAXW) into w, each with the current file handle;
 * returns how many. The Linux client's WRITE is PUTFH WRITE GETATTR
 * (v4.0) or SEQUENCE PUTFH WRITE GETATTR (v4.1). Every op is stepped over
 * by its arguments' XDR layout, so an op the walk does not know (or one
 * cut short) ends it: a WRITE after it cannot be found. Such a compound
 * is counted in v4_unparsed, never taken as clean; its WRITEs before that
 * op are judged.
 */
static unsigned v4_ops(struct xdr *x, struct nfs_write *w, const char *where, uint32_t xid)
{
	const unsigned char *fh = NULL, *saved = NULL;
	uint32_t fhlen = 0, savedlen = 0, nops, k, op = 0;
	unsigned n = 0;

	nops = xdr_u32(x);
	for (k = 0; k < nops && !x->bad; k++) {
		switch (op = xdr_u32(x)) {
		case OP4_SEQUENCE: /* sessionid[16], sequenceid, slotid, highest_slotid, cachethis */
			xdr_bytes(x, 16 + 4 * 4);
			break;
		case OP4_PUTFH: /* nfs_fh4: opaque<NFS4_FHSIZE> */
			fh = xdr_opaque(x, &fhlen);
			if (fhlen > FHSIZE)
				x->bad = 1;
			break;
		case OP4_PUTROOTFH:
		case OP4_PUTPUBFH:
			fh = NULL, fhlen = 0;
			break;
		case OP4_SAVEFH:
			saved = fh, savedlen = fhlen;
			break;
		case OP4_RESTOREFH:
			fh = saved, fhlen = savedlen;
			break;
		case OP4_GETFH:
			break;
		case OP4_GETATTR: /* bitmap4: uint32<> */
			xdr_bytes(x, 4 * (uint64_t)xdr_u32(x));
			break;
		case OP4_COMMIT: /* offset, count */
			xdr_bytes(x, 8 + 4);
			break;
		case OP4_WRITE: /* stateid4 (seqid, other[12]), offset, stable, data<> */
			if (n == MAXW) {
				x->bad = 1;
				break;
			}
			xdr_bytes(x, 4 + 12);
			w[n].off = xdr_u64(x);
			xdr_u32(x); /* stable_how4 */
			w[n].data = xdr_opaque(x, &w[n].dlen);
			w[n].count = w[n].dlen;
			w[n].fh = fh, w[n].fhlen = fhlen;
			n += !x->bad;
			break;
		default:
			x->bad = 1;
		}
	}
	if (x->bad && !v4_unparsed++)
		detail("%s xid=%08x: COMPOUND op %u of %u (opcode %u) not known or cut short, "
		       "its WRITEs from there on not judged (the first such call)", where, xid, k, nops, op);
	return n;
}

/* The units of one WRITE against their stamps: 1 if one is not its own. */
static int write_units(const struct nfs_write *w, uint32_t xid, int fresh, const char *where)
{
	uint32_t *file = fh_file(w->fh, w->fhlen);
	uint32_t i;

	/* unit by unit; a WRITE smaller than a unit is judged part by part */
	for (i = 0; i < w->dlen;) {
		uint64_t pos = w->off + i, unit = pos / KFRAG_UNIT;
		size_t at = pos % KFRAG_UNIT, n = KFRAG_UNIT - at;
		const unsigned char *u = w->data + i;
		enum kfrag_verdict v;

		if (n > w->dlen - i)
			n = w->dlen - i;
		v = kfrag_check_part(u, at, n, file ? *file : ~0u, unit);
		if (v == KFRAG_OK && at == 0 && n >= 16 && file && *file == ~0u)
			memcpy(file, u + 8, 4);
		if (v != KFRAG_OK) {
			detail("%s xid=%08x offset=%" PRIu64 " count=%u: unit %" PRIu64 "%s is %s%s", where,
			       xid, w->off, w->count, unit, n < KFRAG_UNIT ? " (part)" : "",
			       kfrag_verdict_name(v), fresh ? "" : " (an RPC retransmission)");
			return 1;
		}
		i += n;
	}
	return 0;
}

/* The n WRITEs of one call's transmission: their data against the first
 * transmission's (the xid's), then unit by unit. */
static void writes_judge(const struct nfs_write *w, unsigned n, struct xid_ent *x, int fresh,
			 uint32_t xid, const char *where)
{
	uint64_t h = 0;
	unsigned k;
	int bad = 0;

	for (k = 0; k < n; k++) {
		write_calls++;
		write_bytes += w[k].dlen;
		if (fresh)
			write_bytes_first += w[k].dlen;
		h = kfrag_mix64(h ^ kfrag_sum(w[k].data, w[k].dlen));
	}
	h |= 1;
	if (fresh)
		x->hash = h;
	else if (x->hash != h) {
		bad = 1;
		detail("%s xid=%08x offset=%" PRIu64 " count=%u: resent with other data than its first transmission",
		       where, xid, w[0].off, w[0].count);
	}
	for (k = 0; k < n && !bad; k++)
		bad = write_units(&w[k], xid, fresh, where);
	poisoned += bad;
	if (bad && !fresh)
		poisoned_rpc_resends++;
}

/* One RPC call message (a whole record, or a UDP datagram). */
static void rpc_call(const unsigned char *p, size_t len, const char *where, const struct client *cl)
{
	struct xdr x = { .p = p, .len = len };
	struct nfs_write w[MAXW];
	uint32_t xid, prog, vers, proc, i, n;
	struct xid_ent *e;
	char at[80];
	int fresh;

	if (len < 24)
		return;
	xid = xdr_u32(&x);
	if (xdr_u32(&x) != 0 || xdr_u32(&x) != 2) /* CALL, RPC version 2 */
		return;
	prog = xdr_u32(&x);
	vers = xdr_u32(&x);
	proc = xdr_u32(&x);
	calls++;
	e = xid_lookup(cl, prog, xid, &fresh);
	if (!fresh)
		rpc_retrans++;
	if (prog != 100003)
		return;
	for (i = 0; i < 2; i++) { /* credential, verifier: flavor, body<> */
		xdr_u32(&x);
		xdr_opaque(&x, &n);
	}
	if (vers == 3 && proc == 7) { /* WRITE */
		n = v3_write(&x, w);
		snprintf(at, sizeof(at), "%s", where);
	} else if (vers == 4 && proc == 1) { /* COMPOUND: tag<>, minorversion, argarray<> */
		xdr_opaque(&x, &n);
		snprintf(at, sizeof(at), "%s v4.%u", where, xdr_u32(&x));
		n = v4_ops(&x, w, at, xid);
	} else {
		return;
	}
	if (n)
		writes_judge(w, n, e, fresh, xid, at);
}

/* The 64-bit value nearest to ref whose low `bits` bits are v: a counter
 * that wraps (a TCP sequence number, an IP id), unwrapped. */
static uint64_t unwrap(uint64_t ref, uint64_t v, unsigned bits)
{
	uint64_t m = ((uint64_t)1 << bits) - 1, ahead = (v - ref) & m;

	return ahead <= m / 2 ? ref + ahead : ref + ahead - m - 1;
}

/*
 * ---- TCP streams, client->server ----
 * Sequence numbers are unwrapped to 64 bits per stream (the value nearest
 * to the stream's front), so nothing is lost past 2 GiB or across the
 * 4 GiB wrap. Of each stream the bytes before its front are kept, in a
 * ring that grows with the stream up to TCP_WINDOW: far more than the
 * guest's send buffer (tcp_wmem: 4 MiB), so every retransmission or
 * duplicate its TCP can send lands in it.
 *
 * A port pair holds one stream per connection (per ISN): the RPC client
 * reconnects from its port with a new ISN, and a copy of the old
 * connection's segment (netem still held it after the socket closed, or
 * duplicated it) may come after the new connection's SYN. The last
 * KEEP_STREAMS connections of a port pair are kept; a superseded one keeps
 * OLD_WINDOW bytes (twice the send buffer: all that can still be in
 * flight of it). A segment is judged in the stream whose window holds its
 * sequence number (unwrapped per stream). When the windows of two of them
 * hold it (the new ISN fell among the old connection's sequence numbers:
 * Linux's ISN clock runs at 16 MB/s, a faster connection is overtaken),
 * a stream whose bytes it repeats wins, then the one whose ACK numbers
 * hold its ACK number (each connection acknowledges its own server
 * bytes), then the one it continues without a gap, then the newest
 * (counted in tcp_ambiguous_segments). A segment
 * that no kept stream's window holds is counted in tcp_unjudged_segments,
 * not compared.
 */
#define TCP_WINDOW ((uint64_t)32 << 20)
#define OLD_WINDOW ((uint64_t)8 << 20)
#define RING_MIN ((uint64_t)64 << 10)
#define ACK_SLACK ((uint64_t)64 << 10) /* server bytes not yet acknowledged on the wire */
#define KEEP_STREAMS 4
struct stream {
	uint64_t isn, front, parsed;  /* unwrapped: first byte, one past the last, first unparsed */
	uint64_t ring, cap;           /* bytes the ring holds (a power of two), at most cap */
	unsigned char *buf, *present; /* ring of stream bytes (first copy), presence bitmap */
	unsigned char *rec;           /* current record's fragments so far */
	size_t reclen;
	int have_ack;
	uint64_t ack_lo, ack_hi;      /* ACK numbers it carried, unwrapped */
	int ended;                    /* the client sent a FIN or an RST */
};
struct conn {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	unsigned n;
	struct stream *st[KEEP_STREAMS]; /* st[0] the newest connection */
};
/* port pairs: the RPC client keeps its port across reconnects */
#define MAXCONNS 4096
static struct conn conns[MAXCONNS];
static unsigned nconns;
static uint64_t tcp_unjudged, tcp_ambiguous;

#define RING(st, o) ((o) & ((st)->ring - 1))

static struct conn *conn_of(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp)
{
	unsigned i;

	for (i = 0; i < nconns; i++)
		if (conns[i].saddr == s && conns[i].daddr == d && conns[i].sport == sp && conns[i].dport == dp)
			return &conns[i];
	if (nconns == MAXCONNS) {
		fprintf(stderr, "error: more than %d TCP port pairs to the NFS port\n", MAXCONNS);
		exit(1);
	}
	conns[nconns] = (struct conn){ .saddr = s, .daddr = d, .sport = sp, .dport = dp };
	return &conns[nconns++];
}

static void stream_free(struct stream *st)
{
	free(st->buf);
	free(st->present);
	free(st->rec);
	free(st);
}

static int present(const struct stream *st, uint64_t o)
{
	return st->ring && o >= st->isn && o < st->front && st->front - o <= st->ring &&
	       st->present[RING(st, o) >> 3] >> (o & 7) & 1;
}

/* The ring holds n bytes from now on: the last min(n, ring) bytes move over. */
static void stream_resize(struct stream *st, uint64_t n)
{
	unsigned char *buf = malloc(n), *pres = calloc(n / 8, 1);
	uint64_t o, keep = st->ring < n ? st->ring : n;

	if (!buf || !pres) {
		fprintf(stderr, "error: out of memory for a TCP stream\n");
		exit(1);
	}
	if (keep > st->front - st->isn)
		keep = st->front - st->isn;
	for (o = st->front - keep; o < st->front; o++)
		if (present(st, o)) {
			buf[o & (n - 1)] = st->buf[RING(st, o)];
			pres[(o & (n - 1)) >> 3] |= 1 << (o & 7);
		}
	free(st->buf);
	free(st->present);
	st->buf = buf;
	st->present = pres;
	st->ring = n;
}

/* A new connection on the port pair, whose first byte has sequence number
 * seq: the newest stream; the one before keeps OLD_WINDOW bytes, the
 * oldest beyond KEEP_STREAMS goes. */
static struct stream *conn_start(struct conn *c, uint32_t seq)
{
	struct stream *st = calloc(1, sizeof(*st));

	if (!st) {
		fprintf(stderr, "error: out of memory for a TCP stream\n");
		exit(1);
	}
	st->isn = st->front = st->parsed = (uint64_t)1 << 32 | seq; /* room to unwrap below */
	st->cap = TCP_WINDOW;
	if (c->n == KEEP_STREAMS)
		stream_free(c->st[--c->n]);
	if (c->n) {
		c->st[0]->cap = OLD_WINDOW;
		if (c->st[0]->ring > OLD_WINDOW)
			stream_resize(c->st[0], OLD_WINDOW);
	}
	memmove(c->st + 1, c->st, c->n * sizeof(c->st[0]));
	c->st[0] = st;
	c->n++;
	return st;
}

/* The front moves on to `to`: the ring grows (up to cap) to hold the whole
 * stream; its slots of bytes [front, to) held older bytes, forget them. */
static void stream_advance(struct stream *st, uint64_t to)
{
	uint64_t o = st->front, n = st->ring ? st->ring : RING_MIN;
	size_t a, b;

	while (n < to - st->isn && n < st->cap)
		n *= 2;
	if (n != st->ring)
		stream_resize(st, n);
	st->front = to;
	if (to - o >= st->ring) {
		memset(st->present, 0, st->ring / 8);
		return;
	}
	for (; o < to && o % 8; o++)
		st->present[RING(st, o) >> 3] &= ~(1 << (o & 7));
	for (; to > o && to % 8; to--)
		st->present[RING(st, to - 1) >> 3] &= ~(1 << ((to - 1) & 7));
	a = RING(st, o) >> 3, b = RING(st, to) >> 3;
	if (a <= b) {
		memset(st->present + a, 0, b - a);
	} else {
		memset(st->present + a, 0, st->ring / 8 - a);
		memset(st->present, 0, b);
	}
}

static void stream_ack(struct stream *st, uint32_t ack)
{
	uint64_t a;

	if (!st->have_ack) {
		st->have_ack = 1;
		st->ack_lo = st->ack_hi = (uint64_t)1 << 32 | ack;
		return;
	}
	a = unwrap(st->ack_hi, ack, 32);
	if (a > st->ack_hi)
		st->ack_hi = a;
	if (a < st->ack_lo)
		st->ack_lo = a;
}

static int ack_holds(const struct stream *st, uint32_t ack)
{
	uint64_t a = unwrap(st->ack_hi, ack, 32);

	return a >= st->ack_lo && a <= st->ack_hi + ACK_SLACK;
}

/* The record marker at stream offset o, if the capture holds its 4 bytes. */
static int marker_at(const struct stream *st, uint64_t o, uint32_t *mark)
{
	unsigned char m[4];
	unsigned k;

	for (k = 0; k < 4; k++) {
		if (!present(st, o + k))
			return 0;
		m[k] = st->buf[RING(st, o + k)];
	}
	*mark = be32(m);
	return 1;
}

static void stream_parse(struct stream *st, uint16_t sport, const struct client *cl)
{
	char where[64];

	for (;;) {
		uint32_t mark, flen;
		uint64_t o = st->parsed, k;

		if (!marker_at(st, o, &mark))
			return;
		flen = mark & 0x7fffffff;
		for (k = o + 4; k < o + 4 + flen; k++)
			if (!present(st, k))
				return;
		st->rec = xrealloc(st->rec, st->reclen + flen);
		for (k = 0; k < flen; k++)
			st->rec[st->reclen + k] = st->buf[RING(st, o + 4 + k)];
		st->reclen += flen;
		st->parsed = o + 4 + flen;
		if (mark & 0x80000000u) {
			snprintf(where, sizeof(where), "tcp:%u@%" PRIu64, sport, o - st->isn);
			rpc_call(st->rec, st->reclen, where, cl);
			st->reclen = 0;
		}
	}
}

/*
 * The client ends the connection (FIN, or RST) at stream offset end (its
 * sequence number, unwrapped: segments still in the guest's qdisc may
 * reach the capture after it). Walked from the first unparsed record by
 * its markers (a record's body may have holes in the capture): mid-record
 * if the last record ends past end, or is a fragment that is not its
 * record's last. A marker missing from the capture proves nothing:
 * tcp_end_unknown. The first FIN or RST of a connection counts; an RST
 * after a FIN (the linger's end) does not.
 */
static void stream_end(struct stream *st, int rst, uint64_t end)
{
	uint64_t q = st->parsed;
	int cut, last = !st->reclen;
	uint32_t mark;

	if (st->ended)
		return;
	st->ended = 1;
	if (end < st->front)
		end = st->front;
	/* from marker to marker: a record's body may have holes */
	while (q < end) {
		if (!marker_at(st, q, &mark)) {
			tcp_end_unknown++;
			return;
		}
		last = mark >> 31;
		q += 4 + (mark & 0x7fffffff);
	}
	cut = q > end || !last;
	if (cut && rst)
		tcp_cut_rst++;
	else if (cut)
		tcp_cut_fin++;
}

/*
 * The kept stream of the port pair whose window holds the segment (seq,
 * plen bytes p), and the segment's unwrapped sequence number in it; NULL
 * if none does.
 */
static struct stream *stream_pick(struct conn *c, uint32_t seq, const unsigned char *p, size_t plen,
				  int ackf, uint32_t ack, uint64_t *pu)
{
	struct stream *cand[KEEP_STREAMS], *st;
	uint64_t cu[KEEP_STREAMS], u, i, k;
	unsigned n = 0, j, holds = 0, h = 0;

	for (j = 0; j < c->n; j++) {
		int same = 0, other = 0;

		st = c->st[j];
		u = unwrap(st->front, seq, 32);
		if (u < st->isn || u + st->cap < st->front || u + plen > st->front + st->cap)
			continue;
		for (i = 0; i < plen && !other; i++) {
			k = u + i;
			if (present(st, k)) {
				if (st->buf[RING(st, k)] == p[i])
					same = 1;
				else
					other = 1;
			}
		}
		if (same && !other) { /* it repeats this stream's bytes */
			*pu = u;
			return st;
		}
		cand[n] = st, cu[n++] = u;
	}
	if (!n)
		return NULL;
	if (n > 1) {
		/* the one whose ACK numbers hold its ACK number */
		for (j = 0; j < n && ackf; j++)
			if (!cand[j]->have_ack)
				break;
		if (ackf && j == n)
			for (j = 0; j < n; j++)
				if (ack_holds(cand[j], ack))
					holds++, h = j;
		/* else the one it continues without a gap (a sender's next
		 * bytes, or bytes it sent before) */
		if (holds != 1)
			for (holds = 0, j = 0; j < n; j++)
				if (cu[j] <= cand[j]->front)
					holds++, h = j;
		if (holds != 1) {
			h = 0;
			if (!tcp_ambiguous++)
				detail("tcp:%u segment seq=%u len=%zu: %u connections of the port hold it, taken as "
				       "the newest's (the first such)", c->sport, seq, plen, n);
		}
	}
	*pu = cu[h];
	return cand[h];
}

static void tcp_segment(uint32_t s, uint32_t d, const unsigned char *t, size_t len)
{
	uint16_t sp = t[0] << 8 | t[1], dp = t[2] << 8 | t[3];
	uint32_t seq = be32(t + 4), ack = be32(t + 8);
	size_t hl = (t[12] >> 4) * 4, plen, i;
	uint64_t u, first_diff = 0;
	int syn = t[13] & 2, ackf = t[13] & 0x10, fin = t[13] & 1, rst = t[13] & 4;
	int old = 0, fresh = 0, diff = 0;
	struct client cl = { .saddr = s, .sport = sp, .proto = 6 };
	struct stream *st;
	struct conn *c;
	unsigned j, h;
	uint64_t best, bu;

	if (dp != nfs_port || hl < 20 || hl > len)
		return;
	c = conn_of(s, d, sp, dp);
	if (syn) {
		/*
		 * A SYN with another ISN on the same ports is a new connection
		 * (the RPC client reconnects from its port): its bytes start a
		 * new stream, they are not retransmissions of the old one's.
		 * A retransmitted SYN, or a late copy of an older connection's,
		 * has a kept stream's ISN and changes nothing.
		 */
		for (j = 0; j < c->n; j++)
			if ((uint32_t)c->st[j]->isn == seq + 1)
				return;
		if (c->n)
			tcp_reconnects++;
		conn_start(c, seq + 1);
		return;
	}
	plen = len - hl;
	if (!plen) {
		/* a pure ACK (the handshake's last segment, or of the server's
		 * replies), FIN or RST: at its connection's front */
		for (j = 0; j < c->n && ackf; j++)
			if ((uint32_t)c->st[j]->front == seq) {
				stream_ack(c->st[j], ack);
				break;
			}
		/*
		 * a FIN or RST ends the connection whose front is nearest, of
		 * those whose window holds it (the guest's netem may send the
		 * RST of the old one after the SYN of the new one, and before
		 * bytes of its own)
		 */
		for (j = 0, h = c->n, best = 0, bu = 0; j < c->n && (fin || rst); j++) {
			uint64_t d;

			st = c->st[j];
			u = unwrap(st->front, seq, 32);
			if (u < st->isn || u > st->front + TCP_WINDOW)
				continue;
			d = u > st->front ? u - st->front : st->front - u;
			if (h == c->n || d < best)
				h = j, best = d, bu = u;
		}
		if (h < c->n)
			stream_end(c->st[h], rst, bu);
		return;
	}
	if (!c->n) /* capture started mid-connection */
		conn_start(c, seq);
	tcp_segs++;
	st = stream_pick(c, seq, t + hl, plen, ackf, ack, &u);
	if (!st) {
		/* not compared, nor its FIN or RST: unjudged fails the run */
		st = c->st[0];
		u = unwrap(st->front, seq, 32);
		tcp_unjudged++;
		detail("tcp:%u segment seq=%u len=%zu: %s the stream's window%s, not compared", sp, seq,
		       plen, u < st->front ? "behind" : "ahead of",
		       c->n > 1 ? " (and its older connections')" : "");
		return;
	}
	if (ackf)
		stream_ack(st, ack);
	if (u + plen > st->front)
		stream_advance(st, u + plen);
	for (i = 0; i < plen; i++) {
		uint64_t o = u + i;

		if (present(st, o)) {
			old = 1;
			if (st->buf[RING(st, o)] != t[hl + i] && !diff)
				diff = 1, first_diff = o - st->isn;
		} else {
			fresh = 1;
			st->buf[RING(st, o)] = t[hl + i];
			st->present[RING(st, o) >> 3] |= 1 << (o & 7);
		}
	}
	if (old && !fresh)
		tcp_retrans_segs++;
	if (diff) {
		poisoned++;
		detail("tcp:%u segment seq=+%" PRIu64 " len=%zu%s: retransmitted with other bytes (first at +%" PRIu64 ")",
		       sp, u - st->isn, plen, st == c->st[0] ? "" : " (an older connection's)", first_diff);
	}
	stream_parse(st, sp, &cl);
	if (fin || rst)
		stream_end(st, rst, u + plen);
}

/*
 * ---- IPv4 fragments ----
 * A datagram is kept by (source, destination, protocol, IP id) until its
 * id comes round again: ids are unwrapped like sequence numbers (v3.1
 * counts them up per destination), so a copy of a fragment is judged
 * however late it comes. Until the datagram is complete its bytes are
 * kept and a copy is compared byte by byte; then only each fragment's
 * (offset, length, sum): a later copy must equal the fragment first seen
 * at its offset. A datagram still incomplete FRAG_PENDING ids later is
 * given up and its bytes freed, as a receiver's reassembly gives up.
 */
#define FRAG_PENDING 256
struct frag_rec {
	uint16_t off, len;
	uint64_t sum;
};
struct dgram {
	uint64_t uid;                 /* unwrapped IP id */
	size_t total;                 /* 0 until the last fragment is seen */
	int done;
	unsigned char *buf, *have;    /* until complete or given up */
	struct frag_rec *fr;          /* the first fragment at each offset */
	unsigned nfr;
};
struct frag_src {
	uint32_t s, d;
	uint8_t proto;
	uint64_t newest;              /* the highest unwrapped id */
	struct dgram *by_id[65536];
};
static struct frag_src **srcs;
static uint64_t ip_unjudged;
static unsigned nsrcs;

static void l4(uint32_t s, uint32_t d, int proto, const unsigned char *p, size_t len);

static void dgram_release(struct dgram *g)
{
	free(g->buf);
	free(g->have);
	g->buf = g->have = NULL;
}

static struct frag_src *frag_src(uint32_t s, uint32_t d, int proto, uint16_t id)
{
	struct frag_src *src;
	unsigned i;

	for (i = 0; i < nsrcs; i++)
		if (srcs[i]->s == s && srcs[i]->d == d && srcs[i]->proto == proto)
			return srcs[i];
	src = calloc(1, sizeof(*src));
	if (!src) {
		fprintf(stderr, "error: out of memory for IP fragments\n");
		exit(1);
	}
	src->s = s, src->d = d, src->proto = proto;
	src->newest = (uint64_t)1 << 16 | id; /* room to unwrap below */
	srcs = xrealloc(srcs, (nsrcs + 1) * sizeof(*srcs));
	return srcs[nsrcs++] = src;
}

static void ip_fragment(uint32_t s, uint32_t d, uint16_t id, int proto, size_t foff, int mf,
			const unsigned char *p, size_t len)
{
	struct frag_src *src;
	struct dgram *g;
	uint64_t uid, k, sum = kfrag_sum(p, len);
	size_t i, o;
	unsigned r;
	int diff = 0, fresh = 0;

	ip_frags++;
	if (foff + len > 65535) {
		ip_unjudged++;
		detail("ip id=%u fragment at %zu len=%zu: past the 65535 bytes of a datagram, not judged", id, foff, len);
		return;
	}
	src = frag_src(s, d, proto, id);
	uid = unwrap(src->newest, id, 16);
	for (k = src->newest - FRAG_PENDING + 1; k <= src->newest && k + FRAG_PENDING <= uid; k++) {
		g = src->by_id[k & 0xffff];
		if (g && g->uid == k)
			dgram_release(g); /* given up, if not complete */
	}
	if (uid > src->newest)
		src->newest = uid;
	g = src->by_id[id];
	if (g && g->uid != uid) { /* the id came round: a new datagram */
		dgram_release(g);
		free(g->fr);
		free(g);
		g = NULL;
	}
	if (!g) {
		g = src->by_id[id] = calloc(1, sizeof(*g));
		if (g) {
			g->buf = malloc(65536);
			g->have = calloc(65536 / 8, 1);
		}
		if (!g || !g->buf || !g->have) {
			fprintf(stderr, "error: out of memory for IP fragments\n");
			exit(1);
		}
		g->uid = uid;
	}
	for (r = 0; r < g->nfr && g->fr[r].off != foff; r++)
		;
	if (g->buf) {
		for (i = 0; i < len; i++) {
			o = foff + i;
			if (g->have[o >> 3] >> (o & 7) & 1) {
				diff |= g->buf[o] != p[i];
			} else {
				fresh = 1;
				g->buf[o] = p[i];
				g->have[o >> 3] |= 1 << (o & 7);
			}
		}
	} else if (r < g->nfr) {
		diff = g->fr[r].len != len || g->fr[r].sum != sum;
	} else if (g->done) {
		diff = 1; /* no fragment of the delivered datagram starts there */
	} else { /* a late piece of a datagram given up: its bytes are gone */
		ip_unjudged++;
		detail("ip id=%u fragment at %zu len=%zu: comes after its datagram was given up (%d ids later), not judged",
		       id, foff, len, FRAG_PENDING);
		return;
	}
	if (!fresh)
		ip_frag_dup++;
	if (diff) {
		poisoned++;
		detail("ip id=%u fragment at %zu len=%zu: a copy with other bytes", id, foff, len);
	}
	if (r == g->nfr) {
		g->fr = xrealloc(g->fr, (g->nfr + 1) * sizeof(*g->fr));
		g->fr[g->nfr++] = (struct frag_rec){ .off = foff, .len = len, .sum = sum };
	}
	if (g->done || !g->buf)
		return;
	if (!mf)
		g->total = foff + len;
	if (!g->total)
		return;
	for (o = 0; o < g->total; o++)
		if (!(g->have[o >> 3] >> (o & 7) & 1))
			return;
	g->done = 1;
	l4(s, d, proto, g->buf, g->total);
	dgram_release(g);
}

static void l4(uint32_t s, uint32_t d, int proto, const unsigned char *p, size_t len)
{
	if (proto == 6 && len >= 20)
		tcp_segment(s, d, p, len);
	else if (proto == 17 && len >= 8) {
		uint16_t dp = p[2] << 8 | p[3];
		struct client cl = { .saddr = s, .sport = p[0] << 8 | p[1], .proto = 17 };
		char where[48];

		if (dp != nfs_port)
			return;
		udp_calls++;
		snprintf(where, sizeof(where), "udp:%u", cl.sport);
		rpc_call(p + 8, len - 8, where, &cl);
	}
}

static void frame(const unsigned char *p, size_t len)
{
	size_t ihl, tot;
	uint16_t fo;
	uint32_t s, d;

	frames++;
	if (vnet_hdr < 0) {
		static const int hl[] = { 0, 10, 12 };
		unsigned i;

		for (i = 0; i < 3 && vnet_hdr < 0; i++)
			if (len >= hl[i] + 15u && p[hl[i] + 12] == 0x08 && p[hl[i] + 13] == 0x00 &&
			    p[hl[i] + 14] == 0x45)
				vnet_hdr = hl[i];
		if (vnet_hdr < 0)
			return;
	}
	if (len < (size_t)vnet_hdr)
		return;
	p += vnet_hdr, len -= vnet_hdr;
	if (len < 14 + 20 || p[12] != 0x08 || p[13] != 0x00)
		return;
	p += 14, len -= 14;
	ihl = (p[0] & 15) * 4;
	tot = p[2] << 8 | p[3];
	if ((p[0] >> 4) != 4 || ihl < 20 || tot > len || tot < ihl)
		return;
	memcpy(&s, p + 12, 4);
	memcpy(&d, p + 16, 4);
	fo = (p[6] << 8 | p[7]);
	if (fo & 0x3fff) /* MF set or offset != 0 */
		ip_fragment(s, d, p[4] << 8 | p[5], p[9], (size_t)(fo & 0x1fff) * 8, fo & 0x2000,
			    p + ihl, tot - ihl);
	else
		l4(s, d, p[9], p + ihl, tot - ihl);
}

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const unsigned char *data;
	pcap_t *pc;
	int r;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: wire-oracle PCAP [NFS_PORT [VNET_HDR]]\n");
		return 2;
	}
	if (argc >= 3)
		nfs_port = atoi(argv[2]);
	if (argc == 4 && strcmp(argv[3], "auto"))
		vnet_hdr = atoi(argv[3]);
	pc = pcap_open_offline(argv[1], err);
	if (!pc) {
		fprintf(stderr, "error: cannot read the capture %s: %s\n"
			"  fix: run the VM with VM_PCAP=%s (scripts/redtest does)\n", argv[1], err, argv[1]);
		return 1;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr, "error: %s is not an Ethernet capture (link type %d)\n", argv[1],
			pcap_datalink(pc));
		return 1;
	}
	while ((r = pcap_next_ex(pc, &h, &data)) == 1) {
		if (h->caplen < h->len) {
			fprintf(stderr, "error: %s has frames cut at %u bytes: the oracle needs whole frames\n",
				argv[1], h->caplen);
			return 1;
		}
		frame(data, h->caplen);
	}
	if (r == -1) {
		fprintf(stderr, "error: reading %s: %s (a truncated capture? the VM may have been killed)\n",
			argv[1], pcap_geterr(pc));
		return 1;
	}
	pcap_close(pc);
	printf("frames=%" PRIu64 "\nip_fragments=%" PRIu64 "\nip_fragment_copies=%" PRIu64
	       "\ntcp_segments=%" PRIu64 "\ntcp_retrans_segments=%" PRIu64 "\ntcp_unjudged_segments=%" PRIu64
	       "\nudp_calls=%" PRIu64 "\nrpc_calls=%" PRIu64 "\nwrite_calls=%" PRIu64 "\nwrite_bytes=%" PRIu64
	       "\nwrite_bytes_first=%" PRIu64 "\nv4_unparsed_compounds=%" PRIu64 "\nvnet_hdr=%d\nrpc_retrans=%" PRIu64
	       "\ntcp_reconnects=%" PRIu64 "\ntcp_cut_fin=%" PRIu64 "\ntcp_cut_rst=%" PRIu64
	       "\ntcp_end_unknown=%" PRIu64 "\npoisoned=%" PRIu64 "\npoisoned_rpc_resends=%" PRIu64
	       "\ntcp_ambiguous_segments=%" PRIu64 "\nip_unjudged_fragments=%" PRIu64 "\nunjudged=%" PRIu64 "\n",
	       frames, ip_frags, ip_frag_dup, tcp_segs, tcp_retrans_segs, tcp_unjudged, udp_calls, calls,
	       write_calls, write_bytes, write_bytes_first, v4_unparsed, vnet_hdr, rpc_retrans, tcp_reconnects,
	       tcp_cut_fin, tcp_cut_rst, tcp_end_unknown, poisoned, poisoned_rpc_resends, tcp_ambiguous, ip_unjudged, tcp_unjudged + ip_unjudged);
	if (!frames) {
		fprintf(stderr, "error: the capture %s holds no frames: nothing was recorded, so nothing "
			"can be judged\n  fix: check that the VM ran with VM_PCAP and reached the network\n",
			argv[1]);
		return 1;
	}
	if (!write_calls) {
		fprintf(stderr, "error: no NFS WRITE call (v3 WRITE or v4 COMPOUND with WRITE) to port %u in %s "
			"(%" PRIu64 " frames): no verdict possible\n  fix: check the guest's mount (proto, "
			"port, vers) and that the workload wrote\n", nfs_port, argv[1], frames);
		return 1;
	}
	return 0;
}
