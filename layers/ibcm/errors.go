package ibcm

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// DecodeError is returned when input is too short for a field. It names the
// layer, the field being read, its offset from the start of the layer and
// how many octets were needed and available there.
type DecodeError struct {
	Layer  string // "BTH", "REQ" …
	Field  string // "DestQP", "private data" …
	Offset int    // from the layer's first octet
	Need   int    // octets the field needs at Offset
	Have   int    // octets available at Offset
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %s: need %d octets at offset %d, have %d", e.Layer, e.Field, e.Need, e.Offset, e.Have)
}

// short builds a DecodeError for data too short to hold need octets at off.
func short(layer, field string, data []byte, off, need int) error {
	have := len(data) - off
	if have < 0 {
		have = 0
	}
	return &DecodeError{Layer: layer, Field: field, Offset: off, Need: need, Have: have}
}

// Finding codes raised by this package. They are stable: expectation files
// and users key on them.
const (
	// CodeICRCBad: the Invariant CRC does not match the packet.
	CodeICRCBad = "ibcm.icrc-bad"
	// CodeVCRCBad: the Variant CRC of a native InfiniBand packet does not
	// match.
	CodeVCRCBad = "ibcm.vcrc-bad"
	// CodeICRCMissing: the packet ends before its 4-octet ICRC.
	CodeICRCMissing = "ibcm.icrc-missing"
	// CodeReservedBits: a reserved field is not zero.
	CodeReservedBits = "ibcm.reserved-bits"
	// CodeLengthMismatch: a length field (LRH PktLen, GRH PayLen, BTH
	// PadCnt, ERF rlen) disagrees with the bytes present.
	CodeLengthMismatch = "ibcm.length-mismatch"
	// CodeBadTVer: the BTH transport header version is not 0.
	CodeBadTVer = "ibcm.bth-tver"
	// CodeUnknownOpcode: a BTH opcode IBTA does not define.
	CodeUnknownOpcode = "ibcm.unknown-opcode"
	// CodeNotDecoded: a transport whose extension headers this package
	// does not decode (RD, XRC): the headers are left in the payload.
	CodeNotDecoded = "ibcm.transport-not-decoded"
	// CodeMADBaseVersion: MAD BaseVersion is not 1.
	CodeMADBaseVersion = "ibcm.mad-base-version"
	// CodeMADClassVersion: a CM MAD whose ClassVersion is not 2.
	CodeMADClassVersion = "ibcm.mad-class-version"
	// CodeMADLength: a MAD that is not 256 octets long.
	CodeMADLength = "ibcm.mad-length"
	// CodeUnknownAttribute: a CM attribute ID IBTA does not define.
	CodeUnknownAttribute = "ibcm.unknown-attribute"
	// CodeUnknownMethod: a CM MAD with a method CM does not use for the
	// attribute.
	CodeUnknownMethod = "ibcm.unexpected-method"
	// CodeTruncated: a CM message shorter than IBTA's fixed size (its
	// private data is cut short).
	CodeTruncated = "ibcm.truncated"
	// CodeIPCMInvalid: the service ID is in the rdma_cm IP range but the
	// private data does not start with a valid 36-octet IP CM header.
	CodeIPCMInvalid = "ibcm.ipcm-invalid"
	// CodeUnknownRejectReason: a REJ reason IBTA does not define.
	CodeUnknownRejectReason = "ibcm.unknown-reject-reason"
)

// problems is a bit set of what a layer noticed while decoding; findings
// are built from it only when asked (AppendFindings), so decoding does not
// allocate.
type problems uint32

// newFinding builds a Finding with the package's conventions.
func newFinding(code string, sev finding.Severity, layer string, off int, section, format string, args ...any) finding.Finding {
	return finding.Finding{Code: code, Severity: sev, Layer: layer, Offset: off, Section: section,
		Message: fmt.Sprintf(format, args...)}
}
