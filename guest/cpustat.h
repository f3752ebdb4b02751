/*
 * The guest's CPU time from /proc/stat, for the benchmarks: busy share of
 * all CPU time, softirq work included (per-process accounting misses it),
 * and the context switches.
 */
#ifndef KFRAG_CPUSTAT_H
#define KFRAG_CPUSTAT_H

#include <stdio.h>
#include <string.h>

/*
 * busy and total jiffies of all CPUs and, if ctxt is not NULL, the context
 * switches since boot (the "ctxt" line: wake-ups per write), from one read
 */
static inline void cpu_sample(unsigned long long *busy, unsigned long long *total,
			      unsigned long long *ctxt)
{
	unsigned long long v[10] = { 0 };
	char line[256];
	FILE *f = fopen("/proc/stat", "r");
	int i;

	*busy = *total = 0;
	if (ctxt)
		*ctxt = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) >= 4) {
		for (i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4]; /* minus idle and iowait */
	}
	while (ctxt && fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", ctxt) == 1)
			break;
	fclose(f);
}

/*
 * Interrupts and softirqs since boot, all CPUs, for the benchmarks'
 * diagnostics (what a case's count is made of): the local timer ("LOC"),
 * the NIC's lines (names with "eth" or "virtio0"), rescheduling IPIs, and
 * the NET_RX and TIMER softirqs.
 */
struct irq_sample {
	unsigned long long timer, nic, resched, net_rx, softtimer;
};

/* the sum of a /proc/interrupts or /proc/softirqs row's per-CPU columns */
static inline unsigned long long irq_row_sum(const char *p)
{
	unsigned long long v, sum = 0;
	int used;

	while (sscanf(p, " %llu%n", &v, &used) == 1) {
		sum += v;
		p += used;
	}
	return sum;
}

/*
 * the counter a row adds to: name is the row's head (before the colon),
 * rest the line after it (per-CPU counts, then, in /proc/interrupts, the
 * chip and the devices); NULL for a row not counted
 */
static inline unsigned long long *irq_counter(struct irq_sample *s,
					      const char *name, const char *rest)
{
	if (!strcmp(name, "LOC"))
		return &s->timer;
	if (!strcmp(name, "RES"))
		return &s->resched;
	if (!strcmp(name, "NET_RX"))	/* /proc/softirqs */
		return &s->net_rx;
	if (!strcmp(name, "TIMER"))	/* /proc/softirqs */
		return &s->softtimer;
	if (strstr(rest, "eth") || strstr(rest, "virtio0"))
		return &s->nic;
	return NULL;
}

static inline void irq_sample(struct irq_sample *s)
{
	static const char *const files[] = { "/proc/interrupts", "/proc/softirqs" };
	char line[1024], *colon, *name;
	unsigned long long *counter;
	unsigned int i;
	FILE *f;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		f = fopen(files[i], "r");
		while (f && fgets(line, sizeof(line), f)) {
			colon = strchr(line, ':');
			if (!colon)
				continue;
			*colon = '\0';
			name = line + strspn(line, " ");
			counter = irq_counter(s, name, colon + 1);
			if (counter)
				*counter += irq_row_sum(colon + 1);
		}
		if (f)
			fclose(f);
	}
}

#endif
