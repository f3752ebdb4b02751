# Both variants build from the same base queue, and boot and talk TCP.
# shellcheck shell=bash

# kernel_of VARIANT: the variant's bzImage as the patches say now: built
# (incrementally) by scripts/build-kernel the first time a run of the suite
# asks, its path (or its failure) remembered for the rest of the run. A
# test never boots a bzImage left on disk by an earlier build: if the
# queue does not apply or the build fails, every test that needs the
# kernel fails. Use it in an assignment (img=$(kernel_of v)), where set -e
# sees its status; never inside another command's arguments.
kernel_of() {
	local v=$1 memo=$SCRATCH/kernel-$1${DEBUG:+-debug} img
	if [ ! -e "$memo" ]; then
		if img=$(scripts/build-kernel "$v" 2>"$memo.log") && [ -s "$img" ]; then
			echo "$img" > "$memo"
		else
			: > "$memo"
		fi
	fi
	if [ ! -s "$memo" ]; then
		echo "    the $v kernel could not be built in this run (no older bzImage is used):" >&2
		tail -n 6 "$memo.log" | sed 's/^/    | /' >&2
		return 1
	fi
	cat "$memo"
}

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

register build-vanilla t_build_vanilla
register build-series t_build_series
register build-copy t_build_copy
register stale-kernel-refused t_stale_kernel
register smoke-vanilla t_smoke_vanilla
register smoke-series t_smoke_series
register smoke-copy t_smoke_copy
register debug-vanilla t_debug_vanilla
