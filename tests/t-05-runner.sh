# The runner itself (tests/lib.sh register, skip, run_tests): groups, name
# globs, skips counted and named, registrations it must refuse. On a suite
# of stand-in tests, run in a subshell with its own TESTS, counts and
# scratch directory. (runner-unknown-test, in t-45, runs tests/run.)
# shellcheck shell=bash

# stand_in ARG...: run_tests ARG... on the stand-in suite (LATE=1: with a
# test that skips too late, BAD=1: with two bad registrations); its output
# in $SCRATCH/stand-in.out, its exit status in $rc
stand_in() {
	local d=$SCRATCH/stand-in
	rm -rf "$d"
	mkdir -p "$d"
	set +e # the inner tests' own set -e must not be in a condition
	# shellcheck disable=SC2034,SC2317 # the stand-ins' suite, its tests called by run_tests
	(
		TESTS=() PASSED=0 FAILED=0 FAILS=() SKIPS=()
		si_pass() { echo "stand-in ran"; }
		si_fail() { false; echo "went on after a failure"; }
		si_skip() { skip "no frobnicator here"; echo "went on after skip"; }
		si_tun() { need_tun; echo "went on without a tun"; }
		si_late() { (skip "in a subshell") || true; echo "went on after skip"; }
		# a skip after the test started something (a stand-in tcpsink)
		si_left() { cp "$(command -v sleep)" "$SCRATCH/tcpsink"; "$SCRATCH/tcpsink" 30 >/dev/null 2>&1 & skip "too late"; }
		register alpha-one si_pass quick
		register alpha-two si_pass vm
		register beta-fail si_fail gate
		register beta-skip si_skip quick
		register gamma-tun si_tun vm quick
		register gamma-late si_late gate
		[ "${LATE:-}" != 1 ] || register epsilon-left si_left quick
		if [ "${BAD:-}" = 1 ]; then
			register delta-nogroup si_pass
			register delta-badgroup si_pass quick slow
		fi
		SCRATCH=$d TUN_DEV=$d/no-tun run_tests "$@"
	) > "$SCRATCH/stand-in.out" 2>&1
	rc=$?
	set -e
}
# ran NAMES: the stand-ins that ran (or were reported) were NAMES, in that order
ran() {
	local got
	got=$(sed -n 's/^== //p' "$SCRATCH/stand-in.out" | paste -sd ' ')
	[ "$got" = "$*" ] || { echo "    ran '$got', expected '$*'"; sed 's/^/    | /' "$SCRATCH/stand-in.out"; return 1; }
}
# said_as -F|-E WHAT PATTERN...: the output has a line that is each
# PATTERN, whole (grep -F: the line itself; -E: an extended regex)
said_as() {
	local how=$1 what=$2 l
	shift 2
	for l; do
		grep -qx "$how" -- "$l" "$SCRATCH/stand-in.out" ||
			{ echo "    no $what '$l':"; sed 's/^/    | /' "$SCRATCH/stand-in.out"; return 1; }
	done
}
# said LINE...: the output has each LINE, whole
said() { said_as -F line "$@"; }
# said_re REGEX...: the output has a line matching each (extended) REGEX, whole
said_re() { said_as -E "line like" "$@"; }
# ends LINE STATUS: the output's last line is LINE, the exit status STATUS
ends() {
	[ "$(tail -n 1 "$SCRATCH/stand-in.out")" = "$1" ] && [ "$rc" = "$2" ] ||
		{ echo "    expected '$1' last and exit $2; exit $rc:"; sed 's/^/    | /' "$SCRATCH/stand-in.out"; return 1; }
}

