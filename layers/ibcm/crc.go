package ibcm

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// CRCStatus is the verdict on a packet's ICRC or VCRC: the one verdict
// type of every CRC field (field.ChecksumStatus, tshark's values).
type CRCStatus = field.ChecksumStatus

const (
	// CRCUnchecked: the CRC could not be checked (no IP/UDP context for a
	// RoCEv2 BTH decoded alone, or the packet is truncated).
	CRCUnchecked = field.ChecksumUnverified
	// CRCGood: the stored CRC matches the computed one.
	CRCGood = field.ChecksumGood
	// CRCBad: it does not.
	CRCBad = field.ChecksumBad
)

var crcStatusNames = field.ChecksumStatusNames

func verdict(stored, computed uint32) CRCStatus {
	if stored == computed {
		return CRCGood
	}
	return CRCBad
}

// The ICRC is CRC-32 (the Ethernet/zlib polynomial) over the packet with its
// variant fields replaced by ones (IBTA vol. 1 §7.8.1; RoCEv2 annex A17.3.3;
// Linux drivers/infiniband/sw/rxe/rxe_icrc.c): the LRH's VL in a local
// packet, the whole LRH in a global one (GRH present; on RoCE, where there
// is no LRH, 8 octets of ones stand for it), the GRH's or IPv6's
// traffic class, flow label and hop limit, IPv4's TOS, TTL and header
// checksum, the UDP checksum, and the BTH's reserved octet 4 (FECN, BECN).
// It is sent inverted with its least significant octet first (rxe writes
// the CPU-order u32). Values in this package are the four wire octets read
// big-endian, as tshark shows them (infiniband.invariant.crc).

