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
# mainline's later approach) is built for comparison on request, and
# "faultinj" (the series + patches/fault-injection: test-only knobs that
# force a race the tests cannot otherwise reach) for the tests that name it.
VARIANTS="vanilla series"

die() {
	printf 'error: %s\n' "$1" >&2
	shift
	local l
	for l in "$@"; do printf '  %s\n' "$l" >&2; done
	exit 1
}

log() { printf '>> %s\n' "$*" >&2; }

# in_list WORD ITEM...: WORD is one of the ITEMs. Not `printf ... | grep
# -q`: under pipefail that fails at random when grep exits before printf
# has written everything (SIGPIPE), as check-handedits once did.
in_list() {
	local w=$1 x
	shift
	for x; do [ "$x" != "$w" ] || return 0; done
	return 1
}

# need_disk GIB WHAT: stop before WHAT if the file system of BUILD_DIR has
# less than GIB GiB free (KFRAG_NEED_DISK_GIB overrides GIB; 0 skips the
# check). A disk that fills during a run does not name itself: the first
# program to write fails (a sed, a packet capture, the compiler), and the
# run ends as an unexplained failure of that step.
need_disk() {
	local want=${KFRAG_NEED_DISK_GIB:-$1} avail
	[[ $want =~ ^[0-9]{1,6}$ ]] || die "KFRAG_NEED_DISK_GIB=$want: not a number of GiB" "fix: a whole number up to 999999, or 0 to skip the check"
	[ "$want" -gt 0 ] || return 0
	mkdir -p "$BUILD_DIR" || die "could not create BUILD_DIR=$BUILD_DIR (mkdir said why, above)"
	# POSIX df: the fourth field of the second line is the space available
	# to us, in KiB; a file system that does not say ("-") is an error
	avail=$(df -Pk "$BUILD_DIR" | awk 'NR == 2 && $4 ~ /^[0-9]+$/ { print int($4 / 1048576) }') || avail=
	[[ $avail =~ ^[0-9]+$ ]] || die "could not read the free space of $BUILD_DIR (df -Pk $BUILD_DIR)" \
		"fix: KFRAG_NEED_DISK_GIB=0 skips this check"
	[ "$avail" -ge "$want" ] ||
		die "not enough free disk for $2: about $want GiB needed on the file system of $BUILD_DIR, $avail GiB free" \
			"fix: free space there (old build trees; build/redtest/ keeps every run and its packet capture)," \
			"or point BUILD_DIR at a roomier file system (KFRAG_NEED_DISK_GIB=0 skips this check)"
}

# kv KEY FILE: the last KEY=value of a KEY=value file (the red test's
# guest.kv, wire.kv, disk.kv)
kv() { sed -n "s/^$1=//p" "$2" | tail -n1; }
# The destructors column of a red-test run's row (scripts/redtest computes
# it with dtor_verdict): "N=N", "BAD:...", "absent" or "off".
destructors_of() { col destructors "$1/row.tsv"; }

# dtor_verdict GUESTKV ZEROCOPY: the one verdict on the series' destructor
# accounting (guest/dtortrace.h), printed as the row's destructors column.
#   absent   the kernel has no destructor trace events (vanilla)
#   off      the run did not trace (DTORTRACE=0, benchmarks)
#   N=N      the trace is complete, every line of it was understood, N > 0
#            destructors were set up and each destroyed exactly once, none
#            went below zero or was left live; and the stack took
#            references on the pages (refs > 0) if and only if the run's
#            NIC sends paged data without copying (ZEROCOPY 1), none if it
#            copies (ZEROCOPY 0: no SG/checksum offload)
#   BAD:...  anything else, with the reasons
dtor_verdict() {
	local g=$1 zc=$2 t why=() inits destroys refs u
	t=$(kv dtor.trace "$g")
	case $t in absent | off) echo "$t"; return 0 ;; esac
	inits=$(kv dtor.inits "$g") destroys=$(kv dtor.destroys "$g") refs=$(kv dtor.refs "$g")
	[ "$t" = complete ] || why+=("trace=${t:-missing}")
	u=$(kv dtor.unparsed "$g")
	[ "$u" = 0 ] || why+=("unparsed=${u:-missing}")
	[ "$(kv dtor.bad "$g")" = 0 ] || why+=("bad=$(kv dtor.bad "$g")")
	[ "$(kv dtor.live_at_end "$g")" = 0 ] || why+=("live=$(kv dtor.live_at_end "$g")")
	[[ $inits =~ ^[1-9][0-9]*$ ]] || why+=("inits=${inits:-missing}")
	[ "$destroys" = "$inits" ] || why+=("destroys=${destroys:-missing}")
	case $zc:$refs in
	1:[1-9]*) ;;
	0:0) ;;
	1:*) why+=("refs=${refs:-missing}:zero-copy-NIC-took-none") ;;
	*) why+=("refs=${refs:-missing}:copying-NIC-took-some") ;;
	esac
	if [ ${#why[@]} = 0 ]; then
		echo "$inits=$destroys"
	else
		local IFS=,
		echo "BAD:$inits=$destroys,${why[*]}"
	fi
}

# dtor_ok COLUMN VARIANT: the destructors column is what VARIANT must show:
# "absent" on vanilla and copy, "N=N" with N > 0 on the series.
dtor_ok() {
	case $2 in
	series) [[ $1 =~ ^([1-9][0-9]*)=([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] ;;
	*) [ "$1" = absent ] ;;
	esac
}

# col NAME TSV: the value of column NAME (by its header, the first line) in
# the last line of TSV (a red-test run's row.tsv: scripts/redtest writes
# the header). Fails, printing nothing, if TSV has no such column.
col() {
	awk -F'\t' -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
		c { v = $c } END { if (!c) exit 2; print v }' "$2"
}

# Third-party tools on the NFS mount (scripts/fio-nfs, scripts/cthon-nfs;
# docs/real-clients.md). tool_args PROFILE TRANSPORT: check them and
# NFSVERS (3, 4.0, 4.1; default 3), and set NFSVERS, TOOL_NETEM (the
# profile's link) and TOOL_MOPTS (its mount options, then MOUNTOPTS, and
# UDP's wsize as scripts/redtest has it: larger WRITEs are IP-fragmented
# and copied).
tool_args() {
	local profiles=$TOP/profiles/link.profiles
	NFSVERS=${NFSVERS:-3}
	case $2 in tcp | udp) ;; *) die "transport '$2': use tcp or udp" ;; esac
	case $NFSVERS in 3 | 4.0 | 4.1) ;; *) die "NFSVERS=$NFSVERS: use 3, 4.0 or 4.1" ;; esac
	[ "$NFSVERS" = 3 ] || [ "$2" = tcp ] ||
		die "NFSVERS=$NFSVERS over $2: NFSv4 runs over TCP only" "fix: use tcp, or NFSVERS=3"
	read -r _ TOOL_NETEM TOOL_MOPTS < <(awk -v p="$1" '$1 == p { print; exit }' "$profiles") ||
		die "no profile '$1' in $profiles" \
			"known: $(awk '!/^#/ && NF { printf "%s ", $1 }' "$profiles")"
	[ "$TOOL_MOPTS" != - ] || TOOL_MOPTS=
	[ -z "${MOUNTOPTS:-}" ] || TOOL_MOPTS=${TOOL_MOPTS:+$TOOL_MOPTS,}$MOUNTOPTS
	[ "$2" != udp ] || TOOL_MOPTS=${TOOL_MOPTS:+$TOOL_MOPTS,}wsize=1024,rsize=32768
}

