package dissect

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ulp"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// Link types beyond Ethernet (LINKTYPE_ values, https://www.tcpdump.org/linktypes.html).
const (
	LinkTypeRaw       = 101                     // raw IPv4 or IPv6, by the version nibble
	LinkTypeLinuxSLL  = source.LinkTypeLinuxSLL // Linux cooked capture v1 ("tcpdump -i any", and ours)
	LinkTypeIPv4      = 228                     // raw IPv4
	LinkTypeIPv6      = 229                     // raw IPv6
	LinkTypeIPoIB     = 242                     // IP over InfiniBand, as Solaris' snoop and libpcap write it
	LinkTypeLinuxSLL2 = 276                     // Linux cooked capture v2 (tcpdump ≥ 4.99 "-i any")
)

// linkStart is the first layer of a frame of link type lt (data: the
// frame), false when the link type is not one whose frames the common
// headers start (Ethernet, Linux cooked, raw IP). The Dissector and
// Ahead both start there.
func linkStart(lt int, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case source.LinkTypeEthernet:
		return layers.LayerTypeEthernet, true
	case LinkTypeLinuxSLL:
		return layers.LayerTypeLinuxSLL, true
	case LinkTypeLinuxSLL2:
		return layers.LayerTypeLinuxSLL2, true
	case LinkTypeIPoIB:
		return LayerTypeIPoIBLink, true
	case LinkTypeIPv4:
		return layers.LayerTypeIPv4, true
	case LinkTypeIPv6:
		return layers.LayerTypeIPv6, true
	case LinkTypeRaw:
		// The version nibble says which; anything else is IPv4's error
		// ("invalid version"), as tshark reports it.
		if len(data) > 0 && data[0]>>4 == 6 {
			return layers.LayerTypeIPv6, true
		}
		return layers.LayerTypeIPv4, true
	}
	return 0, false
}

// The Linux cooked-capture header (tshark: sll), v1 and v2 alike.
var (
	ProtoSLL    = field.NewProto("sll", "Linux cooked-mode capture")
	fSLLPktType = ProtoSLL.Uint("sll.pkttype", 16, "Packet type").WithNames(sllPacketTypes)
	fSLLHAType  = ProtoSLL.Uint("sll.hatype", 16, "Link-layer address type").WithNames(arphrdNames)
	fSLLHALen   = ProtoSLL.Uint("sll.halen", 16, "Link-layer address length")
	fSLLSrcEth  = ProtoSLL.MAC("sll.src.eth", "Source")
	fSLLSrcAddr = ProtoSLL.Bytes("sll.src.other", "Source")
	fSLLEType   = ProtoSLL.Hex("sll.etype", 16, "Protocol").WithNames(etherTypeNames)
	fSLLLType   = ProtoSLL.Hex("sll.ltype", 16, "Protocol").WithNames(sllProtocolNames)
	fSLLIfIndex = ProtoSLL.Uint("sll.ifindex", 32, "Interface index")
)

var sllPacketTypes = map[uint64]string{
	0: "Unicast to us", 1: "Broadcast", 2: "Multicast", 3: "Unicast to another host", 4: "Sent by us",
}

// arphrdNames are the ARPHRD_ types of interfaces RDMA traffic is seen on.
var arphrdNames = map[uint64]string{1: "Ethernet", 32: "InfiniBand", 772: "Loopback", 65534: "None"}

// sllProtocolNames are the protocol values below 0x0600 that are not
// EtherTypes (linux/if_ether.h ETH_P_802_3 …).
var sllProtocolNames = map[uint64]string{1: "Novell 802.3", 3: "All", 4: "802.2 LLC", 0xc: "CAN"}

// SLL is the Linux cooked-capture header of LINKTYPE_LINUX_SLL (16
// octets: packet type, ARPHRD_ type, address length, 8 octets of address,
// protocol) or LINKTYPE_LINUX_SLL2 (20 octets: protocol, reserved,
// interface index, ARPHRD_ type, packet type, address length, address),
// which libpcap writes for "-i any": the kernel's view of a packet with
// its link-layer header removed. The protocol is an EtherType (the IP
// header follows, or a VLAN tag libpcap put back) unless it is below
// 0x0600.
type SLL struct {
	layers.BaseLayer
	V2         bool
	PacketType uint16
	HAType     uint16
	// AddrLen is the address length the header gives (an IPoIB address is
	// 20 octets); Addr its first octets, at most the 8 the header holds.
	AddrLen  uint16
	Addr     []byte
	Protocol uint16
	IfIndex  uint32
}

