# Series part 1: the skb frag accessor API. Every direct user of a
# fragment's page is converted: the grep counter and the Coccinelle
# checker both find none in the series tree (outside skbuff.h, which
# implements the accessors), while vanilla v3.1 has them; every patch of
# the queue passes the gate's checkpatch.
# shellcheck shell=bash

t_frag_users_grep() {
	local src van s v
	src=$(scripts/prepare-tree series)
	van=$(scripts/prepare-tree vanilla)
	s=$(scripts/count-frag-users "$src")
	v=$(scripts/count-frag-users "$van")
	echo "    vanilla: $v; series: $s"
	# the counter must see the v3.1 users, else it proves nothing
	[ "${v%% *}" -ge 90 ] || { echo "    counter finds too few users on vanilla"; return 1; }
	[ "$s" = "0 files, 0 uses" ] || { scripts/count-frag-users -l "$src" | sed 's/^/    /'; return 1; }
}

# cocci_direct_uses TREE OUT: the series' checker (skb_frag_direct.cocci)
# in report mode over the whole of TREE, the one command for every tree;
# its reports outside include/linux/skbuff.h (which implements the
# accessors) in OUT, one per use. Fails, showing spatch's errors, when
# spatch does: a failed run is not "0 uses".
cocci_direct_uses() {
	local tree=$1 out=$2 rc=0
	(cd "$tree" && spatch -D report --very-quiet --no-show-diff -j 2 \
		--sp-file "$COCCI_DIRECT" --no-includes --include-headers --dir .) \
		> "$out.raw" 2> "$out.err" || rc=$?
	if [ $rc != 0 ]; then
		echo "    spatch failed on $tree (exit status $rc):"
		tail -n 8 "$out.err" | sed 's/^/    | /'
		return 1
	fi
	grep 'skb_frag_\* accessors' "$out.raw" | grep -v '^\./include/linux/skbuff\.h:' > "$out" || true
}
# What that command reports on vanilla v3.1 (Debian 12's spatch 1.1.1,
# the checker of patch 0002): uses, and the files they are in. The tree is
# pinned by its id, the checker by the queue and spatch by the distribution,
# so the number is exact: fewer means the run lost files (a crash in one
# worker, a parse failure), more or fewer after a change to the checker
# means the change is to be looked at, and this number updated with it.
COCCI_VANILLA_USES=197
COCCI_VANILLA_FILES=92

# The Coccinelle checker, in report mode over the whole tree (~20 s a
# tree): none left in the series, all of them found in vanilla.
t_frag_users_cocci() {
	local src van s v vf
	src=$(scripts/prepare-tree series)
	van=$(scripts/prepare-tree vanilla)
	command -v spatch >/dev/null || { echo "    spatch missing (scripts/deps installs coccinelle)"; return 1; }
	COCCI_DIRECT=$src/scripts/coccinelle/skb_frag/skb_frag_direct.cocci
	cocci_direct_uses "$src" "$SCRATCH/cocci-series"
	cocci_direct_uses "$van" "$SCRATCH/cocci-vanilla"
	s=$(grep -c . "$SCRATCH/cocci-series" || true)
	v=$(grep -c . "$SCRATCH/cocci-vanilla" || true)
	vf=$(cut -d: -f1 "$SCRATCH/cocci-vanilla" | sort -u | grep -c . || true)
	echo "    direct uses outside include/linux/skbuff.h: series $s; v3.1 $v in $vf files"
	if [ "$s" != 0 ]; then
		head -n 20 "$SCRATCH/cocci-series" | sed 's/^/    /'
		return 1
	fi
	# the same command must find v3.1's users, all of them, else it proves nothing
	if [ "$v" != "$COCCI_VANILLA_USES" ] || [ "$vf" != "$COCCI_VANILLA_FILES" ]; then
		echo "    on v3.1 the checker must report $COCCI_VANILLA_USES uses in $COCCI_VANILLA_FILES files"
		return 1
	fi
	# and in the files the grep counter (scripts/count-frag-users, which
	# shares nothing with it) finds there
	cut -d: -f1 "$SCRATCH/cocci-vanilla" | sed 's|^\./||' | sort -u > "$SCRATCH/cocci-vanilla.files"
	scripts/count-frag-users -l "$van" | awk 'NF == 2 && $1 ~ /^[0-9]+$/ { print $2 }' | sort -u > "$SCRATCH/grep-vanilla.files"
	if ! diff "$SCRATCH/grep-vanilla.files" "$SCRATCH/cocci-vanilla.files" > "$SCRATCH/files.diff"; then
		echo "    v3.1 files with direct uses, grep counter (<) vs checker (>):"
		sed 's/^/    /' "$SCRATCH/files.diff" | head -n 20
		return 1
	fi
}

