package export

import (
	"container/list"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// callMatcher gathers each RPC call and its reply into one row. The
// pairing is the dissector's (by connection and xid, the one rpc.reqframe
// and the rpc command show): a reply names its call (RPC.Call), an
// RDMA_NOMSG or RDMA_ERROR the call it answers (Header.Answers: the reply
// went into the reply chunk, or the transport refused the call). It keeps
// the calls awaiting their reply, by their frame and xid, at most max, the
// oldest given up first (written as unanswered).
type callMatcher struct {
	max     int
	pending map[callKey]*list.Element
	order   list.List // *pendingCall, oldest first
	// evicted lists the calls given up by the last message, linked by
	// nextEvicted, for the caller to write.
	evicted *pendingCall
}

// callKey is a call's frame and xid (a frame may hold several calls).
type callKey struct {
	frame int
	xid   uint32
}

type pendingCall struct {
	key          callKey
	xid          uint32
	hasCall      bool
	prog, vers   uint32
	proc         uint32
	callFrame    int
	callTime     time.Time
	client       endpoint
	server       endpoint
	connID       int
	replyFrame   int
	replyTime    time.Time
	replyKind    string
	hasStat      bool
	stat, accept uint32
	nextEvicted  *pendingCall
}

func (m *callMatcher) init(max int) {
	if max <= 0 {
		max = DefaultMaxCalls
	}
	m.max = max
	m.pending = map[callKey]*list.Element{}
}

// message takes one RPC-over-RDMA message; it returns the call it
// completes (with ok), to be written.
func (m *callMatcher) message(rec *dissect.Record, p *packetView, msg *rpcMsg, connID int) (*pendingCall, bool) {
	switch {
	case msg.rpc != nil && msg.rpc.MsgType == rpcrdma.MsgCall:
		r := msg.rpc
		if r.Call.Frame != 0 {
			return nil, false // the call again (retransmitted): the first one's frame stays
		}
		k := callKey{rec.Frame, r.XID}
		if _, ok := m.pending[k]; ok {
			return nil, false
		}
		if m.order.Len() >= m.max {
			old := m.order.Remove(m.order.Front()).(*pendingCall)
			delete(m.pending, old.key)
			old.nextEvicted, m.evicted = m.evicted, old
		}
		pc := &pendingCall{key: k, xid: r.XID, hasCall: true, prog: r.Program, vers: r.ProgVersion, proc: r.Procedure,
			callFrame: rec.Frame, callTime: rec.Time, client: msg.src, server: msg.dst, connID: connID}
		m.pending[k] = m.order.PushBack(pc)
		return nil, false
	case msg.rpc != nil && msg.rpc.MsgType == rpcrdma.MsgReply:
		r := msg.rpc
		pc := m.answer(r.XID, r.Call, msg, connID)
		pc.replyFrame, pc.replyTime, pc.replyKind = rec.Frame, rec.Time, "rpc"
		if msg.hdr != nil && msg.hdr.Proc == rpcrdma.ProcNoMsg {
			// Reassembled from the reply chunk.
			pc.replyKind = "rdma_nomsg"
		}
		pc.hasStat, pc.stat, pc.accept = true, r.ReplyStat, r.AcceptStat
		return pc, true
	case msg.hdr != nil && msg.hdr.Known() && (msg.hdr.Proc == rpcrdma.ProcNoMsg || msg.hdr.Proc == rpcrdma.ProcError):
		// Without an RPC message: an answer when a call with this xid
		// awaits one (else the requester's call in a read chunk, whose
		// RPC header was not captured).
		if msg.hdr.Answers.Frame == 0 {
			return nil, false
		}
		pc := m.answer(msg.hdr.XID, msg.hdr.Answers, msg, connID)
		pc.replyFrame, pc.replyTime = rec.Frame, rec.Time
		pc.replyKind = "rdma_nomsg"
		if msg.hdr.Proc == rpcrdma.ProcError {
			pc.replyKind = "rdma_error"
		}
		return pc, true
	}
	return nil, false
}

// answer returns the call a reply answers: the pending one, or one made
// from what the dissector knew of it (a reply sent again, a call given up,
// or, without ref, a call not captured).
func (m *callMatcher) answer(xid uint32, ref rpcrdma.CallRef, msg *rpcMsg, connID int) *pendingCall {
	if ref.Frame != 0 {
		if pc := m.take(callKey{ref.Frame, xid}); pc != nil {
			return pc
		}
	}
	pc := &pendingCall{xid: xid, client: msg.dst, server: msg.src, connID: connID}
	if ref.Frame != 0 {
		pc.hasCall, pc.prog, pc.vers, pc.proc = true, ref.Program, ref.Version, ref.Procedure
		pc.callFrame, pc.callTime = ref.Frame, time.Unix(0, ref.Time)
	}
	return pc
}

func (m *callMatcher) take(k callKey) *pendingCall {
	e, ok := m.pending[k]
	if !ok {
		return nil
	}
	delete(m.pending, k)
	return m.order.Remove(e).(*pendingCall)
}

// unanswered returns the calls still awaiting a reply, oldest first, and
// forgets them.
func (m *callMatcher) unanswered() []*pendingCall {
	out := make([]*pendingCall, 0, m.order.Len())
	for e := m.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*pendingCall))
	}
	m.order.Init()
	clear(m.pending)
	return out
}

func (m *callMatcher) row(capture string, pc *pendingCall) RPC {
	r := RPC{SchemaVersion: SchemaVersion, Capture: capture, XID: int64(pc.xid),
		Client: pc.client.String(), Server: pc.server.String(), Connection: frameRef(pc.connID)}
	if pc.hasCall {
		r.Program, r.Version, r.Procedure = i64(int64(pc.prog)), i64(int64(pc.vers)), i64(int64(pc.proc))
		r.CallFrame = i64(int64(pc.callFrame))
		t := pc.callTime.UTC()
		r.CallTime = &t
	}
	if pc.replyFrame != 0 {
		r.ReplyFrame = i64(int64(pc.replyFrame))
		t := pc.replyTime.UTC()
		r.ReplyTime = &t
		kind := pc.replyKind
		r.ReplyKind = &kind
		if pc.hasCall {
			ms := float64(pc.replyTime.Sub(pc.callTime)) / float64(time.Millisecond)
			r.ReplyMS = &ms
		}
	}
	if pc.hasStat {
		r.ReplyStat = i64(int64(pc.stat))
		if pc.stat == rpcrdma.ReplyAccepted {
			r.AcceptStat = i64(int64(pc.accept))
		}
	}
	return r
}
