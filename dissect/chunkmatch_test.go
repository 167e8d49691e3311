package dissect

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// chunkCap builds a synthetic RoCEv2/IPv4 capture between ibcmtest's
// Client and Server (with the layers' SerializeTo) and dissects it.
type chunkCap struct {
	t      *testing.T
	frames []source.Frame
	psn    map[uint32]uint32 // next PSN per destination QP
}

// qpPair is one RC connection: the client's and the server's QPNs.
type qpPair struct{ cli, srv uint32 }

func newChunkCap(t *testing.T) *chunkCap { return &chunkCap{t: t, psn: map[uint32]uint32{}} }

func (c *chunkCap) frame(toServer bool, ls ...gopacket.SerializableLayer) int {
	c.t.Helper()
	src, dst := &ibcmtest.Server, &ibcmtest.Client
	if toServer {
		src, dst = &ibcmtest.Client, &ibcmtest.Server
	}
	f, err := ibcmtest.Frame(ibcmtest.RoCEv2IPv4, src, dst, ls...)
	if err != nil {
		c.t.Fatal(err)
	}
	n := len(c.frames) + 1
	c.frames = append(c.frames, source.Frame{Number: n, Time: time.Unix(1_700_000_000, int64(n)*1000).UTC(),
		CaptureLength: len(f), Length: len(f), LinkType: 1, Data: f})
	return n
}

// again adds frame n once more (an RC packet sent again: same PSN).
func (c *chunkCap) again(n int) int {
	f := c.frames[n-1]
	f.Number = len(c.frames) + 1
	f.Time = time.Unix(1_700_000_000, int64(f.Number)*1000).UTC()
	f.Data = append([]byte(nil), f.Data...)
	c.frames = append(c.frames, f)
	return f.Number
}

// connect adds the CM exchange (REQ with the client's RFC 8797 private
// data, REP, RTU) of connection q.
func (c *chunkCap) connect(q qpPair, comm uint32) {
	req := ibcmtest.REQ(ibcmtest.RoCEv2IPv4)
	req.REQ.LocalQPN, req.REQ.LocalCommID = q.cli, comm
	rep := &ibcm.CM{AttributeID: ibcm.AttrREP, PrivateData: ibcmtest.ServerPrivateData, REP: ibcm.REP{
		LocalCommID: comm + 1, RemoteCommID: comm, LocalQPN: q.srv, StartingPSN: 1, RespResources: 16, InitiatorDepth: 16,
		TargetAckDelay: 15, RNRRetryCount: 7, LocalCAGUID: ibcmtest.Server.GUID}}
	rtu := &ibcm.CM{AttributeID: ibcm.AttrRTU}
	rtu.RTU.LocalCommID, rtu.RTU.RemoteCommID = comm, comm+1
	c.frame(true, ibcmtest.MAD(1, uint64(comm), ibcm.MethodSend, req)...)
	c.frame(false, ibcmtest.MAD(2, uint64(comm), ibcm.MethodSend, rep)...)
	c.frame(true, ibcmtest.MAD(3, uint64(comm)+1, ibcm.MethodSend, rtu)...)
}

// eachSetup runs test on a chunkCap that holds the CM exchange of each of
// qs (comm IDs comm, comm+0x100 …) and on one that does not (a capture
// begun after the setup).
func eachSetup(t *testing.T, comm uint32, qs []qpPair, test func(t *testing.T, c *chunkCap, setup bool)) {
	for _, setup := range []bool{true, false} {
		t.Run(fmt.Sprintf("setup=%v", setup), func(t *testing.T) {
			c := newChunkCap(t)
			if setup {
				for i, q := range qs {
					c.connect(q, comm+0x100*uint32(i))
				}
			}
			test(t, c, setup)
		})
	}
}

func (c *chunkCap) bth(op ibcm.Opcode, qp uint32) *ibcm.BTH {
	p := c.psn[qp]
	c.psn[qp] = (p + 1) & 0xffffff
	return &ibcm.BTH{OpCode: op, PKey: 0xffff, DestQP: qp, PSN: p, AckReq: true}
}

