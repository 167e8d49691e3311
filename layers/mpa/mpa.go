// Package mpa decodes and builds iWARP connection setup and data on TCP:
// MPA request, reply and reject frames (RFC 5044 §7, with the MPA v2
// enhanced connection establishment of RFC 6581), MPA FPDUs with their
// markers and CRC32c (RFC 5044 §4), DDP segments (RFC 5041) and RDMAP
// messages (RFC 5040).
//
// Every decoder works on one buffer and keeps no state across buffers: the
// TCP stream reassembly and the per-connection negotiation of markers and CRC
// live in package dissect, which passes what was negotiated in FPDUOptions.
// Decoders slice without copying, call SetTruncated on short input and
// return errors that name the field and the byte offset; SerializeTo builds
// the same bytes (with a correct CRC and markers) for tests and the
// generator.
package mpa

import (
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// Protocols declared by this package (layer names in JSON and filters).
var (
	ProtoMPA   = field.NewProto("mpa", "iWARP MPA request/reply frame (RFC 5044 §7, RFC 6581)")
	ProtoFPDU  = field.NewProto("fpdu", "iWARP MPA framed PDU (RFC 5044 §4)")
	ProtoDDP   = field.NewProto("ddp", "iWARP Direct Data Placement (RFC 5041)")
	ProtoRDMAP = field.NewProto("rdmap", "iWARP Remote Direct Memory Access Protocol (RFC 5040)")
)

// Severity-free description of where in the spec a code comes from.
const (
	refMPA   = "RFC 5044 §7.1"
	refMPAv2 = "RFC 6581 §5"
	refFPDU  = "RFC 5044 §4"
	refDDP   = "RFC 5041 §4"
	refRDMAP = "RFC 5040 §4"
)

func boolByte(b bool, v uint8) uint8 {
	if b {
		return v
	}
	return 0
}
