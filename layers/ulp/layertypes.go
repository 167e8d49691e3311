package ulp

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
)

// Layer type numbers (the project's range for this package is 1920–1939).
var (
	LayerTypePayload = gopacket.RegisterLayerType(1920, gopacket.LayerTypeMetadata{Name: "SendPayload", Decoder: layerdec.Func[Payload]()})
	LayerTypeSMBD    = gopacket.RegisterLayerType(1921, gopacket.LayerTypeMetadata{Name: "SMBDirect", Decoder: layerdec.Func[SMBD]()})
	LayerTypeISER    = gopacket.RegisterLayerType(1922, gopacket.LayerTypeMetadata{Name: "iSER", Decoder: layerdec.Func[ISER]()})
	LayerTypeNVMe    = gopacket.RegisterLayerType(1923, gopacket.LayerTypeMetadata{Name: "NVMeoF", Decoder: layerdec.Func[NVMe]()})
	LayerTypeIPoIB   = gopacket.RegisterLayerType(1924, gopacket.LayerTypeMetadata{Name: "IPoIBCM", Decoder: layerdec.Func[IPoIB]()})
)
