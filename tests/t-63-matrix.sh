# The run-time NIC matrix (scripts/matrix, docs/matrix.md), its short form:
# drivers other than e1000 and virtio_net carry the series' fragments.
# shellcheck shell=bash

# e1000e and vmxnet3 at MTU 9000 on a tap, the series, 2 vCPUs: the
# expected driver bound at that MTU; 4 MiB each way checked byte for byte
# (their page RX paths: e1000e's packet split, vmxnet3's second ring;
# the MSS both ways above 3000);
# the red test judged good, its destructors N=N with references taken
# (both NICs send the writers' pages: lib.sh zerocopy_expected); no
# kernel report. The full matrix, vanilla beside: make matrix.
t_matrix_jumbo() {
	need_tun
	local ks tsv=$SCRATCH/matrix.tsv rows
	ks=$(kernel_of series) || return 1
	KERNEL_SERIES=$ks MATRIX_NAME=test MATRIX_NICS="e1000e vmxnet3" MATRIX_MTUS=9000 MATRIX_VARIANTS=series \
		MATRIX_TSV=$tsv scripts/matrix || return 1
	rows=$(awk -F'\t' 'NR > 1 && $4 == 9000 && $7 == "pass" && $14 == "good" && $13 > 0 &&
		$12 ~ /^[1-9][0-9]*=[1-9][0-9]*$/ { print $1 "/" $2 }' "$tsv" | paste -sd ' ')
	[ "$rows" = "e1000e/e1000e vmxnet3/vmxnet3" ] ||
		{ echo "    good MTU 9000 rows: '$rows', want e1000e and vmxnet3"; return 1; }
	echo "$(awk -F'\t' 'NR > 1 { printf "%s: %s writes, destructors %s, %s references; ", $1, $8, $12, $13 }' "$tsv")"
}
register matrix-jumbo-series t_matrix_jumbo vm
