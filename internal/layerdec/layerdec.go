// Package layerdec holds the gopacket decoder that every layer package
// registers for a layer met on its own (gopacket.NewPacket starting at it,
// or reached through another layer's NextLayerType): the layer packages'
// one copy of "decode, add, hand the payload on".
package layerdec

import "github.com/gopacket/gopacket"

// Layer is what the pointer type of a layer implements.
type Layer[T any] interface {
	*T
	gopacket.DecodingLayer
	gopacket.Layer
}

// Func returns the decoder of layer type T: a new T decodes the data, joins
// the packet, and its payload goes to the decoder of its NextLayerType.
func Func[T any, P Layer[T]]() gopacket.DecodeFunc {
	return func(data []byte, p gopacket.PacketBuilder) error {
		l := P(new(T))
		if err := l.DecodeFromBytes(data, p); err != nil {
			return err
		}
		p.AddLayer(l)
		return p.NextDecoder(l.NextLayerType())
	}
}
