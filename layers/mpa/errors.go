package mpa

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
)

// DecodeError is returned when input is too short for a field: the layer,
// the field, its offset from the layer's first octet, the octets needed
// and those left there (the same type as ibcm's).
type DecodeError = layerdec.DecodeError

// truncated marks the input truncated and returns the DecodeError for a
// field of need octets at off when only have octets are left there.
func truncated(df gopacket.DecodeFeedback, layer, field string, off, need, have int) error {
	return layerdec.Truncated(df, layer, field, off, need, have)
}
