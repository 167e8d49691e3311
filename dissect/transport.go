package dissect

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// Adapters that make gopacket's own layers field.Layers. Each embeds the
// gopacket type, so it is also a gopacket.DecodingLayer and consumers read
// the usual fields (ip.SrcIP, tcp.Seq …).

var (
	ProtoEthernet = field.NewProto("ethernet", "Ethernet II")
	fEthDst       = ProtoEthernet.MAC("ethernet.dst", "Destination")
	fEthSrc       = ProtoEthernet.MAC("ethernet.src", "Source")
	fEthType      = ProtoEthernet.Hex("ethernet.type", 16, "Type").WithNames(etherTypeNames)
	fEthLen       = ProtoEthernet.Uint("ethernet.len", 16, "Length (802.3)")

	ProtoVLAN = field.NewProto("vlan", "802.1Q Virtual LAN")
	fVLANPrio = ProtoVLAN.Uint("vlan.priority", 3, "Priority")
	fVLANDEI  = ProtoVLAN.Bool("vlan.dei", "Drop Eligible Indicator")
	fVLANID   = ProtoVLAN.Uint("vlan.id", 12, "ID")
	fVLANType = ProtoVLAN.Hex("vlan.etype", 16, "Type").WithNames(etherTypeNames)

	ProtoIPv4      = field.NewProto("ipv4", "Internet Protocol Version 4")
	fIPv4Version   = ProtoIPv4.Uint("ipv4.version", 4, "Version")
	fIPv4HdrLen    = ProtoIPv4.Uint("ipv4.hdr_len", 4, "Header Length").WithUnit("bytes")
	fIPv4DSCP      = ProtoIPv4.Uint("ipv4.dsfield.dscp", 6, "Differentiated Services Codepoint")
	fIPv4ECN       = ProtoIPv4.Uint("ipv4.dsfield.ecn", 2, "Explicit Congestion Notification")
	fIPv4Len       = ProtoIPv4.Uint("ipv4.len", 16, "Total Length")
	fIPv4ID        = ProtoIPv4.Hex("ipv4.id", 16, "Identification")
	fIPv4DF        = ProtoIPv4.Bool("ipv4.flags.df", "Don't fragment")
	fIPv4MF        = ProtoIPv4.Bool("ipv4.flags.mf", "More fragments")
	fIPv4FragOff   = ProtoIPv4.Uint("ipv4.frag_offset", 13, "Fragment Offset")
	fIPv4TTL       = ProtoIPv4.Uint("ipv4.ttl", 8, "Time to Live")
	fIPv4Proto     = ProtoIPv4.Uint("ipv4.proto", 8, "Protocol").WithNames(ipProtoNames)
	fIPv4Checksum  = ProtoIPv4.Hex("ipv4.checksum", 16, "Header Checksum")
	fIPv4Src       = ProtoIPv4.Addr("ipv4.src", "Source Address")
	fIPv4Dst       = ProtoIPv4.Addr("ipv4.dst", "Destination Address")
	fIPv4OptionLen = ProtoIPv4.Uint("ipv4.options_len", 8, "Options Length").WithUnit("bytes")
	fIPv4SrcHost   = ProtoIPv4.String("ipv4.src_host", "Source Host")
	fIPv4DstHost   = ProtoIPv4.String("ipv4.dst_host", "Destination Host")

	ProtoIPv6    = field.NewProto("ipv6", "Internet Protocol Version 6")
	fIPv6Version = ProtoIPv6.Uint("ipv6.version", 4, "Version")
	fIPv6TClass  = ProtoIPv6.Hex("ipv6.tclass", 8, "Traffic Class")
	fIPv6Flow    = ProtoIPv6.Hex("ipv6.flow", 20, "Flow Label")
	fIPv6Plen    = ProtoIPv6.Uint("ipv6.plen", 16, "Payload Length")
	fIPv6Nxt     = ProtoIPv6.Uint("ipv6.nxt", 8, "Next Header").WithNames(ipProtoNames)
	fIPv6Hlim    = ProtoIPv6.Uint("ipv6.hlim", 8, "Hop Limit")
	fIPv6Src     = ProtoIPv6.Addr("ipv6.src", "Source Address")
	fIPv6Dst     = ProtoIPv6.Addr("ipv6.dst", "Destination Address")
	fIPv6SrcHost = ProtoIPv6.String("ipv6.src_host", "Source Host")
	fIPv6DstHost = ProtoIPv6.String("ipv6.dst_host", "Destination Host")

	ProtoUDP     = field.NewProto("udp", "User Datagram Protocol")
	fUDPSrcPort  = ProtoUDP.Uint("udp.srcport", 16, "Source Port")
	fUDPDstPort  = ProtoUDP.Uint("udp.dstport", 16, "Destination Port")
	fUDPLength   = ProtoUDP.Uint("udp.length", 16, "Length")
	fUDPChecksum = ProtoUDP.Hex("udp.checksum", 16, "Checksum")

	ProtoTCP     = field.NewProto("tcp", "Transmission Control Protocol")
	fTCPSrcPort  = ProtoTCP.Uint("tcp.srcport", 16, "Source Port")
	fTCPDstPort  = ProtoTCP.Uint("tcp.dstport", 16, "Destination Port")
	fTCPSeq      = ProtoTCP.Uint("tcp.seq_raw", 32, "Sequence Number (raw)")
	fTCPAck      = ProtoTCP.Uint("tcp.ack_raw", 32, "Acknowledgment Number (raw)")
	fTCPHdrLen   = ProtoTCP.Uint("tcp.hdr_len", 8, "Header Length").WithUnit("bytes")
	fTCPFlags    = ProtoTCP.Hex("tcp.flags", 16, "Flags")
	fTCPFlagCWR  = ProtoTCP.Bool("tcp.flags.cwr", "Congestion Window Reduced")
	fTCPFlagECE  = ProtoTCP.Bool("tcp.flags.ece", "ECN-Echo")
	fTCPFlagURG  = ProtoTCP.Bool("tcp.flags.urg", "Urgent")
	fTCPFlagACK  = ProtoTCP.Bool("tcp.flags.ack", "Acknowledgment")
	fTCPFlagPSH  = ProtoTCP.Bool("tcp.flags.push", "Push")
	fTCPFlagRST  = ProtoTCP.Bool("tcp.flags.reset", "Reset")
	fTCPFlagSYN  = ProtoTCP.Bool("tcp.flags.syn", "Syn")
	fTCPFlagFIN  = ProtoTCP.Bool("tcp.flags.fin", "Fin")
	fTCPWindow   = ProtoTCP.Uint("tcp.window_size_value", 16, "Window")
	fTCPChecksum = ProtoTCP.Hex("tcp.checksum", 16, "Checksum")
	fTCPUrgent   = ProtoTCP.Uint("tcp.urgent_pointer", 16, "Urgent Pointer")
	fTCPLen      = ProtoTCP.Uint("tcp.len", 32, "Segment Length").WithUnit("bytes")
)

