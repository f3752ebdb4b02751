# Common definitions for the harness scripts; sourced, not run.
# shellcheck shell=bash

set -euo pipefail

# The base: vanilla Linux v3.1. The tree id is what is verified, whatever
# the source (a git repository, the cache, or the kernel.org tarball).
BASE_COMMIT=c3b92c8787367a8bb53d57d9789b558f1295cc96
BASE_TREE=7bb7c72c515eaf036c0b4033be82bb4b3c0ce598
BASE_REF=refs/heads/v3.1-base
KERNEL_ORG_URL=${KERNEL_ORG_URL:-https://cdn.kernel.org/pub/linux/kernel/v3.x/linux-3.1.tar.xz}

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The base-tree cache lives outside the checkout so that every clone and
# every CI run on this machine reuses it.
CACHE_DIR=${KFRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/skb-frag-destructor}
BASE_GIT=$CACHE_DIR/linux-v3.1.git
BUILD_DIR=${BUILD_DIR:-$TOP/build}
PATCHES_DIR=${PATCHES_DIR:-$TOP/patches}
# The two the demo compares; "copy" (vanilla + patches/copy-on-resend,
# mainline's later approach) is built for comparison on request.
VARIANTS="vanilla series"

die() {
	printf 'error: %s\n' "$1" >&2
	shift
	local l
	for l in "$@"; do printf '  %s\n' "$l" >&2; done
	exit 1
}

log() { printf '>> %s\n' "$*" >&2; }

# kv KEY FILE: the last KEY=value of a KEY=value file (the red test's
# guest.kv, wire.kv, disk.kv)
kv() { sed -n "s/^$1=//p" "$2" | tail -n1; }
# The destructors column of a red-test run's row (scripts/redtest computes
# it from the guest's accounting): "N=N", "BAD:...", "absent" or "off".
destructors_of() { sed -n 2p "$1/row.tsv" | cut -f16; }
# dtor_balanced VALUE: VALUE is "N=N", every destructor destroyed once
dtor_balanced() { [[ $1 =~ ^([0-9]+)=([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; }

# The tap backend (VM_NET=tap): a host tap interface with its own subnet.
# QEMU's user networking (the default) offers virtio-net no checksum or
# scatter-gather offload, so a virtio NIC there copies every sendpage; a
# tap with vnet headers gives it SG/csum/TSO, the zero-copy path.
TAP_IF=${TAP_IF:-kfragtap0}
TAP_HOST=10.0.3.1
TAP_GUEST=10.0.3.15
tap_up() {
	[ "$(id -u)" = 0 ] || die "VM_NET=tap needs root (it creates the tap $TAP_IF)" \
		"fix: run as root, or use VM_NET=user"
	[ -c /dev/net/tun ] || die "VM_NET=tap: no /dev/net/tun" "fix: modprobe tun, or use VM_NET=user"
	! ip link show "$TAP_IF" >/dev/null 2>&1 ||
		die "tap $TAP_IF exists: another run uses it (one tap run at a time)" \
			"fix: wait for it, or remove a stale one: ip link del $TAP_IF"
	ip tuntap add dev "$TAP_IF" mode tap vnet_hdr &&
		ip addr add "$TAP_HOST/24" dev "$TAP_IF" &&
		ip link set "$TAP_IF" up ||
		die "could not set up tap $TAP_IF with $TAP_HOST/24 (ip said why, above)"
}
tap_down() { ip link del "$TAP_IF" 2>/dev/null || true; }

# Queue of a variant: the base fixups always, then the product series.
# Prints one patch path per line, in order.
variant_queue() {
	local v=$1 q
	case $v in
	vanilla) q="$PATCHES_DIR/base" ;;
	series) q="$PATCHES_DIR/base $PATCHES_DIR" ;;
	copy) q="$PATCHES_DIR/base $PATCHES_DIR/copy-on-resend" ;;
	*) die "unknown variant '$v'" "known variants: $VARIANTS copy" ;;
	esac
	local d p
	for d in $q; do
		[ -f "$d/series" ] || die "no $d/series" \
			"every patch queue needs a series file (it may be empty)"
		while read -r p; do
			p=${p%%#*}
			p=${p//[[:space:]]/}
			[ -n "$p" ] || continue
			[ -f "$d/$p" ] || die "$d/series names $p, which does not exist"
			echo "$d/$p"
		done < "$d/series"
	done
}
