/*
 * netem on a guest interface's egress, over rtnetlink (the guest has no tc).
 * Included by guest programs; not a program of its own.
 *
 * A link spec is what profiles/link.profiles holds, comma-separated:
 *   delay=MS jitter=MS loss=PCT dup=PCT reorder=PCT corr=PCT limit=PACKETS
 * e.g. "delay=5,jitter=20,dup=5"; "" or "-" means no qdisc (the clean link).
 * netem_setup() returns 0, or -1 with a message in err naming the cause.
 */
#ifndef KFRAG_NETEM_H
#define KFRAG_NETEM_H

#include <errno.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct netem_spec {
	double delay_ms, jitter_ms, loss, dup, reorder, corr;
	unsigned limit;
};

static int netem_parse(const char *spec, struct netem_spec *n, char *err, size_t errlen)
{
	char buf[256], *w, *save = NULL;

	memset(n, 0, sizeof(*n));
	n->limit = 1000;
	if (!spec || !*spec || !strcmp(spec, "-"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(w, '='), *end;
		double v;

		if (!eq) {
			snprintf(err, errlen, "netem spec '%s': '%s' is not key=value", spec, w);
			return -1;
		}
		*eq = 0;
		v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || v < 0) {
			snprintf(err, errlen, "netem spec '%s': bad number for %s", spec, w);
			return -1;
		}
		if (!strcmp(w, "delay")) n->delay_ms = v;
		else if (!strcmp(w, "jitter")) n->jitter_ms = v;
		else if (!strcmp(w, "loss")) n->loss = v;
		else if (!strcmp(w, "dup")) n->dup = v;
		else if (!strcmp(w, "reorder")) n->reorder = v;
		else if (!strcmp(w, "corr")) n->corr = v;
		else if (!strcmp(w, "limit")) n->limit = (unsigned)v;
		else {
			snprintf(err, errlen, "netem spec '%s': unknown key '%s' "
				 "(known: delay jitter loss dup reorder corr limit)", spec, w);
			return -1;
		}
	}
	if (n->reorder > 0 && n->delay_ms <= 0) {
		snprintf(err, errlen, "netem spec '%s': reorder needs a delay (netem sends "
			 "the reordered packets early)", spec);
		return -1;
	}
	return 0;
}

static inline int netem_active(const struct netem_spec *n)
{
	return n->delay_ms > 0 || n->jitter_ms > 0 || n->loss > 0 || n->dup > 0 || n->reorder > 0;
}

/* Microseconds to psched ticks, as tc does it (from /proc/net/psched). */
static uint32_t netem_ticks(double ms)
{
	unsigned t2us = 1, us2t = 1, clock_res = 1000000, res;
	double per_us;
	FILE *f = fopen("/proc/net/psched", "r");

	if (f) {
		if (fscanf(f, "%08x%08x%08x%08x", &t2us, &us2t, &clock_res, &res) < 3)
			t2us = us2t = 1, clock_res = 1000000;
		fclose(f);
	}
	if (clock_res == 1000000000)
		t2us = us2t; /* as tc's tc_core_init() */
	per_us = (double)t2us / us2t * ((double)clock_res / 1000000);
	return (uint32_t)(ms * 1000 * per_us);
}

static uint32_t netem_prob(double pct)
{
	double p = pct / 100 * 4294967295.0;

	return p >= 4294967295.0 ? 0xffffffffu : (uint32_t)p;
}

