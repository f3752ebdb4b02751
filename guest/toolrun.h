/*
 * Third-party programs run by the guest (guest/fio.c, guest/cthon.c,
 * guest/fsx.c; scripts/thirdparty builds them). Included, not a program.
 *
 *   tool_versions(TOOL)  prints /etc/thirdparty-TOOL.versions, each line
 *                        as "KFRAG-KV: TOOL.version=LINE"
 *   tool_run(PATH, ARGV, DIR, PREFIX, SAID, ARG)
 *                        runs PATH with ARGV (in DIR when not NULL), its
 *                        stdout and stderr to the report line by line,
 *                        each as "PREFIX LINE", SAID(LINE, ARG) called for
 *                        each when not NULL; returns its exit status, 125
 *                        it could not chdir, 126 not started, 127 not
 *                        run, 128+N killed by signal N
 */
#ifndef KFRAG_TOOLRUN_H
#define KFRAG_TOOLRUN_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void tool_versions(const char *tool)
{
	char path[128], line[256];
	FILE *v;

	snprintf(path, sizeof(path), "/etc/thirdparty-%s.versions", tool);
	v = fopen(path, "r");
	while (v && fgets(line, sizeof(line), v)) {
		line[strcspn(line, "\n")] = 0;
		printf("KFRAG-KV: %s.version=%s\n", tool, line);
	}
	if (v)
		fclose(v);
}

static int tool_run(const char *path, char *const argv[], const char *dir, const char *prefix,
		    void (*said)(const char *line, void *arg), void *arg)
{
	char line[4096];
	int p[2], status;
	pid_t pid;
	FILE *f;

	fflush(stdout);
	if (pipe(p))
		return 126;
	pid = fork();
	if (pid < 0)
		return 126;
	if (!pid) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		if (dir && chdir(dir))
			_exit(125);
		execv(path, argv);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		printf("%s %s\n", prefix, line);
		if (said)
			said(line, arg);
	}
	if (f)
		fclose(f);
	fflush(stdout);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 126;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

#endif
