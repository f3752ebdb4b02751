/*
 * The NFS mount of the host's export, as the red test and the exit
 * scenarios do it. No mount.nfs in the guest: the kernel's text options.
 *
 * NFSv3: addr= and mountport= replace what mount.nfs would ask rpcbind;
 * nolock because there is no statd; mountproto=tcp whatever the data
 * transport. NFSv4.0 and 4.1 (TCP only): the server's pseudo path, and
 * clientaddr= (eth0's address), which mount.nfs would fill in and the
 * kernel requires (the server's callback address).
 *
 * From the environment (scripts/redtest, scripts/exits): KFRAG_SERVER,
 * KFRAG_EXPORT, KFRAG_MNTPORT, KFRAG_NFSPORT, KFRAG_PROTO (tcp|udp),
 * KFRAG_NFSVERS (3, 4.0 or 4.1; 3), KFRAG_PSEUDO (the export's NFSv4
 * path, /export), KFRAG_MOUNTOPTS (appended).
 */
#ifndef KFRAG_NFSMOUNT_H
#define KFRAG_NFSMOUNT_H

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* eth0's IPv4 address as text into buf; 0, or -1 (errno) */
static int kfrag_eth0_addr(char *buf, size_t len)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0), r = -1;

	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "eth0");
	if (!ioctl(s, SIOCGIFADDR, &ifr) &&
	    inet_ntop(AF_INET, &((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr, buf, len))
		r = 0;
	close(s);
	return r;
}

/* What the kernel says it mounted on /mnt (its /proc/mounts line: the NFS
 * version and minor version it negotiated), as KFRAG-KV: mount.proc= */
static void kfrag_nfs_mounted(void)
{
	char line[1024];
	FILE *f = fopen("/proc/mounts", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, " /mnt nfs"))
			continue;
		line[strcspn(line, "\n")] = 0;
		printf("KFRAG-KV: mount.proc=%s\n", line);
	}
	if (f)
		fclose(f);
	fflush(stdout);
}

/* 0 mounted on /mnt; 2 bad arguments, 4 the mount failed: err says why */
static int kfrag_nfs_mount(char *err, size_t errlen)
{
	const char *server = getenv("KFRAG_SERVER"), *export = getenv("KFRAG_EXPORT");
	const char *proto = getenv("KFRAG_PROTO"), *extra = getenv("KFRAG_MOUNTOPTS");
	const char *mntport = getenv("KFRAG_MNTPORT"), *nfsport = getenv("KFRAG_NFSPORT");
	const char *vers = getenv("KFRAG_NFSVERS"), *pseudo = getenv("KFRAG_PSEUDO");
	/* the NFS service's address, where it is not the server's (a relay) */
	const char *nfsaddr = getenv("KFRAG_NFSADDR");
	char src[512], opts[1024], me[INET_ADDRSTRLEN];

	if (!server || !*server)
		server = "10.0.2.2";
	if (!proto || !*proto)
		proto = "tcp";
	if (!extra)
		extra = "";
	if (!nfsport || !*nfsport)
		nfsport = "2049";
	if (!vers || !*vers)
		vers = "3";
	if (!pseudo || !*pseudo)
		pseudo = "/export";
	if (!nfsaddr || !*nfsaddr)
		nfsaddr = server;
	if (strcmp(vers, "3") && strcmp(vers, "4.0") && strcmp(vers, "4.1")) {
		snprintf(err, errlen, "kfrag.nfsvers must be 3, 4.0 or 4.1, not %s", vers);
		return 2;
	}
	if (!export || !*export || !mntport || !strtoul(mntport, NULL, 0)) {
		snprintf(err, errlen, "need kfrag.export= and kfrag.mntport= (from scripts/nfs-server start)");
		return 2;
	}
	if (strcmp(proto, "tcp") && strcmp(proto, "udp")) {
		snprintf(err, errlen, "kfrag.proto must be tcp or udp");
		return 2;
	}
	if (*vers == '4') {
		if (strcmp(proto, "tcp")) {
			snprintf(err, errlen, "NFSv%s runs over TCP only (RFC 7530 3.1), not %s", vers, proto);
			return 2;
		}
		if (kfrag_eth0_addr(me, sizeof(me))) {
			snprintf(err, errlen, "no IPv4 address on eth0 for clientaddr=: %s", strerror(errno));
			return 4;
		}
		snprintf(src, sizeof(src), "%s:%s", server, pseudo);
		snprintf(opts, sizeof(opts),
			 "vers=4,minorversion=%s,proto=tcp,addr=%s,port=%s,clientaddr=%s,hard%s%s",
			 vers + 2, nfsaddr, nfsport, me, *extra ? "," : "", extra);
	} else {
		snprintf(src, sizeof(src), "%s:%s", server, export);
		snprintf(opts, sizeof(opts),
			 "vers=3,proto=%s,addr=%s,port=%s,mountaddr=%s,mountport=%s,mountproto=tcp,"
			 "mountvers=3,nolock,hard%s%s",
			 proto, nfsaddr, nfsport, server, mntport, *extra ? "," : "", extra);
	}
	printf("KFRAG-KV: mount.src=%s\nKFRAG-KV: mount.opts=%s\n", src, opts);
	fflush(stdout);
	mkdir("/mnt", 0755);
	if (mount(src, "/mnt", "nfs", 0, opts)) {
		snprintf(err, errlen, "mount %s failed: %s (is the host's NFS server up, "
			 "export and mntport right? see mount.opts)", src, strerror(errno));
		return 4;
	}
	kfrag_nfs_mounted();
	return 0;
}

#endif