func (s *SLL) Proto() *field.Proto { return ProtoSLL }

// LayerType is gopacket's LinuxSLL or LinuxSLL2.
func (s *SLL) LayerType() gopacket.LayerType {
	if s.V2 {
		return layers.LayerTypeLinuxSLL2
	}
	return layers.LayerTypeLinuxSLL
}

func (s *SLL) CanDecode() gopacket.LayerClass {
	return gopacket.NewLayerClass([]gopacket.LayerType{layers.LayerTypeLinuxSLL, layers.LayerTypeLinuxSLL2})
}

// errSLLShort and errSLL2Short are made once: the walk allocates nothing.
var (
	errSLLShort  = fmt.Errorf("Linux cooked header: need %d octets", 16)
	errSLL2Short = fmt.Errorf("Linux cooked v2 header: need %d octets", 20)
)

// decodeV1 decodes a LINKTYPE_LINUX_SLL header.
func (s *SLL) decodeV1(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 16 {
		df.SetTruncated()
		return errSLLShort
	}
	s.V2 = false
	s.PacketType = binary.BigEndian.Uint16(data[0:2])
	s.HAType = binary.BigEndian.Uint16(data[2:4])
	s.AddrLen = binary.BigEndian.Uint16(data[4:6])
	s.Addr = data[6:6:14][:min(int(s.AddrLen), 8)]
	s.Protocol = binary.BigEndian.Uint16(data[14:16])
	s.IfIndex = 0
	s.Contents, s.Payload = data[:16], data[16:]
	return nil
}

// decodeV2 decodes a LINKTYPE_LINUX_SLL2 header.
func (s *SLL) decodeV2(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 20 {
		df.SetTruncated()
		return errSLL2Short
	}
	s.V2 = true
	s.Protocol = binary.BigEndian.Uint16(data[0:2])
	s.IfIndex = binary.BigEndian.Uint32(data[4:8])
	s.HAType = binary.BigEndian.Uint16(data[8:10])
	s.PacketType = uint16(data[10])
	s.AddrLen = uint16(data[11])
	s.Addr = data[12:12:20][:min(int(s.AddrLen), 8)]
	s.Contents, s.Payload = data[:20], data[20:]
	return nil
}

// DecodeFromBytes decodes the header of the kind LayerType names (set V2
// first); the walk calls decodeV1 and decodeV2 directly.
func (s *SLL) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if s.V2 {
		return s.decodeV2(data, df)
	}
	return s.decodeV1(data, df)
}

// NextLayerType is the EtherType's layer for protocols from 0x0600 on; the
// values below (802.3 frames without LLC, LLC, CAN) and the ARPHRD_ types
// whose payload is not what the protocol names (netlink, Frame Relay, GRE
// tunnels, radiotap) end the walk.
func (s *SLL) NextLayerType() gopacket.LayerType {
	switch s.HAType {
	case 770, 778, 803, 824: // ARPHRD_FRAD, ARPHRD_IPGRE, ARPHRD_IEEE80211_RADIOTAP, ARPHRD_NETLINK
		return gopacket.LayerTypePayload
	}
	if s.Protocol < 0x0600 {
		return gopacket.LayerTypePayload
	}
	return etherNext(layers.EthernetType(s.Protocol))
}

// ethernetAddr reports whether the address is a MAC address (tshark's
// sll.src.eth).
func (s *SLL) ethernetAddr() bool {
	return len(s.Addr) == 6 && (s.HAType == 1 || s.HAType == 772)
}

