/*
 * insncount: a QEMU TCG plugin that counts the guest instructions executed,
 * in total, per vCPU and inside measurement windows the guest marks itself
 * (common/insnmark.h), and writes the counts to a file.
 *
 *   qemu-system-x86_64 -plugin insncount.so,out=FILE[,mode=auto|inline|tb]
 *                      [,profile=PFILE,profwin=ID] ...
 *
 * Counting. When QEMU translates a block of guest code (a TB), the plugin
 * attaches "add the block's instruction count" to the block's entry:
 *   inline  an add to one 64-bit counter, emitted into the translated code
 *           (a load, an add, a store per block: the cheapest way to count);
 *   tb      a call into the plugin per block, which adds to the counter of
 *           the vCPU that runs it: per-vCPU counts, and no lost updates when
 *           several vCPU threads run at once (MTTCG). Costs a helper call per
 *           block.
 * auto (the default) takes inline when the machine starts with one vCPU
 * (scripts/vmrun's TCG default: -smp 1,maxcpus=2) and tb otherwise: QEMU
 * 7.2's inline operations all add to the same address, whatever the vCPU,
 * and with two vCPU threads the unlocked add would lose counts. Should a
 * second vCPU come up in inline mode (hotplug), the file says so
 * (warning=...), and scripts/vmrun fails the run.
 *
 * A block is counted when it starts; if an exception (a page fault) leaves
 * it early, the instructions after the faulting one are counted although
 * they did not run, and the block is entered again later. That inflates a
 * count by the number of instructions after faulting ones: deterministic
 * for a deterministic workload, and a few per fault. Under -icount the
 * same happens at a device register access (MMIO) in the middle of a
 * block: QEMU stops the block there and runs the access in a block of its
 * own, which plugins do not see (CF_MEMI_ONLY); the rest of the first
 * block is counted again when it runs. A few instructions per such
 * access, as deterministic as the accesses.
 *
 * Windows. A marker instruction (a NOP with a magic displacement, see
 * common/insnmark.h) is recognised by its bytes at translation time; the
 * plugin attaches a callback to that one instruction. At START <id> it
 * notes the counters, at STOP <id> it writes the difference: the
 * instructions executed strictly between the two markers on every vCPU. As
 * the block's count was added at its entry, the callback subtracts the
 * instructions of the block from the marker on, which have not run yet:
 * the window is exact to the instruction, whatever the block boundaries.
 *
 * Kernel. Beside the total, every count has a kernel part: the
 * instructions of blocks that start at a kernel address (the upper half
 * of the x86-64 address space, 0xffff800000000000 and up): the kernel's
 * text and its modules, run at interrupts, system calls and in kernel
 * threads. The rest is user space: in the benchmarks, largely the
 * workload's own (the red test stamps and checks every byte it writes),
 * the same whatever the kernel does. The split is exact: a block cannot
 * cross the non-canonical hole between the halves, and TCG ends a block
 * at syscall, sysret and iret and takes interrupts between blocks. One
 * exception: the legacy vsyscall page (0xffffffffff600000) is user-mode
 * code at a kernel address and would count as kernel; our static guest
 * programs do not call it.
 *
 * The file (KEY=VALUE lines; scripts/vmrun reads it):
 *   mode=inline|tb  vcpus=<max vCPUs>
 *   window.<id>.insns=N, window.<id>.kernel=N,
 *   window.<id>.vcpu<k>=N                        at each STOP
 *   window.<id>.error=...                        STOP without START
 *   warning=...                                  counts not to be trusted
 *   total.insns=N, total.kernel=N, total.vcpu<k>=N   at QEMU's exit
 * (in inline mode there is one counter: vcpu0 stands for all vCPUs).
 *
 * Profile (a diagnostic, not a benchmark figure). With profile=PFILE the
 * plugin also counts, per translated block, the instructions it ran while
 * window ID (profwin, default 1) was open, and writes at QEMU's exit one
 * line per block that ran: "<hex guest address> <instructions>". A block
 * translated twice gives two lines for one address; scripts/insnprof adds
 * them up per kernel function (System.map). It costs a callback per block
 * executed; on several vCPUs a block's count is an atomic add.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/insnmark.h"
#include "qemu-plugin-api.h"

KFRAG_PLUGIN_EXPORT int qemu_plugin_version = KFRAG_PLUGIN_API_VERSION;

#define NWIN 256
#define MAXTBINSNS 0xffff
#define KERNEL_START 0xffff800000000000ULL

_Static_assert(sizeof(uintptr_t) >= 8, "a marker's udata needs 64 bits");

/* one per vCPU, a cache line each: the vCPU threads do not share lines */
struct counter {
	uint64_t n;
	char pad[64 - sizeof(uint64_t)];
};

