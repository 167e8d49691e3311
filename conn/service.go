package conn

import "strconv"

// rdma_cm port spaces (include/rdma/rdma_cm.h enum rdma_ucm_port_space).
const (
	PortSpaceIPoIB = 0x0002
	PortSpaceTCP   = 0x0106
	PortSpaceUDP   = 0x0111
	PortSpaceIB    = 0x013f
)

var portSpaceNames = map[uint16]string{
	PortSpaceIPoIB: "IPoIB", PortSpaceTCP: "TCP", PortSpaceUDP: "UDP", PortSpaceIB: "IB",
}

// well-known ULP ports over rdma_cm.
var wellKnownPorts = map[uint16]string{
	20049: "NFS/RDMA",
	2049:  "NFS",
	4420:  "NVMe-oF",
	3260:  "iSER",
	5445:  "SMB Direct",
	445:   "SMB Direct",
	987:   "Lustre",
	8008:  "SRP",
}

// NFSRDMAPort is the IANA port for NFS over RDMA (RFC 8267 §3.2).
const NFSRDMAPort = 20049

// ServiceIDFor builds the rdma_cm service ID of a port in a port space:
// (port_space << 16) + port (rdma_get_service_id).
func ServiceIDFor(portSpace, port uint16) uint64 { return uint64(portSpace)<<16 | uint64(port) }

// RDMACMPort splits an rdma_cm IP service ID into port space and port; ok
// is false when the service ID is not in the rdma_cm IP range (the upper
// 32 bits zero and a known port space).
func RDMACMPort(sid uint64) (portSpace, port uint16, ok bool) {
	if sid>>32 != 0 {
		return 0, 0, false
	}
	switch ps := uint16(sid >> 16); ps {
	case PortSpaceIPoIB, PortSpaceTCP, PortSpaceUDP, PortSpaceIB: // the keys of portSpaceNames
		return ps, uint16(sid), true
	}
	return 0, 0, false
}

// ServiceName says what a service ID means: "NFS/RDMA (rdma_cm TCP port
// 20049)", "rdma_cm UDP port 7471", or the ID in hex when it is not an
// rdma_cm IP service.
func ServiceName(sid uint64) string { return string(AppendServiceName(nil, sid)) }

// AppendServiceName appends ServiceName's text to b.
func AppendServiceName(b []byte, sid uint64) []byte {
	ps, port, ok := RDMACMPort(sid)
	if !ok {
		return appendHex(append(b, "0x"...), sid, 16)
	}
	name, known := wellKnownPorts[port]
	known = known && ps != PortSpaceIB
	if known {
		b = append(append(b, name...), " ("...)
	}
	b = append(append(b, "rdma_cm "...), portSpaceNames[ps]...)
	b = strconv.AppendUint(append(b, " port "...), uint64(port), 10)
	if known {
		b = append(b, ')')
	}
	return b
}
