# The per-patch gate: each kind of regression fails it and names the patch;
# the real series passes.
# shellcheck shell=bash

GATE_SELFTEST=$BUILD_DIR/gate-selftest

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

# gate_run PATCHDIR [ARG...]: run the gate on that queue (reports in
# $GATE_SELFTEST; the work and object tree are the gate's own, shared with
# the real series), output in $SCRATCH/gate.out
gate_run() {
	local d=$1 rc=0
	shift
	PATCHES_DIR=$d GATE_DIR=$GATE_SELFTEST scripts/gate "$@" > "$SCRATCH/gate.out" 2>&1 || rc=$?
	tail -n 12 "$SCRATCH/gate.out"
	return $rc
}

# gate_must_stop CAUSE... -- PATCHDIR [ARG...]: the gate must fail, and
# say every CAUSE (it cannot judge: it must not pass)
gate_must_stop() {
	local causes=() t
	while [ "$1" != -- ]; do causes+=("$1"); shift; done
	shift
	if gate_run "$@"; then
		echo "    the gate passed although it could not judge"
		return 1
	fi
	for t in "${causes[@]}"; do
		grep -qF -- "$t" "$SCRATCH/gate.out" || { echo "    the gate's message lacks '$t'"; return 1; }
	done
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
	# the break touches a second object that builds: all of a patch's
	# objects share one make, and the failure is charged to its own
	clean_change net/core/stream.c "$SCRATCH/s1"
	mkpatch "$d/0002-break.patch" $f "net: break the build" "$SCRATCH/v1" "$SCRATCH/v2" \
		net/core/stream.c "$SCRATCH/s1.orig" "$SCRATCH/s1"
	mkpatch "$d/0003-fix.patch" $f "net: fix the build again" "$SCRATCH/v2" "$SCRATCH/v1"
	if gate_run "$d"; then echo "    the gate passed a series that does not bisect"; return 1; fi
	grep -q "regressions in: 0002-break.patch$" "$SCRATCH/gate.out"
	grep -qE "^0002-break.patch +0 +0 +0 +FAIL\(net/core/datagram.o\) +1 +0 " "$SCRATCH/gate.out"
	# the cause, from datagram.o's own build, and none for stream.o
	grep -q "0002-break.patch: net/core/datagram.o: .*undeclared_symbol" "$SCRATCH/gate.out" ||
		{ echo "    the failure's cause is not named"; return 1; }
	if grep -q "0002-break.patch: net/core/stream.o:" "$SCRATCH/gate.out"; then
		echo "    stream.o, which builds, is named as failing"
		return 1
	fi
	grep -qE "^0003-fix.patch +0 +0 +0 +ok " "$SCRATCH/gate.out"
}

t_gate_sparse() {
	local d=$SCRATCH/q-sparse f=net/core/datagram.c
	gate_queue "$d" 0001-sparse.patch
	base_blob $f > "$SCRATCH/v0"
	sed 's|^EXPORT_SYMBOL(skb_recv_datagram);|&\n\nstatic int __used kfrag_gate_sparse(void)\n{\n\tint *p = 0;\n\n\treturn p != NULL;\n}|' "$SCRATCH/v0" > "$SCRATCH/v1"
	# and a clean change to a second object, built in the same make
	clean_change net/core/stream.c "$SCRATCH/s1"
	mkpatch "$d/0001-sparse.patch" $f "net: a sparse warning" "$SCRATCH/v0" "$SCRATCH/v1" \
		net/core/stream.c "$SCRATCH/s1.orig" "$SCRATCH/s1"
	if gate_run "$d"; then echo "    the gate passed a new sparse warning"; return 1; fi
	grep -q "regressions in: 0001-sparse.patch$" "$SCRATCH/gate.out"
	# for sparse's reason alone: checkpatch clean, both build, 1 new
	# warning, in the object that has it
	grep -qE "^0001-sparse.patch +0 +0 +0 +ok +2 +0 +1 +0$" "$SCRATCH/gate.out"
	[ "$(grep -c "new sparse: " "$SCRATCH/gate.out")" = 1 ]
	grep -q "new sparse: [^ ]*net/core/datagram.c: .*Using plain integer as NULL pointer" "$SCRATCH/gate.out"
}

