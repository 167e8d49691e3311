package ulp

import (
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// iSER (RFC 7145 §9.2): every Send starts with the 28-octet iSER header;
// an iSCSI control-type PDU follows (its 48-octet Basic Header Segment
// first, RFC 7143 §11.2).

// ISERHeaderLen is the length of the iSER header.
const ISERHeaderLen = 28

// iSER header opcodes (upper nibble of the first octet) and flags.
const (
	ISEROpControl    = 0x1 // iSCSI control-type PDU
	ISEROpHello      = 0x2 // iSER Hello
	ISEROpHelloReply = 0x3 // iSER HelloReply
	ISERFlagW        = 0x08
	ISERFlagR        = 0x04
)

var iserOpNames = map[uint64]string{ISEROpControl: "iSCSI control-type PDU", ISEROpHello: "iSER Hello", ISEROpHelloReply: "iSER HelloReply"}

// iscsiOpNames names the iSCSI opcodes (RFC 7143 §11.2.1.2).
var iscsiOpNames = map[uint64]string{
	0x00: "NOP-Out", 0x01: "SCSI Command", 0x02: "Task Management Request", 0x03: "Login Request",
	0x04: "Text Request", 0x05: "SCSI Data-Out", 0x06: "Logout Request", 0x10: "SNACK Request",
	0x20: "NOP-In", 0x21: "SCSI Response", 0x22: "Task Management Response", 0x23: "Login Response",
	0x24: "Text Response", 0x25: "SCSI Data-In", 0x26: "Logout Response", 0x31: "Ready To Transfer",
	0x32: "Asynchronous Message", 0x3f: "Reject",
}

// ISER is the iSER header and the opcode of the iSCSI PDU after it.
type ISER struct {
	layers.BaseLayer
	Opcode         uint8 // upper nibble of octet 0
	W, R           bool  // Write and Read STag valid
	Reserved       uint32
	WriteSTag      uint32
	WriteBaseOff   uint64
	ReadSTag       uint32
	ReadBaseOffset uint64
	// HasISCSI: a control-type PDU follows with at least its opcode octet;
	// ISCSIOpcode is that opcode (6 bits).
	HasISCSI    bool
	ISCSIOpcode uint8
}

var (
	ProtoISER        = field.NewProto("iser", "iSCSI Extensions for RDMA")
	fISEROpcode      = ProtoISER.Hex("iser.opcode", 4, "Opcode").WithNames(iserOpNames)
	fISERW           = ProtoISER.Bool("iser.w", "Write STag Valid")
	fISERR           = ProtoISER.Bool("iser.r", "Read STag Valid")
	fISERReserved    = ProtoISER.Hex("iser.reserved", 26, "Reserved")
	fISERWriteSTag   = ProtoISER.Hex("iser.write_stag", 32, "Write STag")
	fISERWriteOffset = ProtoISER.Hex("iser.write_base_offset", 64, "Write Base Offset")
	fISERReadSTag    = ProtoISER.Hex("iser.read_stag", 32, "Read STag")
	fISERReadOffset  = ProtoISER.Hex("iser.read_base_offset", 64, "Read Base Offset")
	fISERISCSIOpcode = ProtoISER.Hex("iser.iscsi_opcode", 6, "iSCSI Opcode").WithNames(iscsiOpNames)
)

func (s *ISER) Proto() *field.Proto { return ProtoISER }

func (s *ISER) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*s = ISER{}
	if len(data) < ISERHeaderLen {
		df.SetTruncated()
		return errShort("iSER header", ISERHeaderLen, len(data))
	}
	s.Opcode = data[0] >> 4
	s.W, s.R = data[0]&ISERFlagW != 0, data[0]&ISERFlagR != 0
	s.Reserved = be.Uint32(data) & 0x03ffffff
	s.WriteSTag, s.WriteBaseOff = be.Uint32(data[4:]), be.Uint64(data[8:])
	s.ReadSTag, s.ReadBaseOffset = be.Uint32(data[16:]), be.Uint64(data[20:])
	if s.Opcode == ISEROpControl && len(data) > ISERHeaderLen {
		s.HasISCSI, s.ISCSIOpcode = true, data[ISERHeaderLen]&0x3f
	}
	s.BaseLayer = layers.BaseLayer{Contents: data[:ISERHeaderLen], Payload: data[ISERHeaderLen:]}
	return nil
}

func (s *ISER) VisitFields(v field.Visitor) {
	v.Uint(fISEROpcode, uint64(s.Opcode))
	v.Bool(fISERW, s.W)
	v.Bool(fISERR, s.R)
	v.Uint(fISERReserved, uint64(s.Reserved))
	v.Uint(fISERWriteSTag, uint64(s.WriteSTag))
	v.Uint(fISERWriteOffset, s.WriteBaseOff)
	v.Uint(fISERReadSTag, uint64(s.ReadSTag))
	v.Uint(fISERReadOffset, s.ReadBaseOffset)
	if s.HasISCSI {
		v.Uint(fISERISCSIOpcode, uint64(s.ISCSIOpcode))
	}
}

// AppendSummary appends "iSER SCSI Command write_stag=0x… read_stag=0x…".
func (s *ISER) AppendSummary(b []byte) []byte {
	b = append(b, "iSER "...)
	switch {
	case s.HasISCSI && iscsiOpNames[uint64(s.ISCSIOpcode)] != "":
		b = append(b, iscsiOpNames[uint64(s.ISCSIOpcode)]...)
	case s.HasISCSI:
		b = strconv.AppendUint(append(b, "iSCSI opcode 0x"...), uint64(s.ISCSIOpcode), 16)
	case iserOpNames[uint64(s.Opcode)] != "":
		b = append(b, iserOpNames[uint64(s.Opcode)]...)
	default:
		b = strconv.AppendUint(append(b, "opcode 0x"...), uint64(s.Opcode), 16)
	}
	if s.W {
		b = strconv.AppendUint(append(b, " write_stag=0x"...), uint64(s.WriteSTag), 16)
		b = strconv.AppendUint(append(b, " va=0x"...), s.WriteBaseOff, 16)
	}
	if s.R {
		b = strconv.AppendUint(append(b, " read_stag=0x"...), uint64(s.ReadSTag), 16)
		b = strconv.AppendUint(append(b, " va=0x"...), s.ReadBaseOffset, 16)
	}
	return b
}

func (s *ISER) LayerType() gopacket.LayerType     { return LayerTypeISER }
func (s *ISER) CanDecode() gopacket.LayerClass    { return LayerTypeISER }
func (s *ISER) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// SerializeTo prepends the iSER header (the iSCSI PDU is the payload
// serialized before it).
func (s *ISER) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	w, err := b.PrependBytes(ISERHeaderLen)
	if err != nil {
		return err
	}
	be.PutUint32(w, s.Reserved&0x03ffffff)
	w[0] |= s.Opcode << 4
	if s.W {
		w[0] |= ISERFlagW
	}
	if s.R {
		w[0] |= ISERFlagR
	}
	be.PutUint32(w[4:], s.WriteSTag)
	be.PutUint64(w[8:], s.WriteBaseOff)
	be.PutUint32(w[16:], s.ReadSTag)
	be.PutUint64(w[20:], s.ReadBaseOffset)
	return nil
}
