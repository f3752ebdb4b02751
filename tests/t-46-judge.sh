# The one verdict on a red-test run (scripts/lib.sh judge, judge_as): its
# rules on run directories with a known answer, read by column name, and
# every caller held to the common rule. The knob table of scripts/redtest.
# shellcheck shell=bash

# jrun DIR KEY=VALUE...: the run directory of a clean, exposed series run
# (row.tsv with scripts/redtest's header, guest.kv), keys changed: a row
# column (writes=3), guest:KEY=VALUE for guest.kv or wire:KEY=VALUE for
# wire.kv; a key set to nothing is left out (a missing count)
jrun() {
	local d=$1 o k cols vals
	shift
	mkdir -p "$d"
	cols="variant profile transport drc writes rpc_retrans tcp_retrans poisoned corrupted hung MB/s p50_ms p99_ms max_ms errors destructors faults vcpus nfs"
	declare -A row=([variant]=series [profile]=default [transport]=tcp [drc]=on [writes]=500 [rpc_retrans]=2
		[tcp_retrans]=900 [poisoned]=0 [corrupted]=0 [hung]=0 [MB/s]=1.0 [p50_ms]=5 [p99_ms]=50 [max_ms]=90
		[errors]=0 [destructors]=520=520 [faults]=- [vcpus]=2 [nfs]=3)
	echo "writes=500" > "$d/guest.kv"
	for o in "$@"; do
		case $o in
		guest:*) echo "${o#guest:}" >> "$d/guest.kv" ;;
		wire:*) echo "${o#wire:}" >> "$d/wire.kv" ;;
		*) row[${o%%=*}]=${o#*=} ;;
		esac
	done
	# the columns in a shuffled order when JRUN_SHUFFLE=1: judge reads names
	[ "${JRUN_SHUFFLE:-0}" = 0 ] || cols=$(tr ' ' '\n' <<<"$cols" | tac | tr '\n' ' ')
	vals=
	for k in $cols; do vals+="${row[$k]}"$'\t'; done
	printf '%s\n%s\n' "$(tr ' ' '\t' <<<"${cols% }")" "${vals%$'\t'}" > "$d/row.tsv"
}
# judged WANT CALLER VARIANT ARG...: judge_as CALLER's first reason matches
# WANT ('' = passes); ARGs: jrun's keys, and demand:D for a run demand
judged() {
	local want=$1 c=$2 v=$3 got a keys=() dem=()
	shift 3
	for a; do case $a in demand:*) dem+=("${a#demand:}") ;; *) keys+=("$a") ;; esac; done
	rm -rf "$SCRATCH/jrun"
	jrun "$SCRATCH/jrun" "${keys[@]}"
	got=$(. scripts/lib.sh && VM_SMP=2 judge_as "$c" "$v" "$SCRATCH/jrun" "${dem[@]}" | head -n1)
	# shellcheck disable=SC2254 # WANT is a glob
	case $got in
	$want) echo "ok: $c $v ${*:-as is}: ${got:-passes}" ;;
	*) echo "    $c $v ${*:-as is}: '$got', expected '${want:-nothing}'"; return 1 ;;
	esac
}

