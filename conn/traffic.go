package conn

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// pendingXIDs remembers, per RPC xid, the handles the requester offered,
// for the invalidated-STag check. Bounded: the oldest call is forgotten
// first.
type pendingXIDs struct {
	handles map[uint32][]uint32
	order   []uint32
}

func (p *pendingXIDs) put(xid uint32, handles []uint32, limit int) {
	if p.handles == nil {
		p.handles = map[uint32][]uint32{}
	}
	if _, ok := p.handles[xid]; !ok {
		p.order = append(p.order, xid)
	}
	p.handles[xid] = append(p.handles[xid][:0:0], handles...)
	for len(p.handles) > limit && len(p.order) > 0 {
		delete(p.handles, p.order[0])
		p.order = p.order[1:]
	}
	if len(p.order) > 2*limit {
		kept := p.order[:0]
		for _, x := range p.order {
			if _, ok := p.handles[x]; ok {
				kept = append(kept, x)
			}
		}
		p.order = kept
	}
}

func (p *pendingXIDs) get(xid uint32) ([]uint32, bool) {
	h, ok := p.handles[xid]
	return h, ok
}

func (p *pendingXIDs) done(xid uint32) { delete(p.handles, xid) }

// Send checks one complete RDMA Send against its connection's negotiation.
func (t *Tracker) Send(ev *SendEvent) {
	if t.finished {
		return
	}
	t.advance(ev.Time)
	c, toServer := t.sendConn(ev)
	if c == nil {
		t.Unmatched++
		return
	}
	t.touch(c, ev.Time)
	counts := &c.ToClient
	if toServer {
		counts = &c.ToServer
	}
	counts.Sends++
	if ev.RPCRDMA {
		counts.RPCRDMA++
	}
	if ev.Invalidate {
		counts.Invalidate++
	}
	counts.MaxLength = max(counts.MaxLength, ev.Length)
	if !c.Replied() || c.State == StateRejected || !c.RPCRDMA() {
		// Without the server's answer the negotiated values are unknown;
		// other ULPs are not bound by RFC 8797.
		return
	}
	frame := ev.FirstFrame
	if ev.RPCRDMA {
		limit, receiver := c.Negotiated.ClientToServerInline, "server"
		if !toServer {
			limit, receiver = c.Negotiated.ServerToClientInline, "client"
		}
		if ev.Length > limit {
			t.finding(c, pvtdata.Finding{Code: CodeSendExceedsInline, Severity: pvtdata.SeverityError,
				Section: "RFC 8797 §4.2, RFC 8166 §3.3.2", Layer: "conn", Frame: frame, Offset: -1,
				Message: fmt.Sprintf("%s Send of %d octets%s is larger than the %s's negotiated inline threshold of %d octets: the receiver's Receive buffer cannot hold it",
					directionName(toServer), ev.Length, xidNote(ev), receiver, limit)})
		}
	}
	if ev.Invalidate {
		if !c.Negotiated.RemoteInvalidation {
			sev, context := pvtdata.SeverityError, ""
			clientR := c.ClientData.Effective().RemoteInvalidation
			if !toServer && clientR {
				// The receiver said it can take it: a deviation, not a
				// breakage. It is what the Linux server does.
				sev = pvtdata.SeverityWarning
				context = "; the client, which receives it, did set R, so it copes, but RFC 8797 requires both peers' R. " +
					"This is the Linux server's behaviour: svcrdma always sends R=0 yet uses Send with Invalidate whenever the client set R (svc_rdma_parse_connect_private takes sc_snd_w_inv from the client's flags only)"
			}
			t.finding(c, pvtdata.Finding{Code: CodeSendInvNotNegotiated, Severity: sev,
				Section: "RFC 8797 §4.1", Layer: "conn", Frame: frame, Offset: -1,
				Message: fmt.Sprintf("%s Send with Invalidate of STag 0x%08x%s, but remote invalidation was not negotiated (%s)%s",
					directionName(toServer), ev.InvalidateSTag, xidNote(ev), whoSetR(c), context)})
		}
		if toServer {
			t.finding(c, pvtdata.Finding{Code: CodeSendInvFromRequester, Severity: pvtdata.SeverityWarning,
				Section: "RFC 8797 §3.2", Layer: "conn", Frame: frame, Offset: -1,
				Message: fmt.Sprintf("the client (requester) sent Send with Invalidate of STag 0x%08x%s: RFC 8797 provides remote invalidation for the responder's replies only",
					ev.InvalidateSTag, xidNote(ev))})
		} else if ev.RPCRDMA {
			offered, ok := c.pending.get(ev.XID)
			if ok {
				counts.InvalidateChecked++
			}
			if ok && !containsHandle(offered, ev.InvalidateSTag) {
				t.finding(c, pvtdata.Finding{Code: CodeInvalidatedSTagNotOffered, Severity: pvtdata.SeverityError,
					Section: "RFC 8797 §3.2", Layer: "conn", Frame: frame, Offset: -1,
					Message: fmt.Sprintf("the server's reply%s invalidates STag 0x%08x, which the client did not offer in that call's chunks (offered: %s)",
						xidNote(ev), ev.InvalidateSTag, formatHandles(offered))})
			}
		}
	}
	if ev.RPCRDMA {
		if toServer {
			c.pending.put(ev.XID, ev.Handles, t.cfg.MaxPendingCalls)
		} else {
			c.pending.done(ev.XID)
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

func directionName(toServer bool) string {
	if toServer {
		return "client → server"
	}
	return "server → client"
}

func whoSetR(c *Connection) string {
	cr := c.ClientData.Effective().RemoteInvalidation
	sr := c.ServerData.Effective().RemoteInvalidation
	switch {
	case !cr && !sr:
		return "neither peer set R"
	case !cr:
		return "the client did not set R"
	default:
		return "the server did not set R"
	}
}

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

// sendConn finds the connection a Send belongs to and its direction.
func (t *Tracker) sendConn(ev *SendEvent) (*Connection, bool) {
	if ev.Transport == IWARP {
		c := t.lookup(streamKey(ev.Src, ev.Dst))
		if c == nil {
			return nil, false
		}
		return c, ev.Src == c.Client
	}
	c := t.lookup(qpKey(ev.Dst, ev.DestQP))
	if c == nil {
		return nil, false
	}
	toServer := c.ServerQPN == ev.DestQP && hostKey(ev.Dst) == hostKey(c.Server)
	if c.ClientQPN == ev.DestQP && hostKey(ev.Dst) == hostKey(c.Client) {
		toServer = false
	}
	return c, toServer
}
