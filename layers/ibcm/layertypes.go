package ibcm

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
)

// Layer type numbers: this package owns 1800–1849 of gopacket's fast range
// (docs/architecture.md).
var (
	LayerTypeLRH          = gopacket.RegisterLayerType(1800, gopacket.LayerTypeMetadata{Name: "LRH", Decoder: layerdec.Func[LRH]()})
	LayerTypeGRH          = gopacket.RegisterLayerType(1801, gopacket.LayerTypeMetadata{Name: "GRH", Decoder: layerdec.Func[GRH]()})
	LayerTypeBTH          = gopacket.RegisterLayerType(1802, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeDETH         = gopacket.RegisterLayerType(1803, gopacket.LayerTypeMetadata{Name: "DETH", Decoder: layerdec.Func[DETH]()})
	LayerTypeRETH         = gopacket.RegisterLayerType(1804, gopacket.LayerTypeMetadata{Name: "RETH", Decoder: layerdec.Func[RETH]()})
	LayerTypeAETH         = gopacket.RegisterLayerType(1805, gopacket.LayerTypeMetadata{Name: "AETH", Decoder: layerdec.Func[AETH]()})
	LayerTypeIETH         = gopacket.RegisterLayerType(1806, gopacket.LayerTypeMetadata{Name: "IETH", Decoder: layerdec.Func[IETH]()})
	LayerTypeImmDt        = gopacket.RegisterLayerType(1807, gopacket.LayerTypeMetadata{Name: "ImmDt", Decoder: layerdec.Func[ImmDt]()})
	LayerTypeMAD          = gopacket.RegisterLayerType(1808, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeMAD)})
	LayerTypeCM           = gopacket.RegisterLayerType(1809, gopacket.LayerTypeMetadata{Name: "CM", Decoder: gopacket.DecodeFunc(decodeCMAlone)})
	LayerTypeERF          = gopacket.RegisterLayerType(1810, gopacket.LayerTypeMetadata{Name: "ERF", Decoder: layerdec.Func[ERF]()})
	LayerTypeAtomicETH    = gopacket.RegisterLayerType(1811, gopacket.LayerTypeMetadata{Name: "AtomicETH", Decoder: layerdec.Func[AtomicETH]()})
	LayerTypeAtomicAckETH = gopacket.RegisterLayerType(1812, gopacket.LayerTypeMetadata{Name: "AtomicAckETH", Decoder: layerdec.Func[AtomicAckETH]()})
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
		DecodeWith: LayerTypeGRH, Name: "RoCEv1", LayerType: LayerTypeGRH}
	layers.LinkTypeMetadata[LinkTypeInfiniBand] = layers.EnumMetadata{
		DecodeWith: LayerTypeLRH, Name: "InfiniBand", LayerType: LayerTypeLRH}
	layers.LinkTypeMetadata[LinkTypeERF] = layers.EnumMetadata{
		DecodeWith: LayerTypeERF, Name: "ERF", LayerType: LayerTypeERF}
}

// RegisterRoCEPort makes UDP port p decode as RoCEv2 (a BTH follows the UDP
// header), in addition to 4791, which stays registered. Call it before
// decoding; it is not safe to call concurrently with decoding.
func RegisterRoCEPort(p uint16) {
	layers.RegisterUDPPortLayerType(layers.UDPPort(p), LayerTypeBTH)
}