# The conversion semantic patch on v3.1 files leaves no direct use, and
# keeps array indexes (frags[i].page must not become skb_frag_page(frags):
# Coccinelle's ptr_to_array isomorphism did that until it was disabled).
t_frag_cocci_converts() {
	local src van f out
	src=$(scripts/prepare-tree series)
	van=$(scripts/prepare-tree vanilla)
	command -v spatch >/dev/null || { echo "    spatch missing"; return 1; }
	mkdir -p "$SCRATCH/conv"
	for f in net/core/skbuff.c net/ipv4/tcp.c drivers/net/xen-netback/netback.c drivers/net/mlx4/en_rx.c; do
		cp "$van/$f" "$SCRATCH/conv/$(basename "$f")"
	done
	spatch -D patch --very-quiet --in-place --no-includes --include-headers \
		--sp-file "$src/scripts/coccinelle/skb_frag/skb_frag_api.cocci" \
		"$SCRATCH"/conv/*.c >/dev/null 2>&1
	# (a failed check is not "none left": spatch's status counts)
	out=$(spatch -D report --very-quiet --no-show-diff --no-includes --include-headers \
		--sp-file "$src/scripts/coccinelle/skb_frag/skb_frag_direct.cocci" \
		"$SCRATCH"/conv/*.c 2> "$SCRATCH/conv.err") ||
		{ echo "    spatch failed:"; tail -n 8 "$SCRATCH/conv.err" | sed 's/^/    | /'; return 1; }
	[ -z "$out" ] || { echo "    left after conversion:"; echo "$out" | sed 's/^/    /'; return 1; }
	grep -q '__skb_frag_set_page(&frags\[i\], (void \*)pending_idx)' "$SCRATCH/conv/netback.c" ||
		{ echo "    netback: frags[i] index lost"; grep -n 'pending_idx)' "$SCRATCH/conv/netback.c" | head -3; return 1; }
	grep -q '__skb_frag_unref(&skb_frags_rx\[nr\])' "$SCRATCH/conv/en_rx.c" ||
		{ echo "    mlx4: skb_frags_rx[nr] index lost"; return 1; }
	grep -q 'skb_frag_ref(skb, i)' "$SCRATCH/conv/skbuff.c" ||
		{ echo "    skbuff.c: skb_frag_ref(skb, i) not written"; return 1; }

	# another structure's frags array is not a fragment: left alone, while
	# a struct skb_shared_info's and cxgb4's struct pkt_gl's are converted
	cat > "$SCRATCH/conv/other.c" <<-'C'
	struct page;
	struct skb_shared_info;
	struct pkt_gl;
	struct sg_page { struct page *page; unsigned int page_offset; };
	struct my_ring { struct sg_page frags[4]; };
	void put_page(struct page *page);
	void f(struct my_ring *ring, struct skb_shared_info *shinfo, struct pkt_gl *gl, int i)
	{
		put_page(ring->frags[i].page);
		put_page(shinfo->frags[i].page);
		put_page(gl->frags[i].page);
	}
	C
	spatch -D patch --very-quiet --in-place --no-includes --include-headers \
		--sp-file "$src/scripts/coccinelle/skb_frag/skb_frag_api.cocci" \
		"$SCRATCH/conv/other.c" >/dev/null 2>&1
	grep -q 'put_page(ring->frags\[i\]\.page);' "$SCRATCH/conv/other.c" ||
		{ echo "    another structure's frags array was converted:"; grep -n 'ring->' "$SCRATCH/conv/other.c" | sed 's/^/    /'; return 1; }
	grep -q '__skb_frag_unref(&shinfo->frags\[i\]);' "$SCRATCH/conv/other.c" &&
		grep -q '__skb_frag_unref(&gl->frags\[i\]);' "$SCRATCH/conv/other.c" ||
		{ echo "    shinfo->frags[i] / gl->frags[i] not converted:"; sed 's/^/    | /' "$SCRATCH/conv/other.c"; return 1; }
}

# `make coccicheck MODE=report` with the tree's own semantic patches, all
# of them, in a tree holding the series' net/core and include/ and, as a
# control, two unconverted v3.1 drivers (mlx4's en_rx.c, sky2.c): the
# series' coccicheck runs to the end (every semantic patch with a report
# mode run, the patch-only ones skipped: base patch 0011), and the checker
# (skb_frag_direct.cocci) and the converter (skb_frag_api.cocci) report
# exactly the v3.1 drivers' direct uses, as many as the grep counter finds
# there (so a run that checks nothing cannot pass), and none
# in the series' files outside skbuff.h. v3.1's own coccicheck stops at
# the first patch-only semantic patch (spatch 1.1.1: "virtual rule report
# not supported"), so this fails without the base patch. Not the whole
# kernel: that takes hours.
t_coccicheck_report() {
	local src van t=$SCRATCH/cc out rc=0 nrep=0 nskip=0 f ctl ctlre want got conv
	local modere='^virtual[[:space:]]+(.*[^[:alnum:]_])?report([^[:alnum:]_]|$)'
	src=$(scripts/prepare-tree series)
	van=$(scripts/prepare-tree vanilla)
	command -v spatch >/dev/null || { echo "    spatch missing (scripts/deps installs coccinelle)"; return 1; }
	rm -rf "$t"
	mkdir -p "$t/scripts" "$t/net"
	cp -r "$src/scripts/coccinelle" "$src/scripts/coccicheck" "$t/scripts/"
	cp -r "$src/include" "$t/"
	cp -r "$src/net/core" "$t/net/"
	ctl="drivers/net/mlx4/en_rx.c drivers/net/sky2.c"
	ctlre="/($(sed 's/\./\\./g; s/ /|/g' <<<"$ctl")):"
	for f in $ctl; do
		mkdir -p "$t/$(dirname "$f")"
		cp "$van/$f" "$t/$f"
	done
	while read -r f; do
		if grep -Eq "$modere" "$f"; then nrep=$((nrep + 1)); else nskip=$((nskip + 1)); fi
	done < <(find "$t/scripts/coccinelle" -name '*.cocci' -type f)
	out=$(cd "$t" && srctree=$t MODE=report timeout 1200 sh scripts/coccicheck 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		echo "    make coccicheck MODE=report failed (exit $rc) in the series' tree:"
		tail -n 6 <<<"$out" | sed 's/^/    | /'
		return 1
	fi
	[ "$(grep -c '^Processing ' <<<"$out")" = "$nrep" ] && [ "$(grep -c '^Skipping ' <<<"$out")" = "$nskip" ] ||
		{ echo "    expected $nrep semantic patches run and $nskip skipped:"; grep '^Processing \|^Skipping ' <<<"$out" | sed 's/^/    /'; return 1; }
	# the control: the checker's reports in the v3.1 drivers, one per use
	# the grep counter (scripts/count-frag-users, sharing nothing with it) finds
	want=$(scripts/count-frag-users -l "$van" | awk -v c=" $ctl " 'NF == 2 && index(c, " " $2 " ") { n += $1 } END { print n + 0 }')
	got=$(grep 'use the skb_frag_\* accessors, not' <<<"$out" | grep -cE "$ctlre" || true)
	conv=$(grep 'convertible to the skb_frag_\* accessors' <<<"$out" | grep -cE "$ctlre" || true)
	if [ "$want" = 0 ] || [ "$got" != "$want" ] || [ "$conv" != "$want" ]; then
		echo "    in the v3.1 control drivers the checker reported $got direct uses and the converter $conv; the grep counter finds $want"
		return 1
	fi
	if grep 'skb_frag_\* accessors' <<<"$out" | grep -vE "$ctlre|/include/linux/skbuff\\.h:"; then
		echo "    direct uses reported in the series' files (above)"
		return 1
	fi
	echo "    series: $nrep semantic patches run to the end, $nskip without a report mode skipped; control: $got of $want v3.1 uses reported (converter: $conv)"

	# v3.1's coccicheck, the same tree: stops at the first patch-only one
	base_blob scripts/coccicheck > "$t/scripts/coccicheck"
	expect_fail "virtual rule report not supported" -- \
		sh -c "cd '$t' && srctree='$t' MODE=report timeout 1200 sh scripts/coccicheck"
	echo "    v3.1's coccicheck: stops at the first semantic patch without a report mode"
}

# The hand-edit check (scripts/check-handedits): on the series, every
# hunk the semantic patch does not write is named under "Hand-edited:"
# in its patch's message, and et131x's is not among them (the semantic
# patch maps &frags[i - 1]). Then on a copy of the queue: an altered hunk
# (et131x mapping frags, i.e. fragment 0, as the series once did) is
# flagged and named; named under Hand-edited: it passes; a file named
# there that the patch does not hand-edit is flagged as stale.
t_handedits() {
	local q=$SCRATCH/q-hand p out et=drivers/staging/et131x/et1310_tx.c
	command -v spatch >/dev/null || { echo "    spatch missing (scripts/deps installs coccinelle)"; return 1; }
	export HANDEDITS_CACHE=$BUILD_DIR/handedits/cache
	out=$(HANDEDITS_DIR=$SCRATCH/he scripts/check-handedits) || { echo "$out" | sed 's/^/    /' | tail -20; return 1; }
	echo "    $(tail -n 1 <<<"$out")"
	grep -q ' 0 unjustified, 0 stale ' <<<"$out"
	if grep -q "$et" <<<"$out"; then echo "    $et is hand-edited"; return 1; fi
	grep -q '^+.*skb_frag_dma_map(&etdev->pdev->dev, &frags\[i - 1\],$' patches/0035-*.patch ||
		{ echo "    et131x does not map &frags[i - 1]"; return 1; }

	rm -rf "$q"
	cp -r patches "$q"
	p=$(cd "$q" && ls 0035-*.patch)
	sed -i -e 's/^+\(\t*    skb_frag_dma_map(&etdev->pdev->dev, \)&frags\[i - 1\],$/+\1frags, 0,/' \
		-e 's/^+\(\t*     \)0, \(frags\[i - 1\]\.size,\)$/+\1\2/' "$q/$p"
	grep -q '^+.*skb_frag_dma_map(&etdev->pdev->dev, frags, 0,$' "$q/$p" || { echo "    could not alter $p"; return 1; }
	expect_fail "$p:" "$et" "UNJUSTIFIED" "1 unjustified" "+			    skb_frag_dma_map(&etdev->pdev->dev, frags, 0," -- \
		env PATCHES_DIR="$q" HANDEDITS_DIR="$SCRATCH/he" scripts/check-handedits "$p"

	# named, it is justified
	sed -i '0,/^Signed-off-by:/s//Hand-edited:\n- '"${et//\//\\/}"': maps fragment 0 (test).\n\n&/' "$q/$p"
	PATCHES_DIR=$q HANDEDITS_DIR=$SCRATCH/he scripts/check-handedits "$p" | tail -n 1 | grep -q ' 0 unjustified, 0 stale '

	# a file named that the patch does not hand-edit
	sed -i 's/^- '"${et//\//\\/}"': maps fragment 0 (test)\.$/&\n- drivers\/staging\/hv\/netvsc_drv.c: (test)/' "$q/$p"
	expect_fail "drivers/staging/hv/netvsc_drv.c" "STALE" "1 stale" -- \
		env PATCHES_DIR="$q" HANDEDITS_DIR="$SCRATCH/he" scripts/check-handedits "$p"
	echo "    altered et131x hunk flagged; named: passes; a stale name flagged"
}

# The gate's checkpatch column alone (scripts/gate --checkpatch): the
# tree's checkpatch.pl, 0 errors, every warning justified in
# patches/checkpatch.allow; nothing built.
t_series_checkpatch() {
	scripts/gate --checkpatch
}

register frag-users-grep t_frag_users_grep gate
register frag-users-cocci t_frag_users_cocci gate
register frag-cocci-converts t_frag_cocci_converts gate
register frag-handedits t_handedits gate
register coccicheck-report t_coccicheck_report gate
register series-checkpatch t_series_checkpatch gate
