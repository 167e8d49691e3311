package export

import (
	"slices"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// TestCallMatcherSlots: calls awaiting their reply beyond the cap are given
// up oldest first, a reply takes its call out of the middle, the slots of
// the calls gone are reused (the table does not grow with the calls), and
// the calls never answered come out oldest first.
func TestCallMatcherSlots(t *testing.T) {
	var m callMatcher
	m.init(3)
	at := time.Unix(1700000000, 0)
	src, dst := endpoint{lid: 1}, endpoint{lid: 2}
	call := func(frame int) {
		rec := &dissect.Record{Frame: frame, Time: at.Add(time.Duration(frame) * time.Millisecond)}
		msg := rpcMsg{rpc: &rpcrdma.RPC{MsgType: rpcrdma.MsgCall, XID: uint32(100 + frame), Program: 100003}, src: src, dst: dst}
		if _, _, ok := m.message(rec, &msg, 1); ok {
			t.Fatalf("call in frame %d completed a call", frame)
		}
	}
	frames := func(pcs []pendingCall) []int {
		var out []int
		for _, pc := range pcs {
			out = append(out, pc.key.frame)
		}
		return out
	}
	for f := 1; f <= 5; f++ {
		call(f)
	}
	if got := frames(m.evicted); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("given up: frames %v, want [1 2]", got)
	}
	m.evicted = m.evicted[:0]
	// The reply to frame 4's call.
	rec := &dissect.Record{Frame: 6, Time: at.Add(10 * time.Millisecond)}
	msg := rpcMsg{rpc: &rpcrdma.RPC{MsgType: rpcrdma.MsgReply, XID: 104, Call: rpcrdma.CallRef{Frame: 4}}, src: dst, dst: src}
	pc, rp, ok := m.message(rec, &msg, 1)
	if !ok || !pc.hasCall || pc.key.frame != 4 || rp.frame != 6 {
		t.Fatalf("reply: call %+v, reply %+v, %v; want frame 4's call answered in frame 6", pc, rp, ok)
	}
	r := m.row("c", &pc, &rp)
	if r.ReplyMS == nil || *r.ReplyMS != 6 || r.Client != "lid 0x0001" || r.Server != "lid 0x0002" || *r.Program != 100003 {
		t.Errorf("row %+v: want a reply 6 ms after the call, from lid 2 to lid 1", r)
	}
	for f := 7; f <= 20; f++ {
		if f%2 == 1 {
			call(f)
			continue
		}
		// Each odd call is answered at once: at most two calls await
		// their reply after frame 5's.
		msg := rpcMsg{rpc: &rpcrdma.RPC{MsgType: rpcrdma.MsgReply, XID: uint32(100 + f - 1), Call: rpcrdma.CallRef{Frame: f - 1}}, src: dst, dst: src}
		if pc, _, ok := m.message(&dissect.Record{Frame: f, Time: at}, &msg, 1); !ok || pc.key.frame != f-1 || !pc.hasCall {
			t.Fatalf("frame %d: the reply did not complete frame %d's call", f, f-1)
		}
	}
	if len(m.evicted) != 0 || len(m.slots) != 3 {
		t.Errorf("%d calls given up, %d slots; want none given up and the 3 slots reused", len(m.evicted), len(m.slots))
	}
	if got := frames(m.unanswered()); !slices.Equal(got, []int{3, 5}) {
		t.Errorf("unanswered: frames %v, want [3 5]", got)
	}
}
