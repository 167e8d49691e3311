package mpa

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// FPDU framing constants (RFC 5044 §4).
const (
	// ULPDULengthLen is the size of the ULPDU_Length field.
	ULPDULengthLen = 2
	// CRCLen is the size of the CRC field (present, zero when CRC was not
	// negotiated).
	CRCLen = 4
	// MarkerLen is the size of a marker.
	MarkerLen = 4
	// MarkerInterval is the distance between markers in the stream.
	MarkerInterval = 512
	// MaxMarkers bounds the markers one FPDU can hold (65535-octet ULPDU).
	MaxMarkers = (ULPDULengthLen+0xffff+3+CRCLen)/(MarkerInterval-MarkerLen) + 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRCMode is what the dissector knows about CRC negotiation on a stream.
type CRCMode uint8

const (
	// CRCNotNegotiated: neither MPA frame set C; the CRC field is not
	// checked (siw sends zeros).
	CRCNotNegotiated CRCMode = iota
	// CRCNegotiated: C was set; the CRC is verified.
	CRCNegotiated
	// CRCUnknown: the MPA frames were not seen (capture started
	// mid-stream); a matching CRC is reported good, anything else unknown.
	CRCUnknown
)

// CRCStatus is the verdict on an FPDU's CRC: the one verdict type of
// every CRC field (field.ChecksumStatus, tshark's values).
type CRCStatus = field.ChecksumStatus

const (
	// CRCStatusNotNegotiated: MPA CRC not in use (no CRC present).
	CRCStatusNotNegotiated = field.ChecksumNotPresent
	CRCStatusGood          = field.ChecksumGood
	CRCStatusBad           = field.ChecksumBad
	// CRCStatusUnknown: negotiation not seen and the CRC field does not
	// match the octets.
	CRCStatusUnknown = field.ChecksumUnverified
)

var crcStatusNames = field.ChecksumStatusNames

// FPDUOptions is what the stream negotiated, for one direction. The
// dissector sets it before each DecodeFromBytes; DecodeFromBytes keeps it.
type FPDUOptions struct {
	CRC CRCMode
	// Markers: markers were negotiated for this direction.
	Markers bool
	// StreamOffset is the position of the FPDU's first octet in the FPDU
	// stream (octets since the first octet after the MPA frame, markers
	// included); markers sit where it is a multiple of MarkerInterval.
	StreamOffset int
}

// Marker is one MPA marker found in an FPDU.
type Marker struct {
	// Offset is where the marker sits in the FPDU as on the wire.
	Offset   int
	Reserved uint16
	// FPDUPtr is the marker's pointer back to the FPDU header.
	FPDUPtr uint16
	// Want is the pointer a correct sender writes at this position.
	Want uint16
}

var (
	fULPDULength = ProtoFPDU.Uint("fpdu.ulpdulength", 16, "ULPDU length").WithUnit("bytes").WithRef(refFPDU)
	fPad         = ProtoFPDU.Bytes("fpdu.pad", "Padding").WithRef(refFPDU)
	fCRC         = ProtoFPDU.Hex("fpdu.crc", 32, "CRC").WithRef("RFC 5044 §4.4")
	fCRCStatus   = ProtoFPDU.Uint("fpdu.crc.status", 8, "CRC status").WithNames(crcStatusNames).WithRef("RFC 5044 §4.4")
	fCRCCheck    = ProtoFPDU.Hex("fpdu.crc_check", 32, "CRC expected").WithRef("RFC 5044 §4.4")
	fMarkers     = ProtoFPDU.Group("fpdu.markers", "Markers").WithRef("RFC 5044 §4.3")
	fMarker      = ProtoFPDU.Group("fpdu.marker", "Marker").WithRef("RFC 5044 §4.3")
	fMarkerOff   = ProtoFPDU.Uint("fpdu.marker.offset", 16, "Offset in FPDU")
	fMarkerRes   = ProtoFPDU.Hex("fpdu.marker_res", 16, "Reserved").WithRef("RFC 5044 §4.3")
	fMarkerPtr   = ProtoFPDU.Uint("fpdu.marker_fpduptr", 16, "FPDU back pointer").WithUnit("bytes").WithRef("RFC 5044 §4.3")
)

// FPDU is one MPA framed PDU: ULPDU_Length, the ULPDU (a DDP segment),
// pad to a multiple of 4 and the CRC, with any markers removed.
type FPDU struct {
	layers.BaseLayer
	// Options are the negotiated settings the FPDU was decoded with.
	Options     FPDUOptions
	ULPDULength uint16
	// ULPDU is the DDP segment without markers (also Payload). It aliases
	// the input when no marker sits inside it, the FPDU's own buffer
	// otherwise.
	ULPDU []byte
	Pad   []byte
	// CRC is the CRC field read as a big-endian number (as tshark shows
	// it); CRCWant is the value a correct sender puts there, in the same
	// representation (the CRC32c is sent least significant octet first),
	// computed unless CRC was not negotiated.
	CRC, CRCWant uint32
	CRCStatus    CRCStatus
	Markers      []Marker

	scratch []byte
}

// LayerType returns LayerTypeFPDU.
func (f *FPDU) LayerType() gopacket.LayerType { return LayerTypeFPDU }

// CanDecode returns LayerTypeFPDU.
func (f *FPDU) CanDecode() gopacket.LayerClass { return LayerTypeFPDU }

// NextLayerType returns LayerTypeDDP.
func (f *FPDU) NextLayerType() gopacket.LayerType { return LayerTypeDDP }

// Proto returns ProtoFPDU.
func (f *FPDU) Proto() *field.Proto { return ProtoFPDU }

// PadLen is the pad after a ULPDU of n octets (RFC 5044 §4.1).
func PadLen(n int) int { return (4 - (ULPDULengthLen+n)%4) % 4 }

// MarkersIn counts the marker positions in [off, off+n) of the FPDU stream.
func MarkersIn(off, n int) int {
	if n <= 0 {
		return 0
	}
	first := (off + MarkerInterval - 1) / MarkerInterval * MarkerInterval
	if first >= off+n {
		return 0
	}
	return (off+n-1-first)/MarkerInterval + 1
}

// WireLen returns the length on the wire of an FPDU carrying a ULPDU of
// ulpduLen octets that starts at stream offset off, markers included when
// markers is set.
func WireLen(ulpduLen, off int, markers bool) int {
	n := ULPDULengthLen + ulpduLen + PadLen(ulpduLen) + CRCLen
	if !markers {
		return n
	}
	// Each marker inserted pushes the rest along, possibly over another
	// marker position: count until stable.
	m := 0
	for {
		k := MarkersIn(off, n+m*MarkerLen)
		if k == m {
			return n + m*MarkerLen
		}
		m = k
	}
}

// PeekULPDULength reads the ULPDU_Length of the FPDU at the start of b,
// which begins at stream offset off: a marker there comes first. ok is
// false when b is too short.
func PeekULPDULength(b []byte, off int, markers bool) (n int, ok bool) {
	i := 0
	if markers && off%MarkerInterval == 0 {
		i = MarkerLen
	}
	if len(b) < i+ULPDULengthLen {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(b[i:])), true
}

// DecodeFromBytes decodes one FPDU as on the wire, markers included, with
// f.Options as negotiated. data must hold at least the whole FPDU; octets
// after it are the Payload of no one and ignored (LayerPayload is the
// ULPDU).
func (f *FPDU) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	opts, scratch, markers := f.Options, f.scratch, f.Markers
	*f = FPDU{Options: opts, scratch: scratch[:0], Markers: markers[:0]}
	n, ok := PeekULPDULength(data, opts.StreamOffset, opts.Markers)
	if !ok {
		return truncated(df, "FPDU", "ULPDU_Length", 0, ULPDULengthLen, len(data))
	}
	f.ULPDULength = uint16(n)
	total := WireLen(n, opts.StreamOffset, opts.Markers)
	if len(data) < total {
		df.SetTruncated()
		return fmt.Errorf("FPDU: ULPDU_Length %d needs %d octets on the wire at offset 0, have %d", n, total, len(data))
	}
	wire := data[:total]
	body := wire[:total-CRCLen] // what the CRC covers
	// Remove markers from everything before the CRC.
	var plain []byte
	if opts.Markers && MarkersIn(opts.StreamOffset, total) > 0 {
		f.scratch = f.scratch[:0]
		hdr := 0 // offset of ULPDU_Length in the FPDU on the wire
		if opts.StreamOffset%MarkerInterval == 0 {
			hdr = MarkerLen
		}
		for i := 0; i < len(body); {
			pos := opts.StreamOffset + i
			if pos%MarkerInterval == 0 && len(f.Markers) < MaxMarkers {
				if i+MarkerLen > len(body) {
					return fmt.Errorf("FPDU: marker at offset %d runs into the CRC", i)
				}
				want := uint16(i - hdr)
				if i == 0 {
					want = 0
				}
				f.Markers = append(f.Markers, Marker{Offset: i,
					Reserved: binary.BigEndian.Uint16(body[i:]), FPDUPtr: binary.BigEndian.Uint16(body[i+2:]), Want: want})
				i += MarkerLen
				continue
			}
			next := (pos/MarkerInterval+1)*MarkerInterval - opts.StreamOffset
			end := min(next, len(body))
			f.scratch = append(f.scratch, body[i:end]...)
			i = end
		}
		plain = f.scratch
	} else {
		plain = body
	}
	pad := PadLen(n)
	if len(plain) != ULPDULengthLen+n+pad {
		return fmt.Errorf("FPDU: %d octets left after removing markers at offset 0, want %d", len(plain), ULPDULengthLen+n+pad)
	}
	f.ULPDU = plain[ULPDULengthLen : ULPDULengthLen+n]
	f.Pad = plain[ULPDULengthLen+n:]
	crcField := wire[total-CRCLen:]
	f.CRC = binary.BigEndian.Uint32(crcField)
	if opts.CRC != CRCNotNegotiated {
		f.CRCWant = bits.ReverseBytes32(crc32.Checksum(body, castagnoli))
	}
	switch opts.CRC {
	case CRCNotNegotiated:
		f.CRCStatus = CRCStatusNotNegotiated
	case CRCNegotiated:
		if f.CRC == f.CRCWant {
			f.CRCStatus = CRCStatusGood
		} else {
			f.CRCStatus = CRCStatusBad
		}
	default:
		if f.CRC == f.CRCWant {
			f.CRCStatus = CRCStatusGood
		} else {
			f.CRCStatus = CRCStatusUnknown
		}
	}
	f.Contents = wire
	f.Payload = f.ULPDU
	return nil
}

