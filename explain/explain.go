// Package explain says in plain sentences what happened to the RDMA
// connections of a capture: a verdict first, then per connection (or per
// group of connections that went the same way) what the peers agreed and
// why, who refused and why, what the traffic broke and what to do about it.
//
// It reads only what the connection tracker (package conn) already
// computed — the connections, their ladders, private data, negotiation and
// findings — and the findings outside connections: it is a rendering of
// that one analysis, never a second one.
package explain

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Item codes of the statements that are not findings of their own.
const (
	CodeVerdict            = "explain.verdict"
	CodeSetup              = "explain.setup"
	CodeInlineThreshold    = "explain.inline-threshold"
	CodeDefaults           = "explain.defaults"
	CodeReaders            = "explain.readers"
	CodeRemoteInvalidation = "explain.remote-invalidation"
	CodeReject             = "explain.reject"
	CodeNoAnswer           = "explain.no-answer"
	CodeReconnectStorm     = "explain.reconnect-storm"
	CodeTraffic            = "explain.traffic"
)

// Item is one statement: what it is about (capture, connections, frames)
// and its text; Remedy says what to do where a remedy is known.
type Item struct {
	Capture  string           `json:"capture"`
	Code     string           `json:"code"`
	Severity finding.Severity `json:"severity"`
	// Connection is the connection the statement describes (0: the whole
	// capture); Connections lists every connection of its group when the
	// statement stands for several that went the same way.
	Connection  int    `json:"connection,omitempty"`
	Connections []int  `json:"connections,omitempty"`
	Frames      []int  `json:"frames"`
	Text        string `json:"text"`
	Remedy      string `json:"remedy,omitempty"`
	// Section is the specification section the statement rests on.
	Section string `json:"section,omitempty"`
	// Finding is the code of the finding the statement explains, if any.
	Finding string `json:"finding,omitempty"`
	// head is the statement in a few words, for the verdict.
	head string
}

// Group is a set of connections that went the same way (same peers and
// service, same private data, same outcome, same findings), explained once
// through its first connection.
type Group struct {
	Conns []*conn.Connection
	// Title introduces the group: "Connection 1: …" or "166 connections
	// from A to B, all rejected the same way".
	Title string
	Items []Item
}

// Capture is the explanation of one capture.
type Capture struct {
	Name    string
	Verdict Item
	Groups  []Group
	// Other are the findings outside any connection.
	Other []Item
}

// Items lists every statement: the verdict, each group's, the others.
func (c *Capture) Items() []Item {
	out := []Item{c.Verdict}
	for _, g := range c.Groups {
		out = append(out, g.Items...)
	}
	return append(out, c.Other...)
}

// Explain explains the connections cs of the capture name (as the tracker
// left them after Finish) and the findings outside connections.
func Explain(name string, cs []*conn.Connection, other []finding.Finding) *Capture {
	out := &Capture{Name: name}
	for _, g := range group(cs) {
		out.Groups = append(out.Groups, explainGroup(name, g))
	}
	for _, f := range other {
		it := Item{Capture: name, Code: f.Code, Severity: f.Severity, Frames: frames(f.Frame),
			Text: f.Message, Section: f.Section, Finding: f.Code}
		out.Other = append(out.Other, it)
	}
	out.Verdict = verdict(name, cs, out)
	return out
}

func frames(fs ...int) []int {
	out := []int{}
	for _, f := range fs {
		if f != 0 {
			out = append(out, f)
		}
	}
	return out
}

// group puts together connections whose explanation would read the same,
// in the order of their first connection.
func group(cs []*conn.Connection) [][]*conn.Connection {
	var out [][]*conn.Connection
	index := map[string]int{}
	for _, c := range cs {
		k := groupKey(c)
		if i, ok := index[k]; ok {
			out[i] = append(out[i], c)
			continue
		}
		index[k] = len(out)
		out = append(out, []*conn.Connection{c})
	}
	return out
}

