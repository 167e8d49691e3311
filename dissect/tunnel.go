package dissect

import (
	"encoding/binary"
	"errors"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// The encapsulations port mirrors deliver captured frames in (a switch's
// SPAN session sent to a collector, a virtual switch's mirror): GRE
// carrying transparent Ethernet bridging (0x6558) or ERSPAN (type I, II,
// III), and VXLAN. The header walk goes on into the mirrored frame as
// tshark does; its headers decode into a commonHeaders of their own
// (commonHeaders.tunnel), so the outer ones stay in the record too.

// VXLANPort is the IANA UDP port of VXLAN (RFC 7348 §5).
const VXLANPort = 4789

// erspanIIIType is the GRE protocol type of ERSPAN type III; type I and II
// share EthernetTypeERSPAN (0x88be), type I without GRE sequence numbers.
const erspanIIIType layers.EthernetType = 0x22eb

// LayerTypeERSPANIII is ERSPAN type III (gopacket has type II only);
// dissect's adapters own 1900–1919 of gopacket's fast range.
var LayerTypeERSPANIII = gopacket.RegisterLayerType(1901, gopacket.LayerTypeMetadata{Name: "ERSPANIII", Decoder: gopacket.DecodeFunc(decodeERSPANIII)})

func decodeERSPANIII(data []byte, p gopacket.PacketBuilder) error {
	e := &ERSPAN{}
	if err := e.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(e)
	return p.NextDecoder(e.NextLayerType())
}

// maxTunnels is the number of nested encapsulations the walk goes into;
// deeper ones are left as payload.
const maxTunnels = 2

var (
	ProtoGRE     = field.NewProto("gre", "Generic Routing Encapsulation")
	fGREFlags    = ProtoGRE.Hex("gre.flags_and_version", 16, "Flags and Version")
	fGREProto    = ProtoGRE.Hex("gre.proto", 16, "Protocol Type").WithNames(greProtoNames)
	fGREChecksum = ProtoGRE.Hex("gre.checksum", 16, "Checksum")
	fGREKey      = ProtoGRE.Hex("gre.key", 32, "Key")
	fGRESeq      = ProtoGRE.Uint("gre.sequence_number", 32, "Sequence Number")

	ProtoERSPAN     = field.NewProto("erspan", "Encapsulated Remote Switch Packet ANalysis")
	fERSPANVersion  = ProtoERSPAN.Uint("erspan.version", 4, "Version").WithNames(map[uint64]string{1: "Type II", 2: "Type III"})
	fERSPANVLAN     = ProtoERSPAN.Uint("erspan.vlan", 12, "Vlan")
	fERSPANCOS      = ProtoERSPAN.Uint("erspan.cos", 3, "COS")
	fERSPANEncap    = ProtoERSPAN.Uint("erspan.encap", 2, "Encap")
	fERSPANBSO      = ProtoERSPAN.Uint("erspan.bso", 2, "Bad/Short/Oversized")
	fERSPANTrunc    = ProtoERSPAN.Uint("erspan.truncated", 1, "Truncated")
	fERSPANSpanID   = ProtoERSPAN.Uint("erspan.spanid", 10, "SpanID")
	fERSPANIndex    = ProtoERSPAN.Uint("erspan.index", 20, "Index")
	fERSPANTime     = ProtoERSPAN.Uint("erspan.timestamp", 32, "Timestamp")
	fERSPANSGT      = ProtoERSPAN.Uint("erspan.sgt", 16, "Security Group Tag")
	fERSPANP        = ProtoERSPAN.Uint("erspan.p", 1, "Has Ethernet PDU")
	fERSPANFT       = ProtoERSPAN.Uint("erspan.ft", 5, "Frame Type")
	fERSPANHW       = ProtoERSPAN.Uint("erspan.hw", 6, "Hardware ID")
	fERSPANDir      = ProtoERSPAN.Bool("erspan.direction", "Direction (egress)")
	fERSPANGra      = ProtoERSPAN.Uint("erspan.gra", 2, "Timestamp granularity")
	fERSPANO        = ProtoERSPAN.Uint("erspan.o", 1, "Optional Sub headers")
	fERSPANPlatform = ProtoERSPAN.Uint("erspan.platid", 6, "Platform ID")

	ProtoVXLAN  = field.NewProto("vxlan", "Virtual eXtensible Local Area Network")
	fVXLANFlags = ProtoVXLAN.Hex("vxlan.flags", 16, "Flags")
	fVXLANFlagI = ProtoVXLAN.Bool("vxlan.flag_i", "VXLAN Network ID (VNI)")
	fVXLANVNI   = ProtoVXLAN.Uint("vxlan.vni", 24, "VXLAN Network Identifier (VNI)")
)

var greProtoNames = map[uint64]string{
	0x0800: "IP", 0x86dd: "IPv6", 0x6558: "Transparent Ethernet bridging", 0x88be: "ERSPAN", 0x22eb: "ERSPAN type III",
}

// GRE is gopacket's GRE layer as a field.Layer (RFC 2784, RFC 2890), its
// NextLayerType the mirrored frame's: Ethernet for transparent Ethernet
// bridging and ERSPAN type I (0x88be without sequence numbers), ERSPAN
// type II and III, IPv4, IPv6.
type GRE struct{ layers.GRE }

func (g *GRE) Proto() *field.Proto { return ProtoGRE }

func (g *GRE) NextLayerType() gopacket.LayerType {
	switch g.Protocol {
	case layers.EthernetTypeTransparentEthernetBridging:
		return layers.LayerTypeEthernet
	case layers.EthernetTypeERSPAN:
		if !g.SeqPresent {
			return layers.LayerTypeEthernet // type I: no ERSPAN header
		}
		return layers.LayerTypeERSPANII
	case erspanIIIType:
		return LayerTypeERSPANIII
	case layers.EthernetTypeIPv4, layers.EthernetTypeIPv6:
		return etherNext(g.Protocol)
	}
	return gopacket.LayerTypePayload
}

func (g *GRE) VisitFields(v field.Visitor) {
	v.Uint(fGREFlags, uint64(binary.BigEndian.Uint16(g.Contents)))
	v.Uint(fGREProto, uint64(g.Protocol))
	if g.ChecksumPresent {
		v.Uint(fGREChecksum, uint64(g.Checksum))
	}
	if g.KeyPresent {
		v.Uint(fGREKey, uint64(g.Key))
	}
	if g.SeqPresent {
		v.Uint(fGRESeq, uint64(g.Seq))
	}
}

// ERSPAN is the header of ERSPAN type II (8 octets) or type III (12, and
// an 8-octet platform-specific subheader when O is set; V3) before the
// mirrored frame (draft-foschiano-erspan-03 §4.2, §4.3; tshark's erspan).
type ERSPAN struct {
	layers.BaseLayer
	V3        bool
	Version   uint8
	VLAN      uint16
	COS       uint8
	Encap     uint8 // type II's Encap, type III's BSO
	Truncated bool
	SpanID    uint16
	Index     uint32 // type II
	// Type III.
	Timestamp uint32
	SGT       uint16
	P         bool
	FT        uint8
	HW        uint8
	Egress    bool
	Gra       uint8
	O         bool
	Platform  uint8
}

func (e *ERSPAN) Proto() *field.Proto { return ProtoERSPAN }

func (e *ERSPAN) LayerType() gopacket.LayerType {
	if e.V3 {
		return LayerTypeERSPANIII
	}
	return layers.LayerTypeERSPANII
}

func (e *ERSPAN) CanDecode() gopacket.LayerClass {
	return gopacket.NewLayerClass([]gopacket.LayerType{layers.LayerTypeERSPANII, LayerTypeERSPANIII})
}

// The ERSPAN decoding errors, made once: the walk allocates nothing.
var (
	errERSPANShort   = errors.New("ERSPAN header: too short")
	errERSPANVersion = errors.New("ERSPAN header: version is neither 1 (type II) nor 2 (type III)")
)

// DecodeFromBytes decodes the header by its version, as tshark does
// (whichever of ERSPAN's GRE protocol types came before it): 1 is type II,
// 2 type III.
func (e *ERSPAN) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 8 {
		df.SetTruncated()
		return errERSPANShort
	}
	n := 8
	switch data[0] >> 4 {
	case 1:
		e.V3 = false
	case 2:
		e.V3, n = true, 12
		if len(data) >= 12 && data[11]&1 != 0 {
			n = 20
		}
	default:
		return errERSPANVersion
	}
	if len(data) < n {
		df.SetTruncated()
		return errERSPANShort
	}
	w0 := binary.BigEndian.Uint32(data[0:4])
	e.Version, e.VLAN = uint8(w0>>28), uint16(w0>>16)&0xfff
	e.COS, e.Encap, e.Truncated, e.SpanID = uint8(w0>>13)&7, uint8(w0>>11)&3, w0&0x400 != 0, uint16(w0)&0x3ff
	e.Index, e.Timestamp, e.SGT, e.P, e.FT, e.HW, e.Egress, e.Gra, e.O, e.Platform = 0, 0, 0, false, 0, 0, false, 0, false, 0
	if e.V3 {
		e.Timestamp = binary.BigEndian.Uint32(data[4:8])
		e.SGT = binary.BigEndian.Uint16(data[8:10])
		w := binary.BigEndian.Uint16(data[10:12])
		e.P, e.FT, e.HW = w&0x8000 != 0, uint8(w>>10)&0x1f, uint8(w>>4)&0x3f
		e.Egress, e.Gra, e.O = w&8 != 0, uint8(w>>1)&3, w&1 != 0
		if e.O {
			e.Platform = data[12] >> 2
		}
	} else {
		e.Index = binary.BigEndian.Uint32(data[4:8]) & 0xfffff
	}
	e.Contents, e.Payload = data[:n], data[n:]
	return nil
}