// send adds a SEND_ONLY of an RPC-over-RDMA message: h, then r (when not
// nil) and body.
func (c *chunkCap) send(toServer bool, q qpPair, h *rpcrdma.Header, r *rpcrdma.RPC, body []byte) int {
	c.t.Helper()
	h.Version, h.Credits = 1, 32
	qp := q.cli
	if toServer {
		qp = q.srv
	}
	return c.frame(toServer, c.bth(ibcm.OpRCSendOnly, qp), gopacket.Payload(rpcrdmaMsg(c.t, h, r, body)))
}

// write adds an RDMA WRITE_ONLY from the server into the client's memory
// on connection q.
func (c *chunkCap) write(q qpPair, rkey uint32, va uint64, data []byte) int {
	return c.frame(false, c.bth(ibcm.OpRCWriteOnly, q.cli), &ibcm.RETH{VA: va, RKey: rkey, DMALen: uint32(len(data))}, gopacket.Payload(data))
}

// read adds the server's RDMA READ_REQUEST of the client's memory and the
// client's responses of at most mtu octets each; it returns the last
// frame.
func (c *chunkCap) read(q qpPair, rkey uint32, va uint64, data []byte, mtu int) int {
	psn := c.readRequest(q, rkey, va, len(data))
	last := 0
	for at := 0; at < len(data); at += mtu {
		last = c.readResponse(q, psn, data, at, mtu)
		psn = (psn + 1) & 0xffffff
	}
	return last
}

// readRequest adds the server's RDMA READ_REQUEST of n octets of the
// client's memory on connection q; it returns its PSN.
func (c *chunkCap) readRequest(q qpPair, rkey uint32, va uint64, n int) uint32 {
	req := c.bth(ibcm.OpRCReadRequest, q.cli)
	c.frame(false, req, &ibcm.RETH{VA: va, RKey: rkey, DMALen: uint32(n)})
	return req.PSN
}

// readResponse adds the client's Read Response packet that carries
// data[at:at+mtu] of the whole read data, with PSN psn (the responses
// carry the request's PSNs, IBTA 9.7.5.1.3).
func (c *chunkCap) readResponse(q qpPair, psn uint32, data []byte, at, mtu int) int {
	end := min(at+mtu, len(data))
	op := opSeq{ibcm.OpRCReadRespOnly, ibcm.OpRCReadRespFirst, ibcm.OpRCReadRespMiddle, ibcm.OpRCReadRespLast}.of(at, end, len(data))
	ls := []gopacket.SerializableLayer{&ibcm.BTH{OpCode: op, PKey: 0xffff, DestQP: q.srv, PSN: psn}}
	if op != ibcm.OpRCReadRespMiddle {
		ls = append(ls, &ibcm.AETH{Syndrome: 0x1f, MSN: 1})
	}
	return c.frame(true, append(ls, gopacket.Payload(data[at:end]))...)
}

// chunkRun is what dissecting a chunkCap gave, per frame.
type chunkRun struct {
	findings map[int][]string // codes
	chunks   map[int][]rpcrdma.ChunkData
	rpc      map[int]string // "call|reply xid prog proc reqframe"
}

func (c *chunkCap) run() chunkRun {
	c.t.Helper()
	out := chunkRun{findings: map[int][]string{}, chunks: map[int][]rpcrdma.ChunkData{}, rpc: map[int]string{}}
	d := New(Options{})
	for i := range c.frames {
		r := d.Dissect(&c.frames[i])
		for _, f := range r.Findings {
			out.findings[r.Frame] = append(out.findings[r.Frame], f.Code)
			c.t.Logf("frame %d: %s", r.Frame, f)
		}
		if h, ok := r.Layer("rpcrdma").(*rpcrdma.Header); ok && len(h.Chunks) > 0 {
			out.chunks[r.Frame] = append([]rpcrdma.ChunkData(nil), h.Chunks...)
		}
		if x, ok := r.Layer("rpc").(*rpcrdma.RPC); ok {
			kind := "call"
			if x.MsgType == rpcrdma.MsgReply {
				kind = "reply"
			}
			out.rpc[r.Frame] = fmt.Sprintf("%s 0x%x %d %d %d", kind, x.XID, x.Program, x.Procedure, x.Call.Frame)
		}
	}
	return out
}

// codes lists the findings of every frame, "frame code" sorted by frame.
func (r chunkRun) codes(n int) []string {
	var out []string
	for f := 1; f <= n; f++ {
		for _, c := range r.findings[f] {
			out = append(out, fmt.Sprintf("%d %s", f, c))
		}
	}
	return out
}

