package ibcm

import (
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
)

// DecodeError is returned when input is too short for a field: the layer,
// the field, its offset from the layer's first octet, the octets needed
// and those left there (the same type as mpa's).
type DecodeError = layerdec.DecodeError

// truncated marks the input truncated and returns the DecodeError for a
// field of need octets at off when only have octets are left there.
func truncated(df gopacket.DecodeFeedback, layer, field string, off, need, have int) error {
	return layerdec.Truncated(df, layer, field, off, need, have)
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