/*
 * [nslots] each; inline mode uses [0] only. A block adds to exactly one of
 * them, so that a reader on another vCPU can never see a block counted in
 * one and not yet in the other: the total is their sum
 */
static struct counter *uctr;    /* blocks at user addresses */
static struct counter *kctr;    /* blocks at kernel addresses */
static unsigned nslots;         /* max vCPUs */
static int inline_mode;
static unsigned vcpus_seen;     /* highest vCPU index + 1 */
static FILE *out;
static const char *out_path;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* the profile: a record per translated block, a list of them all */
struct pblock {
	uint64_t pc, insns;	/* the block's address; instructions it ran */
	unsigned n;		/* its length in instructions */
	struct pblock *next;
};
static struct pblock *pblocks;
static const char *prof_path;
static unsigned prof_win = 1;
static volatile int prof_open;	/* window prof_win is open */

static struct window {
	int open;
	uint64_t *start;        /* [2 * nslots]: uctr's, then kctr's */
} win[NWIN];

static uint64_t get(struct counter *c, unsigned k)
{
	return __atomic_load_n(&c[k].n, __ATOMIC_RELAXED);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (!out)
		return;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fflush(out);
}

static void add(struct counter *c, unsigned k, uint64_t n)
{
	__atomic_store_n(&c[k].n, c[k].n + n, __ATOMIC_RELAXED);
}

/*
 * tb mode: a block starts on vCPU vcpu; udata is its instruction count
 * times two, plus one for a block at a kernel address
 */
static void tb_exec(unsigned int vcpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;

	if (vcpu < nslots)
		add(u & 1 ? kctr : uctr, vcpu, u >> 1);
}

/*
 * a marker is about to run on vCPU vcpu. udata: op | id << 8 | ahead << 16
 * | kernel << 32, ahead = instructions of its block from the marker on
 * (already counted at the block's entry, not yet run), kernel = the block
 * is at a kernel address
 */
static void marker_exec(unsigned int vcpu, void *udata)
{
	uintptr_t u = (uintptr_t)udata;
	unsigned op = u & 0xff, id = (u >> 8) & 0xff, k;
	uint64_t ahead = (u >> 16) & 0xffff, now[2 * nslots], sum = 0, ksum = 0;

	pthread_mutex_lock(&lock);
	for (k = 0; k < nslots; k++) {
		now[k] = get(uctr, k);
		now[nslots + k] = get(kctr, k);
	}
	/*
	 * up to and including START, up to but excluding STOP: the window is
	 * what runs between the two; the marker's block is in the counter
	 * its address chose
	 */
	k = inline_mode ? 0 : vcpu;
	if (k < nslots)
		now[(u >> 32 ? nslots : 0) + k] -= op == KFRAG_INSN_OP_START ? ahead - 1 : ahead;
	if (id == prof_win)
		__atomic_store_n(&prof_open, op == KFRAG_INSN_OP_START, __ATOMIC_RELAXED);
	if (op == KFRAG_INSN_OP_START) {
		memcpy(win[id].start, now, sizeof(now));
		win[id].open = 1;
	} else if (!win[id].open) {
		say("window.%u.error=STOP without START (vCPU %u)\n", id, vcpu);
	} else {
		for (k = 0; k < nslots; k++)
			ksum += now[nslots + k] - win[id].start[nslots + k];
		for (k = 0; k < 2 * nslots; k++)
			sum += now[k] - win[id].start[k];
		say("window.%u.insns=%" PRIu64 "\n", id, sum);
		say("window.%u.kernel=%" PRIu64 "\n", id, ksum);
		for (k = 0; k < (inline_mode ? 1 : vcpus_seen); k++)
			say("window.%u.vcpu%u=%" PRIu64 "\n", id, k,
			    now[k] - win[id].start[k] + now[nslots + k] - win[id].start[nslots + k]);
		win[id].open = 0;
	}
	pthread_mutex_unlock(&lock);
}

