/*
 * kfrag-fio: fio (a third-party binary, scripts/thirdparty) writes with
 * O_DIRECT on the NFS mount over a link profile, then verifies what it
 * wrote over a clean link.
 *
 * Environment (scripts/fio-nfs): the mount's (guest/nfsmount.h);
 * KFRAG_NETEM, the write phase's link spec (guest/netem.h, "-" none);
 * KFRAG_FIOJOBS, the job files to run, comma-separated names of
 * /etc/fio/NAME.fio (the files read their sizes from the environment,
 * fio's ${VAR}: KFRAG_FIOSIZE; KFRAG_FIOVERIFY, set here, 0 while writing
 * and 1 while verifying).
 *
 * For each job: the write phase (netem on), then the link made clean, the
 * page cache dropped, and `fio --verify_only` on the same job file, which replays the same offsets
 * and sizes (fio's fixed seeds) and checks every block's header and
 * checksum. Every line fio prints goes to the report as
 * "KFRAG-FIO: JOB PHASE LINE"; for each phase the guest reports fio's
 * exit status (fio.JOB.PHASE.rc), and the series' destructor accounting
 * (guest/dtortrace.h: dtor.*). The host (scripts/fio-nfs) judges the
 * lines: with continue_on_error=verify fio exits 0 even when blocks fail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtortrace.h"
#include "netem.h"
#include "nfsmount.h"
#include "toolrun.h"

/* the client's RPC calls and retransmissions so far (/proc/net/rpc/nfs) */
static void rpc_counts(long long *calls, long long *retrans)
{
	char line[256];
	FILE *f = fopen("/proc/net/rpc/nfs", "r");

	*calls = *retrans = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "rpc %lld %lld", calls, retrans) == 2)
			break;
	if (f)
		fclose(f);
}

/* Run fio ARGS, its lines to the report as "KFRAG-FIO: JOB PHASE LINE" */
static int run_fio(const char *job, const char *phase, char *const argv[])
{
	char prefix[128];

	snprintf(prefix, sizeof(prefix), "KFRAG-FIO: %s %s", job, phase);
	return tool_run("/bin/fio", argv, NULL, prefix, NULL, NULL);
}

int main(void)
{
	const char *spec = getenv("KFRAG_NETEM"), *jobs = getenv("KFRAG_FIOJOBS");
	struct netem_spec ns, clean;
	char err[800], path[256], list[512], *job, *save = NULL;
	FILE *f;
	long long calls0, retrans0, calls, retrans;
	int rc, tracing;

	if (!spec)
		spec = "-";
	if (!jobs || !*jobs) {
		printf("KFRAG-KV: fio.error=need kfrag.fiojobs= (job names in /etc/fio)\n");
		return 2;
	}
	if (access("/bin/fio", X_OK)) {
		printf("KFRAG-KV: fio.error=no /bin/fio in the initramfs (scripts/thirdparty fio)\n");
		return 2;
	}
	if (netem_parse(spec, &ns, err, sizeof(err)) || netem_parse("-", &clean, err, sizeof(err))) {
		printf("KFRAG-KV: fio.error=%s\n", err);
		return 2;
	}
	tool_versions("fio");
	/* the series' destructor accounting (guest/dtortrace.h), from
	 * before the mount until it is gone */
	tracing = dtortrace_start();
	rc = kfrag_nfs_mount(err, sizeof(err));
	if (rc) {
		printf("KFRAG-KV: fio.error=%s\n", err);
		return rc;
	}
	snprintf(list, sizeof(list), "%s", jobs);
	for (job = strtok_r(list, ",", &save); job; job = strtok_r(NULL, ",", &save)) {
		char *wargv[] = { "fio", path, NULL };
		char *vargv[] = { "fio", "--verify_only", path, NULL };

		snprintf(path, sizeof(path), "/etc/fio/%s.fio", job);
		if (access(path, R_OK)) {
			printf("KFRAG-KV: fio.error=no job file %s\n", path);
			return 2;
		}
		if (netem_active(&ns) && netem_setup("eth0", &ns, err, sizeof(err))) {
			printf("KFRAG-KV: fio.error=%s\n", err);
			return 5;
		}
		setenv("KFRAG_FIOVERIFY", "0", 1);
		rpc_counts(&calls0, &retrans0);
		printf("KFRAG-KV: fio.%s.write.rc=%d\n", job, run_fio(job, "write", wargv));
		/* the job's write phase alone: not the mount's, not the
		 * previous jobs' (-1: no counts) */
		rpc_counts(&calls, &retrans);
		printf("KFRAG-KV: fio.%s.rpc_calls=%lld\nKFRAG-KV: fio.%s.rpc_retrans=%lld\n", job,
		       calls < 0 || calls0 < 0 ? -1 : calls - calls0, job,
		       retrans < 0 || retrans0 < 0 ? -1 : retrans - retrans0);
		/* the verify phase reads over a clean link */
		if (netem_active(&ns) && netem_setup("eth0", &clean, err, sizeof(err))) {
			printf("KFRAG-KV: fio.error=%s\n", err);
			return 5;
		}
		/* the buffered and mmap jobs' pages are still in the page cache:
		 * drop them, so that the verify phase reads the server's copy */
		sync();
		f = fopen("/proc/sys/vm/drop_caches", "w");
		if (!f || fputs("3\n", f) < 0 || fclose(f)) {
			printf("KFRAG-KV: fio.error=cannot drop the page cache: %s\n", strerror(errno));
			return 5;
		}
		setenv("KFRAG_FIOVERIFY", "1", 1);
		printf("KFRAG-KV: fio.%s.verify.rc=%d\n", job, run_fio(job, "verify", vargv));
	}
	if (umount("/mnt"))
		printf("KFRAG-KV: fio.umount=%s\n", strerror(errno));
	dtortrace_report(tracing);
	printf("KFRAG-KV: fio.done=1\n");
	return 0;
}
