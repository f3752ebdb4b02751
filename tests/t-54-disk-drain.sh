# The end of a red-test run: the on-disk oracle wants one manifest line
# per writer started, the guest judges how each writer ended, and the
# workload stops at SECS and drains the writes then in flight before it
# reports. The guest side runs on the host (guest/redtest.c's KFRAG_DIR:
# the workload in a directory, no netem, mount or tracing): no VM needed.
# Uses tests/lib.sh's fx, want, kvget.
# shellcheck shell=bash

# redtest_host NAME KFRAG_KEY=VALUE...: the guest workload in $SCRATCH/NAME,
# its output in $SCRATCH/NAME.out, its KV lines in $SCRATCH/NAME.kv, its
# exit status in $HRC
redtest_host() {
	local d=$SCRATCH/$1
	shift
	make -s initramfs host >/dev/null
	mkdir -p "$d"
	HRC=0
	env KFRAG_DIR="$d" KFRAG_SEED=7 "$@" "$BUILD_DIR/initramfs/bin/kfrag-redtest" \
		> "$d.out" 2>&1 || HRC=$?
	sed -n 's/^KFRAG-KV: //p' "$d.out" > "$d.kv"
}

# A manifest without one writer's line: that writer's file is not judged,
# and "0 corrupted" would be a lie. The oracle names the gap.
t_oracle_disk_writers() {
	local o=$BUILD_DIR/host/disk-oracle d=$SCRATCH/dm
	mkdir -p "$d"
	fx disk-missing "$d" "$d.missing"
	expect_fail "the manifest has 1 of 2 writers' files" "file 1 has no KFRAG-MANIFEST line" -- \
		"$o" "$d.missing" "$d"
	# the complete one passes (t-50-oracles.sh's oracle-disk: one corrupted unit)
	fx disk "$d" "$d.full"
	"$o" "$d.full" "$d" > "$d.kv"
	want files 2 "$d.kv"
	want writers 2 "$d.kv"
	# no count of writers: nothing to hold the lines against
	grep -v 'writers_started=' "$d.full" > "$d.nocount"
	expect_fail "no 'KFRAG-KV: writers_started=' line" -- "$o" "$d.nocount" "$d"
	# a file twice, a file of no writer
	{ cat "$d.full"; grep 'file=1 ' "$d.full"; } > "$d.twice"
	expect_fail "file 1 has two KFRAG-MANIFEST lines" -- "$o" "$d.twice" "$d"
	sed 's/file=1 /file=2 /' "$d.full" > "$d.beyond"
	expect_fail "file 2 is not one of the 2 writers'" -- "$o" "$d.beyond" "$d"
}

# How each writer ended: exit 0, or the SIGKILL the workload sent itself
# (KILL_AT, or a write still out after the drain). Anything else fails the
# guest run, even with ERRORS_OK=1 (which only excuses failed writes).
t_redtest_writer_exit() {
	local pid kids
	# writer 1 cannot open its file: it exits 1 before writing
	mkdir -p "$SCRATCH/wx/w001.dat"
	redtest_host wx KFRAG_WRITERS=2 KFRAG_SECS=1 KFRAG_ERRORS_OK=1
	[ "$HRC" = 6 ] || { echo "    exit $HRC, expected 6 (a writer failed)"; sed 's/^/    | /' "$SCRATCH/wx.out" | tail -n 20; return 1; }
	want writers_started 2 "$SCRATCH/wx.kv"
	want writers_failed 1 "$SCRATCH/wx.kv"
	grep -q '^redtest.error=writer 1 exited with status 1' "$SCRATCH/wx.kv" ||
		{ echo "    redtest.error does not name writer 1's exit"; cat "$SCRATCH/wx.kv"; return 1; }
	# a writer killed by someone else (SIGKILL included: not ours)
	for sig in TERM KILL; do
		mkdir -p "$SCRATCH/ws$sig"
		KFRAG_DIR=$SCRATCH/ws$sig KFRAG_WRITERS=2 KFRAG_SECS=2 KFRAG_GAP_MS=20 \
			"$BUILD_DIR/initramfs/bin/kfrag-redtest" > "$SCRATCH/ws$sig.out" 2>&1 &
		pid=$!
		# shellcheck disable=SC2064 # this pid, now: the local is gone at exit
		trap "kill $pid 2>/dev/null || true" EXIT
		kids=
		for _ in $(seq 100); do
			kids=$(pgrep -P "$pid" || true)
			[ -z "$kids" ] || break
			sleep 0.05
		done
		[ -n "$kids" ] || { echo "    no writer process appeared"; kill "$pid"; return 1; }
		sleep 0.5
		kill -s "$sig" "${kids%%[!0-9]*}"
		HRC=0
		wait "$pid" || HRC=$?
		sed -n 's/^KFRAG-KV: //p' "$SCRATCH/ws$sig.out" > "$SCRATCH/ws$sig.kv"
		[ "$HRC" = 6 ] || { echo "    SIG$sig to a writer: exit $HRC, expected 6"; sed 's/^/    | /' "$SCRATCH/ws$sig.out" | tail -n 20; return 1; }
		want writers_failed 1 "$SCRATCH/ws$sig.kv"
		grep -q "^redtest.error=writer [01] died of signal $(kill -l "$sig") " "$SCRATCH/ws$sig.kv" ||
			{ echo "    redtest.error does not name the signal"; cat "$SCRATCH/ws$sig.kv"; return 1; }
	done
	# KILL_AT: every writer SIGKILLed on purpose - expected, the run is judged
	redtest_host wk KFRAG_WRITERS=2 KFRAG_SECS=3 KFRAG_GAP_MS=20 KFRAG_KILL_AT=1
	[ "$HRC" = 0 ] || { echo "    KILL_AT: exit $HRC, expected 0"; sed 's/^/    | /' "$SCRATCH/wk.out" | tail -n 20; return 1; }
	want killed_writers 2 "$SCRATCH/wk.kv"
	want writers_failed 0 "$SCRATCH/wk.kv"
	"$BUILD_DIR/host/disk-oracle" "$SCRATCH/wk.out" "$SCRATCH/wk" > "$SCRATCH/wk.disk"
	want corrupted 0 "$SCRATCH/wk.disk"
	want files 2 "$SCRATCH/wk.disk"
}

