// Package ulp decodes what an RDMA Send carries for the upper-layer
// protocols other than RPC-over-RDMA (layers/rpcrdma): SMB Direct
// ([MS-SMBD] §2.2), iSER (RFC 7145 §9.2), NVMe over Fabrics on RDMA (the
// command and response capsules, NVMe-oF 1.1 §2, §7.3) and IPoIB connected
// mode (RFC 4391 §6, RFC 4755), and the Send payload of any other service.
//
// Which decoder applies is a property of the connection, not of the bytes:
// the caller (dissect) learns the service of a queue pair or TCP stream
// from the CM REQ/REP or MPA request it saw and picks the layer by Kind.
// The layers keep no state across packets.
package ulp

import (
	"encoding/binary"

	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Kind is the upper-layer protocol of a connection.
type Kind uint8

const (
	// KindUnknown: the connection's setup was not seen; the caller may try a
	// heuristic (rpcrdma.Header.Plausible).
	KindUnknown Kind = iota
	KindRPCRDMA
	KindSMBDirect
	KindNVMeoF
	KindISER
	KindIPoIBCM
	// KindOther: a service this package has no decoder for (its Sends are
	// shown as Send payload).
	KindOther
)

var kindNames = [...]string{KindUnknown: "", KindRPCRDMA: "RPC-over-RDMA", KindSMBDirect: "SMB Direct", KindNVMeoF: "NVMe-oF",
	KindISER: "iSER", KindIPoIBCM: "IPoIB-CM", KindOther: ""}

// String names the protocol ("" for Unknown and Other).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return ""
}

// ByPort is the ULP that listens on a well-known rdma_cm or iWARP (TCP)
// port: NFS/RDMA's 20049 and NFS's 2049 carry RPC-over-RDMA (RFC 8267
// §4), 445 and 5445 SMB Direct ([MS-SMBD] §2.1), 4420 NVMe-oF, 3260 and
// 860 iSER; any other port is Other.
func ByPort(port uint16) Kind {
	switch port {
	case pvtdata.PortNFSRDMA, 2049:
		return KindRPCRDMA
	case pvtdata.PortSMBDirect, pvtdata.PortSMBDirect2:
		return KindSMBDirect
	case pvtdata.PortNVMeRDMA:
		return KindNVMeoF
	case pvtdata.PortISER, 860:
		return KindISER
	}
	return KindOther
}

// le and be read and write the ULPs' integers: SMB Direct and NVMe are
// little-endian, iSER and IPoIB big-endian.
var (
	le = binary.LittleEndian
	be = binary.BigEndian
)
