/*
 * The measurement-window markers of qemu-plugin/insncount.c, shared by the
 * guest programs (which execute them) and the plugin (which recognises
 * them when QEMU translates the code).
 *
 * A marker is one x86 instruction that does nothing:
 *
 *     nopl 0x4b46<op><id>(%rax)     bytes 0f 1f 80 <id> <op> 46 4b
 *
 * a multi-byte NOP with a displacement no assembler or compiler emits
 * (their NOP padding has displacement 0). Without the plugin, on real
 * hardware or under KVM, it is a NOP: a program with markers runs
 * anywhere, unprivileged, and touches no device. <op> is START or STOP,
 * <id> (0-255) names the window; the guest program says which name an id
 * stands for with a "KFRAG-KV: insnwin.<id>=<name>" line, and
 * scripts/vmrun reports the window's count as <name>.insns.
 *
 * The window counts the instructions strictly between the two markers,
 * on every vCPU, in every mode (user, kernel, interrupts): whatever the
 * guest executes while the program is between them.
 */
#ifndef KFRAG_INSNMARK_H
#define KFRAG_INSNMARK_H

#define KFRAG_INSN_OP_START 0x53 /* 'S' */
#define KFRAG_INSN_OP_STOP 0x45  /* 'E' */
#define KFRAG_INSN_MARK_LEN 7

/* the instruction, as a string for asm(); id and op are immediates */
#define KFRAG_INSN_MARK_ASM(idop, opop) \
	".byte 0x0f, 0x1f, 0x80, " idop ", " opop ", 0x46, 0x4b\n\t"

#ifndef __ASSEMBLER__
/* KFRAG_INSN_START(ID) / KFRAG_INSN_STOP(ID): ID a compile-time constant */
#define KFRAG_INSN_MARK(op, id) \
	__asm__ __volatile__(KFRAG_INSN_MARK_ASM("%c0", "%c1") :: "i"(id), "i"(op) : "memory")
#define KFRAG_INSN_START(id) KFRAG_INSN_MARK(KFRAG_INSN_OP_START, id)
#define KFRAG_INSN_STOP(id) KFRAG_INSN_MARK(KFRAG_INSN_OP_STOP, id)

/*
 * kfrag_insn_marker(bytes, len): the marker's op (START or STOP) if these
 * are a marker's bytes, with its id in *id; 0 otherwise
 */
static inline int kfrag_insn_marker(const unsigned char *b, unsigned long len, unsigned *id)
{
	if (len != KFRAG_INSN_MARK_LEN || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 ||
	    b[5] != 0x46 || b[6] != 0x4b ||
	    (b[4] != KFRAG_INSN_OP_START && b[4] != KFRAG_INSN_OP_STOP))
		return 0;
	*id = b[3];
	return b[4];
}
#endif

#endif