t_gate_series() {
	scripts/gate
}

# A gate whose tools do not run stops, naming the cause, instead of
# passing: without sparse every object failed on vanilla too and counted as
# "not_on_x86"; a crashing checkpatch.pl counted as "0 errors".
t_gate_no_sparse() {
	local d=$SCRATCH/q-nosparse bin=$SCRATCH/bin-sparse
	gate_queue "$d" 0001-good.patch
	good_patch "$d" net/core/datagram.c
	SPARSE=/nonexistent gate_must_stop "sparse not found (SPARSE=/nonexistent): apt-get install sparse" -- "$d"
	# a sparse that does not run at all
	mkdir -p "$bin"
	printf '#!/bin/sh\nexit 127\n' > "$bin/sparse"
	chmod +x "$bin/sparse"
	PATH=$bin:$PATH gate_must_stop "sparse does not run: $bin/sparse --version exited 127" -- "$d"
	# one that answers --version, then fails on every file: the object
	# builds without it, so sparse is the cause
	printf '#!/bin/sh\n[ "$1" = --version ] && { echo 0.6.4; exit 0; }\necho "sparse: cannot run" >&2\nexit 127\n' > "$bin/sparse"
	PATH=$bin:$PATH gate_must_stop "sparse fails (or does not run) on net/core/datagram.o on the base" -- "$d"
}

t_gate_checkpatch_crash() {
	local d=$SCRATCH/q-cpcrash cp=$SCRATCH/checkpatch-crash
	gate_queue "$d" 0001-good.patch
	good_patch "$d" net/core/datagram.c
	printf '#!/bin/sh\necho "Unescaped left brace in regex is illegal here" >&2\nexit 255\n' > "$cp"
	chmod +x "$cp"
	CHECKPATCH=$cp gate_must_stop "checkpatch.pl crashed on 0001-good.patch: Unescaped left brace" -- "$d"
	# silent: no stderr, exit 0, no verdict
	printf '#!/bin/sh\nexit 0\n' > "$cp"
	CHECKPATCH=$cp gate_must_stop "checkpatch.pl crashed on 0001-good.patch: exit status 0, no verdict" -- "$d"
	# a verdict that does not add up: "0 errors" and an ERROR line
	printf '#!/bin/sh\necho "ERROR: trailing whitespace"\necho "total: 0 errors, 0 warnings, 3 lines checked"\n' > "$cp"
	CHECKPATCH=$cp gate_must_stop "checkpatch.pl's verdict on 0001-good.patch does not add up" -- "$d"
}

# gate --checkpatch: the same checkpatch verdict (warnings must be
# justified), nothing built
t_gate_checkpatch_only() {
	local d=$SCRATCH/q-cponly f=net/core/datagram.c
	gate_queue "$d" 0001-good.patch 0002-long.patch
	good_patch "$d" $f
	sed 's|^/\* gate self-test: a good line \*/|&\n/* gate self-test: a comment line that is far longer than the eighty columns checkpatch.pl allows */|' "$SCRATCH/v1" > "$SCRATCH/v2"
	mkpatch "$d/0002-long.patch" $f "net: an unjustified warning" "$SCRATCH/v1" "$SCRATCH/v2"
	# an allowance keyed by another patch's subject justifies nothing here
	echo "net: a clean comment | line over 80 characters # not this patch's" > "$d/checkpatch.allow"
	if gate_run "$d" --checkpatch; then echo "    gate --checkpatch passed an unjustified warning"; return 1; fi
	grep -q "regressions in: 0002-long.patch$" "$SCRATCH/gate.out"
	grep -qE "^0001-good.patch +0 +0 +0$" "$SCRATCH/gate.out"
	grep -qE "^0002-long.patch +0 +1 +1$" "$SCRATCH/gate.out"
	grep -q "0002-long.patch: unjustified WARNING: line over 80 characters" "$SCRATCH/gate.out"
	if grep -qE "baseline|preparing|allmodconfig" "$SCRATCH/gate.out"; then
		echo "    gate --checkpatch built objects"
		return 1
	fi
	# keyed by its own subject, the warning is justified
	echo "net: an unjustified warning | line over 80 characters # the self-test's" >> "$d/checkpatch.allow"
	gate_run "$d" --checkpatch || { echo "    an allowance keyed by the patch's subject did not justify its warning"; return 1; }
	grep -qE "^0002-long.patch +0 +1 +0$" "$SCRATCH/gate.out"
}

