package ibcm

import (
	"encoding/binary"

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
	fLAP           = newCommIDFields("cm.lap")
	fLAPRemoteQPN  = ProtoCM.Hex("cm.lap.remoteqpneecn", 24, "Remote QPN/EECN")
	fLAPRemoteTO   = ProtoCM.Uint("cm.lap.remoteresptout", 5, "Remote CM Response Timeout (4.096 µs · 2^n)")
	fLAPAlternate  = newPathFields("cm.lap.alt_", "Alternate Path")
	aprStatusNames = map[uint64]string{0: "Path loaded", 1: "Invalid Communication ID", 2: "Unsupported request",
		3: "Rejected", 4: "Redirect (ClassPortInfo)", 5: "Is current path", 6: "Invalid QPN/EECN", 7: "Invalid LID",
		8: "Invalid GID", 9: "Invalid Flow Label", 10: "Invalid Traffic Class", 11: "Invalid Hop Limit",
		12: "Invalid Packet Rate", 13: "Invalid SL"}
)

func (r *LAP) decode(b []byte) {
	r.decodeIDs(b)
	r.RemoteQPN = binary.BigEndian.Uint32(b[12:]) >> 8
	r.RemoteCMRespTimeout = b[15] >> 3
	r.Alternate.decodeLAPPath(b[20:64])
}

func (r *LAP) encode(b []byte) {
	r.encodeIDs(b)
	binary.BigEndian.PutUint32(b[12:], r.RemoteQPN<<8|uint32(r.RemoteCMRespTimeout)<<3)
	r.Alternate.encodeLAPPath(b[20:64])
}

func (r *LAP) visit(v field.Visitor) {
	fLAP.visit(v, &r.commIDs)
	v.Uint(fLAPRemoteQPN, uint64(r.RemoteQPN))
	v.Uint(fLAPRemoteTO, uint64(r.RemoteCMRespTimeout))
	fLAPAlternate.visit(v, &r.Alternate, true)
}

// APR is Alternate Path Response (table 116); private data (148 octets) in
// CM.PrivateData.
type APR struct {
	commIDs
	AddInfoLen uint8
	Status     uint8
	AddInfo    []byte // 72 octets, aliases the packet
}

var (
	fAPR        = newCommIDFields("cm.apr")
	fAPRInfoLen = ProtoCM.Uint("cm.apr.addinfolen", 8, "Additional Information Length").WithUnit("octets")
	fAPRStatus  = ProtoCM.Uint("cm.apr.arstatus", 8, "AP Status").WithNames(aprStatusNames)
	fAPRInfo    = ProtoCM.Bytes("cm.apr.addinfo", "Additional Information")
	fAPRCPI     = newClassPortInfoFields("cm.apr.cpi")
)

func (r *APR) decode(b []byte) {
	r.decodeIDs(b)
	r.AddInfoLen = b[8]
	r.Status = b[9]
	r.AddInfo = b[12:84:84]
}

func (r *APR) encode(b []byte) {
	r.encodeIDs(b)
	b[8], b[9] = r.AddInfoLen, r.Status
	copy(b[12:84], r.AddInfo)
}

func (r *APR) visit(v field.Visitor) {
	fAPR.visit(v, &r.commIDs)
	v.Uint(fAPRInfoLen, uint64(r.AddInfoLen))
	v.Uint(fAPRStatus, uint64(r.Status))
	v.Bytes(fAPRInfo, r.AddInfo)
	if r.Status == 4 {
		fAPRCPI.visitIn(v, r.AddInfo)
	}
}
