# The on-wire oracle where long runs take it: TCP streams past 2 GiB and
# across the 4 GiB wrap of sequence numbers, copies of IP fragments and of
# an old connection's segments that come late, xids of other RPC clients,
# NFSv4.0 and v4.1 COMPOUND WRITEs.
# Uses tests/lib.sh's fx and want.
# shellcheck shell=bash

# wire_fixture NAME: the fixture's capture judged, its KV lines in $SCRATCH/NAME.kv
wire_fixture() {
	fx "$1" "$SCRATCH/$1.pcap"
	"$BUILD_DIR/host/wire-oracle" "$SCRATCH/$1.pcap" > "$SCRATCH/$1.kv"
	grep '^detail=' "$SCRATCH/$1.kv" || true
}

# Three segments resent with poison: 2 GiB + 4 KiB into the stream, across
# the sequence-number wrap, and 4 GiB + 4 KiB in (the WRITE's 32-bit
# sequence numbers again: their first transmission there is new data, not
# a retransmission of the WRITE). One resent intact; one resent further
# behind than any TCP sender can: counted as not judged, never dropped
# silently.
t_oracle_wire_tcp_wrap() {
	wire_fixture tcp-wrap
	want poisoned 3 "$SCRATCH/tcp-wrap.kv"
	want tcp_retrans_segments 4 "$SCRATCH/tcp-wrap.kv"
	want tcp_unjudged_segments 1 "$SCRATCH/tcp-wrap.kv"
	want unjudged 1 "$SCRATCH/tcp-wrap.kv"
	want write_calls 1 "$SCRATCH/tcp-wrap.kv"
	want write_bytes_first 8192 "$SCRATCH/tcp-wrap.kv"
	want rpc_retrans 0 "$SCRATCH/tcp-wrap.kv"
}

# A fragment copy with poison before its datagram completes, and one 201
# datagrams after it did; then the 16-bit IP id comes round and a new
# datagram with the first one's id is delivered, not taken for a copy.
t_oracle_wire_fragment_copies() {
	wire_fixture udp-late-dup
	want poisoned 2 "$SCRATCH/udp-late-dup.kv"
	want ip_fragment_copies 3 "$SCRATCH/udp-late-dup.kv"
	want write_calls 266 "$SCRATCH/udp-late-dup.kv"
	want write_bytes_first $((3 * 32768 + 263 * 1600)) "$SCRATCH/udp-late-dup.kv"
	want rpc_retrans 0 "$SCRATCH/udp-late-dup.kv"
}

# After the client reconnected from the same port (a new ISN), a copy of
# the old connection's segment comes (netem held it past the socket's
# close, or duplicated it): judged in the old connection's bytes, poisoned;
# an intact one is a retransmission; a late copy of the old SYN starts
# nothing, the new connection's next WRITE is still parsed.
t_oracle_wire_reconnect_late() {
	wire_fixture reconnect-late
	want poisoned 1 "$SCRATCH/reconnect-late.kv"
	want tcp_retrans_segments 2 "$SCRATCH/reconnect-late.kv"
	want tcp_reconnects 1 "$SCRATCH/reconnect-late.kv"
	want tcp_unjudged_segments 0 "$SCRATCH/reconnect-late.kv"
	want write_calls 3 "$SCRATCH/reconnect-late.kv"
	want rpc_retrans 0 "$SCRATCH/reconnect-late.kv"
}

# The new connection's ISN lies among the old one's sequence numbers: its
# bytes are not retransmissions of the old one's, and a poisoned copy of
# an old segment ahead of the new connection's front is the old one's
# (told apart by the ACK numbers), not new bytes of the new connection.
t_oracle_wire_reconnect_overlap() {
	wire_fixture reconnect-overlap
	want poisoned 1 "$SCRATCH/reconnect-overlap.kv"
	want tcp_reconnects 1 "$SCRATCH/reconnect-overlap.kv"
	want tcp_unjudged_segments 0 "$SCRATCH/reconnect-overlap.kv"
	want tcp_ambiguous_segments 0 "$SCRATCH/reconnect-overlap.kv"
	want write_calls 3 "$SCRATCH/reconnect-overlap.kv"
	want write_bytes_first $((4 * 4096 + 2 * 4096 + 2 * 4096)) "$SCRATCH/reconnect-overlap.kv"
	want rpc_retrans 0 "$SCRATCH/reconnect-overlap.kv"
}

# xids are per RPC client and program: WRITEs whose xids MOUNT calls had
# (from the MOUNT client's port, and from the NFS client's own) are first
# transmissions, not resends with other data.
t_oracle_wire_xid_programs() {
	wire_fixture xid-programs
	want poisoned 0 "$SCRATCH/xid-programs.kv"
	want rpc_retrans 0 "$SCRATCH/xid-programs.kv"
	want rpc_calls 4 "$SCRATCH/xid-programs.kv"
	want write_calls 2 "$SCRATCH/xid-programs.kv"
	want write_bytes_first $((4 * 4096)) "$SCRATCH/xid-programs.kv"
}

