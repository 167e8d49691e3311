package mpa

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// The 16-octet keys that open MPA request and reply frames (RFC 5044 §7.1).
var (
	KeyRequest = [16]byte{'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e'}
	KeyReply   = [16]byte{'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e'}
)

// Frame header sizes and limits.
const (
	// FrameHeaderLen is key (16), flags (1), Rev (1), PD_Length (2).
	FrameHeaderLen = 20
	// MaxPrivateData is the largest PD_Length RFC 5044 §7.1 allows.
	MaxPrivateData = 512
	// IRDORDLen is the size of the MPA v2 IRD and ORD words (RFC 6581).
	IRDORDLen = 4
)

// Flag bits of the MPA flags octet.
const (
	FlagMarkers  uint8 = 0x80 // M: the sender wants markers on what it receives
	FlagCRC      uint8 = 0x40 // C: CRC32c on FPDUs
	FlagReject   uint8 = 0x20 // R: the responder rejects the connection
	FlagEnhanced uint8 = 0x10 // MPA v2 enhanced connection establishment (RFC 6581)
	// FlagSiwGSO is Linux siw's non-standard MPA_RR_FLAG_GSO_EXP: a
	// reserved bit siw sets to announce its GSO framing experiment.
	FlagSiwGSO       uint8 = 0x08
	FlagReservedMask uint8 = 0x07
)

// MPA v2 IRD/ORD word bits (RFC 6581 §5.1).
const (
	IRDPeerToPeer   uint16 = 0x8000
	IRDZeroRTR      uint16 = 0x4000 // zero-length RDMA Write/Read/Send as RTR allowed
	ORDWriteRTR     uint16 = 0x8000 // zero-length RDMA Write as RTR
	ORDReadRTR      uint16 = 0x4000 // zero-length RDMA Read as RTR
	IRDORDValueMask uint16 = 0x3fff
)

// FrameKind says which key opened the frame.
type FrameKind uint8

const (
	// FrameRequest is an MPA Request (key "MPA ID Req Frame").
	FrameRequest FrameKind = 1
	// FrameReply is an MPA Reply or Reject (key "MPA ID Rep Frame").
	FrameReply FrameKind = 2
)

var frameKindNames = [...]string{FrameRequest: "Request", FrameReply: "Reply"}

func (k FrameKind) String() string { return enum.Name("FrameKind", frameKindNames[:], k) }

// IRDORDFormat says how IRD and ORD were found at the start of the private
// data.
type IRDORDFormat uint8

const (
	// IRDORDNone: no IRD/ORD words (no Enhanced flag, or too short). The
	// 32-bit IRD/ORD that SMB Direct (MS-SMBD Appendix A) sends in MPA
	// revision 1 private data is ULP data: pvtdata labels it.
	IRDORDNone IRDORDFormat = iota
	// IRDORDv2: RFC 6581 16-bit words, big-endian (Enhanced flag).
	IRDORDv2
	// IRDORDv2LittleEndian: RFC 6581 words written little-endian by old
	// code; values and bits read after swapping.
	IRDORDv2LittleEndian
)

var irdordFormatNames = map[uint64]string{
	uint64(IRDORDNone):           "none",
	uint64(IRDORDv2):             "MPA v2 (RFC 6581, big-endian)",
	uint64(IRDORDv2LittleEndian): "MPA v2 words little-endian (legacy quirk)",
}

func (f IRDORDFormat) String() string { return enum.NameIn("IRDORDFormat", irdordFormatNames, f) }

// LittleEndian reports a legacy little-endian layout.
func (f IRDORDFormat) LittleEndian() bool {
	return f == IRDORDv2LittleEndian
}

