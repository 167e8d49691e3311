package main

// A synthetic LINKTYPE_IPOIB capture: iWARP over an IPoIB interface (siw
// on ib0), with the neighbour traffic of an IPoIB subnet. No tool at hand
// writes this link type from a real stack (it needs an InfiniBand HCA and
// a capture tool that keeps the IPoIB pseudo-header), so every byte is
// built here: the link layer with dissect.IPoIBLink's SerializeTo, the
// rest as the iWARP captures build it.

import (
	"net"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
)

func init() {
	register("synth-ipoib-iwarp.pcap",
		"IPoIB datagram mode (LINKTYPE_IPOIB 242: 40-octet pseudo-header, 4-octet encapsulation header): the iWARP MPA revision 1 exchange of synth-iwarp-mpa-v1.pcap (RFC 8797, RPC-over-RDMA Sends both ways) between 198.51.100.2 and .1 with unicast pseudo-headers (destination QPN and GID); then an ARP request to the broadcast group (GRH pseudo-header), its ARP reply, and an IPv6 UDP datagram to ff02::1 (GRH). Synthetic because no producer is at hand: tcpdump on a Linux IPoIB interface writes Linux cooked frames (113/276), and LINKTYPE_IPOIB was registered for Oracle Solaris' IPoIB capture (no InfiniBand HCA here either)",
		ipoibWrite)
}

// The IPoIB endpoints: the server (198.51.100.1) and the client (.2), each
// a UD QPN and a port GID.
var (
	ipoibQPN = [2]uint32{0x000048, 0x000049}
	ipoibGID = [2]netip.Addr{netip.MustParseAddr("fe80::5254:0:1:1"), netip.MustParseAddr("fe80::5254:0:1:2")}
	// ipoibBroadcast is the IPv4 broadcast group of P_Key 0xffff (RFC
	// 4391 §4).
	ipoibBroadcast = netip.MustParseAddr("ff12:401b:ffff::ffff:ffff")
)

// ipoibUnicast is the link layer of a unicast frame to endpoint to (0:
// the server, 1: the client), its pseudo-header the destination address.
func ipoibUnicast(toClient bool, t layers.EthernetType) *dissect.IPoIBLink {
	i := 0
	if toClient {
		i = 1
	}
	return &dissect.IPoIBLink{DQPN: ipoibQPN[i], DGID: ipoibGID[i], Type: uint16(t)}
}

// ipoibHwAddr is the 20-octet IPoIB hardware address of endpoint i
// (flags and QPN, GID).
func ipoibHwAddr(i int) []byte {
	g := ipoibGID[i].As16()
	q := ipoibQPN[i]
	return append([]byte{0, byte(q >> 16), byte(q >> 8), byte(q)}, g[:]...)
}

func ipoibWrite(path string) error {
	c := &iwCapture{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ipoib: true}
	if err := iwScenarioV1(c); err != nil {
		return err
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	frame := func(ls ...gopacket.SerializableLayer) error {
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
			return err
		}
		c.record(append([]byte(nil), buf.Bytes()...))
		return nil
	}
	srv, cli := net.IPv4(198, 51, 100, 1).To4(), net.IPv4(198, 51, 100, 2).To4()
	// The client asks the broadcast group for the server's address; the
	// server answers it directly.
	grh := func(src int, dst netip.Addr, t layers.EthernetType) *dissect.IPoIBLink {
		return &dissect.IPoIBLink{GRH: true, IPVer: 6, FlowLabel: 0x12345, SQPN: ipoibQPN[src], SGID: ipoibGID[src], DGID: dst, Type: uint16(t)}
	}
	arp := &layers.ARP{AddrType: 32, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 20, ProtAddressSize: 4,
		Operation: layers.ARPRequest, SourceHwAddress: ipoibHwAddr(1), SourceProtAddress: cli,
		DstHwAddress: make([]byte, 20), DstProtAddress: srv}
	if err := frame(grh(1, ipoibBroadcast, layers.EthernetTypeARP), arp); err != nil {
		return err
	}
	reply := *arp
	reply.Operation = layers.ARPReply
	reply.SourceHwAddress, reply.SourceProtAddress = ipoibHwAddr(0), srv
	reply.DstHwAddress, reply.DstProtAddress = ipoibHwAddr(1), cli
	if err := frame(ipoibUnicast(true, layers.EthernetTypeARP), &reply); err != nil {
		return err
	}
	ip6 := &layers.IPv6{Version: 6, HopLimit: 1, NextHeader: layers.IPProtocolUDP,
		SrcIP: net.IP(ipoibGID[0].AsSlice()), DstIP: net.ParseIP("ff02::1")}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 9}
	if err := udp.SetNetworkLayerForChecksum(ip6); err != nil {
		return err
	}
	if err := frame(grh(0, netip.MustParseAddr("ff12:601b:ffff::1"), layers.EthernetTypeIPv6), ip6, udp, gopacket.Payload("hello")); err != nil {
		return err
	}
	return writePcap(path, dissect.LinkTypeIPoIB, c.pkts)
}
