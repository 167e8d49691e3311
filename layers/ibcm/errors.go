package ibcm

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// DecodeError is returned when input is too short for a field. It names the
// layer, the field being read, its offset from the start of the layer and
// how many octets were needed and available there.
type DecodeError struct {
	Layer  string // "BTH", "REQ" …
	Field  string // "DestQP", "private data" …
	Offset int    // from the layer's first octet
	Need   int    // octets the field needs at Offset
	Have   int    // octets available at Offset
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %s: need %d octets at offset %d, have %d", e.Layer, e.Field, e.Need, e.Offset, e.Have)
}

// short builds a DecodeError for a field of need octets at off when only
// have octets are left there (a negative have counts as none).
func short(layer, field string, off, need, have int) error {
	return &DecodeError{Layer: layer, Field: field, Offset: off, Need: need, Have: max(have, 0)}
}

// problems is a bit set of what a layer noticed while decoding; findings
// are built from it only when asked (AppendFindings), so decoding does not
// allocate.
type problems uint32

// newFinding builds a Finding with the package's conventions.
func newFinding(code string, sev finding.Severity, layer string, off int, section, format string, args ...any) finding.Finding {
	return finding.Finding{Code: code, Severity: sev, Layer: layer, Offset: off, Section: section,
		Message: fmt.Sprintf(format, args...)}
}