var (
	fKeyReq      = ProtoMPA.Bytes("mpa.key.req", "ID Req frame").WithRef(refMPA)
	fKeyRep      = ProtoMPA.Bytes("mpa.key.rep", "ID Rep frame").WithRef(refMPA)
	fFrameType   = ProtoMPA.Uint("mpa.frame_type", 8, "Frame type").WithNames(frameTypeNames)
	fFlags       = ProtoMPA.Hex("mpa.flags", 8, "Flags")
	fMarkerFlag  = ProtoMPA.Bool("mpa.marker_flag", "Marker flag (M)").WithRef(refMPA)
	fCRCFlag     = ProtoMPA.Bool("mpa.crc_flag", "CRC flag (C)").WithRef(refMPA)
	fRejFlag     = ProtoMPA.Bool("mpa.rej_flag", "Connection rejected flag (R)").WithRef(refMPA)
	fEnhFlag     = ProtoMPA.Bool("mpa.enhanced_flag", "Enhanced connection establishment (MPA v2)").WithRef(refMPAv2)
	fGSOFlag     = ProtoMPA.Bool("mpa.siw_gso_flag", "siw GSO_EXP (0x08, non-standard, Linux siw)")
	fRes         = ProtoMPA.Hex("mpa.res", 3, "Reserved (0x07)").WithRef(refMPA)
	fRev         = ProtoMPA.Uint("mpa.rev", 8, "Revision").WithRef(refMPA)
	fPDLength    = ProtoMPA.Uint("mpa.pdlength", 16, "Private data length").WithUnit("bytes").WithRef(refMPA)
	fPrivateData = ProtoMPA.Bytes("mpa.privatedata", "Private data").WithRef(refMPA)
	fIRDORD      = ProtoMPA.Group("mpa.irdord", "IRD/ORD").WithRef(refMPAv2)
	fIRDORDFmt   = ProtoMPA.Uint("mpa.irdord.format", 8, "IRD/ORD layout").WithNames(irdordFormatNames)
	fIRD         = ProtoMPA.Uint("mpa.ird", 14, "Inbound RDMA Read Queue Depth (IRD)").WithRef(refMPAv2)
	fIRDP2P      = ProtoMPA.Bool("mpa.ird.p2p", "Peer-to-peer mode (IRD bit 15)").WithRef(refMPAv2)
	fIRDZeroRTR  = ProtoMPA.Bool("mpa.ird.zero_rtr", "Zero-length RTR allowed (IRD bit 14)").WithRef(refMPAv2)
	fORD         = ProtoMPA.Uint("mpa.ord", 14, "Outbound RDMA Read Queue Depth (ORD)").WithRef(refMPAv2)
	fORDWriteRTR = ProtoMPA.Bool("mpa.ord.write_rtr", "RDMA Write as RTR (ORD bit 15)").WithRef(refMPAv2)
	fORDReadRTR  = ProtoMPA.Bool("mpa.ord.read_rtr", "RDMA Read as RTR (ORD bit 14)").WithRef(refMPAv2)
	fULPData     = ProtoMPA.Bytes("mpa.ulp_data", "ULP private data") // after IRD/ORD in MPA v2, all of it in v1
	fPvtdata     = ProtoMPA.Group("mpa.pvtdata", "ULP private data decode").WithRef("RFC 8797 §5.2")
)

// Frame is an MPA Request, Reply or Reject frame (RFC 5044 §7.1), with the
// MPA v2 IRD/ORD words of RFC 6581 and the ULP private data after them.
type Frame struct {
	layers.BaseLayer
	Kind FrameKind
	// Flags is the whole flags octet: M, C, R, Enhanced, siw GSO and 3
	// reserved bits.
	Flags    uint8
	Revision uint8
	// PDLength is PD_Length as sent.
	PDLength uint16
	// PrivateData is the private data present (PDLength octets, fewer when
	// the frame is cut short: see Overrun).
	PrivateData []byte
	// Overrun reports that PD_Length runs past the end of the frame.
	Overrun bool
	// Uncaptured reports, with Overrun, that the frame's end is where
	// the capture's snap length cut the stream (set by the reassembly
	// that knows it): the private data present is only what was
	// captured.
	Uncaptured bool
	// PDLimit is the PD_Length above which AppendFindings reports
	// CodePDLengthOver512; 0 means MaxPrivateData (RFC 5044's 512). Set it
	// after DecodeFromBytes, which clears the Frame.
	PDLimit int

	// IRDORD says whether and how MPA v2 IRD/ORD words were found.
	IRDORD IRDORDFormat
	// IRD and ORD hold the words as a receiver reads them once the byte
	// order is known: the 14-bit value with the two control bits on top.
	IRD, ORD uint16
	// ULPData is the private data after IRD/ORD: what the ULP sent.
	ULPData []byte
	// ULPOffset is where ULPData starts within PrivateData.
	ULPOffset int
	// PD is the decode of ULPData: the ULP it belongs to and the RFC 8797
	// reading (ModeRFC8797), with the Hint of the frame's kind; Identify
	// redoes it with the TCP port.
	PD pvtdata.PrivateData
	// port is the passive side's TCP port Identify was given (0: none).
	port uint16
}

