package view

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
)

// CMTimingJSON is a connection's setup and teardown timing in ms (null
// when the two messages were not both seen).
type CMTimingJSON struct {
	Request             string   `json:"request,omitempty"`
	Reply               string   `json:"reply,omitempty"`
	RequestToReplyMS    *float64 `json:"request_to_reply_ms"`
	ReplyToReadyMS      *float64 `json:"reply_to_ready_ms"`
	DisconnectToReplyMS *float64 `json:"disconnect_to_reply_ms"`
	MRAs                int      `json:"mras"`
	RequestRetries      int      `json:"request_retries"`
	ReplyRetries        int      `json:"reply_retries"`
}

// QueuePairJSON is what the transport analysis counted on one of a
// connection's queue pairs (the packets delivered to it).
type QueuePairJSON struct {
	Side string `json:"side"`
	transport.QPSummary
	NAKs       []transport.NAKCount `json:"naks"`
	AckLatency LatencyJSON          `json:"ack_latency"`
}

// LatencyJSON is a latency's samples and min/avg/max in ms (null without
// samples).
type LatencyJSON struct {
	Samples uint64   `json:"samples"`
	MinMS   *float64 `json:"min_ms"`
	AvgMS   *float64 `json:"avg_ms"`
	MaxMS   *float64 `json:"max_ms"`
}

// HostPairJSON is the congestion marks between a connection's two hosts
// in one direction, over all their queue pairs.
type HostPairJSON struct {
	From  string `json:"from"`
	ECNCE uint64 `json:"ecn_ce"`
	CNPs  uint64 `json:"cnps"`
}

// StreamJSON is what the transport analysis counted on one direction of
// an iWARP connection's TCP stream.
type StreamJSON struct {
	From string `json:"from"`
	transport.StreamSummary
}

func msRef(d time.Duration, ok bool) *float64 {
	if !ok {
		return nil
	}
	v := transport.Milliseconds(d)
	return &v
}

func latencyJSON(l transport.Latency) LatencyJSON {
	ok := l.Samples > 0
	return LatencyJSON{Samples: l.Samples, MinMS: msRef(l.Min, ok), AvgMS: msRef(l.Avg(), ok), MaxMS: msRef(l.Max, ok)}
}

// addAnalysisJSON fills the CM timing, credits and transport parts of j.
func addAnalysisJSON(j *ConnJSON, c *conn.Connection) {
	if t := c.CMTiming(); t.Any() {
		j.CMTiming = &CMTimingJSON{Request: t.Request, Reply: t.Reply, RequestToReplyMS: msRef(t.RequestToReply, t.HasReply),
			ReplyToReadyMS: msRef(t.ReplyToReady, t.HasReady), DisconnectToReplyMS: msRef(t.DisconnectToReply, t.HasDisconnect),
			MRAs: t.MRAs, RequestRetries: t.RequestRetries, ReplyRetries: t.ReplyRetries}
	}
	if c.Credits.Grants > 0 || c.Credits.PeakOutstanding > 0 {
		cr := c.Credits
		j.Credits = &cr
	}
	if c.Chunks.Advertised > 0 {
		ch := c.Chunks
		j.Chunks = &ch
	}
	for _, q := range c.QueuePairs {
		naks := q.NAKList()
		if naks == nil {
			naks = []transport.NAKCount{}
		}
		j.QueuePairs = append(j.QueuePairs, QueuePairJSON{Side: q.Side, QPSummary: q.QPSummary, NAKs: naks, AckLatency: latencyJSON(q.AckLatency)})
	}
	for _, s := range c.Streams {
		j.Streams = append(j.Streams, StreamJSON{From: s.Side, StreamSummary: s.StreamSummary})
	}
	for _, p := range c.HostPairs {
		j.HostPairs = append(j.HostPairs, HostPairJSON{From: p.From, ECNCE: p.ECNCE, CNPs: p.CNPs})
	}
}