var etherTypeNames = map[uint64]string{
	0x0800: "IPv4", 0x0806: "ARP", 0x8100: "802.1Q", 0x86dd: "IPv6", 0x88a8: "802.1ad", 0x8915: "RoCE",
}

var ipProtoNames = map[uint64]string{
	0: "HOPOPT", 1: "ICMP", 6: "TCP", 17: "UDP", 43: "IPv6-Route", 44: "IPv6-Frag", 58: "ICMPv6", 59: "IPv6-NoNxt", 60: "IPv6-Opts",
}

// Addresser is implemented by layers that carry a frame's addresses: the
// summary view's Source and Destination columns come from the innermost
// one (IP addresses, GIDs of RoCEv1 and native IB with a GRH, LIDs of
// native IB, MAC addresses). The methods append text (no allocation).
type Addresser interface {
	AppendSrc(b []byte) []byte
	AppendDst(b []byte) []byte
}

var (
	_ Addresser = (*ibcm.GRH)(nil)
	_ Addresser = (*ibcm.LRH)(nil)
)

// AppendEndpoints appends the frame's source and destination as the
// summary view shows them, from the innermost layer that has addresses.
func AppendEndpoints(r *Record, src, dst []byte) ([]byte, []byte) {
	if a := EndpointsLayer(r); a != nil {
		return a.AppendSrc(src), a.AppendDst(dst)
	}
	return src, dst
}

// EndpointsLayer returns the innermost layer of r that has addresses (the
// one AppendEndpoints uses), nil if none. Records whose layers are the
// same values (a Dissector reuses them) have the same one.
func EndpointsLayer(r *Record) Addresser {
	for i := len(r.Layers) - 1; i >= 0; i-- {
		if a, ok := r.Layers[i].(Addresser); ok {
			return a
		}
	}
	return nil
}

// InfoSummarizer is implemented by the transport adapters (TCP, UDP): their
// info text is used by the summary view only when no RDMA layer of the frame
// summarised (with --all), so that plain TCP or UDP lines are not empty.
type InfoSummarizer interface {
	AppendInfo(b []byte) []byte
}

