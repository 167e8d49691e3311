package dissect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// Every RPC reply tshark decodes in the NFS captures (rxe and siw, NFSv3
// and NFSv4.2, replies in the Send and by RDMA Write into the reply
// chunk), we decode in the same frame, with the same xid and NFS
// procedure.
func TestRepliesAsTshark(t *testing.T) {
	nomsg := 0
	for _, file := range testcap.Glob(t, "pcaps/real/*nfs*.pcap") {
		want := map[string]bool{}
		for _, row := range testcap.TsharkFields(t, file, "rpc.msgtyp == 1", "frame.number", "rpc.xid", "nfs.procedure_v3", "nfs.procedure_v4") {
			xids := strings.Split(row[1], ",")
			for i, x := range xids {
				// tshark repeats a reply it dissects twice in one frame.
				want[row[0]+" "+x+" "+nth(row[2], i)+" "+nth(row[3], i)] = true
			}
		}
		got := map[string]bool{}
		d := New(Options{})
		for _, f := range testcap.Frames(t, file) {
			r := d.Dissect(&f)
			var hdr *rpcrdma.Header
			for _, l := range r.Layers {
				switch x := l.(type) {
				case *rpcrdma.Header:
					hdr = x
				case *rpcrdma.RPC:
					if x.MsgType != rpcrdma.MsgReply {
						continue
					}
					if hdr != nil && hdr.Proc == rpcrdma.ProcNoMsg {
						nomsg++
					}
					var v3, v4 string
					if x.CallKnown && x.Program == rpcrdma.ProgNFS {
						switch x.ProgVersion {
						case 3:
							v3 = fmt.Sprint(x.Procedure)
						case 4:
							v4 = fmt.Sprint(x.Procedure)
						}
					}
					got[fmt.Sprintf("%d 0x%08x %s %s", r.Frame, x.XID, v3, v4)] = true
				}
			}
		}
		if n := d.sends.rpc.chunks.n; n > 0 {
			// Every call was answered: in the Send, or by the reply chunk.
			t.Errorf("%s: %d reply chunk segments still held at the end", file, n)
		}
		for k := range want {
			if !got[k] {
				t.Errorf("%s: tshark's reply (frame xid v3 v4) %q: we have none like it", file, k)
			}
		}
		for k := range got {
			if !want[k] {
				t.Errorf("%s: our reply %q: tshark has none like it", file, k)
			}
		}
	}
	if nomsg == 0 {
		t.Error("no RDMA_NOMSG reply reassembled in any capture")
	}
	t.Logf("%d RDMA_NOMSG replies reassembled", nomsg)
}

func nth(v string, i int) string {
	parts := strings.Split(v, ",")
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

// With the reply chunk bytes capped below a reply's size, the RDMA_NOMSG
// reply stays without its RPC message and the frame of the Write says
// why (rpcrdma.chunk-limit); the call is still answered.
func TestReplyChunkLimit(t *testing.T) {
	file := testcap.Real("live-rxe4-nfs3.pcap")
	d := New(Options{MaxChunkBytes: 100})
	limits, nomsg := 0, 0
	for _, f := range testcap.Frames(t, file) {
		r := d.Dissect(&f)
		for _, x := range r.Findings {
			if x.Code == CodeChunkLimit {
				limits++
			}
		}
		if h, ok := r.Layer("rpcrdma").(*rpcrdma.Header); ok && h.Proc == rpcrdma.ProcNoMsg {
			nomsg++
			if r.Layer("rpc") != nil || h.Answers.Frame == 0 {
				t.Errorf("frame %d: RDMA_NOMSG with %s, answers %+v: want no RPC message, the call answered", r.Frame, layerNames(r), h.Answers)
			}
		}
	}
	// Six replies by reply chunk (GETACL, READDIRPLUS), each larger than
	// 100 octets.
	if nomsg != 6 || limits != 6 {
		t.Errorf("%d RDMA_NOMSG replies, %d chunk-limit findings: want 6 and 6", nomsg, limits)
	}
}

// A Write into an advertised reply chunk segment that reaches past its
// end is reported, and what it carried not placed.
func TestReplyChunkWriteOutside(t *testing.T) {
	c := newChunkTable(DefaultOptions())
	h := &rpcrdma.Header{XID: 7, HasReply: true, Reply: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{{Handle: 0x99, Length: 16, Offset: 0x1000}}}}
	chain := c.advertise(1, 0, false, 0, 7, h, false)
	rec := &Record{Frame: 5}
	c.write(rec, 1, 0, 0x99, 0x1008, make([]byte, 16))
	if len(rec.Findings) != 1 || rec.Findings[0].Code != CodeChunkOutside || rec.Findings[0].Frame != 5 {
		t.Fatalf("findings %+v, want one %s on frame 5", rec.Findings, CodeChunkOutside)
	}
	c.write(rec, 1, 0, 0x99, 0x1000, []byte("0123456789abcdef"))
	c.write(rec, 2, 0, 0x99, 0x1000, []byte("other connection"))
	h.Reply.Segments[0].Length = 12
	body, ok := c.reply(chain, 1, h)
	if c.forget(chain, 1, 7); !ok || string(body) != "0123456789ab" || len(rec.Findings) != 1 || c.waiting() {
		t.Errorf("reply %q %v, findings %+v, waiting %v: want the 12 octets written in the segment", body, ok, rec.Findings, c.waiting())
	}
}

// Calls in position-zero read chunks whose Reads never come (the capture
// missed them) are not held for ever: at most maxOrphans chains; one
// whose call was decoded (the call table holds it) is kept.
func TestPositionZeroChainsBounded(t *testing.T) {
	c := newChunkTable(DefaultOptions())
	h := &rpcrdma.Header{Proc: rpcrdma.ProcNoMsg, Reads: []rpcrdma.ReadSegment{{Segment: rpcrdma.Segment{Handle: 1, Length: 100, Offset: 0x1000}}}}
	kept := c.advertise(1, 0, false, 0, 0, h, true)
	c.own(kept, 1, 0)
	for xid := uint32(1); xid < 3*maxOrphans; xid++ {
		c.advertise(1, 0, false, 0, xid, h, true)
	}
	if c.n != maxOrphans+1 || !c.live(kept, 1, 0) {
		t.Errorf("%d segments held (the decoded call's kept: %v), want %d", c.n, c.live(kept, 1, 0), maxOrphans+1)
	}
}

// movesChunkData, which lets a packet reach ibPacket, holds for exactly
// the opcodes ibPacket takes: an RDMA Write, Read Request or Read
// Response left out would never be matched to its chunk.
func TestMovesChunkDataOpcodes(t *testing.T) {
	takes := map[ibcm.Opcode]bool{}
	for _, op := range []ibcm.Opcode{ibcm.OpRCWriteFirst, ibcm.OpRCWriteMiddle, ibcm.OpRCWriteLast, ibcm.OpRCWriteLastImm,
		ibcm.OpRCWriteOnly, ibcm.OpRCWriteOnlyImm, ibcm.OpRCReadRequest,
		ibcm.OpRCReadRespFirst, ibcm.OpRCReadRespMiddle, ibcm.OpRCReadRespLast, ibcm.OpRCReadRespOnly} {
		takes[op] = true
	}
	for op := range 256 {
		if got := movesChunkData(ibcm.Opcode(op)); got != takes[ibcm.Opcode(op)] {
			t.Errorf("movesChunkData(0x%02x) = %v, want %v", op, got, !got)
		}
	}
}