# tool_vm TOOL VARIANT TRANSPORT OUT [kfrag.key=value...]: boot VARIANT's
# kernel (KERNEL=bzImage instead) with the harness's initramfs and TOOL's
# archive (scripts/thirdparty TOOL) after it, and the guest program
# kfrag-TOOL, which mounts the host's NFS server (started here, stopped
# after) over the link tool_args set. OUT/guest.kv, OUT/serial.log and
# OUT/serial.report hold what it said; e1000 (VM_NIC), 2 vCPUs (VM_SMP),
# QEMU's user network. Returns vmrun's status.
tool_vm() {
	local tool=$1 variant=$2 transport=$3 out=$4 tp img rc=0
	shift 4
	export VM_NIC=${VM_NIC:-e1000} VM_SMP=${VM_SMP:-2} VM_NET=user
	# the caller tests this function's status: set -e does not reach in
	make -s -C "$TOP" initramfs host || die "building the guest's programs failed (above)"
	tp=$("$TOP/scripts/thirdparty" "$tool") || exit 1
	img=${KERNEL:-}
	[ -n "$img" ] || img=$("$TOP/scripts/build-kernel" "$variant") || exit 1
	rm -rf "$out"
	mkdir -p "$out" "$BUILD_DIR/results"
	# the harness's archive, then the tool's: the kernel unpacks both
	cat "$BUILD_DIR/initramfs.cpio.gz" "$tp" > "$out/initramfs.cpio.gz" || die "cannot write $out"
	NFS_DIR=$out/nfs NFS_DRC=on "$TOP/scripts/nfs-server" start > "$out/nfs.env" || exit 1
	# shellcheck source=/dev/null
	. "$out/nfs.env"
	log "$tool: $variant, NFSv$NFSVERS, netem $TOOL_NETEM, $transport, NIC $VM_NIC, $VM_SMP vCPUs"
	INITRAMFS=$out/initramfs.cpio.gz VM_LOG=$out/serial.log VM_TIMEOUT=${VM_TIMEOUT:-300} \
		"$TOP/scripts/vmrun" "$img" "$tool" kfrag.server=10.0.2.2 kfrag.export="$NFS_EXPORT" \
		kfrag.mntport="$MNT_PORT" kfrag.nfsport="$NFS_PORT" kfrag.proto="$transport" \
		kfrag.netem="$TOOL_NETEM" kfrag.nfsvers="$NFSVERS" kfrag.pseudo="$NFS_PSEUDO" \
		${TOOL_MOPTS:+kfrag.mountopts="$TOOL_MOPTS"} "$@" > "$out/guest.kv" || rc=$?
	NFS_DIR=$out/nfs NFS_KEEP=0 "$TOP/scripts/nfs-server" stop || true
	return $rc
}

# fio's own verdict (scripts/fio-nfs): fio's verify.c prints each failed
# block check as a line of its own ("verify: bad header offset|magic|
# length|numberio|crc ...", "crc32c: verify failed at ...", "verify type
# mismatch"); with continue_on_error=verify its exit status stays 0.
# fio_errors REPORT PHASE: how many such lines the guest's report holds
# for PHASE (write or verify); its lines are "KFRAG-FIO: JOB PHASE LINE".
FIO_ERRPAT='(verify: bad |: verify failed|verify type mismatch)'
# (fio_errors REPORT PHASE). Two threads' messages can share a line (fio
# writes each in two pieces to unbuffered stderr), so fio's own count,
# "errors : total=N" of each job (continue_on_error), is added up too,
# and the larger of the two is the phase's count.
fio_errors() {
	local lines n t
	lines=$(grep -E "^KFRAG-FIO: [^ ]+ $2 " "$1" || true)
	n=$(grep -cE "$FIO_ERRPAT" <<<"$lines" || true)
	t=$(sed -nE 's/.* errors +: total=([0-9]+),.*/\1/p' <<<"$lines" | awk '{ s += $1 } END { print s + 0 }')
	echo $((n > t ? n : t))
}

