// Package view renders dissected records: the one-line summary, the field
// tree (-V), JSON lines (-T json), tab-separated fields (-T fields),
// statistics, the connection tables and the field list. It knows no protocol:
// everything comes from the field declarations and the layers' Visitors.
package view

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// appendUint formats an unsigned value as its field's kind wants it:
// decimal, zero-padded hex, MAC or EUI-64.
func appendUint(b []byte, f *field.Field, v uint64) []byte {
	switch f.Kind {
	case field.KindHex:
		digits := (f.Bits + 3) / 4
		if digits < 1 {
			digits = 1
		}
		b = append(b, '0', 'x')
		return appendHexDigits(b, v, digits)
	case field.KindMAC:
		return appendColonHex(b, v, 6)
	case field.KindEUI64:
		return appendColonHex(b, v, 8)
	case field.KindBool:
		if v != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	}
	return strconv.AppendUint(b, v, 10)
}

func appendHexDigits(b []byte, v uint64, digits int) []byte {
	const hexd = "0123456789abcdef"
	n := 0
	for x := v; x != 0; x >>= 4 {
		n++
	}
	if n > digits {
		digits = n
	}
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hexd[(v>>(4*uint(i)))&15])
	}
	return b
}

func appendColonHex(b []byte, v uint64, n int) []byte {
	const hexd = "0123456789abcdef"
	for i := n - 1; i >= 0; i-- {
		c := byte(v >> (8 * uint(i)))
		b = append(b, hexd[c>>4], hexd[c&15])
		if i > 0 {
			b = append(b, ':')
		}
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendHexBytes appends bytes as plain lower-case hex ("f6ab0e18"), as
// JSON does and tshark 4.0 prints a bytes field in -T fields.
func appendHexBytes(b []byte, v []byte) []byte {
	n := len(b)
	b = append(b, make([]byte, hex.EncodedLen(len(v)))...)
	hex.Encode(b[n:], v)
	return b
}

func appendAddr(b []byte, a netip.Addr) []byte {
	if !a.IsValid() {
		return append(b, "<invalid>"...)
	}
	return a.AppendTo(b)
}

// plainASCII marks the octets appendEscaped copies as they are: printable
// ASCII but the backslash.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '\\'
	}
	return t
}()

// plainWord reports whether the eight octets of w are all plain (as
// plainASCII): none has the high bit, none is below 0x20, none is DEL or
// the backslash. With no octet at or above 0x80 (w&highs), subtracting
// 0x20 from every octet sets a high bit exactly when some octet is below
// 0x20 (a borrow only starts at such an octet, so it can only add high
// bits above one that is already set), and adding 1 sets one exactly when
// some octet is 0x7f (no octet is 0xff, so nothing carries); the backslash
// is the exact "has a zero octet" test of w^'\\'*ones.
func plainWord(w uint64) bool { return oddBits(w)&highBits == 0 }

// highBits are the high bits of eight octets.
const highBits = 0x8080808080808080

// oddBits is plainWord's test before the mask: its high bits are set
// where w is not plain. The tests are joined into one mask, so that
// several words cost one branch.
func oddBits(w uint64) uint64 {
	const ones = 0x0101010101010101
	x := w ^ '\\'*ones
	return w | (w - 0x20*ones) | (w + ones) | (x-ones)&^x
}

// plainPrefix returns how many leading octets of s are plain (as
// plainASCII), checked sixteen, then eight at a time (one branch each, and
// the masks' constants made once for two words); when all whole words are
// plain, the last eight octets (overlapping the last word) settle the tail
// in one check, else the table does.
func plainPrefix(s string) int {
	n := len(s)
	p := unsafe.Pointer(unsafe.StringData(s))
	i := 0
	for ; i+16 <= n; i += 16 {
		w0 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i))[:])
		w1 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i+8))[:])
		if (oddBits(w0)|oddBits(w1))&highBits != 0 {
			break
		}
	}
	for ; i+8 <= n; i += 8 {
		if !plainWord(binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i))[:])) {
			break
		}
	}
	if i == n || (i+8 > n && n >= 8 && plainWord(binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, n-8))[:]))) {
		return n
	}
	for i < n && plainASCII[s[i]] {
		i++
	}
	return i
}

// appendEscaped appends s made safe for a terminal: printable UTF-8 as is;
// control characters (C0, DEL, C1), and invalid UTF-8 as \xNN; backslash
// doubled. Bytes from packets never reach the terminal raw.
func appendEscaped(b []byte, s string) []byte {
	// Fast path: plain printable ASCII is appended as is (this runs over
	// every summary line).
	i := plainPrefix(s)
	b = append(b, s[:i]...)
	if i == len(s) {
		return b
	}
	return appendEscapedSlow(b, s[i:])
}

// appendEscapedSlow is appendEscaped past the plain prefix.
func appendEscapedSlow(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\':
				b = append(b, '\\', '\\')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'x', hexd[c>>4], hexd[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			for j := 0; j < size; j++ {
				c := s[i+j]
				b = append(b, '\\', 'x', hexd[c>>4], hexd[c&15])
			}
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// appendEscapedBytes is appendEscaped for a byte slice.
func appendEscapedBytes(b []byte, s []byte) []byte {
	return appendEscaped(b, unsafe.String(unsafe.SliceData(s), len(s)))
}

// appendJSONString appends s as a JSON string literal, always valid UTF-8:
// invalid bytes become U+FFFD after being noted as \u00NN escapes would be
// ambiguous, so they are written as the replacement character; control
// characters are \u escaped.
func appendJSONString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == 0x2028 || r == 0x2029 || (r >= 0x80 && r < 0xa0):
			b = append(b, '\\', 'u', hexd[r>>12&15], hexd[r>>8&15], hexd[r>>4&15], hexd[r&15])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }
