// Package ibcmtest builds InfiniBand CM and RC packets in every encoding
// layers/ibcm decodes (RoCEv2 over IPv4 and IPv6, with an 802.1Q tag,
// RoCEv1, native IB with and without GRH, ERF), with the layers' own
// SerializeTo. The synthetic capture generator (internal/gen) and the
// package's tests use it; nothing here is real traffic.
package ibcmtest

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// Encoding is how a packet is framed on the capture.
type Encoding int

const (
	RoCEv2IPv4 Encoding = iota
	RoCEv2IPv6
	RoCEv2VLAN // RoCEv2 over IPv4 behind an 802.1Q tag (VLAN 100, PCP 3)
	RoCEv1
	IBLocal  // LINKTYPE_INFINIBAND, LRH then BTH (LNH 2)
	IBGlobal // LINKTYPE_INFINIBAND, LRH, GRH, BTH (LNH 3)
	ERF      // LINKTYPE_ERF type 21, LRH then BTH
)

// Encodings lists every encoding.
var Encodings = []Encoding{RoCEv2IPv4, RoCEv2IPv6, RoCEv2VLAN, RoCEv1, IBLocal, IBGlobal, ERF}

var encodingNames = map[Encoding]string{RoCEv2IPv4: "rocev2-ipv4", RoCEv2IPv6: "rocev2-ipv6", RoCEv2VLAN: "rocev2-vlan",
	RoCEv1: "rocev1", IBLocal: "ib247", IBGlobal: "ib247-grh", ERF: "erf"}

func (e Encoding) String() string { return encodingNames[e] }

var encodingDescriptions = map[Encoding]string{
	RoCEv2IPv4: "RoCEv2 (Ethernet/IPv4/UDP 4791)",
	RoCEv2IPv6: "RoCEv2 (Ethernet/IPv6/UDP 4791)",
	RoCEv2VLAN: "RoCEv2 (Ethernet/802.1Q VLAN 100/IPv4/UDP 4791)",
	RoCEv1:     "RoCEv1 (ethertype 0x8915, GRH)",
	IBLocal:    "native InfiniBand (LINKTYPE_INFINIBAND 247, LRH/BTH)",
	IBGlobal:   "native InfiniBand (LINKTYPE_INFINIBAND 247, LRH/GRH/BTH)",
	ERF:        "ibdump-style ERF (LINKTYPE_ERF 197, record type 21, LRH/BTH)",
}

// Description says what the encoding's frames are made of, for the
// descriptions of the synthetic captures: "RoCEv2 (Ethernet/IPv4/UDP
// 4791)".
func (e Encoding) Description() string { return encodingDescriptions[e] }

// LinkType is the capture link type of the encoding.
func (e Encoding) LinkType() layers.LinkType {
	switch e {
	case IBLocal, IBGlobal:
		return ibcm.LinkTypeInfiniBand
	case ERF:
		return ibcm.LinkTypeERF
	}
	return layers.LinkTypeEthernet
}

// Endpoint is one side of the synthetic exchanges.
type Endpoint struct {
	MAC   net.HardwareAddr
	IPv4  netip.Addr
	IPv6  netip.Addr
	LID   uint16
	GID   netip.Addr // native IB GID
	Port  uint16     // RoCEv2 UDP source port
	QPN   uint32
	GUID  uint64
	CommI uint32 // communication ID
}

// Client and Server are the two synthetic peers (documentation addresses).
var (
	Client = Endpoint{MAC: net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02}, IPv4: netip.MustParseAddr("192.0.2.2"),
		IPv6: netip.MustParseAddr("2001:db8::2"), LID: 2, GID: netip.MustParseAddr("fe80::2"), Port: 0xc002,
		QPN: 0x12, GUID: 0x0002c9030000aa02, CommI: 0x1a2b3c4d}
	Server = Endpoint{MAC: net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}, IPv4: netip.MustParseAddr("192.0.2.1"),
		IPv6: netip.MustParseAddr("2001:db8::1"), LID: 1, GID: netip.MustParseAddr("fe80::1"), Port: 0xc001,
		QPN: 0x13, GUID: 0x0002c9030000aa01, CommI: 0x5e6f7081}
)