# judge VARIANT RUNDIR [DEMAND...]: the one verdict on a red-test run
# (scripts/redtest's RUNDIR): why it fails, one reason a line; nothing if
# it passes. The row's columns are read by their header names.
# The common rule, for every caller:
#   - the row is there, and writes, poisoned, corrupted, hung, rpc_retrans,
#     tcp_retrans and vcpus are numbers (a missing count is a reason, never
#     a zero);
#   - the guest's kmemleak report is clean but for vanilla v3.1's known
#     leaks (kmemleak_ok);
#   - every variant but vanilla, the control: no poisoned transmission, no
#     corrupted block, no hung write, and its destructor column is what
#     the variant must show (dtor_ok: N=N on the series).
# DEMANDs, what a caller asks beyond it (judge_as keeps each caller's):
#   writes=N   at least N writes             } every variant but vanilla:
#   retrans=N  at least N retransmissions,   } the run exposed it
#              TCP segments and RPC calls    }
#   volumes    no NFS volume was left after a kill or umount -f (but
#              NFSv4.1 after a server restart: v3.1 keeps that one)
#   untraced   the destructor column may be "off" (DTORTRACE=0)
#   vcpus=N    the guest had N vCPUs online
#   bug        vanilla poisoned the wire: the link reproduced the bug
#   tap, tap=reuse   the packet tap's rules (tap_judge)
#   happened   the faults the run asked for (its faults column) happened: a
#              writer killed mid-write (kill@), bytes spliced (relay)
#   halfsent   the client ended a connection mid-record (the capture's
#              tcp_cut_fin + tcp_cut_rst > 0): with an RST, never a FIN,
#              but on vanilla, which must show the FIN
#   stall      vanilla hung a write (what the row's fault costs v3.1)
# A word may hold several demands separated by commas (bug,happened).
judge() {
	local v=$1 r=$2 row=$2/row.tsv k n d untraced="" dt
	shift 2
	# shellcheck disable=SC2046 # split on commas
	set -- $(printf '%s\n' "$@" | tr ',' ' ')
	[ -s "$row" ] || { echo "no row in $r (scripts/redtest did not finish the run)"; return 0; }
	declare -A c
	for k in writes poisoned corrupted hung rpc_retrans tcp_retrans vcpus; do
		n=$(col "$k" "$row") || { echo "$row has no $k column"; return 0; }
		[[ $n =~ ^[0-9]+$ ]] || { echo "$k is '$n' in $row, not a count"; return 0; }
		c[$k]=$n
	done
	dt=$(col destructors "$row") || dt=missing
	for d; do [ "$d" != untraced ] || untraced=1; done
	kmemleak_ok "$r/guest.kv" ||
		echo "kmemleak: $(kv kmemleak "$r/guest.kv" | grep . || echo "no report (DEBUG=1)") $(kmemleak_unknown "$r/guest.kv" | head -n1)"
	if [ "$v" != vanilla ]; then
		[ "${c[poisoned]}" = 0 ] || echo "${c[poisoned]} poisoned transmission(s) on the wire"
		[ "${c[corrupted]}" = 0 ] || echo "${c[corrupted]} corrupted block(s) on the disk"
		[ "${c[hung]}" = 0 ] || echo "${c[hung]} hung write(s)"
		[ -n "$untraced" ] && [ "$dt" = off ] || dtor_ok "$dt" "${v/faultinj/series}" || echo "destructors: $dt"
	fi
	for d; do
		case $v:$d in
		vanilla:writes=* | vanilla:retrans=* | vanilla:volumes | *:untraced) ;;
		*:writes=*)
			[ "${c[writes]}" -ge "${d#*=}" ] || echo "only ${c[writes]} writes (at least ${d#*=}): too few to mean anything" ;;
		*:retrans=*)
			[ $((c[tcp_retrans] + c[rpc_retrans])) -ge "${d#*=}" ] ||
				echo "${c[tcp_retrans]} TCP and ${c[rpc_retrans]} RPC retransmissions (at least ${d#*=} in all): the link did not test the run" ;;
		*:volumes)
			# but over NFSv4.1 after a server restart: v3.1 keeps that volume
			# listed after umount -f and a kill, vanilla as the series (still
			# there 150 s later in both, combo-4-nfs41 with VOLUMES_WAIT=150,
			# docs/results/holders-2026-12-07.md); there the destructors'
			# balance (live=0) is what is judged
			n=$(kv nfs.volumes_left "$r/guest.kv")
			case $(col nfs "$row" || echo missing),$(col faults "$row" || true) in
			4.1,*restart@*) ;;
			*) [ -z "$n" ] || [ "$n" = 0 ] || echo "$n NFS volume(s) left after the kill or umount -f" ;;
			esac ;;
		*:vcpus=*)
			[ "${c[vcpus]}" = "${d#*=}" ] || echo "the guest had ${c[vcpus]} vCPU(s) online, not ${d#*=}" ;;
		vanilla:bug)
			[ "${c[poisoned]}" -gt 0 ] || echo "vanilla showed no poisoned transmission: the link did not reproduce the bug" ;;
		*:bug) ;;
		*:halfsent)
			# the row leaves a request half sent (an umount -f while the
			# send waits for room): the client must end that connection,
			# the series with an RST, v3.1 with a FIN
			n= k=
			[ ! -s "$r/wire.kv" ] || n=$(kv tcp_cut_fin "$r/wire.kv") k=$(kv tcp_cut_rst "$r/wire.kv")
			if [[ ! $n =~ ^[0-9]+$ || ! $k =~ ^[0-9]+$ ]]; then
				echo "no tcp_cut_fin/tcp_cut_rst count in $r/wire.kv"
			elif [ $((n + k)) = 0 ]; then
				echo "no connection ended mid-record (tcp_cut_fin=0, tcp_cut_rst=0, tcp_end_unknown=$(kv tcp_end_unknown "$r/wire.kv")): nothing was left half sent"
			elif [ "$v" = vanilla ]; then
				[ "$n" -gt 0 ] || echo "vanilla ended no connection mid-record with a FIN (tcp_cut_fin=0)"
			else
				[ "$n" = 0 ] || echo "$n connection(s) ended mid-record with a FIN: the client lingers until the server closes"
			fi ;;
		vanilla:stall)
			[ "${c[hung]}" -gt 0 ] || echo "vanilla hung no write: the row's fault cost it nothing to show" ;;
		*:stall) ;;
		*:tap) tap_judge "$v" "$r/guest.kv" ;;
		*:tap=reuse) tap_judge "$v" "$r/guest.kv" reuse ;;
		*:happened)
			k=$(col faults "$row")
			case " $k " in *" kill@"*)
				n=$(kv killed_mid_write "$r/guest.kv")
				[[ $n =~ ^[1-9][0-9]*$ ]] || echo "no writer was killed mid-write (killed_mid_write=${n:-missing}): the kill did not happen" ;;
			esac
			case " $k " in *" relay "*)
				n=$(kv relay.spliced "$r/guest.kv")
				[[ $n =~ ^[1-9][0-9]*$ ]] || echo "the relay spliced nothing (relay.spliced=${n:-missing})" ;;
			esac ;;
		*) echo "judge: unknown demand '$d'" ;;
		esac
	done
	return 0
}

