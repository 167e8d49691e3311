package rpcrdma

import "github.com/gopacket/gopacket"

// Layer type numbers: this package owns 1880–1899 of gopacket's fast range
// (docs/architecture.md).
var (
	LayerTypeHeader = gopacket.RegisterLayerType(1880, gopacket.LayerTypeMetadata{Name: "RPCoRDMA", Decoder: gopacket.DecodeFunc(decodeHeader)})
	LayerTypeRPC    = gopacket.RegisterLayerType(1881, gopacket.LayerTypeMetadata{Name: "ONCRPC", Decoder: gopacket.DecodeFunc(decodeRPC)})
	LayerTypeNFS    = gopacket.RegisterLayerType(1882, gopacket.LayerTypeMetadata{Name: "NFS", Decoder: gopacket.DecodeFunc(decodeNFS)})
)
