package dissect

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// commonHeaders are the layers of the headers that come before the RDMA
// ones: Ethernet, Linux cooked capture or IPoIB, 802.1Q and 802.1ad tags, IPv4,
// IPv6, UDP and TCP, and the encapsulations of mirrored frames (GRE,
// ERSPAN, VXLAN). headerWalk decodes into them. A Dissector has its own
// (its Records point to them), and Ahead's hook another (it runs on the
// reading goroutine). The headers of a frame inside an encapsulation
// decode into another commonHeaders (tunnel), made when first needed.
type commonHeaders struct {
	eth   Ethernet
	sll   SLL
	ipoib IPoIBLink
	// vlan holds stacked tags (802.1ad service tag, 802.1Q customer tag),
	// outermost first, each its own layer value.
	vlan [maxVLANTags]VLAN
	ip4  IPv4
	ip6  IPv6
	udp  UDP
	tcp  TCP

	gre    GRE
	erspan ERSPAN
	vxlan  VXLAN
	// inner holds the headers of the frame an encapsulation carries, depth
	// the encapsulations around these (tunnel); ents are the layer entries
	// of an inner one's headers (for the Dissector's decodeLayers, as its
	// preEnts are of its own).
	inner *commonHeaders
	depth int
	ents  *[numKinds]layerEntry
}

// tunnel returns the commonHeaders the frame inside an encapsulation
// decodes into (made on first use, with h's RoCE ports and names), nil
// below maxTunnels encapsulations.
func (h *commonHeaders) tunnel() *commonHeaders {
	if h.inner == nil {
		if h.depth >= maxTunnels {
			return nil
		}
		in := &commonHeaders{depth: h.depth + 1, ents: new([numKinds]layerEntry)}
		in.udp.roce, in.ip4.hosts, in.ip6.hosts = h.udp.roce, h.ip4.hosts, h.ip6.hosts
		for _, k := range walkedKinds {
			l := in.layer(k)
			in.ents[k] = layerEntry{l: l.(field.Layer), dl: l, kind: kindOther}
		}
		h.inner = in
	}
	return h.inner
}

// maxVLANTags is the number of stacked VLAN tags decoded; a frame with
// more is reported malformed.
const maxVLANTags = 4

// errTooManyTags is the walk's error for a frame with more than maxVLANTags tags.
var errTooManyTags = fmt.Errorf("more than %d stacked VLAN tags", maxVLANTags)

// header names one of the commonHeaders, as headerWalk reports them.
type header uint8

const (
	hdrEthernet header = iota
	hdrSLL
	hdrIPoIB
	hdrVLAN // the outermost tag; hdrVLAN+i is tag i
	hdrIPv4 = hdrVLAN + maxVLANTags
	hdrIPv6 = hdrIPv4 + 1
	hdrUDP  = hdrIPv4 + 2
	hdrTCP  = hdrIPv4 + 3

	numHeaders = hdrIPv4 + 4
)

// The encapsulations, numbered after the IB layers a predecoded frame
// holds (ahead.go): a predecoded frame has none, and its slot's tables of
// kinds stay as short.
const (
	hdrGRE = numPredecoded + iota
	hdrERSPAN
	hdrVXLAN

	// numKinds numbers the headers and the predecoded IB layers.
	numKinds
)

// walkedKinds are the kinds of the headers headerWalk decodes.
var walkedKinds = func() (ks []header) {
	for k := range numHeaders {
		ks = append(ks, header(k))
	}
	return append(ks, hdrGRE, hdrERSPAN, hdrVXLAN)
}()

// headerTypes are the gopacket layer types of the headers (by kind).
var headerTypes = func() (t [numKinds]gopacket.LayerType) {
	t[hdrEthernet], t[hdrSLL], t[hdrIPoIB] = layers.LayerTypeEthernet, layers.LayerTypeLinuxSLL, LayerTypeIPoIBLink
	for i := range maxVLANTags {
		t[hdrVLAN+header(i)] = layers.LayerTypeDot1Q
	}
	t[hdrIPv4], t[hdrIPv6], t[hdrUDP], t[hdrTCP] = layers.LayerTypeIPv4, layers.LayerTypeIPv6, layers.LayerTypeUDP, layers.LayerTypeTCP
	t[hdrGRE], t[hdrERSPAN], t[hdrVXLAN] = layers.LayerTypeGRE, layers.LayerTypeERSPANII, layers.LayerTypeVXLAN
	return t
}()

