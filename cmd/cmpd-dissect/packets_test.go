package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

var (
	synth = testcap.Path("pcaps", "synthetic")
)

// variants writes pcapng, gzip-pcap and gzip-pcapng copies of a capture.
func variants(t *testing.T, path string) map[string]string {
	t.Helper()
	fs, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ng bytes.Buffer
	var w *source.Writer
	var f source.Frame
	for fs.Next(&f) == nil {
		if w == nil {
			if w, err = source.NewWriter(&ng, f.LinkType, "test"); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Write(&f); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	raw, _ := os.ReadFile(path)
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		z := gzip.NewWriter(&buf)
		z.Write(b)
		z.Close()
		return buf.Bytes()
	}
	dir := t.TempDir()
	out := map[string]string{}
	for name, data := range map[string][]byte{"pcapng": ng.Bytes(), "pcap.gz": gz(raw), "pcapng.gz": gz(ng.Bytes())} {
		p := filepath.Join(dir, filepath.Base(path)+"."+name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

// captures lists what every view must read: both real captures, the
// synthetic 247/ERF/RoCEv1/IPv6/VLAN ones, and pcapng and gzip variants.
func captures(t *testing.T) []string {
	files := []string{testcap.RXE, testcap.SIW}
	for _, pat := range []string{"synth-ibcm-ib247-cm-all.pcap", "synth-ibcm-erf-cm-all.pcap", "synth-ibcm-ib247-grh-cm-all.pcap",
		"synth-ibcm-rocev1-cm-all.pcap", "synth-ibcm-rocev2-ipv6-cm-all.pcap", "synth-ibcm-rocev2-vlan-cm-all.pcap",
		"synth-ibcm-rocev2-ipv4-rc-data.pcap"} {
		p := filepath.Join(synth, pat)
		if _, err := os.Stat(p); err == nil {
			files = append(files, p)
		}
	}
	for _, v := range variants(t, testcap.RXE) {
		files = append(files, v)
	}
	for _, v := range variants(t, filepath.Join(synth, "synth-ibcm-erf-cm-all.pcap")) {
		files = append(files, v)
	}
	return files
}

// noControl fails on terminal control characters in text output.
func noControl(t *testing.T, what, s string) {
	t.Helper()
	for i, c := range s {
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			t.Fatalf("%s: control character %U at byte %d", what, c, i)
		}
	}
}

func TestEveryViewOnEveryCapture(t *testing.T) {
	for _, file := range captures(t) {
		name := filepath.Base(file)
		code, sum, stderr := runCmd(t, "-r", file)
		if code != 0 || sum == "" {
			t.Fatalf("%s: default view exit %d, stderr %q", name, code, stderr)
		}
		noControl(t, name+" summary", sum)
		code, all, _ := runCmd(t, "--all", "-r", file)
		nAll := strings.Count(all, "\n")
		if code != 0 || nAll < strings.Count(sum, "\n") {
			t.Fatalf("%s: --all %d lines < default %d", name, nAll, strings.Count(sum, "\n"))
		}
		code, tree, _ := runCmd(t, "-V", "-r", file)
		if code != 0 || !strings.Contains(tree, "Frame 1:") {
			t.Fatalf("%s: -V exit %d", name, code)
		}
		noControl(t, name+" tree", tree)
		code, js, _ := runCmd(t, "-T", "json", "-r", file)
		lines := strings.Split(strings.TrimSuffix(js, "\n"), "\n")
		if code != 0 || len(lines) != nAll {
			t.Fatalf("%s: -T json exit %d, %d lines for %d packets", name, code, len(lines), nAll)
		}
		for i, l := range lines {
			var obj map[string]any
			if !utf8.ValidString(l) || json.Unmarshal([]byte(l), &obj) != nil {
				t.Fatalf("%s: JSON line %d invalid", name, i+1)
			}
		}
		code, flds, _ := runCmd(t, "-T", "fields", "-e", "frame.number", "-e", "frame.protocols", "-r", file)
		if code != 0 || strings.Count(flds, "\n") != nAll || !strings.HasPrefix(flds, "1\t") {
			t.Fatalf("%s: -T fields exit %d: %.100q", name, code, flds)
		}
		code, st, _ := runCmd(t, "stats", file)
		if code != 0 || !strings.Contains(st, fmt.Sprintf("Packets: %d ", nAll)) {
			t.Fatalf("%s: stats exit %d: %.200s", name, code, st)
		}
	}
}

func TestNativeIBContents(t *testing.T) {
	for _, f := range []string{"synth-ibcm-ib247-cm-all.pcap", "synth-ibcm-erf-cm-all.pcap"} {
		code, out, _ := runCmd(t, "-r", filepath.Join(synth, f), "-T", "fields", "-e", "lrh.slid", "-e", "bth.icrc.status", "-e", "cm.attribute_id", "-Y", "cm.attribute_id == REQ")
		if code != 0 || out == "" {
			t.Fatalf("%s: exit %d, %q", f, code, out)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			cols := strings.Split(l, "\t")
			if len(cols) != 3 || cols[0] == "" || cols[2] != "0x0010" {
				t.Errorf("%s: line %q", f, l)
			}
		}
		code, sum, _ := runCmd(t, "-r", filepath.Join(synth, f), "-c", "3")
		if code != 0 || !strings.Contains(sum, "LID ") {
			t.Errorf("%s: summary lacks LIDs: %s", f, sum)
		}
	}
}

func TestRealSummaryAndFilters(t *testing.T) {
	code, out, _ := runCmd(t, "-r", testcap.RXE, "-Y", "cm")
	if code != 0 || strings.Count(out, "\n") != 5 || !strings.Contains(out, "CM REQ") || !strings.Contains(out, "192.0.2.2") {
		t.Fatalf("-Y cm: %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "-r", testcap.RXE, "-T", "fields", "-E", "header=y", "-e", "frame.number", "-e", "pvtdata.send_size", "-e", "pvtdata.remote_invalidation",
		"-Y", "pvtdata.found == true")
	if code != 0 || out != "frame.number\tpvtdata.send_size\tpvtdata.remote_invalidation\n1\t4096\t1\n2\t4096\t0\n" {
		t.Fatalf("RFC 8797 fields: %d %q", code, out)
	}
	code, out, _ = runCmd(t, "-r", testcap.RXE, "-r", testcap.SIW, "-T", "fields", "-e", "frame.number", "-Y", "frame.number == 110")
	if code != 0 || out != "110\n" {
		t.Fatalf("two files numbering: %q", out)
	}
	code, _, stderr := runCmd(t, "-r", testcap.RXE, "-Y", "bth.opcode == ")
	if code != 2 || !strings.Contains(stderr, "at column 15") || !strings.Contains(stderr, "\n  bth.opcode == \n"+strings.Repeat(" ", 2+14)+"^") {
		t.Fatalf("bad filter: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "-r", testcap.RXE, "-T", "fields", "-e", "no.such")
	if code != 2 || !strings.Contains(stderr, "no such field") {
		t.Fatalf("bad -e: exit %d %q", code, stderr)
	}
	code, out, _ = runCmd(t, "fields", "frame.")
	if code != 0 || !strings.HasPrefix(out, "P\tframe\t") || !strings.Contains(out, "F\tframe.number\tuint\t") {
		t.Fatalf("fields: %q", out)
	}
	code, out, _ = runCmd(t, "stats", "--json", testcap.RXE)
	var st struct {
		Packets int                       `json:"packets"`
		ByValue map[string]map[string]int `json:"by_value"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Packets != 109 || st.ByValue["cm.attribute_id"]["REQ"] != 1 ||
		st.ByValue["rpcrdma.msg_type"]["RDMA_MSG"] != 42 || st.ByValue["rpcrdma.msg_type"]["RDMA_NOMSG"] != 4 {
		t.Fatalf("stats --json: %d %s", code, out)
	}
}

func TestStdinDamagedAndWrite(t *testing.T) {
	raw, err := os.ReadFile(testcap.RXE)
	if err != nil {
		t.Fatal(err)
	}
	// stdin, gzip.
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write(raw)
	z.Close()
	code, out, _ := runStdin(t, bytes.NewReader(gz.Bytes()), "-r", "-", "--all")
	if code != 0 || strings.Count(out, "\n") != 109 {
		t.Fatalf("stdin: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
	// A damaged file header: exit 2 naming the file.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pcap")
	os.WriteFile(bad, []byte("this is not a capture"), 0o644)
	code, _, stderr := runCmd(t, "-r", bad)
	if code != 2 || !strings.Contains(stderr, "bad.pcap") {
		t.Fatalf("bad header: exit %d %q", code, stderr)
	}
	// A file cut inside its last record: the good frames, then the finding.
	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, raw[:len(raw)-30], 0o644)
	code, out, _ = runCmd(t, "-r", cut, "--all", "--check")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 109 || !strings.Contains(lines[108], "source.record-damaged") || !strings.Contains(lines[107], " 108 ") && !strings.HasPrefix(strings.TrimSpace(lines[107]), "108 ") {
		t.Fatalf("cut file: exit %d, %d lines, last %q", code, len(lines), lines[len(lines)-1])
	}
	code, out, _ = runCmd(t, "-r", cut, "-V", "-Y", "frame.number == 109")
	if code != 0 || !strings.Contains(out, "cut.pcap: frame 109: record at offset") {
		t.Fatalf("cut file tree: %s", out)
	}
	// -w writes what passes -Y as pcapng, readable again.
	w := filepath.Join(dir, "out.pcapng")
	code, _, stderr = runCmd(t, "-r", testcap.RXE, "-Y", "cm", "-w", w)
	if code != 0 {
		t.Fatalf("-w: %d %s", code, stderr)
	}
	f, err := source.Open(w, nil)
	if err != nil || f.Format() != source.FormatPcapNG {
		t.Fatalf("-w output: %v", err)
	}
	f.Close()
	code, out, _ = runCmd(t, "-r", w, "-T", "fields", "-e", "cm.attribute_id")
	if code != 0 || out != "0x0010\n0x0013\n0x0014\n0x0015\n0x0016\n" {
		t.Fatalf("-w round trip: %q", out)
	}
	// Usage errors.
	for _, args := range [][]string{{}, {"-r", testcap.RXE, "-T", "xml"}, {"-r", testcap.RXE, "-e", "frame.number"}, {"-r", testcap.RXE, "-f", "tcp"}, {"-r", testcap.RXE, "--color", "sometimes"}} {
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestColor(t *testing.T) {
	_, out, _ := runCmd(t, "-r", testcap.RXE, "--color=always", "-c", "3")
	if !strings.Contains(out, "\x1b[") {
		t.Error("--color=always: no colour")
	}
	_, out, _ = runCmd(t, "-r", testcap.RXE, "-c", "3")
	if strings.Contains(out, "\x1b[") {
		t.Error("colour on a pipe")
	}
}

func TestHelpAndCompletion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"stats", "--help"}, {"fields", "--help"}} {
		code, out, _ := runCmd(t, args...)
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%v: exit %d, no examples", args, code)
		}
	}
	code, out, _ := runCmd(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion: %d", code)
	}
	code, out, _ = runCmd(t, "__complete", "-e", "frame.num")
	if code != 0 || !strings.Contains(out, "frame.number") {
		t.Errorf("-e completion: %q", out)
	}
}

// TestLiveLoopback captures a few UDP packets sent to 127.0.0.1:4791.
func TestLiveLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW): skipped")
	}
	dir := t.TempDir()
	w := filepath.Join(dir, "live.pcapng")
	done := make(chan struct{})
	// Traffic the filter must reject flows before and while the capture
	// opens: packets queued by the socket before its filter is attached
	// must not leak through (libpcap drains them; so must we).
	other, _ := net.Dial("udp", "127.0.0.1:4792")
	defer other.Close()
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				other.Write([]byte("not this one"))
				time.Sleep(time.Millisecond)
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	var code int
	var out, stderr string
	go func() {
		code, out, stderr = runCmd(t, "-i", "lo", "-f", "udp port 4791", "-c", "3", "-a", "duration:10",
			"--all", "-T", "fields", "-e", "udp.dstport", "-e", "ipv4.dst", "-w", w)
		close(done)
	}()
	// Send until the capture has its three packets.
	conn, err := net.Dial("udp", "127.0.0.1:4791")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			conn.Write([]byte("hello rdma"))
		}
	}
	if code != 0 {
		t.Fatalf("live: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("live: %d lines: %q", len(lines), out)
	}
	for _, l := range lines {
		if l != "4791\t127.0.0.1" {
			t.Errorf("live line %q", l)
		}
	}
	code, out, _ = runCmd(t, "-r", w, "--all", "-T", "fields", "-e", "udp.dstport")
	if code != 0 || out != "4791\n4791\n4791\n" {
		t.Fatalf("-w of live capture: %d %q", code, out)
	}
	// Errors that must be clear.
	code, _, stderr = runCmd(t, "-i", "no-such-if0", "-c", "1")
	if code != 2 || !strings.Contains(stderr, "no such interface") {
		t.Errorf("missing interface: %d %q", code, stderr)
	}
}
