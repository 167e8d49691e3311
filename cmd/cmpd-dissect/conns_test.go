package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// The done-when of issue 7: conns shows the kernel's exchange exactly on
// both real captures.
func TestConnsRealCaptures(t *testing.T) {
	for _, tc := range []struct {
		file, transport, client, server string
		ulpOffset                       float64
		state                           string
		// retransmissions is the TCP retransmissions the capture holds
		// (the frames tshark marks), listed on the connection too.
		retransmissions int
	}{
		{testcap.RXE, "rocev2", "192.0.2.2:45046", "192.0.2.1:20049", 36, "disconnected", 0},
		{testcap.SIW, "iwarp", "198.51.100.2:40313", "198.51.100.1:20049", 4, "disconnected", 4},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			code, out, stderr := runCmd(t, "conns", "--json", tc.file)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 1 {
				t.Fatalf("%d connections:\n%s", len(lines), out)
			}
			var c struct {
				Transport, Client, Server, State string
				ServiceID                        string         `json:"service_id"`
				RequestFrame                     float64        `json:"request_frame"`
				ReplyFrame                       float64        `json:"reply_frame"`
				ClientPD                         map[string]any `json:"client_private_data"`
				ServerPD                         map[string]any `json:"server_private_data"`
				Negotiated                       map[string]any `json:"negotiated"`
				Findings                         []map[string]any
			}
			if err := json.Unmarshal([]byte(lines[0]), &c); err != nil {
				t.Fatal(err)
			}
			if c.Transport != tc.transport || c.Client != tc.client || c.Server != tc.server || c.State != tc.state ||
				c.ServiceID != "0x0000000001064e51" {
				t.Errorf("%+v", c)
			}
			for side, want := range map[string]struct {
				pd     map[string]any
				prefix string
				ulp    float64
				r      bool
			}{
				"client": {c.ClientPD, "f6ab0e1801010303", tc.ulpOffset, true},
				"server": {c.ServerPD, "f6ab0e1801000303", map[bool]float64{true: 0, false: 4}[tc.transport == "rocev2"], false},
			} {
				pd := want.pd
				if hex, _ := pd["hex"].(string); !strings.HasPrefix(hex, want.prefix) || pd["ulp_offset"] != want.ulp ||
					pd["offset"] != 0.0 || pd["version"] != 1.0 || pd["remote_invalidation"] != want.r ||
					pd["send_size"] != 4096.0 || pd["receive_size"] != 4096.0 || pd["valid"] != true {
					t.Errorf("%s private data %v", side, pd)
				}
			}
			if c.Negotiated["client_to_server_inline"] != 4096.0 || c.Negotiated["server_to_client_inline"] != 4096.0 ||
				c.Negotiated["remote_invalidation"] != false {
				t.Errorf("negotiated %v", c.Negotiated)
			}
			n := map[any]int{}
			for _, f := range c.Findings {
				n[f["code"]]++
			}
			if len(c.Findings) != 4+tc.retransmissions || n["conn.send-inv-tolerated"] != 4 ||
				n["transport.tcp-retransmission"] != tc.retransmissions {
				t.Errorf("findings %v", c.Findings)
			}

			code, out, _ = runCmd(t, "conns", tc.file)
			for _, want := range []string{tc.transport, tc.client, tc.server, "NFS/RDMA (rdma_cm TCP port 20049)",
				"v1 R=1 4096/4096", "v1 R=0 4096/4096", "4096/4096 RI=no", fmt.Sprintf("%d warning", 4+tc.retransmissions)} {
				if code != exitOK || !strings.Contains(out, want) {
					t.Errorf("table (exit %d) lacks %q:\n%s", code, want, out)
				}
			}
			code, out, _ = runCmd(t, "conns", "-V", tc.file)
			where := map[string][]string{
				"rocev2": {"92 octets of private data; ULP data at octet 36, after the rdma_cm IP header: f6 ab 0e 18 01 01 03 03 (+48 zero octets); RFC 8797 message at ULP offset 0",
					"196 octets of private data; ULP data at octet 0: f6 ab 0e 18 01 00 03 03 (+188 zero octets); RFC 8797 message at ULP offset 0"},
				"iwarp": {"12 octets of private data; ULP data at octet 4, after the MPA v2 IRD/ORD words 00 80 00 00: f6 ab 0e 18 01 01 03 03; RFC 8797 message at ULP offset 0",
					"12 octets of private data; ULP data at octet 4, after the MPA v2 IRD/ORD words 00 00 00 80: f6 ab 0e 18 01 00 03 03; RFC 8797 message at ULP offset 0"},
			}[tc.transport]
			for _, want := range append(where, "pd: v1 R=1 4096/4096", "pd: v1 R=0 4096/4096", "! frame ",
				"negotiated: client → server inline 4096, server → client inline 4096, remote invalidation no",
				"traffic: client → server 23 Sends") {
				if code != exitOK || !strings.Contains(out, want) {
					t.Errorf("ladder (exit %d) lacks %q:\n%s", code, want, out)
				}
			}
		})
	}
}