# the common rule and each demand, on runs with a known answer
t_judge_rules() {
	judged '' redtest series
	JRUN_SHUFFLE=1 judged '' redtest series
	JRUN_SHUFFLE=1 judged '1 poisoned*' redtest series poisoned=1
	judged '' redtest vanilla poisoned=7 destructors=absent
	judged '' redtest vanilla destructors=absent hung=3
	judged 'poisoned is *not a count' redtest vanilla poisoned=
	judged 'corrupted is *not a count' redtest series corrupted=
	judged 'writes is *not a count' redtest series writes=abc
	judged '2 corrupted block*' redtest series corrupted=2
	judged '1 hung write*' redtest series hung=1
	judged 'destructors: 0=0' redtest series destructors=0=0
	judged 'destructors: 520=519' redtest series destructors=520=519
	judged 'destructors: BAD*' redtest series destructors=BAD:3=3,live=1
	judged 'destructors: 3=3' redtest copy destructors=3=3
	judged 'destructors: off' redtest series destructors=off
	judged '' bench series destructors=off
	judged 'kmemleak*' redtest series guest:kmemleak=1 'guest:kmemleak.0=size 64, comm "x": foo+0x1/0x2'
	judged 'only 100 writes*' demo series writes=100
	judged '' demo series writes=101
	judged '0 TCP and 0 RPC*' demo series tcp_retrans=0 rpc_retrans=0
	judged '' demo series tcp_retrans=0 rpc_retrans=1
	judged '*did not reproduce the bug' demo vanilla destructors=absent
	judged '' demo vanilla destructors=absent poisoned=1 writes=3 tcp_retrans=0 rpc_retrans=0
	judged '*2 TCP and 0 RPC*' tests series tcp_retrans=2 rpc_retrans=0
	judged '*1 vCPU(s) online, not 2' faults series vcpus=1
	judged '*1 vCPU(s) online, not 2' faults vanilla vcpus=1 destructors=absent
	judged '1 NFS volume(s) left*' faults series guest:nfs.volumes_left=1
	judged '' faults vanilla destructors=absent guest:nfs.volumes_left=1
	judged '' faults series nfs=4.1 faults=restart@18:3 guest:nfs.volumes_left=1
	judged '1 NFS volume(s) left*' faults series nfs=4.1 faults=kill@8 guest:nfs.volumes_left=1
	judged '1 NFS volume(s) left*' faults series nfs=4.0 faults=restart@18:3 guest:nfs.volumes_left=1
	judged 'destructors: BAD*' faults series nfs=4.1 faults=restart@18:3 guest:nfs.volumes_left=1 destructors=BAD:127=126,live=1
	judged '*2 vCPU(s) online, not 4' acceptance series demand:vcpus=4
	judged 'no tap.writes_before count*' faults series demand:tap
	judged "judge: unknown demand 'nope'" redtest series demand:nope
	judged '*did not reproduce the bug' faults vanilla destructors=absent demand:happened,bug
	judged 'no writer was killed mid-write*' faults series faults=kill@8 demand:happened
	judged 'no writer was killed mid-write*' faults vanilla faults=kill@8 destructors=absent guest:killed_mid_write=0 demand:happened
	judged '' faults series faults=kill@8 guest:killed_mid_write=3 demand:happened
	judged 'the relay spliced nothing*' faults series faults=relay demand:happened
	judged '' faults series "faults=tap@4:14:unread relay kill@10" guest:relay.spliced=9 guest:killed_mid_write=1 demand:happened
	judged '' faults series faults=- demand:happened
	judged 'no tcp_cut_fin/tcp_cut_rst count*' faults series demand:halfsent
	judged '*nothing was left half sent' faults series wire:tcp_cut_fin=0 wire:tcp_cut_rst=0 demand:halfsent
	judged '' faults series wire:tcp_cut_fin=0 wire:tcp_cut_rst=1 demand:halfsent,stall
	judged '1 connection(s) ended mid-record with a FIN*' faults series wire:tcp_cut_fin=1 wire:tcp_cut_rst=1 demand:halfsent
	judged 'vanilla ended no connection mid-record with a FIN*' faults vanilla destructors=absent wire:tcp_cut_fin=0 wire:tcp_cut_rst=1 demand:halfsent
	judged '' faults vanilla destructors=absent wire:tcp_cut_fin=1 wire:tcp_cut_rst=0 hung=8 demand:halfsent,stall
	judged 'vanilla hung no write*' faults vanilla destructors=absent wire:tcp_cut_fin=1 wire:tcp_cut_rst=0 demand:halfsent,stall
	judged "judge_as: unknown caller*" nobody series
	rm -rf "$SCRATCH/jrun"; mkdir -p "$SCRATCH/jrun"
	got=$(. scripts/lib.sh && judge_as redtest series "$SCRATCH/jrun")
	[[ $got == "no row in "* ]] || { echo "    a run without a row: '$got'"; return 1; }
	printf 'variant\twrites\nseries\t5\n' > "$SCRATCH/jrun/row.tsv"
	got=$(. scripts/lib.sh && judge_as redtest series "$SCRATCH/jrun")
	[[ $got == *"has no poisoned column" ]] || { echo "    a row without a poisoned column: '$got'"; return 1; }
}