var onesLRH = [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// crcOnesLRH is the CRC state after the 8 octets of ones.
var crcOnesLRH = crc32.Update(0, crc32.IEEETable, onesLRH[:])

// The masking helpers below feed the packet's own bytes and the masked
// octets one at a time instead of copying headers into a local array: a
// local array passed to crc32.Update escapes to the heap (Update calls
// through a function variable), and the fast path must not allocate.

// crcByte adds one octet to a CRC-32 (IEEE) state as crc32.Update would.
func crcByte(crc uint32, b byte) uint32 {
	crc = ^crc
	crc = crc32.IEEETable[byte(crc)^b] ^ crc>>8
	return ^crc
}

func crcIPv4Masked(crc uint32, h []byte) uint32 {
	if len(h) < 12 {
		return crc32.Update(crc, crc32.IEEETable, h)
	}
	crc = crcByte(crc, h[0])
	crc = crcByte(crc, 0xff) // TOS
	crc = crc32.Update(crc, crc32.IEEETable, h[2:8])
	crc = crcByte(crc, 0xff) // TTL
	crc = crcByte(crc, h[9])
	crc = crcByte(crc, 0xff) // header checksum
	crc = crcByte(crc, 0xff)
	return crc32.Update(crc, crc32.IEEETable, h[12:min(len(h), 60)])
}

// crcLRHMasked starts the ICRC of a local IB packet (no GRH): the LRH is
// covered except VL, which is replaced by ones. A global packet's LRH is
// replaced by ones as a whole (routers rewrite it), like RoCE's.
func crcLRHMasked(lrh []byte) uint32 {
	var m [lrhLen]byte
	copy(m[:], lrh)
	m[0] |= 0xf0
	return crc32.Update(0, crc32.IEEETable, m[:])
}

// crcIPv6Masked masks an IPv6 header or a GRH (same layout of the first
// eight octets): traffic class, flow label, hop limit.
func crcIPv6Masked(crc uint32, h []byte) uint32 {
	if len(h) < 8 {
		return crc32.Update(crc, crc32.IEEETable, h)
	}
	crc = crcByte(crc, h[0]|0x0f)
	crc = crcByte(crc, 0xff)
	crc = crcByte(crc, 0xff)
	crc = crcByte(crc, 0xff)
	crc = crc32.Update(crc, crc32.IEEETable, h[4:7])
	crc = crcByte(crc, 0xff) // hop limit
	return crc32.Update(crc, crc32.IEEETable, h[8:min(len(h), 40)])
}

func crcUDPMasked(crc uint32, h []byte) uint32 {
	if len(h) < 6 {
		return crc32.Update(crc, crc32.IEEETable, h)
	}
	crc = crc32.Update(crc, crc32.IEEETable, h[:6])
	crc = crcByte(crc, 0xff) // checksum
	return crcByte(crc, 0xff)
}

// crcBTHOn finishes an ICRC over ib (BTH … payload, pad, ICRC): the BTH with
// its octet 4 masked, then everything up to the ICRC. It returns the value
// the four ICRC octets must hold, read big-endian.
func crcBTHOn(crc uint32, ib []byte) uint32 {
	crc = crc32.Update(crc, crc32.IEEETable, ib[:4])
	crc = crcByte(crc, 0xff) // FECN, BECN, reserved
	crc = crc32.Update(crc, crc32.IEEETable, ib[5:bthLen])
	crc = crc32.Update(crc, crc32.IEEETable, ib[bthLen:len(ib)-icrcLen])
	return bits.ReverseBytes32(crc)
}

func storedICRC(ib []byte) uint32 { return binary.BigEndian.Uint32(ib[len(ib)-icrcLen:]) }

// CheckRoCEv2ICRC checks the ICRC of a RoCEv2 packet given the bytes from
// the first octet of its IPv4 or IPv6 header on (Ethernet padding after the
// IP packet is ignored: the IP length fields bound it). It returns the ICRC
// stored in the packet, the one computed, and ok=false when the bytes are
// not a complete IP/UDP/BTH packet (then there is no verdict). It does not
// allocate.
func CheckRoCEv2ICRC(ipAndRest []byte, isIPv6 bool) (stored, computed uint32, ok bool) {
	var hdrLen, end int
	crc := crcOnesLRH
	if isIPv6 {
		if len(ipAndRest) < 40 || ipAndRest[6] != 17 {
			return 0, 0, false
		}
		hdrLen = 40
		end = 40 + int(binary.BigEndian.Uint16(ipAndRest[4:6]))
		if end > len(ipAndRest) {
			return 0, 0, false
		}
		crc = crcIPv6Masked(crc, ipAndRest[:40])
	} else {
		if len(ipAndRest) < 20 || ipAndRest[0]>>4 != 4 || ipAndRest[9] != 17 {
			return 0, 0, false
		}
		hdrLen = int(ipAndRest[0]&0x0f) * 4
		end = int(binary.BigEndian.Uint16(ipAndRest[2:4]))
		if hdrLen < 20 || end < hdrLen || end > len(ipAndRest) {
			return 0, 0, false
		}
		crc = crcIPv4Masked(crc, ipAndRest[:hdrLen])
	}
	ib := ipAndRest[hdrLen:end]
	if len(ib) < udpLen+bthLen+icrcLen {
		return 0, 0, false
	}
	crc = crcUDPMasked(crc, ib[:udpLen])
	ib = ib[udpLen:]
	return storedICRC(ib), crcBTHOn(crc, ib), true
}

// CheckRoCEv1ICRC checks the ICRC of a RoCEv1 packet given the bytes from
// the GRH on (the GRH PayLen bounds the packet).
func CheckRoCEv1ICRC(grhAndRest []byte) (stored, computed uint32, ok bool) {
	if len(grhAndRest) < grhLen {
		return 0, 0, false
	}
	end := grhLen + int(binary.BigEndian.Uint16(grhAndRest[4:6]))
	if end > len(grhAndRest) || end < grhLen+bthLen+icrcLen {
		return 0, 0, false
	}
	crc := crcIPv6Masked(crcOnesLRH, grhAndRest[:grhLen])
	ib := grhAndRest[grhLen:end]
	return storedICRC(ib), crcBTHOn(crc, ib), true
}

// CheckIBICRC checks the ICRC of a native InfiniBand packet given the bytes
// from the LRH on (LRH PktLen bounds the packet; the VCRC follows it). Only
// IBA transport packets (LNH 2 or 3) carry an ICRC.
func CheckIBICRC(lrhAndRest []byte) (stored, computed uint32, ok bool) {
	if len(lrhAndRest) < lrhLen {
		return 0, 0, false
	}
	lnh := lrhAndRest[1] & 0x03
	end := int(binary.BigEndian.Uint16(lrhAndRest[4:6])&0x07ff) * 4
	if end > len(lrhAndRest) || end < lrhLen {
		return 0, 0, false
	}
	ib := lrhAndRest[lrhLen:end]
	var crc uint32
	switch lnh {
	case lnhIBALocal:
		crc = crcLRHMasked(lrhAndRest[:lrhLen])
	case lnhIBAGlobal:
		crc = crcOnesLRH
		if len(ib) < grhLen {
			return 0, 0, false
		}
		crc = crcIPv6Masked(crc, ib[:grhLen])
		ib = ib[grhLen:]
	default:
		return 0, 0, false
	}
	if len(ib) < bthLen+icrcLen {
		return 0, 0, false
	}
	return storedICRC(ib), crcBTHOn(crc, ib), true
}

// vcrcTable is the reflected table of the IBTA VCRC polynomial
// x^16+x^12+x^3+x+1 (0x100B; 0xD008 reflected).
var vcrcTable = func() (t [256]uint16) {
	for n := range t {
		c := uint16(n)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xd008
			} else {
				c >>= 1
			}
		}
		t[n] = c
	}
	return t
}()

// vcrc16 computes the VCRC over b: seed 0xFFFF, reflected, inverted.
func vcrc16(b []byte) uint16 {
	c := uint16(0xffff)
	for _, x := range b {
		c = vcrcTable[byte(c)^x] ^ c>>8
	}
	return ^c
}

// CheckIBVCRC checks the VCRC of a native InfiniBand packet given the bytes
// from the LRH on: CRC-16 over LRH through ICRC (PktLen·4 octets), stored in
// the two octets after them, least significant octet first like the ICRC.
// Values are the two wire octets read big-endian (tshark's
// infiniband.variant.crc).
func CheckIBVCRC(lrhAndRest []byte) (stored, computed uint16, ok bool) {
	if len(lrhAndRest) < lrhLen {
		return 0, 0, false
	}
	end := int(binary.BigEndian.Uint16(lrhAndRest[4:6])&0x07ff) * 4
	if end < lrhLen || end+vcrcLen > len(lrhAndRest) {
		return 0, 0, false
	}
	return binary.BigEndian.Uint16(lrhAndRest[end:]), bits.ReverseBytes16(vcrc16(lrhAndRest[:end])), true
}

// ComputeVCRC returns the VCRC of a native InfiniBand packet, lrhThroughICRC
// being the LRH through the ICRC (PktLen·4 octets), as the two wire octets
// read big-endian. Tests and generators use it to build packets whose ICRC
// is deliberately wrong but whose VCRC is right.
func ComputeVCRC(lrhThroughICRC []byte) uint16 { return bits.ReverseBytes16(vcrc16(lrhThroughICRC)) }
