package conn

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// trackFile runs a capture through the dissector and the tracker. check,
// when not nil, sees every record.
func trackFile(t *testing.T, path string, check func(*dissect.Record)) *Tracker {
	t.Helper()
	return trackWith(t, path, Config{}, check)
}

// trackFileConfig runs a capture through a tracker configured with cfg.
func trackFileConfig(t *testing.T, path string, cfg Config) *Tracker {
	t.Helper()
	return trackWith(t, path, cfg, nil)
}

func trackWith(t *testing.T, path string, cfg Config, check func(*dissect.Record)) *Tracker {
	t.Helper()
	src, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tr := New(cfg)
	d := dissect.New(dissect.Options{})
	if err := d.Run(src, func(r *dissect.Record) error {
		if check != nil {
			check(r)
		}
		tr.Record(r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tr.Finish()
	return tr
}

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// The Linux kernel's exchange (testdata/pcaps/real/PROVENANCE.md): client
// f6ab0e18 01 01 03 03, server f6ab0e18 01 00 03 03.
var (
	kernelClient = unhex("f6ab0e1801010303")
	kernelServer = unhex("f6ab0e1801000303")
)

func checkKernelNegotiation(t *testing.T, c *Connection) {
	t.Helper()
	if c.ClientData == nil || c.ServerData == nil {
		t.Fatalf("private data missing: %v %v", c.ClientData, c.ServerData)
	}
	if ulp := c.ClientData.ULP(); !bytes.HasPrefix(ulp, kernelClient) {
		t.Errorf("client ULP data % x", ulp)
	}
	if ulp := c.ServerData.ULP(); !bytes.HasPrefix(ulp, kernelServer) {
		t.Errorf("server ULP data % x", ulp)
	}
	for _, pd := range []*PrivateData{c.ClientData, c.ServerData} {
		r := pd.Read
		if !r.Valid || r.Offset != 0 || r.Message.Version != 1 || r.Message.SendBytes() != 4096 || r.Message.ReceiveBytes() != 4096 || pd.Divergent {
			t.Errorf("%s reading %+v", pd.Message, r)
		}
	}
	if !c.ClientData.Read.Message.RemoteInvalidation() || c.ServerData.Read.Message.RemoteInvalidation() {
		t.Errorf("R bits: client %v server %v", c.ClientData.Read.Message, c.ServerData.Read.Message)
	}
	if want := (pvtdata.Negotiated{ClientToServerInline: 4096, ServerToClientInline: 4096}); c.Negotiated != want {
		t.Errorf("negotiated %+v, want %+v", c.Negotiated, want)
	}
	// The NFS traffic: 23 Sends each way, the server's 4 with Invalidate
	// although it cleared R (the Linux server's deviation).
	// Every Send carries RPC-over-RDMA; each invalidated STag was offered
	// by its call (checked, no finding).
	if c.ToServer.Sends != 23 || c.ToClient.Sends != 23 || c.ToClient.Invalidate != 4 || c.ToServer.Invalidate != 0 ||
		c.ToServer.RPCRDMA != 23 || c.ToClient.RPCRDMA != 23 || c.ToClient.InvalidateChecked != 4 {
		t.Errorf("traffic %+v / %+v", c.ToServer, c.ToClient)
	}
	n := 0
	for _, f := range c.Findings() {
		switch f.Code {
		case CodeSendInvTolerated:
			n++
			if f.Severity != finding.SeverityWarning {
				t.Errorf("severity %s: %s", f.Severity, f)
			}
		default:
			t.Errorf("unexpected finding %s", f)
		}
	}
	if n != 4 {
		t.Errorf("%d send-inv-tolerated findings, want 4", n)
	}
}

func TestRealRXE(t *testing.T) {
	var cmOK bool
	tr := trackFile(t, testcap.RXE, func(r *dissect.Record) {
		// The private-data offsets the tracker uses must point at the
		// real bytes: the REQ's ULP data at frame offset 262.
		for i, l := range r.Layers {
			if cm, ok := l.(*ibcm.CM); ok && cm.AttributeID == ibcm.AttrREQ {
				at := r.Offsets[i] + cm.PrivateDataOffset() + 36
				cmOK = at == 262 && bytes.Equal(r.Data[at:at+8], kernelClient)
			}
		}
	})
	if !cmOK {
		t.Error("REQ private data not at frame offset 140+36 after the CM layer (262)")
	}
	cs := tr.Connections()
	if len(cs) != 1 {
		t.Fatalf("%d connections", len(cs))
	}
	c := cs[0]
	if c.Transport != RoCEv2 || c.Client.String() != "192.0.2.2:45046" || c.Server.String() != "192.0.2.1:20049" ||
		c.ServiceID != 0x1064e51 || c.State != StateDisconnected {
		t.Errorf("%s %s → %s %#x %s", c.Transport, c.Client, c.Server, c.ServiceID, c.State)
	}
	if c.RequestFrame != 1 || c.ReplyFrame != 2 || c.EstablishedFrame != 3 || c.DisconnectRequestFrame != 108 || c.DisconnectReplyFrame != 109 {
		t.Errorf("frames %d %d %d %d %d", c.RequestFrame, c.ReplyFrame, c.EstablishedFrame, c.DisconnectRequestFrame, c.DisconnectReplyFrame)
	}
	if c.ClientData.ULPOffset != 36 || c.ServerData.ULPOffset != 0 || len(c.ClientData.Bytes) != 92 || len(c.ServerData.Bytes) != 196 {
		t.Errorf("ULP offsets %d %d, lengths %d %d", c.ClientData.ULPOffset, c.ServerData.ULPOffset, len(c.ClientData.Bytes), len(c.ServerData.Bytes))
	}
	if c.ClientQPN == 0 || c.ServerQPN == 0 {
		t.Errorf("QPNs %#x %#x", c.ClientQPN, c.ServerQPN)
	}
	checkKernelNegotiation(t, c)
	if tr.Unmatched != 0 || len(tr.Findings()) != 0 {
		t.Errorf("%d unmatched Sends, orphans %v", tr.Unmatched, tr.Findings())
	}
}

func TestRealSIW(t *testing.T) {
	tr := trackFile(t, testcap.SIW, nil)
	cs := tr.Connections()
	if len(cs) != 1 {
		t.Fatalf("%d connections", len(cs))
	}
	c := cs[0]
	if c.Transport != IWARP || c.Client.String() != "198.51.100.2:40313" || c.Server.String() != "198.51.100.1:20049" ||
		c.State != StateDisconnected || c.RequestFrame != 4 || c.ReplyFrame != 6 || c.DisconnectRequestFrame != 86 || c.DisconnectReplyFrame != 87 {
		t.Errorf("%s %s → %s %s frames %d/%d", c.Transport, c.Client, c.Server, c.State, c.RequestFrame, c.ReplyFrame)
	}
	// ULP data after the MPA v2 IRD/ORD words.
	if c.ClientData.ULPOffset != 4 || !bytes.HasPrefix(c.ClientData.Bytes, unhex("00800000")) ||
		c.ServerData.ULPOffset != 4 || !bytes.HasPrefix(c.ServerData.Bytes, unhex("00000080")) {
		t.Errorf("client % x (ULP at %d), server % x (ULP at %d)", c.ClientData.Bytes, c.ClientData.ULPOffset, c.ServerData.Bytes, c.ServerData.ULPOffset)
	}
	checkKernelNegotiation(t, c)
	if tr.Unmatched != 0 || len(tr.Findings()) != 0 {
		t.Errorf("%d unmatched Sends, orphans %v", tr.Unmatched, tr.Findings())
	}
}

// TestConcatenatedSession: the same session twice in one file (mergecap
// -a of a capture with itself) is four connections, not two with their
// REQs taken for retransmissions: a REQ after its connection's DREQ/DREP
// begins a new connection even with the same comm ID and TID.
func TestConcatenatedSession(t *testing.T) {
	once := trackFile(t, testcap.Real("live-rxe4-reconnect.pcap"), nil).Connections()
	twice := trackFile(t, testcap.Path("pcaps", "converted", "live-rxe4-reconnect.twice.pcap"), nil).Connections()
	if len(once) != 2 || len(twice) != 4 {
		t.Fatalf("%d connections once, %d twice; want 2 and 4", len(once), len(twice))
	}
	for i, c := range twice {
		o := once[i%2]
		if c.State != o.State || c.ClientQPN != o.ClientQPN || c.Negotiated != o.Negotiated {
			t.Errorf("connection %d: %s qpn 0x%x %+v, want as the first copy's: %s qpn 0x%x %+v",
				c.ID, c.State, c.ClientQPN, c.Negotiated, o.State, o.ClientQPN, o.Negotiated)
		}
		for s := range c.NumSteps() {
			if c.Step(s).Retransmission {
				t.Errorf("connection %d: step %d (%s, frame %d) taken for a retransmission", c.ID, s, c.Step(s).Message, c.Step(s).Frame)
			}
		}
	}
}
