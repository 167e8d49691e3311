package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// Ladder geometry, in SVG user units.
const (
	ladderWidth = 880
	clientX     = 170
	serverX     = 540
	headerH     = 56
	rowH        = 40
	markH       = 15
	noteX       = serverX + 14
	// bandOut is how far the traffic band reaches past the lanes.
	bandOut = 85
)

// ladder is one connection's diagram: two lanes, a row per message (and
// per Send a finding was raised on), the traffic between set-up and
// teardown as a band.
type ladder struct {
	ID                      string
	BandX, BandWidth, NoteX int
	Width, Height           int
	ClientX, ServerX        int
	LaneTop, LaneBottom     int
	ClientLabel, ClientSub  string
	ServerLabel, ServerSub  string
	Title, Desc             string
	Rows                    []ladderRow
}

type ladderRow struct {
	Y int
	// An arrow from X1 to X2 (Band: a band across the lanes instead).
	X1, X2, LabelX, LabelY int
	Label, Left            string
	Class                  string
	Band                   bool
	BandY, BandH           int
	Marks                  []ladderMark
}

// ladderMark is a finding marked on a row: a dot at the arrow's head and
// its code beside the server lane.
type ladderMark struct {
	X, Y, TextY int
	Class       string
	Code, Title string
}

// ladderEvent is a row before layout: a message of the ladder, a Send a
// finding names, or the traffic band.
type ladderEvent struct {
	frame      int
	fromClient bool
	label      string
	left       string
	class      string
	band       bool
	findings   []finding.Finding
}

func sevClass(s finding.Severity) string { return "sev-" + s.String() }