func groupKey(c *conn.Connection) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%s|%v|%d|%s|%d|%d|%s|", c.Kind, c.Transport, hostOf(c.Client), c.Server.LID, c.Server.String(),
		c.State, c.RejectReason, c.RejectReasonName)
	for _, pd := range []*conn.PrivateData{c.ClientData, c.ServerData} {
		if pd == nil {
			b.WriteString("-|")
			continue
		}
		// The ULP's part: the rdma_cm header before it names the
		// client's port, new on each connection; MPA's IRD/ORD stay.
		head := pd.Bytes[:min(pd.ULPOffset, len(pd.Bytes))]
		if e := pd.ULPOffset; e == 36 {
			head = nil
		}
		fmt.Fprintf(&b, "%x/%x|", head, pd.ULP())
	}
	fmt.Fprintf(&b, "%+v|", c.Negotiated)
	for i := range c.NumSteps() {
		if rev, flags, ok := c.StepMPA(i); ok {
			fmt.Fprintf(&b, "mpa%d/%x|", rev, flags)
		}
		s := c.Step(i)
		if strings.HasPrefix(s.Message, "TCP ") {
			// How the TCP stream closed after an iWARP set-up (which
			// side's FIN came first, a FIN resent) is not how the
			// connection went.
			continue
		}
		fmt.Fprintf(&b, "%s%v%v|", s.Message, s.FromClient, s.Retransmission)
	}
	codes := make([]string, 0, len(c.FindingCounts))
	for _, n := range c.FindingCounts {
		codes = append(codes, fmt.Sprintf("%s/%s", n.Code, n.Severity))
	}
	sort.Strings(codes)
	b.WriteString(strings.Join(codes, ","))
	return b.String()
}

// hostOf is a peer without its port: the client of a reconnection uses a
// new port each time.
func hostOf(p conn.Peer) string {
	p.Port = 0
	return p.String()
}

