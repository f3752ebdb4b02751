/*
 * The NFS mount of the host's export, as the red test and the exit
 * scenarios do it. No mount.nfs in the guest: the kernel's text options.
 * addr= and mountport= replace what mount.nfs would ask rpcbind; nolock
 * because there is no statd; mountproto=tcp whatever the data transport.
 *
 * From the environment (scripts/redtest, scripts/exits): KFRAG_SERVER,
 * KFRAG_EXPORT, KFRAG_MNTPORT, KFRAG_NFSPORT, KFRAG_PROTO (tcp|udp),
 * KFRAG_MOUNTOPTS (appended).
 */
#ifndef KFRAG_NFSMOUNT_H
#define KFRAG_NFSMOUNT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* 0 mounted on /mnt; 2 bad arguments, 4 the mount failed: err says why */
static int kfrag_nfs_mount(char *err, size_t errlen)
{
	const char *server = getenv("KFRAG_SERVER"), *export = getenv("KFRAG_EXPORT");
	const char *proto = getenv("KFRAG_PROTO"), *extra = getenv("KFRAG_MOUNTOPTS");
	const char *mntport = getenv("KFRAG_MNTPORT"), *nfsport = getenv("KFRAG_NFSPORT");
	char src[512], opts[1024];

	if (!server || !*server)
		server = "10.0.2.2";
	if (!proto || !*proto)
		proto = "tcp";
	if (!extra)
		extra = "";
	if (!nfsport || !*nfsport)
		nfsport = "2049";
	if (!export || !*export || !mntport || !strtoul(mntport, NULL, 0)) {
		snprintf(err, errlen, "need kfrag.export= and kfrag.mntport= (from scripts/nfs-server start)");
		return 2;
	}
	if (strcmp(proto, "tcp") && strcmp(proto, "udp")) {
		snprintf(err, errlen, "kfrag.proto must be tcp or udp");
		return 2;
	}
	snprintf(src, sizeof(src), "%s:%s", server, export);
	snprintf(opts, sizeof(opts),
		 "vers=3,proto=%s,addr=%s,port=%s,mountaddr=%s,mountport=%s,mountproto=tcp,"
		 "mountvers=3,nolock,hard%s%s",
		 proto, server, nfsport, server, mntport, *extra ? "," : "", extra);
	printf("KFRAG-KV: mount.src=%s\nKFRAG-KV: mount.opts=%s\n", src, opts);
	fflush(stdout);
	mkdir("/mnt", 0755);
	if (mount(src, "/mnt", "nfs", 0, opts)) {
		snprintf(err, errlen, "mount %s failed: %s (is the host's NFS server up, "
			 "export and mntport right? see mount.opts)", src, strerror(errno));
		return 4;
	}
	return 0;
}

#endif