func macUint(m net.HardwareAddr) uint64 {
	if len(m) != 6 {
		return 0
	}
	return uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
}

func addrOf(ip net.IP) netip.Addr {
	if a, ok := netip.AddrFromSlice(ip); ok {
		return a
	}
	return netip.Addr{}
}

// appendMAC appends aa:bb:cc:dd:ee:ff.
func appendMAC(b []byte, m net.HardwareAddr) []byte {
	const hex = "0123456789abcdef"
	for i, c := range m {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, hex[c>>4], hex[c&15])
	}
	return b
}

// Ethernet is gopacket's Ethernet layer as a field.Layer.
type Ethernet struct{ layers.Ethernet }

func (e *Ethernet) Proto() *field.Proto { return ProtoEthernet }

func (e *Ethernet) VisitFields(v field.Visitor) {
	v.Uint(fEthDst, macUint(e.DstMAC))
	v.Uint(fEthSrc, macUint(e.SrcMAC))
	if e.Length != 0 {
		v.Uint(fEthLen, uint64(e.Length))
		return
	}
	v.Uint(fEthType, uint64(e.EthernetType))
}

// errEthernetShort is gopacket's error for a frame shorter than the
// Ethernet header (same text; made once).
var errEthernetShort = errors.New("Ethernet packet too small")

// DecodeFromBytes is gopacket's Ethernet.DecodeFromBytes, storing the
// fields one by one: gopacket's BaseLayer{…} literal is built on the stack
// and copied with wide loads that wait for the narrow stores before them
// (a quarter of the Ethernet, IPv4, UDP and BTH decoding of a RoCE frame).
// TestEthernetDecode compares the two.
func (e *Ethernet) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 14 {
		return errEthernetShort
	}
	e.DstMAC = net.HardwareAddr(data[0:6])
	e.SrcMAC = net.HardwareAddr(data[6:12])
	e.EthernetType = layers.EthernetType(binary.BigEndian.Uint16(data[12:14]))
	e.Contents = data[:14]
	e.Payload = data[14:]
	e.Length = 0
	if e.EthernetType < 0x0600 {
		// An 802.3 length: the payload (an LLC header …) ends there.
		e.Length = uint16(e.EthernetType)
		e.EthernetType = layers.EthernetTypeLLC
		if cmp := len(e.Payload) - int(e.Length); cmp < 0 {
			df.SetTruncated()
		} else if cmp > 0 {
			e.Payload = e.Payload[:len(e.Payload)-cmp]
		}
	}
	return nil
}

// NextLayerType is gopacket's (the EtherType's layer type), with the
// EtherTypes of RoCE traffic answered without the metadata table.
func (e *Ethernet) NextLayerType() gopacket.LayerType { return etherNext(e.EthernetType) }

// etherNext is layers.EthernetType.LayerType, the common types first
// (TestEtherNext checks every value against gopacket's table).
func etherNext(t layers.EthernetType) gopacket.LayerType {
	switch t {
	case layers.EthernetTypeIPv4:
		return layers.LayerTypeIPv4
	case layers.EthernetTypeIPv6:
		return layers.LayerTypeIPv6
	case layers.EthernetTypeDot1Q:
		return layers.LayerTypeDot1Q
	}
	return t.LayerType()
}

func (e *Ethernet) AppendSrc(b []byte) []byte { return appendMAC(b, e.SrcMAC) }
func (e *Ethernet) AppendDst(b []byte) []byte { return appendMAC(b, e.DstMAC) }

// AppendInfo names the EtherType for frames nothing else decoded.
func (e *Ethernet) AppendInfo(b []byte) []byte {
	b = append(b, "Ethertype 0x"...)
	return appendHex(b, uint64(e.EthernetType), 4)
}

// VLAN is gopacket's Dot1Q layer as a field.Layer.
type VLAN struct{ layers.Dot1Q }

func (q *VLAN) Proto() *field.Proto { return ProtoVLAN }

// DecodeFromBytes is gopacket's Dot1Q.DecodeFromBytes, storing the fields
// one by one (see Ethernet's); a short tag goes to gopacket's for its
// error. TestVLANDecode compares the two.
func (q *VLAN) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 4 {
		return q.Dot1Q.DecodeFromBytes(data, df)
	}
	q.Priority = data[0] >> 5
	q.DropEligible = data[0]&0x10 != 0
	q.VLANIdentifier = binary.BigEndian.Uint16(data[:2]) & 0x0fff
	q.Type = layers.EthernetType(binary.BigEndian.Uint16(data[2:4]))
	q.Contents = data[:4]
	q.Payload = data[4:]
	if q.Type < 0x0600 {
		// An 802.3 length, as in Ethernet.
		if len(q.Payload) < int(q.Type) {
			df.SetTruncated()
		} else {
			q.Payload = q.Payload[:q.Type]
		}
	}
	return nil
}

