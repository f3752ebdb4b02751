# The one destructor verdict (scripts/lib.sh dtor_verdict, dtor_ok) on
# guest reports with a known answer: everything that is not "each of
# N > 0 destructors destroyed once, every trace line understood, the
# pages referenced exactly when the NIC is zero-copy" is BAD.
# shellcheck shell=bash

# gkv FILE KEY=VALUE...: a guest report of a complete, balanced trace,
# with the given keys changed ("KEY=" drops the key)
gkv() {
	local f=$1 kvs
	shift
	kvs="dtor.trace=complete dtor.inits=5 dtor.destroys=5 dtor.refs=12 dtor.unrefs=12 dtor.live_at_end=0 dtor.bad=0 dtor.unparsed=0"
	: > "$f"
	for k in $kvs; do
		local o
		for o in "$@"; do [ "${o%%=*}" != "${k%%=*}" ] || k=$o; done
		[ -z "${k#*=}" ] || echo "$k" >> "$f"
	done
}

verdict_is() { # verdict_is WANT ZEROCOPY KEY=VALUE...
	local want=$1 zc=$2 got
	shift 2
	gkv "$SCRATCH/g.kv" "$@"
	got=$(. scripts/lib.sh && dtor_verdict "$SCRATCH/g.kv" "$zc")
	case $got in
	$want) echo "ok: ${*:-balanced} zerocopy=$zc -> $got" ;;
	*) echo "    ${*:-balanced} zerocopy=$zc: verdict '$got', expected '$want'"; return 1 ;;
	esac
}

t_dtor_verdict() {
	verdict_is 5=5 1
	verdict_is 5=5 0 dtor.refs=0 dtor.unrefs=0
	# a trace that saw nothing (e.g. a changed event format) is no pass
	verdict_is 'BAD:*inits=0*' 1 dtor.inits=0 dtor.destroys=0 dtor.refs=0
	verdict_is 'BAD:*unparsed=40*' 1 dtor.unparsed=40
	verdict_is 'BAD:*unparsed=*' 1 dtor.unparsed=
	verdict_is 'BAD:*inits=missing*' 1 dtor.inits= dtor.destroys=
	verdict_is 'BAD:*destroys=4*' 1 dtor.destroys=4
	verdict_is 'BAD:*live=1*' 1 dtor.live_at_end=1
	verdict_is 'BAD:*bad=2*' 1 dtor.bad=2
	verdict_is 'BAD:*trace=lost*' 1 dtor.trace=lost
	# zero-copy NIC whose stack took no reference: it copied, proves nothing
	verdict_is 'BAD:*zero-copy-NIC-took-none*' 1 dtor.refs=0 dtor.unrefs=0
	# a copying NIC (csum=off) whose stack referenced the pages
	verdict_is 'BAD:*copying-NIC-took-some*' 0
	verdict_is absent 1 dtor.trace=absent
	verdict_is off 1 dtor.trace=off
}

t_dtor_ok() {
	local c
	(. scripts/lib.sh
	for c in 5=5 1=1 120=120; do dtor_ok "$c" series || { echo "    $c refused"; exit 1; }; done
	for c in 0=0 5=4 absent off BAD:5=5,live=1 "" 05=05x; do
		! dtor_ok "$c" series || { echo "    series: '$c' accepted"; exit 1; }
	done
	dtor_ok absent vanilla && dtor_ok absent copy
	for c in 5=5 off ""; do ! dtor_ok "$c" vanilla || { echo "    vanilla: '$c' accepted"; exit 1; }; done)
}

# which runs must be zero-copy (lib.sh zerocopy_expected)
t_zerocopy_expected() {
	local want nic net off got
	while read -r want nic net off; do
		got=$(. scripts/lib.sh && VM_NIC=$nic VM_NET=$net VM_OFFLOAD=$off zerocopy_expected)
		[ "$got" = "$want" ] || { echo "    $nic on $net (offload '$off'): $got, expected $want"; return 1; }
	done <<-EOF2
	1 e1000 user
	1 e1000-82544gc user
	1 e1000e tap
	1 vmxnet3 user
	1 virtio-net-pci tap
	0 virtio-net-pci user
	0 virtio-net-pci,csum=off tap
	0 e1000,csum=off user
	0 rtl8139 user
	1 rtl8139 user on
	0 pcnet user on
	0 i82559er user
	0 ne2k_pci tap
	0 tulip user
	EOF2
}