func (s *SLL) VisitFields(v field.Visitor) {
	if s.V2 {
		v.Uint(fSLLIfIndex, uint64(s.IfIndex))
	}
	v.Uint(fSLLPktType, uint64(s.PacketType))
	v.Uint(fSLLHAType, uint64(s.HAType))
	v.Uint(fSLLHALen, uint64(s.AddrLen))
	if s.ethernetAddr() {
		v.Uint(fSLLSrcEth, macUint(s.Addr))
	} else if len(s.Addr) > 0 {
		v.Bytes(fSLLSrcAddr, s.Addr)
	}
	if s.Protocol >= 0x0600 {
		v.Uint(fSLLEType, uint64(s.Protocol))
	} else {
		v.Uint(fSLLLType, uint64(s.Protocol))
	}
}

// AppendInfo names the protocol for frames nothing else decoded, as
// Ethernet's does.
func (s *SLL) AppendInfo(b []byte) []byte {
	b = append(b, "Protocol 0x"...)
	return appendHex(b, uint64(s.Protocol), 4)
}

// LayerTypeIPoIBLink is the link layer of LINKTYPE_IPOIB (dissect's
// adapters own 1900–1919 of gopacket's fast range).
var LayerTypeIPoIBLink = gopacket.RegisterLayerType(1900, gopacket.LayerTypeMetadata{Name: "IPoIB", Decoder: layerdec.Func[IPoIBLink]()})

// The pseudo-header of LINKTYPE_IPOIB, under tshark's ipoib (the
// encapsulation header's ipoib.type and ipoib.reserved are layers/ulp's).
var (
	fIPoIBDAddr     = ulp.ProtoIPoIB.Group("ipoib.daddr", "Destination address")
	fIPoIBDAddrQPN  = ulp.ProtoIPoIB.Hex("ipoib.daddr.qpn", 24, "Destination QPN")
	fIPoIBDGID      = ulp.ProtoIPoIB.Addr("ipoib.dgid", "Destination GID")
	fIPoIBGRH       = ulp.ProtoIPoIB.Group("ipoib.grh", "Global Route Header")
	fIPoIBGRHIPVer  = ulp.ProtoIPoIB.Uint("ipoib.grh.ipver", 4, "IP Version")
	fIPoIBGRHTClass = ulp.ProtoIPoIB.Uint("ipoib.grh.tclass", 8, "Traffic Class")
	fIPoIBGRHFlow   = ulp.ProtoIPoIB.Uint("ipoib.grh.flowlabel", 20, "Flow Label")
	fIPoIBGRHSQPN   = ulp.ProtoIPoIB.Hex("ipoib.grh.sqpn", 24, "Source QPN")
	fIPoIBGRHSGID   = ulp.ProtoIPoIB.Addr("ipoib.grh.sgid", "Source GID")
)

// IPoIBPseudoLen is the length of the pseudo-header before the
// encapsulation header in a LINKTYPE_IPOIB frame.
const IPoIBPseudoLen = 40

// IPoIBLink is a LINKTYPE_IPOIB frame's link layer: IPoIB in datagram mode
// (RFC 4391 §6) as Solaris' snoop and libpcap lay it out (tcpdump's
// print-ipoib.c, Wireshark's packet-ipoib.c): a 40-octet pseudo-header,
// then the 4-octet encapsulation header (an EtherType, two reserved
// octets), then the IP packet or ARP message. The pseudo-header is the
// packet's GRH (version, traffic class, flow label, source QPN where the
// GRH has its payload length and hops, source and destination GIDs) or,
// when its first two octets are zero (unicast: no GRH received), 20 zero
// octets and the destination's 20-octet IPoIB address (flags, QPN, GID).
type IPoIBLink struct {
	layers.BaseLayer
	// GRH: the pseudo-header is a GRH (IPVer … SGID and DGID are set);
	// else it is the destination address (DQPN and DGID are).
	GRH       bool
	IPVer     uint8
	TClass    uint8
	FlowLabel uint32
	SQPN      uint32
	SGID      netip.Addr
	DQPN      uint32
	DGID      netip.Addr
	Type      uint16
	Reserved  uint16
}

func (p *IPoIBLink) Proto() *field.Proto { return ulp.ProtoIPoIB }

func (p *IPoIBLink) LayerType() gopacket.LayerType  { return LayerTypeIPoIBLink }
func (p *IPoIBLink) CanDecode() gopacket.LayerClass { return LayerTypeIPoIBLink }

