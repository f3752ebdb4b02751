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

static inline void irq_sample(struct irq_sample *s)
{
	char line[1024], *colon;
	FILE *f = fopen("/proc/interrupts", "r");

	memset(s, 0, sizeof(*s));
	while (f && fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		if (!strncmp(line + strspn(line, " "), "LOC:", 4))
			s->timer += irq_row_sum(colon + 1);
		else if (!strncmp(line + strspn(line, " "), "RES:", 4))
			s->resched += irq_row_sum(colon + 1);
		else if (strstr(colon, "eth") || strstr(colon, "virtio0"))
			s->nic += irq_row_sum(colon + 1);
	}
	if (f)
		fclose(f);
	f = fopen("/proc/softirqs", "r");
	while (f && fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		if (!strncmp(line + strspn(line, " "), "NET_RX:", 7))
			s->net_rx += irq_row_sum(colon + 1);
		else if (!strncmp(line + strspn(line, " "), "TIMER:", 6))
			s->softtimer += irq_row_sum(colon + 1);
	}
	if (f)
		fclose(f);
}

#endif