/* profile: a block starts; counted while the profiled window is open */
static void prof_exec(unsigned int vcpu, void *udata)
{
	struct pblock *b = udata;

	(void)vcpu;
	if (__atomic_load_n(&prof_open, __ATOMIC_RELAXED))
		__atomic_add_fetch(&b->insns, b->n, __ATOMIC_RELAXED);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	int kern = qemu_plugin_tb_vaddr(tb) >= KERNEL_START;

	(void)id;
	if (prof_path) {
		struct pblock *b = calloc(1, sizeof(*b));

		if (b) {
			b->pc = qemu_plugin_tb_vaddr(tb);
			b->n = n;
			pthread_mutex_lock(&lock);
			b->next = pblocks;
			pblocks = b;
			pthread_mutex_unlock(&lock);
			qemu_plugin_register_vcpu_tb_exec_cb(tb, prof_exec, QEMU_PLUGIN_CB_NO_REGS, b);
		} else {
			say("warning=profile: out of memory, blocks left out\n");
		}
	}
	if (inline_mode)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 kern ? &kctr[0].n : &uctr[0].n, n);
	else
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)((uintptr_t)n << 1 | kern));
	for (i = 0; i < n && n <= MAXTBINSNS; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		unsigned wid;
		int op = kfrag_insn_marker(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn), &wid);

		if (op)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec, QEMU_PLUGIN_CB_NO_REGS,
				(void *)((uintptr_t)op | (uintptr_t)wid << 8 | (uintptr_t)(n - i) << 16 |
					 (uintptr_t)kern << 32));
	}
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	(void)id;
	pthread_mutex_lock(&lock);
	if (vcpu + 1 > vcpus_seen)
		vcpus_seen = vcpu + 1;
	if (vcpu >= nslots)
		say("warning=vCPU %u is beyond the %u counters: its instructions are not counted\n",
		    vcpu, nslots);
	else if (inline_mode && vcpu > 0)
		say("warning=vCPU %u came up in inline mode: two vCPU threads add to one counter "
		    "without a lock and lose counts (use mode=tb)\n", vcpu);
	pthread_mutex_unlock(&lock);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	uint64_t sum = 0, ksum = 0;
	unsigned k;

	(void)id, (void)p;
	pthread_mutex_lock(&lock);
	for (k = 0; k < nslots; k++) {
		sum += get(uctr, k) + get(kctr, k);
		ksum += get(kctr, k);
	}
	say("total.insns=%" PRIu64 "\n", sum);
	say("total.kernel=%" PRIu64 "\n", ksum);
	for (k = 0; k < (inline_mode ? 1 : vcpus_seen); k++)
		say("total.vcpu%u=%" PRIu64 "\n", k, get(uctr, k) + get(kctr, k));
	for (k = 0; k < NWIN; k++)
		if (win[k].open)
			say("window.%u.error=START without STOP\n", k);
	if (prof_path) {
		FILE *pf = fopen(prof_path, "w");
		struct pblock *b;

		if (!pf)
			say("warning=profile: cannot write %s: %s\n", prof_path, strerror(errno));
		for (b = pblocks; pf && b; b = b->next)
			if (b->insns)
				fprintf(pf, "%" PRIx64 " %" PRIu64 "\n", b->pc, b->insns);
		if (pf && fclose(pf))
			say("warning=profile: writing %s failed\n", prof_path);
	}
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&lock);
}

/* errors go to stderr, which QEMU leaves in vmrun's .qemu log */
static int fail(const char *why, const char *fix)
{
	fprintf(stderr, "insncount: %s\n  fix: %s\n", why, fix);
	return -1;
}

KFRAG_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					    int argc, char **argv)
{
	const char *mode = "auto";
	int i;
	unsigned k;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else if (!strncmp(argv[i], "mode=", 5))
			mode = argv[i] + 5;
		else if (!strncmp(argv[i], "profile=", 8))
			prof_path = argv[i] + 8;
		else if (!strncmp(argv[i], "profwin=", 8) && atoi(argv[i] + 8) > 0 &&
			 atoi(argv[i] + 8) < NWIN)
			prof_win = atoi(argv[i] + 8);
		else
			return fail(argv[i], "arguments: out=FILE (required), mode=auto|inline|tb, "
				    "profile=FILE, profwin=1..255");
	}
	if (!out_path || !*out_path)
		return fail("no output file", "-plugin insncount.so,out=FILE");
	if (!info->system_emulation || strcmp(info->target_name, "x86_64"))
		return fail("not x86_64 system emulation",
			    "the markers are x86 instructions: use qemu-system-x86_64");
	if (!strcmp(mode, "auto"))
		inline_mode = info->system.smp_vcpus == 1;
	else if (!strcmp(mode, "inline") || !strcmp(mode, "tb"))
		inline_mode = !strcmp(mode, "inline");
	else
		return fail(mode, "mode=auto|inline|tb");
	nslots = info->system.max_vcpus > 0 ? info->system.max_vcpus : 1;
	uctr = aligned_alloc(64, sizeof(*uctr) * nslots);
	kctr = aligned_alloc(64, sizeof(*kctr) * nslots);
	if (!uctr || !kctr)
		return fail("out of memory", "fewer vCPUs");
	memset(uctr, 0, sizeof(*uctr) * nslots);
	memset(kctr, 0, sizeof(*kctr) * nslots);
	for (k = 0; k < NWIN; k++)
		if (!(win[k].start = calloc(2 * nslots, sizeof(uint64_t))))
			return fail("out of memory", "fewer vCPUs");
	out = fopen(out_path, "w");
	if (!out) {
		fprintf(stderr, "insncount: cannot write %s: %s\n", out_path, strerror(errno));
		return -1;
	}
	say("mode=%s\nvcpus=%u\n", inline_mode ? "inline" : "tb", nslots);
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
