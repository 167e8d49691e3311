package ibcm

import (
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// CM attribute IDs (IBTA vol. 1 §16.7.1 table 213 / §12.6).
const (
	AttrClassPortInfo uint16 = 0x0001
	AttrREQ           uint16 = 0x0010
	AttrMRA           uint16 = 0x0011
	AttrREJ           uint16 = 0x0012
	AttrREP           uint16 = 0x0013
	AttrRTU           uint16 = 0x0014
	AttrDREQ          uint16 = 0x0015
	AttrDREP          uint16 = 0x0016
	AttrSIDRReq       uint16 = 0x0017
	AttrSIDRRep       uint16 = 0x0018
	AttrLAP           uint16 = 0x0019
	AttrAPR           uint16 = 0x001a
)

// CMDataLen is the CM message area of a MAD (256 − 24 octets).
const CMDataLen = MADLen - madHeaderLen

// message describes one CM attribute's layout: the fixed fields (hdr
// octets), then private data up to CMDataLen (Linux include/rdma/ib_cm.h
// IB_CM_*_PRIVATE_DATA_SIZE).
type message struct {
	name   string // "REQ"
	prefix string // field prefix "cm.req"
	hdr    int    // octets before the private data
	pd     int    // private data octets
	kind   pvtdata.MsgKind
}

var messages = map[uint16]message{
	AttrClassPortInfo: {"ClassPortInfo", "cm.cpi", classPortInfoLen, 0, pvtdata.MsgUnknown},
	AttrREQ:           {"REQ", "cm.req", 140, 92, pvtdata.MsgRequest},
	AttrMRA:           {"MRA", "cm.mra", 10, 222, pvtdata.MsgUnknown},
	AttrREJ:           {"REJ", "cm.rej", 84, 148, pvtdata.MsgReject},
	AttrREP:           {"REP", "cm.rep", 36, 196, pvtdata.MsgReply},
	AttrRTU:           {"RTU", "cm.rtu", 8, 224, pvtdata.MsgUnknown},
	AttrDREQ:          {"DREQ", "cm.dreq", 12, 220, pvtdata.MsgUnknown},
	AttrDREP:          {"DREP", "cm.drep", 8, 224, pvtdata.MsgUnknown},
	AttrSIDRReq:       {"SIDR_REQ", "cm.sidr_req", 16, 216, pvtdata.MsgRequest},
	AttrSIDRRep:       {"SIDR_REP", "cm.sidr_rep", 96, 136, pvtdata.MsgReply},
	AttrLAP:           {"LAP", "cm.lap", 64, 168, pvtdata.MsgUnknown},
	AttrAPR:           {"APR", "cm.apr", 84, 148, pvtdata.MsgUnknown},
}

// body returns the layout of c's attribute ID (nil for an unknown one).
func (c *CM) body() fixed {
	switch c.AttributeID {
	case AttrClassPortInfo:
		return cpiLayout
	case AttrREQ:
		return reqLayout
	case AttrMRA:
		return mraLayout
	case AttrREJ:
		return rejLayout
	case AttrREP:
		return repLayout
	case AttrRTU:
		return rtuLayout
	case AttrDREQ:
		return dreqLayout
	case AttrDREP:
		return drepLayout
	case AttrSIDRReq:
		return sidrReqLayout
	case AttrSIDRRep:
		return sidrRepLayout
	case AttrLAP:
		return lapLayout
	case AttrAPR:
		return aprLayout
	}
	return nil
}

var attributeNames = map[uint64]string{}

func init() {
	for id, m := range messages {
		attributeNames[uint64(id)] = m.name
	}
}

// ProtoCM is the one CM layer; each message has its own field prefix
// (cm.req.*, cm.rep.* …) and cm.attribute_id names the message.
var (
	ProtoCM        = field.NewProto("cm", "InfiniBand Communication Management")
	fCMAttributeID = ProtoCM.Hex("cm.attribute_id", 16, "CM message").WithNames(attributeNames)
	fCMPvtData     = ProtoCM.Group("cm.pvtdata", "ULP private data decode")
	fCMUndecoded   = ProtoCM.Bytes("cm.data", "CM attribute data (unknown attribute)")
	fCMPrivateLen  = ProtoCM.Uint("cm.private_length", 16, "Private data length").WithUnit("octets")
	fCMULPOffset   = ProtoCM.Uint("cm.ulp_offset", 16, "ULP data offset in the private data").WithUnit("octets")
)

// CM is one Communication Management message: the MAD's attribute data.
// AttributeID (from the MAD header) selects which message field holds the
// decode. PrivateData is the message's private data field as sent (IB CM
// private data is fixed-length and zero-padded); ULPData is the part the
// ULP wrote (after the rdma_cm IP CM header of a REQ or SIDR_REQ, all of
// the private data otherwise); PD is pvtdata's decode of ULPData.
//
// The attribute ID is in the MAD header, so a CM decodes after a MAD it is
// linked to (NewCM, NewStack); gopacket.NewPacket links them itself.
type CM struct {
	layers.BaseLayer
	AttributeID uint16
	Method      uint8

	ClassPortInfo ClassPortInfo
	REQ           REQ
	MRA           MRA
	REJ           REJ
	REP           REP
	RTU           RTU
	DREQ          DREQ
	DREP          DREP
	SIDRReq       SIDRReq
	SIDRRep       SIDRRep
	LAP           LAP
	APR           APR

	PrivateData []byte
	// HasIPCM reports that PrivateData starts with an rdma_cm IP CM header
	// (REQ and SIDR_REQ to an rdma_cm service ID).
	HasIPCM bool
	IPCM    IPCMHeader
	// ULPOffset is where ULPData starts inside PrivateData (36 or 0).
	ULPOffset int
	ULPData   []byte
	PD        pvtdata.PrivateData

	mad   *MAD
	probs problems
	// pdOffset is where the private data starts in the CM data.
	pdOffset int
	// fixed is how many octets of the message's fixed fields were
	// decoded: all of them, but in a message cut inside them (FixedCut).
	fixed int
}

const (
	cmProbUnknownAttr problems = 1 << iota
	cmProbTruncated
	cmProbIPCMInvalid
	cmProbReserved
	cmProbRejReason
	cmProbMethod
	cmProbFixedCut
)

// NewCM returns a CM layer that takes its attribute ID and method from mad
// when it decodes (mad must have decoded first, as in a
// DecodingLayerParser).
func NewCM(mad *MAD) *CM { return &CM{mad: mad} }

// Link makes c take its attribute ID from mad (see NewCM).
func (c *CM) Link(mad *MAD) { c.mad = mad }

func (c *CM) LayerType() gopacket.LayerType     { return LayerTypeCM }
func (c *CM) CanDecode() gopacket.LayerClass    { return LayerTypeCM }
func (c *CM) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }
func (c *CM) Proto() *field.Proto               { return ProtoCM }
func (c *CM) Payload() []byte                   { return c.PrivateData }