t_runner_selftest() {
	local tun="gamma-tun (no $SCRATCH/stand-in/no-tun: the test needs a tap (fix: modprobe tun))"
	# -g quick: the quick ones only, a test of two groups among them; the
	# skips counted, named and not passed, a skip ends its test
	stand_in -g quick
	ran alpha-one beta-skip gamma-tun
	said_re 'PASS alpha-one \([0-9]+s\)'
	said "SKIP beta-skip (# SKIP no frobnicator here)" \
		"SKIP gamma-tun (# SKIP no $SCRATCH/stand-in/no-tun: the test needs a tap (fix: modprobe tun))" \
		"2 skipped: beta-skip (no frobnicator here), $tun"
	! grep -q 'went on' "$SCRATCH/stand-in.out" || { echo "    a skip or need_tun did not end its test"; return 1; }
	ends "1 passed, 0 failed" 0
	# groups add up; a name glob; a glob within a group
	stand_in -g vm -g gate
	ran alpha-two beta-fail gamma-tun gamma-late
	stand_in 'alpha-*'
	ran alpha-one alpha-two
	! grep -q skipped "$SCRATCH/stand-in.out" || { echo "    a skipped line without a skip"; return 1; }
	ends "2 passed, 0 failed" 0
	stand_in -gquick 'beta-*' gamma-tun
	ran beta-skip gamma-tun
	ends "0 passed, 0 failed" 0
	# everything, in order: a failure, and a skip that did not end its test, fail
	stand_in
	ran alpha-one alpha-two beta-fail beta-skip gamma-tun gamma-late
	said_re 'FAIL beta-fail \([0-9]+s\)' 'FAIL gamma-late \([0-9]+s\)'
	said "failed: beta-fail gamma-late" \
		"    skip (in a subshell) did not end the test: call it first, in the test's own shell" \
		"2 skipped: beta-skip (no frobnicator here), $tun"
	ends "2 passed, 2 failed" 1
	# arguments that select nothing fail, and say why
	stand_in 'nothing-*' -g vm 'beta-*' 'gamma-*' -g slow
	ran gamma-tun
	said "FAIL nothing-* (no such test: tests/run --list names them)" \
		"FAIL beta-* (no test of group vm matches it: tests/run --list names them)" \
		"FAIL -g slow (no such group: one of quick vm gate)"
	ends "0 passed, 3 failed" 1
	# a skip after the test started something fails it
	LATE=1 stand_in 'epsilon-*'
	said "    skip (too late) after the test had started something: not a skip"
	said_re '    left running by the test: [0-9]+:tcpsink \(killed now\)' 'FAIL epsilon-left \([0-9]+s\)'
	ends "0 passed, 1 failed" 1
	# a test registered without a group, or with an unknown one, fails
	# (whatever the -g) without running
	BAD=1 stand_in -g quick
	ran alpha-one beta-skip gamma-tun delta-nogroup delta-badgroup
	said "FAIL delta-nogroup (registered without a group: register NAME FUNCTION GROUP..., GROUP one of: quick vm gate)" \
		"FAIL delta-badgroup (registered with an unknown group 'slow' (known: quick vm gate))"
	[ "$(grep -c 'stand-in ran' "$SCRATCH/stand-in.out")" = 1 ] || { echo "    a badly registered test ran"; return 1; }
	ends "1 passed, 2 failed" 1
	# --list: name and groups, of the selection, nothing run
	stand_in --list -g gate
	[ "$(cat "$SCRATCH/stand-in.out")" = "$(printf '%-44s %s\n' beta-fail gate gamma-late gate)" ] && [ $rc = 0 ] ||
		{ echo "    --list -g gate: exit $rc"; sed 's/^/    | /' "$SCRATCH/stand-in.out"; return 1; }
	BAD=1 stand_in --list 'delta-*'
	[ $rc = 1 ] && said "$(printf '%-44s %s' delta-nogroup '(no group)')" "$(printf '%-44s %s' delta-badgroup quick,slow)" ||
		{ echo "    --list of bad registrations: exit $rc"; return 1; }
	echo "groups, globs, skips and bad registrations: as the runner's comment says"
}
register runner-groups-globs-skips t_runner_selftest quick
