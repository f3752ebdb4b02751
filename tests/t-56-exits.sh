# The ways out of an NFS call (scripts/exits): a SIGKILLed SYMLINK on a
# dead link, vanilla beside the series, on 1 and 2 vCPUs. The series
# froze a 1-vCPU guest here (a killed task spinning in rpc_exit_task)
# and kept the process 60 s+ on 2 vCPUs, until patch 0045 let a killed
# task leave its pages to the stack.
# shellcheck shell=bash

t_exits() {
	local kv ks
	kv=$(kernel_of vanilla)
	ks=$(kernel_of series)
	KERNEL_VANILLA=$kv KERNEL_SERIES=$ks EXITS_SMP="1 2" VM_TIMEOUT=150 scripts/exits symlink-kill
	# the scenario must have caught a call in flight: SYMLINKs ran
	awk -F'\t' 'NR > 1 && !($4 > 0) { bad = 1; print "    no symlink() returned before the kill: " $0 } END { exit bad }' \
		"$BUILD_DIR/results/exits.tsv"
}
register exits-symlink-kill t_exits
