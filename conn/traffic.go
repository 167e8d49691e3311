package conn

import (
	"fmt"
	"strconv"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/posindex"
)

// pendingXIDs remembers, per RPC xid, the handles the requester offered in
// its call, for the invalidated-STag check, until the reply. Bounded: past
// the limit the oldest call is forgotten first. The calls sit in arrival
// order in calls[first:] (answered ones marked, skipped and compacted away);
// idx finds them by xid. Entries and their handle slices are reused, so a
// connection's steady traffic allocates nothing.
type pendingXIDs struct {
	calls []pendingCall
	first int // the calls before it are all answered or forgotten
	live  int
	idx   posindex.Index[xidKey]
}

type pendingCall struct {
	xid  uint32
	live bool
	hs   []uint32
}

func (p *pendingXIDs) put(xid uint32, handles []uint32, limit int) {
	if i, ok := p.idx.Get(xidKey(xid)); ok {
		// The same xid again (a retransmitted call): its latest handles.
		c := &p.calls[i]
		c.hs = append(c.hs[:0], handles...)
		return
	}
	for p.live >= limit {
		p.forget(p.first)
	}
	if len(p.calls) == cap(p.calls) && len(p.calls) >= 16 && p.live <= len(p.calls)/2 {
		p.compact()
	}
	n := len(p.calls)
	if n < cap(p.calls) {
		p.calls = p.calls[:n+1]
	} else {
		p.calls = append(p.calls, pendingCall{})
	}
	c := &p.calls[n]
	c.xid, c.live, c.hs = xid, true, append(c.hs[:0], handles...)
	p.live++
	p.idx.Set(xidKey(xid), n)
}

func (p *pendingXIDs) get(xid uint32) ([]uint32, bool) {
	if i, ok := p.idx.Get(xidKey(xid)); ok {
		return p.calls[i].hs, true
	}
	return nil, false
}

func (p *pendingXIDs) done(xid uint32) {
	if i, ok := p.idx.Get(xidKey(xid)); ok {
		p.forget(i)
	}
}

// forget drops the live call at i.
func (p *pendingXIDs) forget(i int) {
	p.calls[i].live = false
	p.idx.Delete(xidKey(p.calls[i].xid))
	p.live--
	if p.live == 0 {
		p.calls, p.first = p.calls[:0], 0
		return
	}
	for p.first < len(p.calls) && !p.calls[p.first].live {
		p.first++
	}
}

// compact moves the live calls to the front, in order; the answered ones'
// entries go behind them with their handle slices, for reuse.
func (p *pendingXIDs) compact() {
	w := 0
	for r := p.first; r < len(p.calls); r++ {
		if p.calls[r].live {
			p.calls[w], p.calls[r] = p.calls[r], p.calls[w]
			w++
		}
	}
	p.calls, p.first = p.calls[:w], 0
	p.idx.Reset()
	for i := range p.calls {
		p.idx.Set(xidKey(p.calls[i].xid), i)
	}
}

// reset forgets every call and keeps the storage.
func (p *pendingXIDs) reset() {
	p.calls, p.first, p.live = p.calls[:0], 0, 0
	p.idx.Reset()
}

// maxPendingPool is how many closed connections' call tables the tracker
// keeps for new connections.
const maxPendingPool = 8

// releasePending lets c's remembered calls go (its QPs are gone or it is no
// longer followed); the table's storage serves a later connection.
func (t *Tracker) releasePending(c *Connection) {
	p := c.pending
	c.pending = nil
	if p == nil || cap(p.calls) == 0 || len(t.pendingPool) >= maxPendingPool {
		return
	}
	p.reset()
	t.pendingPool = append(t.pendingPool, p)
}

// xidKey is an RPC xid as a posindex key.
type xidKey uint32

func (x xidKey) Hash() uint32 {
	h := uint32(x) * 0x9e3779b1
	return h ^ h>>16
}

// Send checks one complete RDMA Send against its connection's negotiation.
func (t *Tracker) Send(ev *SendEvent) { t.send(ev, nil) }

