package dissect

import (
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
// up to two VLAN tags, IPv4 or IPv6, UDP to or from one of d's RoCE ports),
// RoCEv1 (Ethernet type 0x8915) or native InfiniBand (link type 247). The
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
	var roce [65536 / 64]uint64
	for _, p := range append([]uint16{RoCEv2Port}, opts.RoCEPorts...) {
		roce[p/64] |= 1 << (p % 64)
	}
	var c ibcm.ICRCChecker
	isRoCE := func(p int) bool { return roce[p/64]&(1<<(p%64)) != 0 }
	// roceV2 computes the ICRC of the RoCEv2 packet whose IP header is at
	// ip and UDP header at udp, when the UDP ports say RoCE; end is where
	// the IP header's length field says the packet ends (the checker's end).
	roceV2 := func(f *source.Frame, ip, udp, end int, v6 bool) {
		data := f.Data
		if len(data) < udp+4 || !isRoCE(int(data[udp+2])<<8|int(data[udp+3])) && !isRoCE(int(data[udp])<<8|int(data[udp+1])) {
			return
		}
		kind := aheadRoCEv2IPv4
		if v6 {
			kind = aheadRoCEv2IPv6
		}
		stored, crc, ok := c.CheckRoCEv2(data[ip:], v6)
		f.Ahead = source.Ahead{Kind: kind, OK: ok, At: int32(ip), CRC: crc}
		if ok {
			f.Ahead.Stored, f.Ahead.End = stored, int32(end)
		}
	}
	return func(f *source.Frame) {
		f.Ahead = source.Ahead{}
		data := f.Data
		switch f.LinkType {
		case source.LinkTypeInfiniBand:
			_, crc, ok := ibcm.CheckIBICRC(data)
			f.Ahead = source.Ahead{Kind: aheadIB, OK: ok, CRC: crc}
		case source.LinkTypeEthernet:
			off := 12
			for tags := 0; ; tags++ {
				if len(data) < off+2 {
					return
				}
				switch int(data[off])<<8 | int(data[off+1]) {
				case 0x8100, 0x88a8, 0x9100:
					if tags == 2 {
						return
					}
					off += 4
					continue
				case 0x0800:
					ip := off + 2
					if len(data) < ip+20 || data[ip+9] != 17 {
						return
					}
					// The end: the IPv4 total length.
					roceV2(f, ip, ip+int(data[ip]&0x0f)*4, ip+(int(data[ip+2])<<8|int(data[ip+3])), false)
				case 0x86dd:
					ip := off + 2
					if len(data) < ip+40 || data[ip+6] != 17 {
						return
					}
					// The end: the IPv6 payload length after the fixed header.
					roceV2(f, ip, ip+40, ip+40+(int(data[ip+4])<<8|int(data[ip+5])), true)
				case 0x8915:
					grh := off + 2
					_, crc, ok := ibcm.CheckRoCEv1ICRC(data[grh:])
					f.Ahead = source.Ahead{Kind: aheadRoCEv1, OK: ok, At: int32(grh), CRC: crc}
				}
				return
			}
		}
	}
}

// ahead returns the ICRC computed ahead for this kind of packet with its
// first covered header at off, if there is one.
func (x *extensions) ahead(kind uint8, off int) (crc uint32, ok, found bool) {
	a := &x.aheadICRC
	if a.Kind != kind || int(a.At) != off {
		return 0, false, false
	}
	return a.CRC, a.OK, true
}

// aheadStored returns the ICRC octets the packet carries, as read ahead,
// when they are the last four of a BTH that starts at bthOff and is n
// octets long (ICRC included) in a RoCEv2 packet whose IP header is at ip.
func (x *extensions) aheadStored(v6 bool, ip, bthOff, n int) (uint32, bool) {
	a := &x.aheadICRC
	kind := aheadRoCEv2IPv4
	if v6 {
		kind = aheadRoCEv2IPv6
	}
	if a.End == 0 || a.Kind != kind || int(a.At) != ip || int(a.End) != bthOff+n {
		return 0, false
	}
	return a.Stored, true
}