# kmemleak (lib.sh kmemleak_ok): on a debug kernel a missing count is no
# clean report; only vanilla v3.1's known leaks are forgiven
t_kmemleak_ok() {
	(. scripts/lib.sh
	echo kmemleak=0 > "$SCRATCH/k0"; echo kmemleak=3 > "$SCRATCH/k3"; : > "$SCRATCH/knone"
	DEBUG=1 kmemleak_ok "$SCRATCH/k0" || { echo "    debug, 0 leaks: refused"; exit 1; }
	! DEBUG=1 kmemleak_ok "$SCRATCH/knone" || { echo "    debug, no kmemleak count: accepted"; exit 1; }
	! DEBUG=1 kmemleak_ok "$SCRATCH/k3" || { echo "    debug, 3 leaks: accepted"; exit 1; }
	DEBUG=0 kmemleak_ok "$SCRATCH/knone" || { echo "    non-debug, no count: refused"; exit 1; }
	! DEBUG=0 kmemleak_ok "$SCRATCH/k3" || { echo "    non-debug, 3 leaks: accepted"; exit 1; }
	# vanilla v3.1's own NFSv4 mount leak (configs/known-leaks) passes, as
	# a real debug run reported it; anything else does not
	known='selinux_parse_opts_str < security_sb_parse_opts_str < nfs_parse_mount_options < nfs_fs_mount < mount_fs < vfs_kern_mount'
	v4='mount.opts=vers=4,minorversion=1,proto=tcp'
	leaks() { # leaks FILE COUNT OPTS LEAK...: a guest report
		local f=$1 k=$2 o=$3 i=0; shift 3
		{ echo "$o"; for l in "$@"; do i=$((i + 1)); echo "kmemleak.$i=$l"; done; echo "kmemleak=$k"; } > "$SCRATCH/$f"
	}
	ok() { DEBUG=1 kmemleak_ok "$SCRATCH/$1" || { echo "    $2: refused ($(kmemleak_unknown "$SCRATCH/$1"))"; exit 1; }; }
	bad() { ! DEBUG=1 kmemleak_ok "$SCRATCH/$1" || { echo "    $2: accepted"; exit 1; }; }
	leaks kk 2 "$v4" "size 64, comm \"kfrag-redtest\": $known" "size 32, comm \"kfrag-redtest\": $known"
	ok kk "NFSv4, the 2 known leaks"
	leaks kcolon 1 "$v4" "size 64, comm \"kworker/0:1\": $known"
	ok kcolon "NFSv4, a known leak of a task with a colon in its name"
	leaks kv3 1 "mount.opts=vers=3,proto=tcp" "size 64, comm \"kfrag-redtest\": $known"
	bad kv3 "NFSv3, the NFSv4 leak (NFSv3 frees those)"
	leaks kunknown 3 "$v4" "size 64, comm \"kfrag-redtest\": $known" \
		"size 96, comm \"kworker/0:1\": skb_frag_destructor_new < xs_sendpages" "size 32, comm \"x\": y < z"
	bad kunknown "an unknown leak beside a known one"
	[ "$(kmemleak_unknown "$SCRATCH/kunknown" | wc -l)" = 2 ] ||
		{ echo "    not every unknown leak named: $(kmemleak_unknown "$SCRATCH/kunknown")"; exit 1; }
	leaks kmore 9 "$v4" "size 64, comm \"a\": $known" "size 64, comm \"a\": $known" "size 64, comm \"a\": $known" \
		"size 64, comm \"a\": $known" "size 64, comm \"a\": $known" "size 64, comm \"a\": $known" \
		"size 64, comm \"a\": $known" "size 64, comm \"a\": $known"
	bad kmore "9 counted, 8 known listed"
	leaks kdeeper 1 "$v4" "size 64, comm \"x\": my_alloc < $known"
	bad kdeeper "a leak one frame deeper than a known one"
	leaks klonger 1 "$v4" "size 64, comm \"x\": ${known/nfs_fs_mount </nfs_fs_mount_helper <}"
	bad klonger "a frame whose name only begins like a known frame"
	leaks knan 1 "$v4"
	sed -i 's/^kmemleak=1$/kmemleak=unavailable/' "$SCRATCH/knan"
	bad knan "kmemleak=unavailable (a scan failed)"
	# a comment line of known-leaks is no signature that forgives everything
	printf '  # indented note\n - | # no frames\n' > "$SCRATCH/known"
	leaks kone 1 "$v4" "size 96, comm \"x\": skb_frag_destructor_new < xs_sendpages"
	! KNOWN_LEAKS=$SCRATCH/known DEBUG=1 kmemleak_ok "$SCRATCH/kone" ||
		{ echo "    a known-leaks file of comments forgave a leak"; exit 1; })
}