// errIPoIBShort is made once: the walk allocates nothing.
var errIPoIBShort = fmt.Errorf("IPoIB header: need %d octets", IPoIBPseudoLen+ulp.IPoIBHeaderLen)

func (p *IPoIBLink) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	const n = IPoIBPseudoLen + ulp.IPoIBHeaderLen
	if len(data) < n {
		df.SetTruncated()
		return errIPoIBShort
	}
	p.GRH = binary.BigEndian.Uint16(data[0:2]) != 0
	p.DGID = netip.AddrFrom16([16]byte(data[24:40]))
	if p.GRH {
		w := binary.BigEndian.Uint32(data[0:4])
		p.IPVer, p.TClass, p.FlowLabel = uint8(w>>28), uint8(w>>20), w&0xfffff
		p.SQPN = binary.BigEndian.Uint32(data[4:8]) & 0xffffff
		p.SGID = netip.AddrFrom16([16]byte(data[8:24]))
		p.DQPN = 0
	} else {
		p.IPVer, p.TClass, p.FlowLabel, p.SQPN, p.SGID = 0, 0, 0, 0, netip.Addr{}
		p.DQPN = binary.BigEndian.Uint32(data[20:24]) & 0xffffff
	}
	p.Type = binary.BigEndian.Uint16(data[IPoIBPseudoLen:])
	p.Reserved = binary.BigEndian.Uint16(data[IPoIBPseudoLen+2:])
	p.Contents, p.Payload = data[:n], data[n:]
	return nil
}

// NextLayerType is IPv4, IPv6 or ARP by the encapsulation header's type,
// the three RFC 4391 carries (and the three tshark decodes there).
func (p *IPoIBLink) NextLayerType() gopacket.LayerType {
	switch t := layers.EthernetType(p.Type); t {
	case layers.EthernetTypeIPv4, layers.EthernetTypeIPv6, layers.EthernetTypeARP:
		return etherNext(t)
	}
	return gopacket.LayerTypePayload
}

func (p *IPoIBLink) VisitFields(v field.Visitor) {
	if p.GRH {
		v.Begin(fIPoIBGRH)
		v.Uint(fIPoIBGRHIPVer, uint64(p.IPVer))
		v.Uint(fIPoIBGRHTClass, uint64(p.TClass))
		v.Uint(fIPoIBGRHFlow, uint64(p.FlowLabel))
		v.Uint(fIPoIBGRHSQPN, uint64(p.SQPN))
		v.Addr(fIPoIBGRHSGID, p.SGID)
		v.Addr(fIPoIBDGID, p.DGID)
		v.End()
	} else {
		v.Begin(fIPoIBDAddr)
		v.Uint(fIPoIBDAddrQPN, uint64(p.DQPN))
		v.Addr(fIPoIBDGID, p.DGID)
		v.End()
	}
	ulp.VisitHeader(v, p.Type, p.Reserved)
}

// AppendInfo is tshark's Info for a frame nothing after the link layer
// decoded.
func (p *IPoIBLink) AppendInfo(b []byte) []byte {
	return append(b, "IP over InfiniBand"...)
}

// SerializeTo prepends the pseudo-header (a GRH when p.GRH, else the
// destination address) and the encapsulation header.
func (p *IPoIBLink) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	w, err := b.PrependBytes(IPoIBPseudoLen + ulp.IPoIBHeaderLen)
	if err != nil {
		return err
	}
	clear(w[:IPoIBPseudoLen])
	dgid := p.DGID.As16()
	copy(w[24:40], dgid[:])
	if p.GRH {
		binary.BigEndian.PutUint32(w[0:4], uint32(p.IPVer&15)<<28|uint32(p.TClass)<<20|p.FlowLabel&0xfffff)
		binary.BigEndian.PutUint32(w[4:8], p.SQPN&0xffffff)
		sgid := p.SGID.As16()
		copy(w[8:24], sgid[:])
	} else {
		binary.BigEndian.PutUint32(w[20:24], p.DQPN&0xffffff)
	}
	binary.BigEndian.PutUint16(w[IPoIBPseudoLen:], p.Type)
	binary.BigEndian.PutUint16(w[IPoIBPseudoLen+2:], p.Reserved)
	return nil
}
