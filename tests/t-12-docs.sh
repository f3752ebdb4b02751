# The documents name only what exists: every repository path (scripts/...,
# docs/..., Makefile, ...) and every `make TARGET` that README.md and the
# Markdown files under docs/ mention, and README.md stays a short entry
# point (at most 250 lines; the rest lives under docs/).
# shellcheck shell=bash

DOCS_README_MAX=250

# docs_dead FILE...: print each path or make target the files name that
# does not exist, as "FILE:LINE: what", then "# checked P paths, T make
# targets".
# A path is a word that starts with a top-level folder of the repository
# (or is Makefile), not preceded by a character that makes it part of
# another path or an assignment (/, ~, $, =, ., a letter: build/series/src/
# scripts/... is the kernel's, COCCI=scripts/... an argument), and not
# followed by a pattern (*, <, $, {, [, an ellipsis: patches/NNNN-*.patch).
# A program counts by its source (host/discard: host/discard.c).
# Generated paths (build/...) are not checked. A make target is the word
# after "make" in code (a fenced block or a `span`); "make -C DIR" is
# another tree's make and is not checked. Targets: the Makefile's rules.
docs_dead() {
	perl -e '
		use strict; use warnings;
		my %target;
		open(my $mk, "<", "Makefile") or die "Makefile: $!\n";
		while (<$mk>) {
			next if /^\t/ || /^\s*#/;
			if (/^\.PHONY\s*:(.*)/) { $target{$_} = 1 for split " ", $1; next }
			if (/^([A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*)*)\s*:(?!=)/) { $target{$_} = 1 for split " ", $1 }
		}
		my ($np, $nt) = (0, 0);
		my $dir = qr{(?:\.ci|bench|common|configs|docs|guest|host|patches|profiles|qemu-plugin|scripts|tests)};
		for my $f (@ARGV) {
			open(my $fh, "<", $f) or die "$f: $!\n";
			local $/; my $text = <$fh>; close $fh;
			my $lineof = sub { 1 + (substr($text, 0, $_[0]) =~ tr/\n//) };
			while ($text =~ m{(?<![\w./~\$=-])($dir/[\w./+-]*+|Makefile)(?![\w*<\$\{\[\x{2026}]|\xe2\x80\xa6)}g) {
				my ($p, $at) = ($1, $-[1]);
				next if substr($text, $+[1], 3) eq "...";
				$p =~ s/[.,:;-]+$//;
				$np++;
				print "$f:", $lineof->($at), ": no such path: $p\n" unless -e $p || -e "$p.c";
			}
			# code: fenced blocks, then `spans` (which may wrap a line)
			my @code;
			while ($text =~ m{^```[^\n]*\n(.*?)^```}gms) { push @code, [$1, $-[1]] }
			(my $prose = $text) =~ s{^```[^\n]*\n(.*?)^```}{"\0" x length($&)}gmse;
			while ($prose =~ m{`([^`\0]+)`}g) { push @code, [$1, $-[1]] }
			for my $c (@code) {
				my ($s, $base) = @$c;
				while ($s =~ m{(?<![\w./-])make\s+([a-z][\w-]*)}g) {
					$nt++;
					print "$f:", $lineof->($base + $-[1]), ": no such make target: make $1\n" unless $target{$1};
				}
			}
		}
		print "# checked $np paths, $nt make targets\n";
	' "$@"
}

t_docs_paths() {
	local files out dead n l
	files=$( { echo README.md; find docs -name '*.md'; } | LC_ALL=C sort)
	# shellcheck disable=SC2086 # one path a line, none with a space
	out=$(docs_dead $files) || { echo "    the check itself failed (above)"; return 1; }
	dead=$(grep -v '^# ' <<<"$out" || true)
	if [ -n "$dead" ]; then
		echo "    the documents name what does not exist (fix the name, or the document):"
		while IFS= read -r l; do echo "    $l"; done <<<"$dead"
		return 1
	fi
	echo "$(echo "$files" | wc -l) documents, $(sed -n 's/^# checked //p' <<<"$out"): every one exists"
	n=$(wc -l < README.md)
	if [ "$n" -gt $DOCS_README_MAX ]; then
		echo "    README.md has $n lines, more than $DOCS_README_MAX: move the detail to docs/ (README.md's map lists them)"
		return 1
	fi
	echo "README.md: $n lines (at most $DOCS_README_MAX)"
	# the check finds what it must: a planted dead path and make target
	printf 'See `scripts/no-such-script` and\n\n```sh\nmake no-such-target\nmake test\n```\nand docs/redtest.md.\n' > "$SCRATCH/planted.md"
	out=$(docs_dead "$SCRATCH/planted.md")
	grep -q ":1: no such path: scripts/no-such-script$" <<<"$out" &&
		grep -q ":4: no such make target: make no-such-target$" <<<"$out" &&
		[ "$(grep -vc '^# ' <<<"$out")" = 2 ] ||
		{ echo "    the check missed a planted dead path or target, or flagged a live one:"; echo "$out" | sed 's/^/    | /'; return 1; }
}
register docs-paths-exist t_docs_paths quick
