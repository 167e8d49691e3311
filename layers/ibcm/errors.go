package ibcm

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
)

// DecodeError is returned when input is too short for a field: the layer,
// the field, its offset from the layer's first octet, the octets needed
// and those left there (the same type as mpa's).
type DecodeError = layerdec.DecodeError

// problems is a bit set of what a layer noticed while decoding; findings
// are built from it only when asked (AppendFindings), so decoding does not
// allocate.
type problems uint32

// newFinding builds a Finding with the package's conventions.
func newFinding(code string, sev finding.Severity, layer string, off int, section, format string, args ...any) finding.Finding {
	return finding.Finding{Code: code, Severity: sev, Layer: layer, Offset: off, Section: section,
		Message: fmt.Sprintf(format, args...)}
}