# the runner: a test name it does not know is a failure, not "0 passed"
t_runner_unknown() {
	expect_fail "FAIL no-such-test (no such test" "0 passed, 1 failed" -- tests/run no-such-test
}

# wire_covers (lib.sh; scripts/redtest fails a run on it): the capture
# must hold at least the WRITE bytes the guest wrote
t_wire_covers() {
	(. scripts/lib.sh
	cd "$SCRATCH"
	echo bytes=8192 > g; printf 'write_bytes_first=8192\nunjudged=0\n' > w
	[ -z "$(wire_covers g w)" ] || { echo "    equal counts refused"; exit 1; }
	printf 'write_bytes_first=12288\nunjudged=0\n' > w
	[ -z "$(wire_covers g w)" ] || { echo "    more on the wire refused"; exit 1; }
	printf 'write_bytes_first=4096\nunjudged=0\n' > w
	wire_covers g w | grep -q "fewer than the 8192" || { echo "    a short capture accepted"; exit 1; }
	printf 'write_bytes_first=8192\nunjudged=2\n' > w
	wire_covers g w | grep -q "could not judge 2" || { echo "    unjudged transmissions accepted"; exit 1; }
	echo write_bytes_first=8192 > w
	wire_covers g w | grep -q "no unjudged count" || { echo "    a missing unjudged count accepted"; exit 1; }
	: > w
	wire_covers g w | grep -q "no write_bytes_first" || { echo "    no wire count accepted"; exit 1; }
	: > g; echo write_bytes_first=1 > w
	wire_covers g w | grep -q "no bytes count" || { echo "    no guest count accepted"; exit 1; })
}

register runner-unknown-test t_runner_unknown quick
register wire-covers-guest-writes t_wire_covers quick

