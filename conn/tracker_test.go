package conn

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

var (
	t0         = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clientIP   = netip.MustParseAddr("192.168.122.10")
	serverIP   = netip.MustParseAddr("192.168.122.11")
	clientHost = Peer{Addr: clientIP}
	serverHost = Peer{Addr: serverIP}
	nfsSID     = uint64(ibcm.ServiceIDFor(ibcm.PortSpaceTCP, pvtdata.PortNFSRDMA))
	// The Linux kernel's private data (wire-formats.md §1).
	linuxClientPD = []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03}
	linuxServerPD = []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03}
)

// reqPD builds a REQ's 92-octet private data: the 36-octet rdma_cm IPv4
// header, then ulp, zero padded.
func reqPD(ulp []byte) []byte {
	b := make([]byte, 92)
	b[0] = 0x00
	b[1] = 0x40
	b[2], b[3] = 0x03, 0xff // port 1023
	copy(b[16:20], clientIP.AsSlice())
	copy(b[32:36], serverIP.AsSlice())
	copy(b[36:], ulp)
	return b
}

func repPD(ulp []byte) []byte {
	b := make([]byte, 196)
	copy(b, ulp)
	return b
}

func at(frame int) time.Time { return t0.Add(time.Duration(frame) * time.Millisecond) }

func req(frame int, comm uint32, tid uint64, qpn uint32, ulp []byte) *CMEvent {
	return &CMEvent{Frame: frame, Time: at(frame), Transport: RoCEv2, Src: clientHost, Dst: serverHost,
		Type: ibcm.AttrREQ, TID: tid, LocalCommID: comm, ServiceID: nfsSID, QPN: qpn,
		PrivateData: reqPD(ulp), ULPOffset: 36, PrivateDataAt: 226,
		CMAValid: true, CMASrc: clientIP, CMADst: serverIP, CMAPort: 1023}
}

func rep(frame int, local, remote uint32, tid uint64, qpn uint32, ulp []byte) *CMEvent {
	return &CMEvent{Frame: frame, Time: at(frame), Transport: RoCEv2, Src: serverHost, Dst: clientHost,
		Type: ibcm.AttrREP, TID: tid, LocalCommID: local, RemoteCommID: remote, QPN: qpn,
		PrivateData: repPD(ulp), PrivateDataAt: 122}
}

func cmMsg(frame int, typ uint16, fromClient bool, local, remote uint32) *CMEvent {
	ev := &CMEvent{Frame: frame, Time: at(frame), Transport: RoCEv2, Src: clientHost, Dst: serverHost,
		Type: typ, TID: uint64(frame), LocalCommID: local, RemoteCommID: remote}
	if !fromClient {
		ev.Src, ev.Dst = serverHost, clientHost
	}
	return ev
}

const (
	cComm = 0x1a2b3c4d
	sComm = 0x5e6f7081
	cQPN  = 0x11
	sQPN  = 0x12
)

// kernelExchange feeds the Linux NFS/RDMA exchange: REQ, REP, RTU.
func kernelExchange(t *Tracker, clientUlp, serverUlp []byte) {
	t.CM(req(1, cComm, 100, cQPN, clientUlp))
	t.CM(rep(2, sComm, cComm, 200, sQPN, serverUlp))
	t.CM(cmMsg(3, ibcm.AttrRTU, true, cComm, sComm))
}