// NextLayerType is gopacket's: LLC after an 802.3 length, the EtherType's
// layer type otherwise.
func (q *VLAN) NextLayerType() gopacket.LayerType {
	if q.Type < 0x0600 {
		return layers.LayerTypeLLC
	}
	return etherNext(q.Type)
}

func (q *VLAN) VisitFields(v field.Visitor) {
	v.Uint(fVLANPrio, uint64(q.Priority))
	v.Bool(fVLANDEI, q.DropEligible)
	v.Uint(fVLANID, uint64(q.VLANIdentifier))
	v.Uint(fVLANType, uint64(q.Type))
}

// hostNames are the names the IP layers give their addresses (tshark's
// network name resolution): a Dissector's options.
type hostNames struct {
	names   map[netip.Addr][]string
	resolve bool // names in place of addresses
	fields  bool // report src_host and dst_host
}

// name returns the first name of a, when names are resolved and a has one.
func (h *hostNames) name(a netip.Addr) (string, bool) {
	if h == nil || !h.resolve {
		return "", false
	}
	if n := h.names[a]; len(n) > 0 {
		return n[0], true
	}
	return "", false
}

// host is a's name, or a itself (tshark's ip.src_host without a name).
func (h *hostNames) host(a netip.Addr) string {
	if n, ok := h.name(a); ok {
		return n
	}
	return a.String()
}

// nameOf returns the first name of address ip, when names are resolved
// and it has one.
func (h *hostNames) nameOf(ip net.IP) (string, bool) {
	if h == nil || !h.resolve {
		return "", false
	}
	return h.name(addrOf(ip))
}

// appendAddr appends address ip, or its name when names are resolved.
func (h *hostNames) appendAddr(b []byte, ip net.IP) []byte {
	if n, ok := h.nameOf(ip); ok {
		return append(b, n...)
	}
	return appendIPv4(b, ip)
}

// visitHosts reports the source and destination host fields (a name, or
// the address) when they are asked for.
func (h *hostNames) visitHosts(v field.Visitor, fSrc, fDst *field.Field, src, dst net.IP) {
	if h != nil && h.fields {
		v.String(fSrc, h.host(addrOf(src)))
		v.String(fDst, h.host(addrOf(dst)))
	}
}

// IPv4 is gopacket's IPv4 layer as a field.Layer.
type IPv4 struct {
	layers.IPv4
	// hosts, when set, names the addresses.
	hosts *hostNames
}

func (ip *IPv4) Proto() *field.Proto { return ProtoIPv4 }

// DecodeFromBytes is gopacket's IPv4.DecodeFromBytes. The common header —
// no options (IHL 5), a total length that is at least 20 and within data —
// is decoded here, storing what gopacket stores; any other (options, a zero
// length, truncation, an error) goes to gopacket's own code
// (TestIPv4Decode compares the two on real and mutated headers).
func (ip *IPv4) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 20 || data[0]&0x0f != 5 {
		return ip.IPv4.DecodeFromBytes(data, df)
	}
	length := int(binary.BigEndian.Uint16(data[2:4]))
	if length < 20 || length > len(data) {
		return ip.IPv4.DecodeFromBytes(data, df)
	}
	data = data[:length]
	flagsfrags := binary.BigEndian.Uint16(data[6:8])
	ip.Version, ip.IHL, ip.TOS, ip.Length = data[0]>>4, 5, data[1], uint16(length)
	ip.Id = binary.BigEndian.Uint16(data[4:6])
	ip.Flags, ip.FragOffset = layers.IPv4Flag(flagsfrags>>13), flagsfrags&0x1fff
	ip.TTL, ip.Protocol = data[8], layers.IPProtocol(data[9])
	ip.Checksum = binary.BigEndian.Uint16(data[10:12])
	ip.SrcIP, ip.DstIP = data[12:16], data[16:20]
	ip.Options, ip.Padding = ip.Options[:0], nil
	ip.Contents, ip.Payload = data[:20], data[20:]
	return nil
}

