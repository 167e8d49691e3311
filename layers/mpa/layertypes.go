package mpa

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
)

// Layer type numbers: this package owns 1850–1879 of gopacket's fast range
// (docs/architecture.md).
var (
	LayerTypeFrame = gopacket.RegisterLayerType(1850, gopacket.LayerTypeMetadata{Name: "MPA", Decoder: gopacket.DecodeFunc(decodeFrame)})
	LayerTypeFPDU  = gopacket.RegisterLayerType(1851, gopacket.LayerTypeMetadata{Name: "FPDU", Decoder: layerdec.Func[FPDU]()})
	LayerTypeDDP   = gopacket.RegisterLayerType(1852, gopacket.LayerTypeMetadata{Name: "DDP", Decoder: gopacket.DecodeFunc(decodeDDP)})
	LayerTypeRDMAP = gopacket.RegisterLayerType(1853, gopacket.LayerTypeMetadata{Name: "RDMAP", Decoder: layerdec.Func[RDMAP]()})
)