// LayerType returns LayerTypeFrame.
func (f *Frame) LayerType() gopacket.LayerType { return LayerTypeFrame }

// CanDecode returns LayerTypeFrame.
func (f *Frame) CanDecode() gopacket.LayerClass { return LayerTypeFrame }

// NextLayerType returns gopacket.LayerTypeZero: FPDUs follow on the stream,
// not inside the frame.
func (f *Frame) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// Proto returns ProtoMPA.
func (f *Frame) Proto() *field.Proto { return ProtoMPA }

// Markers reports the M flag.
func (f *Frame) Markers() bool { return f.Flags&FlagMarkers != 0 }

// CRC reports the C flag.
func (f *Frame) CRC() bool { return f.Flags&FlagCRC != 0 }

// Rejected reports the R flag (meaningful in a reply).
func (f *Frame) Rejected() bool { return f.Flags&FlagReject != 0 }

// Enhanced reports the MPA v2 Enhanced flag.
func (f *Frame) Enhanced() bool { return f.Flags&FlagEnhanced != 0 }

// SiwGSO reports siw's non-standard GSO_EXP flag.
func (f *Frame) SiwGSO() bool { return f.Flags&FlagSiwGSO != 0 }

// Reserved returns the 3 reserved flag bits.
func (f *Frame) Reserved() uint8 { return f.Flags & FlagReservedMask }

// IRDValue is the IRD value without control bits.
func (f *Frame) IRDValue() uint16 { return f.IRD & IRDORDValueMask }

// ORDValue is the ORD value without control bits.
func (f *Frame) ORDValue() uint16 { return f.ORD & IRDORDValueMask }

// PeerToPeer reports the IRD peer-to-peer bit (MPA v2).
func (f *Frame) PeerToPeer() bool { return f.IRDORD != IRDORDNone && f.IRD&IRDPeerToPeer != 0 }

// ZeroLengthRTR reports the IRD zero-length RTR bit (MPA v2).
func (f *Frame) ZeroLengthRTR() bool { return f.IRDORD != IRDORDNone && f.IRD&IRDZeroRTR != 0 }

// WriteRTR reports the ORD RDMA Write RTR bit (MPA v2).
func (f *Frame) WriteRTR() bool { return f.IRDORD != IRDORDNone && f.ORD&ORDWriteRTR != 0 }

// ReadRTR reports the ORD RDMA Read RTR bit (MPA v2).
func (f *Frame) ReadRTR() bool { return f.IRDORD != IRDORDNone && f.ORD&ORDReadRTR != 0 }

// FrameKindOf reports whether b starts with an MPA key (or, when b is
// shorter than a key, with the start of one: more data may complete it).
// complete is false in the latter case.
func FrameKindOf(b []byte) (kind FrameKind, complete bool) {
	n := min(len(b), len(KeyRequest))
	switch {
	case bytes.Equal(b[:n], KeyRequest[:n]) && bytes.Equal(b[:n], KeyReply[:n]):
		// The keys share 9 octets ("MPA ID Re"); a shorter prefix is
		// both.
		return FrameRequest, false
	case bytes.Equal(b[:n], KeyRequest[:n]):
		return FrameRequest, n == len(KeyRequest)
	case bytes.Equal(b[:n], KeyReply[:n]):
		return FrameReply, n == len(KeyReply)
	}
	return 0, false
}

// IsKeyPrefix reports whether b could be the start of an MPA frame.
func IsKeyPrefix(b []byte) bool {
	k, _ := FrameKindOf(b)
	return k != 0
}

// FrameLen returns the length of the frame at the start of b from its
// header (20 + PD_Length), or 0 if b is shorter than the header.
func FrameLen(b []byte) int {
	if len(b) < FrameHeaderLen {
		return 0
	}
	return FrameHeaderLen + int(binary.BigEndian.Uint16(b[18:20]))
}