func codes(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

func only(t *testing.T, tr *Tracker) *Connection {
	t.Helper()
	cs := tr.Connections()
	if len(cs) != 1 {
		t.Fatalf("got %d connections, want 1", len(cs))
	}
	return cs[0]
}

func TestKernelExchange(t *testing.T) {
	tr := New(Config{})
	kernelExchange(tr, linuxClientPD, linuxServerPD)
	tr.CM(cmMsg(10, ibcm.AttrDREQ, true, cComm, sComm))
	tr.CM(cmMsg(11, ibcm.AttrDREP, false, sComm, cComm))
	tr.Finish()
	c := only(t, tr)
	if c.State != StateDisconnected {
		t.Errorf("state %s, want disconnected", c.State)
	}
	if c.RequestFrame != 1 || c.ReplyFrame != 2 || c.EstablishedFrame != 3 || c.DisconnectRequestFrame != 10 || c.DisconnectReplyFrame != 11 {
		t.Errorf("frames %d %d %d %d %d", c.RequestFrame, c.ReplyFrame, c.EstablishedFrame, c.DisconnectRequestFrame, c.DisconnectReplyFrame)
	}
	want := pvtdata.Negotiated{ClientToServerInline: 4096, ServerToClientInline: 4096}
	if c.Negotiated != want {
		t.Errorf("negotiated %+v, want %+v", c.Negotiated, want)
	}
	if c.ClientData.Read.Offset != 0 || c.ClientData.ULPOffset != 36 || !c.ClientData.Read.Message.RemoteInvalidation() {
		t.Errorf("client reading %+v ulp offset %d", c.ClientData.Read, c.ClientData.ULPOffset)
	}
	if c.ServerData.Read.Offset != 0 || c.ServerData.Read.Message.RemoteInvalidation() || c.ServerData.Format() != "rpcrdma-v1" {
		t.Errorf("server reading %+v", c.ServerData.Read)
	}
	if c.Client.String() != "192.168.122.10:1023" || c.Server.String() != "192.168.122.11:20049" {
		t.Errorf("client %s server %s", c.Client, c.Server)
	}
	if c.ClientQPN != cQPN || c.ServerQPN != sQPN {
		t.Errorf("qpns 0x%x 0x%x", c.ClientQPN, c.ServerQPN)
	}
	if c.Service() != "NFS/RDMA (rdma_cm TCP port 20049)" {
		t.Errorf("service %q", c.Service())
	}
	if len(c.Findings()) != 0 {
		t.Errorf("findings %v", c.Findings())
	}
	dirs := ""
	for _, s := range c.Steps() {
		if s.FromClient {
			dirs += ">"
		} else {
			dirs += "<"
		}
	}
	if dirs != "><>><" {
		t.Errorf("directions %q", dirs)
	}
}

func TestRetransmittedREQ(t *testing.T) {
	tr := New(Config{})
	tr.CM(req(1, cComm, 100, cQPN, linuxClientPD))
	tr.CM(req(2, cComm, 100, cQPN, linuxClientPD))
	tr.CM(rep(3, sComm, cComm, 200, sQPN, linuxServerPD))
	tr.CM(rep(4, sComm, cComm, 200, sQPN, linuxServerPD))
	tr.CM(cmMsg(5, ibcm.AttrRTU, true, cComm, sComm))
	c := only(t, tr)
	if c.State != StateEstablished || c.RequestFrame != 1 || c.ReplyFrame != 3 {
		t.Errorf("state %s req %d rep %d", c.State, c.RequestFrame, c.ReplyFrame)
	}
	if !c.Steps()[1].Retransmission || !c.Steps()[3].Retransmission || c.Steps()[2].Retransmission {
		t.Errorf("steps %+v", c.Steps())
	}
}

func TestMRAThenREJ(t *testing.T) {
	tr := New(Config{})
	tr.CM(req(1, cComm, 100, cQPN, linuxClientPD))
	tr.CM(cmMsg(2, ibcm.AttrMRA, false, sComm, cComm))
	ev := cmMsg(3, ibcm.AttrREJ, false, sComm, cComm)
	ev.RejectReason, ev.RejectReasonName = 28, "Consumer reject"
	tr.CM(ev)
	c := only(t, tr)
	if c.State != StateRejected || c.RejectReason != 28 || c.RejectFrame != 3 || c.ReplyFrame != 3 {
		t.Errorf("state %s reason %d frames %d/%d", c.State, c.RejectReason, c.RejectFrame, c.ReplyFrame)
	}
	if got := c.Steps()[1].Message; got != "MRA" {
		t.Errorf("step 2 %s", got)
	}
	if !c.HasFinding(CodeRejected) {
		t.Errorf("findings %v", codes(c.Findings()))
	}
}

func TestOddities(t *testing.T) {
	tr := New(Config{})
	tr.CM(rep(1, sComm, cComm, 200, sQPN, linuxServerPD))
	tr.CM(cmMsg(2, ibcm.AttrRTU, true, 0x99, 0x98))
	tr.CM(cmMsg(3, ibcm.AttrDREQ, true, 0x77, 0x76))
	tr.CM(cmMsg(4, ibcm.AttrDREP, false, 0x55, 0x54))
	cs := tr.Connections()
	if len(cs) != 3 {
		t.Fatalf("%d connections", len(cs))
	}
	for i, code := range []string{CodeREPWithoutREQ, CodeRTUWithoutREP, CodeDREQUnknown} {
		if !cs[i].HasFinding(code) {
			t.Errorf("connection %d: findings %v, want %s", i+1, codes(cs[i].Findings()), code)
		}
	}
	if cs[0].State != StateReplied || cs[1].State != StateEstablished || cs[2].State != StateDisconnecting {
		t.Errorf("states %s %s %s", cs[0].State, cs[1].State, cs[2].State)
	}
	// REP without REQ: client data unknown → defaults.
	if cs[0].Negotiated.ClientToServerInline != 1024 || cs[0].Negotiated.ServerToClientInline != 1024 {
		t.Errorf("negotiated %+v", cs[0].Negotiated)
	}
	if got := codes(tr.Findings()); len(got) != 1 || got[0] != CodeUnknownConnection {
		t.Errorf("orphans %v", got)
	}
}

func TestRTUWithoutREPAfterREQ(t *testing.T) {
	tr := New(Config{})
	tr.CM(req(1, cComm, 100, cQPN, linuxClientPD))
	tr.CM(cmMsg(2, ibcm.AttrRTU, true, cComm, sComm))
	c := only(t, tr)
	if !c.HasFinding(CodeRTUWithoutREP) || c.State != StateEstablished {
		t.Errorf("state %s findings %v", c.State, codes(c.Findings()))
	}
}

func TestReconnectionChangedValues(t *testing.T) {
	tr := New(Config{})
	kernelExchange(tr, linuxClientPD, linuxServerPD)
	tr.CM(cmMsg(4, ibcm.AttrDREQ, true, cComm, sComm))
	tr.CM(cmMsg(5, ibcm.AttrDREP, false, sComm, cComm))
	pd, _ := pvtdata.Encode(8192, 8192, true)
	b := pd.Bytes()
	tr.CM(req(6, cComm+1, 101, cQPN+2, b[:]))
	tr.CM(rep(7, sComm+1, cComm+1, 201, sQPN+2, linuxServerPD))
	cs := tr.Connections()
	if len(cs) != 2 {
		t.Fatalf("%d connections", len(cs))
	}
	if cs[0].HasFinding(CodeAdvertisedValuesChanged) || !cs[1].HasFinding(CodeAdvertisedValuesChanged) {
		t.Errorf("findings %v / %v", codes(cs[0].Findings()), codes(cs[1].Findings()))
	}
	if cs[1].Negotiated.ClientToServerInline != 4096 {
		t.Errorf("negotiated %+v", cs[1].Negotiated)
	}
	// Same values again: no finding.
	tr2 := New(Config{})
	kernelExchange(tr2, linuxClientPD, linuxServerPD)
	tr2.CM(req(6, cComm+1, 101, cQPN+2, linuxClientPD))
	tr2.CM(rep(7, sComm+1, cComm+1, 201, sQPN+2, linuxServerPD))
	if cs := tr2.Connections(); len(cs) != 2 || cs[1].HasFinding(CodeAdvertisedValuesChanged) {
		t.Errorf("unchanged reconnection: %d connections, findings %v", len(cs), codes(cs[len(cs)-1].Findings()))
	}
}

func send(frame int, toServer bool, length int) *SendEvent {
	ev := &SendEvent{FirstFrame: frame, LastFrame: frame, Time: at(frame), Transport: RoCEv2,
		Src: clientHost, Dst: serverHost, DestQP: sQPN, Length: length, RPCRDMA: true, XID: uint32(1000 + frame)}
	if !toServer {
		ev.Src, ev.Dst, ev.DestQP = serverHost, clientHost, cQPN
	}
	return ev
}

// invalidating is a 200-octet Send with Invalidate of stag.
func invalidating(frame int, toServer bool, xid, stag uint32) []*SendEvent {
	ev := send(frame, toServer, 200)
	ev.XID, ev.Invalidate, ev.InvalidateSTag = xid, true, stag
	return []*SendEvent{ev}
}

// callInvalidatedReply is a call (frame 10, xid 7) offering handles and
// its reply (frame 11), a Send with Invalidate of stag.
func callInvalidatedReply(handles []uint32, stag uint32) []*SendEvent {
	call := send(10, true, 200)
	call.XID, call.Handles = 7, handles
	return append([]*SendEvent{call}, invalidating(11, false, 7, stag)...)
}

func TestTrafficChecks(t *testing.T) {
	tests := []struct {
		name      string
		client    []byte
		server    []byte
		events    func() []*SendEvent
		wantCodes []string
	}{
		{"within thresholds", linuxClientPD, linuxServerPD, func() []*SendEvent {
			return []*SendEvent{send(10, true, 4096), send(11, false, 4096)}
		}, nil},
		{"call exceeds server's threshold", linuxClientPD, linuxServerPD, func() []*SendEvent {
			return []*SendEvent{send(10, true, 4097)}
		}, []string{CodeSendExceedsInline}},
		{"reply exceeds default threshold", nil, nil, func() []*SendEvent {
			return []*SendEvent{send(10, false, 1500)}
		}, []string{CodeSendExceedsInline}},
		{"non-RPC Send is not checked for size", linuxClientPD, linuxServerPD, func() []*SendEvent {
			ev := send(10, true, 9000)
			ev.RPCRDMA = false
			return []*SendEvent{ev}
		}, nil},
		{"send with invalidate, R from neither", linuxServerPD, linuxServerPD, func() []*SendEvent { return invalidating(11, false, 1011, 0xabc) }, []string{CodeSendInvNotNegotiated}},
		{"send with invalidate, R only from client", linuxClientPD, linuxServerPD, func() []*SendEvent { return callInvalidatedReply([]uint32{0xabc}, 0xabc) }, []string{CodeSendInvTolerated}},
		{"send with invalidate negotiated, STag offered", linuxClientPD, linuxClientPD, func() []*SendEvent { return callInvalidatedReply([]uint32{0xabc, 0xdef}, 0xdef) }, nil},
		{"invalidated STag not offered", linuxClientPD, linuxClientPD, func() []*SendEvent { return callInvalidatedReply([]uint32{0xabc}, 0x123) }, []string{CodeInvalidatedSTagNotOffered}},
		{"call not seen: STag not checked", linuxClientPD, linuxClientPD, func() []*SendEvent { return invalidating(11, false, 7, 0x123) }, nil},
		{"requester sends with invalidate", linuxClientPD, linuxClientPD, func() []*SendEvent { return invalidating(10, true, 1010, 0x42) }, []string{CodeSendInvFromRequester}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(Config{})
			kernelExchange(tr, tc.client, tc.server)
			for _, ev := range tc.events() {
				tr.Send(ev)
			}
			c := only(t, tr)
			var got []string
			for _, f := range c.Findings() {
				if strings.HasPrefix(f.Code, "conn.send") || strings.HasPrefix(f.Code, "conn.invalidated") {
					got = append(got, f.Code)
					if f.Frame < 10 {
						t.Errorf("finding %s at frame %d", f.Code, f.Frame)
					}
				}
			}
			for _, f := range c.Findings() {
				if f.Code == CodeSendInvNotNegotiated || f.Code == CodeSendInvTolerated {
					// Tolerated when the receiving client set R (the Linux
					// server's deviation, with that context).
					linux := tc.client != nil && tc.client[5] == 1
					if (f.Code == CodeSendInvTolerated) != linux || linux != strings.Contains(f.Message, "svcrdma") {
						t.Errorf("%s for %q", f.Code, f.Message)
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.wantCodes, ",") {
				t.Errorf("codes %v, want %v", got, tc.wantCodes)
			}
			if tr.Unmatched != 0 {
				t.Errorf("%d unmatched Sends", tr.Unmatched)
			}
		})
	}
}

func TestSendBeforeReplyNotChecked(t *testing.T) {
	tr := New(Config{})
	tr.CM(req(1, cComm, 100, cQPN, linuxClientPD))
	tr.Send(send(2, false, 100000))
	c := only(t, tr)
	if len(c.Findings()) != 0 || c.ToClient.Sends != 1 {
		t.Errorf("findings %v sends %+v", codes(c.Findings()), c.ToClient)
	}
	tr.Send(&SendEvent{FirstFrame: 3, Time: at(3), Transport: RoCEv2, Src: clientHost, Dst: serverHost, DestQP: 0x999, Length: 10})
	if tr.Unmatched != 1 {
		t.Errorf("unmatched %d", tr.Unmatched)
	}
}

func TestServerSendExceedsClientReceive(t *testing.T) {
	tr := New(Config{})
	srv, _ := pvtdata.Encode(16384, 4096, false)
	b := srv.Bytes()
	kernelExchange(tr, linuxClientPD, b[:])
	c := only(t, tr)
	if !c.HasFinding(CodeServerSendExceedsClientReceive) {
		t.Fatalf("findings %v", codes(c.Findings()))
	}
	if c.Negotiated.ServerToClientInline != 4096 {
		t.Errorf("negotiated %+v", c.Negotiated)
	}
	for _, f := range c.Findings() {
		if f.Code == CodeServerSendExceedsClientReceive && (!strings.Contains(f.Message, "Linux") || f.Frame != 2) {
			t.Errorf("finding %+v", f)
		}
	}
}

func TestPrivateDataFindings(t *testing.T) {
	// Identifier at ULP offset 4 with reserved bits: rfc8797 finds it,
	// draft and linux readers do not, so the readers diverge.
	ulp := append([]byte{0, 0, 0, 0}, 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x03, 0x03, 0x03)
	tr := New(Config{})
	kernelExchange(tr, ulp, linuxServerPD)
	c := only(t, tr)
	for _, code := range []string{pvtdata.CodeReaderDivergence, pvtdata.CodeReservedBits, pvtdata.CodeNotAtOffsetZero} {
		if !c.HasFinding(code) {
			t.Errorf("missing %s in %v", code, codes(c.Findings()))
		}
	}
	for _, f := range c.Findings() {
		if f.Code == pvtdata.CodeReservedBits {
			// frame offset 226 + ULP offset 36 + identifier 4 + 5
			if f.Offset != 226+36+4+5 || f.Frame != 1 || !strings.HasPrefix(f.Message, "client REQ private data: ") {
				t.Errorf("reserved-bits finding %+v", f)
			}
		}
	}
	if c.Negotiated.ClientToServerInline != 4096 {
		t.Errorf("negotiated %+v", c.Negotiated)
	}
	// The linux reader acts on the defaults.
	tr = New(Config{Mode: pvtdata.ModeLinux})
	kernelExchange(tr, ulp, linuxServerPD)
	if n := only(t, tr).Negotiated; n.ClientToServerInline != 1024 {
		t.Errorf("linux mode negotiated %+v", n)
	}
}

func TestEviction(t *testing.T) {
	tr := New(Config{MaxConnections: 2})
	for i := 0; i < 3; i++ {
		tr.CM(req(i+1, cComm+uint32(i), uint64(i), cQPN+uint32(i), linuxClientPD))
	}
	cs := tr.Connections()
	if len(cs) != 3 || !cs[0].Evicted || cs[1].Evicted || !cs[0].HasFinding(CodeTableFull) {
		t.Fatalf("connections %d, evicted %v %v, findings %v", len(cs), cs[0].Evicted, cs[1].Evicted, codes(cs[0].Findings()))
	}
	// The evicted connection's REP now matches nothing.
	tr.CM(rep(4, sComm, cComm, 200, sQPN, linuxServerPD))
	if len(tr.Connections()) != 4 || !tr.Connections()[3].HasFinding(CodeREPWithoutREQ) {
		t.Errorf("REP after eviction: %d connections", len(tr.Connections()))
	}
	if tr.nActive != 2 {
		t.Errorf("active %d", tr.nActive)
	}
}

func TestTimeout(t *testing.T) {
	tr := New(Config{Timeout: time.Second})
	tr.CM(req(1, cComm, 100, cQPN, linuxClientPD))
	late := req(2, cComm+1, 101, cQPN+1, linuxClientPD)
	late.Time = at(1).Add(5 * time.Second)
	tr.CM(late)
	cs := tr.Connections()
	if cs[0].State != StateTimedOut || !cs[0].HasFinding(CodeTimedOut) || cs[1].State != StateRequested {
		t.Errorf("states %s %s", cs[0].State, cs[1].State)
	}
}

func TestFindingCap(t *testing.T) {
	tr := New(Config{MaxFindingsPerCode: 3})
	kernelExchange(tr, linuxClientPD, linuxServerPD)
	for i := 0; i < 10; i++ {
		tr.Send(send(10+i, true, 5000))
	}
	tr.Finish()
	c := only(t, tr)
	n := 0
	for _, f := range c.Findings() {
		if f.Code == CodeSendExceedsInline {
			n++
		}
	}
	// The three first are listed, all ten counted with their frames.
	if n != 3 || len(c.Findings()) != 3 || c.Findings()[2].Frame != 12 {
		t.Errorf("%d findings, %v", n, codes(c.Findings()))
	}
	fc := c.FindingCount(CodeSendExceedsInline, finding.SeverityError)
	if len(c.FindingCounts) != 1 || fc == nil || *fc != (FindingCount{Code: CodeSendExceedsInline, Severity: finding.SeverityError,
		Count: 10, Listed: 3, FirstFrame: 10, LastFrame: 19, FirstUnlistedFrame: 13}) || fc.Unlisted() != 7 {
		t.Errorf("counts %+v", c.FindingCounts)
	}
}

func mpaPD(irdord []byte, ulp []byte) []byte { return append(append([]byte(nil), irdord...), ulp...) }

func TestMPA(t *testing.T) {
	cl := Peer{Addr: clientIP, Port: 40000}
	sv := Peer{Addr: serverIP, Port: 20049}
	tr := New(Config{})
	tr.MPA(&MPAEvent{Frame: 4, Time: at(4), Src: cl, Dst: sv, Type: MPARequest, Revision: 2, Flags: 0x10,
		PrivateData: mpaPD([]byte{0, 0x80, 0, 0}, linuxClientPD), ULPOffset: 4, PrivateDataAt: 86})
	tr.MPA(&MPAEvent{Frame: 5, Time: at(5), Src: sv, Dst: cl, Type: MPAReply, Revision: 2, Flags: 0x10,
		PrivateData: mpaPD([]byte{0, 0, 0, 0x80}, linuxServerPD), ULPOffset: 4, PrivateDataAt: 86})
	tr.Send(&SendEvent{FirstFrame: 6, Time: at(6), Transport: IWARP, Src: cl, Dst: sv, Length: 300, RPCRDMA: true, XID: 1})
	tr.Send(&SendEvent{FirstFrame: 7, Time: at(7), Transport: IWARP, Src: sv, Dst: cl, Length: 5000, RPCRDMA: true, XID: 1})
	c := only(t, tr)
	if c.Transport != IWARP || c.State != StateEstablished || c.RequestFrame != 4 || c.ReplyFrame != 5 {
		t.Errorf("%s %s %d %d", c.Transport, c.State, c.RequestFrame, c.ReplyFrame)
	}
	if c.Negotiated != (pvtdata.Negotiated{ClientToServerInline: 4096, ServerToClientInline: 4096}) {
		t.Errorf("negotiated %+v", c.Negotiated)
	}
	if c.ToServer.Sends != 1 || c.ToClient.Sends != 1 || !c.HasFinding(CodeSendExceedsInline) {
		t.Errorf("sends %+v %+v findings %v", c.ToServer, c.ToClient, codes(c.Findings()))
	}
	if c.Service() != "NFS/RDMA (rdma_cm TCP port 20049)" {
		t.Errorf("service %q", c.Service())
	}
	// A reject on a new stream.
	cl2 := Peer{Addr: clientIP, Port: 40001}
	tr.MPA(&MPAEvent{Frame: 8, Time: at(8), Src: cl2, Dst: sv, Type: MPARequest, Revision: 2, PrivateData: linuxClientPD})
	tr.MPA(&MPAEvent{Frame: 9, Time: at(9), Src: sv, Dst: cl2, Type: MPAReject, Revision: 2})
	if c2 := tr.Connections()[1]; c2.State != StateRejected || c2.ReplyFrame != 9 {
		t.Errorf("reject: %s %d", c2.State, c2.ReplyFrame)
	}
	// A reply on a stream never seen.
	tr.MPA(&MPAEvent{Frame: 10, Time: at(10), Src: sv, Dst: Peer{Addr: clientIP, Port: 1}, Type: MPAReply})
	if len(tr.Findings()) != 1 {
		t.Errorf("orphans %v", tr.Findings())
	}
}

func TestSIDR(t *testing.T) {
	tr := New(Config{})
	tr.CM(&CMEvent{Frame: 1, Time: at(1), Transport: IB, Src: Peer{LID: 1}, Dst: Peer{LID: 2}, Type: ibcm.AttrSIDRReq,
		LocalCommID: 0x42, ServiceID: uint64(ibcm.ServiceIDFor(ibcm.PortSpaceUDP, 7471)), PrivateData: reqPD(nil), ULPOffset: 36})
	tr.CM(&CMEvent{Frame: 2, Time: at(2), Transport: IB, Src: Peer{LID: 2}, Dst: Peer{LID: 1}, Type: ibcm.AttrSIDRRep,
		LocalCommID: 0x42, QPN: 0x99, PrivateData: make([]byte, 136)})
	c := only(t, tr)
	if c.Kind != KindSIDR || c.State != StateReplied || c.ServerQPN != 0x99 || c.Service() != "rdma_cm UDP port 7471" {
		t.Errorf("%s %s 0x%x %q", c.Kind, c.State, c.ServerQPN, c.Service())
	}
	if c.Client.String() != "lid 0x0001" || c.Server.String() != "lid 0x0002 port 7471" {
		t.Errorf("client %q", c.Client)
	}
}

func TestTCPClose(t *testing.T) {
	cl := Peer{Addr: clientIP, Port: 40000}
	sv := Peer{Addr: serverIP, Port: 20049}
	setup := func() *Tracker {
		tr := New(Config{})
		tr.MPA(&MPAEvent{Frame: 1, Time: at(1), Src: cl, Dst: sv, Type: MPARequest, PrivateData: linuxClientPD})
		tr.MPA(&MPAEvent{Frame: 2, Time: at(2), Src: sv, Dst: cl, Type: MPAReply, PrivateData: linuxServerPD})
		return tr
	}
	tr := setup()
	tr.TCPClose(3, at(3), cl, sv, false)
	c := only(t, tr)
	if c.State != StateDisconnecting || c.DisconnectRequestFrame != 3 {
		t.Errorf("after one FIN: %s %d", c.State, c.DisconnectRequestFrame)
	}
	tr.TCPClose(4, at(4), cl, sv, false) // retransmitted FIN
	tr.TCPClose(5, at(5), sv, cl, false)
	if c.State != StateDisconnected || c.DisconnectReplyFrame != 5 || !c.Steps()[3].Retransmission || c.Steps()[4].Message != "TCP FIN" {
		t.Errorf("after both FINs: %s %d %+v", c.State, c.DisconnectReplyFrame, c.Steps())
	}
	tr = setup()
	tr.TCPClose(3, at(3), sv, cl, true)
	if c := only(t, tr); c.State != StateDisconnected || c.DisconnectRequestFrame != 3 || c.DisconnectReplyFrame != 3 || c.Steps()[2].FromClient {
		t.Errorf("after RST: %s %d/%d", c.State, c.DisconnectRequestFrame, c.DisconnectReplyFrame)
	}
	// A FIN on a stream without MPA is nothing.
	tr.TCPClose(4, at(4), Peer{Addr: clientIP, Port: 1}, sv, false)
	if len(tr.Connections()) != 1 {
		t.Error("FIN on an unknown stream made a connection")
	}
}

func TestStepCap(t *testing.T) {
	tr := New(Config{MaxSteps: 4})
	for i := 0; i < 10; i++ {
		tr.CM(req(i+1, cComm, 100, cQPN, linuxClientPD))
	}
	c := only(t, tr)
	if len(c.Steps()) != 4 || c.StepsDropped != 6 || !c.Steps()[3].Retransmission {
		t.Errorf("%d steps, %d dropped", len(c.Steps()), c.StepsDropped)
	}
}

func TestServerDisconnectsAndClientRejectsREP(t *testing.T) {
	tr := New(Config{})
	kernelExchange(tr, linuxClientPD, linuxServerPD)
	tr.CM(cmMsg(4, ibcm.AttrDREQ, false, sComm, cComm))
	tr.CM(cmMsg(5, ibcm.AttrDREQ, false, sComm, cComm)) // retransmitted
	tr.CM(cmMsg(6, ibcm.AttrDREP, true, cComm, sComm))
	c := only(t, tr)
	if c.State != StateDisconnected || c.DisconnectRequestFrame != 4 || c.DisconnectReplyFrame != 6 {
		t.Errorf("%s %d %d", c.State, c.DisconnectRequestFrame, c.DisconnectReplyFrame)
	}
	if s := c.Steps()[3]; s.FromClient || s.Note != "by server" || !c.Steps()[4].Retransmission || !c.Steps()[5].FromClient {
		t.Errorf("steps %+v", c.Steps())
	}

	// The client rejects the server's REP (REJ of a REP).
	tr = New(Config{})
	tr.CM(req(1, cComm, 100, cQPN, linuxClientPD))
	tr.CM(rep(2, sComm, cComm, 200, sQPN, linuxServerPD))
	rej := cmMsg(3, ibcm.AttrREJ, true, cComm, sComm)
	rej.RejectReason, rej.RejectReasonName = 28, "Consumer Reject"
	tr.CM(rej)
	c = only(t, tr)
	if c.State != StateRejected || c.ReplyFrame != 2 || c.RejectFrame != 3 || !c.Steps()[2].FromClient {
		t.Errorf("%s reply %d reject %d", c.State, c.ReplyFrame, c.RejectFrame)
	}
	for _, f := range c.Findings() {
		if f.Code == CodeRejected && !strings.Contains(f.Message, "the client rejected") {
			t.Errorf("%s", f.Message)
		}
	}
}

func TestOtherULPNotChecked(t *testing.T) {
	// An NVMe-oF connection (port 4420, NVMe private data): its target's
	// Send with Invalidate and large Sends are not RFC 8797's business.
	nvmeReq := make([]byte, 32) // recfmt 0, qid 1, hrqsize 32, hsqsize 31
	nvmeReq[2], nvmeReq[4], nvmeReq[6] = 1, 32, 31
	nvmeRep := make([]byte, 32)
	nvmeRep[2] = 32
	tr := New(Config{})
	r := req(1, cComm, 100, cQPN, nvmeReq)
	r.ServiceID = uint64(ibcm.ServiceIDFor(ibcm.PortSpaceTCP, 4420))
	tr.CM(r)
	tr.CM(rep(2, sComm, cComm, 200, sQPN, nvmeRep))
	ev := send(3, false, 9000)
	ev.Invalidate, ev.InvalidateSTag = true, 0x77
	tr.Send(ev)
	c := only(t, tr)
	if c.RPCRDMA() || c.HasFinding(CodeSendInvNotNegotiated) || c.HasFinding(CodeSendExceedsInline) || c.ToClient.Sends != 1 {
		t.Errorf("ulp %s/%s, findings %v", c.ClientData.Format(), c.ServerData.Format(), codes(c.Findings()))
	}
	// NFS/RDMA without any private data (nfs-ganesha): the defaults apply.
	tr = New(Config{})
	kernelExchange(tr, nil, nil)
	tr.Send(send(4, false, 2000))
	if c := only(t, tr); !c.RPCRDMA() || !c.HasFinding(CodeSendExceedsInline) {
		t.Errorf("ganesha-like: findings %v", codes(c.Findings()))
	}
}