// layer returns the layer of header k.
func (h *commonHeaders) layer(k header) decodingLayer {
	switch {
	case k == hdrEthernet:
		return &h.eth
	case k == hdrSLL:
		return &h.sll
	case k == hdrIPoIB:
		return &h.ipoib
	case k < hdrIPv4:
		return &h.vlan[k-hdrVLAN]
	case k == hdrIPv4:
		return &h.ip4
	case k == hdrIPv6:
		return &h.ip6
	case k == hdrUDP:
		return &h.udp
	case k == hdrTCP:
		return &h.tcp
	case k == hdrGRE:
		return &h.gre
	case k == hdrERSPAN:
		return &h.erspan
	}
	return &h.vxlan
}

// isHeader reports whether layer type t is one of the common headers.
func isHeader(t gopacket.LayerType) bool {
	return uint(t) < uint(len(headerTab)) && headerTab[t]
}

// headerTab marks the layer types of the common headers (below
// maxCachedLayerType: gopacket's and this project's are): a table read in
// place of a switch the compiler made a search of several compares.
var headerTab = func() (tab [maxCachedLayerType]bool) {
	for _, t := range []gopacket.LayerType{layers.LayerTypeEthernet, layers.LayerTypeLinuxSLL, layers.LayerTypeLinuxSLL2,
		LayerTypeIPoIBLink, layers.LayerTypeDot1Q, layers.LayerTypeIPv4, layers.LayerTypeIPv6, layers.LayerTypeUDP, layers.LayerTypeTCP,
		layers.LayerTypeGRE, layers.LayerTypeERSPANII, LayerTypeERSPANIII, layers.LayerTypeVXLAN} {
		tab[t] = true
	}
	return tab
}()

// layerFor returns the layer that decodes layer type t, nil when t is not
// a common header.
func (h *commonHeaders) layerFor(t gopacket.LayerType) field.Layer {
	switch t {
	case layers.LayerTypeEthernet:
		return &h.eth
	case layers.LayerTypeLinuxSLL, layers.LayerTypeLinuxSLL2:
		return &h.sll
	case LayerTypeIPoIBLink:
		return &h.ipoib
	case layers.LayerTypeDot1Q:
		return &h.vlan[0]
	case layers.LayerTypeIPv4:
		return &h.ip4
	case layers.LayerTypeIPv6:
		return &h.ip6
	case layers.LayerTypeUDP:
		return &h.udp
	case layers.LayerTypeTCP:
		return &h.tcp
	case layers.LayerTypeGRE:
		return &h.gre
	case layers.LayerTypeERSPANII, LayerTypeERSPANIII:
		return &h.erspan
	case layers.LayerTypeVXLAN:
		return &h.vxlan
	}
	return nil
}

// headerWalk decodes the common headers of a frame (from the link layer
// linkStart names) as gopacket's
// DecodingLayerParser does (each layer's payload goes to the layer its
// NextLayerType names), by direct calls: an interface call and a table
// lookup per layer were most of the decode loop's cost. The Dissector's
// decoding and Ahead's hook walk the headers with it.
type headerWalk struct {
	h  *commonHeaders
	df gopacket.DecodeFeedback
	// until is a common header the walk stops before (0: none).
	until gopacket.LayerType

	// Set by walk: the headers decoded (n) and the last one (in cur: h, or
	// the inner headers of an encapsulated frame), the frame
	// offset of the last IP header (-1: none) and whether it is IPv6;
	// done when the last header decoded has no payload. (Where decoding
	// goes on and the error are walk's results: returned in registers,
	// not stored here behind write barriers.)
	n    int
	last header
	cur  *commonHeaders
	ip   int
	v6   bool
	done bool
}

// enter is the walk's step into the frame an encapsulation header (of h's)
// carries, whose first layer is t: the headers to decode it into (h's
// inner ones), no VLAN tags yet, and t; h and the payload layer type when
// t is no common header or the encapsulations nest too deep.
//
//go:noinline
func enter(h *commonHeaders, t gopacket.LayerType) (*commonHeaders, int, gopacket.LayerType) {
	if !isHeader(t) {
		return h, 0, t
	}
	in := h.tunnel()
	if in == nil {
		return h, 0, gopacket.LayerTypePayload
	}
	return in, 0, t
}