func TestConnsUsage(t *testing.T) {
	if code, _, _ := runCmd(t, "conns", "--json", "-V", testcap.RXE); code != exitUsage {
		t.Errorf("--json -V: exit %d", code)
	}
	if code, _, _ := runCmd(t, "conns", "--mode", "psychic", testcap.RXE); code != exitUsage {
		t.Errorf("bad mode: exit %d", code)
	}
	if code, _, stderr := runCmd(t, "conns", "/nonexistent.pcap"); code != exitUsage || stderr == "" {
		t.Errorf("missing file: exit %d %q", code, stderr)
	}
	junk := writeTemp(t, "junk.pcap", []byte("not a capture at all"))
	if code, _, _ := runCmd(t, "conns", junk); code != exitUsage {
		t.Errorf("junk file: exit %d", code)
	}
}

func TestCheckRealCaptures(t *testing.T) {
	for _, tc := range []struct{ capture, expect string }{
		{testcap.RXE, testcap.Path("expect/rxe-nfs42-rdma.yaml")},
		{testcap.SIW, testcap.Path("expect/siw-nfs42-rdma.yaml")},
	} {
		code, out, stderr := runCmd(t, "check", "--expect", tc.expect, tc.capture)
		if code != exitOK || !strings.HasPrefix(out, "PASS: 1 connections, 0 differences") {
			t.Errorf("%s: exit %d\n%s%s", tc.capture, code, out, stderr)
		}
	}
}

// doctor rewrites the server's private data in a copy of the rxe capture:
// R=1 and an 8 KiB Send Size (which also breaks the REP's ICRC).
func doctor(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(testcap.RXE)
	if err != nil {
		t.Fatal(err)
	}
	old := []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03}
	if bytes.Count(data, old) != 1 {
		t.Fatal("the server's private data is not unique in the capture")
	}
	return writeTemp(t, "doctored.pcap", bytes.Replace(data, old, []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x07, 0x03}, 1))
}

