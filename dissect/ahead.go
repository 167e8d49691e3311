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
// of the RoCE ports: the headers walked as the Dissector walks them), RoCEv1 (Ethernet type
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
	return func(f *source.Frame) {
		f.Ahead = source.Ahead{}
		defer func() {
			// A decoder's panic is the Dissector's to report (it
			// decodes the frame again); here it is only no guess.
			if recover() != nil {
				f.Ahead = source.Ahead{}
			}
		}()
		data := f.Data
		if f.LinkType == source.LinkTypeInfiniBand {
			_, crc, ok := ibcm.CheckIBICRC(data)
			f.Ahead = source.Ahead{Kind: aheadIB, OK: ok, CRC: crc}
			return
		}
		if first, ok := linkStart(f.LinkType, data); ok {
			// The headers as the Dissector walks them: the last IP
			// header and the layer after them (the BTH of RoCEv2, the
			// GRH of RoCEv1).
			rec.Reset()
			rec.Data = data
			w.walk(&rec, first, data)
			ip, v6 := w.ip, w.v6
			switch {
			case w.err != nil || w.done:
			case w.t == ibcm.LayerTypeBTH && ip >= 0:
				kind := aheadRoCEv2IPv4
				if v6 {
					kind = aheadRoCEv2IPv6
				}
				stored, crc, ok := c.CheckRoCEv2(data[ip:], v6)
				f.Ahead = source.Ahead{Kind: kind, OK: ok, At: int32(ip), CRC: crc}
				if ok {
					// The end is where the IP header's length field says
					// the packet ends (the checker's end).
					end := ip + int(h.ip4.Length)
					if v6 {
						end = ip + 40 + int(h.ip6.Length)
					}
					f.Ahead.Stored, f.Ahead.End = stored, int32(end)
				}
			case w.t == ibcm.LayerTypeGRH:
				grh := offsetIn(data, w.data)
				_, crc, ok := ibcm.CheckRoCEv1ICRC(data[grh:])
				f.Ahead = source.Ahead{Kind: aheadRoCEv1, OK: ok, At: int32(grh), CRC: crc}
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
