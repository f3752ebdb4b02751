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
	local src out n
	src=$(scripts/prepare-tree series)
	command -v spatch >/dev/null || { echo "    spatch missing (scripts/deps installs coccinelle)"; return 1; }
	out=$(cd "$src" && spatch -D report --very-quiet --no-show-diff -j 2 \
		--sp-file scripts/coccinelle/skb_frag/skb_frag_direct.cocci \
		--no-includes --include-headers --dir . 2>/dev/null | grep -v '^\./include/linux/skbuff\.h:' || true)
	n=$(grep -c 'skb_frag_\* accessors' <<<"$out" || true)
	echo "    direct uses outside include/linux/skbuff.h: $n"
	[ "$n" = 0 ] || { echo "$out" | head -20 | sed 's/^/    /'; return 1; }
	# and it does find them where they are: v3.1's net/core/skbuff.c
	out=$(cd "$src" && git show "$(git rev-list --reverse HEAD | sed -n 1p)":net/core/skbuff.c > "$SCRATCH/skbuff.c" &&
		spatch -D report --very-quiet --no-show-diff \
		--sp-file scripts/coccinelle/skb_frag/skb_frag_direct.cocci \
		--no-includes --include-headers "$SCRATCH/skbuff.c" 2>/dev/null || true)
	n=$(grep -c 'skb_frag_\* accessors' <<<"$out" || true)
	echo "    direct uses in v3.1 net/core/skbuff.c: $n"
	[ "$n" -gt 10 ]
}

t_series_checkpatch() {
	scripts/prepare-tree series >/dev/null
	scripts/checkpatch
}

register frag-users-grep t_frag_users_grep
register frag-users-cocci t_frag_users_cocci
register series-checkpatch t_series_checkpatch
