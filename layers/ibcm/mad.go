package ibcm

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

const (
	madHeaderLen = 24
	// MADLen is the length of a MAD (UD payload to QP0/QP1).
	MADLen = 256
	// MgmtClassCM is the Communication Management class.
	MgmtClassCM = 0x07
	// CMClassVersion is the CM class version IBTA 1.2+ uses.
	CMClassVersion = 2
	// GSIQKey is the well-known Q_Key of QP1 (IBTA vol. 1 §13.5.1).
	GSIQKey = 0x80010000
)

// MAD methods.
const (
	MethodGet     = 0x01
	MethodSet     = 0x02
	MethodSend    = 0x03
	MethodGetResp = 0x81
)

var madClassNames = map[uint64]string{
	0x01: "Subnet Management (LID routed)", 0x81: "Subnet Management (directed route)", 0x03: "Subnet Administration",
	0x04: "Performance Management", 0x05: "Baseboard Management", 0x06: "Device Management",
	0x07: "Communication Management", 0x08: "SNMP Tunneling", 0x10: "Device Administration",
	0x21: "Congestion Control",
}

var madMethodNames = map[uint64]string{
	0x01: "Get", 0x02: "Set", 0x03: "Send", 0x05: "Trap", 0x06: "Report", 0x07: "TrapRepress",
	0x12: "GetTable", 0x13: "GetTraceTable", 0x14: "GetMulti", 0x15: "Delete",
	0x81: "GetResp", 0x86: "ReportResp", 0x92: "GetTableResp", 0x94: "GetMultiResp", 0x95: "DeleteResp",
}

// ProtoMAD and its fields (tshark: infiniband.mad.*): the common MAD
// header (IBTA vol. 1 §13.4.2) declared once, as a layout (cm_layout.go)
// that the decode, the encode and the field visit walk.
var (
	ProtoMAD = field.NewProto("mad", "InfiniBand Management Datagram")
	madWires = wires[MAD]{
		num(ProtoMAD.Uint("mad.baseversion", 8, "Base Version"), func(m *MAD) *uint8 { return &m.BaseVersion }, at(0, 0)),
		num(ProtoMAD.Hex("mad.mgmtclass", 8, "Management Class").WithNames(madClassNames), func(m *MAD) *uint8 { return &m.MgmtClass }, at(1, 0)),
		num(ProtoMAD.Uint("mad.classversion", 8, "Class Version"), func(m *MAD) *uint8 { return &m.ClassVersion }, at(2, 0)),
		num(ProtoMAD.Hex("mad.method", 8, "Method").WithNames(madMethodNames), func(m *MAD) *uint8 { return &m.Method }, at(3, 0)),
		num(ProtoMAD.Hex("mad.status", 16, "Status"), func(m *MAD) *uint16 { return &m.Status }, at(4, 0)),
		num(ProtoMAD.Hex("mad.classspecific", 16, "Class Specific"), func(m *MAD) *uint16 { return &m.ClassSpecific }, at(6, 0)),
		num(ProtoMAD.Hex("mad.transactionid", 64, "Transaction ID"), func(m *MAD) *uint64 { return &m.TransactionID }, at(8, 0)),
		num(ProtoMAD.Hex("mad.attributeid", 16, "Attribute ID").WithNames(attributeNames), func(m *MAD) *uint16 { return &m.AttributeID }, at(16, 0)),
		num(ProtoMAD.Hex("mad.reserved", 16, "Reserved"), func(m *MAD) *uint16 { return &m.Reserved }, at(18, 0)),
		num(ProtoMAD.Hex("mad.attributemodifier", 32, "Attribute Modifier"), func(m *MAD) *uint32 { return &m.AttributeMod }, at(20, 0)),
	}
)

// MAD is the 24-octet common MAD header; Payload is the class data (232
// octets in a 256-octet MAD). A CM MAD (class 0x07) is followed by the CM
// layer.
type MAD struct {
	layers.BaseLayer
	BaseVersion   uint8
	MgmtClass     uint8
	ClassVersion  uint8
	Method        uint8
	Status        uint16
	ClassSpecific uint16
	TransactionID uint64
	AttributeID   uint16
	Reserved      uint16
	AttributeMod  uint32

	// Length is the MAD's length as received (256 on the wire).
	Length int
}

