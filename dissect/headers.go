package dissect

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// commonHeaders are the layers of the headers that come before the RDMA
// ones: Ethernet, 802.1Q tags, IPv4, IPv6, UDP and TCP. headerWalk decodes
// into them. A Dissector has its own (its Records point to them), and
// AheadICRC's hook another (it runs on the reading goroutine).
type commonHeaders struct {
	eth  Ethernet
	vlan VLAN
	ip4  IPv4
	ip6  IPv6
	udp  UDP
	tcp  TCP
}

// header names one of the commonHeaders, as headerWalk reports them.
type header uint8

const (
	hdrEthernet header = iota
	hdrVLAN
	hdrIPv4
	hdrIPv6
	hdrUDP
	hdrTCP
	numHeaders
)

// headerTypes are the gopacket layer types of the headers.
var headerTypes = [numHeaders]gopacket.LayerType{
	hdrEthernet: layers.LayerTypeEthernet,
	hdrVLAN:     layers.LayerTypeDot1Q,
	hdrIPv4:     layers.LayerTypeIPv4,
	hdrIPv6:     layers.LayerTypeIPv6,
	hdrUDP:      layers.LayerTypeUDP,
	hdrTCP:      layers.LayerTypeTCP,
}

// isHeader reports whether layer type t is one of the common headers.
func isHeader(t gopacket.LayerType) bool {
	switch t {
	case layers.LayerTypeEthernet, layers.LayerTypeDot1Q, layers.LayerTypeIPv4, layers.LayerTypeIPv6,
		layers.LayerTypeUDP, layers.LayerTypeTCP:
		return true
	}
	return false
}

// layerFor returns the layer that decodes layer type t, nil when t is not
// a common header.
func (h *commonHeaders) layerFor(t gopacket.LayerType) field.Layer {
	switch t {
	case layers.LayerTypeEthernet:
		return &h.eth
	case layers.LayerTypeDot1Q:
		return &h.vlan
	case layers.LayerTypeIPv4:
		return &h.ip4
	case layers.LayerTypeIPv6:
		return &h.ip6
	case layers.LayerTypeUDP:
		return &h.udp
	case layers.LayerTypeTCP:
		return &h.tcp
	}
	return nil
}

// headerWalk decodes the common headers of a frame as gopacket's
// DecodingLayerParser does (each layer's payload goes to the layer its
// NextLayerType names), by direct calls: an interface call and a table
// lookup per layer were most of the decode loop's cost. The Dissector's
// decoding and AheadICRC walk the headers with it.
type headerWalk struct {
	h  *commonHeaders
	df gopacket.DecodeFeedback
	// until is a common header the walk stops before (0: none).
	until gopacket.LayerType

	// Set by walk: where decoding goes on (the next layer's type and
	// bytes), the headers decoded (n) and the last one, the frame offset
	// of the last IP header (-1: none) and whether it is IPv6; done when
	// the last header decoded has no payload, err when a header failed.
	t    gopacket.LayerType
	data []byte
	n    int
	last header
	ip   int
	v6   bool
	done bool
	err  error
}

// walk decodes the headers from layer type t on (data: its bytes, inside
// rec.Data) and adds each to rec. It stops at the first layer type that is
// not a common header (or is until), after a header with no payload, or on
// a decoding error.
func (w *headerWalk) walk(rec *Record, t gopacket.LayerType, data []byte) {
	// Each case adds its layer itself: merging the layers' values after
	// the switch cost more than the decoding of some.
	h, df, until, frame := w.h, w.df, w.until, rec.Data
	n, ip, v6, last := len(rec.Layers), -1, false, header(0)
	var err error
	for t != until {
		switch t {
		case layers.LayerTypeEthernet:
			if err = h.eth.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.eth, offsetIn(frame, h.eth.Contents))
			last, data, t = hdrEthernet, h.eth.Payload, h.eth.NextLayerType()
		case layers.LayerTypeIPv4:
			if err = h.ip4.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			ip, v6 = offsetIn(frame, h.ip4.Contents), false
			rec.Add(&h.ip4, ip)
			last, data, t = hdrIPv4, h.ip4.Payload, h.ip4.NextLayerType()
		case layers.LayerTypeUDP:
			if err = h.udp.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.udp, offsetIn(frame, h.udp.Contents))
			last, data, t = hdrUDP, h.udp.Payload, h.udp.NextLayerType()
		case layers.LayerTypeIPv6:
			if err = h.ip6.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			ip, v6 = offsetIn(frame, h.ip6.Contents), true
			rec.Add(&h.ip6, ip)
			last, data, t = hdrIPv6, h.ip6.Payload, h.ip6.NextLayerType()
		case layers.LayerTypeDot1Q:
			if err = h.vlan.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.vlan, offsetIn(frame, h.vlan.Contents))
			last, data, t = hdrVLAN, h.vlan.Payload, h.vlan.NextLayerType()
		case layers.LayerTypeTCP:
			if err = h.tcp.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.tcp, offsetIn(frame, h.tcp.Contents))
			last, data, t = hdrTCP, h.tcp.Payload, h.tcp.NextLayerType()
		default:
			goto out
		}
		if len(data) == 0 {
			break
		}
	}
out:
	w.t, w.data, w.n, w.last, w.ip, w.v6, w.err = t, data, len(rec.Layers)-n, last, ip, v6, err
	w.done = err == nil && len(data) == 0 && len(rec.Layers) > n
}
