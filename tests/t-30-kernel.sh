# Both variants build from the same base queue, and boot and talk TCP.
# shellcheck shell=bash

kernel_of() { echo "$BUILD_DIR/$1/obj/arch/x86/boot/bzImage"; }
debug_kernel_of() { echo "$BUILD_DIR/$1/obj-debug/arch/x86/boot/bzImage"; }

t_build() {
	local v=$1 img
	make -s initramfs host
	img=$(scripts/build-kernel "$v")
	[ "$img" = "$(kernel_of "$v")" ] && [ -s "$img" ]
	git -C "$BUILD_DIR/$v/src" log --oneline -3
	echo "bzImage: $img ($(stat -c %s "$img") bytes)"
}
t_build_vanilla() { t_build vanilla; }
t_build_series() { t_build series; }
t_build_copy() { t_build copy; }

t_smoke() {
	local v=$1
	[ -s "$(kernel_of "$v")" ] || { echo "    no $v kernel: build-$v failed"; return 1; }
	scripts/smoke "$(kernel_of "$v")" "$v"
}
t_smoke_vanilla() { t_smoke vanilla; }
t_smoke_series() { t_smoke series; }
t_smoke_copy() { t_smoke copy; }

t_debug_vanilla() {
	# the debug fragment (SLUB poisoning, DEBUG_PAGEALLOC, lockdep, ...)
	# is accepted by Kconfig, and the kernel boots and talks TCP silently
	local img
	img=$(DEBUG=1 scripts/build-kernel vanilla)
	[ "$img" = "$(debug_kernel_of vanilla)" ]
	grep -qx CONFIG_PROVE_LOCKING=y "$BUILD_DIR/vanilla/obj-debug/.config"
	VM_MEM=1024 scripts/smoke "$img" vanilla-debug
}

register build-vanilla t_build_vanilla
register build-series t_build_series
register build-copy t_build_copy
register smoke-vanilla t_smoke_vanilla
register smoke-series t_smoke_series
register smoke-copy t_smoke_copy
register debug-vanilla t_debug_vanilla
