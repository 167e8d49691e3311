package pvtdata

import "fmt"

// ParseHex parses private data written by a person or copied from a tool:
// hex digits, optionally separated by spaces, tabs, newlines or colons
// ("f6 ab 0e 18", "f6:ab:0e:18", "f6ab0e18"), with an optional leading
// "0x". Errors name the offending character and its 1-based column.
func ParseHex(s string) ([]byte, error) {
	out := make([]byte, 0, len(s)/2)
	start := 0
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		start = 2
	}
	var hi byte
	half := false
	digits := 0
	for i := start; i < len(s); i++ {
		c := s[i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		case c == ' ' || c == ':' || c == '\t' || c == '\n' || c == '\r':
			if half {
				return nil, fmt.Errorf("hex: lone digit before the separator at column %d (write octets as two digits)", i+1)
			}
			continue
		default:
			r := []rune(s[i:])[0]
			return nil, fmt.Errorf("hex: invalid character %q at column %d", r, i+1)
		}
		digits++
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		return nil, fmt.Errorf("hex: odd number of hex digits (%d)", digits)
	}
	return out, nil
}