const testProg = 400123 // a program without an NFS-family layer

func testCall(xid uint32) *rpcrdma.RPC {
	return &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgCall, RPCVersion: 2, Program: testProg, ProgVersion: 1, Procedure: 6}
}

func testReply(xid uint32) *rpcrdma.RPC {
	return &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgReply}
}

func oneChunk(handle, length uint32, offset uint64) rpcrdma.WriteChunk {
	return rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{{Handle: handle, Length: length, Offset: offset}}}
}

// Two connections between the same two hosts (as NFS nconnect or the
// benchmark capture's four concurrent connections make them) advertise
// the same handle: in their reply chunks at different offsets (the Linux
// client puts the xid in the offset's upper half), in their write chunks
// at the same offset. Each Write is matched to its own call's segment —
// by offset, and by the QP the CM exchange paired with the call's — so
// nothing is outside, both RDMA_NOMSG replies decode, and each READ
// reply is credited with its own Write.
func TestChunksSharedHandleAcrossConnections(t *testing.T) {
	c := newChunkCap(t)
	a, b := qpPair{0x12, 0x13}, qpPair{0x22, 0x23}
	c.connect(a, 0x100)
	c.connect(b, 0x200)
	// Reply chunks, handle 0xcd1, offsets xid<<32 | 0xc5568000.
	callA := c.send(true, a, &rpcrdma.Header{XID: 1, HasReply: true, Reply: oneChunk(0xcd1, 4240, 1<<32|0xc5568000)}, testCall(1), []byte{0, 0, 0, 0})
	callB := c.send(true, b, &rpcrdma.Header{XID: 2, HasReply: true, Reply: oneChunk(0xcd1, 4240, 2<<32|0xc5568000)}, testCall(2), []byte{0, 0, 0, 0})
	replyA := rpcBytes(t, testReply(1), []byte("reply of call 1 in the reply chunk"))
	replyB := rpcBytes(t, testReply(2), []byte("reply of call 2, written first"))
	wB := c.write(b, 0xcd1, 2<<32|0xc5568000, replyB)
	wA := c.write(a, 0xcd1, 1<<32|0xc5568000, replyA)
	nomsgA := c.send(false, a, &rpcrdma.Header{XID: 1, Proc: rpcrdma.ProcNoMsg, HasReply: true, Reply: oneChunk(0xcd1, uint32(len(replyA)), 1<<32|0xc5568000)}, nil, nil)
	nomsgB := c.send(false, b, &rpcrdma.Header{XID: 2, Proc: rpcrdma.ProcNoMsg, HasReply: true, Reply: oneChunk(0xcd1, uint32(len(replyB)), 2<<32|0xc5568000)}, nil, nil)
	// Write chunks, handle 0x77 at 0x1000 on both connections.
	readA := c.send(true, a, &rpcrdma.Header{XID: 3, Writes: []rpcrdma.WriteChunk{oneChunk(0x77, 4096, 0x1000)}}, testCall(3), []byte{0, 0, 0, 0})
	c.send(true, b, &rpcrdma.Header{XID: 4, Writes: []rpcrdma.WriteChunk{oneChunk(0x77, 4096, 0x1000)}}, testCall(4), []byte{0, 0, 0, 0})
	dB := c.write(b, 0x77, 0x1000, bytes.Repeat([]byte{'b'}, 100))
	dA := c.write(a, 0x77, 0x1000, bytes.Repeat([]byte{'a'}, 200))
	repA := c.send(false, a, &rpcrdma.Header{XID: 3, Writes: []rpcrdma.WriteChunk{oneChunk(0x77, 200, 0x1000)}}, testReply(3), nil)
	repB := c.send(false, b, &rpcrdma.Header{XID: 4, Writes: []rpcrdma.WriteChunk{oneChunk(0x77, 100, 0x1000)}}, testReply(4), nil)

	r := c.run()
	if got := r.codes(len(c.frames)); len(got) != 0 {
		t.Errorf("findings %v, want none", got)
	}
	for _, w := range []struct {
		frame int
		rpc   string
	}{
		{nomsgA, fmt.Sprintf("reply 0x1 %d 6 %d", testProg, callA)},
		{nomsgB, fmt.Sprintf("reply 0x2 %d 6 %d", testProg, callB)},
	} {
		if r.rpc[w.frame] != w.rpc {
			t.Errorf("frame %d: RPC %q, want %q (the reply reassembled from its own reply chunk)", w.frame, r.rpc[w.frame], w.rpc)
		}
	}
	for _, w := range []struct {
		frame        int
		kind         rpcrdma.ChunkDataKind
		octets       uint64
		first, last  int
		reported     uint64
		wantReported bool
	}{
		{nomsgA, rpcrdma.ChunkDataReply, uint64(len(replyA)), wA, wA, 0, false},
		{nomsgB, rpcrdma.ChunkDataReply, uint64(len(replyB)), wB, wB, 0, false},
		{repA, rpcrdma.ChunkDataWrite, 200, dA, dA, 200, true},
		{repB, rpcrdma.ChunkDataWrite, 100, dB, dB, 100, true},
	} {
		cs := r.chunks[w.frame]
		if len(cs) != 1 || cs[0].Kind != w.kind || cs[0].Octets != w.octets || cs[0].FirstFrame != w.first || cs[0].LastFrame != w.last ||
			cs[0].HasReported != w.wantReported || cs[0].Reported != w.reported {
			t.Errorf("frame %d: chunk data %+v, want %v of %d octets in frame %d (reported %d)", w.frame, cs, w.kind, w.octets, w.first, w.reported)
		}
	}
	_ = readA
}

