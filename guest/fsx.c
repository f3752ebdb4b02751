/*
 * kfrag-fsx: xfstests' fsx (scripts/thirdparty fsx) on the NFS mount, over
 * a link profile, with the invocations of xfstests' generic/091 and
 * generic/263 (O_DIRECT writes, -Z; PSIZE and BSIZE are 4096 on this
 * mount: the page size, and what xfstests' min_dio_alignment answers for
 * NFS on a kernel without statx's DIO alignment).
 *
 * Environment (scripts/fsx-nfs): the mount's (guest/nfsmount.h);
 * KFRAG_NETEM, the link (guest/netem.h); KFRAG_FSXOPS, fsx's -N
 * (xfstests: 10000); KFRAG_FSXRUNS, how many of the table's runs (all).
 *
 * fsx keeps a model of the file and checks every read against it; on a
 * miscompare it prints "READ BAD DATA" (or another "BAD" report), dumps
 * its log and exits non-zero. Report: "KFRAG-FSX: RUN LINE" for every
 * line, "KFRAG-KV: fsx.RUN=pass|fail rc=N" for each run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netem.h"
#include "nfsmount.h"
#include "toolrun.h"

/* generic/091 (-R -W: no mmap reads or writes; the last without -R),
 * then generic/263 (mmap allowed) */
static const char *const runs[][3] = {
	{ "g091.1", NULL, "-R -W" },
	{ "g091.2", "8192", "-R -W" },
	{ "g091.3", "32768", "-R -W" },
	{ "g091.4", "8192", "-R -W" },
	{ "g091.5", "32768", "-R -W" },
	{ "g091.6", "128000", "-W" },
	{ "g263.1", "8192", "" },
	{ "g263.2", "128000", "" },
};

int main(void)
{
	const char *spec = getenv("KFRAG_NETEM"), *ops = getenv("KFRAG_FSXOPS");
	const char *nruns = getenv("KFRAG_FSXRUNS");
	unsigned i, n = sizeof(runs) / sizeof(runs[0]), failed = 0;
	struct netem_spec ns;
	char err[800], prefix[64];
	int rc;

	if (!spec)
		spec = "-";
	if (!ops || !*ops)
		ops = "10000";
	if (nruns && *nruns && strtoul(nruns, NULL, 10) < n)
		n = strtoul(nruns, NULL, 10);
	if (access("/bin/fsx", X_OK)) {
		printf("KFRAG-KV: fsx.error=no /bin/fsx in the initramfs (scripts/thirdparty fsx)\n");
		return 2;
	}
	tool_versions("fsx");
	if (netem_parse(spec, &ns, err, sizeof(err))) {
		printf("KFRAG-KV: fsx.error=%s\n", err);
		return 2;
	}
	rc = kfrag_nfs_mount(err, sizeof(err));
	if (rc) {
		printf("KFRAG-KV: fsx.error=%s\n", err);
		return rc;
	}
	if (netem_active(&ns) && netem_setup("eth0", &ns, err, sizeof(err))) {
		printf("KFRAG-KV: fsx.error=%s\n", err);
		return 5;
	}
	for (i = 0; i < n; i++) {
		char *argv[24], flags[16], *w, *save = NULL;
		int a = 0;

		argv[a++] = "fsx";
		argv[a++] = "-N";
		argv[a++] = (char *)ops;
		if (runs[i][1]) {
			argv[a++] = "-o";
			argv[a++] = (char *)runs[i][1];
		}
		argv[a++] = "-l";
		argv[a++] = "500000";
		argv[a++] = "-r";
		argv[a++] = "4096";
		argv[a++] = "-t";
		argv[a++] = "4096";
		argv[a++] = "-w";
		argv[a++] = "4096";
		argv[a++] = "-Z";
		snprintf(flags, sizeof(flags), "%s", runs[i][2]);
		for (w = strtok_r(flags, " ", &save); w; w = strtok_r(NULL, " ", &save))
			argv[a++] = w;
		/* xfstests' _run_fsx_on_file: $TEST_DIR/junk, removed first */
		unlink("/mnt/junk");
		argv[a++] = "/mnt/junk";
		argv[a] = NULL;
		snprintf(prefix, sizeof(prefix), "KFRAG-FSX: %s", runs[i][0]);
		rc = tool_run("/bin/fsx", argv, NULL, prefix, NULL, NULL);
		failed += rc != 0;
		printf("KFRAG-KV: fsx.%s=%s rc=%d\n", runs[i][0], rc ? "fail" : "pass", rc);
	}
	printf("KFRAG-KV: fsx.run=%u\nKFRAG-KV: fsx.failed=%u\n", n, failed);
	if (umount("/mnt"))
		printf("KFRAG-KV: fsx.umount=%s\n", strerror(errno));
	printf("KFRAG-KV: fsx.done=1\n");
	return 0;
}