# judge_as CALLER VARIANT RUNDIR [DEMAND...]: judge, with what CALLER
# demands (this table: one place) and the run's own DEMANDs.
JUDGE_CALLERS="redtest demo faults acceptance soak bench tests"
judge_as() {
	local d
	case $1 in
	redtest) d= ;;                                # the command people run by hand: the common rule
	demo) d="writes=101 retrans=1 bug" ;;         # both kernels exposed; vanilla shows the bug
	faults) d=${VM_SMP:-1} d="vcpus=${d%%,*} volumes" ;; # VM_SMP's count (before a ",sockets=..."); + tap or tap=reuse for a scenario with a tap
	acceptance) d= ;;                             # + vcpus=N of the run; writes are totalled
	soak) d="writes=101" ;;
	bench) d="untraced" ;;                        # DTORTRACE=0: the benchmark does not pay for tracing
	tests) d="writes=101 retrans=101" ;;          # tests/: the series clean under load
	*) echo "judge_as: unknown caller '$1' (known: $JUDGE_CALLERS)"; return 0 ;;
	esac
	shift
	# shellcheck disable=SC2086 # d is words
	judge "$@" $d
}

# tap_judge VARIANT GUESTKV: why a run with a packet tap (scripts/redtest
# TAP=AT:SECS:MODE, guest/taphold.h) fails what VARIANT must show there,
# one reason a line; nothing if it passes. Every variant: the tap read
# frames of the NFS traffic, opened on time (the windows are counted from
# AT). Vanilla must show that the tap was handed the writers' own pages:
# what it read late holds a reused buffer (poisoned frames, units that
# are not the WRITE's, torn stamps). Every other variant must show none
# of that, WRITE data the tap could judge (units_ok > 0), and that the tap
# did not hold the writers, not even briefly:
#  - the writes that returned while it was open are at least 90 % of
#    those in the window of the same length before it or after it,
#    whichever is smaller (under QEMU TCG on a shared host the rate drifts
#    by 10-50 % over a run; a tap that holds the writers leaves a hole
#    between two normal windows);
#  - the slowest write begun while it was open took at most twice the
#    slowest begun before, + 100 ms.
# Vanilla is not held to those two: its own tap costs it 0-18 % of its
# writes in these windows (it clones every frame for the tap), and it is
# the control of the reuse, not of the rate. With a third word, reuse,
# only the reuse rules apply (a lossy link or a fault in the window: the
# writers' rate and latency are the link's then). A count that is missing
# or not a number is a reason too.
tap_judge() {
	local v=$1 g=$2 only=${3:-} k n
	declare -A c
	for k in writes_before writes_during writes_after nfs_frames poisoned units_ok units_wrong stamps_bad open_ms at \
		lat_max_before_ms lat_max_during_ms; do
		n=$(kv "tap.$k" "$g")
		if [[ $n =~ ^[0-9]+$ ]]; then c[$k]=$n; else echo "no tap.$k count in $g"; return 0; fi
	done
	[ -z "$(kv tap.error "$g")" ] || echo "the tap failed: $(kv tap.error "$g")"
	# the windows are counted from AT: the socket must have opened then
	[ $((c[open_ms] - c[at] * 1000)) -le 500 ] ||
		echo "the tap opened at ${c[open_ms]} ms, more than 0.5 s after its window began"
	[ "${c[nfs_frames]}" -gt 0 ] || echo "the tap read no frame of the NFS traffic"
	[ "${c[writes_before]}" -gt 0 ] || echo "no write returned before the tap was opened"
	local reused=$((c[poisoned] + c[units_wrong] + c[stamps_bad]))
	if [ "$v" = vanilla ]; then
		[ $reused -gt 0 ] || echo "vanilla's tap showed no reused buffer: it read nothing late enough to tell"
		return 0
	fi
	[ $reused = 0 ] || echo "the tap read a reused buffer: ${c[poisoned]} poisoned frames, ${c[units_wrong]} wrong units, ${c[stamps_bad]} torn stamps"
	[ "${c[units_ok]}" -gt 0 ] || echo "the tap judged no WRITE data (units_ok=0)"
	[ "$only" != reuse ] || return 0
	local ref=$((c[writes_before] < c[writes_after] ? c[writes_before] : c[writes_after]))
	[ $((c[writes_during] * 10)) -ge $((ref * 9)) ] ||
		echo "${c[writes_during]} writes returned while the tap was open, < 90 % of the ${c[writes_before]} before or the ${c[writes_after]} after"
	[ "${c[lat_max_during_ms]}" -le $((2 * c[lat_max_before_ms] + 100)) ] ||
		echo "a write took ${c[lat_max_during_ms]} ms while the tap was open (slowest before: ${c[lat_max_before_ms]} ms)"
	return 0
}

