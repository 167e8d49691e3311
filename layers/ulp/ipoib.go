package ulp

import (
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// IPoIB connected mode (RFC 4755): each RC Send is one IP datagram after
// the 4-octet IPoIB encapsulation header (RFC 4391 §6: an EtherType and
// two reserved octets).

// IPoIBHeaderLen is the length of the encapsulation header.
const IPoIBHeaderLen = 4

var ipoibTypeNames = map[uint64]string{0x0800: "IPv4", 0x86dd: "IPv6", 0x0806: "ARP"}

// IPoIB is the encapsulation header and the addresses of the IP packet it
// carries.
type IPoIB struct {
	layers.BaseLayer
	Type     uint16
	Reserved uint16
	// Src and Dst are the IP packet's addresses (invalid when the payload
	// is not a whole IPv4 or IPv6 header).
	Src, Dst netip.Addr
}

var (
	// ProtoIPoIB is tshark's ipoib: the connected-mode layer here and the
	// datagram-mode link layer of LINKTYPE_IPOIB (dissect) declare their
	// fields under it.
	ProtoIPoIB     = field.NewProto("ipoib", "IP over InfiniBand")
	fIPoIBType     = ProtoIPoIB.Hex("ipoib.type", 16, "Type").WithNames(ipoibTypeNames)
	fIPoIBReserved = ProtoIPoIB.Hex("ipoib.reserved", 16, "Reserved")
	fIPoIBSrc      = ProtoIPoIB.Addr("ipoib.ip.src", "IP Source")
	fIPoIBDst      = ProtoIPoIB.Addr("ipoib.ip.dst", "IP Destination")
)

func (p *IPoIB) Proto() *field.Proto { return ProtoIPoIB }

func (p *IPoIB) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*p = IPoIB{}
	if len(data) < IPoIBHeaderLen {
		df.SetTruncated()
		return errShort("IPoIB encapsulation header", IPoIBHeaderLen, len(data))
	}
	p.Type, p.Reserved = be.Uint16(data), be.Uint16(data[2:])
	ip := data[IPoIBHeaderLen:]
	switch {
	case p.Type == 0x0800 && len(ip) >= 20 && ip[0]>>4 == 4:
		p.Src, p.Dst = netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20]))
	case p.Type == 0x86dd && len(ip) >= 40 && ip[0]>>4 == 6:
		p.Src, p.Dst = netip.AddrFrom16([16]byte(ip[8:24])), netip.AddrFrom16([16]byte(ip[24:40]))
	}
	p.BaseLayer = layers.BaseLayer{Contents: data[:IPoIBHeaderLen], Payload: ip}
	return nil
}

// VisitHeader reports the fields of an encapsulation header of type typ.
func VisitHeader(v field.Visitor, typ, reserved uint16) {
	v.Uint(fIPoIBType, uint64(typ))
	v.Uint(fIPoIBReserved, uint64(reserved))
}

func (p *IPoIB) VisitFields(v field.Visitor) {
	VisitHeader(v, p.Type, p.Reserved)
	if p.Src.IsValid() {
		v.Addr(fIPoIBSrc, p.Src)
		v.Addr(fIPoIBDst, p.Dst)
	}
}

// AppendSummary appends "IPoIB-CM IPv4 10.0.0.1 → 10.0.0.2".
func (p *IPoIB) AppendSummary(b []byte) []byte {
	b = append(b, "IPoIB-CM "...)
	if n := ipoibTypeNames[uint64(p.Type)]; n != "" {
		b = append(b, n...)
	} else {
		b = append(b, "type 0x"...)
		b = appendHex16(b, p.Type)
	}
	if p.Src.IsValid() {
		b = p.Src.AppendTo(append(b, ' '))
		b = p.Dst.AppendTo(append(b, " → "...))
	}
	return b
}

func appendHex16(b []byte, v uint16) []byte {
	const digits = "0123456789abcdef"
	return append(b, digits[v>>12], digits[v>>8&15], digits[v>>4&15], digits[v&15])
}

func (p *IPoIB) LayerType() gopacket.LayerType     { return LayerTypeIPoIB }
func (p *IPoIB) CanDecode() gopacket.LayerClass    { return LayerTypeIPoIB }
func (p *IPoIB) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// SerializeTo prepends the encapsulation header (the IP packet is the
// payload serialized before it).
func (p *IPoIB) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	w, err := b.PrependBytes(IPoIBHeaderLen)
	if err != nil {
		return err
	}
	be.PutUint16(w, p.Type)
	be.PutUint16(w[2:], p.Reserved)
	return nil
}
