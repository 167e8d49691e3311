package ibcm

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// ServiceID is an IB CM service ID. rdma_cm builds it as
// (port space << 16) + port (drivers/infiniband/core/cma.c,
// rdma_get_service_id).
type ServiceID uint64

// rdma_cm port spaces (include/rdma/rdma_cm.h enum rdma_ucm_port_space).
const (
	PortSpaceIPoIB = 0x0002
	PortSpaceTCP   = 0x0106
	PortSpaceUDP   = 0x0111
	PortSpaceIB    = 0x013f
)

// PortNFS is NFS's IANA port; NFS/RDMA servers may listen there as well as
// on pvtdata.PortNFSRDMA.
const PortNFS = 2049

// servicePortNames names the ULP that listens on a well-known rdma_cm port.
// They are IP port numbers, so they name ports in the IP port spaces (TCP,
// UDP, IPoIB), not in RDMA_PS_IB, whose ports AF_IB users number on their
// own.
var servicePortNames = map[uint16]string{
	pvtdata.PortNFSRDMA:    "NFS/RDMA",       // IANA nfsrdma (RFC 8267)
	PortNFS:                "NFS",            // IANA nfs
	pvtdata.PortNVMeRDMA:   "NVMe-oF",        // IANA nvme; NVME_RDMA_IP_PORT
	pvtdata.PortISER:       "iSER",           // IANA iscsi-target; iSER (RFC 7145) keeps iSCSI's ports
	860:                    "iSER",           // IANA iscsi
	pvtdata.PortSMBDirect2: "SMB Direct",     // on InfiniBand and RoCE
	pvtdata.PortSMBDirect:  "SMB Direct",     // IANA smbdirect, on iWARP
	987:                    "Lustre o2iblnd", // LNet o2iblnd's default service port
	18634:                  "RDS",            // IANA rds-ib; net/rds RDS_PORT, the IPv4 listener
	16385:                  "RDS",            // net/rds RDS_CM_PORT, the IPv6 listener
}

// IPoIBCMServiceID is the service ID prefix of IPoIB connected mode: the
// service ID is this value ORed with the listening QPN (RFC 4755; Linux
// ipoib_cm.c IPOIB_CM_IETF_ID).
const IPoIBCMServiceID = 0x1000000000000000

// IsIPoIBCM reports an IPoIB connected-mode service ID.
func (s ServiceID) IsIPoIBCM() bool { return uint64(s)&^0xffffff == IPoIBCMServiceID }

// ServiceIDFor builds the rdma_cm service ID of a port in a port space:
// (port_space << 16) + port (rdma_get_service_id).
func ServiceIDFor(portSpace, port uint16) ServiceID {
	return ServiceID(uint64(portSpace)<<16 | uint64(port))
}

// RDMACMPort splits an rdma_cm service ID into port space and port; ok is
// false when sid is not in rdma_cm's range (the upper 32 bits zero and a
// known port space).
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

// ULPPort returns the port a well-known ULP would listen on: the rdma_cm
// port of sid in an IP port space (ok false for RDMA_PS_IB and for service
// IDs outside rdma_cm). It is the port pvtdata's Hint takes.
func ULPPort(sid uint64) (port uint16, ok bool) {
	ps, port, ok := RDMACMPort(sid)
	return port, ok && ps != PortSpaceIB
}

// IsRDMACM reports a service ID in rdma_cm's range: the upper 32 bits zero
// and a known port space.
func (s ServiceID) IsRDMACM() bool {
	_, _, ok := RDMACMPort(uint64(s))
	return ok
}

// PortSpace returns the rdma_cm port space (bits 31:16).
func (s ServiceID) PortSpace() uint16 { return uint16(s >> 16) }

// Port returns the rdma_cm port (bits 15:0).
func (s ServiceID) Port() uint16 { return uint16(s) }

// ULP names the upper layer protocol that listens on the service's port
// ("NFS/RDMA") or IPoIB connected mode's service ("IPoIB-CM"), or "" when
// unknown or not a port of an IP port space.
func (s ServiceID) ULP() string {
	if s.IsIPoIBCM() {
		return "IPoIB-CM"
	}
	if port, ok := ULPPort(uint64(s)); ok {
		return servicePortNames[port]
	}
	return ""
}