// A stack that registers all its memory under one R_Key (a global or
// ALLPHYSICAL registration) tells its segments apart by offset only:
// Writes into any of the outstanding calls' segments are theirs; one
// that lands in none of them, or runs past the end of one, is outside —
// unless the connection's setup was not captured, when a Write outside
// every segment seen may be into one advertised before the capture began.
func TestChunksGlobalRKey(t *testing.T) {
	q := qpPair{ibcmtest.Client.QPN, ibcmtest.Server.QPN}
	eachSetup(t, 0x300, []qpPair{q}, func(t *testing.T, c *chunkCap, setup bool) {
		const rkey = 0x1
		c.send(true, q, &rpcrdma.Header{XID: 10, Writes: []rpcrdma.WriteChunk{oneChunk(rkey, 4096, 0x10000)}}, testCall(10), []byte{0, 0, 0, 0})
		c.send(true, q, &rpcrdma.Header{XID: 11, Writes: []rpcrdma.WriteChunk{oneChunk(rkey, 4096, 0x20000)}, HasReply: true, Reply: oneChunk(rkey, 1024, 0x30000)}, testCall(11), []byte{0, 0, 0, 0})
		w11 := c.write(q, rkey, 0x20000, make([]byte, 300))
		w10 := c.write(q, rkey, 0x10800, make([]byte, 500))
		away := c.write(q, rkey, 0x50000, make([]byte, 64))
		past := c.write(q, rkey, 0x20f00, make([]byte, 512))
		rep10 := c.send(false, q, &rpcrdma.Header{XID: 10, Writes: []rpcrdma.WriteChunk{oneChunk(rkey, 2548, 0x10000)}}, testReply(10), nil)
		rep11 := c.send(false, q, &rpcrdma.Header{XID: 11, Writes: []rpcrdma.WriteChunk{oneChunk(rkey, 300, 0x20000)}}, testReply(11), nil)
		r := c.run()
		want := []string{fmt.Sprintf("%d %s", past, CodeChunkOutside)}
		if setup {
			want = []string{fmt.Sprintf("%d %s", away, CodeChunkOutside), want[0]}
		}
		if got := r.codes(len(c.frames)); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("findings %v, want %v", got, want)
		}
		if cs := r.chunks[rep10]; len(cs) != 1 || cs[0].Octets != 2548 || cs[0].FirstFrame != w10 {
			t.Errorf("reply of xid 10: %+v, want 2548 octets (the Write at 0x800 in its segment) from frame %d", cs, w10)
		}
		if cs := r.chunks[rep11]; len(cs) != 2 || cs[0].Kind != rpcrdma.ChunkDataWrite || cs[0].Octets != 300 || cs[0].FirstFrame != w11 ||
			cs[0].Segments != 1 || cs[0].Used != 1 || cs[1].Kind != rpcrdma.ChunkDataReply || cs[1].Octets != 0 || cs[1].Segments != 1 || cs[1].Used != 0 {
			t.Errorf("reply of xid 11: %+v, want 300 octets of write chunk from frame %d, the reply chunk unused", cs, w11)
		}
	})
}

