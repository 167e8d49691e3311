package conn

import (
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
)

// QueuePair is one of a connection's queue pairs as the transport
// analysis counted it: Side is "client" or "server", the summary counts
// the packets delivered to that QP.
type QueuePair struct {
	Side string
	transport.QPSummary
}

// Stream is one direction of an iWARP connection's TCP stream as the
// transport analysis counted it; Side is the sender ("client", "server").
type Stream struct {
	Side string
	transport.StreamSummary
}

// HostPair is the congestion marks counted between a connection's two
// hosts in one direction, over all their queue pairs (From is the sender:
// "client" or "server").
type HostPair struct {
	From string
	transport.Pair
}

// AttachTransport gives every connection the transport analysis' counters
// of its queue pairs (those seeded by its REP) or of its TCP stream.
func (t *Tracker) AttachTransport(a *transport.Analyzer) {
	for _, c := range t.Connections() {
		c.AttachTransport(a)
	}
}

// AttachTransport gives c the transport analysis' counters of its queue
// pairs or TCP stream, as Tracker.AttachTransport does for every
// connection (for one that Tracker.Done handed off).
func (c *Connection) AttachTransport(a *transport.Analyzer) {
	c.QueuePairs, c.Streams, c.HostPairs = c.QueuePairs[:0], c.Streams[:0], c.HostPairs[:0]
	switch {
	case c.Kind == KindSIDR || c.ReplyFrame == 0 || c.State == StateRejected:
	case c.Transport == IWARP:
		cs, ss := netip.AddrPortFrom(c.Client.Addr, c.Client.Port), netip.AddrPortFrom(c.Server.Addr, c.Server.Port)
		if s, ok := a.Stream(cs, ss); ok {
			c.Streams = append(c.Streams, Stream{Side: "client", StreamSummary: s})
		}
		if s, ok := a.Stream(ss, cs); ok {
			c.Streams = append(c.Streams, Stream{Side: "server", StreamSummary: s})
		}
	default:
		if s, ok := a.Summary(transportHost(c.Client), c.ClientQPN, c.ReplyFrame); ok {
			c.QueuePairs = append(c.QueuePairs, QueuePair{Side: "client", QPSummary: s})
		}
		if s, ok := a.Summary(transportHost(c.Server), c.ServerQPN, c.ReplyFrame); ok {
			c.QueuePairs = append(c.QueuePairs, QueuePair{Side: "server", QPSummary: s})
		}
		if p, ok := a.PairCounts(transportHost(c.Client), transportHost(c.Server)); ok {
			c.HostPairs = append(c.HostPairs, HostPair{From: "client", Pair: p})
		}
		if p, ok := a.PairCounts(transportHost(c.Server), transportHost(c.Client)); ok {
			c.HostPairs = append(c.HostPairs, HostPair{From: "server", Pair: p})
		}
	}
}

// transportHost is a peer as the transport analysis names hosts.
func transportHost(p Peer) transport.Host {
	if p.LID != 0 {
		return transport.Host{LID: p.LID, Addr: p.Addr}
	}
	return transport.Host{Addr: p.Addr}
}

// claimTransport lists the transport analysis' findings on rec (package
// transport adds them to the record before the tracker sees it) on the
// connection of the packet they concern: its queue pair, or its TCP
// stream. The findings of one frame all concern its packet, so they go to
// one connection or to none; ClaimedFrame tells which.
func (t *Tracker) claimTransport(rec *dissect.Record, v *frameView) {
	t.claimed = 0
	if !hasTransportFinding(rec) {
		return
	}
	src, dst := v.ends()
	var c *Connection
	switch {
	case v.tcp:
		c = t.lookup(streamKey(src, dst))
	case v.sawBTH:
		c = t.lookup(qpKey(dst, v.destQP))
	}
	if c == nil {
		return
	}
	for _, f := range rec.Findings {
		if f.Layer == transport.Layer && !c.hasFindingAt(f.Code, f.Frame) {
			t.finding(c, f)
		}
	}
	t.claimed = rec.Frame
}

// trackedFinding reports whether rec has a finding that makes the tracker
// look at a packet that carries no RC Send: a transport finding
// (claimTransport), or the snap length's (a CM message cut in its fixed
// fields: cutMAD). Asked of every such packet, it costs a packet without
// findings nothing more than hasTransportFinding.
func trackedFinding(rec *dissect.Record) bool {
	for i := range rec.Findings {
		if f := &rec.Findings[i]; f.Layer == transport.Layer || f.Code == dissect.CodeTruncated {
			return true
		}
	}
	return false
}

// hasTransportFinding reports whether the transport analysis added a
// finding to rec.
func hasTransportFinding(rec *dissect.Record) bool {
	for i := range rec.Findings {
		if rec.Findings[i].Layer == transport.Layer {
			return true
		}
	}
	return false
}

// ClaimedFrame is the frame of the last record whose transport findings
// were listed on a connection (0: the last record's were not).
func (t *Tracker) ClaimedFrame() int { return t.claimed }
