package conn

import "github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"

// ChunkTotals is what moved by RDMA for the chunks (RFC 8166 §3.4) of a
// connection's answered calls, as the capture saw it: the sums of the
// rpcrdma.chunk_data its replies carry (the per-call values, and those of
// rpc --json per procedure). A call whose reply was not captured is not
// counted.
type ChunkTotals struct {
	// ReadOctets is the octets the server pulled by RDMA Read from the
	// calls' read lists, WriteOctets those it placed by RDMA Write into
	// their write chunks, ReplyOctets into their reply chunks.
	ReadOctets  uint64 `json:"read_chunk_octets"`
	WriteOctets uint64 `json:"write_chunk_octets"`
	ReplyOctets uint64 `json:"reply_chunk_octets"`
	// Advertised is the segments the calls offered, Used those the
	// capture saw a transfer into or out of, Unused the others (a reply
	// chunk left unused by a reply that fitted in its Send is normal).
	Advertised int `json:"segments_advertised"`
	Used       int `json:"segments_used"`
	Unused     int `json:"segments_unused"`
}

// add counts the chunk data of one reply.
func (t *ChunkTotals) add(cs []rpcrdma.ChunkData) {
	for i := range cs {
		c := &cs[i]
		switch c.Kind {
		case rpcrdma.ChunkDataRead:
			t.ReadOctets += c.Octets
		case rpcrdma.ChunkDataWrite:
			t.WriteOctets += c.Octets
		case rpcrdma.ChunkDataReply:
			t.ReplyOctets += c.Octets
		}
		t.Advertised += c.Segments
		t.Used += c.Used
		t.Unused += c.Segments - c.Used
	}
}

// merge adds u to t.
func (t *ChunkTotals) merge(u *ChunkTotals) {
	t.ReadOctets += u.ReadOctets
	t.WriteOctets += u.WriteOctets
	t.ReplyOctets += u.ReplyOctets
	t.Advertised += u.Advertised
	t.Used += u.Used
	t.Unused += u.Unused
}
