package ibcm

import (
	"hash/crc32"
	"math/bits"
)

// ICRCChecker computes RoCEv2 ICRCs like CheckRoCEv2ICRC, faster on a hot
// path. crc32 runs its carry-less-multiply code on whole 16-octet blocks of
// calls of at least 64 octets, and a slower table on the rest; fed the
// masked headers (40 octets or more) and the payload apart, a packet went
// through the table for the headers and once more for the payload's tail.
// The checker copies the masked headers and as much of the payload as
// makes that first part 64 to 79 octets and leaves the rest a whole
// number of blocks, so at most 15 octets take the table and the payload is
// not copied. A value is reused for every packet (it is not safe for
// concurrent use); its buffer lives with it, so a check allocates nothing.
//
// Added for dissect's per-packet path (issue 6); results are identical to
// CheckRoCEv2ICRC (TestICRCCheckerMatches).
type ICRCChecker struct {
	buf [60 + 40 + udpLen + bthLen + 80]byte
}

// CheckRoCEv2 is CheckRoCEv2ICRC with c's scratch buffer.
func (c *ICRCChecker) CheckRoCEv2(ipAndRest []byte, isIPv6 bool) (stored, computed uint32, ok bool) {
	var hdrLen, end int
	if isIPv6 {
		if len(ipAndRest) < 40 || ipAndRest[6] != 17 {
			return 0, 0, false
		}
		hdrLen = 40
		end = 40 + (int(ipAndRest[4])<<8 | int(ipAndRest[5]))
		if end > len(ipAndRest) {
			return 0, 0, false
		}
	} else {
		if len(ipAndRest) < 20 || ipAndRest[0]>>4 != 4 || ipAndRest[9] != 17 {
			return 0, 0, false
		}
		hdrLen = int(ipAndRest[0]&0x0f) * 4
		end = int(ipAndRest[2])<<8 | int(ipAndRest[3])
		if hdrLen < 20 || end < hdrLen || end > len(ipAndRest) {
			return 0, 0, false
		}
	}
	if end-hdrLen < udpLen+bthLen+icrcLen {
		return 0, 0, false
	}
	n := end - icrcLen // octets covered, from the IP header on
	head := hdrLen + udpLen + bthLen
	if n >= 64 {
		// The first part: 64 octets plus what makes the rest a multiple
		// of 16, and never less than the headers.
		cut := 64 + (n-64)%16
		for cut < head {
			cut += 16
		}
		head = cut
	} else {
		head = n
	}
	h := c.buf[:head]
	copy(h, ipAndRest[:head])
	if isIPv6 {
		h[0] |= 0x0f
		h[1], h[2], h[3] = 0xff, 0xff, 0xff
		h[7] = 0xff
	} else {
		h[1] = 0xff               // TOS
		h[8] = 0xff               // TTL
		h[10], h[11] = 0xff, 0xff // header checksum
	}
	u := h[hdrLen:]
	u[6], u[7] = 0xff, 0xff // UDP checksum
	u[udpLen+4] = 0xff      // BTH FECN, BECN, reserved
	crc := crc32.Update(crcOnesLRH, crc32.IEEETable, h)
	crc = crc32.Update(crc, crc32.IEEETable, ipAndRest[head:n])
	return storedICRC(ipAndRest[hdrLen:end]), bits.ReverseBytes32(crc), true
}
