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

run_tests() {
	local want=("$@") t name fn start
	if [ "${1:-}" = --list ]; then
		for t in "${TESTS[@]}"; do echo "${t%%:*}"; done
		return 0
	fi
	for t in "${TESTS[@]}"; do
		name=${t%%:*} fn=${t#*:}
		if [ ${#want[@]} -gt 0 ] && ! printf '%s\n' "${want[@]}" | grep -qx "$name"; then
			continue
		fi
		start=$(date +%s)
		echo "== $name"
		# not in a condition: set -e must stay in force inside the test
		( set -e; "$fn" ) 2>&1 | sed -u 's/^/   /'
		if [ "${PIPESTATUS[0]}" = 0 ]; then
			PASSED=$((PASSED + 1))
			echo "PASS $name ($(($(date +%s) - start))s)"
		else
			FAILED=$((FAILED + 1))
			FAILS+=("$name")
			echo "FAIL $name ($(($(date +%s) - start))s)"
		fi
	done
	[ $FAILED = 0 ] || echo "failed: ${FAILS[*]}"
	echo "$PASSED passed, $FAILED failed"
	[ $FAILED = 0 ]
}
