// Package dissect turns captured frames into records: the frame's decoded
// layers (typed structs from layers/… and gopacket's own, each a
// field.Layer) and the findings raised while decoding. It owns the decode
// loop over the layers' DecodeFromBytes (gopacket's DecodingLayer
// contract) and the two kinds of reassembly (TCP streams for iWARP;
// multi-packet Sends for RPC-over-RDMA).
package dissect

import (
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
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
}

// Reset empties r for reuse, keeping its capacity.
func (r *Record) Reset() {
	// Field by field: assigning a whole Record literal built it and copied
	// it with write barriers (5% of the per-packet header decoding).
	r.Source, r.Frame, r.Time = "", 0, time.Time{}
	r.CaptureLength, r.Length, r.LinkType = 0, 0, 0
	r.Data, r.Comments = nil, nil
	r.Layers, r.Offsets, r.Findings = r.Layers[:0], r.Offsets[:0], r.Findings[:0]
}

// Add appends a decoded layer found at frame offset off (-1 if reassembled).
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
