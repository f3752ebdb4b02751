# shellcheck shell=bash
# Test helpers; sourced by tests/run: the runner (register, skip,
# run_tests), the assertions, and the helpers more than one test file uses.
TESTS=() # NAME:FUNCTION:GROUPS, in the order registered (GROUPS: words)
TEST_GROUPS="quick vm gate"
PASSED=0
FAILED=0
FAILS=()
SKIPS=() # "NAME (REASON)"
TUN_DEV=/dev/net/tun
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# register NAME FUNCTION GROUP...: add a test, run in that order. Its
# groups (one at least; tests/run -g GROUP picks them):
#   quick  no VM boot, no kernel build: seconds each
#   vm     builds a kernel and/or boots QEMU
#   gate   the patch gate, Coccinelle or checkpatch over the series tree
# A test registered without a group, or with another one, fails, naming why.
register() {
	local n=$1 f=${2:-}
	shift
	[ $# = 0 ] || shift
	TESTS+=("$n:$f:$*")
}

# skip REASON: end the test as skipped, because the machine lacks a part it
# needs (not for a failure, and not for a missing /dev/kvm: TCG is normal).
# Call it first, before the test does anything, in the test's own shell
# (not in $(...) or a subshell): a skip that did not end the test, or one
# that left something running, fails it. Counted and named in the summary.
skip() {
	printf '%s\n' "$*" > "$SCRATCH/skip"
	exit 77
}

# need_tun: skip the test on a machine without /dev/net/tun (VM_NET=tap,
# scripts/lib.sh tap_up); the first thing a test with a tap calls.
need_tun() {
	[ -c "$TUN_DEV" ] || skip "no $TUN_DEV: the test needs a tap (fix: modprobe tun)"
}

# base_blob PATH: the v3.1 content of a file of the kernel tree
base_blob() { git --git-dir="$(scripts/import-base)" show "refs/heads/v3.1-base:$1"; }

# mkpatch OUT FILE SUBJECT OLD NEW [FILE OLD NEW]...: a git-am-able
# patch turning the content OLD of FILE (a path in the kernel tree) into
# NEW, and so on for every further FILE.
mkpatch() {
	local out=$1 file=$2 subject=$3 old=$4 new=$5
	shift 5
	{
		printf 'From: Gate Test <gate@kfrag.invalid>\nSubject: [PATCH] %s\n\n' "$subject"
		printf 'A patch made by a self-test of the suite.\n\nSigned-off-by: Gate Test <gate@kfrag.invalid>\n---\n'
		while :; do
			diff -u --label "a/$file" --label "b/$file" "$old" "$new" || true
			[ $# -ge 3 ] || break
			file=$1 old=$2 new=$3
			shift 3
		done
	} > "$out"
}

# clean_change FILE OUT [LINE]: OUT is FILE's v3.1 content with LINE (a
# comment by default) added at its end; FILE's v3.1 content in OUT.orig
clean_change() {
	base_blob "$1" > "$2.orig"
	{ cat "$2.orig"; printf '%s\n' "${3:-/* gate self-test: a clean line */}"; } > "$2"
}

# kernel_of VARIANT: the variant's bzImage as the patches say now: built
# (incrementally) by scripts/build-kernel the first time a run of the suite
# asks, its path (or its failure) remembered for the rest of the run. A
# test never boots a bzImage left on disk by an earlier build: if the
# queue does not apply or the build fails, every test that needs the
# kernel fails. Use it in an assignment (img=$(kernel_of v)), where set -e
# sees its status; never inside another command's arguments.
# KERNEL_<VARIANT>=bzImage boots that image instead (a scratch build, to
# show a test failing without a fix: docs/harness.md); the run says so.
kernel_of() {
	local v=$1 memo=$SCRATCH/kernel-$1${DEBUG:+-debug} img k=KERNEL_${1^^}
	if [ -n "${!k:-}" ]; then
		[ -s "${!k}" ] || { echo "    $k=${!k}: no such bzImage" >&2; return 1; }
		note "$k: booted ${!k}, not the $v queue's build"
		[ -e "$memo.given" ] || { echo "    $k: booting ${!k}, not the $v queue's build" >&2; : > "$memo.given"; }
		echo "${!k}"
		return
	fi
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

# fx NAME ARG...: host/mkfixture's fixture NAME (a capture, or a disk and its manifest)
fx() { make -s host >/dev/null && "$BUILD_DIR/host/mkfixture" "$@"; }
# kvget KEY FILE: the last value of KEY in a KV file (the harness's own kv, not a twin)
kvget() { (. scripts/lib.sh && kv "$@"); }
# want KEY VALUE FILE: KEY is VALUE in the KV file FILE, else say so and fail
want() {
	local got
	got=$(kvget "$1" "$3")
	[ "$got" = "$2" ] || { echo "    $1=$got, expected $2 (in $3)"; sed 's/^/    | /' "$3"; return 1; }
}

# Assertions: each prints why it failed, and makes the test fail.
expect_fail() { # expect_fail "TEXT..." -- CMD...: CMD must fail and say every TEXT
	local texts=() out rc=0 t
	while [ "$1" != -- ]; do texts+=("$1"); shift; done
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc = 0 ]; then
		echo "    expected failure, but it succeeded: $*"
		echo "$out" | sed 's/^/    | /' | tail -5
		return 1
	fi
	for t in "${texts[@]}"; do
		if ! grep -qF -- "$t" <<<"$out"; then
			echo "    error message lacks '$t'; it was:"
			echo "$out" | sed 's/^/    | /' | tail -8
			return 1
		fi
	done
}

# note TEXT: said on the test's PASS/FAIL line (e.g. that it was retried)
note() { echo "$*" >> "$SCRATCH/note"; }

# leftovers: processes of the harness (server, peers, VMs) still running in
# this network namespace; a test must stop what it started, pass or fail.
leftovers() {
	local p me
	me=$(readlink /proc/self/ns/net)
	ps -eo pid=,stat=,comm= | while read -r p st c; do
		case $c in ganesha.nfsd | tcpsink | discard | udpsource | qemu-system-x86*) ;; *) continue ;; esac
		case $st in Z*) continue ;; esac # gone, not yet reaped
		[ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$me" ] || continue
		echo "$p:$c"
	done
}

