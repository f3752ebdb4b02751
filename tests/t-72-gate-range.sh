# The gate on part of the series, its refusal to judge patches/ while the
# series work tree holds commits never exported, checkpatch.allow keyed by
# subject, and prepare-tree keeping such commits.
# shellcheck shell=bash

# ws_with_unexported DIR: DIR/series/src, a work tree whose branch series
# has one commit past the one the queue's last patch made (kfrag-head)
ws_with_unexported() {
	local w=$1/series/src
	rm -rf "$1"
	mkdir -p "$w"
	git -C "$w" init -q -b series
	git -C "$w" -c user.name=t -c user.email=t@kfrag.invalid commit -q --allow-empty -m "the queue's last patch"
	git -C "$w" rev-parse HEAD > "$w/.git/kfrag-head"
	git -C "$w" -c user.name=t -c user.email=t@kfrag.invalid commit -q --allow-empty -m "net: a fix never exported"
}

# the gate judges patches/: with commits of build/series/src that were
# never exported it stops and names them, before it does anything else;
# GATE_UNEXPORTED_OK=1 lets it judge patches/ anyway (it then goes on,
# here to a missing sparse, which stops it later: proof that it went on)
t_gate_unexported() {
	ws_with_unexported "$SCRATCH/b"
	# (SPARSE=/nonexistent: a gate that went on would stop there, not
	# judge the whole series)
	expect_fail "holds commits that were never exported to patches/" "net: a fix never exported" \
		"fix: scripts/export-series" -- env BUILD_DIR="$SCRATCH/b" SPARSE=/nonexistent scripts/gate
	expect_fail "holds commits that were never exported" -- env BUILD_DIR="$SCRATCH/b" scripts/gate --checkpatch 45
	git -C "$SCRATCH/b/series/src" rev-parse series > "$SCRATCH/b/series/src/.git/kfrag-head"
	expect_fail "sparse not found (SPARSE=/nonexistent)" -- env BUILD_DIR="$SCRATCH/b" SPARSE=/nonexistent scripts/gate
	ws_with_unexported "$SCRATCH/b"
	expect_fail "sparse not found (SPARSE=/nonexistent)" -- \
		env BUILD_DIR="$SCRATCH/b" GATE_UNEXPORTED_OK=1 SPARSE=/nonexistent scripts/gate
	rm -rf "$SCRATCH/b"
	# arguments it does not understand are refused, never a whole gate
	expect_fail "not an option or a patch number: '4x'" -- scripts/gate --checkpatch 4x
	expect_fail "not an option or a patch number: '45-'" -- scripts/gate --checkpatch 45-
	expect_fail "one range only (got 3 and 5)" -- scripts/gate --checkpatch 3 5
	expect_fail "a range N-M needs N <= M (got 9-3)" -- scripts/gate --checkpatch 9-3
}

# prepare-tree never drops such commits: the queue changed, re-applying it
# would, so it stops and says how to keep or drop them
t_prepare_keeps_unexported() {
	local q=$SCRATCH/pq b=$SCRATCH/pb src
	rm -rf "$q" "$b"
	mkdir -p "$q"
	cp -r patches/base "$q/base"
	src=$(BUILD_DIR=$b PATCHES_DIR=$q scripts/prepare-tree vanilla)
	git -C "$src" -c user.name=t -c user.email=t@kfrag.invalid commit -q --allow-empty -m "work in progress"
	# the same queue: the tree is used as it is, the commit stays
	BUILD_DIR=$b PATCHES_DIR=$q scripts/prepare-tree vanilla >/dev/null
	[ "$(git -C "$src" log -1 --format=%s vanilla)" = "work in progress" ] || { echo "    the commit went with an unchanged queue"; return 1; }
	# stop, name the commit
	# a changed queue: one more empty line at the end of its last patch
	echo >> "$q/base/$(grep -v '^#' "$q/base/series" | grep . | tail -n 1)"
	expect_fail "holds commits that are not in the vanilla queue's patch files" "work in progress" \
		"fix: scripts/export-series" -- env BUILD_DIR="$b" PATCHES_DIR="$q" scripts/prepare-tree vanilla
	[ "$(git -C "$src" log -1 --format=%s vanilla)" = "work in progress" ] || { echo "    the commit was dropped"; return 1; }
	# dropped by hand, as the message says: the queue is applied again
	git -C "$src" reset -q --hard "$(cat "$src/.git/kfrag-head")"
	BUILD_DIR=$b PATCHES_DIR=$q scripts/prepare-tree vanilla >/dev/null
	rm -rf "$b" "$q"
}

# one patch gated alone, checkpatch only (seconds): its row and no other;
# a range without patches is an error; a checkpatch.allow line whose
# subject no patch has stops the gate (keyed by subject, a renumbered
# patch keeps its lines)
t_gate_range() {
	local n out q=$SCRATCH/gq
	n=$(sed -n 's/^\(00[0-9][0-9]\)-sunrpc-complete-a-call.*/\1/p' patches/series)
	[ -n "$n" ] || { echo "    no sunrpc completion patch in patches/series"; return 1; }
	out=$(GATE_UNEXPORTED_OK=1 scripts/gate --checkpatch "$n" 2>&1) || { echo "$out" | tail -5; return 1; }
	grep -qE "^$n-sunrpc-complete-a-call[^ ]* +0 +[0-9]+ +0$" <<<"$out" || { echo "$out" | tail -5; echo "    no row for patch $n"; return 1; }
	[ "$(grep -cE '^[0-9]{4}-' <<<"$out")" = 1 ] || { echo "    more than patch $n judged"; return 1; }
	grep -qx "1 patches, 0 regressions (checkpatch only)" <<<"$out"
	expect_fail "no patch numbered 900-901" -- env GATE_UNEXPORTED_OK=1 scripts/gate --checkpatch 900-901
	rm -rf "$q"
	cp -r patches "$q"
	echo "net: a patch that is not in the series | line over 80 characters # stale" >> "$q/checkpatch.allow"
	expect_fail "checkpatch.allow names a patch the series does not have: 'net: a patch that is not in the series'" -- \
		env GATE_UNEXPORTED_OK=1 PATCHES_DIR="$q" scripts/gate --checkpatch "$n"
	echo "an old line: file name: line over 80 characters" >> "$q/checkpatch.allow"
	sed -i '/not in the series/d' "$q/checkpatch.allow"
	expect_fail 'checkpatch.allow: not "SUBJECT | WARNING TEXT # why"' -- \
		env GATE_UNEXPORTED_OK=1 PATCHES_DIR="$q" scripts/gate --checkpatch "$n"
	rm -rf "$q"
}
register gate-refuses-unexported-commits t_gate_unexported quick
register prepare-tree-keeps-unexported-commits t_prepare_keeps_unexported quick
register gate-one-patch-and-allow-by-subject t_gate_range gate