// NextLayerType is gopacket's, with UDP and TCP of an unfragmented packet
// answered without the protocol table and the IPv6 extension class
// (TestIPNext checks every protocol and fragment state against gopacket).
func (ip *IPv4) NextLayerType() gopacket.LayerType {
	if ip.Flags&layers.IPv4MoreFragments == 0 && ip.FragOffset == 0 {
		if t, ok := udpOrTCP(ip.Protocol); ok {
			return t
		}
	}
	return ip.IPv4.NextLayerType()
}

// udpOrTCP is the layer of an IP payload of protocol p when it is UDP or
// TCP, the two the fast paths answer without gopacket's protocol table.
func udpOrTCP(p layers.IPProtocol) (gopacket.LayerType, bool) {
	switch p {
	case layers.IPProtocolUDP:
		return layers.LayerTypeUDP, true
	case layers.IPProtocolTCP:
		return layers.LayerTypeTCP, true
	}
	return gopacket.LayerTypeZero, false
}

func (ip *IPv4) VisitFields(v field.Visitor) {
	v.Uint(fIPv4Version, uint64(ip.Version))
	v.Uint(fIPv4HdrLen, uint64(ip.IHL)*4)
	v.Uint(fIPv4DSCP, uint64(ip.TOS>>2))
	v.Uint(fIPv4ECN, uint64(ip.TOS&3))
	v.Uint(fIPv4Len, uint64(ip.Length))
	v.Uint(fIPv4ID, uint64(ip.Id))
	v.Bool(fIPv4DF, ip.Flags&layers.IPv4DontFragment != 0)
	v.Bool(fIPv4MF, ip.Flags&layers.IPv4MoreFragments != 0)
	v.Uint(fIPv4FragOff, uint64(ip.FragOffset))
	v.Uint(fIPv4TTL, uint64(ip.TTL))
	v.Uint(fIPv4Proto, uint64(ip.Protocol))
	v.Uint(fIPv4Checksum, uint64(ip.Checksum))
	v.Addr(fIPv4Src, addrOf(ip.SrcIP))
	v.Addr(fIPv4Dst, addrOf(ip.DstIP))
	if ip.IHL > 5 {
		v.Uint(fIPv4OptionLen, uint64(ip.IHL-5)*4)
	}
	ip.hosts.visitHosts(v, fIPv4SrcHost, fIPv4DstHost, ip.SrcIP, ip.DstIP)
}

// AppendSrc appends the source address, or its name when names are
// resolved (the summary's column).
func (ip *IPv4) AppendSrc(b []byte) []byte { return ip.hosts.appendAddr(b, ip.SrcIP) }

func (ip *IPv4) AppendDst(b []byte) []byte { return ip.hosts.appendAddr(b, ip.DstIP) }

// appendIPv4 appends a four-octet address in dotted decimal, as
// netip.Addr.AppendTo does, without making the netip.Addr (the summary
// view calls it twice a line); other lengths (IPv6) go through netip.
// Each octet is one four-octet store of its text from octetDots, the next
// store overwriting what lies past the octet's digits and dot.
func appendIPv4(b []byte, ip net.IP) []byte {
	if len(ip) != 4 {
		return addrOf(ip).AppendTo(b)
	}
	// A 19-octet window: any offset below 16 leaves room for a store,
	// so the offsets, masked to four bits, need no bounds checks.
	n := len(b)
	if cap(b)-n < 19 {
		b = append(b, make([]byte, 19)...)[:n]
	}
	d := (*[19]byte)(b[n : n+19])
	t0, t1, t2, t3 := octetDots[ip[0]], octetDots[ip[1]], octetDots[ip[2]], octetDots[ip[3]]
	binary.LittleEndian.PutUint32(d[0:], uint32(t0))
	at := int(t0 >> 32)
	binary.LittleEndian.PutUint32(d[at&15:], uint32(t1))
	at += int(t1 >> 32)
	binary.LittleEndian.PutUint32(d[at&15:], uint32(t2))
	at += int(t2 >> 32)
	binary.LittleEndian.PutUint32(d[at&15:], uint32(t3))
	// The last octet's dot is not part of the address.
	return b[:n+at+int(t3>>32)-1]
}

// octetDots[c] is c in decimal followed by a dot, in the low four octets
// (little endian), and the length of that text above them.
var octetDots = func() (t [256]uint64) {
	for c := range t {
		s := strconv.Itoa(c) + "."
		var w [4]byte
		copy(w[:], s)
		t[c] = uint64(binary.LittleEndian.Uint32(w[:])) | uint64(len(s))<<32
	}
	return t
}()

// AppendInfo names the IP protocol for packets nothing else decoded.
func (ip *IPv4) AppendInfo(b []byte) []byte { return appendIPProto(b, uint64(ip.Protocol)) }

