# The ways out of an NFS call (scripts/exits), vanilla beside the series,
# on 1 and 2 vCPUs, NFSv3 and NFSv4.1:
# - symlink-kill: a SIGKILLed SYMLINK on a dead link (NFSv4's CREATE of a
#   link sends its target as a page too). The series froze a 1-vCPU
#   guest here (a killed task spinning in rpc_exit_task) and kept the
#   process 60 s+ on 2 vCPUs, until patch 0045 let a killed task leave
#   its pages to the stack.
# - umount-f: umount -f while O_DIRECT writes are stuck on a dead link.
#   The series kept the writes 60 s+ (their data queued in a socket that
#   only TCP's give-up would free; vanilla: 15-30 ms) until patch 0045
#   reset the connection for calls that rpc_killall_tasks() ended.
# shellcheck shell=bash

t_exits() {
	local kv ks
	kv=$(kernel_of vanilla)
	ks=$(kernel_of series)
	KERNEL_VANILLA=$kv KERNEL_SERIES=$ks EXITS_SMP="1 2" EXITS_NFSVERS="3 4.1" VM_TIMEOUT=150 \
		scripts/exits symlink-kill umount-f
	# each scenario must have caught calls in flight: calls ran before,
	# and umount -f found the writers' files open (EBUSY: it ended their
	# calls, it did not unmount)
	awk -F'\t' 'NR > 1 && !($5 > 0) { bad = 1; print "    no call returned before the kill or umount -f: " $0 } END { exit bad }' \
		"$BUILD_DIR/results/exits.tsv"
	local s nv smp v d n=0
	while read -r s nv smp v; do
		d=$BUILD_DIR/exits/$s-nfs$nv-smp$smp-$v
		n=$((n + 1))
		[ "$(kvget umount_f_errno "$d/guest.kv")" = 16 ] ||
			{ echo "    $d: umount -f returned errno $(kvget umount_f_errno "$d/guest.kv"), not EBUSY"; return 1; }
	done < <(awk -F'\t' '$1 == "umount-f" { print $1, $2, $3, $4 }' "$BUILD_DIR/results/exits.tsv")
	[ $n = 8 ] || { echo "    $n umount-f runs in the table, not 8"; return 1; }
}
register exits-kill-and-umount-f t_exits vm

# destroy() with interrupts off (issue 14, defect 6): netconsole on a
# virtio NIC, a long printk every 10 ms during the writes. The console is
# written with interrupts off; each line is several netpoll sends: the
# first reclaims the NIC's sent skbs onto the completion queue, the next
# frees them for good (virtio-net orphans its skbs), the last reference
# to an RPC's pages among them. The series as of 2a5fd1b took the wait
# queue's lock with spin_lock_bh() there, and local_bh_enable() warned
# (vmrun fails the run on a WARNING). The trace must show such destroys
# (latency-format's 'd' flag): a run that never destroyed with
# interrupts off proves nothing.
t_netpoll_destroy() {
	need_tun # a tap
	local tsv=$SCRATCH/faults.tsv r n sfx= host
	host=$(. scripts/lib.sh && echo "$TAP_HOST")
	[ "${DEBUG:-0}" = 0 ] || sfx=-debug # faults' run names, as it makes them
	FAULTS_TSV=$tsv KERNEL_VANILLA=$(kernel_of vanilla) KERNEL_SERIES=$(kernel_of series) \
		scripts/faults netpoll || { column -t -s $'\t' "$tsv" | sed 's/^/    /'; return 1; }
	for v in vanilla series; do
		r=$BUILD_DIR/redtest/faults$sfx-netpoll-$v
		n=$(kvget kmsg_lines "$r/guest.kv")
		# 30 s at 10 ms: 3,000 lines if the guest kept up (it printed 986
		# in 15 s); 750 is well below that, and far above a writer that
		# stopped early
		[ "${n:-0}" -ge 750 ] || { echo "    $v: ${n:-no} kmsg lines printed, not 750"; return 1; }
		! grep -q '^redtest.error\|^kmsg.error' "$r/guest.kv" ||
			{ grep '^redtest.error\|^kmsg.error' "$r/guest.kv" | sed 's/^/    /'; return 1; }
		grep -q "netconsole: remote IP $host[[:space:]]*\$" "$r/serial.log" ||
			{ echo "    $v: netconsole had no target (serial.log)"; return 1; }
	done
	n=$(kvget dtor.destroys_irqs_off "$r/guest.kv")
	[ "${n:-0}" -gt 0 ] ||
		{ echo "    series: no destructor was destroyed with interrupts off (${n:-no report}; $(kvget dtor.destroys_noflags "$r/guest.kv") lines without flags): the scenario did not reach netpoll's free"; return 1; }
	echo "series: $(kvget dtor.destroys "$r/guest.kv") destroys, $n with interrupts off; $(kvget kmsg_lines "$r/guest.kv") kmsg lines"
}
register netpoll-destroy-irqs-off t_netpoll_destroy vm

# SIGKILL and umount -f while an unread packet socket, opened 300 ms
# before the link dies, holds the stuck calls' last frames (guest/exits.c
# kfrag.tap_hold): the series must let the writers go within vanilla's
# time + 2 s, as without the tap. Before patches 0049-0053 the tap's
# clones held the writes, and the run timed out. scripts/exits checks
# that the tap held frames and dropped none at the umount -f.
t_exits_tap() {
	KERNEL_VANILLA=$(kernel_of vanilla) KERNEL_SERIES=$(kernel_of series) EXITS_SMP=2 \
		EXITS_NFSVERS="3 4.1" EXITS_EXTRA=kfrag.tap_hold=1 VM_TIMEOUT=150 scripts/exits umount-f
	local d nv
	for nv in 3 4.1; do
		d=$BUILD_DIR/exits/umount-f-nfs$nv-smp2-series
		echo "$(basename "$d"): the tap held $(kvget tap_hold.packets "$d/guest.kv") frames;" \
			"writes ended $(kvget exit_ms "$d/guest.kv") ms after umount -f"
	done
}
register exits-umount-f-with-an-unread-tap t_exits_tap vm