// DecodeFromBytes decodes an MPA frame. A PD_Length that runs past data is
// not an error: the private data present is decoded, Overrun is set and
// the truncation reported to df.
func (f *Frame) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*f = Frame{}
	if len(data) < FrameHeaderLen {
		return truncated(df, "MPA frame", "header", 0, FrameHeaderLen, len(data))
	}
	kind, complete := FrameKindOf(data[:16])
	if !complete {
		return fmt.Errorf("MPA frame: key at offset 0: %q is neither %q nor %q", data[:16], KeyRequest[:], KeyReply[:])
	}
	f.Kind = kind
	f.Flags = data[16]
	f.Revision = data[17]
	f.PDLength = binary.BigEndian.Uint16(data[18:20])
	end := FrameHeaderLen + int(f.PDLength)
	if end > len(data) {
		f.Overrun = true
		end = len(data)
		df.SetTruncated()
	}
	f.Contents = data[:end]
	f.Payload = data[end:]
	f.PrivateData = data[FrameHeaderLen:end]
	f.splitIRDORD()
	f.Identify(0)
	return nil
}

// splitIRDORD finds the MPA v2 IRD/ORD words at the start of the private
// data when the Enhanced flag is set.
func (f *Frame) splitIRDORD() {
	pd := f.PrivateData
	f.ULPData = pd
	if !f.Enhanced() || len(pd) < IRDORDLen {
		return
	}
	ird := binary.BigEndian.Uint16(pd[0:2])
	ord := binary.BigEndian.Uint16(pd[2:4])
	f.IRDORD = IRDORDv2
	if looksSwapped16(ird, ord) {
		f.IRDORD = IRDORDv2LittleEndian
		ird, ord = bits.ReverseBytes16(ird), bits.ReverseBytes16(ord)
	}
	f.IRD, f.ORD = ird, ord
	f.ULPOffset = IRDORDLen
	f.ULPData = pd[IRDORDLen:]
}

// portNFS is NFS's IANA port, where NFS/RDMA servers may listen as well
// (ibcm.PortNFS).
const portNFS = 2049

// Identify redoes the decode of the ULP data with the passive side's TCP
// port, which the frame does not carry (the stream does).
func (f *Frame) Identify(port uint16) {
	f.port = port
	f.PD = pvtdata.Dissect(f.ULPData, pvtdata.Hint{Port: port, Msg: f.msgKind()}, pvtdata.ModeRFC8797)
}

func (f *Frame) msgKind() pvtdata.MsgKind {
	switch f.frameType() {
	case 1:
		return pvtdata.MsgRequest
	case 2:
		return pvtdata.MsgReply
	}
	return pvtdata.MsgReject
}

// looksSwapped16 reports IRD/ORD words that read sensibly only after a
// byte swap: the legacy quirk of code that wrote the RFC 6581 words in host
// (little-endian) order. Real IRD/ORD values are small (siw allows 128,
// cxgb4 a few hundred), so a word whose big-endian value exceeds 1023 while
// its swapped value does not is taken as swapped; every non-zero word must
// agree, and at least one must be non-zero.
func looksSwapped16(ird, ord uint16) bool {
	const plausible = 0x3ff
	seen := false
	for _, w := range [2]uint16{ird, ord} {
		if w == 0 {
			continue
		}
		if w&IRDORDValueMask <= plausible || bits.ReverseBytes16(w)&IRDORDValueMask > plausible {
			return false
		}
		seen = true
	}
	return seen
}

// GetUint implements field.UintGetter for the frame type.
func (f *Frame) GetUint(fl *field.Field) (v uint64, has, known bool) {
	return field.GetOne(fl, fFrameType, uint64(f.frameType()))
}

