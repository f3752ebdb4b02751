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