# IP fragments the oracle cannot judge are counted: a late piece of a
# datagram given up, a fragment past 65535 bytes.
t_oracle_wire_ip_unjudged() {
	wire_fixture ip-unjudged
	want ip_unjudged_fragments 2 "$SCRATCH/ip-unjudged.kv"
	want unjudged 2 "$SCRATCH/ip-unjudged.kv"
	want tcp_unjudged_segments 0 "$SCRATCH/ip-unjudged.kv"
	want poisoned 0 "$SCRATCH/ip-unjudged.kv"
	want write_calls 300 "$SCRATCH/ip-unjudged.kv"
}

# NFSv4.N WRITEs (COMPOUND: [SEQUENCE] PUTFH WRITE GETATTR): a resend
# with a poisoned unit is poisoned, an intact one is a retransmission; the
# WRITE behind an op the oracle does not know (LOOKUP) is counted as
# unparsed, neither judged (its units are poison) nor counted as written;
# a COMPOUND without a WRITE is neither.
oracle_wire_v4() {
	local f=$1
	wire_fixture "$f"
	want poisoned 1 "$SCRATCH/$f.kv"
	want poisoned_rpc_resends 1 "$SCRATCH/$f.kv"
	want rpc_calls 7 "$SCRATCH/$f.kv"
	want rpc_retrans 2 "$SCRATCH/$f.kv"
	want write_calls 5 "$SCRATCH/$f.kv"
	want write_bytes_first $((6 * 4096)) "$SCRATCH/$f.kv"
	want v4_unparsed_compounds 1 "$SCRATCH/$f.kv"
	want unjudged 0 "$SCRATCH/$f.kv"
}
t_oracle_wire_v40() { oracle_wire_v4 v40; }
t_oracle_wire_v41() { oracle_wire_v4 v41; }

# A v4 WRITE's file is the current file handle (PUTFH, SAVEFH/RESTOREFH):
# file 1's units after PUTFH(1) SAVEFH PUTFH(0) RESTOREFH are clean, file
# 1's unit under file 0's handle is not.
t_oracle_wire_v4_filehandle() {
	wire_fixture v4-fh
	want poisoned 1 "$SCRATCH/v4-fh.kv"
	want write_calls 4 "$SCRATCH/v4-fh.kv"
	want write_bytes_first $((6 * 4096)) "$SCRATCH/v4-fh.kv"
	want rpc_retrans 0 "$SCRATCH/v4-fh.kv"
	want v4_unparsed_compounds 0 "$SCRATCH/v4-fh.kv"
}

# The NFS version is each call's: v3, v4.0 and v4.1 WRITEs in one stream
# are all judged; the v4.1 one resent with the next generation's bytes.
t_oracle_wire_nfs_mixed() {
	wire_fixture nfs-mixed
	want poisoned 1 "$SCRATCH/nfs-mixed.kv"
	want poisoned_rpc_resends 1 "$SCRATCH/nfs-mixed.kv"
	want rpc_retrans 1 "$SCRATCH/nfs-mixed.kv"
	want write_calls 5 "$SCRATCH/nfs-mixed.kv"
	want write_bytes_first $((8 * 4096)) "$SCRATCH/nfs-mixed.kv"
	want v4_unparsed_compounds 0 "$SCRATCH/nfs-mixed.kv"
}

# A v4 capture whose only WRITE follows an op the oracle does not know:
# no verdict (never a silent "0 poisoned"), the compound counted.
t_oracle_wire_v4_unparsed() {
	fx v4-unparsed "$SCRATCH/v4-unparsed.pcap"
	expect_fail "no NFS WRITE call (v3 WRITE or v4 COMPOUND with WRITE) to port 2049" \
		"v4_unparsed_compounds=1" "rpc_calls=2" -- "$BUILD_DIR/host/wire-oracle" "$SCRATCH/v4-unparsed.pcap"
}

register oracle-wire-tcp-wrap t_oracle_wire_tcp_wrap quick
register oracle-wire-ip-fragment-copies t_oracle_wire_fragment_copies quick
register oracle-wire-reconnect-late t_oracle_wire_reconnect_late quick
register oracle-wire-reconnect-overlap t_oracle_wire_reconnect_overlap quick
register oracle-wire-xid-programs t_oracle_wire_xid_programs quick
register oracle-wire-ip-unjudged t_oracle_wire_ip_unjudged quick
register oracle-wire-v40 t_oracle_wire_v40 quick
register oracle-wire-v41 t_oracle_wire_v41 quick
register oracle-wire-v4-filehandle t_oracle_wire_v4_filehandle quick
register oracle-wire-nfs-mixed t_oracle_wire_nfs_mixed quick
register oracle-wire-v4-unparsed t_oracle_wire_v4_unparsed quick