// writeLadderAnalysis prints the CM timing, credits and transport lines of
// a connection's ladder.
func writeLadderAnalysis(w *bufio.Writer, c *conn.Connection) {
	if t := c.CMTiming(); t.Any() {
		var parts []string
		if t.HasReply {
			parts = append(parts, fmt.Sprintf("%s→%s %s", t.Request, t.Reply, msText(t.RequestToReply)))
		}
		if t.HasReady {
			parts = append(parts, "REP→RTU "+msText(t.ReplyToReady))
		}
		if t.HasDisconnect {
			parts = append(parts, "DREQ→DREP "+msText(t.DisconnectToReply))
		}
		if t.MRAs > 0 {
			parts = append(parts, fmt.Sprintf("%d MRA", t.MRAs))
		}
		if t.RequestRetries > 0 {
			parts = append(parts, fmt.Sprintf("REQ sent again %d×", t.RequestRetries))
		}
		if t.ReplyRetries > 0 {
			parts = append(parts, fmt.Sprintf("REP sent again %d×", t.ReplyRetries))
		}
		fmt.Fprintf(w, "  cm timing: %s\n", strings.Join(parts, ", "))
	}
	if cr := c.Credits; cr.Grants > 0 || cr.PeakOutstanding > 0 {
		granted := "none seen"
		switch {
		case cr.Grants > 0 && cr.MinGranted == cr.MaxGranted:
			granted = fmt.Sprintf("%d in each of %d replies", cr.Granted, cr.Grants)
		case cr.Grants > 0:
			granted = fmt.Sprintf("%d in the last of %d replies (%d–%d)", cr.Granted, cr.Grants, cr.MinGranted, cr.MaxGranted)
		}
		fmt.Fprintf(w, "  credits: granted %s, peak outstanding %s", granted, plural(cr.PeakOutstanding, "call"))
		if cr.GrantedAtPeak > 0 {
			fmt.Fprintf(w, " (granted then %d)", cr.GrantedAtPeak)
		}
		if cr.Exceeded > 0 {
			fmt.Fprintf(w, ", exceeded %d×", cr.Exceeded)
		}
		w.WriteString("\n")
	}
	if ch := c.Chunks; ch.Advertised > 0 {
		fmt.Fprintf(w, "  chunks: read %d octets, write %d octets, reply %d octets; %s advertised, %d used, %d unused\n",
			ch.ReadOctets, ch.WriteOctets, ch.ReplyOctets, plural(ch.Advertised, "segment"), ch.Used, ch.Unused)
	}
	for _, q := range c.QueuePairs {
		fmt.Fprintf(w, "  QP %s (%s) received %d packets, %d octets (%d requests, %d responses)",
			connQP(q.QPN), q.Side, q.Packets, q.Bytes, q.Requests, q.Responses)
		var parts []string
		if q.PSNGaps > 0 {
			parts = append(parts, fmt.Sprintf("%d PSN gaps (%d PSNs, %d shown by ACKs to be capture loss)", q.PSNGaps, q.Missing, q.CaptureLoss))
		}
		if q.Retransmissions > 0 {
			parts = append(parts, fmt.Sprintf("%d retransmissions", q.Retransmissions))
		}
		for _, n := range q.NAKList() {
			parts = append(parts, fmt.Sprintf("%d NAK %s", n.Count, n.Name))
		}
		if q.RNRNAKs > 0 {
			parts = append(parts, fmt.Sprintf("%d RNR NAKs", q.RNRNAKs))
		}
		if q.MSNRegress > 0 {
			parts = append(parts, fmt.Sprintf("%d ACKs with MSN going back", q.MSNRegress))
		}
		if l := q.AckLatency; l.Samples > 0 {
			parts = append(parts, fmt.Sprintf("ACK latency of its requests min %s avg %s max %s (%d)", msText(l.Min), msText(l.Avg()), msText(l.Max), l.Samples))
		}
		if q.ECNCE+q.CNPs+q.FECN+q.BECN > 0 {
			parts = append(parts, fmt.Sprintf("congestion: %d ECN CE, %d CNPs, %d FECN, %d BECN", q.ECNCE, q.CNPs, q.FECN, q.BECN))
		}
		if len(parts) > 0 {
			w.WriteString("; " + strings.Join(parts, ", "))
		}
		w.WriteString("\n")
	}
	for _, p := range c.HostPairs {
		fmt.Fprintf(w, "  from the %s's host to the %s's (all their queue pairs): %d ECN CE, %d CNPs\n", p.From, otherSide(p.From), p.ECNCE, p.CNPs)
	}
	for _, s := range c.Streams {
		fmt.Fprintf(w, "  TCP from %s: %d segments, %d octets", s.Side, s.Segments, s.Bytes)
		if s.Retransmissions > 0 {
			fmt.Fprintf(w, ", %d retransmissions", s.Retransmissions)
		}
		if s.Gaps > 0 {
			fmt.Fprintf(w, ", %d gaps (%d octets)", s.Gaps, s.Missing)
		}
		if s.OutOfOrder > 0 {
			fmt.Fprintf(w, ", %d out of order", s.OutOfOrder)
		}
		if s.ECNCE > 0 {
			fmt.Fprintf(w, ", %d ECN CE", s.ECNCE)
		}
		w.WriteString("\n")
	}
}

// msText renders a duration in ms with three decimals.
func msText(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/1e6)
}

// plural renders "1 call", "2 calls".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// otherSide is the peer of "client" or "server".
func otherSide(side string) string {
	if side == "client" {
		return "server"
	}
	return "client"
}