func appendIPProto(b []byte, p uint64) []byte {
	b = append(b, "IP protocol "...)
	if n, ok := ipProtoNames[p]; ok {
		return append(b, n...)
	}
	return strconv.AppendUint(b, p, 10)
}

// IPv6 is gopacket's IPv6 layer as a field.Layer, with the extension
// headers before the upper layer (RFC 8200 §4: Hop-by-Hop, Routing and
// Destination Options) passed over, as tshark passes over them: the
// payload and NextLayerType are the UDP or TCP after them.
type IPv6 struct {
	layers.IPv6
	// hosts, when set, names the addresses.
	hosts *hostNames
	// ext are the Routing and Destination Options headers passExt passed
	// over (gopacket passes over a Hop-by-Hop header, HopByHop), nExt of
	// them; next is the protocol after the last.
	ext  [maxIPv6Ext]ipv6Ext
	nExt uint8
	next layers.IPProtocol
}

// maxIPv6Ext is the number of extension headers passed over; decoding
// stops at the one after them (its protocol is the IPv6 layer's Info).
const maxIPv6Ext = 4

// ipv6Ext is an extension header passed over: its protocol number (the
// header's type), its Next Header and its length in octets.
type ipv6Ext struct {
	proto, nxt uint8
	len        uint16
}

// The extension headers' fields, tshark's (ipv6.hopopts …): one group
// each, its Next Header and its length (octets, and the field's value).
var ipv6ExtFields = map[uint8][4]*field.Field{
	uint8(layers.IPProtocolIPv6HopByHop):    extFields("hopopts", "IPv6 Hop-by-Hop Option"),
	uint8(layers.IPProtocolIPv6Routing):     extFields("routing", "Routing Header for IPv6"),
	uint8(layers.IPProtocolIPv6Destination): extFields("dstopts", "Destination Options for IPv6"),
}

func extFields(name, title string) [4]*field.Field {
	return [4]*field.Field{
		ProtoIPv6.Group("ipv6."+name, title),
		ProtoIPv6.Uint("ipv6."+name+".nxt", 8, "Next Header").WithNames(ipProtoNames),
		ProtoIPv6.Uint("ipv6."+name+".len", 8, "Length (8-octet units after the first 8)"),
		ProtoIPv6.Uint("ipv6."+name+".len_oct", 16, "Length").WithUnit("bytes"),
	}
}

func (ip *IPv6) Proto() *field.Proto { return ProtoIPv6 }

// DecodeFromBytes is gopacket's IPv6.DecodeFromBytes, storing the fields
// one by one (see Ethernet's) for the common header: no HopByHop header
// and a payload length that is not 0 (a jumbogram's); those and a short
// header go to gopacket's own code. TestIPv6Decode compares the two. The
// walk then passes over the other extension headers (passExt).
func (ip *IPv6) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	ip.nExt = 0
	if len(data) < 40 || layers.IPProtocol(data[6]) == layers.IPProtocolIPv6HopByHop || data[4]|data[5] == 0 {
		return ip.IPv6.DecodeFromBytes(data, df)
	}
	w0 := binary.BigEndian.Uint32(data[0:4])
	ip.Version = uint8(w0 >> 28)
	ip.TrafficClass = uint8(w0 >> 20)
	ip.FlowLabel = w0 & 0x000fffff
	ip.Length = binary.BigEndian.Uint16(data[4:6])
	ip.NextHeader = layers.IPProtocol(data[6])
	ip.HopLimit = data[7]
	ip.SrcIP = data[8:24]
	ip.DstIP = data[24:40]
	ip.HopByHop = nil
	ip.Contents = data[:40]
	end := len(data)
	if n := 40 + int(ip.Length); n <= end {
		end = n
	} else {
		df.SetTruncated()
	}
	ip.Payload = data[40:end]
	return nil
}

// afterHeader is the protocol after the header and the Hop-by-Hop header
// gopacket passes over.
func (ip *IPv6) afterHeader() layers.IPProtocol {
	if ip.HopByHop != nil {
		return ip.HopByHop.NextHeader
	}
	return ip.NextHeader
}

// isExt reports the extension headers passExt passes over.
func isExt(p layers.IPProtocol) bool {
	return p == layers.IPProtocolIPv6Routing || p == layers.IPProtocolIPv6Destination
}

// errIPv6ExtShort is passExt's error (made once: the walk allocates
// nothing).
var errIPv6ExtShort = errors.New("IPv6 extension header runs past the payload")