func failedReply(xid uint32) *rpcrdma.RPC {
	return &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgReply, AcceptStat: 4} // GARBAGE_ARGS
}

// The server pulls a call's read chunk by RDMA Read (READ_REQUEST, then
// the responses by PSN): the octets are the call's, shown on its reply. A
// successful reply to a call whose read chunk nobody read is reported
// (rpcrdma.chunk-unread, a warning: the capture may have missed the
// Reads), a failed one is not; a Read Request that runs past the end of
// its segment is outside (rpcrdma.chunk-read-outside).
func TestChunksRead(t *testing.T) {
	c := newChunkCap(t)
	q := qpPair{ibcmtest.Client.QPN, ibcmtest.Server.QPN}
	c.connect(q, 0x400)
	read := func(xid, handle uint32, va uint64) *rpcrdma.Header {
		return &rpcrdma.Header{XID: xid, Reads: []rpcrdma.ReadSegment{{Position: 100, Segment: rpcrdma.Segment{Handle: handle, Length: 8192, Offset: va}}}}
	}
	c.send(true, q, read(20, 0x55, 0x9000), testCall(20), make([]byte, 100))
	first := len(c.frames) + 1
	last := c.read(q, 0x55, 0x9000, make([]byte, 8192), 4096)
	rep20 := c.send(false, q, &rpcrdma.Header{XID: 20}, testReply(20), nil)
	c.send(true, q, read(21, 0x56, 0xa000), testCall(21), make([]byte, 100))
	rep21 := c.send(false, q, &rpcrdma.Header{XID: 21}, testReply(21), nil)
	c.send(true, q, read(22, 0x57, 0xb000), testCall(22), make([]byte, 100))
	outside := len(c.frames) + 1
	c.read(q, 0x57, 0xb800, make([]byte, 8192), 4096)
	rep22 := c.send(false, q, &rpcrdma.Header{XID: 22}, failedReply(22), nil)
	r := c.run()
	want := []string{fmt.Sprintf("%d %s", rep21, CodeChunkUnread), fmt.Sprintf("%d %s", outside, CodeChunkReadOutside)}
	got := r.codes(len(c.frames))
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("findings %v, want %v", got, want)
	}
	if cs := r.chunks[rep20]; len(cs) != 1 || cs[0].Kind != rpcrdma.ChunkDataRead || cs[0].Octets != 8192 || cs[0].FirstFrame != first+1 || cs[0].LastFrame != last {
		t.Errorf("reply of xid 20: %+v, want 8192 octets of read list in frames %d..%d (the responses)", cs, first+1, last)
	}
	if cs := r.chunks[rep22]; len(cs) != 1 || cs[0].Octets != 0 {
		t.Errorf("reply of xid 22: %+v, want the read list with nothing read", cs)
	}
}

