/*
 * kfrag-cthon: Connectathon's NFS tests (cthon04, scripts/thirdparty
 * cthon) on the NFS mount, over a link profile.
 *
 * Environment (scripts/cthon-nfs): the mount's (guest/nfsmount.h);
 * KFRAG_NETEM, the link (guest/netem.h, "-" none); KFRAG_CTHON, the suites
 * to run, comma-separated: basic, special, lock; KFRAG_CTHONARG, the tests'
 * mode as cthon04's runtests take it: -f (functional: one pass each) or
 * -t (timed, the default counts).
 *
 * Each program runs as cthon04's own scripts run it (basic/runtests,
 * special/runtests.wrk, lock/runtests: the same programs, arguments and
 * order), but one at a time from here, so that each gets its own verdict
 * where the scripts stop at the first failure (set -e). The programs call
 * system() for rm and ls: busybox (static, Debian's busybox-static) is
 * /bin/sh and the utilities. The lock tests need the server's lock
 * service: over NFSv3 the mount is nolock (no statd in the guest), which
 * would make them local and prove nothing, so they are reported skipped
 * there, by name.
 *
 * Report: "KFRAG-CTHON: SUITE TEST LINE" for every line a test prints;
 * "KFRAG-KV: cthon.SUITE.TEST=pass|fail rc=N|skip WHY" for each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netem.h"
#include "nfsmount.h"
#include "toolrun.h"

struct ctest {
	const char *suite, *name, *args[4];
};

/* "%A" in args: the test mode (-f or -t); "%D": NFSTESTDIR */
static const struct ctest tests[] = {
	/* basic/runtests */
	{ "basic", "test1", { "%A" } },	/* file and directory tree creation */
	{ "basic", "test2", { "%A" } },	/* file and directory tree removal */
	{ "basic", "test3", { "%A" } },	/* lookups across mount point */
	{ "basic", "test4", { "%A" } },	/* setattr, getattr, lookup */
	{ "basic", "test5", { "%A" } },	/* write and read */
	{ "basic", "test6", { "%A" } },	/* readdir */
	{ "basic", "test7", { "%A" } },	/* rename and link */
	{ "basic", "test8", { "%A" } },	/* symlink and readlink */
	{ "basic", "test9", { "%A" } },	/* statfs */
	/* special/runtests.wrk */
	{ "special", "op_unlk", { NULL } },
	{ "special", "op_ren", { NULL } },
	{ "special", "op_chmod", { NULL } },
	{ "special", "dupreq", { "100", "testfile" } },
	{ "special", "excltest", { NULL } },
	{ "special", "negseek", { "testfile" } },
	{ "special", "rename", { "100" } },
	{ "special", "truncate", { NULL } },
	{ "special", "holey", { NULL } },
	{ "special", "nfsidem", { "50", "testdir" } },
	{ "special", "rewind", { NULL } },
	{ "special", "telldir", { NULL } },
	{ "special", "freesp", { NULL } },
	{ "special", "bigfile", { "-s", "30", "bigfile1" } },
	{ "special", "bigfile2", { "bigfile1" } },
	/* lock/runtests: -f runs them without arguments, -t with -r */
	{ "lock", "tlocklfs", { "%R", "%D" } },
	{ "lock", "tlock64", { "%R", "%D" } },
};

