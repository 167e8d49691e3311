package conn

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// Each synthetic connection capture (internal/gen/conn.go, make testdata)
// triggers its findings, and only those.
func TestSyntheticCaptures(t *testing.T) {
	type want struct {
		state string
		codes string // sorted, comma separated, with counts
	}
	tests := []struct {
		file    string
		cfg     Config
		conns   []want
		orphans string
	}{
		{"synth-conn-rocev2-traffic.pcap", Config{}, []want{{"disconnected",
			"conn.invalidated-stag-not-offered, conn.send-exceeds-inline, conn.send-inv-from-requester, conn.send-inv-not-negotiated, conn.send-inv-tolerated×2"}}, ""},
		{"synth-conn-rocev2-oddities.pcap", Config{}, []want{
			{"replied", "conn.rep-without-req"}, {"established", "conn.rtu-without-rep"},
			{"disconnecting", "conn.dreq-unknown-connection"}}, "conn.unknown-connection×2"},
		{"synth-conn-rocev2-pvtdata.pcap", Config{}, []want{{"established",
			"conn.server-send-exceeds-client-receive, pvtdata.not-at-offset-zero, pvtdata.reader-divergence, pvtdata.reserved-bits-set"}}, ""},
		{"synth-conn-rocev2-reconnect.pcap", Config{}, []want{{"disconnected", ""},
			{"disconnected", "conn.advertised-values-changed"}, {"rejected", "conn.rejected"}}, ""},
		{"synth-conn-rocev2-timeout.pcap", Config{}, []want{{"timed out", "conn.timed-out"}, {"established", ""}}, ""},
		{"synth-conn-rocev2-many.pcap", Config{MaxConnections: 2}, []want{
			{"established", "conn.table-full"}, {"established", "conn.table-full"}, {"established", "conn.table-full"},
			{"established", ""}, {"established", ""}}, ""},
		{"synth-conn-iwarp-traffic.pcap", Config{}, []want{{"disconnected",
			"conn.invalidated-stag-not-offered, conn.send-exceeds-inline, conn.send-inv-not-negotiated"}}, ""},
	}
	summary := func(fs []finding.Finding) string {
		n := map[string]int{}
		for _, f := range fs {
			n[f.Code]++
		}
		var parts []string
		for code, k := range n {
			if k > 1 {
				code += "×" + string(rune('0'+k))
			}
			parts = append(parts, code)
		}
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := testcap.Synthetic(tc.file)
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("%v (make testdata writes it)", err)
			}
			tr := trackFileConfig(t, path, tc.cfg)
			cs := tr.Connections()
			if len(cs) != len(tc.conns) {
				t.Fatalf("%d connections, want %d", len(cs), len(tc.conns))
			}
			for i, w := range tc.conns {
				if got := summary(cs[i].Findings()); cs[i].State.String() != w.state || got != w.codes {
					t.Errorf("connection %d: %s [%s], want %s [%s]", i+1, cs[i].State, got, w.state, w.codes)
				}
			}
			if got := summary(tr.Findings()); got != tc.orphans {
				t.Errorf("outside connections: [%s], want [%s]", got, tc.orphans)
			}
		})
	}
}

// The ibcm generator's CM exchange in every encoding: the transport and the
// peers (IP, GID or LID) come out right, and so do the three exchanges
// (a connection set up and torn down, a rejected one, a SIDR).
func TestEncodings(t *testing.T) {
	for _, tc := range []struct {
		enc, transport, client, server string
	}{
		{"rocev2-ipv4", "rocev2", "192.0.2.2:45046", "192.0.2.1:20049"},
		{"rocev2-ipv6", "rocev2", "[2001:db8::2]:45046", "[2001:db8::1]:20049"},
		{"rocev2-vlan", "rocev2", "192.0.2.2:45046", "192.0.2.1:20049"},
		{"rocev1", "rocev1", "[::ffff:192.0.2.2]:45046", "[::ffff:192.0.2.1]:20049"},
		{"ib247", "ib", "lid 0x0002 port 45046", "lid 0x0001 port 20049"},
		{"ib247-grh", "ib", "lid 0x0002 gid fe80::2 port 45046", "lid 0x0001 gid fe80::1 port 20049"},
		{"erf", "ib", "lid 0x0002 port 45046", "lid 0x0001 port 20049"},
	} {
		t.Run(tc.enc, func(t *testing.T) {
			tr := trackFileConfig(t, testcap.Synthetic("synth-ibcm-"+tc.enc+"-cm-all.pcap"), Config{})
			cs := tr.Connections()
			if len(cs) != 3 {
				t.Fatalf("%d connections", len(cs))
			}
			c := cs[0]
			if c.Transport.String() != tc.transport || c.Client.String() != tc.client || c.Server.String() != tc.server {
				t.Errorf("%s %s → %s", c.Transport, c.Client, c.Server)
			}
			if c.State != StateDisconnected || c.Steps()[1].Message != "MRA" || len(c.Steps()) != 9 {
				t.Errorf("state %s, steps %+v", c.State, c.Steps())
			}
			if cs[1].State != StateRejected || cs[1].RejectReason != 28 || cs[2].Kind != KindSIDR || cs[2].State != StateReplied || cs[2].ServerQPN != 0x2a {
				t.Errorf("%s %d %s %s %#x", cs[1].State, cs[1].RejectReason, cs[2].Kind, cs[2].State, cs[2].ServerQPN)
			}
		})
	}
}

// What the layers notice in a CM frame (here a bad ICRC on a repeated
// REQ) is shown with the connection, at that step.
func TestLayerFindingsAttached(t *testing.T) {
	tr := trackFileConfig(t, testcap.Synthetic("synth-ibcm-rocev2-ipv4-bad-crc.pcap"), Config{})
	c := only(t, tr)
	if len(c.Steps()) != 2 || !c.Steps()[1].Retransmission || !c.hasFindingAt("ibcm.icrc-bad", 2) || c.hasFindingAt("ibcm.icrc-bad", 1) {
		t.Errorf("steps %+v findings %v", c.Steps(), c.Findings())
	}
}