// NextLayerType is the mirrored Ethernet frame (type III: frame type 0).
func (e *ERSPAN) NextLayerType() gopacket.LayerType {
	if e.V3 && e.FT != 0 {
		return gopacket.LayerTypePayload
	}
	return layers.LayerTypeEthernet
}

func (e *ERSPAN) VisitFields(v field.Visitor) {
	v.Uint(fERSPANVersion, uint64(e.Version))
	v.Uint(fERSPANVLAN, uint64(e.VLAN))
	v.Uint(fERSPANCOS, uint64(e.COS))
	if e.V3 {
		v.Uint(fERSPANBSO, uint64(e.Encap))
	} else {
		v.Uint(fERSPANEncap, uint64(e.Encap))
	}
	v.Uint(fERSPANTrunc, b2u(e.Truncated))
	v.Uint(fERSPANSpanID, uint64(e.SpanID))
	if !e.V3 {
		v.Uint(fERSPANIndex, uint64(e.Index))
		return
	}
	v.Uint(fERSPANTime, uint64(e.Timestamp))
	v.Uint(fERSPANSGT, uint64(e.SGT))
	v.Uint(fERSPANP, b2u(e.P))
	v.Uint(fERSPANFT, uint64(e.FT))
	v.Uint(fERSPANHW, uint64(e.HW))
	v.Bool(fERSPANDir, e.Egress)
	v.Uint(fERSPANGra, uint64(e.Gra))
	v.Uint(fERSPANO, b2u(e.O))
	if e.O {
		v.Uint(fERSPANPlatform, uint64(e.Platform))
	}
}