# Every caller that decides "clean" uses judge_as under its own name, and
# each of them fails a run the common rule fails (one bad count at a time).
t_judge_callers() {
	local c f k callers
	callers=$(. scripts/lib.sh && echo "$JUDGE_CALLERS")
	for f in redtest:scripts/redtest demo:scripts/demo faults:scripts/faults acceptance:scripts/acceptance \
		soak:scripts/soak bench:scripts/bench-nfs tests:tests/t-51-redtest-runs.sh; do
		# a call, not a comment
		grep -qE "^[^#]*judge_as ${f%%:*} " "${f#*:}" ||
			{ echo "    ${f#*:} does not judge with judge_as ${f%%:*}"; return 1; }
	done
	for c in $callers; do
		for k in poisoned=1 corrupted=1 hung=1 destructors=4=3 writes= vcpus=x; do
			judged '?*' "$c" series "$k" >/dev/null || { echo "    judge_as $c passed a series run with $k"; return 1; }
		done
		echo "judge_as $c fails a series run with poisoned, corrupted, hung, unbalanced destructors or a count missing"
	done
	# no caller judges on its own any more: the columns by number, and the
	# old rules (kv poisoned ... = 0) outside lib.sh
	! grep -nE 'cut -f[0-9]|\$(5|8|9|10|16|18|19)\b' scripts/demo scripts/acceptance scripts/soak scripts/faults ||
		{ echo "    a caller reads the row's columns by number (above)"; return 1; }
	! grep -nE 'row\.tsv.*cut -f|cut -f.*row\.tsv' tests/t-*.sh scripts/* ||
		{ echo "    a test or script reads a red-test row's columns by number (above)"; return 1; }
	! grep -nE '"\$\(kv (poisoned|corrupted|hung_writes) [^)]*\)" = 0' scripts/demo scripts/acceptance scripts/soak scripts/faults ||
		{ echo "    a caller judges a count itself (above)"; return 1; }
}

# the knob table: --help prints every knob; every guest key is one the
# guest reads (KFRAG_<KEY> in guest/), and every knob the guest reads from
# the red test is in the table (or set by scripts/redtest itself)
t_redtest_knobs() {
	local out k key
	out=$(scripts/redtest --help)
	while IFS=$'\t' read -r k key _; do
		grep -q "^  $k " <<<"$out" || { echo "    --help lacks $k"; return 1; }
		[ "$key" = - ] || grep -rqw "KFRAG_${key^^}" guest/ || { echo "    $k: the guest reads no KFRAG_${key^^}"; return 1; }
	done < <(awk -F'\t+' '!/^#/ && NF >= 4 { print $1 "\t" $2 }' scripts/redtest.knobs)
	for k in $(grep -ohE 'env_(num|str)\("KFRAG_[A-Z_]+"' guest/redtest.c | sed 's/.*"KFRAG_//; s/"//' | sort -u); do
		case $k in SERVER | EXPORT | NFSPORT | MNTPORT | PROTO | NETEM | NFSVERS | PSEUDO | MOUNTOPTS | KMSG_MS | RPC_DEBUG | DIR | TEST_*) continue ;; esac
		grep -qE "^[A-Z_]+[[:space:]]+${k,,}[[:space:]]" scripts/redtest.knobs || { echo "    guest/redtest.c reads KFRAG_$k; scripts/redtest.knobs has no row for it"; return 1; }
	done
	# the words the guest gets: the table's defaults, and a knob set wins
	out=$(env -u SECS -u WRITERS -u SEED SECS=7 KILL_AT=3 scripts/redtest --words)
	grep -qx kfrag.secs=7 <<<"$out" && grep -qx kfrag.kill_at=3 <<<"$out" && grep -qx kfrag.writers=4 <<<"$out" &&
		grep -qxE 'kfrag.seed=[0-9]+' <<<"$out" && grep -qx kfrag.blackhole=0:0 <<<"$out" ||
		{ echo "    scripts/redtest --words:"; echo "$out" | sed 's/^/    | /'; return 1; }
	[ "$(grep -c . <<<"$out")" = "$(awk -F'\t+' '!/^#/ && NF >= 4 && $2 != "-" && $3 != "-"' scripts/redtest.knobs | wc -l)" ] ||
		{ echo "    --words gives not one word per guest knob of the table with a default"; return 1; }
	# a guest knob without a default is a word only when set
	! grep -q '^kfrag.tcp_wmem=' <<<"$out" && TCP_WMEM=4096:8192:8192 scripts/redtest --words | grep -qx kfrag.tcp_wmem=4096:8192:8192 ||
		{ echo "    TCP_WMEM (no default) is not a word exactly when set"; return 1; }
	echo "every knob in --help; every guest key read by the guest; --words: the defaults and the knobs set"
}
# scripts/redtest's exit status: 1 for anything it could not judge, even a
# command that failed with 2 (the status of a run judged bad), and for bad
# usage; the table's host knobs reach its children (a stub make, first in
# PATH, records its environment and fails with 2)
t_redtest_exit_codes() {
	local rc=0 stub=$SCRATCH/stub
	mkdir -p "$stub"
	printf '#!/bin/sh\nenv > "%s/env"\nexit 2\n' "$stub" > "$stub/make"
	chmod +x "$stub/make"
	env -u VM_SMP -u VM_NET -u VM_NIC PATH="$stub:$PATH" scripts/redtest vanilla clean tcp > "$SCRATCH/rt.out" 2>&1 || rc=$?
	[ $rc = 1 ] || { echo "    a failed make (status 2) made scripts/redtest exit $rc, not 1"; sed 's/^/    | /' "$SCRATCH/rt.out"; return 1; }
	grep -q '^error: redtest line' "$SCRATCH/rt.out"
	grep -qx VM_SMP=1 "$stub/env" && grep -qx VM_NET=user "$stub/env" && grep -qx VM_NIC=e1000 "$stub/env" ||
		{ echo "    the table's host knobs did not reach scripts/redtest's children"; return 1; }
	! grep -q '^SECS=' "$stub/env" || { echo "    a guest knob was exported"; return 1; }
	rc=0
	scripts/redtest vanilla > "$SCRATCH/rt.out" 2>&1 || rc=$?
	[ $rc = 1 ] && grep -q "usage: redtest" "$SCRATCH/rt.out" || { echo "    bad usage: exit $rc"; return 1; }
	echo "a failed make: exit 1; bad usage: exit 1; VM_SMP, VM_NET, VM_NIC exported"
}
register judge-rules t_judge_rules quick
register judge-every-caller t_judge_callers quick
register redtest-knob-table t_redtest_knobs quick
register redtest-exit-codes t_redtest_exit_codes quick
