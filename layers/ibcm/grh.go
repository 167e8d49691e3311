package ibcm

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// ProtoGRH and its fields (tshark: infiniband.grh.*).
var (
	ProtoGRH      = field.NewProto("grh", "InfiniBand Global Route Header")
	fGRHIPVer     = ProtoGRH.Uint("grh.ipver", 4, "IP Version")
	fGRHTClass    = ProtoGRH.Hex("grh.tclass", 8, "Traffic Class")
	fGRHFlowLabel = ProtoGRH.Hex("grh.flowlabel", 20, "Flow Label")
	fGRHPayLen    = ProtoGRH.Uint("grh.paylen", 16, "Payload Length").WithUnit("octets")
	fGRHNxtHdr    = ProtoGRH.Hex("grh.nxthdr", 8, "Next Header").WithNames(map[uint64]string{GRHNextHeaderIBA: "IBA transport"})
	fGRHHopLmt    = ProtoGRH.Uint("grh.hoplmt", 8, "Hop Limit")
	fGRHSGID      = ProtoGRH.Addr("grh.sgid", "Source GID")
	fGRHDGID      = ProtoGRH.Addr("grh.dgid", "Destination GID")
)

// GRH is the InfiniBand Global Route Header (40 octets, the layout of an
// IPv6 header). It follows the LRH when LNH is 3, and is first in RoCEv1
// frames (ethertype 0x8915). Payload is PayLen octets: BTH … ICRC.
type GRH struct {
	layers.BaseLayer
	IPVer     uint8
	TClass    uint8
	FlowLabel uint32
	PayLen    uint16
	NextHdr   uint8
	HopLimit  uint8
	SGID      [16]byte
	DGID      [16]byte

	probs problems
}

const grhProbLength problems = 1

func (g *GRH) LayerType() gopacket.LayerType     { return LayerTypeGRH }
func (g *GRH) CanDecode() gopacket.LayerClass    { return LayerTypeGRH }
func (g *GRH) Proto() *field.Proto               { return ProtoGRH }
func (g *GRH) SrcGID() netip.Addr                { return netip.AddrFrom16(g.SGID) }
func (g *GRH) DstGID() netip.Addr                { return netip.AddrFrom16(g.DGID) }
func (g *GRH) String() string                    { return fmt.Sprintf("GRH %s → %s", g.SrcGID(), g.DstGID()) }
func (g *GRH) NextLayerType() gopacket.LayerType { return grhNext(g.NextHdr) }

// AppendSrc and AppendDst append the GIDs (the summary view's address
// columns when the GRH is the innermost addressing header).
func (g *GRH) AppendSrc(b []byte) []byte { return g.SrcGID().AppendTo(b) }
func (g *GRH) AppendDst(b []byte) []byte { return g.DstGID().AppendTo(b) }

func grhNext(nh uint8) gopacket.LayerType {
	if nh == GRHNextHeaderIBA {
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes a GRH; the payload is bounded by PayLen.
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < grhLen {
		return truncated(df, "GRH", "header", 0, grhLen, len(data))
	}
	w := binary.BigEndian.Uint32(data)
	g.IPVer = uint8(w >> 28)
	g.TClass = uint8(w >> 20)
	g.FlowLabel = w & 0xfffff
	g.PayLen = binary.BigEndian.Uint16(data[4:6])
	g.NextHdr = data[6]
	g.HopLimit = data[7]
	copy(g.SGID[:], data[8:24])
	copy(g.DGID[:], data[24:40])
	g.probs = 0
	end := grhLen + int(g.PayLen)
	if end > len(data) {
		df.SetTruncated()
		g.probs |= grhProbLength
		end = len(data)
	}
	g.Contents, g.Payload = data[:grhLen], data[grhLen:end]
	return nil
}

// VisitFields reports the GRH fields in wire order.
func (g *GRH) VisitFields(v field.Visitor) {
	v.Uint(fGRHIPVer, uint64(g.IPVer))
	v.Uint(fGRHTClass, uint64(g.TClass))
	v.Uint(fGRHFlowLabel, uint64(g.FlowLabel))
	v.Uint(fGRHPayLen, uint64(g.PayLen))
	v.Uint(fGRHNxtHdr, uint64(g.NextHdr))
	v.Uint(fGRHHopLmt, uint64(g.HopLimit))
	v.Addr(fGRHSGID, g.SrcGID())
	v.Addr(fGRHDGID, g.DstGID())
}

// AppendFindings appends what the GRH noticed.
func (g *GRH) AppendFindings(dst []finding.Finding) []finding.Finding {
	if g.probs&grhProbLength != 0 {
		dst = append(dst, newFinding(CodeLengthMismatch, finding.SeverityError, "grh", 4, "IBTA vol. 1 §8.3",
			"PayLen %d runs past the %d captured octets after the GRH", g.PayLen, len(g.Payload)))
	}
	return dst
}

// SerializeTo prepends the GRH. With FixLengths PayLen becomes the length of
// what b holds (BTH … ICRC); with ComputeChecksums the ICRC of the IBA
// packet after it is computed in place (RoCEv1; native IB recomputes the
// same value in LRH.SerializeTo).
func (g *GRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		g.PayLen = uint16(len(b.Bytes()))
	}
	h, err := b.PrependBytes(grhLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(h, uint32(g.IPVer)<<28|uint32(g.TClass)<<20|g.FlowLabel&0xfffff)
	binary.BigEndian.PutUint16(h[4:], g.PayLen)
	h[6], h[7] = g.NextHdr, g.HopLimit
	copy(h[8:24], g.SGID[:])
	copy(h[24:40], g.DGID[:])
	if opts.ComputeChecksums && g.NextHdr == GRHNextHeaderIBA {
		pkt := b.Bytes()
		if _, computed, ok := CheckRoCEv1ICRC(pkt); ok {
			binary.BigEndian.PutUint32(pkt[grhLen+int(g.PayLen)-icrcLen:], computed)
		}
	}
	return nil
}
