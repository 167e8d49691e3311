package explain

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
)

// explainFile follows the connections of a committed capture as the conns
// command does and explains them.
func explainFile(t *testing.T, path string) *Capture {
	t.Helper()
	tr := testconn.TrackFile(t, path)
	return Explain(path, tr.Connections(), tr.Findings())
}

// find returns the statements with code, failing when there is none.
func find(t *testing.T, c *Capture, code string) []Item {
	t.Helper()
	var out []Item
	for _, it := range c.Items() {
		if it.Code == code {
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no %s statement in:\n%s", c.Name, code, dump(c))
	}
	return out
}

func dump(c *Capture) string {
	var b strings.Builder
	WriteText(&b, []*Capture{c}, nil)
	return b.String()
}

func wantText(t *testing.T, it Item, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(it.Text, p) {
			t.Errorf("%s %s: %q lacks %q", it.Capture, it.Code, it.Text, p)
		}
	}
}

func wantFrames(t *testing.T, it Item, fs ...int) {
	t.Helper()
	if len(it.Frames) != len(fs) {
		t.Errorf("%s %s: frames %v, want %v", it.Capture, it.Code, it.Frames, fs)
		return
	}
	for i := range fs {
		if it.Frames[i] != fs[i] {
			t.Errorf("%s %s: frames %v, want %v", it.Capture, it.Code, it.Frames, fs)
		}
	}
}

// The lab's REJ 28: the NFS server side called rdma_reject with private
// data; explain names the reason, its meaning and shows the data.
func TestRejectConsumer(t *testing.T) {
	for _, name := range []string{"live-rxe4-reject.pcap", "live-rxe6-reject.pcap"} {
		c := explainFile(t, testcap.Real(name))
		it := find(t, c, CodeReject)[0]
		wantText(t, it, "REJ (frame 2) with reason 28 Consumer Reject", "the upper layer on the server refused",
			"rdma_reject()", "148 octets, f6 ab 0e 18 01 00 03 03 and 140 zero octets", "carries no reason")
		wantFrames(t, it, 1, 2)
		// A refusal breaks no protocol rule: a warning, not an error.
		if it.Severity != finding.SeverityWarning || it.Remedy == "" {
			t.Errorf("%s: severity %s, remedy %q", name, it.Severity, it.Remedy)
		}
		if !strings.Contains(c.Verdict.Text, "1 connection, which failed") ||
			!strings.Contains(c.Verdict.Text, "REJ reason 28 Consumer Reject (frame 2)") {
			t.Errorf("%s verdict: %s", name, c.Verdict.Text)
		}
	}
	// iWARP: the MPA Reject of a revision 2 request, with its IRD/ORD.
	c := explainFile(t, testcap.Real("live-siw4-reject.pcap"))
	it := find(t, c, CodeReject)[0]
	wantText(t, it, "MPA Reply with the Reject flag (frame 6) to the MPA Request of frame 4",
		"revision 2 with the Enhanced flag, IRD 1 and ORD 1", "f6 ab 0e 18 01 00 03 03")
	if strings.Contains(it.Text, "revision 1") {
		t.Errorf("a revision 2 request explained as revision 1: %s", it.Text)
	}
}

// No private data: both sides' values are the 1024 defaults, and why.
func TestNoPrivateData(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cFr, sFr   int
		clientData string
	}{
		{"live-rxe4-none.pcap", 1, 2, "REQ frame 1: 56 octets, all zero"},
		{"live-siw4-none.pcap", 4, 6, "MPA Request frame 4: no octets"},
	} {
		c := explainFile(t, testcap.Real(tc.name))
		ds := find(t, c, CodeDefaults)
		if len(ds) != 2 {
			t.Fatalf("%s: %d defaults statements", tc.name, len(ds))
		}
		wantText(t, ds[0], "The client's values are the RFC 8797 defaults (Send Size 1024, Receive Size 1024", "the client sent no private data", tc.clientData)
		wantText(t, ds[1], "The server's values are the RFC 8797 defaults", "the server sent no private data")
		wantFrames(t, ds[0], tc.cFr)
		wantFrames(t, ds[1], tc.sFr)
		for _, th := range find(t, c, CodeInlineThreshold) {
			wantText(t, th, "inline threshold: 1024 octets", "(the RFC 8797 default)")
		}
		if !strings.Contains(c.Verdict.Text, "it sent no private data") {
			t.Errorf("%s verdict: %s", tc.name, c.Verdict.Text)
		}
	}
}

