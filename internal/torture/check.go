package torture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// CheckTerminalSafe reports the first byte sequence in out that could
// drive a terminal: invalid UTF-8 (a lone 0x9b is an 8-bit CSI to some
// terminals), C0 controls other than tab and newline (ESC, BEL, CR,
// backspace, NUL …), DEL, C1 controls (U+0080–U+009F) and the Unicode
// bidirectional overrides and isolates that reorder what the reader sees.
func CheckTerminalSafe(out []byte) error {
	line, col := 1, 0
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return fmt.Errorf("line %d column %d (octet %d): invalid UTF-8 octet 0x%02x", line, col+1, i, out[i])
		case r == '\n':
			line, col = line+1, -1
		case r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return fmt.Errorf("line %d column %d (octet %d): control character %U in %q", line, col+1, i, r, context(out, i))
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return fmt.Errorf("line %d column %d (octet %d): bidirectional control %U in %q", line, col+1, i, r, context(out, i))
		}
		i += n
		col++
	}
	return nil
}

func context(b []byte, i int) []byte {
	lo, hi := max(0, i-24), min(len(b), i+24)
	return b[lo:hi]
}

// CheckJSONLines checks that every non-empty line of out is valid UTF-8
// and one valid JSON value.
func CheckJSONLines(out []byte) error {
	for n, line := range bytes.Split(out, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		if !utf8.Valid(line) {
			return fmt.Errorf("line %d: invalid UTF-8: %q", n+1, context(line, 0))
		}
		if !json.Valid(line) {
			return fmt.Errorf("line %d: invalid JSON: %q", n+1, context(line, 0))
		}
	}
	return nil
}

// CheckJSON checks that out as a whole is valid UTF-8 and a sequence of
// JSON values (one document, or several separated by white space).
func CheckJSON(out []byte) error {
	if !utf8.Valid(out) {
		return fmt.Errorf("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return fmt.Errorf("invalid JSON at octet %d: %v", dec.InputOffset(), err)
		}
	}
}

// FrameLines maps each frame number to its output line, for views that
// print one line per frame. Tab-separated text (-T fields -e
// frame.number …) has the number in the first column (a colon after it is
// allowed: the tree's "Frame 12:" once the caller strips "Frame "); JSON lines carry it
// in "frame" (a number, or an object with a "number"). Lines that name no
// frame are ignored.
func FrameLines(out []byte) map[int]string {
	m := map[int]string{}
	for _, line := range bytes.Split(out, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		if line[0] == '{' {
			var v struct {
				Frame json.RawMessage `json:"frame"`
			}
			if json.Unmarshal(line, &v) != nil || len(v.Frame) == 0 {
				continue
			}
			var n int
			if json.Unmarshal(v.Frame, &n) != nil {
				var o struct {
					Number int `json:"number"`
				}
				if json.Unmarshal(v.Frame, &o) != nil || o.Number == 0 {
					continue
				}
				n = o.Number
			}
			m[n] = string(line)
			continue
		}
		f := bytes.TrimLeft(line, " ")
		if i := bytes.IndexAny(f, "\t "); i >= 0 {
			f = f[:i]
		}
		f = bytes.TrimSuffix(f, []byte(":")) // "12: 322 bytes on wire"
		if n, err := strconv.Atoi(string(f)); err == nil && n > 0 {
			if _, dup := m[n]; !dup {
				m[n] = string(line)
			}
		}
	}
	return m
}
