/*
 * The guest's CPU time from /proc/stat, for the benchmarks: busy share of
 * all CPU time, softirq work included (per-process accounting misses it),
 * and the context switches.
 */
#ifndef KFRAG_CPUSTAT_H
#define KFRAG_CPUSTAT_H

#include <stdio.h>

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

#endif
