package dissect

import (
	"slices"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// disconnect adds the teardown (DREQ from the client, DREP) of connection
// q set up by connect with comm.
func (c *chunkCap) disconnect(q qpPair, comm uint32) {
	dreq := &ibcm.CM{AttributeID: ibcm.AttrDREQ}
	dreq.DREQ.LocalCommID, dreq.DREQ.RemoteCommID, dreq.DREQ.RemoteQPN = comm, comm+1, q.srv
	drep := &ibcm.CM{AttributeID: ibcm.AttrDREP}
	drep.DREP.LocalCommID, drep.DREP.RemoteCommID = comm+1, comm
	c.frame(true, ibcmtest.MAD(4, uint64(comm)+2, ibcm.MethodSend, dreq)...)
	c.frame(false, ibcmtest.MAD(5, uint64(comm)+2, ibcm.MethodSend, drep)...)
}

// TestCallsEndWithConnection: a connection's teardown (its DREP) releases
// the calls it left unanswered, with their chunks and the RDMA Reads
// pending for them, and only those: another connection between the same
// two hosts (whose calls are matched by the hosts and xid too) keeps its
// call, set up or not. Without it the Dissector holds one call per
// connection a long capture had (up to Options.MaxCalls), as on the
// bench capture, whose teardowns cut each connection's last round.
func TestCallsEndWithConnection(t *testing.T) {
	a, b, nocm := qpPair{0x12, 0x13}, qpPair{0x22, 0x23}, qpPair{0x32, 0x33}
	c := newChunkCap(t)
	c.connect(a, 0x700)
	c.connect(b, 0x800)
	read := &rpcrdma.Header{XID: 50, Reads: []rpcrdma.ReadSegment{{Position: 100, Segment: rpcrdma.Segment{Handle: 0x55, Length: 8192, Offset: 0x9000}}}}
	c.send(true, a, read, testCall(50), make([]byte, 100))
	c.readRequest(a, 0x55, 0x9000, 8192) // its responses cut by the teardown
	replyChunk := func(xid, handle uint32) *rpcrdma.Header {
		return &rpcrdma.Header{XID: xid, HasReply: true, Reply: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{{Handle: handle, Length: 4096, Offset: 0xa000}}}}
	}
	callB := c.send(true, b, replyChunk(51, 0x66), testCall(51), nil)
	callNoCM := c.send(true, nocm, replyChunk(52, 0x77), testCall(52), nil)
	c.disconnect(a, 0x700)
	ended := len(c.frames)
	replyB := c.send(false, b, &rpcrdma.Header{XID: 51}, testReply(51), nil)
	replyNoCM := c.send(false, nocm, &rpcrdma.Header{XID: 52}, testReply(52), nil)

	d := New(Options{})
	st := d.sends.rpc
	for i := range c.frames {
		r := d.Dissect(&c.frames[i])
		switch r.Frame {
		case ended - 2: // before the DREQ
			if st.calls.n != 3 || st.chunks.n != 3 || st.chunks.reads.Len() != 1 {
				t.Fatalf("before the teardown: %d calls, %d chunk segments, %d Reads pending; want 3, 3, 1",
					st.calls.n, st.chunks.n, st.chunks.reads.Len())
			}
		case ended:
			if st.calls.n != 2 || st.chunks.n != 2 || st.chunks.reads.Len() != 0 {
				t.Fatalf("after the DREP: %d calls, %d chunk segments, %d Reads pending; want 2 (the other connections'), 2, 0",
					st.calls.n, st.chunks.n, st.chunks.reads.Len())
			}
		case replyB, replyNoCM:
			want := map[int]int{replyB: callB, replyNoCM: callNoCM}[r.Frame]
			if x, ok := r.Layer("rpc").(*rpcrdma.RPC); !ok || x.Call.Frame != want {
				t.Errorf("frame %d: reply not named as the one to the call in frame %d", r.Frame, want)
			}
		}
	}
	if st.calls.n != 0 || st.chunks.n != 0 {
		t.Errorf("at the end: %d calls, %d chunk segments held; want none", st.calls.n, st.chunks.n)
	}
}