# wire_covers GUESTKV WIREKV: why the capture cannot vouch for the run
# (nothing if it can): the on-wire oracle must have parsed at least the
# WRITE data the guest says it wrote (each WRITE's first transmission
# counts once: write_bytes_first; the guest counts the write()s that
# returned: bytes), else a capture cut short or WRITEs the oracle could not
# parse would hide poisoned ones; and it must have judged every
# transmission it saw (unjudged = 0: e.g. a late copy of a connection
# replaced four times over).
wire_covers() {
	local wb gb
	wb=$(kv write_bytes_first "$2") gb=$(kv bytes "$1")
	[[ $wb =~ ^[0-9]+$ ]] || { echo "the on-wire oracle gave no write_bytes_first count"; return 0; }
	[[ $gb =~ ^[0-9]+$ ]] || { echo "the guest gave no bytes count"; return 0; }
	[ "$wb" -ge "$gb" ] ||
		echo "the capture holds $wb bytes of WRITE data, fewer than the $gb the guest wrote: the on-wire oracle did not see the whole run"
	# transmissions the oracle could not compare with their first one
	case $(kv unjudged "$2") in
	0) ;;
	"") echo "the on-wire oracle gave no unjudged count" ;;
	*) echo "the on-wire oracle could not judge $(kv unjudged "$2") transmission(s) (detail= lines in $2)" ;;
	esac
	return 0
}

# variant_kernel VARIANT: the bzImage of VARIANT: $KERNEL_<VARIANT> if set
# (e.g. KERNEL_SERIES, so a caller that built it need not build again;
# a path that is no file is an error), else built by scripts/build-kernel.
# Fails if the build fails.
variant_kernel() {
	local k=KERNEL_${1^^}
	if [ -z "${!k:-}" ]; then
		"$TOP/scripts/build-kernel" "$1"
	elif [ -f "${!k}" ]; then
		echo "${!k}"
	else
		die "$k=${!k}: no such kernel" "fix: unset $k (then it is built)"
	fi
}

# kmemleak_unknown GUESTKV: the leaks of the guest's kmemleak report
# (kmemleak=N and kmemleak.<i>=size, comm "...": backtrace, guest/redtest.c)
# that are not known leaks of vanilla v3.1, one a line. A known leak
# (configs/known-leaks, or KNOWN_LEAKS) is forgiven when the run's mount.opts contain its
# condition and its frames begin the leak's backtrace, frame for frame. A
# report that lists fewer leaks than it counts, or whose count is no
# number (kmemleak=unavailable), says so.
kmemleak_unknown() {
	local k listed
	k=$(kv kmemleak "$1")
	[ -n "$k" ] && [ "$k" != 0 ] || return 0
	[[ $k =~ ^[1-9][0-9]*$ ]] || { echo "kmemleak count '$k' is not a number"; return 0; }
	listed=$(grep -c '^kmemleak\.[0-9]*=' "$1" || true)
	[ "$listed" = "$k" ] || echo "$k leaks, $listed of them listed"
	sed -n 's/^kmemleak\.[0-9]*=//p' "$1" | awk -v known="${KNOWN_LEAKS:-$TOP/configs/known-leaks}" \
		-v opts="$(kv mount.opts "$1")" '
		BEGIN {
			while ((getline l < known) > 0) {
				if (l ~ /^[[:space:]]*(#|$)/) continue
				sub(/[[:space:]]+#.*/, "", l)
				if (split(l, part, /[[:space:]]*\|[[:space:]]*/) != 2 || part[2] == "") {
					print "configs/known-leaks: not \"CONDITION | FRAMES # why\": " l
					continue
				}
				if (part[1] == "-" || index(opts, part[1])) sig[++n] = part[2]
			}
		}
		{
			i = index($0, "\": "); bt = i ? substr($0, i + 3) : $0
			for (j = 1; j <= n; j++)
				if (bt == sig[j] || substr(bt, 1, length(sig[j]) + 2) == sig[j] " <") next
			print
		}'
}

# kmemleak_ok GUESTKV: the guest's kmemleak report is clean but for the
# known leaks of vanilla v3.1 (kmemleak_unknown). With DEBUG=1
# (configs/debug.config has kmemleak) the count must be there: a missing
# count means kmemleak did not run, which is no clean report.
kmemleak_ok() {
	local k
	k=$(kv kmemleak "$1")
	if [ -z "$k" ]; then [ "${DEBUG:-0}" = 0 ]; else [ -z "$(kmemleak_unknown "$1")" ]; fi
}

# zerocopy_expected: 1 if the run's NIC (VM_NIC on VM_NET) sends the
# pages it is given (scatter-gather and checksum offload), 0 if the stack
# copies them. e1000 (every model), e1000e and vmxnet3 have both;
# virtio-net has them only with a tap's vnet headers (QEMU's user
# networking offers no offloads) and not with csum=off; 8139cp (QEMU's
# rtl8139) only once the guest turned them on (VM_OFFLOAD=on); pcnet32,
# e100 (i82559er), ne2k-pci and tulip never. ZEROCOPY=0|1 overrides.
zerocopy_expected() {
	if [ -n "${ZEROCOPY:-}" ]; then echo "$ZEROCOPY"; return; fi
	case ${VM_NIC:-e1000},${VM_NET:-user},${VM_OFFLOAD:-} in
	*csum=off*) echo 0 ;;
	e1000*) echo 1 ;;
	vmxnet3*) echo 1 ;;
	rtl8139*,on) echo 1 ;;
	virtio-net*,tap,*) echo 1 ;;
	*) echo 0 ;;
	esac
}

