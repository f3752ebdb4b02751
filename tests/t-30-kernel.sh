# Both variants build from the same base queue, and boot and talk TCP.
# shellcheck shell=bash

kernel_of() { echo "$BUILD_DIR/$1/obj/arch/x86/boot/bzImage"; }

t_build() {
	local v=$1 img
	make -s initramfs host
	img=$(scripts/build-kernel "$v")
	[ "$img" = "$(kernel_of "$v")" ] && [ -s "$img" ]
	# -n 3, not "| head": head exits early and git dies of SIGPIPE (pipefail)
	git -C "$BUILD_DIR/$v/src" log --oneline -n 3
	echo "bzImage: $img ($(stat -c %s "$img") bytes)"
}
t_build_vanilla() { t_build vanilla; }
t_build_series() { t_build series; }

t_smoke() {
	local v=$1
	[ -s "$(kernel_of "$v")" ] || { echo "    no $v kernel: build-$v failed"; return 1; }
	scripts/smoke "$(kernel_of "$v")" "$v"
}
t_smoke_vanilla() { t_smoke vanilla; }
t_smoke_series() { t_smoke series; }

register build-vanilla t_build_vanilla
register build-series t_build_series
register smoke-vanilla t_smoke_vanilla
register smoke-series t_smoke_series