// String returns "NFS/RDMA(20049)", "TCP port 1234" or "0x…", the form of
// the summary lines.
func (s ServiceID) String() string { return string(s.AppendTo(nil)) }

// AppendTo appends what String returns to b.
func (s ServiceID) AppendTo(b []byte) []byte {
	if s.IsIPoIBCM() {
		b = appendHexDigits(append(b, "IPoIB-CM(qpn=0x"...), uint64(s)&0xffffff, 6)
		return append(b, ')')
	}
	if !s.IsRDMACM() {
		return appendHexDigits(append(b, "0x"...), uint64(s), 16)
	}
	if n := s.ULP(); n != "" {
		b = append(b, n...)
		b = strconv.AppendUint(append(b, '('), uint64(s.Port()), 10)
		return append(b, ')')
	}
	b = append(b, portSpaceNames[uint64(s.PortSpace())]...)
	return strconv.AppendUint(append(b, " port "...), uint64(s.Port()), 10)
}

// Describe says what a service ID means, the form of the connection views:
// "NFS/RDMA (rdma_cm TCP port 20049)", "rdma_cm UDP port 7471", or the ID
// in hex when it is not an rdma_cm service.
func Describe(sid uint64) string { return string(AppendDescription(nil, sid)) }

// AppendDescription appends what Describe returns to b.
func AppendDescription(b []byte, sid uint64) []byte {
	s := ServiceID(sid)
	if s.IsIPoIBCM() {
		b = appendHexDigits(append(b, "IPoIB-CM (QPN 0x"...), sid&0xffffff, 6)
		return append(b, ')')
	}
	if !s.IsRDMACM() {
		return appendHexDigits(append(b, "0x"...), sid, 16)
	}
	name := s.ULP()
	if name != "" {
		b = append(append(b, name...), " ("...)
	}
	b = append(append(b, "rdma_cm "...), portSpaceNames[uint64(s.PortSpace())]...)
	b = strconv.AppendUint(append(b, " port "...), uint64(s.Port()), 10)
	if name != "" {
		b = append(b, ')')
	}
	return b
}

// serviceIDFields are the fields of a decoded service ID, under one message.
type serviceIDFields struct {
	id, space, port, ulp *field.Field
}

func newServiceIDFields(prefix string) serviceIDFields {
	return serviceIDFields{
		id:    ProtoCM.Hex(prefix+".serviceid", 64, "Service ID"),
		space: ProtoCM.Hex(prefix+".serviceid.portspace", 16, "rdma_cm Port Space").WithNames(portSpaceNames),
		port:  ProtoCM.Uint(prefix+".serviceid.dport", 16, "rdma_cm Port (destination)"),
		ulp:   ProtoCM.String(prefix+".serviceid.ulp", "Service (by port)"),
	}
}

func (f *serviceIDFields) visit(v field.Visitor, s ServiceID) {
	v.Uint(f.id, uint64(s))
	if s.IsRDMACM() {
		v.Uint(f.space, uint64(s.PortSpace()))
		v.Uint(f.port, uint64(s.Port()))
		if n := s.ULP(); n != "" {
			v.String(f.ulp, n)
		}
	}
}

// IPCMHeaderLen is the length of the rdma_cm IP CM header.
const IPCMHeaderLen = 36

// IPCMHeader is the header rdma_cm puts at the start of REQ and SIDR_REQ
// private data for IP-addressed connections (drivers/infiniband/core/cma.c
// struct cma_hdr; rdma-core librdmacm struct ib_connect_hdr): 36 octets.
type IPCMHeader struct {
	// Version is cma_version (0): major in the upper nibble, minor in the
	// lower, as tshark splits it.
	Version uint8
	// IPVersion is 4 or 6 (upper nibble of octet 1); Reserved the lower.
	IPVersion uint8
	Reserved  uint8
	// SrcPort is the initiator's source port.
	SrcPort uint16
	// Src and Dst are the initiator's and the target's IP addresses.
	Src, Dst netip.Addr
}

