package main

import (
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// rpcrdmaBytes is an RPC-over-RDMA message: h, then r and body (r nil:
// the header alone).
func rpcrdmaBytes(t *testing.T, h *rpcrdma.Header, r *rpcrdma.RPC, body []byte) []byte {
	t.Helper()
	h.Version, h.Credits = 1, 32
	if r == nil {
		return testcap.Serialize(t, h)
	}
	return testcap.Serialize(t, h, r, gopacket.Payload(body))
}

// Over iWARP the server pulls a call's read chunk by an RDMA Read Request
// (data source STag and TO: the client's segment) answered by tagged Read
// Responses to its sink STag, and places a READ's data by tagged RDMA
// Writes into the write chunk: both are matched to the call's segments
// on the same TCP connection and shown on its reply; a Read Request
// outside the segment is rpcrdma.chunk-read-outside.
func TestIWARPChunks(t *testing.T) {
	const prog = 400123 // no NFS-family layer
	call := func(xid uint32) *rpcrdma.RPC {
		return &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgCall, RPCVersion: 2, Program: prog, ProgVersion: 1, Procedure: 7}
	}
	reply := func(xid uint32) *rpcrdma.RPC { return &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgReply} }
	seg := func(stag, n uint32, to uint64) rpcrdma.WriteChunk {
		return rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{{Handle: stag, Length: n, Offset: to}}}
	}
	var frames struct{ readResp1, readResp2, write, reply1, reply2, outside int }
	build := func(c *iwCapture) error {
		k := iwSetup(c, 9, 0, 0, 1, iwRFC8797(true), iwRFC8797(false))
		o := iwFPDUOpts{}
		msn := map[bool]uint32{true: 1, false: 1}
		send := func(fromClient bool, b []byte) int {
			k.send(fromClient, k.iwSend(fromClient, o, mpa.OpSend, msn[fromClient], 0, true, 0, b))
			msn[fromClient]++
			return len(c.pkts)
		}
		readReq := func(rr mpa.ReadRequest, n uint32) int {
			k.send(false, k.fpdu(false, o, mpa.DDP{Last: true, QN: mpa.QueueReadRequest, MSN: n}, mpa.RDMAP{Opcode: mpa.OpReadRequest, ReadRequest: rr}, nil))
			return len(c.pkts)
		}
		tagged := func(fromClient bool, op mpa.Opcode, stag uint32, to uint64, last bool, data []byte) int {
			k.send(fromClient, k.fpdu(fromClient, o, mpa.DDP{Tagged: true, Last: last, STag: stag, TO: to}, mpa.RDMAP{Opcode: op}, data))
			return len(c.pkts)
		}
		// A WRITE-like call: 2000 octets in a read chunk at position 100.
		send(true, rpcrdmaBytes(t, &rpcrdma.Header{XID: 0x71, Reads: []rpcrdma.ReadSegment{{Position: 100,
			Segment: rpcrdma.Segment{Handle: 0x1234, Length: 2000, Offset: 0x7000}}}}, call(0x71), make([]byte, 100)))
		readReq(mpa.ReadRequest{SinkSTag: 0x9999, SinkTO: 0x100, Size: 2000, SrcSTag: 0x1234, SrcTO: 0x7000}, 1)
		frames.readResp1 = tagged(true, mpa.OpReadResponse, 0x9999, 0x100, false, make([]byte, 1000))
		frames.readResp2 = tagged(true, mpa.OpReadResponse, 0x9999, 0x100+1000, true, make([]byte, 1000))
		frames.reply1 = send(false, rpcrdmaBytes(t, &rpcrdma.Header{XID: 0x71}, reply(0x71), nil))
		// A READ-like call: a 4096-octet write chunk; 300 octets written.
		send(true, rpcrdmaBytes(t, &rpcrdma.Header{XID: 0x72, Writes: []rpcrdma.WriteChunk{seg(0x2222, 4096, 0x8000)}}, call(0x72), []byte{0, 0, 0, 0}))
		frames.write = tagged(false, mpa.OpWrite, 0x2222, 0x8000, true, make([]byte, 300))
		frames.reply2 = send(false, rpcrdmaBytes(t, &rpcrdma.Header{XID: 0x72, Writes: []rpcrdma.WriteChunk{seg(0x2222, 300, 0x8000)}}, reply(0x72), nil))
		// A Read Request past the end of the segment the call offered.
		send(true, rpcrdmaBytes(t, &rpcrdma.Header{XID: 0x73, Reads: []rpcrdma.ReadSegment{{Position: 100,
			Segment: rpcrdma.Segment{Handle: 0x1235, Length: 1000, Offset: 0x9000}}}}, call(0x73), make([]byte, 100)))
		frames.outside = readReq(mpa.ReadRequest{SinkSTag: 0x999a, SinkTO: 0, Size: 1000, SrcSTag: 0x1235, SrcTO: 0x9200}, 2)
		k.close()
		return nil
	}
	path := filepath.Join(t.TempDir(), "iwarp-chunks.pcap")
	if err := iwWrite(build)(path); err != nil {
		t.Fatal(err)
	}
	d := dissect.New(dissect.Options{})
	chunks := map[int][]rpcrdma.ChunkData{}
	var findings []string
	for _, f := range testcap.Frames(t, path) {
		r := d.Dissect(&f)
		for _, x := range r.Findings {
			findings = append(findings, x.Code)
			if x.Code != dissect.CodeChunkReadOutside || r.Frame != frames.outside {
				t.Errorf("frame %d: %s", r.Frame, x)
			}
		}
		if h, ok := r.Layer("rpcrdma").(*rpcrdma.Header); ok && len(h.Chunks) > 0 {
			chunks[r.Frame] = append([]rpcrdma.ChunkData(nil), h.Chunks...)
		}
	}
	if len(findings) != 1 {
		t.Errorf("findings %v, want one %s", findings, dissect.CodeChunkReadOutside)
	}
	if cs := chunks[frames.reply1]; len(cs) != 1 || cs[0].Kind != rpcrdma.ChunkDataRead || cs[0].Octets != 2000 ||
		cs[0].FirstFrame != frames.readResp1 || cs[0].LastFrame != frames.readResp2 {
		t.Errorf("reply 0x71: %+v, want 2000 octets read in frames %d..%d", cs, frames.readResp1, frames.readResp2)
	}
	if cs := chunks[frames.reply2]; len(cs) != 1 || cs[0].Kind != rpcrdma.ChunkDataWrite || cs[0].Octets != 300 || cs[0].Reported != 300 ||
		cs[0].FirstFrame != frames.write {
		t.Errorf("reply 0x72: %+v, want 300 octets written in frame %d", cs, frames.write)
	}
}
