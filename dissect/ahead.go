package dissect

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// What a source.Ahead computed by AheadICRC holds: the ICRC of the IB
// transport packet whose first header (IPv4, IPv6, GRH, LRH) is at At.
const (
	aheadNone uint8 = iota
	aheadRoCEv2IPv4
	aheadRoCEv2IPv6
	aheadRoCEv1
	aheadIB
)

// AheadICRC returns a hook for source.NewPrefetch that computes, on the
// reading goroutine, the ICRC of each frame that looks like RoCEv2 (Ethernet,
// Linux cooked capture or raw IP, VLAN tags, IPv4 or IPv6, UDP to or from one
// of the RoCE ports: Ethernet's headers read from their bytes, the other
// link types' walked as the Dissector walks them), RoCEv1 (Ethernet type
// 0x8915) or native InfiniBand (link type 247). The
// ICRC is about a fifth of the per-packet cost of "stats" (a CRC-32 over the
// whole packet); computed ahead, it runs on a second core.
//
// The hook only guesses where the headers are. The Dissector uses the
// result only for the same kind of packet with its first IB-covered header
// at the same offset its own decoding found, and computes the ICRC itself
// otherwise, so a wrong guess costs time, never a verdict. opts are the
// Dissector's (its RoCE ports). The hook has a scratch buffer of its own:
// one hook per reading goroutine.
func AheadICRC(opts Options) func(*source.Frame) {
	var c ibcm.ICRCChecker
	var h commonHeaders
	roce := rocePorts(opts)
	h.udp.roce = &roce
	// The headers are walked into rec, up to TCP (no ICRC after it).
	w := &headerWalk{h: &h, df: gopacket.NilDecodeFeedback, until: layers.LayerTypeTCP}
	var rec Record
	// roceV2 sets the ICRC of the RoCEv2 packet whose IP header is at ip
	// and whose IP datagram ends at end.
	roceV2 := func(f *source.Frame, ip, end int, v6 bool) {
		kind := aheadRoCEv2IPv4
		if v6 {
			kind = aheadRoCEv2IPv6
		}
		stored, crc, ok := c.CheckRoCEv2(f.Data[ip:], v6)
		f.Ahead = source.Ahead{Kind: kind, OK: ok, At: int32(ip), CRC: crc}
		if ok {
			f.Ahead.Stored, f.Ahead.End = stored, int32(end)
		}
	}
	// walk finds the headers as the Dissector does, for the link types
	// ethernet leaves to it.
	walk := func(f *source.Frame, first gopacket.LayerType) {
		defer func() {
			if recover() != nil {
				f.Ahead = source.Ahead{}
			}
		}()
		data := f.Data
		rec.Reset()
		rec.Data = data
		next, rest, err := w.walk(&rec, first, data)
		ip, v6 := w.ip, w.v6
		switch {
		case err != nil || w.done:
		case next == ibcm.LayerTypeBTH && ip >= 0:
			end := ip + int(h.ip4.Length)
			if v6 {
				end = ip + 40 + int(h.ip6.Length)
			}
			roceV2(f, ip, end, v6)
		case next == ibcm.LayerTypeGRH:
			grh := offsetIn(data, rest)
			_, crc, ok := ibcm.CheckRoCEv1ICRC(data[grh:])
			f.Ahead = source.Ahead{Kind: aheadRoCEv1, OK: ok, At: int32(grh), CRC: crc}
		}
	}
	// ethernet reads the headers of an Ethernet frame from their bytes
	// (VLAN tags, IPv4 without options' checks or IPv6, UDP): most
	// captures are Ethernet, and decoding each header into its layer cost
	// more than the guess needs. A frame it cannot place gets no ICRC
	// ahead (the Dissector computes it).
	ethernet := func(f *source.Frame) {
		data := f.Data
		off := 12
		for tags := 0; ; tags++ {
			if len(data) < off+2 {
				return
			}
			switch uint16(data[off])<<8 | uint16(data[off+1]) {
			case 0x8100, 0x88a8, 0x9100:
				if tags == maxVLANTags {
					return
				}
				off += 4
				continue
			case 0x0800:
				ip := off + 2
				if len(data) < ip+20 || data[ip]>>4 != 4 || data[ip+9] != 17 || data[ip+6]&0x3f != 0 || data[ip+7] != 0 {
					return // not UDP, or a fragment
				}
				udp := ip + int(data[ip]&0x0f)*4
				if len(data) < udp+8 || !roce.has(uint16(data[udp+2])<<8|uint16(data[udp+3])) && !roce.has(uint16(data[udp])<<8|uint16(data[udp+1])) {
					return
				}
				roceV2(f, ip, ip+(int(data[ip+2])<<8|int(data[ip+3])), false)
			case 0x86dd:
				ip := off + 2
				udp := ip + 40
				if len(data) < udp+8 || data[ip]>>4 != 6 || data[ip+6] != 17 ||
					!roce.has(uint16(data[udp+2])<<8|uint16(data[udp+3])) && !roce.has(uint16(data[udp])<<8|uint16(data[udp+1])) {
					return
				}
				roceV2(f, ip, udp+(int(data[ip+4])<<8|int(data[ip+5])), true)
			case 0x8915:
				grh := off + 2
				_, crc, ok := ibcm.CheckRoCEv1ICRC(data[grh:])
				f.Ahead = source.Ahead{Kind: aheadRoCEv1, OK: ok, At: int32(grh), CRC: crc}
			}
			return
		}
	}
	return func(f *source.Frame) {
		f.Ahead = source.Ahead{}
		switch f.LinkType {
		case source.LinkTypeInfiniBand:
			_, crc, ok := ibcm.CheckIBICRC(f.Data)
			f.Ahead = source.Ahead{Kind: aheadIB, OK: ok, CRC: crc}
		case source.LinkTypeEthernet:
			ethernet(f)
		default:
			if first, ok := linkStart(f.LinkType, f.Data); ok {
				walk(f, first)
			}
		}
	}
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
