package mpa

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
)

// Opcode is an RDMAP message opcode (RFC 5040 §4.2).
type Opcode uint8

// RDMAP opcodes.
const (
	OpWrite          Opcode = 0
	OpReadRequest    Opcode = 1
	OpReadResponse   Opcode = 2
	OpSend           Opcode = 3
	OpSendInvalidate Opcode = 4
	OpSendSE         Opcode = 5
	OpSendSEInval    Opcode = 6
	OpTerminate      Opcode = 7
)

var opcodeNames = map[uint64]string{
	uint64(OpWrite): "Write", uint64(OpReadRequest): "Read Request", uint64(OpReadResponse): "Read Response",
	uint64(OpSend): "Send", uint64(OpSendInvalidate): "Send with Invalidate", uint64(OpSendSE): "Send with SE",
	uint64(OpSendSEInval): "Send with SE and Invalidate", uint64(OpTerminate): "Terminate",
}

func (o Opcode) String() string { return enum.NameIn("Opcode", opcodeNames, o) }

// IsSend reports the four Send opcodes.
func (o Opcode) IsSend() bool { return o >= OpSend && o <= OpSendSEInval }

// Invalidates reports Send with Invalidate and Send with SE and Invalidate.
func (o Opcode) Invalidates() bool { return o == OpSendInvalidate || o == OpSendSEInval }

// Tagged reports whether the opcode uses the tagged buffer model.
func (o Opcode) Tagged() bool { return o == OpWrite || o == OpReadResponse }

// Queue is the untagged queue an opcode uses (RFC 5040 §5.1).
func (o Opcode) Queue() uint32 {
	switch o {
	case OpReadRequest:
		return QueueReadRequest
	case OpTerminate:
		return QueueTerminate
	}
	return QueueSend
}

// RDMAP control octet and sizes.
const (
	RDMAPVersionMask  uint8 = 0xc0
	RDMAPReservedMask uint8 = 0x30
	RDMAPOpcodeMask   uint8 = 0x0f
	// RDMAPVersion1 is the RDMAP version of RFC 5040.
	RDMAPVersion1 = 1
	// ReadRequestLen is the RDMA Read Request header (RFC 5040 §4.4).
	ReadRequestLen = 28
	// TerminateControlLen is the Terminate Control field (RFC 5040 §4.8).
	TerminateControlLen = 4
)

// Terminate layers (RFC 5040 §4.8).
const (
	TermLayerRDMAP = 0
	TermLayerDDP   = 1
	TermLayerLLP   = 2
)

var termLayerNames = map[uint64]string{TermLayerRDMAP: "RDMA", TermLayerDDP: "DDP", TermLayerLLP: "LLP (MPA)"}

var (
	rdmaETypeNames = map[uint64]string{0: "Local Catastrophic Error", 1: "Remote Protection Error", 2: "Remote Operation Error"}
	rdmaECodeNames = map[uint64]string{
		0x00: "Invalid STag", 0x01: "Base or bounds violation", 0x02: "Access rights violation",
		0x03: "STag not associated with RDMAP Stream", 0x04: "TO wrap", 0x05: "Invalid RDMAP version",
		0x06: "Unexpected OpCode", 0x07: "Catastrophic error, localized to RDMAP Stream",
		0x08: "Catastrophic error, global", 0x09: "STag cannot be Invalidated", 0xff: "Unspecified Error",
	}
	ddpETypeNames       = map[uint64]string{0: "Local Catastrophic Error", 1: "Tagged Buffer Error", 2: "Untagged Buffer Error", 3: "Reserved for the use by the LLP"}
	ddpTaggedECodeNames = map[uint64]string{
		0x00: "Invalid STag", 0x01: "Base or bounds violation", 0x02: "STag not associated with DDP Stream",
		0x03: "TO wrap", 0x04: "Invalid DDP version",
	}
	ddpUntaggedECodeNames = map[uint64]string{
		0x01: "Invalid QN", 0x02: "Invalid MSN - no buffer available", 0x03: "Invalid MSN - MSN range is not valid",
		0x04: "Invalid MO", 0x05: "DDP Message too long for available buffer", 0x06: "Invalid DDP version",
	}
	llpETypeNames = map[uint64]string{0: "MPA"}
	llpECodeNames = map[uint64]string{
		0x01: "TCP connection closed, terminated or lost", 0x02: "Received MPA CRC does not match",
		0x03: "Received MPA Marker and FPDU header do not match", 0x04: "Invalid MPA Request or Reply",
		0x05: "Local catastrophic error", 0x06: "Insufficient IRD resources", 0x07: "No matching RTR",
	}
)