# tap_judge (lib.sh; tests tap-*, faults' tap scenarios): a tap run's
# counts with a known answer. A base series run that passes, then one
# count changed at a time; each must be refused with its reason.
tapjudged() { # tapjudged PATTERN VARIANT [KEY=VALUE...]: tap_judge's output matches PATTERN
	local want=$1 v=$2 out k
	shift 2
	printf '%s\n' tap.writes_before=1000 tap.writes_during=950 tap.writes_after=1100 \
		tap.nfs_frames=300 tap.poisoned=0 tap.units_ok=200 tap.units_wrong=0 tap.stamps_bad=0 \
		tap.open_ms=10004 tap.at=10 tap.lat_max_before_ms=40 tap.lat_max_during_ms=60 > "$SCRATCH/tap.kv"
	local only=
	for k; do
		if [ "$k" = reuse ]; then only=reuse; else echo "tap.$k" >> "$SCRATCH/tap.kv"; fi # kv takes the last of a key
	done
	out=$(. scripts/lib.sh && tap_judge "$v" "$SCRATCH/tap.kv" $only)
	# shellcheck disable=SC2053 # a glob pattern
	[[ $out == $want ]] || { echo "    $v $*: tap_judge said '$out', expected '$want'"; return 1; }
}
t_tap_judge() {
	tapjudged '' series
	tapjudged '' series writes_during=850 writes_after=900   # 90 % of the smaller window (after)
	tapjudged '*< 90 % of*' series writes_during=3             # held: a hole in the window
	tapjudged '*< 90 % of*' series writes_during=899 writes_after=2000
	tapjudged '*a write took 6015 ms*' series lat_max_during_ms=6015 # a brief hold, rate kept
	tapjudged '' series lat_max_during_ms=180                 # 2 x 40 + 100
	tapjudged '*a write took 181 ms*' series lat_max_during_ms=181
	tapjudged '' series lat_max_before_ms=100 lat_max_during_ms=300
	tapjudged 'a write took 301 ms while the tap was open (slowest before: 100 ms)' series \
		lat_max_before_ms=100 lat_max_during_ms=301
	# reuse: the reuse rules only (a lossy link, a fault in the window)
	tapjudged '' series lat_max_during_ms=6015 writes_during=3 reuse
	tapjudged '*reused buffer*' series units_wrong=1 reuse
	tapjudged '*reused buffer*' series units_wrong=1
	tapjudged '*reused buffer*' series poisoned=2
	tapjudged '*reused buffer*' series stamps_bad=1
	tapjudged '*judged no WRITE data*' series units_ok=0  # a tap handed nothing of the writes
	tapjudged '*read no frame*' series nfs_frames=0
	tapjudged '*more than 0.5 s after*' series open_ms=10600
	tapjudged 'no tap.writes_after count*' series writes_after=
	tapjudged 'no tap.lat_max_during_ms count*' series lat_max_during_ms=x
	tapjudged 'the tap failed: socket*' series error=socket
	# vanilla: the control of the reuse, not of the rate
	tapjudged '*showed no reused buffer*' vanilla
	tapjudged '' vanilla units_wrong=30 writes_during=3 lat_max_during_ms=6000
}
register tap-judge t_tap_judge quick
register dtor-verdict t_dtor_verdict quick
register kmemleak-count-required t_kmemleak_ok quick
register dtor-ok t_dtor_ok quick
register zerocopy-expected t_zerocopy_expected quick

