package conn

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
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
			"conn.invalidated-stag-not-offered, conn.send-exceeds-inline, conn.send-inv-from-requester, conn.send-inv-not-negotiated×3"}}, ""},
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
	summary := func(fs []pvtdata.Finding) string {
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
			path := "../testdata/pcaps/synthetic/" + tc.file
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("%v (make testdata writes it)", err)
			}
			tr := trackFileConfig(t, path, tc.cfg)
			cs := tr.Connections()
			if len(cs) != len(tc.conns) {
				t.Fatalf("%d connections, want %d", len(cs), len(tc.conns))
			}
			for i, w := range tc.conns {
				if got := summary(cs[i].Findings); cs[i].State.String() != w.state || got != w.codes {
					t.Errorf("connection %d: %s [%s], want %s [%s]", i+1, cs[i].State, got, w.state, w.codes)
				}
			}
			if got := summary(tr.Findings()); got != tc.orphans {
				t.Errorf("outside connections: [%s], want [%s]", got, tc.orphans)
			}
		})
	}
}