func (m *MAD) LayerType() gopacket.LayerType  { return LayerTypeMAD }
func (m *MAD) CanDecode() gopacket.LayerClass { return LayerTypeMAD }
func (m *MAD) Proto() *field.Proto            { return ProtoMAD }
func (m *MAD) String() string {
	return fmt.Sprintf("MAD class 0x%02x method 0x%02x attr 0x%04x tid 0x%016x", m.MgmtClass, m.Method, m.AttributeID, m.TransactionID)
}

// NextLayerType is LayerTypeCM for class 0x07, the payload otherwise.
func (m *MAD) NextLayerType() gopacket.LayerType {
	if len(m.Payload) == 0 {
		return gopacket.LayerTypeZero
	}
	if m.MgmtClass == MgmtClassCM {
		return LayerTypeCM
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the common MAD header.
func (m *MAD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < madHeaderLen {
		return truncated(df, "MAD", "common header", 0, madHeaderLen, len(data))
	}
	madWires.decode(m, data)
	m.Length = len(data)
	m.Contents, m.Payload = data[:madHeaderLen], data[madHeaderLen:]
	return nil
}

// VisitFields reports the MAD header fields in wire order.
func (m *MAD) VisitFields(v field.Visitor) { madWires.visit(m, v, madHeaderLen) }

// AppendFindings reports bad versions, a MAD that is not 256 octets, and
// non-zero reserved octets.
func (m *MAD) AppendFindings(dst []finding.Finding) []finding.Finding {
	if m.BaseVersion != 1 {
		dst = append(dst, newFinding(CodeMADBaseVersion, finding.SeverityError, "mad", 0, "IBTA vol. 1 §13.4.2",
			"BaseVersion %d: only 1 is defined; a receiver drops the MAD", m.BaseVersion))
	}
	if m.MgmtClass == MgmtClassCM && m.ClassVersion != CMClassVersion {
		dst = append(dst, newFinding(CodeMADClassVersion, finding.SeverityWarning, "mad", 2, "IBTA vol. 1 §12.6",
			"CM ClassVersion %d, not 2: a CM that does not support it answers REJ reason 31 (invalid class version)", m.ClassVersion))
	}
	if m.Length != MADLen {
		dst = append(dst, newFinding(CodeMADLength, finding.SeverityWarning, "mad", 0, "IBTA vol. 1 §13.4.1",
			"MAD is %d octets, not %d", m.Length, MADLen))
	}
	if m.Reserved != 0 {
		dst = append(dst, newFinding(CodeReservedBits, finding.SeverityWarning, "mad", 18, "IBTA vol. 1 §13.4.2",
			"reserved MAD header octets are 0x%04x", m.Reserved))
	}
	return dst
}

// SerializeTo prepends the MAD header to the class data in b.
func (m *MAD) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(madHeaderLen)
	if err != nil {
		return err
	}
	madWires.encode(m, h)
	return nil
}

// decodeMAD decodes a MAD and, for the CM class, the CM message in it.
func decodeMAD(data []byte, p gopacket.PacketBuilder) error {
	m := &MAD{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	next := m.NextLayerType()
	if next == LayerTypeCM {
		c := NewCM(m)
		if err := c.DecodeFromBytes(m.Payload, p); err != nil {
			return err
		}
		p.AddLayer(c)
		p.SetApplicationLayer(c)
		return nil
	}
	if next == gopacket.LayerTypeZero {
		return nil
	}
	return p.NextDecoder(next)
}

func decodeCMAlone([]byte, gopacket.PacketBuilder) error {
	return fmt.Errorf("CM: the attribute ID is in the MAD header: decode from LayerTypeMAD")
}

// Ensure the interfaces the dissector relies on.
var (
	_ field.Layer            = (*MAD)(nil)
	_ gopacket.DecodingLayer = (*MAD)(nil)
)
