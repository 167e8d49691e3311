package view

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// refConnCells are the table's cells as they were made with fmt before the
// rows were appended into a reused buffer.
func refConnCells(c *conn.Connection) []string {
	svc := c.Service()
	if svc == "" {
		svc = "-"
	}
	id := fmt.Sprint(c.ID)
	if c.Kind == conn.KindSIDR {
		id += " SIDR"
	}
	qp := "-"
	if c.Transport != conn.IWARP {
		q := func(v uint32, known bool) string {
			if !known {
				return "?"
			}
			return fmt.Sprintf("0x%06x", v)
		}
		qp = q(c.ClientQPN, c.ClientQPN != 0 || (c.RequestFrame != 0 && c.Kind != conn.KindSIDR)) + "/" + q(c.ServerQPN, c.ServerQPN != 0)
	}
	state := c.State.String()
	if c.CaptureEnded {
		state += " (capture ended)"
	}
	if c.State == conn.StateRejected {
		if c.RejectReasonName != "" {
			state += " (" + c.RejectReasonName + ")"
		} else {
			state += fmt.Sprintf(" (reason %d)", c.RejectReason)
		}
	}
	frame := func(n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	pdSummary := func(pd *conn.PrivateData) string {
		if pd == nil {
			return "-"
		}
		d := pd.Decode()
		r := &d.Reading
		if !r.Found {
			if f := d.ULP.Kind.String(); f != "rpcrdma-v1" {
				return f
			}
			return fmt.Sprintf("no RFC 8797 message (%d octets)", len(pd.ULP()))
		}
		m := r.Message
		s := fmt.Sprintf("v%d R=%d %d/%d", m.Version, connBit(m.RemoteInvalidation()), m.SendBytes(), m.ReceiveBytes())
		if r.Offset != 0 {
			s += fmt.Sprintf(" @%d", r.Offset)
		}
		if !r.Valid {
			s += " (ignored)"
		}
		if d.Divergent {
			s += " (readers differ)"
		}
		return s
	}
	negotiated := "-"
	if c.Replied() && c.State != conn.StateRejected && c.Kind != conn.KindSIDR && !c.OtherULP() {
		n := c.Negotiated
		ri := map[bool]string{false: "no", true: "yes"}[n.RemoteInvalidation]
		negotiated = fmt.Sprintf("%d/%d RI=%s", n.ClientToServerInline, n.ServerToClientInline, ri)
	}
	var n [4]int
	for _, fc := range c.FindingCounts {
		if int(fc.Severity) < len(n) {
			n[fc.Severity] += fc.Count
		}
	}
	var parts []string
	for _, s := range []finding.Severity{finding.SeverityError, finding.SeverityWarning, finding.SeverityInfo} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	findings := "-"
	if len(parts) > 0 {
		findings = strings.Join(parts, ", ")
	}
	return []string{id, c.Transport.String(), c.Client.String(), c.Server.String(), svc, qp, state,
		frame(c.RequestFrame) + "/" + frame(c.ReplyFrame), pdSummary(c.ClientData), pdSummary(c.ServerData),
		negotiated, findings}
}

// TestConnCells: the table's cells, appended into one reused buffer, read
// as the fmt-made cells they replace, and measure as tablewriter measured
// them; on the connections of every committed capture and of made-up
// exchanges (SIDR, rejections with and without a reason name, unknown
// QPNs, private data not understood).
func TestConnCells(t *testing.T) {
	var cs []*conn.Connection
	paths := testcap.Glob(t, "pcaps/*/*.pcap")
	for _, p := range paths {
		d := dissect.New(dissect.Options{})
		tr := conn.New(conn.Config{})
		for i, data := range testcap.Data(t, p) {
			fr := source.Frame{Number: i + 1, Time: time.Unix(int64(i), 0), LinkType: source.LinkTypeEthernet,
				Data: data, CaptureLength: len(data), Length: len(data)}
			tr.Record(d.Dissect(&fr))
		}
		d.Finish(tr.Record)
		tr.Finish()
		cs = append(cs, tr.Connections()...)
	}
	if len(cs) < 50 {
		t.Fatalf("%d connections in %d captures", len(cs), len(paths))
	}
	cs = append(cs, madeUpConns()...)
	var row connRow
	var all []string
	for _, c := range cs {
		row.build(c)
		want := refConnCells(c)
		all = append(all, strings.Join(want, "|"))
		for i, w := range want {
			if got := string(row.cell(i)); got != w {
				t.Errorf("connection %d (%s) cell %d (%s): %q, want %q", c.ID, c.Transport, i, connsHeader[i], got, w)
			}
			if got := cellWidth(row.cell(i)); got != displayWidth(w) {
				t.Errorf("cell %q: width %d, want %d", w, got, displayWidth(w))
			}
		}
	}
	// The made-up and captured connections reach every kind of cell.
	for _, s := range []string{"SIDR", "(reason 999)", "(rejected by service provider)", "|?/", "no RFC 8797 message (20 octets)",
		"(ignored)", "(readers differ)", "lid 0x0007 gid fe80::1%eth0", "iwarp|", "|-|-|", "RI=yes", "error", "info"} {
		if !strings.Contains(strings.Join(all, "\n"), s) {
			t.Errorf("no cell with %q", s)
		}
	}
	// The widths tablewriter gave these (its width of a tab is 4).
	for s, want := range map[string]int{"c→s": 3, "a\tb": 6, "\x1b[31mred\x1b[0m": 3, "é": 1, "": 0, "漢字": 4, "😀": 2, "…": 1,
		"\x1b]8;;http://x\alink\x1b]8;;\a": 4} {
		if got := cellWidth([]byte(s)); got != want {
			t.Errorf("cell %q: width %d, want %d", s, got, want)
		}
	}
}

// madeUpConns are exchanges the captures lack.
func madeUpConns() []*conn.Connection {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cl := conn.Peer{Addr: netip.MustParseAddr("fe80::1%eth0"), LID: 7}
	sv := conn.Peer{LID: 0x1234}
	tr := conn.New(conn.Config{})
	cm := func(frame int, typ uint16, fromClient bool, local, remote uint32) *conn.CMEvent {
		ev := &conn.CMEvent{Frame: frame, Time: t0.Add(time.Duration(frame) * time.Millisecond), Transport: conn.IB,
			Src: cl, Dst: sv, Type: typ, LocalCommID: local, RemoteCommID: remote, ServiceID: 0x1000000000000001, QPN: 0x1000000 + uint32(frame)}
		if !fromClient {
			ev.Src, ev.Dst = sv, cl
		}
		return ev
	}
	// REQ, then a REJ without a reason name.
	tr.CM(cm(1, ibcm.AttrREQ, true, 1, 0))
	rej := cm(2, ibcm.AttrREJ, false, 2, 1)
	rej.RejectReason = 999
	tr.CM(rej)
	// A REP and an RTU for a REQ not seen.
	tr.CM(cm(3, ibcm.AttrREP, false, 3, 4))
	tr.CM(cm(4, ibcm.AttrRTU, true, 4, 3))
	// A rejected SIDR exchange.
	sidr := cm(5, ibcm.AttrSIDRReq, true, 5, 0)
	sidr.ServiceID = uint64(ibcm.ServiceIDFor(ibcm.PortSpaceUDP, 4420))
	tr.CM(sidr)
	sidrRep := cm(6, ibcm.AttrSIDRRep, false, 5, 0)
	sidrRep.SIDRStatus = 2
	tr.CM(sidrRep)
	// The NFS/RDMA port without an RFC 8797 message, then an unknown
	// version.
	nfs := uint64(ibcm.ServiceIDFor(ibcm.PortSpaceTCP, pvtdata.PortNFSRDMA))
	req := cm(7, ibcm.AttrREQ, true, 7, 0)
	req.ServiceID, req.PrivateData = nfs, make([]byte, 20)
	tr.CM(req)
	rep := cm(8, ibcm.AttrREP, false, 8, 7)
	rep.PrivateData = []byte{0xf6, 0xab, 0x0e, 0x18, 0x09, 0x01, 0x03, 0x03}
	tr.CM(rep)
	tr.Finish()
	return tr.Connections()
}