# netns_inside: this process runs in a network namespace of the harness's
# own. Judged from the namespace itself, not only from the environment: it
# has no interface but loopback and the harness's tap, so no way out.
netns_inside() {
	[ -n "${KFRAG_NETNS:-}" ] || return 1
	! ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' |
		grep -qvxE "lo|$TAP_IF"
}

# netns_enter CMD [ARG...]: run CMD in a network namespace (and mount and
# PID namespace) the harness makes for it, and remove the namespace after.
# Nothing of a run - rpcbind, the NFS server, QEMU and its user
# networking, a tap - is reachable from outside it, and its packets go no
# further than its own loopback and tap. A private /run keeps rpcbind's
# socket and lock files apart from the machine's. Everything the run
# starts lives in its PID namespace and dies with it, even when this
# wrapper is SIGKILLed (the parent-death signal reaches the namespace's
# init); a namespace left by such a wrapper is removed by the next run.
# Does nothing when already inside one, so scripts that call each other
# share their caller's.
netns_enter() {
	if [ -n "${KFRAG_NETNS:-}" ]; then
		netns_inside && return 0
		die "KFRAG_NETNS=$KFRAG_NETNS is set, but this is not a network namespace of the harness (it has interfaces besides lo)" \
			"fix: unset KFRAG_NETNS"
	fi
	[ "$(id -u)" = 0 ] || die "the harness needs root: it runs rpcbind, the NFS server and QEMU in a network namespace of its own" \
		"fix: run as root (e.g. sudo make test)"
	local c
	for c in ip:iproute2 setpriv:util-linux unshare:util-linux; do
		command -v "${c%%:*}" >/dev/null || die "${c%%:*} not found (the harness makes its namespaces with it)" \
			"fix: apt-get install -y ${c#*:}"
	done
	local ns=kfrag-$$ rc=0 old
	# namespaces of runs whose wrapper died (SIGKILL): nothing of them is
	# left running (their PID namespace went), only the name
	for old in $(ip netns list 2>/dev/null | grep -o '^kfrag-[0-9]*' || true); do
		kill -0 "${old#kfrag-}" 2>/dev/null || netns_remove "$old"
	done
	# the namespace has no way out: fetch the base tree first if it is
	# not in the cache (kernel.org); a failure is reported where it is used
	"$TOP/scripts/import-base" >/dev/null 2>&1 || true
	# and the third-party programs' sources (scripts/thirdparty), likewise
	"$TOP/scripts/thirdparty" --fetch >/dev/null 2>&1 || true
	ip netns add "$ns" 2>/dev/null || die "could not create the network namespace $ns (ip netns add)" \
		"fix: run as root on a kernel with network namespaces; a stale one goes with: ip netns del $ns"
	trap 'netns_remove '"$ns" EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	ip -n "$ns" link set lo up
	# an address besides 127.0.0.1: getaddrinfo(AI_ADDRCONFIG), which
	# ganesha uses for its Bind_Addr, finds no IPv4 in a namespace without
	# one (glibc counts every IPv4 address but 127.0.0.1). On lo, from
	# TEST-NET-1 (RFC 5737): nothing routes to it, nothing listens on it.
	ip -n "$ns" addr add 192.0.2.1/32 dev lo ||
		die "could not add 192.0.2.1 to lo in the network namespace $ns"
	# The machine's namespace stays reachable for the isolation test only,
	# as an open descriptor (the run's /proc shows its own PIDs).
	local outer
	exec {outer}</proc/self/ns/net
	# in the background: bash runs a trap (TERM from a timeout, ^C) only
	# between commands, and `wait` is one it can leave
	KFRAG_NETNS=$ns KFRAG_OUTER_NETNS=/proc/self/fd/$outer ip netns exec "$ns" \
		setpriv --pdeathsig KILL unshare --pid --fork --kill-child --mount-proc \
		sh -c 'mount -t tmpfs -o mode=0755 kfrag-run /run && mkdir -p /run/lock && exec "$@"' kfrag "$@" &
	wait $! || rc=$?
	exit $rc
}
netns_remove() {
	local p
	for p in $(ip netns pids "$1" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
	ip netns del "$1" 2>/dev/null || true
}

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
		ip link set "$TAP_IF" mtu "${VM_MTU:-1500}" up ||
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
	faultinj) q="$PATCHES_DIR/base $PATCHES_DIR $PATCHES_DIR/fault-injection" ;;
	*) die "unknown variant '$v'" "known variants: $VARIANTS copy faultinj" ;;
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