// send is Send; acc, when not nil, is the accumulator the Send completed
// in, which remembers the connection of its key between index changes.
func (t *Tracker) send(ev *SendEvent, acc *sendAcc) {
	if !t.begin(ev.Time) {
		return
	}
	c, toServer := t.sendConn(ev, acc)
	if c == nil {
		t.Unmatched++
		return
	}
	t.touch(c, ev.Time)
	counts := &c.ToClient
	if toServer {
		counts = &c.ToServer
	}
	if counts.Sends == 0 {
		counts.FirstFrame, counts.FirstLength = ev.FirstFrame, ev.Length
	}
	counts.Sends++
	if ev.RPCRDMA {
		counts.RPCRDMA++
	}
	if ev.Invalidate {
		counts.Invalidate++
	}
	counts.MaxLength = max(counts.MaxLength, ev.Length)
	if ev.Chunks.Advertised > 0 {
		c.Chunks.merge(&ev.Chunks)
	}
	if !c.Replied() || c.State == StateRejected || !c.RPCRDMA() {
		// Without the server's answer the negotiated values are unknown;
		// other ULPs are not bound by RFC 8797.
		return
	}
	frame := ev.FirstFrame
	// The listed findings keep the values their messages name; Findings
	// builds the messages when they are printed.
	var flags uint8
	if toServer {
		flags |= flagToServer
	}
	if ev.RPCRDMA {
		flags |= flagRPC
		limit := c.Negotiated.ClientToServerInline
		if !toServer {
			limit = c.Negotiated.ServerToClientInline
		}
		if ev.Length > limit && c.NegotiationSeen() {
			t.exceedsInline(c, ev, frame, limit, flags)
		}
	}
	if ev.Invalidate {
		t.sendInvalidate(c, ev, counts, toServer, frame, flags)
	}
	if ev.RPCRDMA {
		if toServer {
			if c.pending == nil {
				t.newPending(c)
			}
			if ev.Reply {
				return // a backchannel reply: not a call awaiting an answer
			}
			c.pending.put(ev.XID, ev.Handles, t.cfg.MaxPendingCalls)
			if rpcCall(ev) {
				t.checkCredits(c, ev)
			}
		} else if !ev.Call {
			if c.pending != nil {
				c.pending.done(ev.XID)
			}
			if rpcReply(ev) {
				c.grant(ev)
			}
		}
	}
}

// The checks of send that find something, and its first call on a
// connection, are functions of their own (out of line), so that the code
// every Send runs stays a few cache lines.

// exceedsInline counts and lists a Send of an RPC-over-RDMA message longer
// than the inline threshold, limit, of its direction.
//
//go:noinline
func (t *Tracker) exceedsInline(c *Connection, ev *SendEvent, frame, limit int, flags uint8) {
	if t.listed(c, CodeSendExceedsInline, finding.SeverityError, frame) {
		c.list(listedFinding{check: checkExceedsInline, sev: finding.SeverityError,
			frame: frame, n: ev.Length, limit: limit, xid: ev.XID, flags: flags}, t.cfg.MaxFindingsPerCode)
	}
}

// newPending gives c a table of the calls awaiting an answer, reused from
// a connection that ended when one is free.
//
//go:noinline
func (t *Tracker) newPending(c *Connection) {
	if n := len(t.pendingPool) - 1; n >= 0 {
		c.pending, t.pendingPool[n] = t.pendingPool[n], nil
		t.pendingPool = t.pendingPool[:n]
	} else {
		c.pending = &pendingXIDs{}
	}
}

// sendInvalidate checks a Send with Invalidate on c (counts its
// direction's): remote invalidation negotiated, sent by the responder, and
// of an STag the call offered.
//
//go:noinline
func (t *Tracker) sendInvalidate(c *Connection, ev *SendEvent, counts *SendCounts, toServer bool, frame int, flags uint8) {
	if !c.Negotiated.RemoteInvalidation && c.NegotiationSeen() {
		code, sev, fl := CodeSendInvNotNegotiated, finding.SeverityError, flags|whoSetR(c)<<flagRShift
		if !toServer && c.ClientData.Effective().RemoteInvalidation {
			// The receiver said it can take it: a deviation, not a
			// breakage. It is what the Linux server does.
			code, sev, fl = CodeSendInvTolerated, finding.SeverityWarning, fl|flagCopes
		}
		if t.listed(c, code, sev, frame) {
			c.list(listedFinding{check: checkInvNotNegotiated, sev: sev,
				frame: frame, n: int(ev.InvalidateSTag), xid: ev.XID, flags: fl}, t.cfg.MaxFindingsPerCode)
		}
	}
	if toServer {
		if t.listed(c, CodeSendInvFromRequester, finding.SeverityWarning, frame) {
			c.list(listedFinding{check: checkInvFromRequester, sev: finding.SeverityWarning,
				frame: frame, n: int(ev.InvalidateSTag), xid: ev.XID, flags: flags}, t.cfg.MaxFindingsPerCode)
		}
	} else if ev.RPCRDMA {
		var offered []uint32
		ok := false
		if c.pending != nil {
			offered, ok = c.pending.get(ev.XID)
		}
		if ok {
			counts.InvalidateChecked++
		}
		if ok && !containsHandle(offered, ev.InvalidateSTag) &&
			t.listed(c, CodeInvalidatedSTagNotOffered, finding.SeverityError, frame) {
			t.keep(c, finding.Finding{Code: CodeInvalidatedSTagNotOffered, Severity: finding.SeverityError,
				Section: "RFC 8797 §3.2", Layer: "conn", Frame: frame, Offset: -1,
				Message: fmt.Sprintf("the server's reply%s invalidates STag 0x%08x, which the client did not offer in that call's chunks (offered: %s)",
					xidNote(ev), ev.InvalidateSTag, formatHandles(offered))})
		}
	}
}