# The guest's trace rules (guest/dtortrace.h, through host/dtcheck) on
# traces with a known answer. The order of events from different CPUs is
# not the order of the operations (on 2 vCPUs a ref's and a destroy's
# event came out after the destructor's next init), so the rules are on
# the counts the operations returned and, at the end, on each
# destructor's totals. The traces that must pass are ones the kernel can
# print (their counts follow from some order of the operations); each bad
# one must be judged bad for its own reason (dtor.bad.1).
# dtr_ev EVENT ARGS [FLAGS]: a trace_pipe line as options/latency-format
# prints it (comm-pid, then CPU 1 and the context flags, "...1" unless
# given: d.s1 is interrupts off, in a softirq)
dtr_ev() {
	printf '  kfrag-re-609     1%s 6573us : skb_frag_destructor_%s: destructor=ffff88001b8bdd98%s\n' \
		"${3:-...1}" "$1" "$2"
}
# dtr_check: the guest's rules on the trace in $f, the report in $f.kv
dtr_check() { "$BUILD_DIR/host/dtcheck" < "$f" | sed "s/^KFRAG-KV: //" > "$f.kv"; }
# dtr_bad REASON: the trace in $f is bad, for REASON
dtr_bad() {
	dtr_check && [ "$(kvget dtor.bad "$f.kv")" -ge 1 ] && grep -q "^dtor.bad.1=$1" "$f.kv" ||
		{ echo "    not bad for '$1': $(grep '^dtor.bad' "$f.kv" | paste -sd ' ')"; return 1; }
}
t_dtortrace_rules() {
	make -s host >/dev/null || return 1
	local f=$SCRATCH/trace
	{ dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev unref " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""
	  dtr_ev init " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy "" d.s1; } > "$f"
	dtr_check && want dtor.bad 0 "$f.kv" && want dtor.destroys 2 "$f.kv" &&
		want dtor.destroys_irqs_off 1 "$f.kv" && want dtor.live_at_end 0 "$f.kv" || return 1
	# SMP: an unref of the first lifetime (the one that left 1) after the second init
	{ dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev unref " ref=0"; dtr_ev destroy ""
	  dtr_ev init " ref=1"; dtr_ev unref " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""; } > "$f"
	dtr_check && want dtor.bad 0 "$f.kv" || return 1
	# SMP: a ref of the first lifetime (2) after the second init
	{ dtr_ev init " ref=1"; dtr_ev unref " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""
	  dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev unref " ref=0"; dtr_ev destroy ""; } > "$f"
	dtr_check && want dtor.bad 0 "$f.kv" || return 1
	# SMP: the first lifetime's destroy after the second init
	{ dtr_ev init " ref=1"; dtr_ev unref " ref=0"; dtr_ev init " ref=1"; dtr_ev destroy ""
	  dtr_ev unref " ref=0"; dtr_ev destroy ""; } > "$f"
	dtr_check && want dtor.bad 0 "$f.kv" && want dtor.live_at_end 0 "$f.kv" || return 1
	# a double unref: the count below zero
	{ dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev unref " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""
	  dtr_ev unref " ref=-1"; } > "$f"
	dtr_bad "count below zero" || return 1
	# ... whose extra unref ended the first lifetime early, and whose
	# last one took the second lifetime's reference (its owner's unref
	# then goes below zero)
	{ dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev unref " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""
	  dtr_ev init " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""; dtr_ev unref " ref=-1"; } > "$f"
	dtr_bad "count below zero" || return 1
	# an init of a live destructor resets its count under the stack's
	# reference: the owner's unref goes below zero
	{ dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev init " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""
	  dtr_ev unref " ref=-1"; } > "$f"
	dtr_bad "count below zero" || return 1
	# a ref after the count reached 0, and its destroy a second time
	{ dtr_ev init " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""
	  dtr_ev ref " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""; } > "$f"
	dtr_bad "ref of a destructor whose count had reached 0" || return 1
	# the end totals, each on its own (traces with an event lost or
	# made up: the rules behind the ones above)
	{ dtr_ev init " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""; dtr_ev destroy ""; } > "$f"
	dtr_bad "more destroys than inits" || return 1
	{ dtr_ev ref " ref=3"; dtr_ev unref " ref=2"; } > "$f"
	dtr_bad "events of a destructor never initialised" || return 1
	{ dtr_ev init " ref=1"; dtr_ev unref " ref=0"; dtr_ev destroy ""; dtr_ev ref " ref=2"; } > "$f"
	dtr_bad "refs and unrefs do not balance" || return 1
	{ dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev unref " ref=1"; dtr_ev unref " ref=1"; dtr_ev destroy ""; } > "$f"
	dtr_bad "unrefs that returned 0 and destroys differ" || return 1
	# a reference never dropped: live at the end, named, not destroyed
	{ dtr_ev init " ref=1"; dtr_ev ref " ref=2"; dtr_ev unref " ref=1"; } > "$f"
	dtr_check && want dtor.live_at_end 1 "$f.kv" && want dtor.bad 0 "$f.kv" &&
		grep -q '^dtor.live.1=destructor=ffff88001b8bdd98 inits=1 destroys=0' "$f.kv" || return 1
	# a line without latency-format's context flags: counted, not guessed
	printf '  kfrag-1 [000] 1.0: skb_frag_destructor_destroy: destructor=ffff88001b8bdd98\n' > "$f"
	dtr_check && want dtor.destroys_noflags 1 "$f.kv" && want dtor.destroys_irqs_off 0 "$f.kv"
}
register dtortrace-rules t_dtortrace_rules quick
