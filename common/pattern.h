/*
 * Deterministic byte pattern shared by the guest programs and the host
 * oracles: byte i of stream `seed` is a pure function of (seed, i), so
 * either side can check any range without storing it.
 */
#ifndef KFRAG_PATTERN_H
#define KFRAG_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t kfrag_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Fill buf with bytes [off, off + len) of stream seed. */
static inline void kfrag_pattern(uint64_t seed, uint64_t off, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t pos = off + i;
		uint64_t w = kfrag_mix64(seed * 0x9e3779b97f4a7c15ULL + (pos >> 3));

		p[i] = (unsigned char)(w >> ((pos & 7) * 8));
	}
}

/* Offset of the first byte of buf that is not the pattern, or -1. */
static inline long long kfrag_pattern_check(uint64_t seed, uint64_t off,
					    const void *buf, size_t len)
{
	unsigned char want[4096];
	const unsigned char *p = buf;
	size_t done = 0, n, i;

	while (done < len) {
		n = len - done < sizeof(want) ? len - done : sizeof(want);
		kfrag_pattern(seed, off + done, want, n);
		for (i = 0; i < n; i++)
			if (p[done + i] != want[i])
				return (long long)(off + done + i);
		done += n;
	}
	return -1;
}

#endif
