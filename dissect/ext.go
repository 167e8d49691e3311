package dissect

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// extensions holds the decoders of the RDMA families and the reassembly
// state; the Dissector calls them at the points where their traffic is
// found.
type extensions struct {
	d *Dissector
}

func (x *extensions) init(d *Dissector) { x.d = d }

// dissectLink decodes a frame of a non-Ethernet link type; false when the
// link type is not dissected.
func (x *extensions) dissectLink(linkType int, data []byte) bool { return false }

// dissectRoCEv2 decodes a UDP payload on a RoCEv2 port (BTH first).
func (x *extensions) dissectRoCEv2(payload []byte) {}

// dissectRoCEv1 decodes a RoCEv1 Ethernet payload (GRH first).
func (x *extensions) dissectRoCEv1(payload []byte) {}

// dissectTCP hands a TCP segment to iWARP reassembly.
func (x *extensions) dissectTCP(t *TCP) {}

// layerFor maps a layer type decoded by an extension parser to its layer.
func (x *extensions) layerFor(t gopacket.LayerType) field.Layer { return nil }

// finish flushes reassembly at end of input.
func (x *extensions) finish(fn func(*Record)) {}
