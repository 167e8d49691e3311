package mpa

import "fmt"

// DecodeError is returned when input is too short for a field. It names the
// layer, the field being read, its offset from the start of the layer and
// how many octets were needed and available there.
type DecodeError struct {
	Layer  string // "DDP", "RDMAP" …
	Field  string // "tagged header", "Terminate Control" …
	Offset int    // from the layer's first octet
	Need   int    // octets the field needs at Offset
	Have   int    // octets available at Offset
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %s: need %d octets at offset %d, have %d", e.Layer, e.Field, e.Need, e.Offset, e.Have)
}

// short builds a DecodeError for a field of need octets at off when only
// have octets are left there (a negative have counts as none).
func short(layer, field string, off, need, have int) error {
	return &DecodeError{Layer: layer, Field: field, Offset: off, Need: need, Have: max(have, 0)}
}