// The identifier at offset 4: RFC 8797 receivers find it, draft and Linux
// receivers do not; each named.
func TestIdentifierAtOffset(t *testing.T) {
	for _, name := range []string{"live-rxe4-offset.pcap", "live-siw4-offset.pcap", "live-rxe6-offset.pcap", "live-siw6-offset.pcap"} {
		c := explainFile(t, testcap.Real(name))
		rs := find(t, c, CodeReaders)
		if len(rs) != 2 {
			t.Fatalf("%s: %d readers statements", name, len(rs))
		}
		wantText(t, rs[0], "The client's private data", "server's implementation",
			"an RFC 8797 receiver (it searches the whole private data, §5.2) finds the message at offset 4 and uses Send 8192, Receive 8192, R=1",
			"drafts -04/-05", "finds no message where it looks and uses the defaults 1024/1024",
			"Linux (xprtrdma and svcrdma")
		wantText(t, rs[1], "The server's private data", "finds the message at offset 8")
		if !strings.Contains(rs[0].Remedy, "offset 0") {
			t.Errorf("%s: remedy %q", name, rs[0].Remedy)
		}
		if !strings.Contains(c.Verdict.Text, "the client's identifier is at offset 4") {
			t.Errorf("%s verdict: %s", name, c.Verdict.Text)
		}
		// In rfc8797 mode (the default) the thresholds are the 8192 found.
		for _, th := range find(t, c, CodeInlineThreshold) {
			wantText(t, th, "inline threshold: 8192 octets")
		}
	}
}

// Which side's value set each threshold, on the kernel's own mounts with
// changed sysctls.
func TestWhichSideSetThreshold(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c2s, s2c string
	}{
		{"live-rxe4-nfs3-inline.pcap",
			"Client → server inline threshold: 1024 octets = min(the client's Send Size 1024 (REQ frame 1), the server's Receive Size 8192 (REP frame 2)): the client's value set it.",
			"Server → client inline threshold: 2048 octets = min(the server's Send Size 8192 (REP frame 2), the client's Receive Size 2048 (REQ frame 1)): the client's value set it."},
		{"live-rxe4-nfs42-inline.pcap",
			"Client → server inline threshold: 2048 octets = min(the client's Send Size 2048 (REQ frame 1), the server's Receive Size 16384 (REP frame 2)): the client's value set it.",
			"Server → client inline threshold: 1024 octets = min(the server's Send Size 16384 (REP frame 2), the client's Receive Size 1024 (REQ frame 1)): the client's value set it."},
		{"live-rxe4-nfs3.pcap",
			"Client → server inline threshold: 4096 octets = min(the client's Send Size 4096 (REQ frame 1), the server's Receive Size 4096 (REP frame 2)): both are the same, so either set it.",
			"Server → client inline threshold: 4096 octets"},
	} {
		c := explainFile(t, testcap.Real(tc.name))
		th := find(t, c, CodeInlineThreshold)
		wantText(t, th[0], tc.c2s)
		wantText(t, th[1], tc.s2c)
		wantFrames(t, th[0], 1, 2)
	}
	// The Linux server's Send with Invalidate, with its Linux context and
	// what to do.
	c := explainFile(t, testcap.Real("live-rxe4-nfs42.pcap"))
	tr := find(t, c, CodeTraffic)[0]
	wantText(t, tr, "server → client Sends with Invalidate although remote invalidation was not negotiated", "svcrdma")
	if tr.Finding != conn.CodeSendInvTolerated || tr.Remedy == "" || len(tr.Frames) == 0 {
		t.Errorf("%+v", tr)
	}
}

// Unrecognised version and overrun: the defaults apply, for that reason.
func TestDefaultsReasons(t *testing.T) {
	c := explainFile(t, testcap.Real("live-rxe4-v2.pcap"))
	wantText(t, find(t, c, CodeDefaults)[0], "is version 2, which an RFC 8797 receiver does not recognise")
	c = explainFile(t, testcap.Real("live-siw4-overrun.pcap"))
	d := find(t, c, CodeDefaults)[0]
	wantText(t, d, "overruns its private data", "offset 0 of 5 octets")
	if d.Severity != finding.SeverityError {
		t.Errorf("overrun: severity %s", d.Severity)
	}
}

// The lab's MPA revision 1 client refused by the Linux NFS server: every
// one of the 38 connections in one group, the revision 1 cause with
// svcrdma's check, the number of attempts and how long they took.
func TestMPARevision1RefusedByLinuxNFS(t *testing.T) {
	c := explainFile(t, testcap.Real("live-siw4-mpa1-nfs42.pcap"))
	rej, storm := wantRevision1Refused(t, c, 38, "38 connections (1 to 38) from 198.51.100.1 to 198.51.100.2:20049 over iWARP",
		"38 attempts in 19 s", "the MPA Request (frame 4) is revision 1, without IRD/ORD")
	wantText(t, rej, "MPA Reply with the Reject flag (frame 6) to the MPA Request of frame 4",
		"The MPA Request is revision 1 (frame 4): revision 1 carries no IRD/ORD",
		"refuses the connection")
	wantFrames(t, rej, 4, 6)
	wantText(t, storm, "38 attempts from 198.51.100.1 to 198.51.100.2:20049 in 19 s")
}