# At SECS the workload stops issuing writes - in its first in-order pass
# too - and drains: a slow first pass (200 ms before each of 64 writes)
# must not run on past SECS until the give-up time and be killed there
# with writes in flight (what a long-delay link did: "stuck" writers,
# the destructor accounting made with RPCs still out, live=2).
t_redtest_drain() {
	local d=$SCRATCH/dr ms
	redtest_host dr KFRAG_WRITERS=2 KFRAG_UNITS=64 KFRAG_MAXKB=4 KFRAG_GAP_MS=200 \
		KFRAG_SECS=2 KFRAG_DEADLINE=3
	[ "$HRC" = 0 ] || { echo "    exit $HRC, expected 0"; sed 's/^/    | /' "$d.out" | tail -n 20; return 1; }
	want stuck_writers 0 "$d.kv"
	want hung_writes 0 "$d.kv"
	want writers_failed 0 "$d.kv"
	ms=$(kvget drain_ms "$d.kv")
	if [ -z "$ms" ] || [ "$ms" -ge 3000 ]; then
		echo "    drain_ms=$ms, expected a number below the deadline (3 s)"
		return 1
	fi
	[ -n "$(kvget inflight_at_stop "$d.kv")" ] || { echo "    no inflight_at_stop line"; return 1; }
	# stopped mid-pass: fewer than the 2 x 64 writes of the first pass
	[ "$(kvget writes "$d.kv")" -lt 128 ] || { echo "    the first pass ran to its end"; return 1; }
	awk -v s="$(kvget secs "$d.kv")" 'BEGIN { exit !(s < 3) }' ||
		{ echo "    the run took $(kvget secs "$d.kv") s for SECS=2"; return 1; }
	"$BUILD_DIR/host/disk-oracle" "$d.out" "$d" > "$d.disk"
	want corrupted 0 "$d.disk"
	want files 2 "$d.disk"
	echo "stopped at 2 s after $(kvget writes "$d.kv") writes; drain ${ms} ms," \
		"$(kvget inflight_at_stop "$d.kv") in flight at the stop"
}

# A writer still alive at the give-up is hung whatever it was doing: not
# only in write(), also stuck in open(), close() or between writes (the
# gap). KFRAG_TEST_STALL holds writer 1 there past the give-up; it must
# count in hung_writes (the verdicts require 0) and say where it was - not
# only raise stuck_writers, which nothing judges. The hooks are refused
# outside KFRAG_DIR.
t_redtest_stuck_writer() {
	local ph d
	for ph in open gap close; do
		d=$SCRATCH/st$ph
		redtest_host "st$ph" KFRAG_WRITERS=2 KFRAG_SECS=1 KFRAG_DEADLINE=1 KFRAG_GAP_MS=20 \
			KFRAG_TEST_STALL="1:$ph:10000"
		[ "$HRC" = 0 ] || { echo "    $ph: exit $HRC, expected 0"; sed 's/^/    | /' "$d.out" | tail -n 20; return 1; }
		want stuck_writers 1 "$d.kv"
		want hung_writes 1 "$d.kv" || { echo "    (writer 1 stuck in $ph)"; return 1; }
		grep -q "^hung\.writer1=.*(not in write(): in $ph)\$" "$d.kv" ||
			{ echo "    no hung.writer1 line naming $ph"; cat "$d.kv"; return 1; }
		want writers_failed 0 "$d.kv"
		"$BUILD_DIR/host/disk-oracle" "$d.out" "$d" > "$d.disk"
		want corrupted 0 "$d.disk"
		want files 2 "$d.disk"
	done
	for hook in KFRAG_TEST_STALL=0:gap:5 KFRAG_TEST_WRITE_DELAY_MS=5; do
		# WRITERS=0: should the refusal fail, the run stops there, before any netem, tracing or mount
		expect_fail "redtest.error=kfrag.test_write_delay_ms and kfrag.test_stall are test hooks" \
			"kfrag.dir only" -- env -u KFRAG_DIR KFRAG_WRITERS=0 "$hook" \
			"$BUILD_DIR/initramfs/bin/kfrag-redtest"
	done
	expect_fail "the phase is one of open, gap, write, close" -- env KFRAG_DIR="$SCRATCH/stbad" \
		KFRAG_TEST_STALL=0:stamp:5 "$BUILD_DIR/initramfs/bin/kfrag-redtest"
}

