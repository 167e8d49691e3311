// Package expect is what "cmpd-dissect check" checks a capture against: the
// expectation file (YAML) of what each connection must look like, the
// check of the connections a capture holds against it, and the verdict as
// text, JSON or a JUnit report.
package expect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Expectations is the YAML file "cmpd-dissect check --expect" reads and
// "--write-expect" writes: what each connection of a capture must look like.
//
//	connections:
//	  - match: {transport: rocev2, service: NFS/RDMA, client: 192.0.2.1, server: 192.0.2.2:20049}
//	    state: disconnected
//	    negotiated: {client_to_server_inline: 4096, server_to_client_inline: 4096, remote_invalidation: false}
//	    allowed_findings: [pvtdata.not-found]
//	allowed_findings: [dissect.truncated]
type Expectations struct {
	// Connections are matched in order: a connection is checked against
	// the first entry whose match keys agree, whose expectations it meets
	// and whose count is not used up (then the first it meets), else
	// against the first entry whose match keys agree (and its differences
	// are reported).
	Connections []ConnExpectation `yaml:"connections"`
	// AllowedFindings are codes allowed anywhere (on every connection and
	// on frames outside connections).
	AllowedFindings []string `yaml:"allowed_findings,omitempty"`
	// Strict makes a connection that matches no entry a difference.
	Strict bool `yaml:"strict,omitempty"`
}

// ConnExpectation is what one connection (or every connection it matches:
// reconnections) must look like.
type ConnExpectation struct {
	Match ConnMatch `yaml:"match"`
	// Count, when set, is how many connections must match.
	Count int `yaml:"count,omitempty"`
	// State, when set, is the expected final state ("established",
	// "disconnected", "rejected" …).
	State string `yaml:"state,omitempty"`
	// Negotiated, when set, are the expected negotiated values; fields left
	// out are not checked.
	Negotiated *NegotiatedExpectation `yaml:"negotiated,omitempty"`
	// AllowedFindings are the finding codes allowed on the connection; any
	// other warning or error finding is a difference.
	AllowedFindings []string `yaml:"allowed_findings"`
}

// ConnMatch selects connections; every key given must match, keys left
// out match anything. Service matches the service name ("NFS/RDMA"), the
// port ("20049") or the service ID in hex; Client and Server match an
// address ("192.0.2.1") or address and port ("192.0.2.2:20049").
type ConnMatch struct {
	Transport string `yaml:"transport,omitempty"`
	Service   string `yaml:"service,omitempty"`
	Client    string `yaml:"client,omitempty"`
	Server    string `yaml:"server,omitempty"`
}

// NegotiatedExpectation is the expected negotiation; nil fields are not
// checked.
type NegotiatedExpectation struct {
	ClientToServerInline *int  `yaml:"client_to_server_inline,omitempty" json:"client_to_server_inline,omitempty"`
	ServerToClientInline *int  `yaml:"server_to_client_inline,omitempty" json:"server_to_client_inline,omitempty"`
	RemoteInvalidation   *bool `yaml:"remote_invalidation,omitempty" json:"remote_invalidation,omitempty"`
}

// Parse reads an expectation file's YAML. Unknown keys are an
// error, so a typo does not silently check nothing.
func Parse(data []byte) (*Expectations, error) {
	var e Expectations
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&e); err != nil && err != io.EOF {
		return nil, fmt.Errorf("expectations: %w", err)
	}
	for i, c := range e.Connections {
		if c.Match.Transport != "" {
			if _, err := conn.ParseTransport(c.Match.Transport); err != nil {
				return nil, fmt.Errorf("expectations: connection %d: match: %w", i+1, err)
			}
		}
		if c.State != "" {
			if _, err := conn.ParseState(c.State); err != nil {
				return nil, fmt.Errorf("expectations: connection %d: %w", i+1, err)
			}
		}
		if n := c.Negotiated; n != nil {
			for _, v := range []*int{n.ClientToServerInline, n.ServerToClientInline} {
				if v != nil {
					if f, bad := pvtdata.SizeFinding(fmt.Sprintf("expectations: connection %d: negotiated inline threshold", i+1), *v); bad {
						return nil, fmt.Errorf("%s", f.Message)
					}
				}
			}
		}
	}
	return &e, nil
}