// passExt passes over the Routing and Destination Options headers at the
// start of the decoded header's payload (after a Hop-by-Hop header
// gopacket passed over), up to maxIPv6Ext: the payload is then what
// follows them, and NextLayerType the layer of the protocol after them,
// as tshark goes on there. A header that runs past the payload is an error
// (truncation when the capture cut the packet).
func (ip *IPv6) passExt(df gopacket.DecodeFeedback) error {
	next := ip.afterHeader()
	if !isExt(next) {
		return nil
	}
	for isExt(next) && ip.nExt < maxIPv6Ext {
		p := ip.Payload
		if len(p) < 8 || len(p) < (int(p[1])+1)*8 {
			if 40+int(ip.Length) > len(ip.Contents)+len(ip.Payload) {
				df.SetTruncated()
			}
			return errIPv6ExtShort
		}
		n := (int(p[1]) + 1) * 8
		ip.ext[ip.nExt] = ipv6Ext{uint8(next), p[0], uint16(n)}
		ip.nExt++
		next = layers.IPProtocol(p[0])
		ip.Payload = p[n:]
	}
	ip.next = next
	return nil
}

// NextLayerType is gopacket's, with UDP and TCP answered without the
// protocol table; after extension headers, the layer of the protocol
// after them.
func (ip *IPv6) NextLayerType() gopacket.LayerType {
	if ip.nExt > 0 {
		if t, ok := udpOrTCP(ip.next); ok {
			return t
		}
		return ip.next.LayerType()
	}
	if ip.HopByHop == nil {
		if t, ok := udpOrTCP(ip.NextHeader); ok {
			return t
		}
	}
	return ip.IPv6.NextLayerType()
}

func (ip *IPv6) VisitFields(v field.Visitor) {
	v.Uint(fIPv6Version, uint64(ip.Version))
	v.Uint(fIPv6TClass, uint64(ip.TrafficClass))
	v.Uint(fIPv6Flow, uint64(ip.FlowLabel))
	v.Uint(fIPv6Plen, uint64(ip.Length))
	v.Uint(fIPv6Nxt, uint64(ip.NextHeader))
	v.Uint(fIPv6Hlim, uint64(ip.HopLimit))
	v.Addr(fIPv6Src, addrOf(ip.SrcIP))
	v.Addr(fIPv6Dst, addrOf(ip.DstIP))
	ip.hosts.visitHosts(v, fIPv6SrcHost, fIPv6DstHost, ip.SrcIP, ip.DstIP)
	if h := ip.HopByHop; h != nil {
		visitExt(v, layers.IPProtocolIPv6HopByHop, uint8(h.NextHeader), h.ActualLength)
	}
	for _, e := range ip.ext[:ip.nExt] {
		visitExt(v, layers.IPProtocol(e.proto), e.nxt, int(e.len))
	}
}

// visitExt reports an extension header of protocol p: its Next Header
// and its length of n octets.
func visitExt(v field.Visitor, p layers.IPProtocol, nxt uint8, n int) {
	f := ipv6ExtFields[uint8(p)]
	v.Begin(f[0])
	v.Uint(f[1], uint64(nxt))
	v.Uint(f[2], uint64(n/8-1))
	v.Uint(f[3], uint64(n))
	v.End()
}

func (ip *IPv6) AppendSrc(b []byte) []byte { return ip.hosts.appendAddr(b, ip.SrcIP) }

func (ip *IPv6) AppendDst(b []byte) []byte { return ip.hosts.appendAddr(b, ip.DstIP) }

// AppendInfo names the protocol after the header and the extension
// headers passed over, for packets nothing else decoded.
func (ip *IPv6) AppendInfo(b []byte) []byte {
	if ip.nExt > 0 {
		return appendIPProto(b, uint64(ip.next))
	}
	return appendIPProto(b, uint64(ip.NextHeader))
}

// UDP is gopacket's UDP layer as a field.Layer. Its NextLayerType knows
// only RoCEv2 and VXLAN: the BTH on a RoCE port (4791 and
// Options.RoCEPorts), VXLAN on its port, the payload otherwise (gopacket's
// port table is a map lookup per packet, and no other UDP protocol is
// dissected).
type UDP struct {
	layers.UDP
	roce *portSet // nil: gopacket's port table
}

// NextLayerType is the BTH for a RoCEv2 port (destination, or source for
// a peer answering from 4791), VXLAN to or from its port (as tshark), the
// payload otherwise.
func (u *UDP) NextLayerType() gopacket.LayerType {
	if len(u.Payload) == 0 {
		return gopacket.LayerTypeZero
	}
	if u.roce != nil {
		if u.roce.has(uint16(u.DstPort)) || u.roce.has(uint16(u.SrcPort)) {
			return ibcm.LayerTypeBTH
		}
		if u.DstPort == VXLANPort || u.SrcPort == VXLANPort {
			return layers.LayerTypeVXLAN
		}
		return gopacket.LayerTypePayload
	}
	return u.UDP.NextLayerType()
}