// xidNote is " (xid 0x…)" for a Send with an RPC-over-RDMA header, built
// only when a finding needs it.
func xidNote(ev *SendEvent) string {
	if !ev.RPCRDMA {
		return ""
	}
	return fmt.Sprintf(" (xid 0x%08x)", ev.XID)
}

// msgBuilder builds a per-Send finding's message in a reused buffer, one
// allocation for the string: fmt would box every argument.
type msgBuilder struct{ b []byte }

func (m *msgBuilder) reset() *msgBuilder { m.b = m.b[:0]; return m }

func (m *msgBuilder) s(x string) *msgBuilder { m.b = append(m.b, x...); return m }

func (m *msgBuilder) int(v int) *msgBuilder { m.b = strconv.AppendInt(m.b, int64(v), 10); return m }

// hex appends v as 0x%08x.
func (m *msgBuilder) hex(v uint32) *msgBuilder {
	const digits = "0123456789abcdef"
	m.b = append(m.b, '0', 'x')
	for shift := 28; shift >= 0; shift -= 4 {
		m.b = append(m.b, digits[v>>shift&0xf])
	}
	return m
}

// xid appends xidNote of f's Send.
func (m *msgBuilder) xid(f *listedFinding) *msgBuilder {
	if f.flags&flagRPC != 0 {
		m.s(" (xid ").hex(f.xid).s(")")
	}
	return m
}

func (m *msgBuilder) String() string { return string(m.b) }

func directionName(toServer bool) string {
	if toServer {
		return "client → server"
	}
	return "server → client"
}

// whoSetR says which peers did not set R, as an index in whoSetRText.
func whoSetR(c *Connection) uint8 {
	cr := c.ClientData.Effective().RemoteInvalidation
	sr := c.ServerData.Effective().RemoteInvalidation
	switch {
	case !cr && !sr:
		return 0
	case !cr:
		return 1
	default:
		return 2
	}
}

var whoSetRText = [...]string{"neither peer set R", "the client did not set R", "the server did not set R", ""}

// copesNote ends the message of a Send with Invalidate to a client that set
// R when the server did not.
const copesNote = "; the client, which receives it, did set R, so it copes, but RFC 8797 requires both peers' R. " +
	"This is the Linux server's behaviour: svcrdma always sends R=0 yet uses Send with Invalidate whenever the client set R (svc_rdma_parse_connect_private takes sc_snd_w_inv from the client's flags only)"

func containsHandle(hs []uint32, h uint32) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

func formatHandles(hs []uint32) string {
	if len(hs) == 0 {
		return "none"
	}
	s := ""
	for i, h := range hs {
		if i > 0 {
			s += ", "
		}
		if i == 8 {
			return s + fmt.Sprintf("… %d in all", len(hs))
		}
		s += fmt.Sprintf("0x%08x", h)
	}
	return s
}

// sendConn finds the connection a Send belongs to and its direction; acc,
// when not nil, remembers the answer for its key until the index changes.
func (t *Tracker) sendConn(ev *SendEvent, acc *sendAcc) (*Connection, bool) {
	var c *Connection
	if acc != nil && acc.connKnown && acc.connEpoch == t.epoch {
		c = acc.conn
	} else {
		if ev.Transport == IWARP {
			c = t.lookup(streamKey(ev.Src, ev.Dst))
		} else {
			c = t.lookup(qpKey(ev.Dst, ev.DestQP))
		}
		if acc != nil {
			acc.conn, acc.connEpoch, acc.connKnown = c, t.epoch, true
		}
	}
	if ev.Transport == IWARP {
		if c == nil {
			return nil, false
		}
		return c, ev.Src == c.Client
	}
	if c == nil {
		return nil, false
	}
	toServer := c.ServerQPN == ev.DestQP && hostKey(ev.Dst) == hostKey(c.Server)
	if c.ClientQPN == ev.DestQP && hostKey(ev.Dst) == hostKey(c.Client) {
		toServer = false
	}
	return c, toServer
}
