# The on-wire oracle where long runs take it: TCP streams past 2 GiB and
# across the 4 GiB wrap of sequence numbers, and copies of IP fragments
# that come late. Uses t-50's fx and want.
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

register oracle-wire-tcp-wrap t_oracle_wire_tcp_wrap
register oracle-wire-ip-fragment-copies t_oracle_wire_fragment_copies
