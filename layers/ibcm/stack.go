package ibcm

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Stack holds one value of every layer of this package, linked so that a
// gopacket.DecodingLayerParser decodes a whole IB packet: extension headers
// follow their BTH's opcode chain and the CM takes its attribute ID from
// the MAD. Reuse one Stack per parser; decoding allocates nothing.
type Stack struct {
	ERF          ERF
	LRH          LRH
	GRH          GRH
	BTH          BTH
	DETH         DETH
	RETH         RETH
	AETH         AETH
	IETH         IETH
	ImmDt        ImmDt
	AtomicETH    AtomicETH
	AtomicAckETH AtomicAckETH
	MAD          MAD
	CM           CM
}

// NewStack returns a linked Stack.
func NewStack() *Stack {
	s := &Stack{}
	s.Link()
	return s
}

// Link links the Stack's layers (each extension header to the BTH, the CM
// to the MAD), as NewStack does; again after a layer value was copied in
// from another Stack, whose links it brought along.
func (s *Stack) Link() {
	s.DETH.bth, s.RETH.bth, s.AETH.bth, s.IETH.bth = &s.BTH, &s.BTH, &s.BTH, &s.BTH
	s.ImmDt.bth, s.AtomicETH.bth, s.AtomicAckETH.bth = &s.BTH, &s.BTH, &s.BTH
	s.CM.mad = &s.MAD
}

// Follow links an extension header to the BTH b it follows, as Link links
// a Stack's, for a caller that keeps values of its own.
func (e *ext) Follow(b *BTH) { e.bth = b }

// DecodingLayers returns the Stack's layers for
// gopacket.NewDecodingLayerParser (after the caller's Ethernet, Dot1Q,
// IPv4, IPv6, UDP …).
func (s *Stack) DecodingLayers() []gopacket.DecodingLayer {
	return []gopacket.DecodingLayer{&s.ERF, &s.LRH, &s.GRH, &s.BTH, &s.DETH, &s.RETH, &s.AETH,
		&s.IETH, &s.ImmDt, &s.AtomicETH, &s.AtomicAckETH, &s.MAD, &s.CM}
}

// SerializeRoCEv2 serializes a RoCEv2 packet (Ethernet [Dot1Q] IPv4|IPv6
// UDP BTH …) with a correct ICRC: it serializes once to compute the ICRC
// over the final IP and UDP headers, stores it in the BTH and serializes
// again, so the UDP checksum (when computed) covers the final ICRC.
func SerializeRoCEv2(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions, ls ...gopacket.SerializableLayer) error {
	ipAt, v6 := -1, false
	var bth *BTH
	for i, l := range ls {
		switch x := l.(type) {
		case *layers.IPv4:
			ipAt = i
		case *layers.IPv6:
			ipAt, v6 = i, true
		case *BTH:
			bth = x
		}
	}
	if ipAt < 0 || bth == nil {
		return fmt.Errorf("SerializeRoCEv2: need an IPv4 or IPv6 layer and a BTH")
	}
	if err := gopacket.SerializeLayers(buf, opts, ls[ipAt:]...); err != nil {
		return err
	}
	_, computed, ok := CheckRoCEv2ICRC(buf.Bytes(), v6)
	if !ok {
		return fmt.Errorf("SerializeRoCEv2: the serialized packet is not IP/UDP/BTH")
	}
	bth.ICRC = computed
	return gopacket.SerializeLayers(buf, opts, ls...)
}