// TestCallsEndWithDREP: the same on the real rxe NFSv4.2 mount without
// two of its replies (that of a call whose reply chunk was written into,
// and that of the last call before the DREQ), replayed as connection
// after connection: the calls held are those of the connection open, and
// the connections' numbers are given again.
func TestCallsEndWithDREP(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	cut := map[uint32]bool{0xd04e396a: true, 0xd54e396a: true}
	var kept []source.Frame
	d := New(Options{})
	for i := range frames {
		r := d.Dissect(&frames[i])
		if m, ok := r.Layer("rpc").(*rpcrdma.RPC); ok && m.MsgType == rpcrdma.MsgReply && cut[m.XID] {
			continue
		}
		kept = append(kept, frames[i])
	}
	if len(kept) != len(frames)-len(cut) {
		t.Fatalf("%d frames kept of %d", len(kept), len(frames))
	}
	d = New(Options{})
	st := d.sends.rpc
	for round := 0; round < 3; round++ {
		for i := range kept {
			if i == len(kept)-1 && (st.calls.n != len(cut) || st.chunks.n == 0) {
				t.Fatalf("round %d: %d calls and %d chunk segments held before the DREP, want %d and some",
					round, st.calls.n, st.chunks.n, len(cut))
			}
			d.Dissect(&kept[i])
		}
		if st.calls.n != 0 || st.calls.idx.Len() != 0 || st.chunks.n != 0 {
			t.Fatalf("round %d: %d calls (%d indexed) and %d chunk segments held after the DREP",
				round, st.calls.n, st.calls.idx.Len(), st.chunks.n)
		}
	}
	if n := d.sends.rpc.calls.ids.last; n != 1 {
		t.Errorf("%d connection numbers given for one connection open at a time", n)
	}
}

// TestCallsEndWithIWARPStream: an iWARP stream's end (a FIN each way, or
// an RST) releases the calls sent on it that were never answered, with
// their chunks, and gives the stream's number back, as a DREP does on IB
// (TestCallsEndWithConnection); a FIN one way alone half-closes it: the
// other side's reply after it is still matched. The real siw NFSv4.2
// mount, without the reply (frame 70, sent again in 71) to the READ call
// of frame 68, whose write chunk is held: the capture lost it.
func TestCallsEndWithIWARPStream(t *testing.T) {
	all := testcap.Frames(t, testcap.SIW)
	const (
		lastCall  = 83 // DESTROY_CLIENTID
		lastReply = 85
		clientFIN = 86
		serverFIN = 87
	)
	var frames []source.Frame
	for _, f := range all {
		if f.Number != 70 && f.Number != 71 {
			frames = append(frames, f)
		}
	}
	at := func(fs []source.Frame, n int) int {
		i := slices.IndexFunc(fs, func(f source.Frame) bool { return f.Number == n })
		if i < 0 {
			t.Fatalf("no frame %d", n)
		}
		return i
	}
	// The client's FIN before the server's last reply: the TCP sequence
	// allows it (the client sent nothing after its last call).
	halfClosed := slices.Clone(frames)
	fin := halfClosed[at(halfClosed, clientFIN)]
	halfClosed = slices.Delete(halfClosed, at(halfClosed, clientFIN), at(halfClosed, clientFIN)+1)
	halfClosed = slices.Insert(halfClosed, at(halfClosed, lastReply), fin)
	// The client's FIN made an RST.
	reset := slices.Clone(frames)
	i := at(reset, clientFIN)
	reset[i].Data = slices.Clone(reset[i].Data)
	tcpFlags := 14 + int(reset[i].Data[14]&0x0f)*4 + 13 // Ethernet, IPv4, TCP's flags
	if reset[i].Data[tcpFlags]&0x01 == 0 {
		t.Fatalf("frame %d is not the FIN", clientFIN)
	}
	reset[i].Data[tcpFlags] = reset[i].Data[tcpFlags]&^0x01 | 0x04

	for _, tc := range []struct {
		name   string
		frames []source.Frame
		end    int // the frame that ends the stream
		// held are the calls outstanding just before it
		held int
	}{
		{"FIN each way", frames, serverFIN, 1},
		{"half-closed, then FIN", halfClosed, serverFIN, 1},
		{"RST", reset, clientFIN, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(Options{})
			st := d.sends.rpc
			matched := false
			for i := range tc.frames {
				f := &tc.frames[i]
				if f.Number == tc.end && (st.calls.n != tc.held || st.chunks.n == 0) {
					t.Fatalf("before frame %d: %d calls and %d chunk segments held, want %d and some", f.Number, st.calls.n, st.chunks.n, tc.held)
				}
				r := d.Dissect(f)
				if x, ok := r.Layer("rpc").(*rpcrdma.RPC); ok && r.Frame == lastReply {
					matched = x.MsgType == rpcrdma.MsgReply && x.Call.Frame == lastCall
				}
				if r.Frame == tc.end {
					if st.calls.n != 0 || st.calls.idx.Len() != 0 || st.chunks.n != 0 || st.chunks.reads.Len() != 0 {
						t.Fatalf("after frame %d: %d calls (%d indexed), %d chunk segments, %d Reads pending; want none",
							r.Frame, st.calls.n, st.calls.idx.Len(), st.chunks.n, st.chunks.reads.Len())
					}
					if ids := st.calls.ids; ids.last != 1 || !slices.Equal(ids.free, []uint32{1}) {
						t.Errorf("after frame %d: connection numbers %+v, want the stream's 1 given back", r.Frame, ids)
					}
				}
			}
			if !matched {
				t.Errorf("the reply of frame %d is not matched to the call of frame %d", lastReply, lastCall)
			}
		})
	}
}
