package rpcrdma

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
)

// Layer type numbers: this package owns 1880–1899 of gopacket's fast range
// (docs/architecture.md).
var (
	LayerTypeHeader = gopacket.RegisterLayerType(1880, gopacket.LayerTypeMetadata{Name: "RPCoRDMA", Decoder: layerdec.Func[Header]()})
	LayerTypeRPC    = gopacket.RegisterLayerType(1881, gopacket.LayerTypeMetadata{Name: "ONCRPC", Decoder: layerdec.Func[RPC]()})
	LayerTypeNFS    = gopacket.RegisterLayerType(1882, gopacket.LayerTypeMetadata{Name: "NFS", Decoder: gopacket.DecodeFunc(decodeNFS)})
)
