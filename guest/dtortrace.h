/*
 * Destructor accounting from the kernel's trace events (series patch
 * "net: trace the lifetime of paged fragment destructors"): every
 * skb_frag_destructor_init must be followed by exactly one _destroy, the
 * count never below zero, no ref/unref/destroy of a destructor that is
 * not live, no ref after the count reached 0, and none live once the NFS
 * mount is gone.
 *
 *   dtortrace_start()  enables the events (before the mount); returns 0
 *                      when the kernel has none (vanilla): "absent"
 *   dtortrace_report() stops tracing, replays the trace, prints KV lines:
 *     dtor.trace=absent|complete|lost   (lost: the ring buffer overran,
 *                                        the counts below are partial)
 *     dtor.inits dtor.destroys dtor.refs dtor.unrefs
 *     dtor.live_at_end   initialised, not destroyed
 *     dtor.bad           events that break the rules (the first few are
 *                        named in dtor.bad.N lines)
 */
#ifndef KFRAG_DTORTRACE_H
#define KFRAG_DTORTRACE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define DT_DIR "/sys/kernel/debug/tracing"
#define DT_SLOTS 65536 /* distinct destructor addresses: RPC slots, a few hundred */

static int dt_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static int dtortrace_start(void)
{
	static const char *ev[] = { "init", "ref", "unref", "destroy" };
	char p[256];
	unsigned i;

	mkdir("/sys/kernel/debug", 0755);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(DT_DIR "/events/skb/skb_frag_destructor_init/enable", W_OK))
		return 0;
	dt_write(DT_DIR "/tracing_on", "0");
	dt_write(DT_DIR "/trace", "");
	/* ~30 bytes an event; a 20 s run of 4 writers makes a few 100,000 */
	dt_write(DT_DIR "/buffer_size_kb", "65536");
	for (i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), DT_DIR "/events/skb/skb_frag_destructor_%s/enable", ev[i]);
		if (dt_write(p, "1"))
			return 0;
	}
	dt_write(DT_DIR "/tracing_on", "1");
	return 1;
}

struct dt_slot {
	unsigned long addr;
	int live, zero;	/* zero: an unref has reported 0 */
	long balance;	/* this lifetime's refs - unrefs, init's reference included */
	int open;	/* a lifetime began (init) and was not checked yet */
};

static struct dt_slot *dt_slot(struct dt_slot *t, unsigned long a)
{
	unsigned long h = (a >> 4) * 0x9e3779b97f4a7c15UL;
	unsigned i;

	for (i = 0; i < DT_SLOTS; i++) {
		struct dt_slot *s = &t[(h + i) % DT_SLOTS];

		if (s->addr == a || !s->addr) {
			s->addr = a;
			return s;
		}
	}
	return NULL;
}

static void dtortrace_report(int started)
{
	unsigned long long inits = 0, destroys = 0, refs = 0, unrefs = 0, bad = 0, live = 0;
	unsigned long long overrun = 0, n;
	struct dt_slot *t;
	char line[512], ev[32];
	unsigned long a;
	FILE *f;
	int ref, i;

	if (!started) {
		printf("KFRAG-KV: dtor.trace=absent\n");
		return;
	}
	dt_write(DT_DIR "/tracing_on", "0");
	f = fopen(DT_DIR "/per_cpu/cpu0/stats", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "overrun: %llu", &n) == 1)
			overrun += n;
	if (f)
		fclose(f);
	t = calloc(DT_SLOTS, sizeof(*t));
	f = fopen(DT_DIR "/trace", "r");
	if (!t || !f) {
		printf("KFRAG-KV: dtor.trace=lost\nKFRAG-KV: dtor.error=cannot read " DT_DIR "/trace\n");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *e = strstr(line, "skb_frag_destructor_");
		struct dt_slot *s;
		const char *why = NULL;

		if (!e || line[0] == '#')
			continue;
		ref = 0;
		if (sscanf(e, "skb_frag_destructor_%31[a-z]: destructor=%lx ref=%d", ev, &a, &ref) < 2)
			continue;
		s = dt_slot(t, a);
		if (!s) {
			printf("KFRAG-KV: dtor.error=more than %d destructors\n", DT_SLOTS);
			break;
		}
		/*
		 * An event is recorded just after its atomic operation, so a
		 * softirq's ref/unref can land in the trace between another
		 * context's operation and its event, even after the destroy
		 * event. So the rules are on values, which the operations
		 * return atomically, and on each lifetime's balance (checked
		 * at the next init and at the end), not on the order.
		 */
		if (!strcmp(ev, "init")) {
			inits++;
			if (s->open && (s->live || s->balance || !s->zero))
				why = s->live ? "init of a live destructor" :
					"refs and unrefs of the previous lifetime do not balance";
			s->live = s->open = 1;
			s->zero = 0;
			s->balance = 1;
		} else if (!strcmp(ev, "destroy")) {
			destroys++;
			if (!s->live || !s->zero)
				why = s->live ? "destroy before the count reached 0" :
					"second destroy";
			s->live = 0;
		} else {
			*(ev[0] == 'r' ? &refs : &unrefs) += 1;
			s->balance += ev[0] == 'r' ? 1 : -1;
			if (!s->open)
				why = "ref/unref of a destructor never initialised";
			else if (ref < 0)
				why = "count below zero";
			else if (ev[0] == 'r' && ref <= 1)
				why = "ref of a destructor whose count had reached 0";
			else if (ref == 0 && s->zero)
				why = "count reached 0 twice";
			if (ref == 0)
				s->zero = 1;
		}
		if (why && ++bad <= 5) {
			e[strcspn(e, "\n")] = 0;
			printf("KFRAG-KV: dtor.bad.%llu=%s: %s\n", bad, why, e);
		}
	}
	fclose(f);
	for (i = 0; i < DT_SLOTS; i++) {
		live += t[i].live;
		if (t[i].open && !t[i].live && (t[i].balance || !t[i].zero) && ++bad <= 5)
			printf("KFRAG-KV: dtor.bad.%llu=refs and unrefs do not balance: destructor=%lx "
			       "balance=%ld\n", bad, t[i].addr, t[i].balance);
	}
	free(t);
	printf("KFRAG-KV: dtor.trace=%s\nKFRAG-KV: dtor.inits=%llu\nKFRAG-KV: dtor.destroys=%llu\n"
	       "KFRAG-KV: dtor.refs=%llu\nKFRAG-KV: dtor.unrefs=%llu\nKFRAG-KV: dtor.live_at_end=%llu\n"
	       "KFRAG-KV: dtor.bad=%llu\n", overrun ? "lost" : "complete", inits, destroys, refs,
	       unrefs, live, bad);
	fflush(stdout);
}

#endif