// Name returns the message name ("REQ") or "attribute 0x…".
func (c *CM) Name() string { return AttributeName(c.AttributeID) }

// AttributeName names a CM message by its attribute ID: "REQ", "SIDR_REP",
// or "attribute 0x0042" for one CM does not define.
func AttributeName(id uint16) string {
	if m, ok := messages[id]; ok {
		return m.name
	}
	return fmt.Sprintf("attribute 0x%04x", id)
}

func (c *CM) String() string { return "CM " + c.Name() }

// PrivateDataOffset is where PrivateData starts in the CM attribute data
// (REQ 140, MRA 10, REJ 84, REP 36, RTU 8, DREQ 12, DREP 8, SIDR_REQ 16,
// SIDR_REP 96, LAP 64, APR 84; 72 for ClassPortInfo, which has none; 0 for
// unknown attributes and messages shorter than their fixed fields).
// Add the CM layer's frame offset for a frame offset.
func (c *CM) PrivateDataOffset() int { return c.pdOffset }

// ServiceID returns the service ID of a REQ, SIDR_REQ or SIDR_REP (ok false
// for other messages).
func (c *CM) ServiceID() (ServiceID, bool) {
	switch c.AttributeID {
	case AttrREQ:
		return c.REQ.ServiceID, true
	case AttrSIDRReq:
		return c.SIDRReq.ServiceID, true
	case AttrSIDRRep:
		return c.SIDRRep.ServiceID, true
	}
	return 0, false
}

