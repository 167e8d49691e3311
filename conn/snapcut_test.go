package conn

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// TestCutCMFixedFields: a REQ (and a REP, a REJ) whose fixed fields the
// snap length cut is a step of its connection, found again by the
// transaction ID of the exchange: no "REQ not seen" or "REP not seen"
// finding, no QPN, comm ID, service or reject reason but those captured,
// and those captured taken; a REP with no REQ is a REP without REQ.
func TestCutCMFixedFields(t *testing.T) {
	client := Peer{Addr: netip.MustParseAddr("192.0.2.1")}
	server := Peer{Addr: netip.MustParseAddr("192.0.2.2")}
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	const tid = 0x2ef932f77
	ev := func(frame int, from bool, typ uint16, local, remote, qpn uint32, cut bool) *CMEvent {
		e := &CMEvent{Frame: frame, Time: start.Add(time.Duration(frame) * time.Millisecond), Transport: RoCEv2,
			Src: client, Dst: server, Type: typ, TID: tid, LocalCommID: local, RemoteCommID: remote, QPN: qpn,
			FixedCut: cut, Uncaptured: cut}
		if !from {
			e.Src, e.Dst = server, client
		}
		return e
	}
	// only is the one connection tr followed, which has no conn.* finding.
	only := func(t *testing.T, tr *Tracker) *Connection {
		t.Helper()
		tr.Finish()
		cs := tr.Connections()
		if len(cs) != 1 {
			t.Fatalf("%d connections, want 1", len(cs))
		}
		c := cs[0]
		for _, f := range c.Findings() {
			if strings.HasPrefix(f.Code, "conn.") {
				t.Errorf("finding %s: %s", f.Code, f.Message)
			}
		}
		return c
	}

	t.Run("REQ cut, REP whole", func(t *testing.T) {
		tr := New(Config{})
		tr.CM(ev(1, true, ibcm.AttrREQ, 0, 0, 0, true))
		tr.CM(ev(2, true, ibcm.AttrREQ, 0, 0, 0, true)) // a retransmission
		tr.CM(ev(3, false, ibcm.AttrREP, 0x14f12625, 0x772f93ef, 0x1e, false))
		tr.CM(ev(4, true, ibcm.AttrRTU, 0x772f93ef, 0x14f12625, 0, false))
		dreq := ev(5, true, ibcm.AttrDREQ, 0x772f93ef, 0x14f12625, 0x1e, false)
		dreq.TID = 7 // found by the comm IDs the REP gave
		tr.CM(dreq)
		c := only(t, tr)
		if !c.RequestCut || c.ReplyCut || c.HasServiceID || c.ClientQPN != 0 || c.ServerQPN != 0x1e ||
			c.ClientCommID != 0x772f93ef || c.ServerCommID != 0x14f12625 {
			t.Errorf("cut %v/%v service %v QPN %#x/%#x comm ID %#x/%#x", c.RequestCut, c.ReplyCut, c.HasServiceID,
				c.ClientQPN, c.ServerQPN, c.ClientCommID, c.ServerCommID)
		}
		if c.RequestFrame != 1 || c.ReplyFrame != 3 || c.EstablishedFrame != 4 || c.DisconnectRequestFrame != 5 || c.State != StateDisconnecting {
			t.Errorf("frames %d %d %d %d, state %v", c.RequestFrame, c.ReplyFrame, c.EstablishedFrame, c.DisconnectRequestFrame, c.State)
		}
		if c.ClientData == nil || !c.ClientData.Uncaptured || c.NegotiationSeen() {
			t.Errorf("the REQ's private data should be not captured, the negotiation not seen")
		}
		if steps := c.Steps(); len(steps) != 5 || !steps[1].Retransmission {
			t.Errorf("steps %+v, want 5 with the second a retransmission", steps)
		}
	})

	t.Run("REQ and REP cut", func(t *testing.T) {
		tr := New(Config{})
		tr.CM(ev(1, true, ibcm.AttrREQ, 0, 0, 0, true))
		tr.CM(ev(2, false, ibcm.AttrREP, 0, 0, 0, true))
		tr.CM(ev(3, true, ibcm.AttrRTU, 0x772f93ef, 0x14f12625, 0, false))
		c := only(t, tr)
		if !c.ReplyCut || c.ServerQPN != 0 || c.ClientCommID != 0x772f93ef || c.ServerCommID != 0x14f12625 || c.State != StateEstablished {
			t.Errorf("reply cut %v QPN %#x comm ID %#x/%#x state %v", c.ReplyCut, c.ServerQPN, c.ClientCommID, c.ServerCommID, c.State)
		}
	})

	t.Run("REJ cut", func(t *testing.T) {
		tr := New(Config{})
		tr.CM(ev(1, true, ibcm.AttrREQ, 0, 0, 0, true))
		tr.CM(ev(2, false, ibcm.AttrREJ, 0, 0, 0, true))
		tr.Finish()
		c := tr.Connections()[0]
		if c.State != StateRejected || !c.RejectCut || !c.ReplyCut || c.StateText() != "rejected (reason not captured)" {
			t.Errorf("state %q, reject cut %v, reply cut %v", c.StateText(), c.RejectCut, c.ReplyCut)
		}
	})

	t.Run("REQ cut after its QPN", func(t *testing.T) {
		tr := New(Config{})
		req := ev(1, true, ibcm.AttrREQ, 0x772f93ef, 0, 0x20, true)
		req.ServiceID = 0x0000000001064e51 // rdma_cm TCP port 20049
		req.Captured = CapturedLocalCommID | CapturedServiceID | CapturedQPN
		tr.CM(req)
		tr.CM(ev(2, false, ibcm.AttrREP, 0x14f12625, 0x772f93ef, 0x1e, false))
		c := only(t, tr)
		if !c.RequestCut || !c.HasServiceID || c.Server.Port != 20049 || c.ClientQPN != 0x20 || c.ClientCommID != 0x772f93ef ||
			c.ServerCommID != 0x14f12625 || c.ReplyFrame != 2 || len(c.Steps()) != 2 {
			t.Errorf("cut %v service %v port %d QPN %#x comm ID %#x/%#x REP frame %d", c.RequestCut, c.HasServiceID, c.Server.Port,
				c.ClientQPN, c.ClientCommID, c.ServerCommID, c.ReplyFrame)
		}
	})

	t.Run("REQ cut before its service ID", func(t *testing.T) {
		tr := New(Config{})
		req := ev(1, true, ibcm.AttrREQ, 0x772f93ef, 0, 0, true)
		req.Captured = CapturedLocalCommID
		tr.CM(req)
		c := only(t, tr)
		if c.HasServiceID || c.Server.Port != 0 || c.ClientQPN != 0 || c.ClientCommID != 0x772f93ef {
			t.Errorf("service %v port %d QPN %#x comm ID %#x", c.HasServiceID, c.Server.Port, c.ClientQPN, c.ClientCommID)
		}
	})

	// A REP with no REQ seen reveals its connection and its finding as
	// an uncut one does; the cut RTU of its exchange finds it by the
	// transaction ID.
	for _, captured := range []CMFields{0, CapturedLocalCommID | CapturedRemoteCommID} {
		tr := New(Config{})
		local, remote := uint32(0), uint32(0)
		if captured != 0 {
			local, remote = 0x14f12625, 0x772f93ef
		}
		rep := ev(2, false, ibcm.AttrREP, local, remote, 0, true)
		rep.Captured = captured
		tr.CM(rep)
		tr.CM(ev(3, true, ibcm.AttrRTU, 0, 0, 0, true))
		tr.Finish()
		cs := tr.Connections()
		if len(cs) != 1 {
			t.Fatalf("REP cut (captured %b): %d connections, want 1", captured, len(cs))
		}
		c := cs[0]
		fs := c.Findings()
		if len(fs) != 1 || fs[0].Code != CodeREPWithoutREQ || strings.Contains(fs[0].Message, "defaults") ||
			strings.Contains(fs[0].Message, "not captured") != (captured == 0) {
			t.Errorf("REP cut (captured %b): findings %+v, want one %s", captured, fs, CodeREPWithoutREQ)
		}
		if !c.ReplyCut || c.ServerQPN != 0 || c.ServerCommID != local || c.ClientCommID != remote || c.Client != client ||
			c.State != StateEstablished || len(c.Steps()) != 2 {
			t.Errorf("REP cut (captured %b): reply cut %v QPN %#x comm ID %#x/%#x client %v state %v steps %d", captured,
				c.ReplyCut, c.ServerQPN, c.ClientCommID, c.ServerCommID, c.Client, c.State, len(c.Steps()))
		}
	}

	t.Run("cut messages of no connection", func(t *testing.T) {
		tr := New(Config{})
		tr.CM(ev(1, true, ibcm.AttrRTU, 0, 0, 0, true))
		tr.CM(ev(2, false, ibcm.AttrDREP, 0, 0, 0, true))
		tr.CM(ev(3, false, ibcm.AttrSIDRRep, 0, 0, 0, true))
		tr.Finish()
		if cs := tr.Connections(); len(cs) != 0 || len(tr.Findings()) != 0 {
			t.Errorf("%d connections, %d findings from messages naming none", len(cs), len(tr.Findings()))
		}
	})
}