func (u *UDP) Proto() *field.Proto { return ProtoUDP }

func (u *UDP) VisitFields(v field.Visitor) {
	v.Uint(fUDPSrcPort, uint64(u.SrcPort))
	v.Uint(fUDPDstPort, uint64(u.DstPort))
	v.Uint(fUDPLength, uint64(u.Length))
	v.Uint(fUDPChecksum, uint64(u.Checksum))
}

// AppendInfo: "49152 → 4791 Len=60".
func (u *UDP) AppendInfo(b []byte) []byte {
	b = strconv.AppendUint(b, uint64(u.SrcPort), 10)
	b = append(b, " → "...)
	b = strconv.AppendUint(b, uint64(u.DstPort), 10)
	b = append(b, " Len="...)
	return strconv.AppendInt(b, int64(len(u.Payload)), 10)
}

// TCP is gopacket's TCP layer as a field.Layer. Sequence numbers are the
// raw values on the wire (tshark's tcp.seq_raw).
type TCP struct{ layers.TCP }

func (t *TCP) Proto() *field.Proto { return ProtoTCP }

func (t *TCP) flags() uint64 {
	var f uint64
	for i, set := range [...]bool{t.FIN, t.SYN, t.RST, t.PSH, t.ACK, t.URG, t.ECE, t.CWR, t.NS} {
		if set {
			f |= 1 << i
		}
	}
	return f
}

func (t *TCP) VisitFields(v field.Visitor) {
	v.Uint(fTCPSrcPort, uint64(t.SrcPort))
	v.Uint(fTCPDstPort, uint64(t.DstPort))
	v.Uint(fTCPSeq, uint64(t.Seq))
	v.Uint(fTCPAck, uint64(t.Ack))
	v.Uint(fTCPHdrLen, uint64(t.DataOffset)*4)
	v.Uint(fTCPFlags, t.flags())
	v.Bool(fTCPFlagCWR, t.CWR)
	v.Bool(fTCPFlagECE, t.ECE)
	v.Bool(fTCPFlagURG, t.URG)
	v.Bool(fTCPFlagACK, t.ACK)
	v.Bool(fTCPFlagPSH, t.PSH)
	v.Bool(fTCPFlagRST, t.RST)
	v.Bool(fTCPFlagSYN, t.SYN)
	v.Bool(fTCPFlagFIN, t.FIN)
	v.Uint(fTCPWindow, uint64(t.Window))
	v.Uint(fTCPChecksum, uint64(t.Checksum))
	v.Uint(fTCPUrgent, uint64(t.Urgent))
	v.Uint(fTCPLen, uint64(len(t.Payload)))
}

// AppendInfo: "49152 → 20049 [SYN, ACK] Seq=… Ack=… Win=… Len=0" (raw
// sequence numbers).
func (t *TCP) AppendInfo(b []byte) []byte {
	b = strconv.AppendUint(b, uint64(t.SrcPort), 10)
	b = append(b, " → "...)
	b = strconv.AppendUint(b, uint64(t.DstPort), 10)
	b = append(b, " ["...)
	n := 0
	for _, fl := range [...]struct {
		set  bool
		name string
	}{{t.SYN, "SYN"}, {t.FIN, "FIN"}, {t.RST, "RST"}, {t.PSH, "PSH"}, {t.ACK, "ACK"}, {t.URG, "URG"}, {t.ECE, "ECE"}, {t.CWR, "CWR"}} {
		if fl.set {
			if n > 0 {
				b = append(b, ", "...)
			}
			b = append(b, fl.name...)
			n++
		}
	}
	b = append(b, "] Seq="...)
	b = strconv.AppendUint(b, uint64(t.Seq), 10)
	if t.ACK {
		b = append(b, " Ack="...)
		b = strconv.AppendUint(b, uint64(t.Ack), 10)
	}
	b = append(b, " Win="...)
	b = strconv.AppendUint(b, uint64(t.Window), 10)
	b = append(b, " Len="...)
	return strconv.AppendInt(b, int64(len(t.Payload)), 10)
}

func appendHex(b []byte, v uint64, digits int) []byte {
	const hex = "0123456789abcdef"
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hex[(v>>(4*uint(i)))&15])
	}
	return b
}