// walk decodes the headers from layer type t on (data: its bytes, inside
// rec.Data) and adds each to rec. It stops at the first layer type that is
// not a common header (or is until), after a header with no payload, or on
// a decoding error, and returns where decoding goes on (the next layer's
// type and bytes) and the error.
func (w *headerWalk) walk(rec *Record, t gopacket.LayerType, data []byte) (gopacket.LayerType, []byte, error) {
	// Each case adds its layer itself: merging the layers' values after
	// the switch cost more than the decoding of some.
	h, df, until, frame := w.h, w.df, w.until, rec.Data
	n, ip, v6, last, tags := len(rec.Layers), -1, false, header(0), 0
	var err error
	// tun: the headers the last encapsulation header decoded into (the
	// walk goes on in its inner ones).
	var tun *commonHeaders
	// The RoCEv2 frame, Ethernet → IPv4 → UDP, by straight-line code: the
	// loop's dispatch per header was a visible share of the walk. What
	// follows (other headers, or a frame that is not that) is the loop's.
	if t == layers.LayerTypeEthernet && until != t {
		if err = h.eth.DecodeFromBytes(data, df); err != nil {
			goto out
		}
		rec.Add(&h.eth, offsetIn(frame, h.eth.Contents))
		last, data, t = hdrEthernet, h.eth.Payload, h.eth.NextLayerType()
		if len(data) == 0 {
			goto out
		}
		if t == layers.LayerTypeIPv4 && until != t {
			if err = h.ip4.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			ip, v6 = offsetIn(frame, h.ip4.Contents), false
			rec.Add(&h.ip4, ip)
			last, data, t = hdrIPv4, h.ip4.Payload, h.ip4.NextLayerType()
			if len(data) == 0 {
				goto out
			}
			if t == layers.LayerTypeUDP && until != t {
				if err = h.udp.DecodeFromBytes(data, df); err != nil {
					goto out
				}
				rec.Add(&h.udp, offsetIn(frame, h.udp.Contents))
				last, data, t = hdrUDP, h.udp.Payload, h.udp.NextLayerType()
				if len(data) == 0 {
					goto out
				}
			}
		}
	}
	// isHeader first: the switch is a search of several compares, and
	// most walks end here at the BTH.
	for t != until && isHeader(t) {
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
			last = hdrIPv6
			if err = h.ip6.passExt(df); err != nil {
				goto out
			}
			data, t = h.ip6.Payload, h.ip6.NextLayerType()
		case layers.LayerTypeDot1Q:
			if tags == maxVLANTags {
				err = errTooManyTags
				goto out
			}
			q := &h.vlan[tags]
			if err = q.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(q, offsetIn(frame, q.Contents))
			last, data, t = hdrVLAN+header(tags), q.Payload, q.NextLayerType()
			tags++
		case layers.LayerTypeLinuxSLL:
			if err = h.sll.decodeV1(data, df); err != nil {
				goto out
			}
			rec.Add(&h.sll, offsetIn(frame, h.sll.Contents))
			last, data, t = hdrSLL, h.sll.Payload, h.sll.NextLayerType()
		case layers.LayerTypeLinuxSLL2:
			if err = h.sll.decodeV2(data, df); err != nil {
				goto out
			}
			rec.Add(&h.sll, offsetIn(frame, h.sll.Contents))
			last, data, t = hdrSLL, h.sll.Payload, h.sll.NextLayerType()
		case LayerTypeIPoIBLink:
			if err = h.ipoib.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.ipoib, offsetIn(frame, h.ipoib.Contents))
			last, data, t = hdrIPoIB, h.ipoib.Payload, h.ipoib.NextLayerType()
		case layers.LayerTypeTCP:
			if err = h.tcp.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.tcp, offsetIn(frame, h.tcp.Contents))
			last, data, t = hdrTCP, h.tcp.Payload, h.tcp.NextLayerType()
		case layers.LayerTypeGRE:
			if err = h.gre.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.gre, offsetIn(frame, h.gre.Contents))
			last, data, t = hdrGRE, h.gre.Payload, h.gre.NextLayerType()
			tun, ip, v6 = h, -1, false
			if t != layers.LayerTypeERSPANII && t != LayerTypeERSPANIII {
				h, tags, t = enter(h, t)
			}
		case layers.LayerTypeERSPANII, LayerTypeERSPANIII:
			e := &h.erspan
			if err = e.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(e, offsetIn(frame, e.Contents))
			last, data, t = hdrERSPAN, e.Payload, e.NextLayerType()
			tun, ip, v6 = h, -1, false
			h, tags, t = enter(h, t)
		case layers.LayerTypeVXLAN:
			if err = h.vxlan.DecodeFromBytes(data, df); err != nil {
				goto out
			}
			rec.Add(&h.vxlan, offsetIn(frame, h.vxlan.Contents))
			last, data, t = hdrVXLAN, h.vxlan.Payload, h.vxlan.NextLayerType()
			tun, ip, v6 = h, -1, false
			h, tags, t = enter(h, t)
		default:
			goto out
		}
		if len(data) == 0 {
			break
		}
	}
out:
	w.n, w.last, w.ip, w.v6, w.cur = len(rec.Layers)-n, last, ip, v6, h
	if last >= hdrGRE {
		w.cur = tun
	}
	w.done = err == nil && len(data) == 0 && len(rec.Layers) > n
	return t, data, err
}