// Two QPs between the same two hosts (NFS nconnect) each carry an RDMA
// Read of a call's read chunk, with the same PSN (each QP numbers its own
// packets), their requests and responses interleaved: each response is
// matched by PSN on the QP it comes back to (the one its call went to),
// so each call is credited with its own octets and none is unread. A
// synthetic capture: the lab's captures have one QP per host pair.
func TestChunksReadsTwoQPsSamePSN(t *testing.T) {
	a, b := qpPair{0x12, 0x13}, qpPair{0x22, 0x23}
	eachSetup(t, 0x700, []qpPair{a, b}, func(t *testing.T, c *chunkCap, setup bool) {
		read := func(xid, handle uint32, va uint64, n uint32) *rpcrdma.Header {
			return &rpcrdma.Header{XID: xid, Reads: []rpcrdma.ReadSegment{{Position: 100, Segment: rpcrdma.Segment{Handle: handle, Length: n, Offset: va}}}}
		}
		dataA, dataB := bytes.Repeat([]byte{'a'}, 4096), bytes.Repeat([]byte{'b'}, 3000)
		c.send(true, a, read(50, 0x55, 0x9000, 4096), testCall(50), make([]byte, 100))
		c.send(true, b, read(51, 0x66, 0xa000, 3000), testCall(51), make([]byte, 100))
		psnA := c.readRequest(a, 0x55, 0x9000, len(dataA))
		psnB := c.readRequest(b, 0x66, 0xa000, len(dataB))
		if psnA != psnB {
			t.Fatalf("PSNs %d and %d: the test needs the same PSN on both QPs", psnA, psnB)
		}
		firstA := c.readResponse(a, psnA, dataA, 0, 2048)
		firstB := c.readResponse(b, psnB, dataB, 0, 2048)
		lastB := c.readResponse(b, psnB+1, dataB, 2048, 2048)
		lastA := c.readResponse(a, psnA+1, dataA, 2048, 2048)
		repA := c.send(false, a, &rpcrdma.Header{XID: 50}, testReply(50), nil)
		repB := c.send(false, b, &rpcrdma.Header{XID: 51}, testReply(51), nil)
		r := c.run()
		if got := r.codes(len(c.frames)); len(got) != 0 {
			t.Errorf("findings %v, want none", got)
		}
		for _, w := range []struct {
			frame, first, last int
			octets             uint64
		}{{repA, firstA, lastA, 4096}, {repB, firstB, lastB, 3000}} {
			if cs := r.chunks[w.frame]; len(cs) != 1 || cs[0].Kind != rpcrdma.ChunkDataRead || cs[0].Octets != w.octets ||
				cs[0].FirstFrame != w.first || cs[0].LastFrame != w.last {
				t.Errorf("reply in frame %d: chunk data %+v, want %d octets of read list in frames %d..%d", w.frame, cs, w.octets, w.first, w.last)
			}
		}
	})
}

// A reply whose write list reports octets written into a write chunk
// that no RDMA Write placed is reported (rpcrdma.chunk-unwritten, a
// warning: the capture may have missed the Writes); a short READ that
// used part of its write chunk, and an unused reply chunk, are normal.
func TestChunksUnwritten(t *testing.T) {
	c := newChunkCap(t)
	q := qpPair{ibcmtest.Client.QPN, ibcmtest.Server.QPN}
	c.connect(q, 0x500)
	c.send(true, q, &rpcrdma.Header{XID: 30, Writes: []rpcrdma.WriteChunk{oneChunk(0x60, 4096, 0xc000)}}, testCall(30), []byte{0, 0, 0, 0})
	rep30 := c.send(false, q, &rpcrdma.Header{XID: 30, Writes: []rpcrdma.WriteChunk{oneChunk(0x60, 1000, 0xc000)}}, testReply(30), nil)
	c.send(true, q, &rpcrdma.Header{XID: 31, Writes: []rpcrdma.WriteChunk{oneChunk(0x61, 4096, 0xd000)}, HasReply: true, Reply: oneChunk(0x62, 1024, 0xe000)}, testCall(31), []byte{0, 0, 0, 0})
	c.write(q, 0x61, 0xd000, make([]byte, 512))
	c.send(false, q, &rpcrdma.Header{XID: 31, Writes: []rpcrdma.WriteChunk{oneChunk(0x61, 512, 0xd000)}}, testReply(31), nil)
	r := c.run()
	if got, want := r.codes(len(c.frames)), []string{fmt.Sprintf("%d %s", rep30, CodeChunkUnwritten)}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("findings %v, want %v", got, want)
	}
}

