# The red test's oracles (host/wire-oracle, host/disk-oracle) on captures
# and disks with a known answer, made by host/mkfixture; more of the wire
# oracle's cases in t-52-wire-oracle.sh, of the disk oracle's in
# t-54-disk-drain.sh.
# shellcheck shell=bash

t_oracle_wire() {
	local f=$1
	fx "$f" "$SCRATCH/$f.pcap"
	"$BUILD_DIR/host/wire-oracle" "$SCRATCH/$f.pcap" > "$SCRATCH/$f.kv"
	grep '^detail=' "$SCRATCH/$f.kv" || true
	want poisoned 1 "$SCRATCH/$f.kv"
	want rpc_retrans 1 "$SCRATCH/$f.kv"
}
t_oracle_wire_tcp() { t_oracle_wire tcp; want write_calls 3 "$SCRATCH/tcp.kv"; }
t_oracle_wire_resend() { t_oracle_wire resend; }
t_oracle_wire_udp() { t_oracle_wire udp; want ip_fragments 46 "$SCRATCH/udp.kv"; }
# WRITEs smaller than a unit (UDP, wsize=1024): judged part by part
t_oracle_wire_udp_parts() {
	fx udp-parts "$SCRATCH/parts.pcap"
	"$BUILD_DIR/host/wire-oracle" "$SCRATCH/parts.pcap" > "$SCRATCH/parts.kv"
	grep '^detail=' "$SCRATCH/parts.kv" || true
	want write_calls 7 "$SCRATCH/parts.kv"
	want rpc_retrans 2 "$SCRATCH/parts.kv"
	want poisoned 2 "$SCRATCH/parts.kv"
}

# A reconnect from the same port starts a new stream: not a retransmission.
t_oracle_wire_reconnect() {
	fx reconnect "$SCRATCH/reconnect.pcap"
	"$BUILD_DIR/host/wire-oracle" "$SCRATCH/reconnect.pcap" > "$SCRATCH/reconnect.kv"
	grep '^detail=' "$SCRATCH/reconnect.kv" || true
	want poisoned 0 "$SCRATCH/reconnect.kv"
	want write_calls 2 "$SCRATCH/reconnect.kv"
	want tcp_reconnects 1 "$SCRATCH/reconnect.kv"
}

# The client ends a connection mid-record (a request half sent): with a
# FIN (on a data segment, an RST after it not counted again) or an RST
# (sent after the next connection's SYN, with bytes the capture lacks);
# a FIN between records is no cut, nor an RST at a record's end whose
# last bytes the capture lacks; an RST after a hole where the next
# record's marker would be is unknown.
t_oracle_wire_cut() {
	fx cut "$SCRATCH/cut.pcap"
	"$BUILD_DIR/host/wire-oracle" "$SCRATCH/cut.pcap" > "$SCRATCH/cut.kv"
	grep '^detail=' "$SCRATCH/cut.kv" || true
	want tcp_cut_fin 1 "$SCRATCH/cut.kv"
	want tcp_cut_rst 1 "$SCRATCH/cut.kv"
	want tcp_end_unknown 1 "$SCRATCH/cut.kv"
	want tcp_reconnects 4 "$SCRATCH/cut.kv"
	want poisoned 0 "$SCRATCH/cut.kv"
}

t_oracle_wire_unusable() {
	fx empty "$SCRATCH/empty.pcap"
	expect_fail "holds no frames" -- "$BUILD_DIR/host/wire-oracle" "$SCRATCH/empty.pcap"
	fx nowrite "$SCRATCH/nowrite.pcap"
	expect_fail "no NFS WRITE call (v3 WRITE or v4 COMPOUND with WRITE) to port 2049" -- "$BUILD_DIR/host/wire-oracle" "$SCRATCH/nowrite.pcap"
	expect_fail "cannot read the capture $SCRATCH/none.pcap" -- \
		"$BUILD_DIR/host/wire-oracle" "$SCRATCH/none.pcap"
}

t_oracle_disk() {
	mkdir -p "$SCRATCH/disk"
	fx disk "$SCRATCH/disk" "$SCRATCH/disk.manifest"
	"$BUILD_DIR/host/disk-oracle" "$SCRATCH/disk.manifest" "$SCRATCH/disk" > "$SCRATCH/disk.kv"
	cat "$SCRATCH/disk.kv"
	want corrupted 1 "$SCRATCH/disk.kv"
	want units 16 "$SCRATCH/disk.kv"
	echo "noise only" > "$SCRATCH/empty.manifest"
	expect_fail "no KFRAG-MANIFEST line" -- \
		"$BUILD_DIR/host/disk-oracle" "$SCRATCH/empty.manifest" "$SCRATCH/disk"
	rm "$SCRATCH/disk/w001.dat" # written units, no file
	expect_fail "w001.dat is shorter than 8 units" -- \
		"$BUILD_DIR/host/disk-oracle" "$SCRATCH/disk.manifest" "$SCRATCH/disk"
}

register oracle-wire-tcp t_oracle_wire_tcp quick
register oracle-wire-resend t_oracle_wire_resend quick
register oracle-wire-udp-fragments t_oracle_wire_udp quick
register oracle-wire-udp-parts t_oracle_wire_udp_parts quick
register oracle-wire-reconnect t_oracle_wire_reconnect quick
register oracle-wire-cut t_oracle_wire_cut quick
register oracle-wire-unusable-input t_oracle_wire_unusable quick
register oracle-disk t_oracle_disk quick
