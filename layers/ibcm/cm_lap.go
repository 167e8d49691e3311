package ibcm

import (
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// LAP is Load Alternate Path (table 115); private data (168 octets) in
// CM.PrivateData.
type LAP struct {
	commIDs
	RemoteQPN           uint32 // QPN or EECN, 24 bits
	RemoteCMRespTimeout uint8
	Alternate           Path
}

var (
	lapLayout = newLayout(AttrLAP, func(c *CM) *LAP { return &c.LAP },
		ids[LAP]("cm.lap"),
		num(ProtoCM.Hex("cm.lap.remoteqpneecn", 24, "Remote QPN/EECN"), func(r *LAP) *uint32 { return &r.RemoteQPN }, at(12, 0)),
		num(ProtoCM.Uint("cm.lap.remoteresptout", 5, "Remote CM Response Timeout (4.096 µs · 2^n)"), func(r *LAP) *uint8 { return &r.RemoteCMRespTimeout }, at(15, 0)),
		lapPath("cm.lap.alt_", "Alternate Path", func(r *LAP) *Path { return &r.Alternate }, 20),
	)
	aprStatusNames = map[uint64]string{0: "Path loaded", 1: "Invalid Communication ID", 2: "Unsupported request",
		3: "Rejected", 4: "Redirect (ClassPortInfo)", 5: "Is current path", 6: "Invalid QPN/EECN", 7: "Invalid LID",
		8: "Invalid GID", 9: "Invalid Flow Label", 10: "Invalid Traffic Class", 11: "Invalid Hop Limit",
		12: "Invalid Packet Rate", 13: "Invalid SL"}
)

// APR is Alternate Path Response (table 116); private data (148 octets) in
// CM.PrivateData.
type APR struct {
	commIDs
	AddInfoLen uint8
	Status     uint8
	AddInfo    []byte // 72 octets, aliases the packet
}

var (
	aprLayout = newLayout(AttrAPR, func(c *CM) *APR { return &c.APR },
		ids[APR]("cm.apr"),
		num(ProtoCM.Uint("cm.apr.addinfolen", 8, "Additional Information Length").WithUnit("octets"), func(r *APR) *uint8 { return &r.AddInfoLen }, at(8, 0)),
		num(ProtoCM.Uint("cm.apr.arstatus", 8, "AP Status").WithNames(aprStatusNames), func(r *APR) *uint8 { return &r.Status }, at(9, 0)),
		octets(ProtoCM.Bytes("cm.apr.addinfo", "Additional Information"), func(r *APR) *[]byte { return &r.AddInfo }, 12, 72),
	)
	fAPRCPI = newClassPortInfoFields("cm.apr.cpi")
)

// visitAfter reports the ClassPortInfo an APR redirects to.
func (r *APR) visitAfter(v field.Visitor) {
	if r.Status == 4 {
		fAPRCPI.visitIn(v, r.AddInfo)
	}
}
