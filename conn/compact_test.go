package conn

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// The tests of this file check what a connection keeps in short (steps,
// the per-Send checks' findings, private data, index keys) against what it
// stands for.

// TestSendFindingMessages: the per-Send checks' findings, kept as the
// values they name, render as the messages built when they were raised
// (the fmt formats below are those messages' before they were kept in
// short).
func TestSendFindingMessages(t *testing.T) {
	xidNote := func(ev *SendEvent) string {
		if !ev.RPCRDMA {
			return ""
		}
		return fmt.Sprintf(" (xid 0x%08x)", ev.XID)
	}
	const linux = "; the client, which receives it, did set R, so it copes, but RFC 8797 requires both peers' R. " +
		"This is the Linux server's behaviour: svcrdma always sends R=0 yet uses Send with Invalidate whenever the client set R (svc_rdma_parse_connect_private takes sc_snd_w_inv from the client's flags only)"
	exceeds := func(ev *SendEvent, toServer bool, limit int) finding.Finding {
		dir, receiver := "client → server", "server"
		if !toServer {
			dir, receiver = "server → client", "client"
		}
		return finding.Finding{Code: CodeSendExceedsInline, Severity: finding.SeverityError,
			Section: "RFC 8797 §4.2, RFC 8166 §3.3.2", Layer: "conn", Frame: ev.FirstFrame, Offset: -1,
			Message: fmt.Sprintf("%s Send of %d octets%s is larger than the %s's negotiated inline threshold of %d octets: the receiver's Receive buffer cannot hold it",
				dir, ev.Length, xidNote(ev), receiver, limit)}
	}
	notNegotiated := func(ev *SendEvent, toServer bool, sev finding.Severity, who, context string) finding.Finding {
		dir := "client → server"
		if !toServer {
			dir = "server → client"
		}
		code := CodeSendInvNotNegotiated
		if sev == finding.SeverityWarning {
			code = CodeSendInvTolerated // the receiver set R
		}
		return finding.Finding{Code: code, Severity: sev,
			Section: "RFC 8797 §4.1", Layer: "conn", Frame: ev.FirstFrame, Offset: -1,
			Message: fmt.Sprintf("%s Send with Invalidate of STag 0x%08x%s, but remote invalidation was not negotiated (%s)%s",
				dir, ev.InvalidateSTag, xidNote(ev), who, context)}
	}
	fromRequester := func(ev *SendEvent) finding.Finding {
		return finding.Finding{Code: CodeSendInvFromRequester, Severity: finding.SeverityWarning,
			Section: "RFC 8797 §3.2", Layer: "conn", Frame: ev.FirstFrame, Offset: -1,
			Message: fmt.Sprintf("the client (requester) sent Send with Invalidate of STag 0x%08x%s: RFC 8797 provides remote invalidation for the responder's replies only",
				ev.InvalidateSTag, xidNote(ev))}
	}
	// serverThenClientNotNegotiated is what a server's Send with
	// Invalidate and then a client's give when R was not negotiated (who
	// says why): an error each, and the client's from the requester.
	serverThenClientNotNegotiated := func(who string) func(evs []*SendEvent) []finding.Finding {
		return func(evs []*SendEvent) []finding.Finding {
			return []finding.Finding{
				notNegotiated(evs[0], false, finding.SeverityError, who, ""),
				notNegotiated(evs[1], true, finding.SeverityError, who, ""),
				fromRequester(evs[1])}
		}
	}
	inv := func(frame int, toServer, rpc bool, stag uint32) *SendEvent {
		ev := send(frame, toServer, 100)
		ev.Invalidate, ev.InvalidateSTag, ev.RPCRDMA = true, stag, rpc
		return ev
	}
	noR := []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03}
	withR := []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03}
	for _, tc := range []struct {
		name           string
		client, server []byte
		sends          []*SendEvent
		want           func(evs []*SendEvent) []finding.Finding
	}{
		{"too large both ways", withR, withR, []*SendEvent{send(10, true, 5000), send(11, false, 70000)},
			func(evs []*SendEvent) []finding.Finding {
				return []finding.Finding{exceeds(evs[0], true, 4096), exceeds(evs[1], false, 4096)}
			}},
		{"the Linux server's Send with Invalidate", withR, noR, []*SendEvent{inv(10, false, true, 0xcd1), inv(11, false, false, 0xffffffff)},
			func(evs []*SendEvent) []finding.Finding {
				return []finding.Finding{
					notNegotiated(evs[0], false, finding.SeverityWarning, "the server did not set R", linux),
					notNegotiated(evs[1], false, finding.SeverityWarning, "the server did not set R", linux)}
			}},
		{"neither set R", noR, noR, []*SendEvent{inv(10, false, true, 7), inv(11, true, true, 8)},
			serverThenClientNotNegotiated("neither peer set R")},
		{"the client did not set R", noR, withR, []*SendEvent{inv(10, false, true, 9), inv(11, true, false, 10)},
			serverThenClientNotNegotiated("the client did not set R")},
		{"the requester with R from both", withR, withR, []*SendEvent{inv(10, true, true, 0x42)},
			func(evs []*SendEvent) []finding.Finding { return []finding.Finding{fromRequester(evs[0])} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(Config{})
			kernelExchange(tr, tc.client, tc.server)
			for _, ev := range tc.sends {
				tr.Send(ev)
			}
			c := only(t, tr)
			got, want := c.Findings(), tc.want(tc.sends)
			if len(got) != len(want) || c.NumFindings() != len(want) {
				t.Fatalf("%d findings (%d), want %d: %v", len(got), c.NumFindings(), len(want), got)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("finding %d:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
			for _, f := range want {
				if !c.hasFindingAt(f.Code, f.Frame) || c.hasFindingAt(f.Code, f.Frame+100) {
					t.Errorf("hasFindingAt %s %d", f.Code, f.Frame)
				}
			}
		})
	}
}

// TestStepNotes: the steps, kept as codes and numbers, render as the
// messages, notes and times they stand for.
func TestStepNotes(t *testing.T) {
	tr := New(Config{})
	loc := time.FixedZone("x", 3600)
	ev := req(1, cComm, 100, cQPN, linuxClientPD)
	ev.Time = ev.Time.In(loc)
	tr.CM(ev)
	mra := cmMsg(2, ibcm.AttrMRA, false, sComm, cComm)
	mra.Time = time.Unix(1<<40, 999999999) // far from the others: seconds and nanoseconds kept
	tr.CM(mra)
	rej := cmMsg(3, ibcm.AttrREJ, false, sComm, cComm)
	rej.RejectReason, rej.RejectReasonName = 28, "Consumer reject"
	tr.CM(rej)
	tr.CM(rej)
	dreq := cmMsg(5, ibcm.AttrDREQ, false, sComm, cComm)
	tr.CM(dreq)
	sidr := &CMEvent{Frame: 6, Time: at(6), Transport: RoCEv2, Src: clientHost, Dst: serverHost, Type: ibcm.AttrSIDRReq,
		LocalCommID: 77, ServiceID: nfsSID}
	tr.CM(sidr)
	sidrRep := &CMEvent{Frame: 7, Time: at(7), Transport: RoCEv2, Src: serverHost, Dst: clientHost, Type: ibcm.AttrSIDRRep,
		LocalCommID: 77, ServiceID: nfsSID, QPN: 0xabcdef12, SIDRStatus: 2}
	tr.CM(sidrRep)
	tr.CM(sidrRep)
	cl, sv := Peer{Addr: clientIP, Port: 40000}, Peer{Addr: serverIP, Port: 20049}
	tr.MPA(&MPAEvent{Frame: 9, Time: at(9), Src: cl, Dst: sv, Type: MPARequest, Revision: 2, Flags: 0x50})
	tr.MPA(&MPAEvent{Frame: 10, Time: at(10), Src: sv, Dst: cl, Type: MPAReject, Revision: 1, Flags: 0x60})
	tr.TCPClose(11, at(11), sv, cl, false)
	tr.TCPClose(12, at(12), sv, cl, false)
	tr.TCPClose(13, at(13), cl, sv, true)
	cs := tr.Connections()
	if len(cs) != 3 {
		t.Fatalf("%d connections", len(cs))
	}
	want := [][]Step{
		{{Message: "REQ", Frame: 1, Time: ev.Time, FromClient: true},
			{Message: "MRA", Frame: 2, Time: mra.Time.In(loc)},
			{Message: "REJ", Frame: 3, Time: at(3).In(loc), Note: "reason 28 Consumer reject"},
			{Message: "REJ", Frame: 3, Time: at(3).In(loc), Retransmission: true, Note: "reason 28 Consumer reject"},
			{Message: "DREQ", Frame: 5, Time: at(5).In(loc), Note: "by server"}},
		{{Message: "SIDR_REQ", Frame: 6, Time: at(6), FromClient: true},
			{Message: "SIDR_REP", Frame: 7, Time: at(7), Note: "status 2 qpn 0xabcdef12"},
			{Message: "SIDR_REP", Frame: 7, Time: at(7), Retransmission: true, Note: "status 2 qpn 0xabcdef12"}},
		{{Message: "MPA Request", Frame: 9, Time: at(9), FromClient: true, Note: "rev 2 flags 0x50"},
			{Message: "MPA Reject", Frame: 10, Time: at(10), Note: "rev 1 flags 0x60"},
			{Message: "TCP FIN", Frame: 11, Time: at(11)},
			{Message: "TCP FIN", Frame: 12, Time: at(12), Retransmission: true},
			{Message: "TCP RST", Frame: 13, Time: at(13), FromClient: true}},
	}
	for i, c := range cs {
		got := c.Steps()
		if len(got) != len(want[i]) || c.NumSteps() != len(got) {
			t.Fatalf("connection %d: %d steps (%d), want %d: %+v", c.ID, len(got), c.NumSteps(), len(want[i]), got)
		}
		for j, s := range got {
			if s != want[i][j] || c.StepFrame(j) != s.Frame {
				t.Errorf("connection %d step %d:\n got %+v\nwant %+v", c.ID, j, s, want[i][j])
			}
		}
	}
	if lastFrame(cs[2]) != 13 {
		t.Errorf("last frame %d", lastFrame(cs[2]))
	}
}

// TestSharedPrivateData: connections whose private data is the same keep
// one copy of it, up to maxSharedBytes different ones; each reads as what
// its message carried.
func TestSharedPrivateData(t *testing.T) {
	tr := New(Config{MaxConnections: 4})
	// Even connections carry the same private data, odd ones each their
	// own reply.
	for i := range 2*maxSharedBytes + 10 {
		comm := cComm + uint32(i)
		tr.CM(req(3*i+1, comm, uint64(i), cQPN, linuxClientPD))
		ulp := append([]byte(nil), linuxServerPD...)
		if i%2 == 1 {
			ulp = append(ulp, byte(i), byte(i>>8))
		}
		tr.CM(rep(3*i+2, sComm+uint32(i), comm, uint64(i), sQPN, ulp))
		c := tr.Connections()[i]
		if got := c.ServerData.ULP(); string(got[:len(ulp)]) != string(ulp) || len(got) != 196 {
			t.Fatalf("connection %d: server data % x", c.ID, got)
		}
	}
	cs := tr.Connections()
	if &cs[0].ClientData.Bytes[0] != &cs[1].ClientData.Bytes[0] || &cs[0].ServerData.Bytes[0] != &cs[2].ServerData.Bytes[0] {
		t.Error("the same private data kept twice")
	}
	if &cs[1].ServerData.Bytes[0] == &cs[3].ServerData.Bytes[0] || string(cs[1].ServerData.Bytes) == string(cs[3].ServerData.Bytes) {
		t.Error("different private data shared")
	}
	if len(tr.shared) != maxSharedBytes {
		t.Errorf("%d shared fields, cap %d", len(tr.shared), maxSharedBytes)
	}
}

// TestIndexPurge: a connection no longer followed leaves its keys in the
// index, unbound (what they named is not matched), until a purge; the
// purges keep the index near the size of what is followed.
func TestIndexPurge(t *testing.T) {
	const followed = 2 * smallIndex
	tr := New(Config{MaxConnections: followed})
	for i := range 4 * followed {
		tr.CM(req(i+1, cComm+uint32(i), uint64(i), cQPN+uint32(i), linuxClientPD))
		// A REQ binds two keys: its comm ID and its QP.
		if n := len(tr.index); n > 3*followed {
			t.Fatalf("after %d connections: %d keys for %d followed", i+1, n, tr.nActive)
		}
	}
	cs := tr.Connections()
	first, last := cs[0], cs[len(cs)-1]
	if !first.Evicted || last.Evicted || tr.nActive != followed {
		t.Fatalf("evicted %t %t, %d followed", first.Evicted, last.Evicted, tr.nActive)
	}
	// The first connection's REP matches nothing; the last's its REQ.
	tr.CM(rep(1<<20, sComm, cComm, 1, sQPN, linuxServerPD))
	tr.CM(rep(1<<20+1, sComm+1, last.ClientCommID, 2, sQPN+1, linuxServerPD))
	cs = tr.Connections()
	if len(cs) != 4*followed+1 || !cs[len(cs)-1].HasFinding(CodeREPWithoutREQ) || last.ReplyFrame != 1<<20+1 || first.ReplyFrame != 0 {
		t.Errorf("%d connections, the last REP-less %t, replies %d %d", len(cs), cs[len(cs)-1].HasFinding(CodeREPWithoutREQ), last.ReplyFrame, first.ReplyFrame)
	}
}

// TestLayerDecodeTaken: the tracker takes the layer's decode of a message's
// private data (CMEvent.Decoded) as its own, recognised again with the
// REQ's service port the layer may not have had; a decode of other octets
// is not taken. Each reads as the tracker's own decode does.
func TestLayerDecodeTaken(t *testing.T) {
	exchange := func(decode func(ev *CMEvent, kind pvtdata.MsgKind)) *Connection {
		tr := New(Config{})
		rq := req(1, cComm, 1, cQPN, linuxClientPD)
		// No Format Identifier: only the port says NFS/RDMA.
		rp := rep(2, sComm, cComm, 2, sQPN, nil)
		decode(rq, pvtdata.MsgRequest)
		decode(rp, pvtdata.MsgReply)
		tr.CM(rq)
		tr.CM(rp)
		return only(t, tr)
	}
	want := exchange(func(*CMEvent, pvtdata.MsgKind) {})
	if want.ServerData.Kind != pvtdata.ULPRPCRDMA {
		t.Fatalf("server data without the layer's decode: %s", want.ServerData.Kind)
	}
	for name, decode := range map[string]func(ev *CMEvent, kind pvtdata.MsgKind){
		// As ibcm decodes a REP: without the port.
		"taken": func(ev *CMEvent, kind pvtdata.MsgKind) {
			d := pvtdata.Dissect(ev.PrivateData[ev.ULPOffset:], pvtdata.Hint{Msg: kind}, pvtdata.ModeLinux)
			ev.Decoded = &d
		},
		"other octets": func(ev *CMEvent, kind pvtdata.MsgKind) {
			d := pvtdata.Dissect(linuxServerPD[:4], pvtdata.Hint{Msg: kind}, pvtdata.ModeRFC8797)
			ev.Decoded = &d
		},
	} {
		got := exchange(decode)
		if !reflect.DeepEqual(got.ClientData, want.ClientData) || !reflect.DeepEqual(got.ServerData, want.ServerData) ||
			!reflect.DeepEqual(got.Findings(), want.Findings()) || got.Negotiated != want.Negotiated {
			t.Errorf("%s: client %+v server %+v findings %v, want %+v %+v %v", name, got.ClientData, got.ServerData,
				codes(got.Findings()), want.ClientData, want.ServerData, codes(want.Findings()))
		}
	}
}
