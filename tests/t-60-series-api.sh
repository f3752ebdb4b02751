# Series part 1: the skb frag accessor API. Every direct user of a
# fragment's page is converted: the grep counter and the Coccinelle
# checker both find none in the series tree (outside skbuff.h, which
# implements the accessors), while vanilla v3.1 has them; every patch of
# the queue passes checkpatch without errors.
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

# The Coccinelle checker, in report mode over the whole tree (~20 s).
t_frag_users_cocci() {
	local src van out n
	src=$(scripts/prepare-tree series)
	command -v spatch >/dev/null || { echo "    spatch missing (scripts/deps installs coccinelle)"; return 1; }
	out=$(cd "$src" && spatch -D report --very-quiet --no-show-diff -j 2 \
		--sp-file scripts/coccinelle/skb_frag/skb_frag_direct.cocci \
		--no-includes --include-headers --dir . 2>/dev/null | grep -v '^\./include/linux/skbuff\.h:' || true)
	n=$(grep -c 'skb_frag_\* accessors' <<<"$out" || true)
	echo "    direct uses outside include/linux/skbuff.h: $n"
	[ "$n" = 0 ] || { echo "$out" | head -20 | sed 's/^/    /'; return 1; }
	# and it does find them where they are: v3.1's net/core/skbuff.c
	van=$(scripts/prepare-tree vanilla)
	out=$(spatch -D report --very-quiet --no-show-diff \
		--sp-file "$src/scripts/coccinelle/skb_frag/skb_frag_direct.cocci" \
		--no-includes --include-headers "$van/net/core/skbuff.c" 2>/dev/null || true)
	n=$(grep -c 'skb_frag_\* accessors' <<<"$out" || true)
	echo "    direct uses in v3.1 net/core/skbuff.c: $n"
	[ "$n" -gt 10 ]
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
	out=$(spatch -D report --very-quiet --no-show-diff --no-includes --include-headers \
		--sp-file "$src/scripts/coccinelle/skb_frag/skb_frag_direct.cocci" \
		"$SCRATCH"/conv/*.c 2>/dev/null || true)
	[ -z "$out" ] || { echo "    left after conversion:"; echo "$out" | sed 's/^/    /'; return 1; }
	grep -q '__skb_frag_set_page(&frags\[i\], (void \*)pending_idx)' "$SCRATCH/conv/netback.c" ||
		{ echo "    netback: frags[i] index lost"; grep -n 'pending_idx)' "$SCRATCH/conv/netback.c" | head -3; return 1; }
	grep -q '__skb_frag_unref(&skb_frags_rx\[nr\])' "$SCRATCH/conv/en_rx.c" ||
		{ echo "    mlx4: skb_frags_rx[nr] index lost"; return 1; }
	grep -q 'skb_frag_ref(skb, i)' "$SCRATCH/conv/skbuff.c"
}

t_series_checkpatch() {
	scripts/prepare-tree series >/dev/null
	scripts/checkpatch
}

register frag-users-grep t_frag_users_grep
register frag-users-cocci t_frag_users_cocci
register frag-cocci-converts t_frag_cocci_converts
register series-checkpatch t_series_checkpatch
