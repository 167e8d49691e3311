package transport

import (
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/posindex"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
)

// StreamSummary is what the analysis counted on one direction of an
// iWARP TCP stream.
type StreamSummary struct {
	Src, Dst        netip.AddrPort `json:"-"`
	Segments        uint64         `json:"segments"`
	Bytes           uint64         `json:"bytes"`
	Retransmissions uint64         `json:"retransmissions"`
	// Gaps counts the holes in the sequence (octets never seen; dissect's
	// reassembly reports them as iwarp.stream-gap), Missing their octets.
	Gaps    uint64 `json:"gaps"`
	Missing uint64 `json:"octets_missing"`
	// OutOfOrder counts the segments that filled a hole later.
	OutOfOrder uint64 `json:"out_of_order"`
	// ECNCE counts the segments marked Congestion Experienced.
	ECNCE uint64 `json:"ecn_ce"`
}

type streamKey struct{ src, dst netip.AddrPort }

func (k streamKey) Hash() uint32 {
	a, b := k.src.Addr().As16(), k.dst.Addr().As16()
	h := uint32(k.src.Port())<<16 | uint32(k.dst.Port())
	h *= 0x9e3779b1
	for i := 12; i < 16; i++ {
		h = (h ^ uint32(a[i]) ^ uint32(b[i])<<8) * 16777619
	}
	return h ^ h>>15
}

type stream struct {
	sum  StreamSummary
	next uint32 // the sequence number after the highest octet seen
	have bool
	// The last hole in the sequence, holeFrom up to holeTo (exclusive).
	holeOpen         bool
	holeFrom, holeTo uint32
}

// tcpStreams follows the TCP half-streams that carry iWARP: the first
// frame with an MPA, DDP or RDMAP layer makes a stream known; at most max
// are followed (later ones are not).
type tcpStreams struct {
	max     int
	streams []stream
	idx     posindex.Index[streamKey]
	// Dropped counts streams not followed past max.
	dropped int
}

// hasIWARP reports an iWARP layer among layers.
func hasIWARP(layers []field.Layer) bool {
	for _, l := range layers {
		switch l.(type) {
		case *mpa.Frame, *mpa.FPDU, *mpa.DDP, *mpa.RDMAP:
			return true
		}
	}
	return false
}

// seqDiff is a − b in TCP sequence space.
func seqDiff(a, b uint32) int32 { return int32(a - b) }

// tcpSegment follows one TCP segment of an iWARP stream (iwarp: the frame
// has an iWARP layer).
func (a *Analyzer) tcpSegment(rec *dissect.Record, h *dissect.Headers, iwarp bool) {
	t := h.TCP
	if h.IPv4 == nil && h.IPv6 == nil {
		return
	}
	src, dst := addresses(h)
	k := streamKey{netip.AddrPortFrom(src.Host().Addr, uint16(t.SrcPort)), netip.AddrPortFrom(dst.Host().Addr, uint16(t.DstPort))}
	ts := &a.tcp
	i, ok := ts.idx.Get(k)
	if !ok {
		if !iwarp {
			return
		}
		if len(ts.streams) >= ts.max {
			ts.dropped++
			return
		}
		i = len(ts.streams)
		ts.streams = append(ts.streams, stream{sum: StreamSummary{Src: k.src, Dst: k.dst}})
		ts.idx.Set(k, i)
	}
	s := &ts.streams[i]
	n := uint32(rec.WireLength(t.Payload)) // not the captured octets: sequence space
	s.sum.Segments++
	s.sum.Bytes += uint64(n)
	if ceMarked(h) {
		s.sum.ECNCE++
		a.add(rec, CodeECNCE, finding.SeverityInfo, "RFC 3168 §5",
			"IP ECN Congestion Experienced on TCP "+k.src.String()+" → "+k.dst.String()+": a queue on the path was filling")
	}
	// The segment's length in sequence space: SYN and FIN count one.
	seqLen := n
	if t.SYN {
		seqLen++
	}
	if t.FIN {
		seqLen++
	}
	end := t.Seq + seqLen
	if !s.have {
		s.have, s.next = true, end
		return
	}
	if seqLen == 0 {
		return // a pure ACK
	}
	if seqLen == 1 && !t.FIN && !t.SYN && t.Seq == s.next-1 {
		return // a keep-alive probe: one octet already sent, on purpose
	}
	if s.holeOpen && seqDiff(t.Seq, s.holeFrom) >= 0 && seqDiff(end, s.holeTo) <= 0 {
		// Fills the hole an earlier segment left: out of order, not
		// resent.
		s.sum.OutOfOrder++
		switch {
		case t.Seq == s.holeFrom:
			s.holeFrom = end
		case end == s.holeTo:
			s.holeTo = t.Seq
		}
		if seqDiff(s.holeTo, s.holeFrom) <= 0 {
			s.holeOpen = false
		}
		return
	}
	switch d := seqDiff(t.Seq, s.next); {
	case d > 0:
		s.sum.Gaps++
		s.sum.Missing += uint64(d)
		s.holeOpen, s.holeFrom, s.holeTo = true, s.next, t.Seq
		s.next = end
	case seqDiff(end, s.next) <= 0:
		s.sum.Retransmissions++
		what := "sequence " + itoa(uint64(t.Seq)) + "–" + itoa(uint64(end-1)) + " (" + itoa(uint64(n)) + " octets)"
		if n == 0 {
			what = "the FIN at sequence " + itoa(uint64(t.Seq))
		}
		a.add(rec, CodeTCPRetransmission, finding.SeverityWarning, "RFC 9293 §3.10.7.4",
			"TCP "+k.src.String()+" → "+k.dst.String()+": "+what+" was sent before; retransmitted")
	default:
		if d < 0 {
			s.sum.Retransmissions++
			a.add(rec, CodeTCPRetransmission, finding.SeverityWarning, "RFC 9293 §3.10.7.4",
				"TCP "+k.src.String()+" → "+k.dst.String()+": segment at sequence "+itoa(uint64(t.Seq))+" repeats "+
					itoa(uint64(-d))+" octets sent before, then carries new ones")
		}
		s.next = end
	}
}

// Stream returns the counters of the iWARP TCP stream from src to dst.
func (a *Analyzer) Stream(src, dst netip.AddrPort) (StreamSummary, bool) {
	if i, ok := a.tcp.idx.Get(streamKey{src, dst}); ok {
		return a.tcp.streams[i].sum, true
	}
	return StreamSummary{}, false
}
