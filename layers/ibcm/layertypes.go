package ibcm

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Layer type numbers: this package owns 1800–1849 of gopacket's fast range
// (docs/architecture.md).
var (
	LayerTypeLRH          = gopacket.RegisterLayerType(1800, gopacket.LayerTypeMetadata{Name: "LRH", Decoder: gopacket.DecodeFunc(decodeLRH)})
	LayerTypeGRH          = gopacket.RegisterLayerType(1801, gopacket.LayerTypeMetadata{Name: "GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	LayerTypeBTH          = gopacket.RegisterLayerType(1802, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeDETH         = gopacket.RegisterLayerType(1803, gopacket.LayerTypeMetadata{Name: "DETH", Decoder: gopacket.DecodeFunc(decodeStandalone(func() decodingLayer { return &DETH{} }))})
	LayerTypeRETH         = gopacket.RegisterLayerType(1804, gopacket.LayerTypeMetadata{Name: "RETH", Decoder: gopacket.DecodeFunc(decodeStandalone(func() decodingLayer { return &RETH{} }))})
	LayerTypeAETH         = gopacket.RegisterLayerType(1805, gopacket.LayerTypeMetadata{Name: "AETH", Decoder: gopacket.DecodeFunc(decodeStandalone(func() decodingLayer { return &AETH{} }))})
	LayerTypeIETH         = gopacket.RegisterLayerType(1806, gopacket.LayerTypeMetadata{Name: "IETH", Decoder: gopacket.DecodeFunc(decodeStandalone(func() decodingLayer { return &IETH{} }))})
	LayerTypeImmDt        = gopacket.RegisterLayerType(1807, gopacket.LayerTypeMetadata{Name: "ImmDt", Decoder: gopacket.DecodeFunc(decodeStandalone(func() decodingLayer { return &ImmDt{} }))})
	LayerTypeMAD          = gopacket.RegisterLayerType(1808, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeMAD)})
	LayerTypeCM           = gopacket.RegisterLayerType(1809, gopacket.LayerTypeMetadata{Name: "CM", Decoder: gopacket.DecodeFunc(decodeCMAlone)})
	LayerTypeERF          = gopacket.RegisterLayerType(1810, gopacket.LayerTypeMetadata{Name: "ERF", Decoder: gopacket.DecodeFunc(decodeERF)})
	LayerTypeAtomicETH    = gopacket.RegisterLayerType(1811, gopacket.LayerTypeMetadata{Name: "AtomicETH", Decoder: gopacket.DecodeFunc(decodeStandalone(func() decodingLayer { return &AtomicETH{} }))})
	LayerTypeAtomicAckETH = gopacket.RegisterLayerType(1812, gopacket.LayerTypeMetadata{Name: "AtomicAckETH", Decoder: gopacket.DecodeFunc(decodeStandalone(func() decodingLayer { return &AtomicAckETH{} }))})
)

const (
	// RoCEv2Port is the IANA UDP destination port of RoCEv2.
	RoCEv2Port = 4791
	// EtherTypeRoCEv1 is the ethertype of RoCEv1 (IBTA annex A16).
	EtherTypeRoCEv1 layers.EthernetType = 0x8915
	// LinkTypeInfiniBand is LINKTYPE_INFINIBAND: frames start with the LRH.
	LinkTypeInfiniBand layers.LinkType = 247
	// LinkTypeERF is LINKTYPE_ERF (Endace ERF records, ibdump's format).
	LinkTypeERF layers.LinkType = 197
)

func init() {
	layers.RegisterUDPPortLayerType(layers.UDPPort(RoCEv2Port), LayerTypeBTH)
	layers.EthernetTypeMetadata[EtherTypeRoCEv1] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeGRH), Name: "RoCEv1", LayerType: LayerTypeGRH}
	layers.LinkTypeMetadata[LinkTypeInfiniBand] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeLRH), Name: "InfiniBand", LayerType: LayerTypeLRH}
	layers.LinkTypeMetadata[LinkTypeERF] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeERF), Name: "ERF", LayerType: LayerTypeERF}
}

// RegisterRoCEPort makes UDP port p decode as RoCEv2 (a BTH follows the UDP
// header), in addition to 4791, which stays registered. Call it before
// decoding; it is not safe to call concurrently with decoding.
func RegisterRoCEPort(p uint16) {
	layers.RegisterUDPPortLayerType(layers.UDPPort(p), LayerTypeBTH)
}

// decodingLayer is what every layer of this package implements.
type decodingLayer interface {
	gopacket.DecodingLayer
	gopacket.Layer
}

// decodeStandalone decodes a layer met on its own (outside the BTH chain,
// which decodeBTH walks itself).
func decodeStandalone(newLayer func() decodingLayer) func([]byte, gopacket.PacketBuilder) error {
	return func(data []byte, p gopacket.PacketBuilder) error {
		l := newLayer()
		if err := l.DecodeFromBytes(data, p); err != nil {
			return err
		}
		p.AddLayer(l)
		return p.NextDecoder(l.NextLayerType())
	}
}