func ids(cs []*conn.Connection) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// failed reports a connection that never carried traffic: refused, or its
// setup not finished.
func failed(c *conn.Connection) bool {
	switch c.State {
	case conn.StateRejected:
		return true
	case conn.StateTimedOut, conn.StateRequested, conn.StateReplied:
		return c.EstablishedFrame == 0
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// failure tells the statements that say why a connection failed: refusals,
// unanswered setups, reconnect storms. They break no protocol rule (so they
// are warnings) but are what a user asks about first.
func failure(code string) bool {
	return code == CodeReject || code == CodeNoAnswer || code == CodeReconnectStorm
}

// verdict sums up the capture: how many connections, how many failed, the
// worst problems.
func verdict(name string, cs []*conn.Connection, out *Capture) Item {
	it := Item{Capture: name, Code: CodeVerdict, Severity: finding.SeverityInfo, Frames: []int{}}
	if len(cs) == 0 {
		it.Text = fmt.Sprintf("%s: no connection setup (no IB CM REQ, no MPA Request) in the capture.", name)
		if len(out.Other) > 0 {
			it.Text += fmt.Sprintf(" %s outside any connection.", plural(len(out.Other), "finding", "findings"))
		}
		return it
	}
	var nFailed, nEstablished int
	for _, c := range cs {
		switch {
		case failed(c):
			nFailed++
		case c.EstablishedFrame != 0:
			nEstablished++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", name, plural(len(cs), "connection", "connections"))
	switch {
	case nFailed == 0:
		fmt.Fprintf(&b, ", none failed")
	case nFailed == len(cs):
		if len(cs) == 1 {
			fmt.Fprintf(&b, ", which failed")
		} else {
			fmt.Fprintf(&b, ", all failed")
		}
	default:
		fmt.Fprintf(&b, ", %d failed", nFailed)
	}
	if nEstablished > 0 && nFailed > 0 {
		fmt.Fprintf(&b, " (%d established)", nEstablished)
	}
	b.WriteString(".")
	// The worst problems: the statements of the highest severity, one per
	// code, groups' first.
	var worst []Item
	for _, g := range out.Groups {
		for _, gi := range g.Items {
			if gi.Severity >= finding.SeverityWarning && gi.Code != CodeSetup {
				worst = append(worst, gi)
			}
		}
	}
	for _, o := range out.Other {
		if o.Severity >= finding.SeverityWarning {
			worst = append(worst, o)
		}
	}
	sort.SliceStable(worst, func(i, j int) bool {
		if worst[i].Severity != worst[j].Severity {
			return worst[i].Severity > worst[j].Severity
		}
		return failure(worst[i].Code) && !failure(worst[j].Code)
	})
	seen := map[string]bool{}
	var heads []string
	for _, w := range worst {
		key := w.Code + "|" + w.Finding
		if seen[key] || len(heads) >= 3 {
			continue
		}
		seen[key] = true
		heads = append(heads, headline(w))
		it.Severity = max(it.Severity, w.Severity)
		it.Frames = append(it.Frames, w.Frames...)
	}
	if len(heads) > 0 {
		fmt.Fprintf(&b, " Worst: %s.", strings.Join(heads, "; "))
	} else {
		b.WriteString(" No problem found.")
		// What is still worth knowing: defaults in force.
		var notes []string
		for _, g := range out.Groups {
			for _, gi := range g.Items {
				if gi.Code == CodeDefaults && gi.head != "" && len(notes) < 2 {
					notes = append(notes, gi.head)
				}
			}
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, " Of note: %s.", strings.Join(notes, "; "))
		}
	}
	it.Text = b.String()
	return it
}

// headline is the statement in a few words: the one its maker gave, else
// its first clause.
func headline(it Item) string {
	if it.head != "" {
		return it.head
	}
	t := it.Text
	if i := strings.Index(t, ": "); i > 0 && i < 60 && strings.HasPrefix(t, "Connection") {
		t = t[i+2:]
	}
	for _, sep := range []string{". ", "; "} {
		if i := strings.Index(t, sep); i > 0 {
			t = t[:i]
		}
	}
	t = strings.TrimSuffix(t, ".")
	if len(t) > 100 {
		t = t[:strings.LastIndex(t[:100], " ")] + " …"
	}
	return t
}

// stateWords are how explain words a connection's state: in the title of
// a group of connections that all ended so ("all …"; else "all the same
// way") and in a connection's setup statement (else the state's name).
var stateWords = map[conn.State]struct{ group, setup string }{
	conn.StateRejected:     {"rejected the same way", "refused"},
	conn.StateTimedOut:     {"timed out the same way", ""},
	conn.StateDisconnected: {"set up and closed the same way", "set up, then closed"},
	conn.StateEstablished:  {"set up the same way", "set up and still open where the capture ends"},
	conn.StateRequested:    {"", "still waiting for an answer where the capture ends"},
}

// explainGroup explains one group through its first connection.
func explainGroup(name string, cs []*conn.Connection) Group {
	c := cs[0]
	g := Group{Conns: cs}
	e := &explainer{name: name, c: c, cs: cs}
	if len(cs) == 1 {
		g.Title = fmt.Sprintf("Connection %d: %s → %s%s", c.ID, c.Client, c.Server, e.over())
	} else {
		how := cmp.Or(stateWords[c.State].group, "the same way")
		g.Title = fmt.Sprintf("%d connections (%d to %d) from %s to %s%s, all %s", len(cs), c.ID, cs[len(cs)-1].ID,
			hostOf(c.Client), c.Server, e.over(), how)
	}
	e.setup()
	e.refused()
	e.agreed()
	e.traffic()
	e.rest()
	g.Items = e.items
	return g
}

// explainer builds the statements of one group.
type explainer struct {
	name  string
	c     *conn.Connection
	cs    []*conn.Connection
	items []Item
	// covered are the finding codes a statement already explains.
	covered map[string]bool
}

func (e *explainer) add(it Item) {
	it.Capture = e.name
	it.Connection = e.c.ID
	if len(e.cs) > 1 {
		it.Connections = ids(e.cs)
	}
	if it.Frames == nil {
		it.Frames = []int{}
	}
	e.items = append(e.items, it)
	if it.Finding != "" {
		e.cover(it.Finding)
	}
}

func (e *explainer) cover(codes ...string) {
	if e.covered == nil {
		e.covered = map[string]bool{}
	}
	for _, c := range codes {
		e.covered[c] = true
	}
}

var transportNames = map[conn.Transport]string{conn.RoCEv2: "RoCEv2", conn.RoCEv1: "RoCEv1", conn.IB: "InfiniBand", conn.IWARP: "iWARP"}

// over says the transport and service: " over RoCEv2, NFS/RDMA (…)".
func (e *explainer) over() string {
	s := ""
	if n, ok := transportNames[e.c.Transport]; ok {
		s = " over " + n
	}
	if svc := e.c.Service(); svc != "" {
		s += ", " + svc
	}
	return s
}

// setup tells the ladder in one sentence.
func (e *explainer) setup() {
	c := e.c
	var parts []string
	var fs []int
	for i := range c.NumSteps() {
		s := c.Step(i)
		txt := fmt.Sprintf("%s frame %d", s.Message, s.Frame)
		if s.Retransmission {
			txt = fmt.Sprintf("%s again (retransmission) frame %d", s.Message, s.Frame)
		}
		parts = append(parts, txt)
		fs = append(fs, s.Frame)
	}
	if c.StepsDropped > 0 {
		parts = append(parts, fmt.Sprintf("%d more messages", c.StepsDropped))
	}
	state := cmp.Or(stateWords[c.State].setup, c.State.String())
	text := fmt.Sprintf("%s: %s.", capitalize(state), strings.Join(parts, ", "))
	if c.ToServer.Sends+c.ToClient.Sends > 0 {
		text += fmt.Sprintf(" Traffic: %d Sends client → server (largest %d octets), %d server → client (largest %d octets).",
			c.ToServer.Sends, c.ToServer.MaxLength, c.ToClient.Sends, c.ToClient.MaxLength)
	}
	if len(e.cs) > 1 {
		first, last := e.cs[0], e.cs[len(e.cs)-1]
		text += fmt.Sprintf(" The first of the %d is shown; the last began at frame %d, %s after the first.",
			len(e.cs), firstFrame(last), roundDuration(last.FirstTime.Sub(first.FirstTime)))
	}
	e.add(Item{Code: CodeSetup, Severity: finding.SeverityInfo, Frames: fs, Text: text})
}

func firstFrame(c *conn.Connection) int {
	if c.NumSteps() > 0 {
		return c.StepFrame(0)
	}
	return c.RequestFrame
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func roundDuration(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// sideName is "client" or "server".
func sideName(client bool) string {
	if client {
		return "client"
	}
	return "server"
}

// agreed explains the inline thresholds and remote invalidation, with the
// reason for every default.
func (e *explainer) agreed() {
	c := e.c
	if !c.Replied() || c.State == conn.StateRejected || c.Kind == conn.KindSIDR || !c.RPCRDMA() {
		return
	}
	cd, sd := c.ClientData, c.ServerData
	ce, se := cd.Effective(), sd.Effective()
	n := c.Negotiated
	e.threshold("client → server", n.ClientToServerInline, "client", "Send Size", ce.SendSize, cd, "server", "Receive Size", se.ReceiveSize, sd)
	e.threshold("server → client", n.ServerToClientInline, "server", "Send Size", se.SendSize, sd, "client", "Receive Size", ce.ReceiveSize, cd)
	for _, side := range []struct {
		client bool
		pd     *conn.PrivateData
	}{{true, cd}, {false, sd}} {
		e.defaults(side.client, side.pd)
		e.readers(side.client, side.pd)
	}
	// Remote invalidation.
	cr, sr := ce.RemoteInvalidation, se.RemoteInvalidation
	var text string
	switch {
	case n.RemoteInvalidation:
		text = "Remote invalidation was negotiated: both sides set R, so the server may answer with Send with Invalidate."
	case cr && !sr:
		text = "Remote invalidation was not negotiated: the client set R but the server did not; RFC 8797 needs both, so the server must not use Send with Invalidate."
	case !cr && sr:
		text = "Remote invalidation was not negotiated: the server set R but the client did not."
	default:
		text = "Remote invalidation was not negotiated: neither side set R."
	}
	e.add(Item{Code: CodeRemoteInvalidation, Severity: finding.SeverityInfo, Section: "RFC 8797 §4.1",
		Frames: frames(pdFrame(cd), pdFrame(sd)), Text: text})
}

func pdFrame(pd *conn.PrivateData) int {
	if pd == nil {
		return 0
	}
	return pd.Frame
}

// threshold states one direction's inline threshold and where it came
// from: min(sender's Send Size, receiver's Receive Size).
func (e *explainer) threshold(dir string, value int, from, fromWhat string, fromVal int, fromPD *conn.PrivateData,
	to, toWhat string, toVal int, toPD *conn.PrivateData) {
	val := func(side, what string, v int, pd *conn.PrivateData) string {
		s := fmt.Sprintf("the %s's %s %d", side, what, v)
		if !pd.Valid() {
			return s + " (the RFC 8797 default)"
		}
		return fmt.Sprintf("%s (%s frame %d)", s, pd.Message, pd.Frame)
	}
	var who string
	switch {
	case fromVal == toVal:
		who = "both are the same, so either set it"
	case fromVal < toVal:
		who = fmt.Sprintf("the %s's value set it", from)
	default:
		who = fmt.Sprintf("the %s's value set it", to)
	}
	text := fmt.Sprintf("%s inline threshold: %d octets = min(%s, %s): %s.", capitalize(dir), value,
		val(from, fromWhat, fromVal, fromPD), val(to, toWhat, toVal, toPD), who)
	e.add(Item{Code: CodeInlineThreshold, Severity: finding.SeverityInfo, Section: "RFC 8797 §4.2",
		Frames: frames(pdFrame(fromPD), pdFrame(toPD)), Text: text})
}

// defaults says why a side's values are the RFC 8797 defaults (1024-octet
// thresholds, no remote invalidation), when they are.
func (e *explainer) defaults(client bool, pd *conn.PrivateData) {
	if pd.Valid() {
		return
	}
	side := sideName(client)
	var why, short, code, remedy string
	sev := finding.SeverityInfo
	var fs []int
	if pd == nil {
		why = fmt.Sprintf("the %s's connection message was not captured", side)
		short = "its message was not captured"
	} else {
		fs = frames(pd.Frame)
		ulp := pd.ULP()
		r := pd.Decode()
		switch {
		case pd.Kind.Other():
			why = fmt.Sprintf("the %s's private data (%s frame %d) is %s, not RFC 8797", side, pd.Message, pd.Frame, pd.Kind.Description())
			short = "its private data is not RFC 8797"
		case !pd.Read.Found && r.Reading.NumCandidates() > 0:
			why = fmt.Sprintf("the %s's Format Identifier is at offset %d of its private data (%s frame %d), where a %s receiver does not look",
				side, r.Reading.Candidates()[0], pd.Message, pd.Frame, r.Reading.Mode)
			short = fmt.Sprintf("its identifier is at offset %d", r.Reading.Candidates()[0])
			code, sev = pvtdata.CodeIdentifierElsewhere, finding.SeverityWarning
			remedy = "Put the Format Identifier at offset 0 of the ULP private data: every receiver looks there (RFC 8797 §5.2)."
		case !pd.Read.Found && allZero(ulp):
			why = fmt.Sprintf("the %s sent no private data (%s frame %d: %s)", side, pd.Message, pd.Frame, emptyText(len(ulp)))
			short = "it sent no private data"
			code = pvtdata.CodeNotFound
			remedy = fmt.Sprintf("Have the %s send the RFC 8797 message (RFC 8797 §4) to advertise larger sizes; the Linux NFS client and server send it.", side)
		case !pd.Read.Found:
			why = fmt.Sprintf("the %s's %d octets of private data (%s frame %d) hold no RPC-over-RDMA Format Identifier 0xf6ab0e18", side, len(ulp), pd.Message, pd.Frame)
			short = "no RFC 8797 message in its private data"
			code = pvtdata.CodeNotFound
		case pd.Read.Message.Version != pvtdata.Version1 && !r.Reading.Overrun:
			why = fmt.Sprintf("the %s's message (%s frame %d) is version %d, which an RFC 8797 receiver does not recognise (only version 1) and ignores",
				side, pd.Message, pd.Frame, pd.Read.Message.Version)
			short = fmt.Sprintf("its message is version %d", pd.Read.Message.Version)
			code, sev = pvtdata.CodeUnknownVersion, finding.SeverityWarning
			remedy = "Send version 1 (RFC 8797 §4); a peer that speaks a later version must also accept version 1."
		case r.Reading.Overrun:
			why = fmt.Sprintf("the %s's message (%s frame %d) overruns its private data: the identifier is at offset %d of %d octets, the message needs 8, so an RFC 8797 receiver ignores it",
				side, pd.Message, pd.Frame, pd.Read.Offset, len(ulp))
			short = "its message overruns the private data"
			code, sev = pvtdata.CodeOverrun, finding.SeverityError
			remedy = "Send the whole 8-octet message (RFC 8797 §4, §5.2); a Linux receiver does not check the length and reads past the end."
		default:
			why = fmt.Sprintf("the %s's message (%s frame %d) is not one a receiver acts on", side, pd.Message, pd.Frame)
		}
	}
	text := fmt.Sprintf("The %s's values are the RFC 8797 defaults (Send Size 1024, Receive Size 1024, no remote invalidation) because %s.", side, why)
	head := ""
	if short != "" {
		head = fmt.Sprintf("the %s's values are the 1024-octet defaults: %s (frame %d)", side, short, pdFrame(pd))
	}
	e.add(Item{Code: CodeDefaults, Severity: sev, Section: "RFC 8797 §5.1", Frames: fs, Text: text, Remedy: remedy, Finding: code, head: head})
}

func emptyText(n int) string {
	if n == 0 {
		return "no octets after the rdma_cm or MPA header"
	}
	return fmt.Sprintf("%d octets, all zero", n)
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// readerNames name the receivers of each reading mode.
var readerNames = map[pvtdata.Mode]string{
	pvtdata.ModeRFC8797: "an RFC 8797 receiver (it searches the whole private data, §5.2)",
	pvtdata.ModeDraft:   "a receiver built to drafts -04/-05 of draft-ietf-nfsv4-rpcrdma-cm-pvt-data (identifier at offset 0 only)",
	pvtdata.ModeLinux:   "Linux (xprtrdma and svcrdma: identifier and version at offset 0, no length check)",
}

// readers says, when receivers of different kinds would read a side's
// private data differently, what each would act on.
func (e *explainer) readers(client bool, pd *conn.PrivateData) {
	if pd == nil || !pd.Divergent {
		return
	}
	d := pd.Decode()
	receiver := sideName(!client)
	var parts []string
	for _, r := range d.Readers {
		eff := r.Effective()
		what := fmt.Sprintf("uses Send %d, Receive %d, R=%d", eff.SendSize, eff.ReceiveSize, b2i(eff.RemoteInvalidation))
		switch {
		case r.Valid && r.Offset > 0:
			what = fmt.Sprintf("finds the message at offset %d and %s", r.Offset, what)
		case r.Valid:
			what = fmt.Sprintf("reads the message at offset 0 and %s", what)
		case !r.Found:
			what = "finds no message where it looks and uses the defaults 1024/1024, R=0"
		default:
			what = "ignores the message and uses the defaults 1024/1024, R=0"
		}
		if r.Overrun && r.Valid {
			what += " (reading past the end of the private data)"
		}
		parts = append(parts, readerNames[r.Mode]+" "+what)
	}
	text := fmt.Sprintf("The %s's private data (%s frame %d) reads differently depending on the %s's implementation: %s.",
		sideName(client), pd.Message, pd.Frame, receiver, strings.Join(parts, "; "))
	remedy := ""
	if pd.Read.Offset > 0 || (!pd.Read.Found && d.Reading.NumCandidates() > 0) {
		remedy = "Put the Format Identifier at offset 0 of the ULP private data: RFC 8797 receivers search for it, but draft and Linux receivers look only there (RFC 8797 §5.2)."
	}
	head := fmt.Sprintf("receivers disagree on the %s's private data (frame %d)", sideName(client), pd.Frame)
	if d.Reading.Found && d.Reading.Offset > 0 {
		head = fmt.Sprintf("the %s's identifier is at offset %d (frame %d): draft -04/-05 and Linux receivers miss it and use the 1024-octet defaults",
			sideName(client), d.Reading.Offset, pd.Frame)
	}
	e.add(Item{Code: CodeReaders, Severity: finding.SeverityWarning, Section: "RFC 8797 §5.2", Frames: frames(pd.Frame),
		Text: text, Remedy: remedy, Finding: pvtdata.CodeReaderDivergence, head: head})
	e.cover(pvtdata.CodeReaderDivergence, pvtdata.CodeNotAtOffsetZero, pvtdata.CodeIdentifierElsewhere)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