# queue_id VARIANT: what VARIANT's kernel is built from, for a benchmark's
# header: the first 12 hex digits of the SHA-1 of its patch queue's files
# (base queue included), or "given" when KERNEL_<VARIANT> names a bzImage.
queue_id() {
	local k=KERNEL_${1^^} p q
	[ -z "${!k:-}" ] || { echo given; return; }
	q=$(variant_queue "$1") || exit 1
	while read -r p; do cat "$p"; done <<< "$q" | sha1sum | cut -c1-12
}
# kernels_line VARIANT...: "# kernels (...): vanilla ID, series ID" (queue_id);
# scripts/bench compares it with the queues of the day (a stale table says so)
kernels_line() {
	local v s=
	for v; do s+="${s:+, }$v $(queue_id "$v")" || exit 1; done
	echo "# kernels (patch queues' SHA-1): $s"
}

# table_stale TABLE: what is wrong with the kernels TABLE measured (its "# kernels"
# line) against those patches/ gives today; nothing when they are the same
# (scripts/bench puts it above the table and under the goals)
table_stale() {
	local line v id now out= IFS=$' \t\n'
	line=$(sed -n 's/^# kernels (patch queues. SHA-1): //p' "$1")
	if [ -z "$line" ]; then
		echo "kernels not recorded (a table made before the benchmarks recorded them): which series it measured is not known"
		return
	fi
	while read -r v id; do
		[ "$id" != given ] || { out+="${out:+; }$v was a given bzImage (KERNEL_${v^^})"; continue; }
		now=$(unset "KERNEL_${v^^}"; queue_id "$v")
		[ "$id" = "$now" ] || out+="${out:+; }$v $id (patches/ gives $now today)"
	done < <(tr ',' '\n' <<< "$line")
	[ -z "$out" ] || echo "measured with other kernels than patches/ gives today: $out"
}

# ======================================================================
# Kernel builds and the allmodconfig object tree (scripts/gate,
# check-objects, build-kernel, check-cross). One compiler/ccache/jobs
# setup for every kernel build, and one x86_64 allmodconfig object tree
# for every object check: the gate's.
# ======================================================================

# kmake_env: the compiler and parallelism of every kernel build. Sets
# KCCACHE ("ccache " when installed, else empty), KCC ("${KCCACHE}gcc")
# and KJOBS ($JOBS, default cores + 1), and exports ccache's settings:
# with CCACHE_BASEDIR=$BUILD_DIR, objects at the same place relative to
# their sources share one cache across variants, clones and trees.
kmake_env() {
	export CCACHE_BASEDIR=$BUILD_DIR CCACHE_NOHASHDIR=1
	KCCACHE=
	if command -v ccache >/dev/null; then KCCACHE="ccache "; fi
	KCC="${KCCACHE}gcc"
	KJOBS=${JOBS:-$(($(nproc) + 1))}
}

# The commit a work tree's queue ends with: prepare-tree records it after
# applying the queue, export-series after writing the branch to patches/;
# commits of the branch past it are in no patch file.
# mark_exported SRC BRANCH: record BRANCH's tip as exported
mark_exported() { git -C "$1" rev-parse "refs/heads/$2" > "$1/.git/kfrag-head"; }
# unexported_commits SRC BRANCH: succeeds, printing up to five of them
# ("sha subject" a line), when BRANCH holds commits past the recorded one;
# fails when it does not, or when nothing was recorded
unexported_commits() {
	local h=$1/.git/kfrag-head
	[ -f "$h" ] && [ "$(git -C "$1" rev-parse -q --verify "refs/heads/$2")" != "$(cat "$h")" ] || return 1
	git -C "$1" log --oneline "$(cat "$h")..refs/heads/$2" 2>/dev/null | head -n 5 || true
}

# kobj_series_tree: the object checks' source tree: the series of
# $PATCHES_DIR applied in its own work tree, $GATE_TREE (default
# $BUILD_DIR/gate) /series/src, so that build/series/src is never
# disturbed. Sets KSRC, KTREE and KOBJ ($KTREE/obj-allmod; with ARCH=X,
# $KTREE/obj-X-allmod), holds $KTREE/.lock until the script exits (one
# check at a time per tree), and leaves the tree on its branch.
kobj_series_tree() {
	KTREE=${GATE_TREE:-$BUILD_DIR/gate}
	mkdir -p "$KTREE"
	exec {KTREE_LOCK}>"$KTREE/.lock"
	if ! flock -n "$KTREE_LOCK"; then
		log "waiting for the other check using $KTREE"
		flock "$KTREE_LOCK"
	fi
	KSRC=$(BUILD_DIR=$KTREE "$TOP/scripts/prepare-tree" series)
	git -C "$KSRC" checkout -q series # an interrupted run may have left a detached HEAD
	KARCH=${ARCH:-}
	KOBJ=$KTREE/obj-allmod
	[ -z "$KARCH" ] || KOBJ=$KTREE/obj-$KARCH-allmod
}

# kobj_make ARGS...: make in $KSRC with O=$KOBJ (ARCH=$KARCH if set) and
# kmake_env's compiler, for the tree and for the host tools.
kobj_make() {
	make -C "$KSRC" O="$KOBJ" ${KARCH:+ARCH="$KARCH"} CC="$KCC" HOSTCC="$KCC" "$@"
}