# The drain with writes really in flight at SECS (a local pwrite() takes
# microseconds: without a slow write the drain never waits).
# KFRAG_TEST_WRITE_DELAY_MS makes every write() return that much later.
# Below the deadline: both writers are mid-write at SECS (writes of 0.7 s
# from 0 s, stop at 1 s), the drain waits for them, nothing hangs, both
# drained writes are counted and on disk. Above it: each writer's first
# write (0-2.5 s) returns late, hung; its second (2.5-5 s) is still out
# at the give-up (SECS 3 + DEADLINE 1): hung, the writer killed, its units
# "G+" in the manifest. Every hung write counted once, each with its line.
t_redtest_drain_inflight() {
	local d=$SCRATCH/dl ms
	redtest_host dl KFRAG_WRITERS=2 KFRAG_SECS=1 KFRAG_DEADLINE=2 KFRAG_TEST_WRITE_DELAY_MS=700
	[ "$HRC" = 0 ] || { echo "    exit $HRC, expected 0"; sed 's/^/    | /' "$d.out" | tail -n 20; return 1; }
	want inflight_at_stop 2 "$d.kv"
	want drained_writes 2 "$d.kv"
	want writes 4 "$d.kv"
	want hung_writes 0 "$d.kv"
	want stuck_writers 0 "$d.kv"
	want writers_failed 0 "$d.kv"
	ms=$(kvget drain_ms "$d.kv")
	if [ -z "$ms" ] || [ "$ms" -le 0 ] || [ "$ms" -ge 2000 ]; then
		echo "    drain_ms=$ms, expected a wait above 0, below the deadline (2 s)"
		return 1
	fi
	! grep -q '^KFRAG-MANIFEST: .*+' "$d.out" || { echo "    a write still in flight in the manifest"; return 1; }
	"$BUILD_DIR/host/disk-oracle" "$d.out" "$d" > "$d.disk"
	want corrupted 0 "$d.disk"
	want files 2 "$d.disk"
	echo "below the deadline: $(kvget inflight_at_stop "$d.kv") in flight at the stop, drained in ${ms} ms"

	d=$SCRATCH/dh
	redtest_host dh KFRAG_WRITERS=2 KFRAG_SECS=3 KFRAG_DEADLINE=1 KFRAG_TEST_WRITE_DELAY_MS=2500
	[ "$HRC" = 0 ] || { echo "    exit $HRC, expected 0"; sed 's/^/    | /' "$d.out" | tail -n 20; return 1; }
	want writes 2 "$d.kv"
	want inflight_at_stop 2 "$d.kv"
	want drained_writes 0 "$d.kv"
	want stuck_writers 2 "$d.kv"
	want hung_writes 4 "$d.kv"
	[ "$(grep -c '^hung\.writer[01]=' "$d.kv")" = 4 ] ||
		{ echo "    expected 4 hung.writer lines, one per hung write"; cat "$d.kv"; return 1; }
	[ "$(grep -c '^KFRAG-MANIFEST: .*+' "$d.out")" = 2 ] ||
		{ echo "    expected each writer's killed write as G+ in the manifest"; grep MANIFEST "$d.out" | cut -c1-200; return 1; }
	"$BUILD_DIR/host/disk-oracle" "$d.out" "$d" > "$d.disk"
	want corrupted 0 "$d.disk"
	want files 2 "$d.disk"
	echo "above the deadline: $(kvget hung_writes "$d.kv") hung, $(kvget stuck_writers "$d.kv") writers killed at the give-up"
}

register oracle-disk-every-writer t_oracle_disk_writers quick
register redtest-writer-exit t_redtest_writer_exit quick
register redtest-drain-at-stop t_redtest_drain quick
register redtest-stuck-writer t_redtest_stuck_writer quick
register redtest-drain-inflight t_redtest_drain_inflight quick
