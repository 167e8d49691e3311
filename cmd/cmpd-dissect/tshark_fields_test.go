package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// TestTransportFieldsMatchTshark: the transport and frame fields of both
// real captures print exactly as tshark prints its corresponding fields.
func TestTransportFieldsMatchTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed: comparison with Wireshark skipped (apt-get install tshark)")
	}
	for _, tc := range []struct {
		file string
		// ours and tshark's name for each column
		fields [][2]string
	}{
		{testcap.RXE, [][2]string{{"frame.number", "frame.number"}, {"frame.len", "frame.len"}, {"frame.cap_len", "frame.cap_len"},
			{"frame.time_relative", "frame.time_relative"}, {"frame.time_delta", "frame.time_delta"}, {"frame.time_epoch", "frame.time_epoch"},
			{"ethernet.src", "eth.src"}, {"ethernet.dst", "eth.dst"}, {"ethernet.type", "eth.type"},
			{"ipv4.version", "ip.version"}, {"ipv4.hdr_len", "ip.hdr_len"}, {"ipv4.len", "ip.len"}, {"ipv4.id", "ip.id"},
			{"ipv4.flags.df", "ip.flags.df"}, {"ipv4.ttl", "ip.ttl"}, {"ipv4.proto", "ip.proto"}, {"ipv4.checksum", "ip.checksum"},
			{"ipv4.src", "ip.src"}, {"ipv4.dst", "ip.dst"}, {"ipv4.dsfield.dscp", "ip.dsfield.dscp"},
			{"udp.srcport", "udp.srcport"}, {"udp.dstport", "udp.dstport"}, {"udp.length", "udp.length"}, {"udp.checksum", "udp.checksum"}}},
		{testcap.SIW, [][2]string{{"frame.number", "frame.number"}, {"ipv4.src", "ip.src"},
			{"tcp.srcport", "tcp.srcport"}, {"tcp.dstport", "tcp.dstport"}, {"tcp.seq_raw", "tcp.seq_raw"}, {"tcp.ack_raw", "tcp.ack_raw"},
			{"tcp.hdr_len", "tcp.hdr_len"}, {"tcp.flags", "tcp.flags"}, {"tcp.flags.syn", "tcp.flags.syn"}, {"tcp.flags.ack", "tcp.flags.ack"},
			{"tcp.flags.push", "tcp.flags.push"}, {"tcp.window_size_value", "tcp.window_size_value"}, {"tcp.checksum", "tcp.checksum"},
			{"tcp.urgent_pointer", "tcp.urgent_pointer"}, {"tcp.len", "tcp.len"}}},
	} {
		ours := []string{"-r", tc.file, "--all", "-T", "fields"}
		theirs := []string{"-n", "-r", tc.file, "-T", "fields"}
		for _, f := range tc.fields {
			ours = append(ours, "-e", f[0])
			theirs = append(theirs, "-e", f[1])
		}
		code, got, stderr := runCmd(t, ours...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.file, code, stderr)
		}
		out, err := exec.Command("tshark", theirs...).Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		gl, wl := strings.Split(got, "\n"), strings.Split(string(out), "\n")
		if len(gl) != len(wl) {
			t.Fatalf("%s: %d lines, tshark %d", tc.file, len(gl), len(wl))
		}
		values, diffs := 0, 0
		for i := range gl {
			g, w := strings.Split(gl[i], "\t"), strings.Split(wl[i], "\t")
			for k := range w {
				values++
				if k >= len(g) || g[k] != w[k] {
					diffs++
					if diffs < 10 {
						t.Errorf("%s line %d %s: ours %q, tshark %q", tc.file, i+1, tc.fields[k][0], g[min(k, len(g)-1)], w[k])
					}
				}
			}
		}
		t.Logf("%s: %d values compared with tshark, %d differ", tc.file, values, diffs)
	}
}