var (
	fRDMAPVersion = ProtoRDMAP.Uint("rdmap.version", 2, "Version").WithRef(refRDMAP)
	fRDMAPRsv     = ProtoRDMAP.Hex("rdmap.rsv", 2, "Reserved").WithRef(refRDMAP)
	fRDMAPOpcode  = ProtoRDMAP.Hex("rdmap.opcode", 4, "OpCode").WithNames(opcodeNames).WithRef(refRDMAP)
	fRDMAPRes     = ProtoRDMAP.Bytes("rdmap.reserved", "Reserved")
	fRDMAPInval   = ProtoRDMAP.Hex("rdmap.inval_stag", 32, "Invalidate STag").WithRef("RFC 5040 §4.5")

	fRR        = ProtoRDMAP.Group("rdmap.rr", "Read request").WithRef("RFC 5040 §4.4")
	fRRSink    = ProtoRDMAP.Hex("rdmap.sinkstag", 32, "Data Sink STag")
	fRRSinkTO  = ProtoRDMAP.Hex("rdmap.sinkto", 64, "Data Sink Tagged Offset")
	fRRSize    = ProtoRDMAP.Uint("rdmap.rdmardsz", 32, "RDMA Read Message Size").WithUnit("bytes")
	fRRSrc     = ProtoRDMAP.Hex("rdmap.srcstag", 32, "Data Source STag")
	fRRSrcTO   = ProtoRDMAP.Hex("rdmap.srcto", 64, "Data Source Tagged Offset")
	fTerm      = ProtoRDMAP.Group("rdmap.terminate", "Terminate").WithRef("RFC 5040 §4.8")
	fTermLayer = ProtoRDMAP.Hex("rdmap.term_layer", 4, "Layer").WithNames(termLayerNames)
	fTermERDMA = ProtoRDMAP.Hex("rdmap.term_etype_rdma", 4, "Error Types for RDMA layer").WithNames(rdmaETypeNames).WithRef("RFC 5040 §7.1")
	fTermEDDP  = ProtoRDMAP.Hex("rdmap.term_etype_ddp", 4, "Error Types for DDP layer").WithNames(ddpETypeNames).WithRef("RFC 5040 §7.2")
	fTermELLP  = ProtoRDMAP.Hex("rdmap.term_etype_llp", 4, "Error Types for LLP layer").WithNames(llpETypeNames).WithRef("RFC 5044 §8")
	fTermEType = ProtoRDMAP.Hex("rdmap.term_etype", 4, "Error Types")
	fTermCRDMA = ProtoRDMAP.Hex("rdmap.term_errcode_rdma", 8, "Error Code for RDMA layer").WithNames(rdmaECodeNames).WithRef("RFC 5040 §7.1")
	fTermCDDPT = ProtoRDMAP.Hex("rdmap.term_errcode_ddp_tagged", 8, "Error Code for DDP Tagged Buffer").WithNames(ddpTaggedECodeNames).WithRef("RFC 5040 §7.2")
	fTermCDDPU = ProtoRDMAP.Hex("rdmap.term_errcode_ddp_untagged", 8, "Error Code for DDP Untagged Buffer").WithNames(ddpUntaggedECodeNames).WithRef("RFC 5040 §7.2")
	fTermCLLP  = ProtoRDMAP.Hex("rdmap.term_errcode_llp", 8, "Error Code for LLP layer").WithNames(llpECodeNames).WithRef("RFC 5044 §8, RFC 6581 §7")
	fTermCode  = ProtoRDMAP.Hex("rdmap.term_errcode", 8, "Error Code")
	fTermError = ProtoRDMAP.String("rdmap.term_error", "Error")
	fTermM     = ProtoRDMAP.Bool("rdmap.term_hdrct_m", "M bit (DDP Segment Length valid)")
	fTermD     = ProtoRDMAP.Bool("rdmap.hdrct_d", "D bit (DDP header included)")
	fTermR     = ProtoRDMAP.Bool("rdmap.hdrct_r", "R bit (RDMAP header included)")
	fTermRsvd  = ProtoRDMAP.Hex("rdmap.term_rsvd", 13, "Reserved")
	fTermSeg   = ProtoRDMAP.Uint("rdmap.term_ddp_seg_len", 16, "DDP Segment Length").WithUnit("bytes")
	fTermDDPH  = ProtoRDMAP.Bytes("rdmap.term_ddp_h", "Terminated DDP Header")
	fTermRDMAH = ProtoRDMAP.Bytes("rdmap.term_rdma_h", "Terminated RDMA Header")
)

