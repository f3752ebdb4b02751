# Patch queues: a patch that does not apply is named, with the fix.
# shellcheck shell=bash

t_patch_does_not_apply() {
	local pd=$SCRATCH/patches
	mkdir -p "$pd"
	cp -r patches/base "$pd/base"
	cat > "$pd/0001-broken.patch" <<'PATCH'
From: Test <t@t>
Subject: [PATCH] broken: context that v3.1 does not have

Signed-off-by: Test <t@t>
---
 Makefile | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,4 +1,4 @@
-VERSION = 9
+VERSION = 10
 PATCHLEVEL = 99
 SUBLEVEL = 0
 EXTRAVERSION =
PATCH
	echo 0001-broken.patch > "$pd/series"
	expect_fail "patch $pd/0001-broken.patch does not apply to the series tree" \
		"after $(grep -c . patches/base/series) patch(es)" -- \
		env PATCHES_DIR="$pd" BUILD_DIR="$SCRATCH/build" scripts/prepare-tree series
	# the series file naming a patch that is not there
	echo 0002-missing.patch > "$pd/series"
	expect_fail "names 0002-missing.patch, which does not exist" -- \
		env PATCHES_DIR="$pd" BUILD_DIR="$SCRATCH/build" scripts/prepare-tree series
	rm -rf "$SCRATCH/build"
}

register patch-does-not-apply t_patch_does_not_apply quick

# A changed queue is applied again from the base, but a file whose content
# comes back the same keeps its mtime (make rebuilds only what changed):
# a queue of two patches; the second one changes; the first one's file
# keeps the mtime it had, to the nanosecond, the second one's is new.
t_requeue_keeps_mtimes() {
	local pd=$SCRATCH/patches b=$SCRATCH/build src old=1000000000.700000000 f1=CREDITS f2=MAINTAINERS start
	mkdir -p "$pd"
	cp -r patches/base "$pd/base"
	clean_change $f1 "$SCRATCH/one" "kfrag test: one"
	mkpatch "$pd/0001-one.patch" $f1 "one" "$SCRATCH/one.orig" "$SCRATCH/one"
	clean_change $f2 "$SCRATCH/two" "kfrag test: two"
	mkpatch "$pd/0002-two.patch" $f2 "two" "$SCRATCH/two.orig" "$SCRATCH/two"
	printf '%s\n' 0001-one.patch 0002-two.patch > "$pd/series"
	src=$(PATCHES_DIR=$pd BUILD_DIR=$b scripts/prepare-tree series 2>/dev/null) || { echo "    the queue did not apply"; return 1; }
	touch -m -d "@$old" "$src/$f1" "$src/$f2"
	start=$(date +%s.%N)
	clean_change $f2 "$SCRATCH/two" "kfrag test: two, changed"
	mkpatch "$pd/0002-two.patch" $f2 "two" "$SCRATCH/two.orig" "$SCRATCH/two"
	PATCHES_DIR=$pd BUILD_DIR=$b scripts/prepare-tree series > /dev/null 2> "$SCRATCH/log" ||
		{ echo "    the changed queue did not apply"; cat "$SCRATCH/log"; return 1; }
	grep -q "two, changed" "$src/$f2" || { echo "    the change is not in the tree"; return 1; }
	[ "$(stat -c %.9Y "$src/$f1")" = $old ] || { echo "    $f1, unchanged, has mtime $(stat -c %.9Y "$src/$f1"), not $old"; return 1; }
	awk -v a="$(stat -c %.9Y "$src/$f2")" -v b="$start" 'BEGIN { exit !(a >= b) }' ||
		{ echo "    $f2, changed, is older than the re-apply"; return 1; }
	echo "    $(grep 'kept their mtime' "$SCRATCH/log")"
}
register requeue-keeps-mtimes t_requeue_keeps_mtimes quick