// A reply Send longer than the requester's Receive size, to a call that
// offered no reply chunk, breaks the inline threshold: an error when the
// CM exchange said the size (RFC 8797: 4096 here), a warning against RFC
// 8166's default of 1024 when the setup was not captured. A reply that
// fits, one to a call that offered a reply chunk, and RDMA_ERROR
// ERR_CHUNK (the proper answer) are not reported.
func TestReplyChunkMissing(t *testing.T) {
	q := qpPair{ibcmtest.Client.QPN, ibcmtest.Server.QPN}
	eachSetup(t, 0x600, []qpPair{q}, func(t *testing.T, c *chunkCap, setup bool) {
		c.send(true, q, &rpcrdma.Header{XID: 40}, testCall(40), []byte{0, 0, 0, 0})
		big := c.send(false, q, &rpcrdma.Header{XID: 40}, testReply(40), make([]byte, 5000))
		c.send(true, q, &rpcrdma.Header{XID: 41}, testCall(41), []byte{0, 0, 0, 0})
		mid := c.send(false, q, &rpcrdma.Header{XID: 41}, testReply(41), make([]byte, 2000))
		c.send(true, q, &rpcrdma.Header{XID: 42, HasReply: true, Reply: oneChunk(0x63, 1024, 0xf000)}, testCall(42), []byte{0, 0, 0, 0})
		c.send(false, q, &rpcrdma.Header{XID: 42}, testReply(42), make([]byte, 5000))
		c.send(true, q, &rpcrdma.Header{XID: 43}, testCall(43), []byte{0, 0, 0, 0})
		c.send(false, q, &rpcrdma.Header{XID: 43, Proc: rpcrdma.ProcError, Err: rpcrdma.ErrChunk}, nil, nil)
		d := New(Options{})
		var got []string
		for i := range c.frames {
			rec := d.Dissect(&c.frames[i])
			for _, f := range rec.Findings {
				got = append(got, fmt.Sprintf("%d %s %s", rec.Frame, f.Code, f.Severity))
			}
		}
		want := []string{fmt.Sprintf("%d %s error", big, CodeReplyChunkMissing)}
		if !setup {
			want = []string{fmt.Sprintf("%d %s warning", big, CodeReplyOverDefault), fmt.Sprintf("%d %s warning", mid, CodeReplyOverDefault)}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("findings %v, want %v", got, want)
		}
	})
}

// A long call goes in a position-zero read chunk (RDMA_NOMSG, RFC 8166
// §3.5.3): once the server has read it, the frame of the last Read
// Response carries the call, decoded; its reply names it.
func TestChunksPositionZeroCall(t *testing.T) {
	c := newChunkCap(t)
	q := qpPair{ibcmtest.Client.QPN, ibcmtest.Server.QPN}
	c.connect(q, 0x700)
	call := rpcBytes(t, testCall(50), bytes.Repeat([]byte{7}, 6000))
	seg := rpcrdma.Segment{Handle: 0x70, Length: uint32(len(call)), Offset: 0xd0000}
	c.send(true, q, &rpcrdma.Header{XID: 50, Proc: rpcrdma.ProcNoMsg, Reads: []rpcrdma.ReadSegment{{Position: 0, Segment: seg}}}, nil, nil)
	last := c.read(q, 0x70, 0xd0000, call, 4096)
	rep := c.send(false, q, &rpcrdma.Header{XID: 50}, testReply(50), nil)
	r := c.run()
	if got := r.codes(len(c.frames)); len(got) != 0 {
		t.Errorf("findings %v, want none", got)
	}
	if want := fmt.Sprintf("call 0x32 %d 6 0", testProg); r.rpc[last] != want {
		t.Errorf("frame %d (last Read Response): RPC %q, want %q", last, r.rpc[last], want)
	}
	if want := fmt.Sprintf("reply 0x32 %d 6 %d", testProg, last); r.rpc[rep] != want {
		t.Errorf("reply frame %d: RPC %q, want %q", rep, r.rpc[rep], want)
	}
	if cs := r.chunks[rep]; len(cs) != 1 || cs[0].Kind != rpcrdma.ChunkDataRead || cs[0].Octets != uint64(len(call)) {
		t.Errorf("reply: chunk data %+v, want the %d octets of the call read", cs, len(call))
	}
}

