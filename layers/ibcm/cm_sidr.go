package ibcm

import (
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// SIDRReq is the Service ID Resolution Request (table 119); private data
// (216 octets, an IP CM header first for rdma_cm) in CM.PrivateData.
type SIDRReq struct {
	RequestID uint32
	PKey      uint16
	ServiceID ServiceID
}

var sidrReqLayout = newLayout(AttrSIDRReq, func(c *CM) *SIDRReq { return &c.SIDRReq },
	num(ProtoCM.Hex("cm.sidr_req.requestid", 32, "Request ID"), func(r *SIDRReq) *uint32 { return &r.RequestID }, at(0, 0)),
	num(ProtoCM.Hex("cm.sidr_req.pkey", 16, "Partition Key"), func(r *SIDRReq) *uint16 { return &r.PKey }, at(4, 0)),
	serviceID(newServiceIDFields("cm.sidr_req"), func(r *SIDRReq) *ServiceID { return &r.ServiceID }, 8),
)

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
	sidrRepLayout = newLayout(AttrSIDRRep, func(c *CM) *SIDRRep { return &c.SIDRRep },
		num(ProtoCM.Hex("cm.sidr_rep.requestid", 32, "Request ID"), func(r *SIDRRep) *uint32 { return &r.RequestID }, at(0, 0)),
		num(ProtoCM.Uint("cm.sidr_rep.status", 8, "Status").WithNames(sidrStatusNames), func(r *SIDRRep) *uint8 { return &r.Status }, at(4, 0)),
		num(ProtoCM.Uint("cm.sidr_rep.addinfolen", 8, "Additional Information Length").WithUnit("octets"), func(r *SIDRRep) *uint8 { return &r.AddInfoLen }, at(5, 0)),
		num(ProtoCM.Hex("cm.sidr_rep.vendorid", 24, "Vendor ID"), func(r *SIDRRep) *uint32 { return &r.VendorID }, piece(6, 0, 16), piece(11, 0, 8)),
		num(ProtoCM.Hex("cm.sidr_rep.qpn", 24, "QPN"), func(r *SIDRRep) *uint32 { return &r.QPN }, at(8, 0)),
		serviceID(newServiceIDFields("cm.sidr_rep"), func(r *SIDRRep) *ServiceID { return &r.ServiceID }, 12),
		num(ProtoCM.Hex("cm.sidr_rep.qkey", 32, "Q_Key"), func(r *SIDRRep) *uint32 { return &r.QKey }, at(20, 0)),
		octets(ProtoCM.Bytes("cm.sidr_rep.addinfo", "Additional Information"), func(r *SIDRRep) *[]byte { return &r.AddInfo }, 24, 72),
	)
	fSIDRRepCPI     = newClassPortInfoFields("cm.sidr_rep.cpi")
	fSIDRRepVersion = ProtoCM.Uint("cm.sidr_rep.classversion", 8, "Highest Class Version supported")
)

// visitAfter reports the ClassPortInfo a SIDR_REP redirects to, or the
// class version it supports.
func (r *SIDRRep) visitAfter(v field.Visitor) {
	switch {
	case r.Status == 4:
		fSIDRRepCPI.visitIn(v, r.AddInfo)
	case r.Status == 5 && r.AddInfoLen > 0 && len(r.AddInfo) > 0:
		v.Uint(fSIDRRepVersion, uint64(r.AddInfo[0]))
	}
}