// Load reads and parses an expectation file.
func Load(path string) (*Expectations, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	e, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// From describes the connections as they are, so a known-good
// capture can be pinned: one entry per distinct connection (same match and
// same result), with the codes of the findings it has.
func From(cs []*conn.Connection, other []finding.Finding) *Expectations {
	e := &Expectations{}
	seen := map[string]int{}
	for _, c := range cs {
		x := ConnExpectation{
			Match: ConnMatch{Transport: c.Transport.String(), Service: serviceMatchName(c),
				Client: hostString(c.Client), Server: c.Server.String()},
			State:           c.State.String(),
			AllowedFindings: findingCodes(c.Findings()),
		}
		if c.Replied() && c.State != conn.StateRejected && c.Kind != conn.KindSIDR {
			n := c.Negotiated
			x.Negotiated = &NegotiatedExpectation{ClientToServerInline: &n.ClientToServerInline,
				ServerToClientInline: &n.ServerToClientInline, RemoteInvalidation: &n.RemoteInvalidation}
		}
		key, _ := json.Marshal(x)
		if i, ok := seen[string(key)]; ok {
			e.Connections[i].Count++
			continue
		}
		x.Count = 1
		seen[string(key)] = len(e.Connections)
		e.Connections = append(e.Connections, x)
	}
	e.AllowedFindings = findingCodes(other)
	return e
}

// Write writes e as YAML with a short header.
func Write(w io.Writer, e *Expectations, from string) error {
	fmt.Fprintf(w, "# cmpd-dissect check expectations, written by --write-expect from %s.\n", from)
	fmt.Fprintln(w, "# A connection is checked against the first entry whose match keys agree and whose")
	fmt.Fprintln(w, "# expectations it meets (else the first whose match keys agree); every warning or")
	fmt.Fprintln(w, "# error finding on it must be listed in allowed_findings.")
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(e); err != nil {
		return err
	}
	return enc.Close()
}

func findingCodes(fs []finding.Finding) []string {
	set := map[string]bool{}
	for _, f := range fs {
		set[f.Code] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func serviceMatchName(c *conn.Connection) string {
	if !c.HasServiceID {
		return ""
	}
	if _, port, ok := ibcm.RDMACMPort(c.ServiceID); ok {
		return strconv.Itoa(int(port))
	}
	return fmt.Sprintf("0x%016x", c.ServiceID)
}

func hostString(p conn.Peer) string {
	p.Port = 0
	return p.String()
}

// Matches reports whether c satisfies every key of m.
func (m ConnMatch) Matches(c *conn.Connection) bool {
	if m.Transport != "" && m.Transport != c.Transport.String() {
		return false
	}
	if m.Service != "" && !serviceMatches(m.Service, c) {
		return false
	}
	if m.Client != "" && !peerMatches(m.Client, c.Client) {
		return false
	}
	if m.Server != "" && !peerMatches(m.Server, c.Server) {
		return false
	}
	return true
}

func serviceMatches(want string, c *conn.Connection) bool {
	if !c.HasServiceID {
		return false
	}
	if strings.HasPrefix(want, "0x") {
		v, err := strconv.ParseUint(want[2:], 16, 64)
		return err == nil && v == c.ServiceID
	}
	_, port, ok := ibcm.RDMACMPort(c.ServiceID)
	if n, err := strconv.Atoi(want); err == nil {
		return ok && int(port) == n
	}
	name := c.Service()
	return strings.EqualFold(name, want) || strings.HasPrefix(strings.ToLower(name), strings.ToLower(want)+" ")
}

func peerMatches(want string, p conn.Peer) bool {
	if want == p.String() {
		return true
	}
	if ap, err := netip.ParseAddrPort(want); err == nil {
		return p.Addr == ap.Addr() && p.Port == ap.Port()
	}
	if a, err := netip.ParseAddr(want); err == nil {
		return p.Addr == a
	}
	q := p
	q.Port = 0
	return want == q.String()
}

// Difference is one way the capture does not meet the expectations.
type Difference struct {
	// Connection is the connection's ID, 0 when the difference concerns
	// no one connection; Expectation is the 1-based entry, 0 for none.
	Connection  int    `json:"connection,omitempty"`
	Expectation int    `json:"expectation,omitempty"`
	Message     string `json:"message"`
	// Finding is the finding that was not allowed, if that is the
	// difference.
	Finding *finding.Finding `json:"finding,omitempty"`
}

// Result is the verdict of Check.
type Result struct {
	Pass        bool         `json:"pass"`
	Connections int          `json:"connections"`
	Differences []Difference `json:"differences"`
	// Findings counts every finding by severity.
	Findings map[string]int `json:"findings"`
	// Cases is one entry per connection (and one for the findings outside
	// connections), for the JUnit report.
	Cases []Case `json:"cases"`
}

// Case is the verdict on one connection.
type Case struct {
	Name        string       `json:"name"`
	Differences []Difference `json:"differences"`
}

// Check compares connections and the findings outside them with e (nil:
// no expectation file, so only error findings fail).
func Check(cs []*conn.Connection, other []finding.Finding, e *Expectations) Result {
	if e == nil {
		e = &Expectations{}
	}
	res := Result{Connections: len(cs), Findings: map[string]int{}, Differences: []Difference{}}
	global := codeSet(e.AllowedFindings)
	matched := make([]int, len(e.Connections))
	for _, c := range cs {
		cc := Case{Name: fmt.Sprintf("connection %d %s %s → %s %s", c.ID, c.Transport, c.Client, c.Server, c.Service())}
		diff := func(exp int, f *finding.Finding, format string, args ...any) {
			cc.Differences = append(cc.Differences, Difference{Connection: c.ID, Expectation: exp, Finding: f,
				Message: fmt.Sprintf("connection %d (%s → %s): ", c.ID, c.Client, c.Server) + fmt.Sprintf(format, args...)})
		}
		for _, fc := range c.FindingCounts {
			res.Findings[fc.Severity.String()] += fc.Count
		}
		// The entry a connection is checked against: the first matching
		// entry it satisfies, else the first matching entry (whose
		// differences are reported). Reconnections with different results
		// can so be described by several entries with the same match.
		idx, full := -1, -1
		var diffs []Difference
		for i := range e.Connections {
			x := &e.Connections[i]
			if !x.Match.Matches(c) {
				continue
			}
			d := compareConn(c, x, i+1, global)
			if idx < 0 {
				idx, diffs = i, d
			}
			if len(d) > 0 {
				continue
			}
			if x.Count == 0 || matched[i] < x.Count {
				idx, diffs, full = i, nil, -1
				break
			}
			if full < 0 {
				// Satisfied but its count is used up: a later entry may
				// want this connection.
				full = i
			}
		}
		if full >= 0 {
			idx, diffs = full, nil
		}
		if idx < 0 {
			if e.Strict {
				diff(0, nil, "matches no expectation")
			}
			for _, f := range c.Findings() {
				if f.Severity == finding.SeverityError && !global[f.Code] {
					diff(0, &f, "error finding at frame %d: %s", f.Frame, f.String())
				}
			}
			for _, fc := range c.FindingCounts {
				if fc.Severity == finding.SeverityError && !global[fc.Code] && fc.Unlisted() > 0 {
					diff(0, nil, "and %d more error findings %s%s", fc.Unlisted(), fc.Code, fc.UnlistedSpan())
				}
			}
		} else {
			matched[idx]++
			cc.Differences = append(cc.Differences, diffs...)
		}
		res.Differences = append(res.Differences, cc.Differences...)
		res.Cases = append(res.Cases, cc)
	}
	for i, x := range e.Connections {
		switch {
		case matched[i] == 0:
			d := Difference{Expectation: i + 1, Message: fmt.Sprintf("expectation %d (%s): no connection matches", i+1, x.Match)}
			res.Differences = append(res.Differences, d)
			res.Cases = append(res.Cases, Case{Name: fmt.Sprintf("expectation %d %s", i+1, x.Match), Differences: []Difference{d}})
		case x.Count > 0 && matched[i] != x.Count:
			d := Difference{Expectation: i + 1, Message: fmt.Sprintf("expectation %d (%s): %d connections match, expected %d", i+1, x.Match, matched[i], x.Count)}
			res.Differences = append(res.Differences, d)
			res.Cases = append(res.Cases, Case{Name: fmt.Sprintf("expectation %d %s", i+1, x.Match), Differences: []Difference{d}})
		}
	}
	oc := Case{Name: "findings outside connections"}
	for i := range other {
		f := other[i]
		res.Findings[f.Severity.String()]++
		if f.Severity == finding.SeverityError && !global[f.Code] {
			oc.Differences = append(oc.Differences, Difference{Finding: &f,
				Message: fmt.Sprintf("error finding at frame %d: %s", f.Frame, f.String())})
		}
	}
	res.Differences = append(res.Differences, oc.Differences...)
	res.Cases = append(res.Cases, oc)
	res.Pass = len(res.Differences) == 0
	return res
}

// compareConn lists how c differs from the expectation x (entry n).
func compareConn(c *conn.Connection, x *ConnExpectation, n int, global map[string]bool) []Difference {
	var out []Difference
	diff := func(f *finding.Finding, format string, args ...any) {
		out = append(out, Difference{Connection: c.ID, Expectation: n, Finding: f,
			Message: fmt.Sprintf("connection %d (%s → %s): ", c.ID, c.Client, c.Server) + fmt.Sprintf(format, args...)})
	}
	if x.State != "" && x.State != c.State.String() {
		diff(nil, "state is %s, expected %s", c.StateText(), x.State)
	}
	if x.Negotiated != nil {
		if !c.Replied() || c.State == conn.StateRejected {
			diff(nil, "nothing was negotiated (no reply seen), expected negotiated values")
		} else {
			got := c.Negotiated
			if v := x.Negotiated.ClientToServerInline; v != nil && *v != got.ClientToServerInline {
				diff(nil, "negotiated client → server inline threshold is %d, expected %d", got.ClientToServerInline, *v)
			}
			if v := x.Negotiated.ServerToClientInline; v != nil && *v != got.ServerToClientInline {
				diff(nil, "negotiated server → client inline threshold is %d, expected %d", got.ServerToClientInline, *v)
			}
			if v := x.Negotiated.RemoteInvalidation; v != nil && *v != got.RemoteInvalidation {
				diff(nil, "negotiated remote invalidation is %t, expected %t", got.RemoteInvalidation, *v)
			}
		}
	}
	allowed := codeSet(x.AllowedFindings)
	reported := map[string]bool{}
	for _, f := range c.Findings() {
		if f.Severity < finding.SeverityWarning || allowed[f.Code] || global[f.Code] || reported[f.Code] {
			continue
		}
		reported[f.Code] = true
		diff(&f, "finding %s not allowed (frame %d): %s", f.Code, f.Frame, f.String())
	}
	return out
}

// String renders the match keys: "rocev2 NFS/RDMA 192.0.2.1 → 192.0.2.2:20049".
func (m ConnMatch) String() string {
	var parts []string
	for _, s := range []string{m.Transport, m.Service} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if m.Client != "" || m.Server != "" {
		c, s := m.Client, m.Server
		if c == "" {
			c = "*"
		}
		if s == "" {
			s = "*"
		}
		parts = append(parts, c+" → "+s)
	}
	if len(parts) == 0 {
		return "any connection"
	}
	return strings.Join(parts, " ")
}

func codeSet(codes []string) map[string]bool {
	m := make(map[string]bool, len(codes))
	for _, c := range codes {
		m[c] = true
	}
	return m
}

// WriteText writes the verdict: each difference on its own line,
// then PASS or FAIL with the counts.
func WriteText(w io.Writer, r Result) error {
	bw := bufio.NewWriter(w)
	for _, d := range r.Differences {
		fmt.Fprintf(bw, "- %s\n", d.Message)
	}
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(bw, "%s: %d connections, %d differences; findings: %s\n", verdict, r.Connections,
		len(r.Differences), severityCounts(r.Findings))
	return bw.Flush()
}

func severityCounts(m map[string]int) string {
	var parts []string
	for _, s := range []string{"error", "warning", "info"} {
		if m[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", m[s], s))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes the verdict as one JSON object.
func WriteJSON(w io.Writer, r Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the verdict as a JUnit XML report (one test case
// per connection, per unmatched expectation and for the findings outside
// connections), the format CI systems display.
func WriteJUnit(w io.Writer, r Result, suite string) error {
	s := junitSuite{Name: suite}
	for _, c := range r.Cases {
		jc := junitCase{Name: c.Name, ClassName: "cmpd-dissect.check"}
		if len(c.Differences) > 0 {
			var lines []string
			for _, d := range c.Differences {
				lines = append(lines, d.Message)
			}
			jc.Failure = &junitFailure{Message: fmt.Sprintf("%d differences", len(c.Differences)), Text: strings.Join(lines, "\n")}
			s.Failures++
		}
		s.Cases = append(s.Cases, jc)
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