# scripts/check-objects compiles in the gate's object tree, the one
# allmodconfig tree, and classifies as the gate does
t_check_objects() {
	local out rc=0 tree=$BUILD_DIR/gate
	touch "$SCRATCH/mark"
	sleep 1
	out=$(scripts/check-objects net/core/datagram.c drivers/net/greth.c 2>&1) || rc=$?
	echo "$out" | sed 's/^/    /'
	[ $rc = 0 ]
	grep -qE "^ok +net/core/datagram.c$" <<<"$out"
	grep -qE "^not-on-x86 +drivers/net/greth.c \(CONFIG_GRETH off in this allmodconfig\)$" <<<"$out"
	grep -qx "summary: 1 ok, 0 fail, 1 not-on-x86, 0 not-alone" <<<"$out"
	if [ ! "$tree/obj-allmod/net/core/datagram.o" -nt "$SCRATCH/mark" ]; then
		echo "    check-objects did not build in the gate's object tree $tree/obj-allmod"
		return 1
	fi
}

register gate-catches-style-error t_gate_style_error gate
register gate-catches-build-break t_gate_build_break gate
register gate-catches-sparse-warning t_gate_sparse gate
register gate-stops-without-sparse t_gate_no_sparse gate
register gate-stops-on-checkpatch-crash t_gate_checkpatch_crash gate
register gate-checkpatch-only t_gate_checkpatch_only gate
# the real series last: the self-tests' queues share its work tree
register gate-series t_gate_series gate
register check-objects-gate-tree t_check_objects gate

# export-mbox's identity: git's, set for the test through git's
# environment (GIT_CONFIG_COUNT outranks every config file)
mbox_as() { # mbox_as NAME EMAIL CMD...
	local n=$1 e=$2
	shift 2
	GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0="$n" \
		GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1="$e" "$@"
}