func newLadder(c *conn.Connection) ladder {
	l := ladder{ID: fmt.Sprintf("ladder-%d", c.ID), Width: ladderWidth, ClientX: clientX, ServerX: serverX,
		BandX: clientX - bandOut, BandWidth: serverX - clientX + 2*bandOut, NoteX: noteX,
		ClientLabel: "client", ClientSub: c.Client.String(), ServerLabel: "server", ServerSub: c.Server.String()}
	if svc := c.Service(); svc != "" {
		l.ServerLabel = "server · " + svc
	}
	l.Title = fmt.Sprintf("Connection %d ladder: %s → %s, %s, %s", c.ID, c.Client, c.Server, c.Transport, c.AppendStateText(nil))

	// The messages, then the findings on frames that are not messages
	// (the Sends the traffic checks name), each under its frame.
	var evs []ladderEvent
	stepAt := map[int]int{}
	lastSetup := -1
	for i := range c.NumSteps() {
		s := c.Step(i)
		label := s.Message
		if s.Retransmission {
			label += " (again)"
		}
		if s.Note != "" {
			label += " · " + s.Note
		}
		class := "msg"
		switch {
		case s.Message == "REJ" || s.Message == "MPA Reject":
			class = "msg reject"
		case s.Retransmission:
			class = "msg retrans"
		}
		evs = append(evs, ladderEvent{frame: s.Frame, fromClient: s.FromClient, label: label, class: class,
			left: fmt.Sprintf("%d  +%.6f s", s.Frame, s.Time.Sub(c.FirstTime).Seconds())})
		if _, ok := stepAt[s.Frame]; !ok {
			stepAt[s.Frame] = len(evs) - 1
		}
		if s.Message == "RTU" || s.Message == "MPA Reply" || s.Message == "REP" {
			lastSetup = len(evs) - 1
		}
	}
	var loose []finding.Finding
	for _, f := range c.Findings() {
		if i, ok := stepAt[f.Frame]; ok {
			evs[i].findings = append(evs[i].findings, f)
			continue
		}
		loose = append(loose, f)
	}
	// The traffic band after the set-up, then the Sends findings name.
	var sends []ladderEvent
	var unframed []finding.Finding
	byFrame := map[int]int{}
	// The first Send each way, then those the findings name.
	for _, d := range []struct {
		counts     conn.SendCounts
		fromClient bool
	}{{c.ToServer, true}, {c.ToClient, false}} {
		if d.counts.FirstFrame == 0 {
			continue
		}
		byFrame[d.counts.FirstFrame] = len(sends)
		sends = append(sends, ladderEvent{frame: d.counts.FirstFrame, fromClient: d.fromClient, class: "msg send first",
			label: fmt.Sprintf("first Send · %d octets", d.counts.FirstLength), left: fmt.Sprint(d.counts.FirstFrame)})
	}
	for _, f := range loose {
		if f.Frame == 0 {
			unframed = append(unframed, f)
			continue
		}
		if i, ok := byFrame[f.Frame]; ok {
			sends[i].findings = append(sends[i].findings, f)
			continue
		}
		fromClient := strings.HasPrefix(f.Message, "client → server") || strings.HasPrefix(f.Message, "the client")
		byFrame[f.Frame] = len(sends)
		sends = append(sends, ladderEvent{frame: f.Frame, fromClient: fromClient, label: "Send", class: "msg send",
			findings: []finding.Finding{f}, left: fmt.Sprint(f.Frame)})
	}
	sort.SliceStable(sends, func(i, j int) bool { return sends[i].frame < sends[j].frame })
	// The band that sums up the traffic goes after the first Sends.
	var traffic []ladderEvent
	if n := c.ToServer.Sends + c.ToClient.Sends; n > 0 {
		at := 0
		for i, ev := range sends {
			if strings.Contains(ev.class, "first") {
				at = i + 1
			}
		}
		band := ladderEvent{band: true, class: "band",
			label: fmt.Sprintf("traffic: %d Sends client → server (largest %d octets), %d server → client (largest %d)",
				c.ToServer.Sends, c.ToServer.MaxLength, c.ToClient.Sends, c.ToClient.MaxLength)}
		traffic = append(append(append(traffic, sends[:at]...), band), sends[at:]...)
	} else {
		traffic = sends
	}
	if len(unframed) > 0 {
		traffic = append(traffic, ladderEvent{band: true, class: "band", label: "not tied to a frame", findings: unframed})
	}
	if len(traffic) > 0 {
		// After the set-up (before the teardown), or at the end.
		at := lastSetup + 1
		if lastSetup < 0 {
			at = len(evs)
		}
		evs = append(evs[:at], append(traffic, evs[at:]...)...)
	}

	// Layout.
	y := headerH + 24
	var desc []string
	for _, ev := range evs {
		row := ladderRow{Y: y, LabelY: y - 6, Label: ev.label, Left: ev.left, Class: ev.class, Band: ev.band}
		if ev.band {
			row.BandY, row.BandH = y-16, 24
			row.LabelX = (clientX + serverX) / 2
			desc = append(desc, ev.label)
		} else {
			row.X1, row.X2 = clientX, serverX
			dir := "client → server"
			if !ev.fromClient {
				row.X1, row.X2 = serverX, clientX
				dir = "server → client"
			}
			row.LabelX = (clientX + serverX) / 2
			desc = append(desc, fmt.Sprintf("frame %d %s %s", ev.frame, dir, ev.label))
		}
		for i, f := range ev.findings {
			m := ladderMark{X: row.X2, Y: y, TextY: y + 4 + i*markH, Class: sevClass(f.Severity), Code: f.Code,
				Title: fmt.Sprintf("frame %d: %s %s: %s", f.Frame, f.Severity, f.Code, f.Message)}
			if ev.band {
				m.X = serverX
			}
			row.Marks = append(row.Marks, m)
			desc = append(desc, fmt.Sprintf("  %s %s at frame %d", f.Severity, f.Code, f.Frame))
		}
		l.Rows = append(l.Rows, row)
		y += rowH + max(0, len(ev.findings)-2)*markH
	}
	if c.StepsDropped > 0 {
		l.Rows = append(l.Rows, ladderRow{Y: y, Band: true, BandY: y - 14, BandH: 24, Class: "band", LabelX: (clientX + serverX) / 2,
			Label: fmt.Sprintf("… %d more messages (ladder limit)", c.StepsDropped)})
		y += rowH
	}
	l.LaneTop, l.LaneBottom = headerH, y-rowH/2
	l.Height = y
	l.Desc = strings.Join(desc, "\n")
	return l
}
