package ibcm

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// ICRCChecker computes RoCEv2 ICRCs like CheckRoCEv2ICRC, faster on a hot
// path. crc32 runs its carry-less-multiply code on whole 16-octet blocks of
// calls of at least 64 octets and a slower table on the rest, and each call
// has a fixed cost besides. The checker makes every octet go through the
// fast code, in one call for a packet of up to icrcCopyMax octets and two
// for a longer one: it copies the masked headers (and a short packet
// whole) into its buffer behind as many zero octets as make the buffer's
// part a whole number of blocks and at least 64 octets, and starts the CRC from the
// value that those zeros take to the CRC of the masked LRH (icrcZeroStart).
// A longer packet's payload is not copied: the buffer's part takes the
// headers and what makes the rest a whole number of blocks. A value is
// reused for every packet (it is not safe for concurrent use); its buffer
// lives with it, so a check allocates nothing.
//
// Added for dissect's per-packet path (issue 6); results are identical to
// CheckRoCEv2ICRC (TestICRCCheckerMatches, TestICRCCheckerEveryLength,
// FuzzICRCChecker).
type ICRCChecker struct {
	// buf is icrcPadMax zero octets, never written (the copied part
	// always starts after them, and the zeros a packet needs are the
	// last pad of them: nothing is cleared per packet), then room for the
	// copied part.
	buf [icrcPadMax + icrcCopyMax + 16]byte
}

const (
	// icrcCopyMax is the longest packet (octets covered from the IP
	// header on) copied whole: copying this much costs less than a
	// second crc32 call.
	icrcCopyMax = 256
	// icrcPadMax bounds the zero octets put before the copied part: up
	// to 15 to round it to a block, more to make a short packet 64.
	icrcPadMax = 64
)

// icrcZeroStart[k] is the crc32.Update start value after which k zero
// octets leave the CRC of the masked LRH (crcOnesLRH): a CRC register fed
// zeros goes through an invertible linear map, so feeding k zeros first
// changes nothing but where the carry-less-multiply blocks begin.
var icrcZeroStart = func() (t [icrcPadMax + 1]uint32) {
	const poly = 0xedb88320  // IEEE, reflected
	r := ^uint32(crcOnesLRH) // crc32.Update works on the complement
	for k := 0; k <= icrcPadMax; k++ {
		t[k] = ^r
		for b := 0; b < 8; b++ { // one zero octet back
			if r&0x80000000 != 0 {
				r = (r^poly)<<1 | 1
			} else {
				r <<= 1
			}
		}
	}
	return t
}()

// CheckRoCEv2 is CheckRoCEv2ICRC with c's scratch buffer.
func (c *ICRCChecker) CheckRoCEv2(ipAndRest []byte, isIPv6 bool) (stored, computed uint32, ok bool) {
	var hdrLen, end int
	if isIPv6 {
		if len(ipAndRest) < 40 || ipAndRest[6] != 17 {
			return 0, 0, false
		}
		hdrLen = 40
		end = 40 + int(binary.BigEndian.Uint16(ipAndRest[4:]))
		if end > len(ipAndRest) {
			return 0, 0, false
		}
	} else {
		if len(ipAndRest) < 20 || ipAndRest[0]>>4 != 4 || ipAndRest[9] != 17 {
			return 0, 0, false
		}
		hdrLen = int(ipAndRest[0]&0x0f) * 4
		end = int(binary.BigEndian.Uint16(ipAndRest[2:]))
		if hdrLen < 20 || end < hdrLen || end > len(ipAndRest) {
			return 0, 0, false
		}
	}
	if end-hdrLen < udpLen+bthLen+icrcLen {
		return 0, 0, false
	}
	n := end - icrcLen // octets covered, from the IP header on
	// The copied part, head octets: the whole packet when short, else the
	// headers and what makes the rest (left in place) whole blocks; then
	// the zeros before it, pad octets, for whole blocks and at least 64.
	head := n
	if n > icrcCopyMax {
		hdrs := hdrLen + udpLen + bthLen
		head = hdrs + (n-hdrs)%16
	}
	// At least 64 octets in all (head is at least 40: then pad is
	// 64-head, itself -head mod 16), else whole blocks.
	pad := max(-head&15, 64-head)
	h := c.buf[icrcPadMax-pad : icrcPadMax+head]
	m := c.buf[icrcPadMax : icrcPadMax+head]
	copy(m, ipAndRest[:head])
	if isIPv6 {
		m[0] |= 0x0f
		m[1], m[2], m[3] = 0xff, 0xff, 0xff
		m[7] = 0xff
	} else {
		m[1] = 0xff               // TOS
		m[8] = 0xff               // TTL
		m[10], m[11] = 0xff, 0xff // header checksum
	}
	u := m[hdrLen:]
	u[6], u[7] = 0xff, 0xff // UDP checksum
	u[udpLen+4] = 0xff      // BTH FECN, BECN, reserved
	crc := crc32.Update(icrcZeroStart[pad], crc32.IEEETable, h)
	if head < n {
		crc = crc32.Update(crc, crc32.IEEETable, ipAndRest[head:n])
	}
	return storedICRC(ipAndRest[hdrLen:end]), bits.ReverseBytes32(crc), true
}
