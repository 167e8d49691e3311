// Package report writes one self-contained HTML file about captures: the
// explain verdict and statements, the connection table, an SVG ladder
// diagram per connection (with a text ladder as its alternative), the
// negotiation table and the findings with their frames. Everything is
// inline (CSS, SVG, a few lines of script): the file fetches nothing, works
// from a file:// URL or as a mail attachment, and prints.
package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/explain"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// Capture is what the report shows of one capture: the tracker's
// connections and the findings outside them, and their explanation.
type Capture struct {
	Name        string
	Conns       []*conn.Connection
	Other       []finding.Finding
	Explanation *explain.Capture
}

//go:embed report.html.tmpl
var pageText string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"sev":      func(s finding.Severity) string { return s.String() },
	"sevclass": sevClass,
}).Parse(pageText))

// pageData is the template's data.
type pageData struct {
	Title    string
	Captures []captureView
	Ladders  int
}

type captureView struct {
	Anchor  string
	Name    string
	Verdict explain.Item
	Groups  []explain.Group
	Other   []explain.Item
	Conns   []connView
	// Findings lists every finding: each connection's, then the others.
	Findings []findingView
}

type connView struct {
	ID                                       int
	Anchor                                   string
	Transport, Client, Server, Service       string
	State, Frames                            string
	ClientPD, ServerPD, Negotiated, Findings string
	// The negotiation: each side's values, the thresholds.
	Negotiation *negotiationView
	Ladder      ladder
	TextLadder  string
}

type negotiationView struct {
	ClientSend, ClientRecv, ServerSend, ServerRecv int
	ClientR, ServerR                               string
	ClientWhere, ServerWhere                       string
	C2S, S2C                                       int
	RI                                             string
}

type findingView struct {
	Conn     int
	Frame    string
	Severity finding.Severity
	Code     string
	Message  string
	Section  string
	Count    string
}

// Write writes the report of caps to w.
func Write(w io.Writer, caps []Capture) error {
	data := pageData{Title: "cmpd-dissect report"}
	var names []string
	for i, c := range caps {
		names = append(names, c.Name)
		cv := captureView{Anchor: fmt.Sprintf("capture-%d", i+1), Name: c.Name}
		if e := c.Explanation; e != nil {
			cv.Verdict, cv.Groups, cv.Other = e.Verdict, e.Groups, e.Other
		}
		for _, cn := range c.Conns {
			v, err := newConnView(cv.Anchor, cn)
			if err != nil {
				return err
			}
			cv.Conns = append(cv.Conns, v)
			data.Ladders++
			cv.Findings = append(cv.Findings, connFindings(cn)...)
		}
		for _, f := range c.Other {
			cv.Findings = append(cv.Findings, findingView{Frame: frameText(f.Frame), Severity: f.Severity, Code: f.Code,
				Message: f.Message, Section: f.Section})
		}
		data.Captures = append(data.Captures, cv)
	}
	if len(names) == 1 {
		data.Title = "cmpd-dissect report: " + names[0]
	} else if len(names) > 1 {
		data.Title = fmt.Sprintf("cmpd-dissect report: %d captures", len(names))
	}
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func frameText(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func newConnView(prefix string, c *conn.Connection) (connView, error) {
	v := connView{
		ID: c.ID, Anchor: fmt.Sprintf("%s-conn-%d", prefix, c.ID),
		Transport: c.Transport.String(), Client: c.Client.String(), Server: c.Server.String(), Service: c.Service(),
		State:    string(c.AppendStateText(nil)),
		Frames:   frameText(c.RequestFrame) + "/" + frameText(c.ReplyFrame),
		ClientPD: view.PrivateDataSummary(c.ClientData), ServerPD: view.PrivateDataSummary(c.ServerData),
		Negotiated: view.NegotiatedSummary(c), Findings: view.ConnFindingCounts(c),
		Ladder: newLadder(c),
	}
	if v.Service == "" {
		v.Service = "-"
	}
	if c.Replied() && c.State != conn.StateRejected && c.Kind != conn.KindSIDR {
		ce, se := c.ClientData.Effective(), c.ServerData.Effective()
		n := c.Negotiated
		v.Negotiation = &negotiationView{
			ClientSend: ce.SendSize, ClientRecv: ce.ReceiveSize, ServerSend: se.SendSize, ServerRecv: se.ReceiveSize,
			ClientR: yesNo(ce.RemoteInvalidation), ServerR: yesNo(se.RemoteInvalidation),
			ClientWhere: where(c.ClientData), ServerWhere: where(c.ServerData),
			C2S: n.ClientToServerInline, S2C: n.ServerToClientInline, RI: yesNo(n.RemoteInvalidation),
		}
	}
	var t strings.Builder
	if err := view.WriteConnsLadder(&t, []*conn.Connection{c}); err != nil {
		return v, err
	}
	v.TextLadder = t.String()
	return v, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// where says where a side's values come from: the message and frame, or
// why they are the defaults.
func where(pd *conn.PrivateData) string {
	switch {
	case pd == nil:
		return "not captured: defaults"
	case !pd.Valid():
		return fmt.Sprintf("%s frame %d: %s, defaults", pd.Message, pd.Frame, view.PrivateDataSummary(pd))
	}
	return fmt.Sprintf("%s frame %d", pd.Message, pd.Frame)
}

// connFindings lists a connection's findings, each code's unlisted ones
// counted on the last listed.
func connFindings(c *conn.Connection) []findingView {
	var out []findingView
	fs := c.Findings()
	seen := map[string]int{}
	for _, f := range fs {
		fv := findingView{Conn: c.ID, Frame: frameText(f.Frame), Severity: f.Severity, Code: f.Code, Message: f.Message, Section: f.Section}
		key := f.Code + "/" + f.Severity.String()
		seen[key]++
		if n := c.FindingCount(f.Code, f.Severity); n != nil && seen[key] == n.Listed && n.Unlisted() > 0 {
			fv.Count = fmt.Sprintf("and %d more like this up to frame %d", n.Unlisted(), n.LastFrame)
		}
		out = append(out, fv)
	}
	return out
}