# kobj_allmodconfig: $KOBJ configured (allmodconfig, once) and prepared
# (make prepare scripts, incremental), logs in $KOBJ/{config,prepare}.log.
kobj_allmodconfig() {
	if [ ! -f "$KOBJ/.config" ]; then
		log "${KARCH:-x86_64} allmodconfig in $KOBJ"
		mkdir -p "$KOBJ"
		kobj_make -s allmodconfig > "$KOBJ/config.log" 2>&1 ||
			die "make allmodconfig failed in $KOBJ" "log: $KOBJ/config.log"
	fi
	log "preparing $KOBJ"
	kobj_make -j"$KJOBS" prepare scripts > "$KOBJ/prepare.log" 2>&1 ||
		die "make prepare scripts failed in $KOBJ" "$(grep -E 'error|\*\*\*' "$KOBJ/prepare.log" | head -3)" \
			"log: $KOBJ/prepare.log"
}

# kobj_config_of SRC DIR OBJ: the Kconfig symbol that builds DIR/OBJ: from
# DIR's Makefile, through composite objects (foo-objs/foo-y := OBJ), else
# from the parent directory's Makefile line for DIR/. Empty if none (obj-y).
kobj_config_of() {
	local src=$1 dir=$2 obj=$3 line comp sym depth=0
	while [ $depth -lt 4 ]; do
		line=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$src/$dir/Makefile" 2>/dev/null |
			grep -E "(^|[[:space:]=])$obj([[:space:]]|$)" | head -1 || true)
		sym=$(grep -o 'CONFIG_[A-Za-z0-9_]*' <<<"$line" | head -1 || true)
		if [ -n "$sym" ]; then
			echo "$sym"
			return 0
		fi
		comp=$(sed -nE 's/^[[:space:]]*([A-Za-z0-9_-]+)-(objs|y)[[:space:]]*[:+]?=.*/\1/p' <<<"$line")
		if [ -n "$comp" ] && [ "$comp.o" != "$obj" ]; then
			obj=$comp.o
		else
			[ "$dir" != . ] || return 0
			obj=$(basename "$dir")/ dir=$(dirname "$dir")
		fi
		depth=$((depth + 1))
	done
}

# kobj_not_on_x86 FILE.c: whether $KOBJ's allmodconfig leaves FILE out
# (another architecture's file, or its Kconfig symbol is off): prints why
# and returns 0; returns 1 when the configuration builds it.
kobj_not_on_x86() {
	local c=$1 arch= sym
	case $c in arch/x86/*) ;; arch/*) arch=${c#arch/} arch=${arch%%/*} ;; esac
	if [ -n "$arch" ]; then
		echo "arch/$arch"
		return 0
	fi
	sym=$(kobj_config_of "$KSRC" "$(dirname "$c")" "$(basename "${c%.c}").o")
	if [ -n "$sym" ] && ! grep -qE "^$sym=" "$KOBJ/.config"; then
		echo "$sym off in this allmodconfig"
		return 0
	fi
	return 1
}

# tick_pool TSV WARNFILE: bench-stream's tick price, pooled: per NIC and
# lock-step part (rx, pp) the median of every VM's price (tick_insns as
# the runs wrote it), all variants, so that a variant whose ticks cost
# more would not have its own dearer ticks taken out. Rewrites tick_insns
# to the pooled price and net_insns_per_byte to the count less the case's
# ticks at it; rows without a price ("-") stay. A part whose variants'
# own medians differ by more than 1 % gets a line in WARNFILE (for the
# table's head).
tick_pool() {
	: > "$2"
	awk -F'\t' -v OFS='\t' -v warn="$2" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# part CASE: its NIC and lock-step part ("virtio pp"), or ""
function part(c,   p) {
	p = c ~ /^virtio-/ ? "virtio " : "e1000 "; sub(/^virtio-/, "", c)
	return c ~ /^host\.pp/ ? p "pp" : c ~ /^host\.rx/ ? p "rx" : ""
}
FNR == 1 { pass++ }
pass == 1 && FNR > 1 && $11 != "-" && !(($1, $2, part($3)) in vm) {
	vm[$1, $2, part($3)] = 1; k = part($3)
	all[k, ++na[k]] = $11; own[k, $2, ++no[k, $2]] = $11; vars[k, $2] = 1; parts[k] = 1
}
pass == 2 && FNR == 1 {
	for (k in parts) {
		for (j = 1; j <= na[k]; j++) a[j] = all[k, j]
		price[k] = int(median(a, na[k]) + 0.5)
		lo = 1e18; hi = 0; line = ""
		nv = 0
		for (kv in vars) { split(kv, q, SUBSEP); if (q[1] == k) V[++nv] = q[2] }
		for (i = 2; i <= nv; i++) for (j = i; j > 1 && V[j-1] > V[j]; j--) { t = V[j]; V[j] = V[j-1]; V[j-1] = t }
		for (i = 1; i <= nv; i++) {
			for (j = 1; j <= no[k, V[i]]; j++) b[j] = own[k, V[i], j]
			m = median(b, no[k, V[i]]); line = line sprintf(" %s %d", V[i], m + 0.5)
			if (m < lo) lo = m; if (m > hi) hi = m
		}
		if (hi > 1.01 * lo) printf "# warning: %s: a tick costs more than 1 %% more in one variant than another (median instructions per tick:%s); the figures take every variant\047s ticks out at the pooled price, %d\n", k, line, price[k] > warn
	}
}
pass == 2 && FNR > 1 && $11 != "-" {
	$11 = price[part($3)]; $12 = sprintf("%.4f", ($7 - $10 * $11) / $6)
}
pass == 2' "$1" "$1" > "$1.new" && mv "$1.new" "$1"
}