# registration_problem FUNCTION GROUPS: why a test's register line is
# unusable (nothing if it is not)
registration_problem() {
	local g gs
	read -ra gs <<<"$2"
	[ ${#gs[@]} -gt 0 ] ||
		{ echo "registered without a group: register NAME FUNCTION GROUP..., GROUP one of: $TEST_GROUPS"; return 0; }
	for g in "${gs[@]}"; do
		[[ " $TEST_GROUPS " == *" $g "* ]] ||
			{ echo "registered with an unknown group '$g' (known: $TEST_GROUPS)"; return 0; }
	done
	[ -n "$1" ] && declare -F "$1" >/dev/null || echo "registered with no function '$1'"
}

# in_groups GROUPS WANTED...: one of the words GROUPS is a WANTED group
in_groups() {
	local g w gs
	read -ra gs <<<"$1"
	shift
	for g in "${gs[@]}"; do
		for w; do [ "$g" != "$w" ] || return 0; done
	done
	return 1
}

# test_selected NAME GROUPS PROBLEM: the test is one of run_tests' selection
# (its pats and groups); one with a PROBLEM registering is, whatever the -g
test_selected() {
	local p hit=''
	if [ ${#pats[@]} -gt 0 ]; then
		for p in "${pats[@]}"; do
			# shellcheck disable=SC2053 # a glob pattern
			[[ $1 != $p ]] || hit=1
		done
		[ -n "$hit" ] || return 1
	fi
	[ ${#groups[@]} = 0 ] || [ -n "$3" ] || in_groups "$2" "${groups[@]}"
}

# run_tests [--list] [-g GROUP]... [NAME-or-GLOB...]: the tests of those
# groups (any of them; all without -g) whose names match a NAME-or-GLOB
# (all without one), in the order registered. An argument that selects
# nothing fails. A test registered without a good group is picked by its
# name whatever the -g, and fails. --list prints the selection, a name and
# its groups a line, instead of running it.
run_tests() {
	local list='' groups=() pats=() bad=() t name fn grp p hit any start left status why skipped
	while [ $# -gt 0 ]; do
		case $1 in
		--list) list=1 ;;
		-g | --group)
			if [ $# -lt 2 ]; then
				bad+=("$1 (needs a group: one of $TEST_GROUPS)")
			elif [[ " $TEST_GROUPS " != *" $2 "* ]]; then
				bad+=("$1 $2 (no such group: one of $TEST_GROUPS)")
			else
				groups+=("$2")
			fi
			[ $# -lt 2 ] || shift ;;
		-g?*)
			set -- -g "${1#-g}" "${@:2}"
			continue ;;
		--) shift; pats+=("$@"); break ;;
		-*) bad+=("$1 (no such option: tests/run [--list] [-g GROUP]... [NAME-or-GLOB...])") ;;
		*) pats+=("$1") ;;
		esac
		shift
	done
	for p in "${pats[@]}"; do
		hit='' any=''
		for t in "${TESTS[@]}"; do
			name=${t%%:*} fn=${t#*:} grp=${fn#*:} fn=${fn%%:*}
			# shellcheck disable=SC2053 # a glob pattern
			[[ $name == $p ]] || continue
			any=1
			test_selected "$name" "$grp" "$(registration_problem "$fn" "$grp")" && hit=1
		done
		[ -n "$hit" ] && continue
		if [ -n "$any" ]; then
			bad+=("$p (no test of group $(IFS=,; echo "${groups[*]}") matches it: tests/run --list names them)")
		else
			bad+=("$p (no such test: tests/run --list names them)")
		fi
	done
	if [ -n "$list" ]; then
		for t in "${TESTS[@]}"; do
			name=${t%%:*} fn=${t#*:} grp=${fn#*:} fn=${fn%%:*}
			why=$(registration_problem "$fn" "$grp")
			test_selected "$name" "$grp" "$why" || continue
			if [ -n "$grp" ]; then p=${grp// /,}; else p="(no group)"; fi
			printf '%-44s %s\n' "$name" "$p"
			[ -z "$why" ] || bad+=("$name ($why)")
		done
		for p in "${bad[@]}"; do echo "tests/run: $p" >&2; done
		[ ${#bad[@]} = 0 ]
		return
	fi
	for p in "${bad[@]}"; do
		echo "FAIL $p"
		FAILED=$((FAILED + 1))
		FAILS+=("${p%% (*}")
	done
	for t in "${TESTS[@]}"; do
		name=${t%%:*} fn=${t#*:} grp=${fn#*:} fn=${fn%%:*}
		why=$(registration_problem "$fn" "$grp")
		test_selected "$name" "$grp" "$why" || continue
		echo "== $name"
		if [ -n "$why" ]; then
			FAILED=$((FAILED + 1))
			FAILS+=("$name")
			echo "FAIL $name ($why)"
			continue
		fi
		start=$(date +%s)
		rm -f "$SCRATCH/note" "$SCRATCH/skip"
		# not in a condition: set -e must stay in force inside the test
		( set -e; "$fn" ) 2>&1 | sed -u 's/^/   /'
		status=${PIPESTATUS[0]}
		left=$(leftovers)
		if [ -n "$left" ]; then
			echo "    left running by the test: $left (killed now)"
			for p in $left; do kill -9 "${p%%:*}" 2>/dev/null || true; done
			status=1
		fi
		if [ -e "$SCRATCH/skip" ]; then
			skipped=$(paste -sd ' ' "$SCRATCH/skip")
			if [ "$status" = 77 ] && [ -z "$left" ]; then
				SKIPS+=("$name ($skipped)")
				echo "SKIP $name (# SKIP $skipped)"
				continue
			elif [ -n "$left" ]; then
				echo "    skip ($skipped) after the test had started something: not a skip"
			else
				echo "    skip ($skipped) did not end the test: call it first, in the test's own shell"
			fi
			[ "$status" != 0 ] || status=1
		fi
		t="$(($(date +%s) - start))s"
		[ ! -s "$SCRATCH/note" ] || t="$t; $(paste -sd ';' "$SCRATCH/note")"
		if [ "$status" = 0 ]; then
			PASSED=$((PASSED + 1))
			echo "PASS $name ($t)"
		else
			FAILED=$((FAILED + 1))
			FAILS+=("$name")
			echo "FAIL $name ($t)"
		fi
	done
	[ $FAILED = 0 ] || echo "failed: ${FAILS[*]}"
	if [ ${#SKIPS[@]} -gt 0 ]; then
		p=$(printf '%s, ' "${SKIPS[@]}")
		echo "${#SKIPS[@]} skipped: ${p%, }"
	fi
	echo "$PASSED passed, $FAILED failed"
	[ $FAILED = 0 ]
}
