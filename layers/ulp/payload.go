package ulp

import (
	"errors"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// Payload is a complete RDMA Send whose upper-layer protocol is not
// decoded: the bytes, and the service's name when the connection's setup
// named one this package has no decoder for (or when a decoder failed).
type Payload struct {
	layers.BaseLayer
	// Service names the connection's service ("" when not known).
	Service string
}

var (
	ProtoPayload    = field.NewProto("send", "RDMA Send payload")
	fPayloadService = ProtoPayload.String("send.service", "Service (from the connection's setup)")
	fPayloadLength  = ProtoPayload.Uint("send.length", 32, "Length").WithUnit("bytes")
	fPayloadData    = ProtoPayload.Bytes("send.payload", "Payload")
)

func (p *Payload) Proto() *field.Proto { return ProtoPayload }

func (p *Payload) VisitFields(v field.Visitor) {
	if p.Service != "" {
		v.String(fPayloadService, p.Service)
	}
	v.Uint(fPayloadLength, uint64(len(p.Contents)))
	v.Bytes(fPayloadData, p.Contents)
}

// AppendSummary appends "Send payload 4 octets" (with the service's name
// when known).
func (p *Payload) AppendSummary(b []byte) []byte {
	if p.Service != "" {
		b = append(append(b, p.Service...), ' ')
	}
	b = strconv.AppendInt(append(b, "Send payload "...), int64(len(p.Contents)), 10)
	return append(b, " octets"...)
}

// DecodeFromBytes takes all of data (any length, even 0, is a payload).
func (p *Payload) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	p.BaseLayer = layers.BaseLayer{Contents: data}
	return nil
}

func (p *Payload) LayerType() gopacket.LayerType     { return LayerTypePayload }
func (p *Payload) CanDecode() gopacket.LayerClass    { return LayerTypePayload }
func (p *Payload) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// SerializeTo writes the payload's bytes.
func (p *Payload) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	w, err := b.PrependBytes(len(p.Contents))
	if err != nil {
		return err
	}
	copy(w, p.Contents)
	return nil
}

// ShortError is a decode error: the Send is shorter than the fixed header
// of what its connection carries.
type ShortError struct {
	What       string
	Need, Have int
}

func (e *ShortError) Error() string {
	return e.What + ": need " + strconv.Itoa(e.Need) + " octets, have " + strconv.Itoa(e.Have)
}

func errShort(what string, n, have int) error { return &ShortError{What: what, Need: n, Have: have} }

// IsShort reports whether err is a ShortError.
func IsShort(err error) bool {
	var s *ShortError
	return errors.As(err, &s)
}
