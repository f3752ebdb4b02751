/*
 * The guest's CPU time from /proc/stat, for the benchmarks: busy share of
 * all CPU time, softirq work included (per-process accounting misses it),
 * and the context switches.
 */
#ifndef KFRAG_CPUSTAT_H
#define KFRAG_CPUSTAT_H

#include <stdio.h>

/* busy and total jiffies of all CPUs */
static inline void cpu_sample(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int i;

	*busy = *total = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) >= 4) {
		for (i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4]; /* minus idle and iowait */
	}
	fclose(f);
}

/* context switches since boot (the "ctxt" line): wake-ups per write */
static inline unsigned long long cpu_ctxt(void)
{
	unsigned long long n = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", &n) == 1)
			break;
	fclose(f);
	return n;
}

#endif