// VisitFields reports the FPDU's fields.
func (f *FPDU) VisitFields(v field.Visitor) {
	v.Uint(fULPDULength, uint64(f.ULPDULength))
	if len(f.Pad) > 0 {
		v.Bytes(fPad, f.Pad)
	}
	v.Uint(fCRC, uint64(f.CRC))
	v.Uint(fCRCStatus, uint64(f.CRCStatus))
	if f.CRCStatus != CRCStatusNotNegotiated {
		v.Uint(fCRCCheck, uint64(f.CRCWant))
	}
	if len(f.Markers) > 0 {
		v.Begin(fMarkers)
		for _, m := range f.Markers {
			v.Begin(fMarker)
			v.Uint(fMarkerOff, uint64(m.Offset))
			v.Uint(fMarkerRes, uint64(m.Reserved))
			v.Uint(fMarkerPtr, uint64(m.FPDUPtr))
			v.End()
		}
		v.End()
	}
}

// AppendFindings reports a bad CRC, non-zero pad and bad markers. Offsets
// are relative to the FPDU's first octet on the wire.
func (f *FPDU) AppendFindings(dst []finding.Finding) []finding.Finding {
	if f.CRCStatus == CRCStatusBad {
		dst = append(dst, finding.Finding{Code: CodeCRCBad, Severity: finding.SeverityError, Section: "RFC 5044 §4.4",
			Layer: "fpdu", Offset: len(f.Contents) - CRCLen,
			Message: fmt.Sprintf("CRC 0x%08x does not match the FPDU (expected 0x%08x): a receiver drops the stream", f.CRC, f.CRCWant)})
	}
	for _, p := range f.Pad {
		if p != 0 {
			dst = append(dst, finding.Finding{Code: CodePadNonZero, Severity: finding.SeverityWarning, Section: "RFC 5044 §4.1",
				Layer: "fpdu", Offset: -1, Message: fmt.Sprintf("pad octets % x are not zero", f.Pad)})
			break
		}
	}
	for _, m := range f.Markers {
		if m.Reserved != 0 || m.FPDUPtr != m.Want {
			dst = append(dst, finding.Finding{Code: CodeMarkerBad, Severity: finding.SeverityError, Section: "RFC 5044 §4.3",
				Layer: "fpdu", Offset: m.Offset,
				Message: fmt.Sprintf("marker reserved 0x%04x FPDUPTR %d; expected reserved 0 and FPDUPTR %d", m.Reserved, m.FPDUPtr, m.Want)})
		}
	}
	return dst
}