// VisitFields reports the frame's fields in wire order, with the IRD/ORD
// decode and the RFC 8797 reading of the ULP data under the private data.
func (f *Frame) VisitFields(v field.Visitor) {
	if f.Kind == FrameRequest {
		v.Bytes(fKeyReq, KeyRequest[:])
	} else {
		v.Bytes(fKeyRep, KeyReply[:])
	}
	v.Uint(fFrameType, uint64(f.frameType()))
	v.Uint(fFlags, uint64(f.Flags))
	v.Bool(fMarkerFlag, f.Markers())
	v.Bool(fCRCFlag, f.CRC())
	v.Bool(fRejFlag, f.Rejected())
	v.Bool(fEnhFlag, f.Enhanced())
	v.Bool(fGSOFlag, f.SiwGSO())
	v.Uint(fRes, uint64(f.Reserved()))
	v.Uint(fRev, uint64(f.Revision))
	v.Uint(fPDLength, uint64(f.PDLength))
	if len(f.PrivateData) == 0 {
		return
	}
	v.Bytes(fPrivateData, f.PrivateData)
	if f.IRDORD != IRDORDNone {
		v.Begin(fIRDORD)
		v.Uint(fIRDORDFmt, uint64(f.IRDORD))
		v.Uint(fIRD, uint64(f.IRDValue()))
		v.Bool(fIRDP2P, f.PeerToPeer())
		v.Bool(fIRDZeroRTR, f.ZeroLengthRTR())
		v.Uint(fORD, uint64(f.ORDValue()))
		v.Bool(fORDWriteRTR, f.WriteRTR())
		v.Bool(fORDReadRTR, f.ReadRTR())
		v.End()
	}
	v.Bytes(fULPData, f.ULPData)
	v.Begin(fPvtdata)
	f.PD.VisitFields(v)
	v.End()
}

// frameTypeNames names the values of frameType.
var frameTypeNames = map[uint64]string{1: "Request", 2: "Reply", 3: "Reject"}

// frameType is 1 for a Request, 2 for a Reply, 3 for a Reject.
func (f *Frame) frameType() uint8 {
	if f.Kind == FrameReply && f.Rejected() {
		return 3
	}
	return uint8(f.Kind)
}

// AppendSummary appends "MPA Request M=0 C=0 rev=2 ird=128 ord=0 pd=RFC8797 v1 …".
func (f *Frame) AppendSummary(b []byte) []byte {
	b = append(b, "MPA "...)
	b = append(b, frameTypeNames[uint64(f.frameType())]...)
	b = strconv.AppendUint(append(b, " rev="...), uint64(f.Revision), 10)
	b = strconv.AppendUint(append(b, " M="...), uint64(boolByte(f.Markers(), 1)), 10)
	b = strconv.AppendUint(append(b, " C="...), uint64(boolByte(f.CRC(), 1)), 10)
	if f.IRDORD != IRDORDNone {
		b = strconv.AppendUint(append(b, " ird="...), uint64(f.IRDValue()), 10)
		b = strconv.AppendUint(append(b, " ord="...), uint64(f.ORDValue()), 10)
		if f.PeerToPeer() {
			b = append(b, " p2p"...)
		}
	}
	switch {
	case f.PD.Reading.Found:
		m := f.PD.Reading.Message
		b = strconv.AppendUint(append(b, " pd=RFC8797 v"...), uint64(m.Version), 10)
		b = strconv.AppendUint(append(b, " R="...), uint64(boolByte(m.RemoteInvalidation(), 1)), 10)
		b = strconv.AppendInt(append(b, " send="...), int64(m.SendBytes()), 10)
		b = strconv.AppendInt(append(b, " recv="...), int64(m.ReceiveBytes()), 10)
	case len(f.ULPData) > 0:
		b = append(b, " pd="...)
		b = append(b, f.PD.ULP.Kind.String()...)
	}
	return b
}

// pdLimit is PDLimit, or MaxPrivateData when unset.
func (f *Frame) pdLimit() int {
	if f.PDLimit > 0 {
		return f.PDLimit
	}
	return MaxPrivateData
}

