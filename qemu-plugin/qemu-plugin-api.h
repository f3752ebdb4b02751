/*
 * The part of QEMU's TCG plugin API (plugin API version 1, QEMU 7.2;
 * docs/devel/tcg-plugins.rst) that insncount.c uses, declared here
 * because Debian 12's QEMU packages ship no qemu-plugin.h. Only what we
 * call, with the types and calling conventions of version 1; the
 * functions are resolved at load time from the qemu-system-* binary,
 * which exports them (nm -D qemu-system-x86_64 | grep qemu_plugin_).
 *
 * Version 1 matters: version 2 (QEMU 9.0) removed the *_exec_inline calls
 * in favour of per-vCPU scoreboards, and version 3 changed
 * qemu_plugin_insn_data. A QEMU whose API range excludes 1 refuses to
 * load the plugin ("plugin ... has version 1 but ...").
 */
#ifndef KFRAG_QEMU_PLUGIN_API_H
#define KFRAG_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KFRAG_PLUGIN_API_VERSION 1
#define KFRAG_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

/* what QEMU tells qemu_plugin_install about itself and the machine */
typedef struct qemu_info_t {
	const char *target_name; /* "x86_64" */
	struct {
		int min, cur;    /* the API versions this QEMU accepts */
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus; /* vCPUs at start */
			int max_vcpus; /* with hotplug */
		} system;
	};
} qemu_info_t;

/* opaque handles, valid only inside the translation callback */
struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS, /* the callback reads no guest register */
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64, /* *(uint64_t *)ptr += imm, in the translated code */
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

/* exported by the plugin: the API version it was written for, its entry */
extern KFRAG_PLUGIN_EXPORT int qemu_plugin_version;
KFRAG_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					    int argc, char **argv);

/* exported by QEMU */
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
/* run cb / the inline op each time the block (the instruction) starts executing */
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);

#endif