// ReadRequest is the RDMA Read Request header (RFC 5040 §4.4).
type ReadRequest struct {
	SinkSTag uint32
	SinkTO   uint64
	Size     uint32
	SrcSTag  uint32
	SrcTO    uint64
}

// Terminate is the Terminate message header (RFC 5040 §4.8).
type Terminate struct {
	Layer, EType, ErrCode uint8
	// HdrM, HdrD, HdrR are the Hdrct bits: DDP Segment Length valid, DDP
	// header included, RDMAP header included.
	HdrM, HdrD, HdrR bool
	Reserved         uint16 // 13 bits
	// DDPSegLen is present when HdrM or HdrD is set.
	DDPSegLen    uint16
	HasDDPSegLen bool
	// DDPHeader and RDMAHeader are the terminated headers, when included.
	DDPHeader  []byte
	RDMAHeader []byte
}

// Error describes the terminate's layer, error type and code per RFC 5040 §7.
func (t *Terminate) Error() string {
	lookup := func(m map[uint64]string, v uint8) string {
		if s, ok := m[uint64(v)]; ok {
			return s
		}
		return fmt.Sprintf("0x%02x", v)
	}
	layer := lookup(termLayerNames, t.Layer)
	var et, ec string
	switch t.Layer {
	case TermLayerRDMAP:
		et, ec = lookup(rdmaETypeNames, t.EType), lookup(rdmaECodeNames, t.ErrCode)
	case TermLayerDDP:
		et = lookup(ddpETypeNames, t.EType)
		switch t.EType {
		case 1:
			ec = lookup(ddpTaggedECodeNames, t.ErrCode)
		case 2:
			ec = lookup(ddpUntaggedECodeNames, t.ErrCode)
		default:
			ec = fmt.Sprintf("0x%02x", t.ErrCode)
		}
	case TermLayerLLP:
		et, ec = lookup(llpETypeNames, t.EType), lookup(llpECodeNames, t.ErrCode)
	default:
		et, ec = fmt.Sprintf("0x%x", t.EType), fmt.Sprintf("0x%02x", t.ErrCode)
	}
	return layer + ": " + et + ": " + ec
}

// RDMAP is an RDMAP message header: the control octet and the word in
// DDP's RsvdULP, and the Read Request or Terminate header after the DDP
// header. Payload is the message data (a Send's bytes, a Write's data).
type RDMAP struct {
	layers.BaseLayer
	Version  uint8
	Reserved uint8 // 2 bits
	Opcode   Opcode
	// Tagged, QN, MSN and MO repeat the DDP header (for checks and Send
	// reassembly without the DDP layer at hand).
	Tagged      bool
	Last        bool
	QN, MSN, MO uint32
	// InvalidateSTag is the STag of Send with Invalidate; for other
	// untagged messages the word is reserved (ReservedWord).
	InvalidateSTag uint32
	ReservedWord   uint32
	ReadRequest    ReadRequest
	Terminate      Terminate
}

// LayerType returns LayerTypeRDMAP.
func (r *RDMAP) LayerType() gopacket.LayerType { return LayerTypeRDMAP }

// CanDecode returns LayerTypeRDMAP.
func (r *RDMAP) CanDecode() gopacket.LayerClass { return LayerTypeRDMAP }

