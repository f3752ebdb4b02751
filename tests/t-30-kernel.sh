# Both variants build from the same base queue, and boot and talk TCP
# (the kernels come from tests/lib.sh kernel_of).
# shellcheck shell=bash

t_build() {
	local v=$1 img
	make -s initramfs host
	img=$(kernel_of "$v")
	[ "$img" = "$BUILD_DIR/$v/obj/arch/x86/boot/bzImage" ]
	[ -s "$img" ]
	git -C "$BUILD_DIR/$v/src" log --oneline -3
	echo "bzImage: $img ($(stat -c %s "$img") bytes)"
}
t_build_vanilla() { t_build vanilla; }
t_build_series() { t_build series; }
t_build_copy() { t_build copy; }

# Hole: a bzImage from an earlier build stays on disk when the queue stops
# applying; kernel_of must fail, not hand out the old kernel.
t_stale_kernel() {
	local b=$SCRATCH/stale q=$SCRATCH/stale-q rc=0
	mkdir -p "$b/series/obj/arch/x86/boot" "$q/base"
	echo "an old bzImage" > "$b/series/obj/arch/x86/boot/bzImage"
	printf 'From: T <t@kfrag.invalid>\nSubject: [PATCH] broken\n\n---\n--- a/Makefile\n+++ b/Makefile\n@@ -1,1 +1,1 @@\n-no such line\n+x\n' \
		> "$q/base/0001-broken.patch"
	echo 0001-broken.patch > "$q/base/series"
	: > "$q/series"
	(export BUILD_DIR=$b PATCHES_DIR=$q SCRATCH=$SCRATCH/stale-memo; mkdir -p "$SCRATCH"
		kernel_of series) > "$SCRATCH/stale.out" 2>&1 || rc=$?
	cat "$SCRATCH/stale.out"
	[ $rc != 0 ] || { echo "    kernel_of handed out the stale bzImage"; return 1; }
	grep -q "could not be built" "$SCRATCH/stale.out"
	grep -q "0001-broken.patch does not apply" "$SCRATCH/stale.out"
}

t_smoke() {
	local v=$1 img
	img=$(kernel_of "$v")
	scripts/smoke "$img" "$v"
}
t_smoke_vanilla() { t_smoke vanilla; }
t_smoke_series() { t_smoke series; }
t_smoke_copy() { t_smoke copy; }

t_debug_vanilla() {
	# the debug fragment (SLUB poisoning, DEBUG_PAGEALLOC, lockdep, ...)
	# is accepted by Kconfig, and the kernel boots and talks TCP silently
	local img
	img=$(DEBUG=1 kernel_of vanilla)
	[ "$img" = "$BUILD_DIR/vanilla/obj-debug/arch/x86/boot/bzImage" ]
	grep -qx CONFIG_PROVE_LOCKING=y "$BUILD_DIR/vanilla/obj-debug/.config"
	VM_MEM=1024 scripts/smoke "$img" vanilla-debug
}

register build-vanilla t_build_vanilla vm
register build-series t_build_series vm
register build-copy t_build_copy vm
register stale-kernel-refused t_stale_kernel quick
register smoke-vanilla t_smoke_vanilla vm
register smoke-series t_smoke_series vm
register smoke-copy t_smoke_copy vm
register debug-vanilla t_debug_vanilla vm
