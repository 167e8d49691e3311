package export

import (
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
// oldest given up first (written as unanswered), and those of a
// connection over (ofConnection). The calls of no known connection never
// answered stay to the end of the capture, so a call is kept in a few
// octets: in a slot of a table whose slots are reused, its ends by number.
type callMatcher struct {
	max     int
	pending map[callKey]int32 // the slot of each call awaiting its reply
	// slots hold the calls awaiting their reply, linked oldest first from
	// oldest to newest by prev and next; free links the free slots by
	// next. -1 ends a chain.
	slots          []pendingCall
	oldest, newest int32
	free           int32
	ends           endpoints
	// evicted lists the calls given up by the last message, for the
	// caller to write.
	evicted []pendingCall
}

// callKey is a call's frame and xid (a frame may hold several calls).
type callKey struct {
	frame int
	xid   uint32
}

// pendingCall is a call (or, hasCall false, what is known of the call of a
// reply whose call was not captured).
type pendingCall struct {
	key            callKey
	hasCall        bool
	prog, vers     uint32
	proc           uint32
	callTime       time.Time
	client, server uint32 // ends numbers
	connID         int32
	prev, next     int32
}

// reply is what a call's reply adds to its row.
type reply struct {
	frame        int
	time         time.Time
	kind         string
	hasStat      bool
	stat, accept uint32
}

func (m *callMatcher) init(max int) {
	if max <= 0 {
		max = DefaultMaxCalls
	}
	m.max = max
	m.pending = map[callKey]int32{}
	m.oldest, m.newest, m.free = -1, -1, -1
}

// message takes one RPC-over-RDMA message; it returns the call it
// completes and its reply (with ok), to be written.
func (m *callMatcher) message(rec *dissect.Record, msg *rpcMsg, connID int) (pendingCall, reply, bool) {
	switch {
	case msg.rpc != nil && msg.rpc.MsgType == rpcrdma.MsgCall:
		r := msg.rpc
		if r.Call.Frame != 0 {
			break // the call again (retransmitted): the first one's frame stays
		}
		k := callKey{rec.Frame, r.XID}
		if _, ok := m.pending[k]; ok {
			break
		}
		if len(m.pending) >= m.max {
			m.evicted = append(m.evicted, m.take(m.slots[m.oldest].key))
		}
		m.push(pendingCall{key: k, hasCall: true, prog: r.Program, vers: r.ProgVersion, proc: r.Procedure,
			callTime: rec.Time, client: m.ends.id(msg.src), server: m.ends.id(msg.dst), connID: int32(connID)})
	case msg.rpc != nil && msg.rpc.MsgType == rpcrdma.MsgReply:
		r := msg.rpc
		pc := m.answer(r.XID, r.Call, msg, connID)
		rp := reply{frame: rec.Frame, time: rec.Time, kind: "rpc", hasStat: true, stat: r.ReplyStat, accept: r.AcceptStat}
		if msg.hdr != nil && msg.hdr.Proc == rpcrdma.ProcNoMsg {
			// Reassembled from the reply chunk.
			rp.kind = "rdma_nomsg"
		}
		return pc, rp, true
	case msg.hdr != nil && msg.hdr.Known() && (msg.hdr.Proc == rpcrdma.ProcNoMsg || msg.hdr.Proc == rpcrdma.ProcError):
		// Without an RPC message: an answer when a call with this xid
		// awaits one (else the requester's call in a read chunk, whose
		// RPC header was not captured).
		if msg.hdr.Answers.Frame == 0 {
			break
		}
		pc := m.answer(msg.hdr.XID, msg.hdr.Answers, msg, connID)
		rp := reply{frame: rec.Frame, time: rec.Time, kind: "rdma_nomsg"}
		if msg.hdr.Proc == rpcrdma.ProcError {
			rp.kind = "rdma_error"
		}
		return pc, rp, true
	}
	return pendingCall{}, reply{}, false
}

// answer returns the call a reply answers: the pending one, or one made
// from what the dissector knew of it (a reply sent again, a call given up,
// or, without ref, a call not captured).
func (m *callMatcher) answer(xid uint32, ref rpcrdma.CallRef, msg *rpcMsg, connID int) pendingCall {
	if ref.Frame != 0 {
		if _, ok := m.pending[callKey{ref.Frame, xid}]; ok {
			return m.take(callKey{ref.Frame, xid})
		}
	}
	pc := pendingCall{key: callKey{xid: xid}, client: m.ends.id(msg.dst), server: m.ends.id(msg.src), connID: int32(connID)}
	if ref.Frame != 0 {
		pc.hasCall, pc.prog, pc.vers, pc.proc = true, ref.Program, ref.Version, ref.Procedure
		pc.key.frame, pc.callTime = ref.Frame, time.Unix(0, ref.Time)
	}
	return pc
}

// push adds pc as the newest call awaiting its reply.
func (m *callMatcher) push(pc pendingCall) {
	n := m.free
	if n >= 0 {
		m.free = m.slots[n].next
	} else {
		n = int32(len(m.slots))
		m.slots = append(m.slots, pendingCall{})
	}
	pc.prev, pc.next = m.newest, -1
	m.slots[n] = pc
	if m.newest >= 0 {
		m.slots[m.newest].next = n
	} else {
		m.oldest = n
	}
	m.newest = n
	m.pending[pc.key] = n
}

// take removes the pending call k (which must be there) and returns it.
func (m *callMatcher) take(k callKey) pendingCall {
	n := m.pending[k]
	delete(m.pending, k)
	pc := m.slots[n]
	if pc.prev >= 0 {
		m.slots[pc.prev].next = pc.next
	} else {
		m.oldest = pc.next
	}
	if pc.next >= 0 {
		m.slots[pc.next].prev = pc.prev
	} else {
		m.newest = pc.prev
	}
	m.slots[n] = pendingCall{next: m.free}
	m.free = n
	return pc
}

// ofConnection moves the calls of connection id still awaiting a reply,
// oldest first, to evicted: the connection is over (HandOff), no reply
// can come.
func (m *callMatcher) ofConnection(id int) {
	for n := m.oldest; n >= 0; {
		next := m.slots[n].next
		if int(m.slots[n].connID) == id {
			m.evicted = append(m.evicted, m.take(m.slots[n].key))
		}
		n = next
	}
}

// unanswered returns the calls still awaiting a reply, oldest first, and
// forgets them.
func (m *callMatcher) unanswered() []pendingCall {
	out := make([]pendingCall, 0, len(m.pending))
	for n := m.oldest; n >= 0; n = m.slots[n].next {
		out = append(out, m.slots[n])
	}
	clear(m.pending)
	m.slots, m.oldest, m.newest, m.free = nil, -1, -1, -1
	return out
}

// row is the row of pc and, if it was answered (rp.frame not 0), its reply.
func (m *callMatcher) row(capture string, pc *pendingCall, rp *reply) RPC {
	r := RPC{SchemaVersion: SchemaVersion, Capture: capture, XID: int64(pc.key.xid),
		Client: m.ends.get(pc.client).String(), Server: m.ends.get(pc.server).String(), Connection: frameRef(int(pc.connID))}
	callTime := pc.callTime.UTC()
	if pc.hasCall {
		r.Program, r.Version, r.Procedure = i64(int64(pc.prog)), i64(int64(pc.vers)), i64(int64(pc.proc))
		r.CallFrame = i64(int64(pc.key.frame))
		r.CallTime = &callTime
	}
	if rp.frame != 0 {
		r.ReplyFrame = i64(int64(rp.frame))
		t := rp.time.UTC()
		r.ReplyTime = &t
		kind := rp.kind
		r.ReplyKind = &kind
		if pc.hasCall {
			ms := float64(rp.time.Sub(pc.callTime)) / float64(time.Millisecond)
			r.ReplyMS = &ms
		}
	}
	if rp.hasStat {
		r.ReplyStat = i64(int64(rp.stat))
		if rp.stat == rpcrdma.ReplyAccepted {
			r.AcceptStat = i64(int64(rp.accept))
		}
	}
	return r
}
