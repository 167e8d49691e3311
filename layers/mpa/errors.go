package mpa

import "github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"

// DecodeError is returned when input is too short for a field: the layer,
// the field, its offset from the layer's first octet, the octets needed
// and those left there (the same type as ibcm's).
type DecodeError = layerdec.DecodeError
