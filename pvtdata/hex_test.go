package pvtdata

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func TestParseHex(t *testing.T) {
	good := map[string][]byte{
		"f6ab0e1801010303":        kernelClient,
		"f6 ab 0e 18 01 01 03 03": kernelClient,
		"F6:AB:0E:18:01:01:03:03": kernelClient,
		"0xf6ab0e18 01000303":     kernelServer,
		" f6ab\n0e18\t01010303\n": kernelClient,
		"":                        {},
	}
	for in, want := range good {
		got, err := ParseHex(in)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseHex(%q) = % x, %v; want % x", in, got, err, want)
		}
	}
	bad := map[string]string{
		"f6ab0":     "odd number of hex digits (5)",
		"f6ag":      `invalid character 'g' at column 4`,
		"f6 a b0":   "lone digit before the separator at column 5",
		"f6é0":      `invalid character 'é' at column 3`,
		"0x0x":      `invalid character 'x' at column 4`,
		"f6-ab-0e":  `invalid character '-' at column 3`,
		"f6ab0e18,": `invalid character ',' at column 9`,
	}
	for in, want := range bad {
		_, err := ParseHex(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHex(%q) error %v, want %q", in, err, want)
		}
	}
}

// FuzzParseHex: never panics; whatever it accepts holds exactly the hex
// digits given; hex it printed itself always parses back.
func FuzzParseHex(f *testing.F) {
	for _, s := range []string{"f6ab0e1801010303", "f6 ab:0e", "0x", "0xf", "é", "f6 a b0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseHex(s)
		if err == nil {
			digits := 0
			for i := 0; i < len(s); i++ {
				if strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0 {
					digits++
				}
			}
			if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
				digits--
			}
			if len(b)*2 != digits {
				t.Fatalf("%q: %d octets from %d digits", s, len(b), digits)
			}
		}
		back, err := ParseHex(hex.EncodeToString([]byte(s)))
		if err != nil || !bytes.Equal(back, []byte(s)) {
			t.Fatalf("round trip of %q: % x %v", s, back, err)
		}
	})
}
