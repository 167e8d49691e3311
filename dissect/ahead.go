package dissect

import (
	"unsafe"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// What a source.Ahead computed by Ahead holds: the ICRC of the IB
// transport packet whose first header (IPv4, IPv6, GRH, LRH) is at At.
const (
	aheadNone uint8 = iota
	aheadRoCEv2IPv4
	aheadRoCEv2IPv6
	aheadRoCEv1
	aheadIB
)

// Ahead returns a hook for source.NewPrefetch that does, on the reading
// goroutine, the per-frame work that needs nothing but the frame: the
// ICRC (a CRC-32 over the whole packet, about a fifth of the per-packet
// cost of "stats") of each frame that is RoCEv2 (the common headers,
// IPv4 or IPv6, UDP to or from one of the RoCE ports), RoCEv1 (Ethernet
// type 0x8915) or native InfiniBand (link type 247), in f.Ahead; and the
// decoding of the headers of the common frame, in f.Decoded (predecode),
// with its BTH's ICRC verdict.
// Both then run on a second core, and the Dissector's goroutine, the
// critical path, runs less code per packet.
//
// The Dissector uses the ICRC only for the same kind of packet with its
// first IB-covered header at the same offset its own decoding found, and
// computes it itself otherwise. opts are the Dissector's (its RoCE ports).
// The hook has state of its own: one hook per reading goroutine.
func Ahead(opts Options) func(*source.Frame) { return newAheadHook(opts).frame }

// newAheadHook returns Ahead's hook with its state.
func newAheadHook(opts Options) *aheadHook {
	a := &aheadHook{ring: new([source.InFlight]predecoded)}
	a.roce = rocePorts(opts)
	a.h.udp.roce = &a.roce
	for i := range a.ring {
		p := &a.ring[i]
		p.udp.roce = &a.roce
		p.aeth.Follow(&p.bth)
		p.reth.Follow(&p.bth)
		p.ieth.Follow(&p.bth)
	}
	// The headers are walked up to TCP (no ICRC after it).
	a.w = headerWalk{h: &a.h, df: &a.trunc, until: layers.LayerTypeTCP}
	return a
}

// aheadHook is Ahead's hook and its state.
type aheadHook struct {
	c     ibcm.ICRCChecker
	roce  portSet
	trunc truncFlag
	// ring holds the predecoded frames, the next one at
	// ring[seq%InFlight].
	ring *[source.InFlight]predecoded
	seq  uint
	// rare: the rare extension headers (ext), rareUsed when one was
	// decoded into them for the frame.
	rare     predecodedMore
	rareUsed bool
	// walk's: the headers of the frames predecode leaves.
	h   commonHeaders
	w   headerWalk
	rec Record
}

// truncFlag is a gopacket.DecodeFeedback that notes truncation.
type truncFlag bool

func (t *truncFlag) SetTruncated() { *t = true }

func (a *aheadHook) frame(f *source.Frame) {
	f.Ahead, f.Decoded = source.Ahead{}, nil
	if f.LinkType == source.LinkTypeInfiniBand {
		_, crc, ok := ibcm.CheckIBICRC(f.Data)
		f.Ahead = source.Ahead{Kind: aheadIB, OK: ok, CRC: crc}
		return
	}
	first, ok := linkStart(f.LinkType, f.Data)
	if !ok {
		return
	}
	// A panic in a decoder (the Dissector's decoding makes it an error)
	// leaves the frame to the Dissector.
	defer func() {
		if recover() != nil {
			f.Ahead, f.Decoded = source.Ahead{}, nil
		}
	}()
	if !a.predecode(f, first) {
		a.walk(f, first)
	}
}

// roceV2 sets the ICRC of the RoCEv2 packet whose IP header is at ip and
// whose IP datagram ends at end.
func (a *aheadHook) roceV2(f *source.Frame, ip, end int, v6 bool) {
	kind := aheadRoCEv2IPv4
	if v6 {
		kind = aheadRoCEv2IPv6
	}
	stored, crc, ok := a.c.CheckRoCEv2(f.Data[ip:], v6)
	f.Ahead = source.Ahead{Kind: kind, OK: ok, At: int32(ip), CRC: crc}
	if ok {
		f.Ahead.Stored, f.Ahead.End = stored, int32(end)
	}
}

// roceV1 sets the ICRC of the RoCEv1 packet whose GRH is at grh.
func (a *aheadHook) roceV1(f *source.Frame, grh int) {
	_, crc, ok := ibcm.CheckRoCEv1ICRC(f.Data[grh:])
	f.Ahead = source.Ahead{Kind: aheadRoCEv1, OK: ok, At: int32(grh), CRC: crc}
}

// walk finds the headers of a frame predecode left (from first,
// linkStart's layer) as the Dissector does, and computes the ICRC of an
// IB packet after them.
func (a *aheadHook) walk(f *source.Frame, first gopacket.LayerType) {
	data := f.Data
	rec, w, h := &a.rec, &a.w, &a.h
	rec.Reset()
	rec.Data = data
	next, rest, err := w.walk(rec, first, data)
	ip, v6 := w.ip, w.v6
	switch {
	case err != nil || w.done:
	case next == ibcm.LayerTypeBTH && ip >= 0:
		end := ip + int(h.ip4.Length)
		if v6 {
			end = ip + 40 + int(h.ip6.Length)
		}
		a.roceV2(f, ip, end, v6)
	case next == ibcm.LayerTypeGRH:
		a.roceV1(f, offsetIn(data, rest))
	}
}

// predecoded is one frame's layers as the reading goroutine decoded them
// (Ahead), for the Dissector to copy instead of decoding: frames whose
// whole chain is Ethernet or a Linux cooked header, VLAN tags, IPv4
// without options or IPv6 without a Hop-by-Hop header, UDP, and the BTH
// with its extension headers, each header once, decoded without error or
// truncation up to a payload no layer decodes (or to its end). Anything
// else (TCP, CM, RoCEv1, native IB …) the Dissector decodes itself.
//
// Only the gopacket values of the IP and UDP headers are kept: the
// Dissector's own hold its name resolution and RoCE ports.
type predecoded struct {
	predecodedLayers
	// Whole cache lines: the reading goroutine filling one slot then
	// takes no line the Dissector is reading in the one before.
	_ [(64 - unsafe.Sizeof(predecodedLayers{})%64) % 64]byte
}

// predecodedLayers are a predecoded frame's layers: those of the common
// RoCEv2 frame first, together (the fewer cache lines a slot spans, the
// fewer go from the reading core to the Dissector's), the others apart.
type predecodedLayers struct {
	frame int   // the frame's Number
	ip    int32 // the IP header's frame offset, -1: none
	v6    bool
	// plain: the first four layers are Ethernet, IPv4, UDP and the BTH
	// (the common RoCEv2 frame; IPv4 without options, so each at a fixed
	// offset).
	plain bool
	n     uint8 // layers, in kinds and offs (each kind at most once)
	kinds [numPredecoded]header
	// offs are the layers' frame offsets: each kind at most once, they
	// are within the first few hundred octets.
	offs [numPredecoded]uint16

	eth  Ethernet
	ip4  IPv4 // with no names: the Dissector's IPv4 has them
	udp  UDP  // with the hook's RoCE ports
	bth  ibcm.BTH
	aeth ibcm.AETH
	reth ibcm.RETH
	ieth ibcm.IETH
	// more, made for the slot when first needed, holds the other layers.
	more *predecodedMore
}

// predecodedMore are the layers of a predecoded frame other than those of
// the common RoCEv2 frame.
type predecodedMore struct {
	sll          SLL
	vlan         [maxVLANTags]VLAN
	ip6          IPv6
	deth         ibcm.DETH
	immDt        ibcm.ImmDt
	atomicETH    ibcm.AtomicETH
	atomicAckETH ibcm.AtomicAckETH
}

// moreLayers returns p.more, made if need be.
func (p *predecodedLayers) moreLayers() *predecodedMore {
	if p.more == nil {
		p.more = new(predecodedMore)
	}
	return p.more
}

// ext returns the value predecode decodes a rare extension header of kind
// k into (preDETH, preImmDt, preAtomicETH, preAtomicAckETH; the common
// ones are p's own): the hook's, following p's BTH, copied into p's more
// (rareToSlot) only when p is used, so that a slot's more is made for
// frames that need it and no others (a DETH most often starts a MAD, a
// frame left to the Dissector).
func (a *aheadHook) ext(p *predecoded, k header) decodingLayer {
	r := &a.rare
	var l interface {
		decodingLayer
		Follow(*ibcm.BTH)
	}
	switch k {
	case preDETH:
		l = &r.deth
	case preImmDt:
		l = &r.immDt
	case preAtomicETH:
		l = &r.atomicETH
	default:
		l = &r.atomicAckETH
	}
	l.Follow(&p.bth)
	a.rareUsed = true
	return l
}

// rareToSlot copies the rare extension headers of p's kinds from the hook's
// values (ext) into p's more.
func (a *aheadHook) rareToSlot(p *predecoded) {
	for _, k := range p.kinds[:p.n] {
		switch k {
		case preDETH:
			p.moreLayers().deth = a.rare.deth
		case preImmDt:
			p.moreLayers().immDt = a.rare.immDt
		case preAtomicETH:
			p.moreLayers().atomicETH = a.rare.atomicETH
		case preAtomicAckETH:
			p.moreLayers().atomicAckETH = a.rare.atomicAckETH
		}
	}
}

// The IB layers of a predecoded frame, numbered after the common headers.
const (
	preBTH = numHeaders + iota
	preDETH
	preRETH
	preAETH
	preIETH
	preImmDt
	preAtomicETH
	preAtomicAckETH

	numPredecoded
)

// predecodedTypes are the layer types of the IB layers predecode takes.
var predecodedTypes = [numPredecoded]gopacket.LayerType{
	preBTH: ibcm.LayerTypeBTH, preDETH: ibcm.LayerTypeDETH, preRETH: ibcm.LayerTypeRETH, preAETH: ibcm.LayerTypeAETH,
	preIETH: ibcm.LayerTypeIETH, preImmDt: ibcm.LayerTypeImmDt, preAtomicETH: ibcm.LayerTypeAtomicETH,
	preAtomicAckETH: ibcm.LayerTypeAtomicAckETH,
}

// predecodedKinds are the kinds of the IB layer types after the BTH's
// that predecode takes, by their number less the BTH's (0: not taken).
var predecodedKinds = func() (ks [16]header) {
	for k := preBTH + 1; k < numPredecoded; k++ {
		ks[predecodedTypes[k]-ibcm.LayerTypeBTH] = k // out of range: a panic at start
	}
	return ks
}()

// predecodedKind is the kind of IB layer type t, 0 if predecode does not
// take it.
func predecodedKind(t gopacket.LayerType) header {
	if i := uint(t - ibcm.LayerTypeBTH); i < uint(len(predecodedKinds)) {
		return predecodedKinds[i]
	}
	return 0
}

// decodable reports whether a Dissector decodes layer type t (it has a
// layer entry): decodeLayers stops quietly at any other.
func decodable(t gopacket.LayerType) bool {
	return int(t) >= 0 && int(t) < maxCachedLayerType && layerSlotTab[t] != 0
}

// predecode decodes the headers of a frame (from first, linkStart's
// layer) into the next ring slot, as the Dissector would, and points
// f.Decoded to the slot, when the frame is one predecoded takes (a RoCEv2
// packet); it computes the ICRC of a RoCEv2 or RoCEv1 packet. It reports
// false when it left a frame for walk to find an IB packet in: one cut
// short by the snap length, or with IPv4 options, an IPv6 Hop-by-Hop
// header or an IPoIB link header.
func (a *aheadHook) predecode(f *source.Frame, first gopacket.LayerType) bool {
	p := &a.ring[a.seq%source.InFlight]
	df, frame := &a.trunc, f.Data
	a.trunc = false
	t, data, n := first, frame, 0
	var link decodingLayer
	switch first {
	case layers.LayerTypeEthernet:
		link = &p.eth
		if p.eth.DecodeFromBytes(data, df) != nil {
			return !bool(a.trunc)
		}
		p.kinds[0] = hdrEthernet
	case layers.LayerTypeLinuxSLL, layers.LayerTypeLinuxSLL2:
		l := &p.moreLayers().sll
		link = l
		decode := l.decodeV1
		if first == layers.LayerTypeLinuxSLL2 {
			decode = l.decodeV2
		}
		if decode(data, df) != nil {
			return !bool(a.trunc)
		}
		p.kinds[0] = hdrSLL
	case layers.LayerTypeIPv4, layers.LayerTypeIPv6:
	default:
		return false
	}
	if link != nil {
		if t, data = link.NextLayerType(), link.LayerPayload(); a.trunc || len(data) == 0 {
			return !bool(a.trunc)
		}
		p.offs[0], n = 0, 1
	}
	for vlans := header(0); t == layers.LayerTypeDot1Q; vlans++ {
		if vlans == maxVLANTags {
			return true // the Dissector's errTooManyTags
		}
		q := &p.moreLayers().vlan[vlans]
		if q.DecodeFromBytes(data, df) != nil || a.trunc {
			return !bool(a.trunc)
		}
		p.kinds[n], p.offs[n] = hdrVLAN+vlans, uint16(offsetIn(frame, q.Contents))
		n++
		if t, data = q.NextLayerType(), q.Payload; len(data) == 0 {
			return true
		}
	}
	var ip, end int
	v6 := false
	switch t {
	case layers.LayerTypeIPv4:
		x := &p.ip4
		if x.DecodeFromBytes(data, df) != nil || a.trunc {
			return !bool(a.trunc)
		}
		if x.IHL != 5 {
			return false
		}
		ip = offsetIn(frame, x.Contents)
		end = ip + int(x.Length)
		p.kinds[n] = hdrIPv4
		t, data = x.NextLayerType(), x.Payload
	case layers.LayerTypeIPv6:
		x := &p.moreLayers().ip6
		if x.DecodeFromBytes(data, df) != nil || a.trunc {
			return !bool(a.trunc)
		}
		if x.HopByHop != nil {
			return false
		}
		ip, v6 = offsetIn(frame, x.Contents), true
		end = ip + 40 + int(x.Length)
		p.kinds[n] = hdrIPv6
		t, data = x.NextLayerType(), x.Payload
	case ibcm.LayerTypeGRH:
		a.roceV1(f, offsetIn(frame, data))
		return true
	default:
		return true
	}
	p.offs[n] = uint16(ip)
	n++
	if t != layers.LayerTypeUDP || len(data) == 0 {
		return true
	}
	u := &p.udp
	if u.DecodeFromBytes(data, df) != nil || a.trunc {
		return !bool(a.trunc)
	}
	p.kinds[n], p.offs[n] = hdrUDP, uint16(offsetIn(frame, u.Contents))
	n++
	if u.NextLayerType() != ibcm.LayerTypeBTH {
		return true
	}
	a.roceV2(f, ip, end, v6)
	// The BTH and its extension headers are decoded into the slot (they
	// follow its BTH): a frame left to the Dissector leaves the slot to
	// the next.
	bth := u.Payload
	if p.bth.DecodeFromBytes(bth, df) != nil || a.trunc {
		return true
	}
	// The ICRC verdict too (the Dissector's checkICRC for the frame).
	if f.Ahead.OK {
		p.bth.SetICRCComputed(f.Ahead.CRC)
	}
	p.kinds[n], p.offs[n] = preBTH, uint16(offsetIn(frame, bth))
	n++
	// The extension headers: at most two, each of its own kind (the
	// opcode's chain).
	t, data = p.bth.NextLayerType(), p.bth.Payload
	a.rareUsed = false
	for len(data) > 0 {
		k := predecodedKind(t)
		if k == 0 {
			if decodable(t) {
				return true // a MAD, CM …
			}
			break
		}
		// The common kinds by direct calls (they inline), the others
		// through ext.
		var err error
		p.kinds[n], p.offs[n] = k, uint16(offsetIn(frame, data))
		switch k {
		case preAETH:
			err = p.aeth.DecodeFromBytes(data, df)
			t, data = p.aeth.NextLayerType(), p.aeth.Payload
		case preRETH:
			err = p.reth.DecodeFromBytes(data, df)
			t, data = p.reth.NextLayerType(), p.reth.Payload
		case preIETH:
			err = p.ieth.DecodeFromBytes(data, df)
			t, data = p.ieth.NextLayerType(), p.ieth.Payload
		default:
			l := a.ext(p, k)
			err = l.DecodeFromBytes(data, df)
			t, data = l.NextLayerType(), l.LayerPayload()
		}
		if err != nil || a.trunc {
			return true
		}
		n++
	}
	p.frame, p.n, p.ip, p.v6 = f.Number, uint8(n), int32(ip), v6
	if a.rareUsed {
		a.rareToSlot(p)
	}
	// The common RoCEv2 frame: Ethernet first, then (no VLAN tag) IPv4,
	// UDP and the BTH.
	p.plain = p.kinds[0] == hdrEthernet && p.kinds[1] == hdrIPv4
	a.seq++
	f.Decoded = p
	return true
}

// predecodedFrame dissects a frame whose layers the reading goroutine
// decoded (p, Ahead): it copies them into the Dissector's own and adds
// them to the record, as decodeLayers adds what it decodes, notes the
// frame's Headers, takes the BTH's findings (the only layer of such a
// frame that reports any; its ICRC verdict came with it) and hands the
// payload on as decodeChain does. Such a frame decoded whole, without
// error or truncation, and holds one IP header and a BTH: none of
// decodeChain's other steps apply.
func (d *Dissector) predecodedFrame(p *predecoded) {
	r, h, s := &d.rec, &d.hdr, d.ib
	hd := &r.hdr
	r.hdrSet, d.truncated = true, false
	i := 0
	if p.plain {
		// The common RoCEv2 frame's four headers in one go; the record's
		// arrays still hold its first five layers and their offsets, and
		// its Headers those of the frame before but for the extension
		// headers, when that frame was one too (laid).
		h.eth = p.eth
		h.setIPv4(&p.ip4)
		h.udp.UDP = p.udp.UDP
		s.BTH = p.bth
		if d.laid {
			r.Layers, r.Offsets = r.Layers[:plainLayers], r.Offsets[:plainLayers]
			hd.AETH, hd.RETH, hd.IETH = nil, nil, nil
		} else {
			d.layPlain()
		}
		i = plainLayers - 1
	} else {
		d.laid = false
		r.Add(&d.frame, 0)
		*hd = d.preHdr
		if p.v6 {
			hd.IPv4, hd.IPv6 = nil, &h.ip6
		}
	}
	// The last layer: the BTH, unless the loop adds layers after it.
	last := d.preEnts[preBTH]
	for ; i < int(p.n); i++ {
		k := p.kinds[i]
		switch k {
		case hdrEthernet:
			h.eth = p.eth
		case hdrSLL:
			h.sll = p.more.sll
		case hdrIPv4:
			h.setIPv4(&p.ip4)
		case hdrIPv6:
			// Field by field: the Hop-by-Hop header's storage stays the
			// Dissector's (a predecoded IPv6 header has none).
			d6, p6 := &h.ip6.IPv6, &p.more.ip6.IPv6
			d6.BaseLayer, d6.Version, d6.TrafficClass, d6.FlowLabel = p6.BaseLayer, p6.Version, p6.TrafficClass, p6.FlowLabel
			d6.Length, d6.NextHeader, d6.HopLimit = p6.Length, p6.NextHeader, p6.HopLimit
			d6.SrcIP, d6.DstIP, d6.HopByHop = p6.SrcIP, p6.DstIP, nil
			h.ip6.nExt = 0
		case hdrUDP:
			h.udp.UDP = p.udp.UDP
		case preBTH:
			s.BTH = p.bth
			hd.BTHAt = len(r.Layers)
		case preDETH:
			s.DETH = p.more.deth
			s.DETH.Follow(&s.BTH)
		case preRETH:
			s.RETH = p.reth
			s.RETH.Follow(&s.BTH)
			hd.RETH = &s.RETH
		case preAETH:
			s.AETH = p.aeth
			s.AETH.Follow(&s.BTH)
			hd.AETH = &s.AETH
		case preIETH:
			s.IETH = p.ieth
			s.IETH.Follow(&s.BTH)
			hd.IETH = &s.IETH
		case preImmDt:
			s.ImmDt = p.more.immDt
			s.ImmDt.Follow(&s.BTH)
		case preAtomicETH:
			s.AtomicETH = p.more.atomicETH
			s.AtomicETH.Follow(&s.BTH)
		case preAtomicAckETH:
			s.AtomicAckETH = p.more.atomicAckETH
			s.AtomicAckETH.Follow(&s.BTH)
		default:
			h.vlan[k-hdrVLAN] = p.more.vlan[k-hdrVLAN]
		}
		last = d.preEnts[k]
		r.Add(last.l, int(p.offs[i]))
	}
	bth := &s.BTH
	if fs := bth.AppendFindings(r.Findings); len(fs) > len(r.Findings) {
		first := len(r.Findings)
		r.Findings = fs
		r.placeFindings(first, r.Offsets[hd.BTHAt])
	}
	if bth.OpCode.IsSend() {
		// The Send payload is what follows the last extension header.
		d.sendOn(r, bth, s.IETH.RKey, last.dl.LayerPayload())
	} else if movesChunkData(bth.OpCode) && d.sends.rpc.chunks.waiting() {
		d.sends.rpc.chunks.ibPacket(r, bth, &s.RETH, last.dl.LayerPayload())
	}
}

// plainLayers is how many layers the record of the common RoCEv2 frame
// starts with: the frame, Ethernet, IPv4, UDP and the BTH.
const plainLayers = 5

// layPlain adds the first layers of the common RoCEv2 frame (plainLayers)
// to the empty record and sets its Headers but for the extension headers,
// and notes that the record holds them (laid): all of that frame's layers
// after them are appended after them, and every other record clears laid
// before it writes there or its Headers.
func (d *Dissector) layPlain() {
	r, h := &d.rec, &d.hdr
	r.Layers = append(r.Layers[:0], &d.frame, &h.eth, &h.ip4, &h.udp, &d.ib.BTH)
	// Ethernet, IPv4 without options and UDP: fixed lengths.
	r.Offsets = append(r.Offsets[:0], 0, 0, 14, 14+20, 14+20+8)
	r.hdr = Headers{IPv4: &h.ip4, BTH: &d.ib.BTH, BTHAt: plainLayers - 1}
	d.laid = true
}

// setIPv4 makes h's IPv4 header the predecoded x. The Options' array
// stays h's (gopacket appends to it): a predecoded IPv4 header has none.
func (h *commonHeaders) setIPv4(x *IPv4) {
	opts := h.ip4.Options
	h.ip4.IPv4 = x.IPv4
	h.ip4.Options = opts[:0]
}

// ahead returns the ICRC computed ahead for this kind of packet with its
// first covered header at off, if there is one.
func (d *Dissector) aheadICRC(kind uint8, off int) (crc uint32, ok, found bool) {
	a := &d.ahead
	if a.Kind != kind || int(a.At) != off {
		return 0, false, false
	}
	return a.CRC, a.OK, true
}

// aheadStored returns the ICRC octets the packet carries, as read ahead,
// when they are the last four of a BTH that starts at bthOff and is n
// octets long (ICRC included) in a RoCEv2 packet whose IP header is at ip.
func (d *Dissector) aheadStored(v6 bool, ip, bthOff, n int) (uint32, bool) {
	a := &d.ahead
	kind := aheadRoCEv2IPv4
	if v6 {
		kind = aheadRoCEv2IPv6
	}
	if a.End == 0 || a.Kind != kind || int(a.At) != ip || int(a.End) != bthOff+n {
		return 0, false
	}
	return a.Stored, true
}