// Frame builds one packet: the IB layers (BTH first) framed in enc from src
// to dst, with correct ICRC (and VCRC). psn and the ICRC come from the BTH.
func Frame(enc Encoding, src, dst *Endpoint, ib ...gopacket.SerializableLayer) ([]byte, error) {
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	buf := gopacket.NewSerializeBuffer()
	eth := &layers.Ethernet{SrcMAC: src.MAC, DstMAC: dst.MAC}
	switch enc {
	case RoCEv2IPv4, RoCEv2IPv6, RoCEv2VLAN:
		var ls []gopacket.SerializableLayer
		udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port), DstPort: ibcm.RoCEv2Port}
		var ip gopacket.NetworkLayer
		if enc == RoCEv2IPv6 {
			eth.EthernetType = layers.EthernetTypeIPv6
			ip6 := &layers.IPv6{Version: 6, NextHeader: layers.IPProtocolUDP, HopLimit: 64,
				SrcIP: src.IPv6.AsSlice(), DstIP: dst.IPv6.AsSlice(), FlowLabel: 0x1d0d}
			ls, ip = []gopacket.SerializableLayer{eth, ip6}, ip6
		} else {
			ip4 := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment,
				Protocol: layers.IPProtocolUDP, SrcIP: src.IPv4.AsSlice(), DstIP: dst.IPv4.AsSlice(), Id: 0x4d2}
			if enc == RoCEv2VLAN {
				eth.EthernetType = layers.EthernetTypeDot1Q
				ls = []gopacket.SerializableLayer{eth, &layers.Dot1Q{Priority: 3, VLANIdentifier: 100, Type: layers.EthernetTypeIPv4}, ip4}
			} else {
				eth.EthernetType = layers.EthernetTypeIPv4
				ls = []gopacket.SerializableLayer{eth, ip4}
			}
			ip = ip4
		}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return nil, err
		}
		ls = append(ls, udp)
		ls = append(ls, ib...)
		if err := ibcm.SerializeRoCEv2(buf, opts, ls...); err != nil {
			return nil, err
		}
	case RoCEv1:
		eth.EthernetType = ibcm.EtherTypeRoCEv1
		ls := append([]gopacket.SerializableLayer{eth, grh(src, dst, true)}, ib...)
		if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
			return nil, err
		}
	case IBLocal, IBGlobal, ERF:
		lrh := &ibcm.LRH{SL: 0, LNH: 2, DLID: dst.LID, SLID: src.LID}
		ls := []gopacket.SerializableLayer{lrh}
		if enc == IBGlobal {
			lrh.LNH = 3
			ls = append(ls, grh(src, dst, false))
		}
		if enc == ERF {
			ls = append([]gopacket.SerializableLayer{&ibcm.ERF{Type: ibcm.ERFTypeInfiniBand, Timestamp: 0x5f5e100000000000}}, ls...)
		}
		ls = append(ls, ib...)
		if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("ibcmtest: unknown encoding %d", enc)
	}
	return append([]byte(nil), buf.Bytes()...), nil
}

func grh(src, dst *Endpoint, roce bool) *ibcm.GRH {
	g := &ibcm.GRH{IPVer: 6, NextHdr: ibcm.GRHNextHeaderIBA, HopLimit: 64, FlowLabel: 0x1d0d}
	if roce {
		g.SGID, g.DGID = netip.AddrFrom4(src.IPv4.As4()).As16(), netip.AddrFrom4(dst.IPv4.As4()).As16()
	} else {
		g.SGID, g.DGID = src.GID.As16(), dst.GID.As16()
	}
	return g
}

// CorruptICRC flips the ICRC of a frame built by Frame in enc, keeping
// every other checksum (UDP, VCRC) right, so only the ICRC verdict is bad.
func CorruptICRC(enc Encoding, frame []byte) []byte {
	out := append([]byte(nil), frame...)
	switch enc {
	case IBLocal, IBGlobal, ERF:
		off := 0
		if enc == ERF {
			off = 16
		}
		end := off + int(binary.BigEndian.Uint16(out[off+4:])&0x07ff)*4
		out[end-1] ^= 0xff
		binary.BigEndian.PutUint16(out[end:], ibcm.ComputeVCRC(out[off:end]))
	default:
		out[len(out)-1] ^= 0xff
		fixUDPChecksum(enc, out)
	}
	return out
}

// CorruptVCRC flips the VCRC of a native IB frame.
func CorruptVCRC(frame []byte) []byte {
	out := append([]byte(nil), frame...)
	out[len(out)-1] ^= 0xff
	return out
}

// fixUDPChecksum recomputes the UDP checksum of a RoCEv2 frame (after its
// ICRC was changed), so only the ICRC is wrong.
func fixUDPChecksum(enc Encoding, frame []byte) {
	if enc == RoCEv1 {
		return
	}
	p := gopacket.NewPacket(frame, layers.LinkTypeEthernet, gopacket.NoCopy)
	udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if udp == nil {
		return
	}
	var nl gopacket.NetworkLayer
	if ip4, ok := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok {
		nl = ip4
	} else if ip6, ok := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6); ok {
		nl = ip6
	}
	if nl == nil || udp.SetNetworkLayerForChecksum(nl) != nil {
		return
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true}, udp, gopacket.Payload(udp.Payload)); err != nil {
		return
	}
	sum := buf.Bytes()[6:8]
	off := len(frame) - len(udp.Payload) - 8
	copy(frame[off+6:off+8], sum)
}
