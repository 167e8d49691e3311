package ibcm

import (
	"hash/crc32"
	"math/bits"
)

// ICRCChecker computes RoCEv2 ICRCs like CheckRoCEv2ICRC, faster on a hot
// path: it copies the packet from the IP header to the ICRC into its own
// buffer, masks the variant fields there, and feeds it all to the CRC in
// one call. One contiguous call keeps the whole packet on crc32's
// carry-less-multiply path; the headers fed separately (40 octets or more)
// went through the slower table path, and the payload's last partial block
// once more. A value is reused for every packet (it is not safe for
// concurrent use); its buffer grows to the largest packet seen and then
// stays, so a check allocates nothing.
//
// Added for dissect's per-packet path (issue 6); results are identical to
// CheckRoCEv2ICRC (TestICRCCheckerMatches).
type ICRCChecker struct {
	buf []byte
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
	n := end - icrcLen
	if cap(c.buf) < n {
		c.buf = make([]byte, n, max(n, 2048))
	}
	h := c.buf[:n]
	copy(h, ipAndRest[:n])
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
	return storedICRC(ipAndRest[hdrLen:end]), bits.ReverseBytes32(crc), true
}