// AppendFindings appends what the frame's header and private data show.
// Offsets are relative to the first octet of the frame.
func (f *Frame) AppendFindings(dst []finding.Finding) []finding.Finding {
	add := func(code string, sev finding.Severity, sec string, off int, msg string, args ...any) {
		dst = append(dst, finding.Finding{Code: code, Severity: sev, Section: sec, Layer: "mpa",
			Offset: off, Message: fmt.Sprintf(msg, args...)})
	}
	if limit := f.pdLimit(); int(f.PDLength) > limit {
		add(CodePDLengthOver512, finding.SeverityError, refMPA, 18,
			"PD_Length is %d: at most %d octets of private data are allowed (RFC 5044: %d)", f.PDLength, limit, MaxPrivateData)
	}
	if f.Overrun {
		add(CodePDLengthOverrun, finding.SeverityError, refMPA, 18,
			"PD_Length %d runs past the frame: only %d octets of private data follow", f.PDLength, len(f.PrivateData))
	}
	if f.SiwGSO() {
		add(CodeGSOFlag, finding.SeverityInfo, "Linux drivers/infiniband/sw/siw/iwarp.h", 16,
			"flag 0x08 is siw's non-standard MPA_RR_FLAG_GSO_EXP, a bit RFC 5044 reserves")
	}
	if f.Reserved() != 0 {
		add(CodeReservedFlags, finding.SeverityWarning, refMPA, 16,
			"reserved flag bits are 0x%02x: senders must set them to zero", f.Reserved())
	}
	if f.Revision != 1 && f.Revision != 2 {
		add(CodeRevision, finding.SeverityWarning, refMPAv2, 17, "revision %d is neither 1 (RFC 5044) nor 2 (RFC 6581)", f.Revision)
	}
	if f.Enhanced() && len(f.PrivateData) < IRDORDLen {
		add(CodeEnhancedShort, finding.SeverityError, refMPAv2, FrameHeaderLen,
			"the Enhanced flag is set but only %d octets of private data carry the 4-octet IRD/ORD", len(f.PrivateData))
	}
	if f.IRDORD.LittleEndian() {
		add(CodeIRDORDLittleEndian, finding.SeverityWarning, refMPAv2, FrameHeaderLen,
			"IRD/ORD read as %s: ird=%d ord=%d", f.IRDORD, f.IRDValue(), f.ORDValue())
	}
	if f.Kind == FrameReply && f.Rejected() {
		add(CodeRejected, finding.SeverityInfo, refMPA, 16, "the responder rejected the connection (R flag)")
	}
	if k := f.PD.ULP.Kind; (k == pvtdata.ULPEmpty || k == pvtdata.ULPZero) && f.port != pvtdata.PortNFSRDMA && f.port != portNFS {
		// No ULP data for a service that is not RPC-over-RDMA: no RFC
		// 8797 message is nothing to note, as on an IB CM message whose
		// private data is all padding (an NFS/RDMA peer that sends none
		// uses RFC 8797's defaults: that one is noted).
		return dst
	}
	start := len(dst)
	dst = f.PD.AppendFindings(dst)
	for i := start; i < len(dst); i++ {
		if dst[i].Offset >= 0 {
			dst[i].Offset += FrameHeaderLen + f.ULPOffset
		}
	}
	return dst
}

// SerializeTo writes the frame: key from Kind, Flags, Revision, PD_Length
// (len(PrivateData) when opts.FixLengths, else PDLength) and PrivateData.
// Build PrivateData with AppendIRDORD for MPA v2.
func (f *Frame) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	pd := f.PrivateData
	if len(pd) > 0xffff {
		return fmt.Errorf("MPA frame: private data of %d octets does not fit PD_Length", len(pd))
	}
	out, err := b.PrependBytes(FrameHeaderLen + len(pd))
	if err != nil {
		return err
	}
	switch f.Kind {
	case FrameRequest:
		copy(out, KeyRequest[:])
	case FrameReply:
		copy(out, KeyReply[:])
	default:
		return fmt.Errorf("MPA frame: kind %v has no key", f.Kind)
	}
	out[16] = f.Flags
	out[17] = f.Revision
	pdl := f.PDLength
	if opts.FixLengths {
		pdl = uint16(len(pd))
		f.PDLength = pdl
	}
	binary.BigEndian.PutUint16(out[18:20], pdl)
	copy(out[FrameHeaderLen:], pd)
	return nil
}

// AppendIRDORD appends RFC 6581 IRD and ORD words: values (14 bits) and
// control bits (IRDPeerToPeer, IRDZeroRTR, ORDWriteRTR, ORDReadRTR, already
// in place) in network byte order, or little-endian to reproduce the legacy
// quirk.
func AppendIRDORD(b []byte, ird, ord uint16, littleEndian bool) []byte {
	if littleEndian {
		b = binary.LittleEndian.AppendUint16(b, ird)
		return binary.LittleEndian.AppendUint16(b, ord)
	}
	b = binary.BigEndian.AppendUint16(b, ird)
	return binary.BigEndian.AppendUint16(b, ord)
}

func decodeFrame(data []byte, p gopacket.PacketBuilder) error {
	f := &Frame{}
	if err := f.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(f)
	return p.NextDecoder(gopacket.LayerTypePayload)
}