// ParseIPCMHeader reads the 36-octet header at the start of b. ok is false
// when b is too short or the header is not one rdma_cm writes (version not
// 0, IP version not 4 or 6).
func ParseIPCMHeader(b []byte) (h IPCMHeader, ok bool) {
	if len(b) < IPCMHeaderLen {
		return h, false
	}
	h.Version = b[0]
	h.IPVersion, h.Reserved = b[1]>>4, b[1]&0x0f
	h.SrcPort = binary.BigEndian.Uint16(b[2:4])
	switch h.IPVersion {
	case 4:
		h.Src = netip.AddrFrom4([4]byte(b[16:20]))
		h.Dst = netip.AddrFrom4([4]byte(b[32:36]))
	case 6:
		h.Src = netip.AddrFrom16([16]byte(b[4:20]))
		h.Dst = netip.AddrFrom16([16]byte(b[20:36]))
	default:
		return h, false
	}
	return h, h.Version == 0
}

// AppendTo appends the 36 wire octets of h to b (IPv4 addresses in the last
// four octets of each 16-octet field, after 12 zero octets, as cma.c does).
func (h IPCMHeader) AppendTo(b []byte) []byte {
	var w [IPCMHeaderLen]byte
	w[0] = h.Version
	w[1] = h.IPVersion<<4 | h.Reserved&0x0f
	binary.BigEndian.PutUint16(w[2:], h.SrcPort)
	if h.IPVersion == 4 {
		s, d := h.Src.As4(), h.Dst.As4()
		copy(w[16:20], s[:])
		copy(w[32:36], d[:])
	} else {
		s, d := h.Src.As16(), h.Dst.As16()
		copy(w[4:20], s[:])
		copy(w[20:36], d[:])
	}
	return append(b, w[:]...)
}

// ipcmFields are the IP CM header fields under one message (tshark:
// infiniband.cm.req.ip_cm.*).
type ipcmFields struct {
	group, majv, minv, ipv, reserved, sport, sip4, dip4, sip6, dip6, private *field.Field
}

func newIPCMFields(prefix string) ipcmFields {
	p := prefix + ".ip_cm"
	return ipcmFields{
		group:    ProtoCM.Group(p, "rdma_cm IP CM header"),
		majv:     ProtoCM.Uint(p+".majv", 4, "IP CM major version"),
		minv:     ProtoCM.Uint(p+".minv", 4, "IP CM minor version"),
		ipv:      ProtoCM.Uint(p+".ipv", 4, "IP version"),
		reserved: ProtoCM.Hex(p+".reserved", 4, "Reserved"),
		sport:    ProtoCM.Uint(p+".sport", 16, "Source port"),
		sip4:     ProtoCM.Addr(p+".sip4", "Source IPv4 address"),
		dip4:     ProtoCM.Addr(p+".dip4", "Destination IPv4 address"),
		sip6:     ProtoCM.Addr(p+".sip6", "Source IPv6 address"),
		dip6:     ProtoCM.Addr(p+".dip6", "Destination IPv6 address"),
		private:  ProtoCM.Bytes(p+".private", "ULP private data (after the IP CM header)"),
	}
}

func (f *ipcmFields) visit(v field.Visitor, h *IPCMHeader, ulp []byte) {
	v.Begin(f.group)
	v.Uint(f.majv, uint64(h.Version>>4))
	v.Uint(f.minv, uint64(h.Version&0x0f))
	v.Uint(f.ipv, uint64(h.IPVersion))
	v.Uint(f.reserved, uint64(h.Reserved))
	v.Uint(f.sport, uint64(h.SrcPort))
	if h.IPVersion == 4 {
		v.Addr(f.sip4, h.Src)
		v.Addr(f.dip4, h.Dst)
	} else {
		v.Addr(f.sip6, h.Src)
		v.Addr(f.dip6, h.Dst)
	}
	v.Bytes(f.private, ulp)
	v.End()
}