// PrivateDataCut reports a message shorter than IBTA's fixed size: its
// private data holds only the octets present (CodeTruncated).
func (c *CM) PrivateDataCut() bool { return c.probs&cmProbTruncated != 0 }

// FixedCut reports a message cut inside its fixed fields, of which
// DecodeFromBytes decoded those the octets present hold wholly (Holds),
// and returned its error: such a message is a layer of its packet only
// when the capture's snap length cut it (dissect decides), as tshark's
// fields of a packet cut short are the ones its octets hold.
func (c *CM) FixedCut() bool { return c.probs&cmProbFixedCut != 0 }

// Holds reports whether the message's octets hold the field decoded into
// member, a pointer to a member of c's message (&c.REQ.LocalQPN): always,
// but in a message cut inside its fixed fields (FixedCut), where a field
// not wholly present is zero and not shown. It panics when member is no
// field of the message.
func (c *CM) Holds(member any) bool {
	if !c.FixedCut() {
		return true
	}
	n, ok := c.body().need(c, member)
	if !ok {
		panic(fmt.Sprintf("ibcm: %T is no field of %s", member, c.Name()))
	}
	return n <= c.fixed
}

// DecodeFromBytes decodes the CM attribute data (the MAD payload). A
// message shorter than its fixed fields is an error, after the fields its
// octets hold are decoded (FixedCut); one whose private data is cut short
// decodes with a CodeTruncated finding.
func (c *CM) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	mad := c.mad
	*c = CM{mad: mad}
	if mad != nil {
		c.AttributeID, c.Method = mad.AttributeID, mad.Method
	}
	c.Contents = data
	m, ok := messages[c.AttributeID]
	if !ok {
		c.probs |= cmProbUnknownAttr
		return nil
	}
	if len(data) < m.hdr {
		c.probs |= cmProbFixedCut
		c.fixed = len(data)
		c.decodeFixed(data)
		return truncated(df, m.name, "fixed fields", 0, m.hdr, len(data))
	}
	if len(data) < m.hdr+m.pd {
		c.probs |= cmProbTruncated
	}
	end := min(len(data), m.hdr+m.pd)
	c.pdOffset, c.fixed = m.hdr, m.hdr
	c.PrivateData = data[m.hdr:end:end]
	c.Contents = data[:end]
	c.decodeFixed(data)
	c.ULPData = c.PrivateData
	var hint pvtdata.Hint
	hint.Msg = m.kind
	if svc, ok := c.ServiceID(); ok && svc.IsRDMACM() {
		hint.Port, _ = ULPPort(uint64(svc))
		if c.AttributeID == AttrREQ || c.AttributeID == AttrSIDRReq {
			if h, ok := ParseIPCMHeader(c.PrivateData); ok {
				c.HasIPCM, c.IPCM = true, h
				c.ULPOffset = IPCMHeaderLen
				c.ULPData = c.PrivateData[IPCMHeaderLen:]
			} else if svc.PortSpace() != PortSpaceIB {
				c.probs |= cmProbIPCMInvalid
			}
		}
	}
	if c.AttributeID != AttrClassPortInfo {
		c.PD = pvtdata.Dissect(c.ULPData, hint, pvtdata.ModeRFC8797)
	}
	return nil
}

