# Test helpers; sourced by tests/run.
# shellcheck shell=bash
TESTS=()
PASSED=0
FAILED=0
FAILS=()
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# register NAME FUNCTION: add a test, run in that order.
register() { TESTS+=("$1:$2"); }

# base_blob PATH: the v3.1 content of a file of the kernel tree
base_blob() { git --git-dir="$(scripts/import-base)" show "refs/heads/v3.1-base:$1"; }

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

run_tests() {
	local want=("$@") t name fn start w known left status
	if [ "${1:-}" = --list ]; then
		for t in "${TESTS[@]}"; do echo "${t%%:*}"; done
		return 0
	fi
	for w in "${want[@]}"; do
		known=
		for t in "${TESTS[@]}"; do [ "${t%%:*}" != "$w" ] || known=1; done
		[ -n "$known" ] && continue
		echo "FAIL $w (no such test: tests/run --list names them)"
		FAILED=$((FAILED + 1))
		FAILS+=("$w")
	done
	for t in "${TESTS[@]}"; do
		name=${t%%:*} fn=${t#*:}
		if [ ${#want[@]} -gt 0 ] && ! printf '%s\n' "${want[@]}" | grep -qx "$name"; then
			continue
		fi
		start=$(date +%s)
		rm -f "$SCRATCH/note"
		echo "== $name"
		# not in a condition: set -e must stay in force inside the test
		( set -e; "$fn" ) 2>&1 | sed -u 's/^/   /'
		status=${PIPESTATUS[0]}
		left=$(leftovers)
		if [ -n "$left" ]; then
			echo "    left running by the test: $left (killed now)"
			for p in $left; do kill -9 "${p%%:*}" 2>/dev/null || true; done
			status=1
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
	echo "$PASSED passed, $FAILED failed"
	[ $FAILED = 0 ]
}