// AppendSummary appends "FPDU crc=good" (nothing when CRC is not in use).
func (f *FPDU) AppendSummary(b []byte) []byte {
	if f.CRCStatus == CRCStatusNotNegotiated {
		return b
	}
	b = append(b, "FPDU crc="...)
	if int(f.CRCStatus) < len(crcStatusSummary) && crcStatusSummary[f.CRCStatus] != "" {
		return append(b, crcStatusSummary[f.CRCStatus]...)
	}
	return append(b, f.CRCStatus.String()...)
}

// crcStatusSummary is crcStatusNames as an array, for AppendSummary.
var crcStatusSummary = func() (t [8]string) {
	for v, s := range crcStatusNames {
		if v < uint64(len(t)) {
			t[v] = s
		}
	}
	return t
}()

// SerializeTo wraps the bytes already in b (the ULPDU, e.g. a DDP layer
// serialized before) into an FPDU: ULPDU_Length, zero pad and the CRC32c
// (zero unless f.Options.CRC is CRCNegotiated), with markers inserted for
// f.Options.StreamOffset when f.Options.Markers is set. The pointers of
// the markers are the correct ones; Markers[i].FPDUPtr values are not used.
func (f *FPDU) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	ulpdu := b.Bytes()
	n := len(ulpdu)
	if n > 0xffff {
		return fmt.Errorf("FPDU: ULPDU of %d octets does not fit ULPDU_Length", n)
	}
	pad := PadLen(n)
	plainLen := ULPDULengthLen + n + pad
	var tmp [ULPDULengthLen]byte
	binary.BigEndian.PutUint16(tmp[:], uint16(n))
	plain := make([]byte, 0, plainLen)
	plain = append(plain, tmp[:]...)
	plain = append(plain, ulpdu...)
	plain = append(plain, make([]byte, pad)...)
	wire := InsertMarkers(nil, plain, f.Options.StreamOffset, f.Options.Markers)
	if f.Options.Markers && (f.Options.StreamOffset+len(wire))%MarkerInterval == 0 {
		// A marker position right where the CRC goes: the marker comes
		// first, and the CRC covers it.
		wire = appendMarker(wire, uint16(len(wire)-markerHeaderOffset(f.Options.StreamOffset)))
	}
	var crc uint32
	if f.Options.CRC == CRCNegotiated {
		crc = crc32.Checksum(wire, castagnoli)
	}
	wire = binary.LittleEndian.AppendUint32(wire, crc)
	if err := b.Clear(); err != nil {
		return err
	}
	out, err := b.PrependBytes(len(wire))
	if err != nil {
		return err
	}
	copy(out, wire)
	f.ULPDULength = uint16(n)
	return nil
}

func markerHeaderOffset(streamOff int) int {
	if streamOff%MarkerInterval == 0 {
		return MarkerLen
	}
	return 0
}

func appendMarker(b []byte, ptr uint16) []byte {
	b = append(b, 0, 0)
	return binary.BigEndian.AppendUint16(b, ptr)
}

// InsertMarkers appends to dst the FPDU body plain (ULPDU_Length, ULPDU
// and pad, no CRC) as it goes on the wire from stream offset off: with a
// marker at every multiple of MarkerInterval when markers is set.
func InsertMarkers(dst, plain []byte, off int, markers bool) []byte {
	if !markers {
		return append(dst, plain...)
	}
	start := len(dst)
	hdr := markerHeaderOffset(off)
	for len(plain) > 0 {
		pos := off + len(dst) - start
		if pos%MarkerInterval == 0 {
			ptr := uint16(len(dst) - start - hdr)
			if len(dst) == start {
				ptr = 0
			}
			dst = appendMarker(dst, ptr)
			continue
		}
		k := min(MarkerInterval-pos%MarkerInterval, len(plain))
		dst = append(dst, plain[:k]...)
		plain = plain[k:]
	}
	return dst
}