// decodeFixed decodes the message's fixed fields from data (those it
// holds: FixedCut) and checks what they say.
func (c *CM) decodeFixed(data []byte) {
	b := c.body()
	b.decode(c, data)
	if c.AttributeID == AttrREJ && c.Holds(&c.REJ.Reason) {
		if _, ok := rejReasons[c.REJ.Reason]; !ok {
			c.probs |= cmProbRejReason
		}
	}
	if b.reserved(data) {
		c.probs |= cmProbReserved
	}
	if !c.methodExpected() {
		c.probs |= cmProbMethod
	}
}

// AnswersREQ returns the Remote Communication ID of a REP, or of a REJ of a
// REQ: the Local Communication ID of the REQ the message answers, by which
// a reader that saw that REQ finds the service it named.
func (c *CM) AnswersREQ() (commID uint32, ok bool) {
	switch {
	case c.AttributeID == AttrREP:
		return c.REP.RemoteCommID, true
	case c.AttributeID == AttrREJ && c.REJ.MessageRejected == 0:
		return c.REJ.RemoteCommID, true
	}
	return 0, false
}

// SetServicePort decodes the ULP private data of a REP or REJ again as
// the ULP listening on the rdma_cm port of the REQ it answers would send
// it. Those messages name no service, so DecodeFromBytes could only read
// them without the port: an NVMe-oF REP's crqsize is then no known ULP's
// and gets RFC 8797's "no Format Identifier" note.
func (c *CM) SetServicePort(port uint16) {
	if _, ok := c.AnswersREQ(); !ok {
		return
	}
	// The readings depend on the octets alone: only the ULP is recognised
	// again.
	c.PD.Rehint(pvtdata.Hint{Msg: messages[c.AttributeID].kind, Port: port}, pvtdata.ModeRFC8797)
}

// methodExpected reports whether the MAD method is one CM uses for the
// attribute: Send for the messages, Get/Set/GetResp for ClassPortInfo.
func (c *CM) methodExpected() bool {
	if c.mad == nil {
		return true
	}
	if c.AttributeID == AttrClassPortInfo {
		return c.Method == MethodGet || c.Method == MethodSet || c.Method == MethodGetResp
	}
	return c.Method == MethodSend
}

// GetUint implements field.UintGetter for the message type (attribute ID).
func (c *CM) GetUint(f *field.Field) (v uint64, has, known bool) {
	return field.GetOne(f, fCMAttributeID, uint64(c.AttributeID))
}

// VisitFields reports the message: its fields in wire order, then the
// private data bytes, the IP CM header (REQ, SIDR_REQ) and, as a subtree,
// pvtdata's decode of the ULP data.
func (c *CM) VisitFields(v field.Visitor) {
	v.Uint(fCMAttributeID, uint64(c.AttributeID))
	m, ok := messages[c.AttributeID]
	if !ok {
		v.Bytes(fCMUndecoded, c.Contents)
		return
	}
	c.body().visit(c, v)
	if c.AttributeID == AttrClassPortInfo || c.FixedCut() {
		return // no private data (captured)
	}
	pf := privateFields[m.prefix]
	v.Uint(fCMPrivateLen, uint64(len(c.PrivateData)))
	v.Bytes(pf.private, c.PrivateData)
	if c.HasIPCM {
		ip := ipcmFieldsFor[m.prefix]
		ip.visit(v, &c.IPCM, c.ULPData)
	}
	v.Uint(fCMULPOffset, uint64(c.ULPOffset))
	v.Begin(fCMPvtData)
	c.PD.VisitFields(v)
	v.End()
}

// privateFields holds the private-data field of each message.
var privateFields = func() map[string]struct{ private *field.Field } {
	out := map[string]struct{ private *field.Field }{}
	for _, m := range sortedMessages() {
		if m.pd > 0 {
			out[m.prefix] = struct{ private *field.Field }{ProtoCM.Bytes(m.prefix+".private", m.name+" private data")}
		}
	}
	return out
}()

var ipcmFieldsFor = map[string]*ipcmFields{}