// wantRevision1Refused checks what an MPA revision 1 client refused by the
// Linux NFS server explains to: its n connections in one group (title,
// all rejected the same way), the revision 1 cause with svcrdma's check on
// all of them, a verdict of n failures (and verdict). It returns the
// reject and the reconnect storm.
func wantRevision1Refused(t *testing.T, c *Capture, n int, title string, verdict ...string) (rej, storm Item) {
	t.Helper()
	if len(c.Groups) != 1 || len(c.Groups[0].Conns) != n {
		t.Fatalf("%d groups:\n%s", len(c.Groups), dump(c))
	}
	if g := c.Groups[0].Title; !strings.Contains(g, title) || !strings.Contains(g, "all rejected the same way") {
		t.Errorf("title: %s", g)
	}
	rej = find(t, c, CodeReject)[0]
	wantText(t, rej, "The MPA Request is revision 1 (frame 4)", "carries no IRD/ORD",
		"the Linux NFS server (svcrdma) sees an initiator depth of 0 and refuses",
		"svc_rdma_accept() returns -EINVAL when the initiator depth is 0")
	if len(rej.Connections) != n || !strings.Contains(rej.Remedy, "MPA revision 2") {
		t.Errorf("connections %d, remedy %q", len(rej.Connections), rej.Remedy)
	}
	for _, v := range append([]string{fmt.Sprintf("%d connections, all failed", n)}, verdict...) {
		if !strings.Contains(c.Verdict.Text, v) {
			t.Errorf("verdict lacks %q: %s", v, c.Verdict.Text)
		}
	}
	return rej, find(t, c, CodeReconnectStorm)[0]
}

// The lab's MPA revision 1 client refused by the Linux NFS server, as
// tracker events at the scale the issue saw (MPA Request revision 1 without
// IRD/ORD, MPA Reject, 166 times two seconds apart): one group, the
// revision 1 cause with svcrdma's check, the storm's rate. The TCP
// streams close in either order, as the lab's did: still one group.
func TestMPARevision1Storm(t *testing.T) {
	client := netip.MustParseAddr("198.51.100.1")
	server := conn.Peer{Addr: netip.MustParseAddr("198.51.100.2"), Port: 20049}
	start := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	pd := []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03}
	tr := conn.New(conn.Config{})
	frame := 0
	for i := range 166 {
		at := start.Add(time.Duration(i) * 2 * time.Second)
		cl := conn.Peer{Addr: client, Port: uint16(40000 + i)}
		frame += 4
		tr.MPA(&conn.MPAEvent{Frame: frame, Time: at, Src: cl, Dst: server, Type: conn.MPARequest, Revision: 1, PrivateData: pd})
		tr.MPA(&conn.MPAEvent{Frame: frame + 2, Time: at.Add(time.Millisecond), Src: server, Dst: cl, Type: conn.MPAReject, Revision: 1, Flags: 0x20})
		first, second := server, cl
		if i%3 == 0 {
			first, second = cl, server
		}
		tr.TCPClose(frame+3, at.Add(2*time.Millisecond), first, second, false)
		tr.TCPClose(frame+3, at.Add(3*time.Millisecond), second, first, false)
	}
	tr.Finish()
	c := Explain("mpa-rev1", tr.Connections(), tr.Findings())
	_, storm := wantRevision1Refused(t, c, 166, "166 connections (1 to 166) from 198.51.100.1 to 198.51.100.2:20049",
		"revision 1", "166 attempts in 330 s")
	wantText(t, storm, "166 attempts from 198.51.100.1 to 198.51.100.2:20049 in 330 s (one every 2.0 s)")
	wantFrames(t, storm, 4, 664)
}

// Every committed capture explains without panic, each connection in one
// group, and the text output has a verdict per capture.
func TestEveryCapture(t *testing.T) {
	for _, p := range testcap.Glob(t, "pcaps/*/*.pcap") {
		c := explainFile(t, p)
		n := 0
		for _, g := range c.Groups {
			n += len(g.Conns)
			if len(g.Items) == 0 {
				t.Errorf("%s: group %q says nothing", p, g.Title)
			}
		}
		if !strings.HasPrefix(c.Verdict.Text, p+": ") {
			t.Errorf("%s: verdict %q", p, c.Verdict.Text)
		}
		for _, it := range c.Items() {
			if it.Text == "" || it.Code == "" || it.Frames == nil {
				t.Errorf("%s: incomplete statement %+v", p, it)
			}
		}
	}
}
