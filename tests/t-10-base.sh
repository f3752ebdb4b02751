# Base-tree import: every source, and a clear error for a missing or wrong tree.
# shellcheck shell=bash

# A repository that is not v3.1: one small commit, tagged v3.1 on request.
fake_repo() {
	local d=$1
	git init -q "$d"
	echo "not linux" > "$d/README"
	git -C "$d" add README
	git -C "$d" -c user.name=t -c user.email=t@t commit -q -m fake
	[ "${2:-}" != tag ] || git -C "$d" tag v3.1
}

t_import_cache() {
	# the real import: from the cache outside the checkout (CI's source)
	local g
	g=$(scripts/import-base)
	[ "$(git --git-dir="$g" rev-parse refs/heads/v3.1-base^{tree})" = 7bb7c72c515eaf036c0b4033be82bb4b3c0ce598 ]
	echo "cache $g holds tree 7bb7c72c"
}

t_import_missing() {
	expect_fail "no v3.1 base tree" "LINUX_GIT=/path/to/linux" "$SCRATCH/empty-cache" -- \
		env -u LINUX_GIT KFRAG_CACHE="$SCRATCH/empty-cache" KFRAG_OFFLINE=1 scripts/import-base
}

t_import_not_git() {
	expect_fail "LINUX_GIT=$SCRATCH/nowhere is not a git repository" -- \
		env LINUX_GIT="$SCRATCH/nowhere" KFRAG_CACHE="$SCRATCH/c1" scripts/import-base
}

t_import_no_v31() {
	fake_repo "$SCRATCH/r-plain"
	expect_fail "does not contain v3.1" "c3b92c8787367a8bb53d57d9789b558f1295cc96" -- \
		env LINUX_GIT="$SCRATCH/r-plain" KFRAG_CACHE="$SCRATCH/c2" scripts/import-base
	[ ! -e "$SCRATCH/c2/linux-v3.1.git" ] || { echo "    a cache was written"; return 1; }
}

t_import_wrong_tree_git() {
	fake_repo "$SCRATCH/r-tag" tag
	local t
	t=$(git -C "$SCRATCH/r-tag" rev-parse HEAD^{tree})
	expect_fail "tree id mismatch" "has tree $t" "expected tree 7bb7c72c515eaf036c0b4033be82bb4b3c0ce598" -- \
		env LINUX_GIT="$SCRATCH/r-tag" KFRAG_CACHE="$SCRATCH/c3" scripts/import-base
}

t_import_wrong_tree_cache() {
	# a cache whose v3.1 ref holds something else
	fake_repo "$SCRATCH/r-c"
	mkdir -p "$SCRATCH/c4"
	git clone -q --bare "$SCRATCH/r-c" "$SCRATCH/c4/linux-v3.1.git"
	git --git-dir="$SCRATCH/c4/linux-v3.1.git" update-ref refs/heads/v3.1-base HEAD
	expect_fail "the base-tree cache holds the wrong tree" \
		"found:    tree $(git -C "$SCRATCH/r-c" rev-parse HEAD^{tree})" \
		"expected: tree 7bb7c72c515eaf036c0b4033be82bb4b3c0ce598" "rm -rf" -- \
		env -u LINUX_GIT KFRAG_CACHE="$SCRATCH/c4" KFRAG_OFFLINE=1 scripts/import-base
}

t_import_wrong_tree_tarball() {
	mkdir -p "$SCRATCH/tb/linux-3.1"
	echo "not linux" > "$SCRATCH/tb/linux-3.1/README"
	tar -C "$SCRATCH/tb" -cJf "$SCRATCH/tb/linux-3.1.tar.xz" linux-3.1
	expect_fail "tree id mismatch in file://$SCRATCH/tb/linux-3.1.tar.xz" \
		"expected tree 7bb7c72c515eaf036c0b4033be82bb4b3c0ce598" -- \
		env -u LINUX_GIT KFRAG_CACHE="$SCRATCH/c5" \
		KERNEL_ORG_URL="file://$SCRATCH/tb/linux-3.1.tar.xz" scripts/import-base
}

t_import_tarball() {
	# path c) end to end: a tarball laid out as kernel.org's (made here from
	# the cache, since CI has no internet) must import to the v3.1 tree id
	local g
	g=$(scripts/import-base)
	git --git-dir="$g" archive --format=tar --prefix=linux-3.1/ refs/heads/v3.1-base \
		> "$SCRATCH/linux-3.1.tar"
	g=$(env -u LINUX_GIT KFRAG_CACHE="$SCRATCH/c6" \
		KERNEL_ORG_URL="file://$SCRATCH/linux-3.1.tar" scripts/import-base)
	[ "$(git --git-dir="$g" rev-parse refs/heads/v3.1-base^{tree})" = 7bb7c72c515eaf036c0b4033be82bb4b3c0ce598 ]
	rm -rf "$SCRATCH/c6" "$SCRATCH/linux-3.1.tar"
	echo "tarball import verified: tree 7bb7c72c"
}

register import-cache t_import_cache quick
register import-missing-tree t_import_missing quick
register import-linux-git-not-a-repo t_import_not_git quick
register import-linux-git-without-v3.1 t_import_no_v31 quick
register import-wrong-tree-linux-git t_import_wrong_tree_git quick
register import-wrong-tree-cache t_import_wrong_tree_cache quick
register import-wrong-tree-tarball t_import_wrong_tree_tarball quick
register import-tarball t_import_tarball quick
