package ibcm

import (
	"encoding/binary"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// SIDRReq is the Service ID Resolution Request (table 119); private data
// (216 octets, an IP CM header first for rdma_cm) in CM.PrivateData.
type SIDRReq struct {
	RequestID uint32
	PKey      uint16
	ServiceID ServiceID
}

var (
	fSIDRReqID      = ProtoCM.Hex("cm.sidr_req.requestid", 32, "Request ID")
	fSIDRReqPKey    = ProtoCM.Hex("cm.sidr_req.pkey", 16, "Partition Key")
	fSIDRReqService = newServiceIDFields("cm.sidr_req")
)

func (r *SIDRReq) decode(b []byte) {
	r.RequestID = binary.BigEndian.Uint32(b[0:])
	r.PKey = binary.BigEndian.Uint16(b[4:])
	r.ServiceID = ServiceID(binary.BigEndian.Uint64(b[8:]))
}

func (r *SIDRReq) encode(b []byte) {
	binary.BigEndian.PutUint32(b[0:], r.RequestID)
	binary.BigEndian.PutUint16(b[4:], r.PKey)
	binary.BigEndian.PutUint64(b[8:], uint64(r.ServiceID))
}

func (r *SIDRReq) visit(v field.Visitor) {
	v.Uint(fSIDRReqID, uint64(r.RequestID))
	v.Uint(fSIDRReqPKey, uint64(r.PKey))
	fSIDRReqService.visit(v, r.ServiceID)
}

var sidrStatusNames = map[uint64]string{0: "Valid", 1: "Service ID not supported", 2: "Rejected by service provider",
	3: "No QP available", 4: "Redirect (ClassPortInfo)", 5: "Unsupported class version"}

// SIDRRep is the Service ID Resolution Reply (table 120); private data
// (136 octets) in CM.PrivateData.
type SIDRRep struct {
	RequestID  uint32
	Status     uint8
	AddInfoLen uint8
	VendorID   uint32 // 24 bits: octets 6–7 and 11
	QPN        uint32
	ServiceID  ServiceID
	QKey       uint32
	AddInfo    []byte // 72 octets, aliases the packet
}

var (
	fSIDRRepID      = ProtoCM.Hex("cm.sidr_rep.requestid", 32, "Request ID")
	fSIDRRepStatus  = ProtoCM.Uint("cm.sidr_rep.status", 8, "Status").WithNames(sidrStatusNames)
	fSIDRRepInfoLen = ProtoCM.Uint("cm.sidr_rep.addinfolen", 8, "Additional Information Length").WithUnit("octets")
	fSIDRRepVendor  = ProtoCM.Hex("cm.sidr_rep.vendorid", 24, "Vendor ID")
	fSIDRRepQPN     = ProtoCM.Hex("cm.sidr_rep.qpn", 24, "QPN")
	fSIDRRepService = newServiceIDFields("cm.sidr_rep")
	fSIDRRepQKey    = ProtoCM.Hex("cm.sidr_rep.qkey", 32, "Q_Key")
	fSIDRRepInfo    = ProtoCM.Bytes("cm.sidr_rep.addinfo", "Additional Information")
	fSIDRRepCPI     = newClassPortInfoFields("cm.sidr_rep.cpi")
	fSIDRRepVersion = ProtoCM.Uint("cm.sidr_rep.classversion", 8, "Highest Class Version supported")
)

func (r *SIDRRep) decode(b []byte) {
	*r = SIDRRep{
		RequestID:  binary.BigEndian.Uint32(b[0:]),
		Status:     b[4],
		AddInfoLen: b[5],
		VendorID:   uint32(binary.BigEndian.Uint16(b[6:]))<<8 | uint32(b[11]),
		QPN:        binary.BigEndian.Uint32(b[8:]) >> 8,
		ServiceID:  ServiceID(binary.BigEndian.Uint64(b[12:])),
		QKey:       binary.BigEndian.Uint32(b[20:]),
		AddInfo:    b[24:96:96],
	}
}

func (r *SIDRRep) encode(b []byte) {
	binary.BigEndian.PutUint32(b[0:], r.RequestID)
	b[4], b[5] = r.Status, r.AddInfoLen
	binary.BigEndian.PutUint16(b[6:], uint16(r.VendorID>>8))
	binary.BigEndian.PutUint32(b[8:], r.QPN<<8|r.VendorID&0xff)
	binary.BigEndian.PutUint64(b[12:], uint64(r.ServiceID))
	binary.BigEndian.PutUint32(b[20:], r.QKey)
	copy(b[24:96], r.AddInfo)
}

func (r *SIDRRep) visit(v field.Visitor) {
	v.Uint(fSIDRRepID, uint64(r.RequestID))
	v.Uint(fSIDRRepStatus, uint64(r.Status))
	v.Uint(fSIDRRepInfoLen, uint64(r.AddInfoLen))
	v.Uint(fSIDRRepVendor, uint64(r.VendorID))
	v.Uint(fSIDRRepQPN, uint64(r.QPN))
	fSIDRRepService.visit(v, r.ServiceID)
	v.Uint(fSIDRRepQKey, uint64(r.QKey))
	v.Bytes(fSIDRRepInfo, r.AddInfo)
	switch {
	case r.Status == 4:
		fSIDRRepCPI.visitIn(v, r.AddInfo)
	case r.Status == 5 && r.AddInfoLen > 0 && len(r.AddInfo) > 0:
		v.Uint(fSIDRRepVersion, uint64(r.AddInfo[0]))
	}
}