t_mbox() {
	local d=$SCRATCH/q-mbox f=net/core/datagram.c mbox me="Mbox Tester <mbox.tester@example.org>"
	local ian="Based on a patch by Ian Campbell <ian.campbell@citrix.com>"
	gate_queue "$d" 0001-one.patch 0002-two.patch
	cp patches/cover-letter "$d/"
	printf '# test\nnet: second | %s # 2/2\n' "$ian" > "$d/credits"
	base_blob $f > "$SCRATCH/v0"
	sed 's|^EXPORT_SYMBOL(skb_recv_datagram);|&\n/* one */|' "$SCRATCH/v0" > "$SCRATCH/v1"
	sed 's|^/\* one \*/|&\n/* two */|' "$SCRATCH/v1" > "$SCRATCH/v2"
	mkpatch "$d/0001-one.patch" $f "net: first" "$SCRATCH/v0" "$SCRATCH/v1"
	mkpatch "$d/0002-two.patch" $f "net: second" "$SCRATCH/v1" "$SCRATCH/v2"

	# placeholders and a missing identity are refused, naming the fix
	expect_fail "placeholder" "git config --global user.name" -- \
		mbox_as "skb-frag team" skb-frag@lists.invalid env PATCHES_DIR="$d" BUILD_DIR="$GATE_SELFTEST" scripts/export-mbox "$SCRATCH/mbox/s.mbox"
	expect_fail "placeholder" "git config --global user.email" -- \
		mbox_as "kfrag harness" harness@kfrag.invalid env PATCHES_DIR="$d" BUILD_DIR="$GATE_SELFTEST" scripts/export-mbox "$SCRATCH/mbox/s.mbox"
	expect_fail "no identity" "git config --global user.name" -- \
		env HOME="$SCRATCH" XDG_CONFIG_HOME="$SCRATCH" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		PATCHES_DIR="$d" BUILD_DIR="$GATE_SELFTEST" scripts/export-mbox "$SCRATCH/mbox/s.mbox"

	mbox=$(mbox_as "Mbox Tester" mbox.tester@example.org env PATCHES_DIR="$d" BUILD_DIR="$GATE_SELFTEST" \
		scripts/export-mbox "$SCRATCH/mbox/s.mbox" 2> "$SCRATCH/mbox.err") ||
		{ tail -n 5 "$SCRATCH/mbox.err" | sed 's/^/    | /'; return 1; }
	[ "$(grep -c '^Subject: ' "$mbox")" = 3 ]
	grep -q "^Subject: \[PATCH v3 0/2\] $(head -n 1 patches/cover-letter)$" "$mbox"
	grep -q '^Subject: \[PATCH v3 2/2\] net: second$' "$mbox"
	grep -q '^Changes since RFC v2:$' "$mbox"
	grep -q ' 1 file changed, 2 insertions' "$mbox" # the diffstat
	# threaded: both patches answer the cover letter's Message-Id
	local id
	id=$(sed -n '1,/^$/s/^Message-Id: //p' "$mbox" | head -n 1)
	# one assertion per line: under set -e, "[ a ] && [ b ]" with a false
	# [ a ] does not stop the test (the id was not checked)
	[ -n "$id" ]
	[ "$(grep -c "^In-Reply-To: $id" "$mbox")" = 2 ]
	# from and signed off by the runner, the placeholder sign-offs gone
	[ "$(grep -c "^From: $me$" "$mbox")" = 3 ]
	[ "$(grep -c "^Signed-off-by: $me$" "$mbox")" = 2 ]
	if grep -q '\.invalid' "$mbox"; then echo "    a placeholder is left:"; grep -n '\.invalid' "$mbox" | head -3; return 1; fi
	# the credit, in 2/2 only, above the sign-off
	[ "$(grep -c "^$ian$" "$mbox")" = 1 ]
	sed -n '/^Subject: \[PATCH v3 2\/2\]/,/^---$/p' "$mbox" | grep -A2 "^$ian$" | grep -q "^Signed-off-by: $me$"
	# each patch carries get_maintainer.pl's Cc list (datagram.c: netdev, davem)
	[ "$(sed -n '/^Cc: /,/^$/p' "$mbox" | grep -c 'netdev@vger.kernel.org')" = 3 ]
	[ "$(grep -c '^Cc: "David S. Miller" <davem@davemloft.net>,$' "$mbox")" = 2 ]
	# git am of the patches onto v3.1 + base gives the series' tree
	grep -q "git am of the mbox onto v3.1 + base: the series' tree" "$SCRATCH/mbox.err"
	# a credit for a patch the series does not have stops the export
	printf 'net: third | %s\n' "$ian" >> "$d/credits"
	expect_fail "credits a patch the series does not have: 'net: third'" -- \
		mbox_as "Mbox Tester" mbox.tester@example.org env PATCHES_DIR="$d" BUILD_DIR="$GATE_SELFTEST" scripts/export-mbox "$SCRATCH/mbox/s.mbox"
	echo "mbox: 3 messages, threaded on $id, from $me, Cc'd, git am gives the series"
}
register mbox-export t_mbox gate