func TestCheckDoctored(t *testing.T) {
	path := doctor(t)
	code, out, _ := runCmd(t, "check", "--expect", testcap.Path("expect/rxe-nfs42-rdma.yaml"), path)
	if code != exitFindings {
		t.Errorf("exit %d, want %d", code, exitFindings)
	}
	wantIn(t, "check output", out,
		"- connection 1 (192.0.2.2:45046 → 192.0.2.1:20049): negotiated remote invalidation is true, expected false",
		"finding conn.server-send-exceeds-client-receive not allowed (frame 2)",
		// The REP's bad ICRC (the doctoring broke it) is shown with the
		// connection whose step it is.
		"- connection 1 (192.0.2.2:45046 → 192.0.2.1:20049): finding ibcm.icrc-bad not allowed (frame 2): error ibcm.icrc-bad",
		"FAIL: 1 connections, 3 differences",
	)
	code, out, _ = runCmd(t, "check", "--format", "json", "--expect", testcap.Path("expect/rxe-nfs42-rdma.yaml"), path)
	var res struct {
		Pass        bool
		Differences []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitFindings || res.Pass || len(res.Differences) != 3 {
		t.Errorf("json: exit %d err %v %+v", code, err, res)
	}
	code, out, _ = runCmd(t, "check", "--format", "junit", "--expect", testcap.Path("expect/rxe-nfs42-rdma.yaml"), path)
	if code != exitFindings || !strings.Contains(out, `<testsuite name="cmpd-dissect check `) || !strings.Contains(out, `failures="1"`) {
		t.Errorf("junit: exit %d\n%s", code, out)
	}
}

func TestCheckWriteExpect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pin.yaml")
	if code, _, stderr := runCmd(t, "check", "--write-expect", path, testcap.RXE); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, out, _ := runCmd(t, "check", "--expect", path, testcap.RXE); code != exitOK {
		t.Errorf("pinned capture fails: %s", out)
	}
	if code, _, _ := runCmd(t, "check", "--expect", path, doctor(t)); code != exitFindings {
		t.Errorf("doctored capture passes the pin: exit %d", code)
	}
}

func TestCheckUsage(t *testing.T) {
	bad := writeTemp(t, "bad.yaml", []byte("connections:\n  - stat: established\n"))
	for _, args := range [][]string{
		{"check", "--format", "xml", testcap.RXE},
		{"check", "--expect", bad, testcap.RXE},
		{"check", "--expect", "/nonexistent.yaml", testcap.RXE},
		{"check", "/nonexistent.pcap"},
		{"check", "--expect", bad, "--write-expect", bad, testcap.RXE},
	} {
		if code, _, stderr := runCmd(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestConnsResentSend: a Send whose packet is captured twice (the
// requester sent it again: a duplicate here, as after a lost ACK) is one
// message: conns counts the Sends, Invalidates and credit grants of the
// capture without the copies, and keeps the transport finding on each
// copy. Built from live-rxe4-nfs42.pcap with frames 8 (a call) and 11 (its
// reply, Send with Invalidate) written twice.
func TestConnsResentSend(t *testing.T) {
	orig := filepath.Join(real, "live-rxe4-nfs42.pcap")
	raw, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	dup := append([]byte(nil), raw[:24]...)
	for off, n := 24, 1; off+16 <= len(raw); n++ {
		end := off + 16 + int(binary.LittleEndian.Uint32(raw[off+8:]))
		dup = append(dup, raw[off:end]...)
		if n == 8 || n == 11 {
			dup = append(dup, raw[off:end]...)
		}
		off = end
	}
	dupPath := writeTemp(t, "resent.pcap", dup)
	_, want, _ := runCmd(t, "conns", "-V", orig)
	code, got, stderr := runCmd(t, "conns", "-V", dupPath)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := func(s string) (out []string) {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "traffic:") || strings.Contains(l, "credits:") {
				out = append(out, l)
			}
		}
		return out
	}
	if g, w := lines(got), lines(want); !slices.Equal(g, w) || len(w) != 2 {
		t.Errorf("counts with the resent Sends:\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	wantIn(t, "conns -V", got, "frame 9: warning transport.retransmission", "frame 13: warning transport.retransmission")
	// The real RNR capture: one Send, refused twice by RNR NAK and sent
	// again after each. The synthetic loss capture: of its two resent
	// Sends, one's original was never captured (the first copy seen, a
	// message) and one's was: five messages.
	_, got, _ = runCmd(t, "conns", "-V", filepath.Join(real, "live-rxe4-rnr-nfsnull.pcap"))
	wantIn(t, "conns -V of the RNR capture", got, "traffic: client → server 1 Sends (1 RPC-over-RDMA")
	_, got, _ = runCmd(t, "conns", "-V", filepath.Join(pcaps, "synthetic", "synth-transport-rocev2-loss.pcap"))
	wantIn(t, "conns -V of the loss capture", got, "traffic: client → server 5 Sends (5 RPC-over-RDMA")
}
