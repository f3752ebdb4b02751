/*
 * Stamped blocks of the red test, shared by the guest workload and the host
 * oracles. Files are made of 4 KiB units; every unit the workload writes
 * starts with a stamp saying what it is, and the rest of the unit is a pure
 * function of (file, unit, generation):
 *
 *   offset 0  u64 magic  KFRAG_STAMP_MAGIC ("KFSTAMP1")
 *          8  u32 file   file id (the workload's file wNNN.dat)
 *         12  u32 writer writer process
 *         16  u64 unit   unit number in the file (= file offset / 4096)
 *         24  u64 gen    generation: 1 for the first write of the unit, +1 each rewrite
 *         32  u64 sum    kfrag_sum() of bytes [48, 4096)
 *         40  u64 check  kfrag_mix64 of the 40 bytes before: a torn stamp is detectable
 *         48  body       kfrag_pattern(kfrag_unit_seed(file, unit, gen), 48, ...)
 *
 * After write() returns, the application overwrites its buffer: every unit
 * gets KFRAG_POISON_MAGIC ("KFPOISON") and 0xdb bytes, then the next write's
 * stamps. A transmission (or a block on disk) that is not exactly the
 * stamped unit expected at its place is poisoned (or corrupted).
 */
#ifndef KFRAG_STAMP_H
#define KFRAG_STAMP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pattern.h"

#define KFRAG_UNIT 4096
#define KFRAG_STAMP_HDR 48
#define KFRAG_STAMP_MAGIC 0x31504d4154534b46ULL  /* "KFSTAMP1" little endian */
#define KFRAG_POISON_MAGIC 0x4e4f53494f50464bULL /* "KFPOISON" */

struct kfrag_stamp {
	uint64_t magic;
	uint32_t file;
	uint32_t writer;
	uint64_t unit;
	uint64_t gen;
	uint64_t sum;
	uint64_t check;
};

static inline uint64_t kfrag_unit_seed(uint32_t file, uint64_t unit, uint64_t gen)
{
	return kfrag_mix64(((uint64_t)file << 48) ^ (unit << 24) ^ gen ^ 0x5eedULL);
}

