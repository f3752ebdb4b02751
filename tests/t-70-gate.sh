# The per-patch gate: each kind of regression fails it and names the patch;
# the real series passes.
# shellcheck shell=bash

GATE_SELFTEST=$BUILD_DIR/gate-selftest

# mkpatch OUT FILE SUBJECT OLD NEW: a git-am-able patch turning the
# content OLD of FILE (a path in the kernel tree) into NEW.
mkpatch() {
	local out=$1 file=$2 subject=$3 old=$4 new=$5
	{
		printf 'From: Gate Test <gate@kfrag.invalid>\nSubject: [PATCH] %s\n\n' "$subject"
		printf 'A patch made by the gate self-test.\n\nSigned-off-by: Gate Test <gate@kfrag.invalid>\n---\n'
		diff -u --label "a/$file" --label "b/$file" "$old" "$new" || true
	} > "$out"
}

# gate_queue DIR: a patch directory with the real base queue and the
# patches named after it.
gate_queue() {
	local d=$1
	shift
	rm -rf "$d"
	mkdir -p "$d"
	cp -r patches/base "$d/base"
	printf '%s\n' "$@" > "$d/series"
}

# good_patch DIR FILE: DIR/0001-good.patch, a clean comment added to
# FILE; leaves FILE's v3.1 content in $SCRATCH/v0 and the result in v1.
good_patch() {
	base_blob "$2" > "$SCRATCH/v0"
	sed 's|^EXPORT_SYMBOL(skb_recv_datagram);|&\n/* gate self-test: a good line */|' "$SCRATCH/v0" > "$SCRATCH/v1"
	mkpatch "$1/0001-good.patch" "$2" "net: a clean comment" "$SCRATCH/v0" "$SCRATCH/v1"
}

base_blob() { # the v3.1 content of a file
	git --git-dir="$(scripts/import-base)" show "refs/heads/v3.1-base:$1"
}

gate_run() { # gate_run PATCHDIR: run the gate on that queue, output in $SCRATCH/gate.out
	local rc=0
	PATCHES_DIR=$1 GATE_DIR=$GATE_SELFTEST scripts/gate > "$SCRATCH/gate.out" 2>&1 || rc=$?
	tail -n 12 "$SCRATCH/gate.out"
	return $rc
}

t_gate_style_error() {
	local d=$SCRATCH/q-style f=net/core/datagram.c
	gate_queue "$d" 0001-good.patch 0002-style.patch
	good_patch "$d" $f
	sed 's|^EXPORT_SYMBOL(skb_recv_datagram);|&\nstatic int kfrag_gate_style(int x)\n{\n\tif(x)\n\t\treturn 1;\n\treturn 0;\n}|' "$SCRATCH/v1" > "$SCRATCH/v2"
	mkpatch "$d/0002-style.patch" $f "net: a style error" "$SCRATCH/v1" "$SCRATCH/v2"
	if gate_run "$d"; then echo "    the gate passed a style error"; return 1; fi
	grep -q "regressions in: 0002-style.patch$" "$SCRATCH/gate.out"
	grep -qE "^0001-good.patch +0 +0 +0 +ok " "$SCRATCH/gate.out"
	grep -qE "^0002-style.patch +1 +0 +0 +ok +1 +0 +0 +0$" "$SCRATCH/gate.out"
}

t_gate_build_break() {
	local d=$SCRATCH/q-build f=net/core/datagram.c
	gate_queue "$d" 0001-good.patch 0002-break.patch 0003-fix.patch
	good_patch "$d" $f
	sed 's|^/\* gate self-test: a good line \*/|&\nint kfrag_gate_broken = undeclared_symbol;|' "$SCRATCH/v1" > "$SCRATCH/v2"
	mkpatch "$d/0002-break.patch" $f "net: break the build" "$SCRATCH/v1" "$SCRATCH/v2"
	mkpatch "$d/0003-fix.patch" $f "net: fix the build again" "$SCRATCH/v2" "$SCRATCH/v1"
	if gate_run "$d"; then echo "    the gate passed a series that does not bisect"; return 1; fi
	grep -q "regressions in: 0002-break.patch$" "$SCRATCH/gate.out"
	grep -qE "^0002-break.patch +0 +0 +0 +FAIL\(net/core/datagram.o\) " "$SCRATCH/gate.out"
	grep -qE "^0003-fix.patch +0 +0 +0 +ok " "$SCRATCH/gate.out"
}

t_gate_sparse() {
	local d=$SCRATCH/q-sparse f=net/core/datagram.c
	gate_queue "$d" 0001-sparse.patch
	base_blob $f > "$SCRATCH/v0"
	sed 's|^EXPORT_SYMBOL(skb_recv_datagram);|&\n\nstatic int __used kfrag_gate_sparse(void)\n{\n\tint *p = 0;\n\n\treturn p != NULL;\n}|' "$SCRATCH/v0" > "$SCRATCH/v1"
	mkpatch "$d/0001-sparse.patch" $f "net: a sparse warning" "$SCRATCH/v0" "$SCRATCH/v1"
	if gate_run "$d"; then echo "    the gate passed a new sparse warning"; return 1; fi
	grep -q "regressions in: 0001-sparse.patch$" "$SCRATCH/gate.out"
	# for sparse's reason alone: checkpatch clean, builds, 1 new warning
	grep -qE "^0001-sparse.patch +0 +0 +0 +ok +1 +0 +1 +0$" "$SCRATCH/gate.out"
	grep -q "new sparse: .*Using plain integer as NULL pointer" "$SCRATCH/gate.out"
}

t_gate_series() {
	scripts/gate
}

register gate-catches-style-error t_gate_style_error
register gate-catches-build-break t_gate_build_break
register gate-catches-sparse-warning t_gate_sparse
register gate-series t_gate_series

t_mbox() {
	local d=$SCRATCH/q-mbox f=net/core/datagram.c mbox
	gate_queue "$d" 0001-one.patch 0002-two.patch
	cp patches/cover-letter "$d/"
	base_blob $f > "$SCRATCH/v0"
	sed 's|^EXPORT_SYMBOL(skb_recv_datagram);|&\n/* one */|' "$SCRATCH/v0" > "$SCRATCH/v1"
	sed 's|^/\* one \*/|&\n/* two */|' "$SCRATCH/v1" > "$SCRATCH/v2"
	mkpatch "$d/0001-one.patch" $f "net: first" "$SCRATCH/v0" "$SCRATCH/v1"
	mkpatch "$d/0002-two.patch" $f "net: second" "$SCRATCH/v1" "$SCRATCH/v2"
	mbox=$(PATCHES_DIR=$d BUILD_DIR=$GATE_SELFTEST scripts/export-mbox "$SCRATCH/mbox/s.mbox")
	[ "$(grep -c '^Subject: ' "$mbox")" = 3 ]
	grep -q "^Subject: \[PATCH v3 0/2\] $(head -n 1 patches/cover-letter)$" "$mbox"
	grep -q '^Subject: \[PATCH v3 2/2\] net: second$' "$mbox"
	grep -q '^Changes since RFC v2:$' "$mbox"
	grep -q ' 1 file changed, 2 insertions' "$mbox" # the diffstat
	# threaded: both patches answer the cover letter's Message-Id
	local id
	id=$(sed -n '1,/^$/s/^Message-Id: //p' "$mbox" | head -n 1)
	[ -n "$id" ] && [ "$(grep -c "^In-Reply-To: $id" "$mbox")" = 2 ]
	echo "mbox: 3 messages, threaded on $id"
}
register mbox-export t_mbox