func init() {
	for _, p := range []string{"cm.req", "cm.sidr_req"} {
		f := newIPCMFields(p)
		ipcmFieldsFor[p] = &f
	}
}

// sortedMessages lists the messages by attribute ID (stable field order).
func sortedMessages() []message {
	var out []message
	for id := uint16(0); id <= AttrAPR; id++ {
		if m, ok := messages[id]; ok {
			out = append(out, m)
		}
	}
	return out
}

// AppendSummary appends e.g. "CM REQ svc=NFS/RDMA(20049) qpn=0x000012
// pd=RFC8797 v1 R=1 send=4096 recv=4096", without fmt; of a message cut
// inside its fixed fields, the fields captured.
func (c *CM) AppendSummary(b []byte) []byte {
	b = append(b, "CM "...)
	b = append(b, c.Name()...)
	switch c.AttributeID {
	case AttrClassPortInfo:
		if n, ok := madMethodNames[uint64(c.Method)]; ok {
			b = append(b, ' ')
			b = append(b, n...)
		}
	case AttrREQ:
		if c.Holds(&c.REQ.ServiceID) {
			b = c.REQ.ServiceID.AppendTo(append(b, " svc="...))
		}
		b = c.appendQPN(b, &c.REQ.LocalQPN)
	case AttrREP:
		b = c.appendQPN(b, &c.REP.LocalQPN)
	case AttrREJ:
		if !c.Holds(&c.REJ.Reason) {
			break
		}
		b = strconv.AppendUint(append(b, " reason="...), uint64(c.REJ.Reason), 10)
		b = append(b, ' ')
		if x, ok := rejReasons[c.REJ.Reason]; ok {
			b = append(b, x.name...)
		} else {
			b = strconv.AppendUint(append(b, "reason "...), uint64(c.REJ.Reason), 10)
		}
	case AttrMRA:
		if c.Holds(&c.MRA.ServiceTimeout) {
			b = append(append(b, " of="...), mraNames[uint64(c.MRA.MessageMRAed)]...)
			b = strconv.AppendUint(append(b, " timeout="...), uint64(c.MRA.ServiceTimeout), 10)
		}
	case AttrDREQ:
		b = c.appendQPN(b, &c.DREQ.RemoteQPN)
	case AttrSIDRReq:
		if c.Holds(&c.SIDRReq.ServiceID) {
			b = c.SIDRReq.ServiceID.AppendTo(append(b, " svc="...))
		}
	case AttrSIDRRep:
		if c.Holds(&c.SIDRRep.Status) {
			b = append(append(b, " status="...), sidrStatusNames[uint64(c.SIDRRep.Status)]...)
		}
		b = c.appendQPN(b, &c.SIDRRep.QPN)
	case AttrAPR:
		if c.Holds(&c.APR.Status) {
			b = append(append(b, " status="...), aprStatusNames[uint64(c.APR.Status)]...)
		}
	case AttrLAP:
		b = c.appendQPN(b, &c.LAP.RemoteQPN)
	}
	if c.AttributeID != AttrClassPortInfo && !c.FixedCut() {
		if c.PD.Reading.Valid {
			m := c.PD.Reading.Message
			b = strconv.AppendUint(append(b, " pd=RFC8797 v"...), uint64(m.Version), 10)
			b = strconv.AppendInt(append(b, " R="...), int64(b2u(m.RemoteInvalidation())), 10)
			b = strconv.AppendInt(append(b, " send="...), int64(m.SendBytes()), 10)
			b = strconv.AppendInt(append(b, " recv="...), int64(m.ReceiveBytes()), 10)
		} else if c.PD.ULP.Kind.Other() {
			b = append(b, " pd="...)
			b = append(b, c.PD.ULP.Kind.String()...)
		}
	}
	return b
}

// appendQPN appends " qpn=0x000012", the QPN decoded into qpn, when the
// message's octets hold it.
func (c *CM) appendQPN(b []byte, qpn *uint32) []byte {
	if !c.Holds(qpn) {
		return b
	}
	return appendHexDigits(append(b, " qpn=0x"...), uint64(*qpn), 6)
}

func b2u(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AppendFindings appends what the CM layer noticed, and pvtdata's findings
// on the ULP data (offsets from the CM layer's first octet; pvtdata's own
// offsets are moved to that base).
func (c *CM) AppendFindings(dst []finding.Finding) []finding.Finding {
	m, known := messages[c.AttributeID]
	if c.probs&cmProbUnknownAttr != 0 {
		dst = append(dst, newFinding(CodeUnknownAttribute, finding.SeverityWarning, "cm", -1, "IBTA vol. 1 §12.6",
			"CM attribute ID 0x%04x is not defined", c.AttributeID))
		return dst
	}
	if c.probs&cmProbTruncated != 0 {
		dst = append(dst, newFinding(CodeTruncated, finding.SeverityWarning, "cm", m.hdr+len(c.PrivateData), "IBTA vol. 1 §12.6",
			"%s private data is %d octets, not %d: the message is cut short", m.name, len(c.PrivateData), m.pd))
	}
	if c.probs&cmProbMethod != 0 {
		dst = append(dst, newFinding(CodeUnknownMethod, finding.SeverityWarning, "cm", -1, "IBTA vol. 1 §12.6",
			"%s sent with MAD method 0x%02x (%s)", m.name, c.Method, madMethodNames[uint64(c.Method)]))
	}
	if c.probs&cmProbReserved != 0 {
		dst = append(dst, newFinding(CodeReservedBits, finding.SeverityWarning, "cm", -1, "IBTA vol. 1 §12.6",
			"%s has reserved bits set", m.name))
	}
	if c.probs&cmProbRejReason != 0 {
		dst = append(dst, newFinding(CodeUnknownRejectReason, finding.SeverityWarning, "cm", 10, "IBTA vol. 1 §12.6.7",
			"REJ reason %d is not defined", c.REJ.Reason))
	}
	if c.probs&cmProbIPCMInvalid != 0 {
		svc, _ := c.ServiceID()
		dst = append(dst, newFinding(CodeIPCMInvalid, finding.SeverityWarning, "cm", c.pdOffset, "IBTA vol. 1 annex A11",
			"service ID %s is an rdma_cm IP service, but the private data does not start with a valid IP CM header (version 0, IP version 4 or 6)", svc))
	}
	if known && c.AttributeID != AttrClassPortInfo && !c.FixedCut() && c.PD.ULP.Kind != pvtdata.ULPZero && c.PD.ULP.Kind != pvtdata.ULPEmpty {
		start := len(dst)
		dst = c.PD.AppendFindings(dst)
		out := dst[:start]
		for _, f := range dst[start:] {
			if c.AttributeID == AttrREJ && f.Code == pvtdata.CodeNotFound {
				// A rejection negotiates nothing: no RFC 8797 message
				// in it is not worth a note (conn says the same).
				continue
			}
			if f.Offset >= 0 {
				f.Offset += c.pdOffset + c.ULPOffset
			}
			out = append(out, f)
		}
		dst = out
	}
	return dst
}

// SerializeTo writes the CM attribute data: the message's fields, then
// PrivateData zero-padded to the message's private-data size (an error if
// longer), CMDataLen octets in all (ClassPortInfo: 72 octets, then zeros).
func (c *CM) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	m, ok := messages[c.AttributeID]
	if !ok {
		return fmt.Errorf("CM: cannot serialize unknown attribute 0x%04x", c.AttributeID)
	}
	if len(c.PrivateData) > m.pd {
		return fmt.Errorf("CM: %s private data is %d octets, at most %d fit", m.name, len(c.PrivateData), m.pd)
	}
	w, err := b.PrependBytes(CMDataLen)
	if err != nil {
		return err
	}
	clear(w)
	c.body().encode(c, w)
	copy(w[m.hdr:], c.PrivateData)
	return nil
}