/* not inlined: GCC 12 then takes h for the header alone and warns */
static __attribute__((noinline)) void nl_put(struct nlmsghdr *h, unsigned short type,
					     const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static int netem_setup(const char *ifname, const struct netem_spec *n, char *err, size_t errlen)
{
	struct {
		struct nlmsghdr h;
		struct tcmsg t;
		char attrs[512];
	} req;
	struct tc_netem_qopt q;
	struct tc_netem_corr c;
	struct tc_netem_reorder r;
	struct rtattr *opt;
	char ans[1024];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int s, ifindex = if_nametoindex(ifname);
	ssize_t got;

	if (!ifindex) {
		snprintf(err, errlen, "netem: no interface %s: %s", ifname, strerror(errno));
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	req.h.nlmsg_type = RTM_NEWQDISC;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
	req.h.nlmsg_seq = 1;
	req.t.tcm_family = AF_UNSPEC;
	req.t.tcm_ifindex = ifindex;
	req.t.tcm_handle = 0x10000; /* 1: */
	req.t.tcm_parent = TC_H_ROOT;
	nl_put(&req.h, TCA_KIND, "netem", 6);

	/* TCA_OPTIONS: struct tc_netem_qopt, then netem's own attributes */
	memset(&q, 0, sizeof(q));
	q.latency = netem_ticks(n->delay_ms);
	q.jitter = netem_ticks(n->jitter_ms);
	q.limit = n->limit;
	q.loss = netem_prob(n->loss);
	q.duplicate = netem_prob(n->dup);
	q.gap = n->reorder > 0 ? 1 : 0; /* tc's default when reordering */
	opt = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.h.nlmsg_len));
	nl_put(&req.h, TCA_OPTIONS, &q, sizeof(q));
	c.delay_corr = c.loss_corr = c.dup_corr = netem_prob(n->corr);
	nl_put(&req.h, TCA_NETEM_CORR, &c, sizeof(c));
	if (n->reorder > 0) {
		r.probability = netem_prob(n->reorder);
		r.correlation = netem_prob(n->corr);
		nl_put(&req.h, TCA_NETEM_REORDER, &r, sizeof(r));
	}
	opt->rta_len = (char *)&req + req.h.nlmsg_len - (char *)opt;

	s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (s < 0 || sendto(s, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "netem: rtnetlink: %s", strerror(errno));
		return -1;
	}
	got = recv(s, ans, sizeof(ans), 0);
	close(s);
	if (got < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
		snprintf(err, errlen, "netem: no answer from rtnetlink");
		return -1;
	}
	if (((struct nlmsghdr *)ans)->nlmsg_type == NLMSG_ERROR) {
		int e = ((struct nlmsgerr *)NLMSG_DATA(ans))->error;

		if (e) {
			snprintf(err, errlen, "netem: the kernel refused the qdisc: %s%s",
				 strerror(-e), e == -ENOENT ? " (CONFIG_NET_SCH_NETEM missing?)" : "");
			return -1;
		}
	}
	return 0;
}

/* The root qdisc's counters: sent packets, drops, overlimits (-1 if unknown). */
static inline int netem_stats(const char *ifname, long long *sent, long long *drops)
{
	struct {
		struct nlmsghdr h;
		struct tcmsg t;
	} req;
	static char ans[16384];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int s, ifindex = if_nametoindex(ifname), done = 0;

	*sent = *drops = -1;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = RTM_GETQDISC;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.t.tcm_family = AF_UNSPEC;
	s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (s < 0 || sendto(s, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	while (!done) {
		ssize_t len = recv(s, ans, sizeof(ans), 0);
		struct nlmsghdr *h;

		if (len <= 0)
			break;
		for (h = (struct nlmsghdr *)ans; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			struct tcmsg *t = NLMSG_DATA(h);
			struct rtattr *a;
			int alen;

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			if (t->tcm_ifindex != ifindex || t->tcm_parent != TC_H_ROOT)
				continue;
			alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*t));
			for (a = (struct rtattr *)((char *)t + NLMSG_ALIGN(sizeof(*t))); RTA_OK(a, alen);
			     a = RTA_NEXT(a, alen)) {
				if (a->rta_type == TCA_STATS) {
					struct tc_stats st;

					memcpy(&st, RTA_DATA(a), sizeof(st));
					*sent = st.packets;
					*drops = st.drops;
				}
			}
		}
	}
	close(s);
	return *sent < 0 ? -1 : 0;
}

#endif
