package ibcm

import (
	"encoding/binary"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

var failoverNames = map[uint64]string{0: "Failover accepted", 1: "Failover not supported", 2: "Alternate path rejected", 3: "Reserved"}

// REP is the Connection Reply (IBTA vol. 1 §12.6.8 table 110). Private
// data (196 octets) is in CM.PrivateData.
type REP struct {
	LocalCommID      uint32
	RemoteCommID     uint32
	LocalQKey        uint32
	LocalQPN         uint32
	LocalEECN        uint32
	StartingPSN      uint32
	VendorID         uint32 // 24 bits, in octets 15, 19 and 23 (IBA comment 9434)
	RespResources    uint8
	InitiatorDepth   uint8
	TargetAckDelay   uint8
	FailoverAccepted uint8
	E2EFlowControl   bool
	RNRRetryCount    uint8
	SRQ              bool
	Reserved         uint8 // octet 27 bits 3:0
	LocalCAGUID      uint64
}

var (
	fREPLocalCommID  = ProtoCM.Hex("cm.rep.localcommid", 32, "Local Communication ID")
	fREPRemoteCommID = ProtoCM.Hex("cm.rep.remotecommid", 32, "Remote Communication ID")
	fREPQKey         = ProtoCM.Hex("cm.rep.localqkey", 32, "Local Q_Key")
	fREPQPN          = ProtoCM.Hex("cm.rep.localqpn", 24, "Local QPN")
	fREPEECN         = ProtoCM.Hex("cm.rep.localeecn", 24, "Local EE Context Number")
	fREPPSN          = ProtoCM.Uint("cm.rep.startpsn", 24, "Starting PSN")
	fREPVendorID     = ProtoCM.Hex("cm.rep.vendorid", 24, "Vendor ID")
	fREPRespRes      = ProtoCM.Uint("cm.rep.respres", 8, "Responder Resources")
	fREPInitDepth    = ProtoCM.Uint("cm.rep.initdepth", 8, "Initiator Depth")
	fREPAckDelay     = ProtoCM.Uint("cm.rep.tgtackdelay", 5, "Target ACK Delay (4.096 µs · 2^n)")
	fREPFailover     = ProtoCM.Uint("cm.rep.failoveracc", 2, "Failover Accepted").WithNames(failoverNames)
	fREPE2E          = ProtoCM.Bool("cm.rep.e2eflowctrl", "End-to-End Flow Control")
	fREPRNR          = ProtoCM.Uint("cm.rep.rnrretrcount", 3, "RNR Retry Count")
	fREPSRQ          = ProtoCM.Bool("cm.rep.srq", "SRQ")
	fREPReserved     = ProtoCM.Hex("cm.rep.reserved", 4, "Reserved")
	fREPCAGUID       = ProtoCM.EUI64("cm.rep.localcaguid", "Local CA GUID")
)

func (r *REP) decode(b []byte) {
	*r = REP{
		LocalCommID:      binary.BigEndian.Uint32(b[0:]),
		RemoteCommID:     binary.BigEndian.Uint32(b[4:]),
		LocalQKey:        binary.BigEndian.Uint32(b[8:]),
		LocalQPN:         binary.BigEndian.Uint32(b[12:]) >> 8,
		LocalEECN:        binary.BigEndian.Uint32(b[16:]) >> 8,
		StartingPSN:      binary.BigEndian.Uint32(b[20:]) >> 8,
		VendorID:         uint32(b[15])<<16 | uint32(b[19])<<8 | uint32(b[23]),
		RespResources:    b[24],
		InitiatorDepth:   b[25],
		TargetAckDelay:   b[26] >> 3,
		FailoverAccepted: b[26] >> 1 & 0x03,
		E2EFlowControl:   b[26]&0x01 != 0,
		RNRRetryCount:    b[27] >> 5,
		SRQ:              b[27]&0x10 != 0,
		Reserved:         b[27] & 0x0f,
		LocalCAGUID:      binary.BigEndian.Uint64(b[28:]),
	}
}

func (r *REP) encode(b []byte) {
	binary.BigEndian.PutUint32(b[0:], r.LocalCommID)
	binary.BigEndian.PutUint32(b[4:], r.RemoteCommID)
	binary.BigEndian.PutUint32(b[8:], r.LocalQKey)
	binary.BigEndian.PutUint32(b[12:], r.LocalQPN<<8|r.VendorID>>16&0xff)
	binary.BigEndian.PutUint32(b[16:], r.LocalEECN<<8|r.VendorID>>8&0xff)
	binary.BigEndian.PutUint32(b[20:], r.StartingPSN<<8|r.VendorID&0xff)
	b[24], b[25] = r.RespResources, r.InitiatorDepth
	b[26] = r.TargetAckDelay<<3 | r.FailoverAccepted&0x03<<1 | boolBit(r.E2EFlowControl, 1)
	b[27] = r.RNRRetryCount<<5 | boolBit(r.SRQ, 0x10) | r.Reserved&0x0f
	binary.BigEndian.PutUint64(b[28:], r.LocalCAGUID)
}

func (r *REP) visit(v field.Visitor) {
	v.Uint(fREPLocalCommID, uint64(r.LocalCommID))
	v.Uint(fREPRemoteCommID, uint64(r.RemoteCommID))
	v.Uint(fREPQKey, uint64(r.LocalQKey))
	v.Uint(fREPQPN, uint64(r.LocalQPN))
	v.Uint(fREPEECN, uint64(r.LocalEECN))
	v.Uint(fREPPSN, uint64(r.StartingPSN))
	v.Uint(fREPVendorID, uint64(r.VendorID))
	v.Uint(fREPRespRes, uint64(r.RespResources))
	v.Uint(fREPInitDepth, uint64(r.InitiatorDepth))
	v.Uint(fREPAckDelay, uint64(r.TargetAckDelay))
	v.Uint(fREPFailover, uint64(r.FailoverAccepted))
	v.Bool(fREPE2E, r.E2EFlowControl)
	v.Uint(fREPRNR, uint64(r.RNRRetryCount))
	v.Bool(fREPSRQ, r.SRQ)
	v.Uint(fREPReserved, uint64(r.Reserved))
	v.Uint(fREPCAGUID, r.LocalCAGUID)
}

// commIDs is the pair of communication IDs that opens RTU, DREQ, DREP, MRA,
// REJ, LAP and APR.
type commIDs struct {
	LocalCommID  uint32
	RemoteCommID uint32
}

func (c *commIDs) ids() *commIDs { return c }

// CommIDs returns the local and remote communication IDs of a REP, RTU,
// DREQ, DREP, MRA, REJ, LAP or APR, to read or set (nil for the other
// messages).
func (c *CM) CommIDs() (local, remote *uint32) {
	if c.AttributeID == AttrREP {
		return &c.REP.LocalCommID, &c.REP.RemoteCommID
	}
	if m, ok := c.body().(interface{ ids() *commIDs }); ok {
		ids := m.ids()
		return &ids.LocalCommID, &ids.RemoteCommID
	}
	return nil, nil
}

func (c *commIDs) decodeIDs(b []byte) {
	c.LocalCommID = binary.BigEndian.Uint32(b[0:])
	c.RemoteCommID = binary.BigEndian.Uint32(b[4:])
}

func (c *commIDs) encodeIDs(b []byte) {
	binary.BigEndian.PutUint32(b[0:], c.LocalCommID)
	binary.BigEndian.PutUint32(b[4:], c.RemoteCommID)
}

type commIDFields struct{ local, remote *field.Field }

func newCommIDFields(prefix string) commIDFields {
	return commIDFields{
		local:  ProtoCM.Hex(prefix+".localcommid", 32, "Local Communication ID"),
		remote: ProtoCM.Hex(prefix+".remotecommid", 32, "Remote Communication ID"),
	}
}

func (f *commIDFields) visit(v field.Visitor, c *commIDs) {
	v.Uint(f.local, uint64(c.LocalCommID))
	v.Uint(f.remote, uint64(c.RemoteCommID))
}

// RTU is Ready To Use (table 111); private data (224 octets) in
// CM.PrivateData.
type RTU struct{ commIDs }

var fRTU = newCommIDFields("cm.rtu")

func (r *RTU) decode(b []byte)        { r.decodeIDs(b) }
func (r *RTU) encode(b []byte)        { r.encodeIDs(b) }
func (r *RTU) visit(v field.Visitor)  { fRTU.visit(v, &r.commIDs) }
func (r *DREP) decode(b []byte)       { r.decodeIDs(b) }
func (r *DREP) encode(b []byte)       { r.encodeIDs(b) }
func (r *DREP) visit(v field.Visitor) { fDREP.visit(v, &r.commIDs) }
func dreqReserved(b []byte) bool      { return b[11] != 0 }
func mraReserved(b []byte) bool       { return b[8]&0x3f != 0 || b[9]&0x07 != 0 }
func rejReserved(b []byte) bool       { return b[8]&0x3f != 0 || b[9]&0x01 != 0 }
func repReserved(b []byte) bool       { return b[27]&0x0f != 0 }
func sidrReqReserved(b []byte) bool   { return b[6] != 0 || b[7] != 0 }
func aprReserved(b []byte) bool       { return b[10] != 0 || b[11] != 0 }
func lapReserved(b []byte) bool {
	return binary.BigEndian.Uint32(b[8:]) != 0 || b[15]&0x07 != 0 || binary.BigEndian.Uint32(b[16:]) != 0 || lapPathReserved(b[20:64])
}
func cpiReserved(b []byte) bool { return b[32] != 0 }

// DREQ is the Disconnection Request (table 112); private data (220 octets)
// in CM.PrivateData.
type DREQ struct {
	commIDs
	RemoteQPN uint32 // QPN or EECN, 24 bits
}

// DREP is the Disconnection Reply (table 113); private data (224 octets)
// in CM.PrivateData.
type DREP struct{ commIDs }

var (
	fDREQ          = newCommIDFields("cm.dreq")
	fDREQRemoteQPN = ProtoCM.Hex("cm.dreq.remoteqpneecn", 24, "Remote QPN/EECN")
	fDREP          = newCommIDFields("cm.drep")
)

func (r *DREQ) decode(b []byte) {
	r.decodeIDs(b)
	r.RemoteQPN = binary.BigEndian.Uint32(b[8:]) >> 8
}

func (r *DREQ) encode(b []byte) {
	r.encodeIDs(b)
	binary.BigEndian.PutUint32(b[8:], r.RemoteQPN<<8)
}

func (r *DREQ) visit(v field.Visitor) {
	fDREQ.visit(v, &r.commIDs)
	v.Uint(fDREQRemoteQPN, uint64(r.RemoteQPN))
}

var mraNames = map[uint64]string{0: "REQ", 1: "REP", 2: "LAP", 3: "Reserved"}

// MRA is Message Receipt Acknowledgement (table 107); private data (222
// octets) in CM.PrivateData.
type MRA struct {
	commIDs
	MessageMRAed   uint8 // 0 REQ, 1 REP, 2 LAP
	ServiceTimeout uint8 // 4.096 µs · 2^n
}

var (
	fMRA        = newCommIDFields("cm.mra")
	fMRAMsg     = ProtoCM.Uint("cm.mra.msgmraed", 2, "Message MRAed").WithNames(mraNames)
	fMRATimeout = ProtoCM.Uint("cm.mra.serviceto", 5, "Service Timeout (4.096 µs · 2^n)")
)

func (r *MRA) decode(b []byte) {
	r.decodeIDs(b)
	r.MessageMRAed = b[8] >> 6
	r.ServiceTimeout = b[9] >> 3
}

func (r *MRA) encode(b []byte) {
	r.encodeIDs(b)
	b[8] = r.MessageMRAed << 6
	b[9] = r.ServiceTimeout << 3
}

func (r *MRA) visit(v field.Visitor) {
	fMRA.visit(v, &r.commIDs)
	v.Uint(fMRAMsg, uint64(r.MessageMRAed))
	v.Uint(fMRATimeout, uint64(r.ServiceTimeout))
}
