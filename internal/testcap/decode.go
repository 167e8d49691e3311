package testcap

import (
	"testing"

	"github.com/gopacket/gopacket"
)

// TruncFlag is the gopacket.DecodeFeedback decoder tests hand a layer: it
// records whether the layer called SetTruncated.
type TruncFlag bool

// SetTruncated sets the flag.
func (f *TruncFlag) SetTruncated() { *f = true }

// SameBytes reports whether a and b are the same bytes of one array (same
// start, length and capacity), or both nil: what tests of a decoder that
// must not copy compare its slices with.
func SameBytes(a, b []byte) bool {
	if len(a) != len(b) || cap(a) != cap(b) || (a == nil) != (b == nil) {
		return false
	}
	return cap(a) == 0 || &a[:1][0] == &b[:1][0]
}

// SameOutcome fails t unless two decodes of data ended alike: the same
// error (or none) and the same truncation feedback. It reports whether
// they succeeded.
func SameOutcome(t testing.TB, data []byte, eg, ew error, tg, tw TruncFlag) bool {
	t.Helper()
	if (eg == nil) != (ew == nil) || (eg != nil && eg.Error() != ew.Error()) || tg != tw {
		t.Fatalf("% x: error %v truncated %v, want %v %v", data, eg, tg, ew, tw)
	}
	return eg == nil
}

// Serialize is the octets of ls serialized in order (each layer's
// SerializeTo, default options), in a slice of their own; an error fails
// t.
func Serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}
