// Package dissect turns captured frames into records: the frame's decoded
// layers (typed structs from layers/… and gopacket's own, each a
// field.Layer) and the findings raised while decoding. It owns the gopacket
// DecodingLayerParsers per link type and the two kinds of reassembly (TCP
// streams for iWARP; multi-packet Sends for RPC-over-RDMA).
package dissect

import (
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
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
	// Layers are the decoded layers in order, outermost first. Reassembled
	// PDUs completed by this frame (iWARP FPDUs, multi-packet Sends) are
	// appended after the frame's own layers, in completion order.
	Layers []field.Layer
	// Offsets[i] is the frame offset where Layers[i] starts, or -1 for a
	// layer decoded from reassembled bytes.
	Offsets []int
	// Findings raised while decoding this frame, Offset counted from the
	// start of the frame where known.
	Findings []pvtdata.Finding
}

// Reset empties r for reuse, keeping its capacity.
func (r *Record) Reset() {
	*r = Record{Layers: r.Layers[:0], Offsets: r.Offsets[:0], Findings: r.Findings[:0]}
}

// Add appends a decoded layer found at frame offset off (-1 if reassembled).
func (r *Record) Add(l field.Layer, off int) {
	r.Layers = append(r.Layers, l)
	r.Offsets = append(r.Offsets, off)
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