// NextLayerType returns gopacket.LayerTypePayload.
func (r *RDMAP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// Proto returns ProtoRDMAP.
func (r *RDMAP) Proto() *field.Proto { return ProtoRDMAP }

// DecodeFromBytes decodes the RDMAP message of a whole DDP segment (DDP
// header included: RDMAP's control octet lives in it).
func (r *RDMAP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	var d DDP
	if err := d.DecodeFromBytes(data, df); err != nil {
		return err
	}
	return r.DecodeFromDDP(&d, df)
}

// DecodeFromDDP decodes the RDMAP message of a decoded DDP segment.
func (r *RDMAP) DecodeFromDDP(d *DDP, df gopacket.DecodeFeedback) error {
	*r = RDMAP{}
	if len(d.RsvdULP) < 1 {
		return fmt.Errorf("RDMAP: control at offset 1: DDP header has no octet reserved for the ULP")
	}
	ctrl := d.RsvdULP[0]
	r.Version = (ctrl & RDMAPVersionMask) >> 6
	r.Reserved = (ctrl & RDMAPReservedMask) >> 4
	r.Opcode = Opcode(ctrl & RDMAPOpcodeMask)
	r.Tagged, r.Last, r.QN, r.MSN, r.MO = d.Tagged, d.Last, d.QN, d.MSN, d.MO
	if !d.Tagged && len(d.RsvdULP) >= 5 {
		w := binary.BigEndian.Uint32(d.RsvdULP[1:5])
		if r.Opcode.Invalidates() {
			r.InvalidateSTag = w
		} else {
			r.ReservedWord = w
		}
	}
	data := d.Payload
	hdr := 0
	hoff := len(d.Contents) // offset in the segment, for errors
	// The Read Request and Terminate headers start their message, so
	// they are present only at MO 0.
	switch {
	case r.Opcode == OpReadRequest && !d.Tagged && d.MO == 0:
		if len(data) < ReadRequestLen {
			return truncated(df, "RDMAP", "Read Request header", hoff, ReadRequestLen, len(data))
		}
		r.ReadRequest = ReadRequest{
			SinkSTag: binary.BigEndian.Uint32(data[0:4]), SinkTO: binary.BigEndian.Uint64(data[4:12]),
			Size:    binary.BigEndian.Uint32(data[12:16]),
			SrcSTag: binary.BigEndian.Uint32(data[16:20]), SrcTO: binary.BigEndian.Uint64(data[20:28]),
		}
		hdr = ReadRequestLen
	case r.Opcode == OpTerminate && !d.Tagged && d.MO == 0:
		n, err := r.decodeTerminate(data, hoff, df)
		if err != nil {
			return err
		}
		hdr = n
	}
	r.Contents = data[:hdr]
	r.Payload = data[hdr:]
	return nil
}

func (r *RDMAP) decodeTerminate(data []byte, hoff int, df gopacket.DecodeFeedback) (int, error) {
	if len(data) < TerminateControlLen {
		return 0, truncated(df, "RDMAP", "Terminate Control", hoff, TerminateControlLen, len(data))
	}
	t := &r.Terminate
	t.Layer = data[0] >> 4
	t.EType = data[0] & 0x0f
	t.ErrCode = data[1]
	t.HdrM = data[2]&0x80 != 0
	t.HdrD = data[2]&0x40 != 0
	t.HdrR = data[2]&0x20 != 0
	t.Reserved = binary.BigEndian.Uint16(data[2:4]) & 0x1fff
	off := TerminateControlLen
	if t.HdrM || t.HdrD {
		if len(data) < off+2 {
			return 0, truncated(df, "RDMAP", "Terminate DDP Segment Length", hoff+off, 2, len(data)-off)
		}
		t.DDPSegLen = binary.BigEndian.Uint16(data[off:])
		t.HasDDPSegLen = true
		off += 2
	}
	if t.HdrD {
		if len(data) < off+1 {
			return 0, truncated(df, "RDMAP", "terminated DDP header", hoff+off, 1, 0)
		}
		hl := HeaderLen(data[off])
		if len(data) < off+hl {
			return 0, truncated(df, "RDMAP", "terminated DDP header", hoff+off, hl, len(data)-off)
		}
		t.DDPHeader = data[off : off+hl]
		off += hl
	}
	if t.HdrR {
		if len(data) < off+ReadRequestLen {
			return 0, truncated(df, "RDMAP", "terminated RDMA header", hoff+off, ReadRequestLen, len(data)-off)
		}
		t.RDMAHeader = data[off : off+ReadRequestLen]
		off += ReadRequestLen
	}
	return off, nil
}

// GetUint implements field.UintGetter for the opcode.
func (r *RDMAP) GetUint(f *field.Field) (v uint64, has, known bool) {
	return field.GetOne(f, fRDMAPOpcode, uint64(r.Opcode))
}

// VisitFields reports the RDMAP fields.
func (r *RDMAP) VisitFields(v field.Visitor) {
	v.Uint(fRDMAPVersion, uint64(r.Version))
	v.Uint(fRDMAPRsv, uint64(r.Reserved))
	v.Uint(fRDMAPOpcode, uint64(r.Opcode))
	if !r.Tagged {
		if r.Opcode.Invalidates() {
			v.Uint(fRDMAPInval, uint64(r.InvalidateSTag))
		} else {
			var w [4]byte
			binary.BigEndian.PutUint32(w[:], r.ReservedWord)
			v.Bytes(fRDMAPRes, w[:])
		}
	}
	switch {
	case len(r.Contents) > 0 && r.Opcode == OpReadRequest:
		q := &r.ReadRequest
		v.Begin(fRR)
		v.Uint(fRRSink, uint64(q.SinkSTag))
		v.Uint(fRRSinkTO, q.SinkTO)
		v.Uint(fRRSize, uint64(q.Size))
		v.Uint(fRRSrc, uint64(q.SrcSTag))
		v.Uint(fRRSrcTO, q.SrcTO)
		v.End()
	case len(r.Contents) > 0 && r.Opcode == OpTerminate:
		t := &r.Terminate
		v.Begin(fTerm)
		v.Uint(fTermLayer, uint64(t.Layer))
		switch t.Layer {
		case TermLayerRDMAP:
			v.Uint(fTermERDMA, uint64(t.EType))
			v.Uint(fTermCRDMA, uint64(t.ErrCode))
		case TermLayerDDP:
			v.Uint(fTermEDDP, uint64(t.EType))
			switch t.EType {
			case 1:
				v.Uint(fTermCDDPT, uint64(t.ErrCode))
			case 2:
				v.Uint(fTermCDDPU, uint64(t.ErrCode))
			default:
				v.Uint(fTermCode, uint64(t.ErrCode))
			}
		case TermLayerLLP:
			v.Uint(fTermELLP, uint64(t.EType))
			v.Uint(fTermCLLP, uint64(t.ErrCode))
		default:
			v.Uint(fTermEType, uint64(t.EType))
			v.Uint(fTermCode, uint64(t.ErrCode))
		}
		v.String(fTermError, t.Error())
		v.Bool(fTermM, t.HdrM)
		v.Bool(fTermD, t.HdrD)
		v.Bool(fTermR, t.HdrR)
		v.Uint(fTermRsvd, uint64(t.Reserved))
		if t.HasDDPSegLen {
			v.Uint(fTermSeg, uint64(t.DDPSegLen))
		}
		if t.DDPHeader != nil {
			v.Bytes(fTermDDPH, t.DDPHeader)
		}
		if t.RDMAHeader != nil {
			v.Bytes(fTermRDMAH, t.RDMAHeader)
		}
		v.End()
	}
}

// AppendSummary appends "RDMAP Send msn=1 len=86" and the like, without
// fmt (it runs for every iWARP data line of the default view).
func (r *RDMAP) AppendSummary(b []byte) []byte {
	b = append(b, "RDMAP "...)
	if int(r.Opcode) < len(opcodeSummaryNames) && opcodeSummaryNames[r.Opcode] != "" {
		b = append(b, opcodeSummaryNames[r.Opcode]...)
	} else {
		b = append(b, r.Opcode.String()...)
	}
	switch {
	case r.Tagged:
		b = strconv.AppendInt(append(b, " len="...), int64(len(r.Payload)), 10)
	case r.Opcode == OpReadRequest && len(r.Contents) > 0:
		b = strconv.AppendUint(append(b, " size="...), uint64(r.ReadRequest.Size), 10)
	case r.Opcode == OpTerminate && len(r.Contents) > 0:
		b = append(b, ' ')
		b = append(b, r.Terminate.Error()...)
	default:
		b = strconv.AppendUint(append(b, " msn="...), uint64(r.MSN), 10)
		b = strconv.AppendUint(append(b, " mo="...), uint64(r.MO), 10)
		b = strconv.AppendInt(append(b, " len="...), int64(len(r.Payload)), 10)
	}
	if r.Opcode.Invalidates() {
		const hexd = "0123456789abcdef"
		v := r.InvalidateSTag
		b = append(b, " inv=0x"...)
		for s := 28; s >= 0; s -= 4 {
			b = append(b, hexd[v>>uint(s)&15])
		}
	}
	if !r.Last {
		b = append(b, " [more]"...)
	}
	return b
}

// opcodeSummaryNames is opcodeNames as an array, for AppendSummary.
var opcodeSummaryNames = func() (t [16]string) {
	for v, s := range opcodeNames {
		if v < uint64(len(t)) {
			t[v] = s
		}
	}
	return t
}()

// AppendFindings reports version and reserved-bit violations, an opcode
// used with the wrong buffer model or queue, and Terminate messages.
// Offsets are relative to the DDP segment's first octet.
func (r *RDMAP) AppendFindings(dst []finding.Finding) []finding.Finding {
	add := func(code string, sev finding.Severity, off int, msg string, args ...any) {
		dst = append(dst, finding.Finding{Code: code, Severity: sev, Section: refRDMAP, Layer: "rdmap",
			Offset: off, Message: fmt.Sprintf(msg, args...)})
	}
	if r.Version != RDMAPVersion1 {
		add(CodeRDMAPVersion, finding.SeverityError, 1, "RDMAP version %d; RFC 5040 defines version 1", r.Version)
	}
	if r.Reserved != 0 {
		add(CodeRDMAPReserved, finding.SeverityWarning, 1, "RDMAP reserved control bits are 0x%x", r.Reserved)
	}
	switch {
	case r.Opcode > OpTerminate:
		add(CodeRDMAPOpcode, finding.SeverityError, 1, "opcode 0x%x is not defined by RFC 5040", uint8(r.Opcode))
	case r.Opcode.Tagged() != r.Tagged:
		model := "untagged"
		if r.Opcode.Tagged() {
			model = "tagged"
		}
		add(CodeRDMAPOpcode, finding.SeverityError, 0, "%v uses the %s buffer model, but the DDP T bit says otherwise", r.Opcode, model)
	case !r.Tagged && r.QN != r.Opcode.Queue():
		add(CodeRDMAPOpcode, finding.SeverityError, 6, "%v goes on queue %d, not %d", r.Opcode, r.Opcode.Queue(), r.QN)
	}
	if r.Opcode == OpTerminate && len(r.Contents) > 0 {
		add(CodeTerminate, finding.SeverityError, len(r.Contents), "Terminate: %s", r.Terminate.Error())
		dst[len(dst)-1].Section = "RFC 5040 §7"
		dst[len(dst)-1].Offset = DDPUntaggedHeaderLen
	}
	return dst
}

// AppendRsvdULP appends the octets RDMAP puts in DDP's RsvdULP: the
// control octet and, untagged, the Invalidate STag (Send with Invalidate)
// or the reserved word.
func (r *RDMAP) AppendRsvdULP(b []byte, tagged bool) []byte {
	b = append(b, (r.Version<<6)&RDMAPVersionMask|(r.Reserved<<4)&RDMAPReservedMask|uint8(r.Opcode)&RDMAPOpcodeMask)
	if tagged {
		return b
	}
	if r.Opcode.Invalidates() {
		return binary.BigEndian.AppendUint32(b, r.InvalidateSTag)
	}
	return binary.BigEndian.AppendUint32(b, r.ReservedWord)
}

// SerializeTo prepends the Read Request or Terminate header (for those
// opcodes at MO 0); the control octet goes in the DDP header via
// AppendRsvdULP.
func (r *RDMAP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if r.Tagged || r.MO != 0 {
		return nil
	}
	switch r.Opcode {
	case OpReadRequest:
		out, err := b.PrependBytes(ReadRequestLen)
		if err != nil {
			return err
		}
		q := &r.ReadRequest
		binary.BigEndian.PutUint32(out[0:], q.SinkSTag)
		binary.BigEndian.PutUint64(out[4:], q.SinkTO)
		binary.BigEndian.PutUint32(out[12:], q.Size)
		binary.BigEndian.PutUint32(out[16:], q.SrcSTag)
		binary.BigEndian.PutUint64(out[20:], q.SrcTO)
	case OpTerminate:
		t := &r.Terminate
		n := TerminateControlLen
		if t.HdrM || t.HdrD {
			n += 2
		}
		if t.HdrD {
			n += len(t.DDPHeader)
		}
		if t.HdrR {
			n += ReadRequestLen
		}
		out, err := b.PrependBytes(n)
		if err != nil {
			return err
		}
		clear(out)
		out[0] = t.Layer<<4 | t.EType&0x0f
		out[1] = t.ErrCode
		binary.BigEndian.PutUint16(out[2:], t.Reserved&0x1fff|uint16(boolByte(t.HdrM, 0x80)|boolByte(t.HdrD, 0x40)|boolByte(t.HdrR, 0x20))<<8)
		off := TerminateControlLen
		if t.HdrM || t.HdrD {
			binary.BigEndian.PutUint16(out[off:], t.DDPSegLen)
			off += 2
		}
		if t.HdrD {
			off += copy(out[off:], t.DDPHeader)
		}
		if t.HdrR {
			copy(out[off:off+ReadRequestLen], t.RDMAHeader)
		}
	}
	return nil
}