static inline uint64_t kfrag_sum(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = kfrag_mix64(h ^ w);
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static inline uint64_t kfrag_stamp_check(const struct kfrag_stamp *s)
{
	return kfrag_sum((const unsigned char *)s, offsetof(struct kfrag_stamp, check));
}

/* Fill one unit with its stamped content. */
static inline void kfrag_stamp_unit(unsigned char *u, uint32_t file, uint32_t writer,
				    uint64_t unit, uint64_t gen)
{
	struct kfrag_stamp s = { KFRAG_STAMP_MAGIC, file, writer, unit, gen, 0, 0 };

	kfrag_pattern(kfrag_unit_seed(file, unit, gen), KFRAG_STAMP_HDR,
		      u + KFRAG_STAMP_HDR, KFRAG_UNIT - KFRAG_STAMP_HDR);
	s.sum = kfrag_sum(u + KFRAG_STAMP_HDR, KFRAG_UNIT - KFRAG_STAMP_HDR);
	s.check = kfrag_stamp_check(&s);
	memcpy(u, &s, sizeof(s));
}

/* Overwrite one unit with the poison pattern. */
static inline void kfrag_poison_unit(unsigned char *u, uint32_t writer)
{
	uint64_t m = KFRAG_POISON_MAGIC;

	memset(u, 0xdb, KFRAG_UNIT);
	memcpy(u, &m, 8);
	memcpy(u + 8, &writer, 4);
}

enum kfrag_verdict {
	KFRAG_OK = 0,
	KFRAG_POISON,     /* the poison pattern: the buffer after write() returned */
	KFRAG_BAD_STAMP,  /* no stamp, or a torn one */
	KFRAG_BAD_BODY,   /* body does not match its stamp */
	KFRAG_WRONG_UNIT, /* a valid stamp of another (file, unit) */
};

static inline const char *kfrag_verdict_name(enum kfrag_verdict v)
{
	static const char *n[] = { "ok", "poison", "bad-stamp", "bad-body", "wrong-unit" };

	return n[v];
}

/*
 * The stamp at the start of a unit found at (file, unit); file may be ~0u
 * for "any". Copies it to *s and says whether it is poison, torn or
 * someone else's; KFRAG_OK leaves the body to the caller.
 */
static inline enum kfrag_verdict kfrag_check_stamp(const unsigned char *u, uint32_t file,
						   uint64_t unit, struct kfrag_stamp *s)
{
	memcpy(s, u, sizeof(*s));
	if (s->magic == KFRAG_POISON_MAGIC)
		return KFRAG_POISON;
	if (s->magic != KFRAG_STAMP_MAGIC || s->check != kfrag_stamp_check(s))
		return KFRAG_BAD_STAMP;
	if (s->unit != unit || (file != ~0u && s->file != file))
		return KFRAG_WRONG_UNIT;
	return KFRAG_OK;
}

/*
 * Check one 4 KiB unit found at (file, unit); file may be ~0u for "any".
 * On KFRAG_OK, *gen holds its generation. The body is recomputed, not
 * just summed: a stale body under a fresh stamp is caught too.
 */
static inline enum kfrag_verdict kfrag_check_unit(const unsigned char *u, uint32_t file,
						  uint64_t unit, uint64_t *gen)
{
	struct kfrag_stamp s;
	unsigned char body[KFRAG_UNIT - KFRAG_STAMP_HDR];
	enum kfrag_verdict v = kfrag_check_stamp(u, file, unit, &s);

	if (v != KFRAG_OK)
		return v;
	kfrag_pattern(kfrag_unit_seed(s.file, s.unit, s.gen), KFRAG_STAMP_HDR, body, sizeof(body));
	if (s.sum != kfrag_sum(u + KFRAG_STAMP_HDR, sizeof(body)) ||
	    memcmp(body, u + KFRAG_STAMP_HDR, sizeof(body)))
		return KFRAG_BAD_BODY;
	if (gen)
		*gen = s.gen;
	return KFRAG_OK;
}

/*
 * Check part of a unit: len bytes p found at byte `at` of unit `unit`
 * (a WRITE smaller than a unit, e.g. over UDP with wsize=1024). A part
 * with the unit's start has its stamp checked and its body recomputed as
 * far as it goes; a later part has no stamp to name its generation, so it
 * is checked for the poison bytes: 16 aligned 0xdb bytes never occur in a
 * stamped body by chance (2^-128).
 */
static inline enum kfrag_verdict kfrag_check_part(const unsigned char *p, size_t at, size_t len,
						  uint32_t file, uint64_t unit)
{
	static const unsigned char poison[16] = {
		0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb,
		0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb, 0xdb,
	};
	unsigned char body[KFRAG_UNIT];
	struct kfrag_stamp s;
	enum kfrag_verdict v;
	size_t i;

	if (at == 0 && len == KFRAG_UNIT)
		return kfrag_check_unit(p, file, unit, NULL);
	if (at == 0 && len >= sizeof(s)) {
		v = kfrag_check_stamp(p, file, unit, &s);
		if (v != KFRAG_OK)
			return v;
		kfrag_pattern(kfrag_unit_seed(s.file, s.unit, s.gen), KFRAG_STAMP_HDR, body,
			      len - KFRAG_STAMP_HDR);
		return memcmp(body, p + KFRAG_STAMP_HDR, len - KFRAG_STAMP_HDR) ?
			KFRAG_BAD_BODY : KFRAG_OK;
	}
	for (i = (16 - at % 16) % 16; i + 16 <= len; i += 16)
		if (!memcmp(p + i, poison, 16))
			return KFRAG_POISON;
	return KFRAG_OK;
}

#endif
