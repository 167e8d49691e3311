// Package finding holds what every layer and analysis step reports about a
// capture (Finding, Severity) and the catalogue of finding codes (Code):
// each package that raises findings declares its codes once, as a Catalog.
package finding

import (
	"encoding/json"
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
)

// Severity grades a Finding.
type Severity uint8

const (
	// SeverityInfo is worth knowing; nothing is wrong.
	SeverityInfo Severity = iota + 1
	// SeverityWarning is a deviation a peer tolerates but should not send,
	// or that different receivers would act on differently.
	SeverityWarning
	// SeverityError is a protocol violation or undecodable input.
	SeverityError
)

var severityNames = [...]string{SeverityInfo: "info", SeverityWarning: "warning", SeverityError: "error"}

func (s Severity) String() string { return enum.Name("Severity", severityNames[:], s) }

// MarshalText renders the severity as its lower-case name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a lower-case severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity parses "info", "warning" or "error".
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if n != "" && n == name {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning or error)", name)
}

// Finding is the project's one type for anything worth reporting about a
// capture: decode errors, protocol violations, deviations and notes. Decoders
// raise them, analysis raises them, views and "check" consume them.
//
// Code is stable and dotted ("pvtdata.overrun", "ibcm.icrc-bad",
// "conn.send-exceeds-inline"): tests, expectation files and users key on it.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Section is the specification reference: "RFC 8797 §5.2".
	Section string `json:"section"`
	// Where. Frame is the 1-based frame number (0: not tied to one frame);
	// Layer the layer name; Offset the byte offset, counted from the start
	// of the frame once dissect has placed it (from the start of the
	// decoded buffer before that), or -1 when not meaningful.
	Frame  int    `json:"frame,omitempty"`
	Layer  string `json:"layer,omitempty"`
	Offset int    `json:"offset"`
}

// MarshalJSON omits the offset when it is unknown (-1).
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	if f.Offset < 0 {
		return json.Marshal(struct {
			plain
			Offset *int `json:"offset,omitempty"`
		}{plain: plain(f)})
	}
	return json.Marshal(plain(f))
}

// String renders a finding on one line: "error pvtdata.overrun: … (RFC 8797 §5.2)".
func (f Finding) String() string {
	s := f.Severity.String() + " " + f.Code + ": " + f.Message
	if f.Section != "" {
		s += " (" + f.Section + ")"
	}
	return s
}

// Entry is one finding code in the catalogue: what it means, where the rule
// is written, and what a user can do about it. Severity is the one the code
// is always raised with: where a context makes a deviation milder, that is
// a code of its own.
type Entry struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Section  string   `json:"section"`
	Summary  string   `json:"summary"`
	Remedy   string   `json:"remedy"`
}

// Remedies that the catalogues of several packages give.
const (
	RemedyTruncated    = "When dissect.truncated is raised too, capture whole packets."
	RemedyReservedZero = "Senders must send zero: report it to the sender's implementers."
)

// Catalog is the list of codes one package raises, declared once in that
// package's codes.go: one Add per code.
type Catalog []Entry

// Add appends code's entry to c and returns code, so that a package states
// each code's name, value and catalogue entry in one declaration:
//
//	CodeX = Catalog.Add("layer.x", finding.SeverityError, "RFC … §…", "what it means", "what to do")
//
// section or remedy is "" when there is none. Package variables are
// initialised in declaration order, so c lists the codes in that order.
func (c *Catalog) Add(code string, severity Severity, section, summary, remedy string) string {
	*c = append(*c, Entry{Code: code, Severity: severity, Section: section, Summary: summary, Remedy: remedy})
	return code
}

// Lookup returns the entry for code.
func (c Catalog) Lookup(code string) (Entry, bool) {
	for _, e := range c {
		if e.Code == code {
			return e, true
		}
	}
	return Entry{}, false
}

// Section returns code's specification reference, "" when the code is not
// in c or the rule is this program's own (a resource limit).
func (c Catalog) Section(code string) string {
	e, _ := c.Lookup(code)
	return e.Section
}

// Has reports whether fs holds a finding with code.
func Has(fs []Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}
