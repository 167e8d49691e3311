// Package layerdec holds what the layer packages (ibcm, mpa) share about
// decoding: the error for input too short for a field, and the gopacket
// decoder every layer package registers for a layer met on its own
// (gopacket.NewPacket starting at it, or reached through another layer's
// NextLayerType).
package layerdec

import (
	"fmt"

	"github.com/gopacket/gopacket"
)

// DecodeError is returned when input is too short for a field. It names the
// layer, the field being read, its offset from the start of the layer and
// how many octets were needed and available there.
type DecodeError struct {
	Layer  string // "BTH", "REQ", "DDP" …
	Field  string // "DestQP", "private data", "Terminate Control" …
	Offset int    // from the layer's first octet
	Need   int    // octets the field needs at Offset
	Have   int    // octets available at Offset
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %s: need %d octets at offset %d, have %d", e.Layer, e.Field, e.Need, e.Offset, e.Have)
}

// Truncated tells df the input is cut short and returns the DecodeError
// for a field of need octets at off when only have octets are left there
// (a negative have counts as none).
func Truncated(df gopacket.DecodeFeedback, layer, field string, off, need, have int) error {
	df.SetTruncated()
	return &DecodeError{Layer: layer, Field: field, Offset: off, Need: need, Have: max(have, 0)}
}

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
