// Package dissect turns captured frames into records: the frame's decoded
// layers (typed structs from layers/… and gopacket's own, each a
// field.Layer) and the findings raised while decoding. It owns the decode
// loop over the layers' DecodeFromBytes (gopacket's DecodingLayer
// contract) and the two kinds of reassembly (TCP streams for iWARP;
// multi-packet Sends for RPC-over-RDMA).
package dissect

import (
	"time"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// Record is one frame after dissection.
//
// A Dissector reuses one Record (and the layer values it points to) for
// every frame: consumers that keep anything past the callback must copy it.
type Record struct {
	// Source names the capture the frame came from ("-" for stdin, the
	// interface name for live capture).
	Source string
	// Frame is the 1-based frame number across the whole run.
	Frame int
	// Time is the capture timestamp.
	Time time.Time
	// CaptureLength and Length are the captured and original lengths.
	CaptureLength, Length int
	// LinkType is the pcap LINKTYPE_ value of the frame.
	LinkType int
	// Data is the frame's bytes (aliases a reused buffer).
	Data []byte
	// Comments are the capture's comments on the frame (pcapng
	// opt_comment).
	Comments []string
	// Layers are the decoded layers in order, outermost first. Reassembled
	// PDUs completed by this frame (iWARP FPDUs, multi-packet Sends) are
	// appended after the frame's own layers, in completion order.
	Layers []field.Layer
	// Offsets[i] is the frame offset where Layers[i] starts, or -1 for a
	// layer decoded from reassembled bytes.
	Offsets []int
	// Findings raised while decoding this frame, Offset counted from the
	// start of the frame where known.
	Findings []finding.Finding

	// uncaptured is how many octets of the frame's packet the capture's
	// snap length did not store, once a layer found the frame cut short
	// (Dissector.uncaptured): what only says they are missing is left
	// out of Findings (keepCaptured).
	uncaptured int

	// hdr are the frame's own headers (Headers), set by the Dissector
	// when hdrSet.
	hdr    Headers
	hdrSet bool
	// The flow of the frame's addresses (netFlowOf) and its hash
	// (connHash), made on first use: the Send, call and chunk tables each
	// key the packet by them.
	flow               gopacket.Flow
	flowHash           uint64
	flowDone, hashDone bool
}

// Headers are the addressing and InfiniBand transport headers of a
// frame's own packet (nil: not in the frame), for the analyses that
// follow the dissector (package transport and conn, the Send, call and
// chunk tables): the Dissector notes them as it decodes, so that each
// per-packet step reads them here instead of walking the layers with a
// type switch of its own.
type Headers struct {
	// IPv4 or IPv6 is the last IP header (at most one is set).
	IPv4 *IPv4
	IPv6 *IPv6
	// GRHInner: the GRH comes after the IP header (the innermost
	// addressing names the packet's connection: flowAddrs).
	GRHInner bool
	TCP      *TCP
	LRH      *ibcm.LRH
	GRH      *ibcm.GRH
	// The first BTH and, at BTHAt in Layers (-1: none), the extension
	// headers after it.
	BTH   *ibcm.BTH
	BTHAt int
	AETH  *ibcm.AETH
	RETH  *ibcm.RETH
	IETH  *ibcm.IETH
	MAD   *ibcm.MAD
	// CM is a CM message whose fixed fields were all decoded (one the
	// snap length cut inside them is only in the layers).
	CM *ibcm.CM
}

// Headers returns the frame's own headers: as the Dissector noted them,
// or, for a record made otherwise (a test's, a damaged record, the
// end-of-input record), found in its layers.
func (r *Record) Headers() *Headers {
	if !r.hdrSet {
		r.hdr = headersIn(r.Layers)
	}
	return &r.hdr
}

// headersIn finds the Headers in layers: the last IP header and GRH, the
// first LRH (the addressing nearest the transport, or the outer LIDs),
// the first of each IB transport header.
func headersIn(layers []field.Layer) Headers {
	h := Headers{BTHAt: -1}
	grhAt, ipAt := -1, -1
	for i, l := range layers {
		switch x := l.(type) {
		case *IPv4:
			h.IPv4, h.IPv6, ipAt = x, nil, i
		case *IPv6:
			h.IPv4, h.IPv6, ipAt = nil, x, i
		case *TCP:
			h.TCP = x
		case *ibcm.LRH:
			if h.LRH == nil {
				h.LRH = x
			}
		case *ibcm.GRH:
			h.GRH, grhAt = x, i
		case *ibcm.BTH:
			if h.BTH == nil {
				h.BTH, h.BTHAt = x, i
			}
		default:
			h.extension(l)
		}
	}
	h.GRHInner = grhAt > ipAt
	return h
}

// extension notes l when it is an IB extension header (or a MAD or CM
// message) not seen before in the frame.
func (h *Headers) extension(l field.Layer) {
	switch x := l.(type) {
	case *ibcm.AETH:
		if h.AETH == nil {
			h.AETH = x
		}
	case *ibcm.RETH:
		if h.RETH == nil {
			h.RETH = x
		}
	case *ibcm.IETH:
		if h.IETH == nil {
			h.IETH = x
		}
	case *ibcm.MAD:
		h.MAD = x
	case *ibcm.CM:
		if !x.FixedCut() { // snapFixedCut
			h.CM = x
		}
	}
}

// noteHeaders notes the Headers of the frame decodeLayers just decoded
// from what it found (at; last, the last layer decoded): the addressing
// headers are the Dissector's own, the IB extension headers the layers
// after the BTH, at the end of the record (found from the end back: they
// are few).
func (d *Dissector) noteHeaders(at *icrcAt, last decodingLayer) {
	r := &d.rec
	h := &r.hdr
	*h, r.hdrSet = Headers{BTHAt: -1}, true
	if at.ip >= 0 {
		if at.v6 {
			h.IPv6 = &d.walk.cur.ip6
		} else {
			h.IPv4 = &d.walk.cur.ip4
		}
	}
	if at.grh >= 0 {
		h.GRH, h.GRHInner = &d.ib.GRH, at.grh > at.ip
	}
	if at.lrh >= 0 {
		h.LRH = &d.ib.LRH
	}
	if tcp, ok := last.(*TCP); ok {
		h.TCP = tcp
	}
	if at.bth == nil {
		return
	}
	h.BTH = at.bth
	for i := len(r.Layers) - 1; i >= 0; i-- {
		l := r.Layers[i]
		// (By its concrete type: comparing two field.Layer values is a
		// call of the runtime's interface comparison, per packet.)
		if b, ok := l.(*ibcm.BTH); ok && b == at.bth {
			h.BTHAt = i
			return
		}
		h.extension(l)
	}
}

// Reset empties r for reuse, keeping its capacity.
func (r *Record) Reset() {
	// Field by field: assigning a whole Record literal built it and copied
	// it with write barriers (5% of the per-packet header decoding).
	r.Source, r.Frame, r.Time = "", 0, time.Time{}
	r.CaptureLength, r.Length, r.LinkType = 0, 0, 0
	r.Data, r.Comments = nil, nil
	r.clear()
	r.hdr, r.flow, r.flowHash = Headers{}, gopacket.Flow{}, 0
}

// clear empties what decoding adds to r, as the Dissector does before
// each frame: its layers and findings and what is noted of them. The
// noted Headers and flow are left as they are (Reset clears them): each
// is read only once its flag says it was set for this record.
func (r *Record) clear() {
	r.Layers, r.Offsets, r.Findings = r.Layers[:0], r.Offsets[:0], r.Findings[:0]
	r.uncaptured, r.hdrSet, r.flowDone, r.hashDone = 0, false, false, false
}

// Add appends a decoded layer found at frame offset off (-1 if reassembled).
// It is not inlined: an inlined copy of its two appends, with their
// growslice and write-barrier branches laid out in line, is ~450 bytes of
// the caller's code, and a frame passes through several (the frame, each
// common header, the BTH, each layer after it); one shared copy stays in
// the instruction cache.
//
//go:noinline
func (r *Record) Add(l field.Layer, off int) {
	r.Layers = append(r.Layers, l)
	r.Offsets = append(r.Offsets, off)
}

// addFinding appends a finding of the frame at frame offset off (-1: not
// placed); section is the part of the specification it refers to, "" for
// this program's own limits.
func (r *Record) addFinding(code string, sev finding.Severity, section, layer string, off int, msg string) {
	r.Findings = append(r.Findings, finding.Finding{Code: code, Severity: sev, Message: msg,
		Section: section, Frame: r.Frame, Layer: layer, Offset: off})
}

// placeFindings makes the findings from index first on, which a layer at
// frame offset off reported, the frame's: Frame set, and Offset, counted
// from the start of the layer, made a frame offset (-1, not placed, when
// off or the finding's own Offset is negative).
func (r *Record) placeFindings(first, off int) {
	for i := first; i < len(r.Findings); i++ {
		f := &r.Findings[i]
		f.Frame = r.Frame
		if f.Offset >= 0 && off >= 0 {
			f.Offset += off
		} else {
			f.Offset = -1
		}
	}
}

// Layer returns the first layer named name, or nil.
func (r *Record) Layer(name string) field.Layer {
	for _, l := range r.Layers {
		if l.Proto().Name == name {
			return l
		}
	}
	return nil
}

// erfLengths makes the frame's lengths those of the packet inside an ERF
// record whose headers are hdr octets, as tshark gives them (the ERF
// header is capture metadata, not wire data).
func (r *Record) erfLengths(hdr int) {
	if r.Length >= hdr {
		r.Length -= hdr
	}
	if r.CaptureLength >= hdr {
		r.CaptureLength -= hdr
	}
}