static int listed(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/*
 * What a test's lines say beyond its exit status: dupreq (the lost-reply
 * test for non-idempotent requests) counts its failures in lines
 * "N bad link" and the like and exits 0 whatever they say; freesp, built
 * without F_FREESP (Linux has none), says so and exits 0 having tested
 * nothing.
 */
enum { SAID_NOTHING, SAID_BAD, SAID_NOT_RUN };

static int said(const char *line)
{
	int n;
	char what[32];

	if (sscanf(line, "%d bad %31s", &n, what) == 2 && n > 0)
		return SAID_BAD;
	if (strstr(line, "not available on this platform"))
		return SAID_NOT_RUN;
	return SAID_NOTHING;
}

/* tool_run()'s line callback: the worst of said() into *(int *)arg */
static void worst(const char *line, void *arg)
{
	int w = said(line);

	if (w > *(int *)arg)
		*(int *)arg = w;
}

/* run one test with cwd and NFSTESTDIR as its script has them; its status,
 * and in *says what its lines said (the worst of said()) */
static int run(const struct ctest *t, const char *mode, const char *dir, int *says)
{
	char prog[128], prefix[128];
	char *argv[8];
	int n = 0, i;

	snprintf(prog, sizeof(prog), "/cthon/%s/%s", t->suite, t->name);
	snprintf(prefix, sizeof(prefix), "KFRAG-CTHON: %s %s", t->suite, t->name);
	argv[n++] = (char *)t->name;
	for (i = 0; i < 4 && t->args[i]; i++) {
		const char *a = t->args[i];

		if (!strcmp(a, "%A"))
			a = mode;
		else if (!strcmp(a, "%D"))
			a = dir;
		else if (!strcmp(a, "%R")) {
			if (strcmp(mode, "-t"))
				continue;
			a = "-r";
		}
		argv[n++] = (char *)a;
	}
	argv[n] = NULL;
	setenv("NFSTESTDIR", dir, 1);
	/* basic's tests make NFSTESTDIR themselves (test1) and chdir into
	 * it; the special tests run in it, as runtests.wrk does */
	return tool_run(prog, argv, strcmp(t->suite, "basic") ? dir : NULL, prefix, worst, says);
}

int main(void)
{
	const char *spec = getenv("KFRAG_NETEM"), *suites = getenv("KFRAG_CTHON");
	const char *mode = getenv("KFRAG_CTHONARG"), *vers = getenv("KFRAG_NFSVERS");
	struct netem_spec ns;
	char err[800], dir[64];
	unsigned i, failed = 0, run_n = 0;
	pid_t pid;
	int rc = 0, says;

	if (!spec)
		spec = "-";
	if (!suites || !*suites)
		suites = "basic";
	if (!mode || !*mode)
		mode = "-f";
	if (strcmp(mode, "-f") && strcmp(mode, "-t")) {
		printf("KFRAG-KV: cthon.error=kfrag.cthonarg must be -f or -t, not %s\n", mode);
		return 2;
	}
	if (access("/cthon/basic/test1", X_OK) || access("/bin/busybox", X_OK)) {
		printf("KFRAG-KV: cthon.error=no /cthon or /bin/busybox in the initramfs "
		       "(scripts/thirdparty cthon)\n");
		return 2;
	}
	tool_versions("cthon");
	/* as cthon04's scripts run the tests: umask 0, no TMPDIR */
	umask(0);
	unsetenv("TMPDIR");
	/* busybox's applets as /bin/sh, rm, ls...: the tests' system() */
	fflush(stdout);
	pid = fork();
	if (!pid) {
		execl("/bin/busybox", "busybox", "--install", "-s", "/bin", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &rc, 0) < 0 || rc || access("/bin/sh", X_OK)) {
		printf("KFRAG-KV: cthon.error=busybox --install -s /bin failed (status %d)\n", rc);
		return 2;
	}
	if (netem_parse(spec, &ns, err, sizeof(err))) {
		printf("KFRAG-KV: cthon.error=%s\n", err);
		return 2;
	}
	rc = kfrag_nfs_mount(err, sizeof(err));
	if (rc) {
		printf("KFRAG-KV: cthon.error=%s\n", err);
		return rc;
	}
	if (netem_active(&ns) && netem_setup("eth0", &ns, err, sizeof(err))) {
		printf("KFRAG-KV: cthon.error=%s\n", err);
		return 5;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		const struct ctest *t = &tests[i];

		if (!listed(suites, t->suite))
			continue;
		if (!strcmp(t->suite, "lock") && (!vers || !strcmp(vers, "3"))) {
			printf("KFRAG-KV: cthon.%s.%s=skip nolock (NFSv3 without statd in the guest: "
			       "the locks would be local)\n", t->suite, t->name);
			continue;
		}
		snprintf(dir, sizeof(dir), "/mnt/cthon.%s", t->suite);
		if (strcmp(t->suite, "basic") && mkdir(dir, 0777) && errno != EEXIST) {
			printf("KFRAG-KV: cthon.error=mkdir %s: %s\n", dir, strerror(errno));
			return 4;
		}
		says = SAID_NOTHING;
		rc = run(t, mode, dir, &says);
		if (!rc && says == SAID_NOT_RUN) {
			printf("KFRAG-KV: cthon.%s.%s=skip not available on this platform (its own words)\n",
			       t->suite, t->name);
			continue;
		}
		run_n++;
		failed += rc != 0 || says == SAID_BAD;
		printf("KFRAG-KV: cthon.%s.%s=%s rc=%d%s\n", t->suite, t->name,
		       rc || says == SAID_BAD ? "fail" : "pass", rc,
		       says == SAID_BAD ? " (its \"N bad\" lines)" : "");
		fflush(stdout);
	}
	printf("KFRAG-KV: cthon.run=%u\nKFRAG-KV: cthon.failed=%u\n", run_n, failed);
	if (umount("/mnt"))
		printf("KFRAG-KV: cthon.umount=%s\n", strerror(errno));
	printf("KFRAG-KV: cthon.done=1\n");
	return 0;
}
