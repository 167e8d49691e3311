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
// finding, no QPN, comm ID, service or reject reason but those captured.
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

	t.Run("cut messages of no connection", func(t *testing.T) {
		tr := New(Config{})
		tr.CM(ev(1, false, ibcm.AttrREP, 0, 0, 0, true))
		tr.CM(ev(2, true, ibcm.AttrRTU, 0, 0, 0, true))
		tr.Finish()
		if cs := tr.Connections(); len(cs) != 0 || len(tr.Findings()) != 0 {
			t.Errorf("%d connections, %d findings from messages naming none", len(cs), len(tr.Findings()))
		}
	})
}