// VXLAN is the VXLAN header (RFC 7348 §5) before the encapsulated
// Ethernet frame.
type VXLAN struct {
	layers.BaseLayer
	Flags uint16 // the first two octets, tshark's vxlan.flags
	VNI   uint32
}

func (x *VXLAN) Proto() *field.Proto            { return ProtoVXLAN }
func (x *VXLAN) LayerType() gopacket.LayerType  { return layers.LayerTypeVXLAN }
func (x *VXLAN) CanDecode() gopacket.LayerClass { return layers.LayerTypeVXLAN }

// errVXLANShort is made once: the walk allocates nothing.
var errVXLANShort = errors.New("VXLAN header: need 8 octets")

func (x *VXLAN) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 8 {
		df.SetTruncated()
		return errVXLANShort
	}
	x.Flags = binary.BigEndian.Uint16(data[0:2])
	x.VNI = binary.BigEndian.Uint32(data[4:8]) >> 8
	x.Contents, x.Payload = data[:8], data[8:]
	return nil
}

func (x *VXLAN) NextLayerType() gopacket.LayerType { return layers.LayerTypeEthernet }

func (x *VXLAN) VisitFields(v field.Visitor) {
	v.Uint(fVXLANFlags, uint64(x.Flags))
	v.Bool(fVXLANFlagI, x.Flags&0x0800 != 0)
	v.Uint(fVXLANVNI, uint64(x.VNI))
}

// b2u is a flag's value as a 1-bit field (tshark shows ERSPAN's flags as
// integers).
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
