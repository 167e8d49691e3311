package conn

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// TestChunkTotals: each connection of the real NFS captures (rxe and
// siw) counts what the chunk data of its replies says moved: summed over
// the connections, the same as over every reply header the dissector
// gave (none is lost or counted twice, a reply of several packets
// included); the NFSv3 mount's values pinned.
func TestChunkTotals(t *testing.T) {
	for _, file := range testcap.Glob(t, "pcaps/real/*nfs*.pcap") {
		var want ChunkTotals
		tr := trackFile(t, file, func(r *dissect.Record) {
			for _, l := range r.Layers {
				if h, ok := l.(*rpcrdma.Header); ok {
					want.add(h.Chunks)
				}
			}
		})
		var got ChunkTotals
		for _, c := range tr.Connections() {
			got.merge(&c.Chunks)
		}
		if got != want {
			t.Errorf("%s: connections' chunks %+v, the replies' %+v", file, got, want)
		}
	}
	for _, file := range []string{"live-rxe4-nfs3.pcap", "live-siw4-nfs3.pcap"} {
		c := only(t, trackFile(t, testcap.Real(file), nil))
		// A READ's 38 octets by write chunk, the GETACL and READDIRPLUS
		// replies by reply chunk; the other calls' reply chunks unused
		// (their replies fitted in the Send).
		want := ChunkTotals{WriteOctets: 38, ReplyOctets: 1884, Advertised: 19, Used: 9, Unused: 10}
		if c.Chunks != want {
			t.Errorf("%s: chunks %+v, want %+v", file, c.Chunks, want)
		}
	}
	// The bulk captures: dd wrote 262144 octets (two 128 KiB NFS WRITEs,
	// their data pulled by RDMA Read from the read chunks) and read them
	// back (two READs, the data pushed by RDMA Write into the write
	// chunks); the READDIR(PLUS) and GETACL replies came by reply chunk.
	// The reply octets are the RDMA Write payload on the wire less the
	// READs' 262144 (tshark: 287448 octets on the NFSv3 mount, 279008 on
	// the NFSv4.2 one, over rxe).
	for _, c := range []struct {
		file  string
		reply uint64
	}{
		{"live-rxe4-nfs3-bulk.pcap", 25304}, {"live-siw4-nfs3-bulk.pcap", 25304},
		{"live-rxe4-nfs42-bulk.pcap", 16864}, {"live-siw4-nfs42-bulk.pcap", 16864},
	} {
		got := only(t, trackFile(t, testcap.Real(c.file), nil)).Chunks
		if got.ReadOctets != 262144 || got.WriteOctets != 262144 || got.ReplyOctets != c.reply || got.Used == 0 || got.Used+got.Unused != got.Advertised {
			t.Errorf("%s: chunks %+v, want 262144 read, 262144 written, %d by reply chunk", c.file, got, c.reply)
		}
	}
}

// TestChunkTotalsAdd: each kind of chunk goes to its own octets, every
// segment to advertised and used or unused.
func TestChunkTotalsAdd(t *testing.T) {
	var got ChunkTotals
	got.add([]rpcrdma.ChunkData{{Kind: rpcrdma.ChunkDataRead, Octets: 8192, Segments: 2, Used: 2},
		{Kind: rpcrdma.ChunkDataWrite, Octets: 100, Segments: 1, Used: 1},
		{Kind: rpcrdma.ChunkDataWrite, Index: 1, Octets: 0, Segments: 3},
		{Kind: rpcrdma.ChunkDataReply, Octets: 7, Segments: 2, Used: 1}})
	want := ChunkTotals{ReadOctets: 8192, WriteOctets: 100, ReplyOctets: 7, Advertised: 8, Used: 4, Unused: 4}
	if got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}
