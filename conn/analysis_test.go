package conn

import (
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
)

// TestCredits: the synthetic capture's client sends three calls on a grant
// of two (conn.credits-exceeded on the third, RFC 8166 §3.3.1); the real
// rxe NFSv4.2 mount stays within the 64 credits the Linux server grants.
func TestCredits(t *testing.T) {
	c := only(t, trackFile(t, testcap.Synthetic("synth-conn-rocev2-credits.pcap"), nil))
	cr := c.Credits
	if cr.Granted != 2 || cr.Grants != 4 || cr.PeakOutstanding != 3 || cr.GrantedAtPeak != 2 || cr.Exceeded != 1 {
		t.Errorf("credits %+v", cr)
	}
	fs := c.Findings()
	if len(fs) != 1 || fs[0].Code != CodeCreditsExceeded || fs[0].Frame != 8 ||
		!strings.Contains(fs[0].Message, "3 calls outstanding") || !strings.Contains(fs[0].Message, "granted 2 credits") {
		t.Errorf("findings %v", fs)
	}

	c = only(t, trackFile(t, testcap.Real("live-rxe4-nfs42.pcap"), nil))
	if cr := c.Credits; cr.Granted != 64 || cr.Grants != 27 || cr.PeakOutstanding != 1 || cr.Exceeded != 0 {
		t.Errorf("real rxe credits %+v", cr)
	}
}

// TestCMTiming: setup and teardown latency from the ladder, the MRA and
// the REQ sent again.
func TestCMTiming(t *testing.T) {
	c := only(t, trackFile(t, testcap.Real("live-rxe4-nfs42.pcap"), nil))
	ct := c.CMTiming()
	if !ct.HasReply || ct.RequestToReply != 12084*time.Microsecond || ct.Request != "REQ" || ct.Reply != "REP" ||
		!ct.HasReady || ct.ReplyToReady != 710*time.Microsecond ||
		!ct.HasDisconnect || ct.DisconnectToReply != 13505*time.Microsecond || ct.MRAs != 0 || ct.RequestRetries != 0 {
		t.Errorf("rxe timing %+v", ct)
	}
	c = only(t, trackFile(t, testcap.Synthetic("synth-conn-rocev2-pvtdata.pcap"), nil))
	if ct := c.CMTiming(); ct.MRAs != 1 || ct.RequestRetries != 1 || ct.RequestToReply != 3*time.Millisecond || ct.ReplyToReady != time.Millisecond {
		t.Errorf("pvtdata timing %+v", ct)
	}
	c = only(t, trackFile(t, testcap.Real("live-rxe4-reject.pcap"), nil))
	if ct := c.CMTiming(); ct.Reply != "REJ" || !ct.HasReply || ct.HasReady {
		t.Errorf("reject timing %+v", ct)
	}
	c = only(t, trackFile(t, testcap.Real("live-siw4-nfs42.pcap"), nil))
	if ct := c.CMTiming(); ct.Request != "MPA Request" || ct.Reply != "MPA Reply" || ct.RequestToReply != 56799*time.Microsecond {
		t.Errorf("siw timing %+v", ct)
	}
}

// TestAttachTransport: each connection gets the counters of its two queue
// pairs (RoCE) or its TCP stream's two directions (iWARP).
func TestAttachTransport(t *testing.T) {
	for _, tc := range []struct {
		file           string
		qps, streams   int
		retransmission uint64
	}{
		{testcap.Real("live-rxe4-nfs42.pcap"), 2, 0, 0},
		{testcap.Real("live-siw4-nfs42.pcap"), 0, 2, 2},
		{testcap.Synthetic("synth-transport-rocev2-loss.pcap"), 2, 0, 2},
	} {
		a := transport.New(transport.Config{})
		tr := trackFile(t, tc.file, func(r *dissect.Record) { a.Record(r) })
		tr.AttachTransport(a)
		c := only(t, tr)
		var re uint64
		for _, q := range c.QueuePairs {
			re += q.Retransmissions
			if q.Packets == 0 || (q.Side == "client") != (q.QPN == c.ClientQPN) {
				t.Errorf("%s: %+v", tc.file, q)
			}
		}
		for _, s := range c.Streams {
			re += s.Retransmissions
		}
		if len(c.QueuePairs) != tc.qps || len(c.Streams) != tc.streams || re != tc.retransmission {
			t.Errorf("%s: %d queue pairs, %d streams, %d retransmissions", tc.file, len(c.QueuePairs), len(c.Streams), re)
		}
		// The transport findings are listed on the connection (the
		// retransmissions among them).
		listed := uint64(0)
		for _, f := range c.Findings() {
			if f.Code == transport.CodeRetransmission || f.Code == transport.CodeTCPRetransmission {
				listed++
			}
		}
		if listed != tc.retransmission || len(tr.Findings()) != 0 {
			t.Errorf("%s: %d retransmissions listed on the connection, %v outside", tc.file, listed, tr.Findings())
		}
	}
}

// TestAttachHostPairs: the congestion marks between the two hosts, per
// direction: the CE-marked Write from the client, the CNP from the server.
func TestAttachHostPairs(t *testing.T) {
	a := transport.New(transport.Config{})
	tr := trackFile(t, testcap.Synthetic("synth-transport-rocev2-congestion.pcap"), func(r *dissect.Record) { a.Record(r) })
	tr.AttachTransport(a)
	c := only(t, tr)
	if len(c.HostPairs) != 2 || c.HostPairs[0].From != "client" || c.HostPairs[0].ECNCE != 1 || c.HostPairs[0].CNPs != 0 ||
		c.HostPairs[1].From != "server" || c.HostPairs[1].CNPs != 1 || c.HostPairs[1].ECNCE != 0 {
		t.Errorf("host pairs %+v", c.HostPairs)
	}
}