// In steady state the chunk path allocates nothing per packet: a round of
// a call offering a read chunk, a write chunk and a reply chunk, the
// server's RDMA Read of the read chunk, its Writes into the write and
// reply chunks, and the RDMA_NOMSG reply decoded from the reply chunk.
func TestChunksNoAllocs(t *testing.T) {
	c := newChunkCap(t)
	q := qpPair{ibcmtest.Client.QPN, ibcmtest.Server.QPN}
	c.connect(q, 0x800)
	setup := len(c.frames)
	reply := rpcBytes(t, testReply(60), make([]byte, 200))
	c.send(true, q, &rpcrdma.Header{XID: 60, Reads: []rpcrdma.ReadSegment{{Position: 100, Segment: rpcrdma.Segment{Handle: 0x80, Length: 6000, Offset: 0x10000}}},
		Writes: []rpcrdma.WriteChunk{oneChunk(0x81, 8192, 0x20000)}, HasReply: true, Reply: oneChunk(0x82, 4096, 0x30000)}, testCall(60), make([]byte, 100))
	c.read(q, 0x80, 0x10000, make([]byte, 6000), 4096)
	c.write(q, 0x81, 0x20000, make([]byte, 3000))
	c.write(q, 0x82, 0x30000, reply)
	c.send(false, q, &rpcrdma.Header{XID: 60, Proc: rpcrdma.ProcNoMsg, Writes: []rpcrdma.WriteChunk{oneChunk(0x81, 3000, 0x20000)},
		HasReply: true, Reply: oneChunk(0x82, uint32(len(reply)), 0x30000)}, nil, nil)
	round := c.frames[setup:]
	d := New(Options{})
	for i := range c.frames[:setup] {
		d.Dissect(&c.frames[i])
	}
	run := func() {
		var r *Record
		for i := range round {
			if r = d.Dissect(&round[i]); len(r.Findings) > 0 {
				t.Fatalf("frame %d: %v", r.Frame, r.Findings)
			}
		}
		if h, ok := r.Layer("rpcrdma").(*rpcrdma.Header); !ok || r.Layer("rpc") == nil || len(h.Chunks) != 3 {
			t.Fatalf("the round's reply: %s, chunk data %+v: want its RPC message from the reply chunk and its three chunks", layerNames(r), h)
		}
	}
	for range 3 {
		run()
	}
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations per round of %d packets, want 0", n, len(round))
	}
}

// A call Send seen again after the server has already written into its
// write chunk (the requester resent it: its ACK was lost) keeps its
// chunks and what moved in them: the reply is credited with the Write.
// A call sent again with other chunks has those instead.
func TestChunksCallSentAgain(t *testing.T) {
	c := newChunkCap(t)
	q := qpPair{ibcmtest.Client.QPN, ibcmtest.Server.QPN}
	c.connect(q, 0x900)
	call := &rpcrdma.Header{XID: 70, Writes: []rpcrdma.WriteChunk{oneChunk(0x90, 4096, 0x40000)}}
	first := c.send(true, q, call, testCall(70), []byte{0, 0, 0, 0})
	w := c.write(q, 0x90, 0x40000, make([]byte, 1000))
	again := c.again(first)
	rep := c.send(false, q, &rpcrdma.Header{XID: 70, Writes: []rpcrdma.WriteChunk{oneChunk(0x90, 1000, 0x40000)}}, testReply(70), nil)
	c.send(true, q, &rpcrdma.Header{XID: 71, Writes: []rpcrdma.WriteChunk{oneChunk(0x91, 4096, 0x50000)}}, testCall(71), []byte{0, 0, 0, 0})
	c.send(true, q, &rpcrdma.Header{XID: 71, Writes: []rpcrdma.WriteChunk{oneChunk(0x92, 4096, 0x60000)}}, testCall(71), []byte{0, 0, 0, 0})
	w71 := c.write(q, 0x92, 0x60000, make([]byte, 10))
	rep71 := c.send(false, q, &rpcrdma.Header{XID: 71, Writes: []rpcrdma.WriteChunk{oneChunk(0x92, 10, 0x60000)}}, testReply(71), nil)
	r := c.run()
	if got := r.codes(len(c.frames)); len(got) != 0 {
		t.Errorf("findings %v, want none", got)
	}
	if want := fmt.Sprintf("call 0x46 %d 6 %d", testProg, first); r.rpc[again] != want {
		t.Errorf("frame %d: %q, want the call again (%q)", again, r.rpc[again], want)
	}
	if cs := r.chunks[rep]; len(cs) != 1 || cs[0].Octets != 1000 || cs[0].FirstFrame != w {
		t.Errorf("reply of xid 70: %+v, want the 1000 octets of frame %d", cs, w)
	}
	if cs := r.chunks[rep71]; len(cs) != 1 || cs[0].Octets != 10 || cs[0].FirstFrame != w71 {
		t.Errorf("reply of xid 71: %+v, want the 10 octets of frame %d in the chunk advertised last", cs, w71)
	}
}
