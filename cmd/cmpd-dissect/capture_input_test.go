package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap/converted"
)

var (
	pcaps        = filepath.Join("..", "..", "testdata", "pcaps")
	convertedDir = filepath.Join(pcaps, "converted")
	real         = filepath.Join(pcaps, "real")
)

// frameLevel matches what a conversion may change: the packet comments
// editcap added (tree, JSON).
var frameLevel = regexp.MustCompile(`(?m)^\s*Comment: .*\[frame\.comment\]\n|,"frame\.comment":"[^"]*"`)

// TestConvertedCaptures: every capture Wireshark's tools wrote from a real
// pcap (testdata/pcaps/converted/PROVENANCE.md) decodes in every view as
// the pcap it was made from, and check passes on it. dumpcap's captures of
// a replay have new timestamps: for them the views without times.
func TestConvertedCaptures(t *testing.T) {
	timed := [][]string{{"-r"}, {"-r", "-V"}, {"-r", "-T", "json"}, {"conns", "--json"}, {"conns", "-V"}}
	untimed := [][]string{{"-r", "-T", "fields", "-e", "frame.number", "-e", "cm.attribute_id", "-e", "mpa.frame_type", "-e", "pvtdata.send_size", "-e", "rpcrdma.xid"},
		{"conns"}, {"stats"}, {"check"}}
	for _, tc := range converted.Captures {
		if len(tc.From) == 0 {
			continue // with no files the command reads its standard input
		}
		conv := filepath.Join(convertedDir, tc.File)
		var orig []string
		for _, f := range tc.From {
			orig = append(orig, filepath.Join(pcaps, f))
		}
		views := untimed
		if tc.SameTime {
			views = append(append([][]string(nil), untimed...), timed...)
		}
		for _, v := range views {
			if len(orig) > 1 && len(v) == 1 && v[0] == "conns" {
				// The table of several files has a File column.
				continue
			}
			args := func(files []string) []string {
				a := append([]string(nil), v...)
				if a[0] == "-r" {
					a = a[1:]
					for _, f := range files {
						a = append(a, "-r", f)
					}
					return a
				}
				return append(a, files...)
			}
			codeC, outC, errC := runCmd(t, args([]string{conv})...)
			codeO, outO, errO := runCmd(t, args(orig)...)
			for _, o := range orig {
				outO = strings.ReplaceAll(outO, o, conv)
				errO = strings.ReplaceAll(errO, o, conv)
			}
			outC = frameLevel.ReplaceAllString(outC, "")
			if v[0] == "stats" {
				// The capture's own interface counts (dumpcap).
				outC, _, _ = strings.Cut(outC, "\nCapture statistics by interface")
			}
			if codeC != codeO || outC != outO || errC != errO {
				t.Errorf("%s %v: exit %d, want %d (as %v)\n%s\n--- want\n%s\nstderr %q, want %q", tc.File, v, codeC, codeO, tc.From, outC, outO, errC, errO)
			}
			if v[0] == "check" && codeC != 0 {
				t.Errorf("%s: check exit %d:\n%s", tc.File, codeC, outC)
			}
		}
	}
	// dumpcap's empty capture: no packet, no finding.
	empty := filepath.Join(convertedDir, "empty.dumpcap-lo.pcapng")
	if code, out, stderr := runCmd(t, "check", empty); code != 0 || stderr != "" {
		t.Fatalf("empty: check exit %d %q %q", code, out, stderr)
	}
	// Comments in the tree and JSON.
	comments := filepath.Join(convertedDir, "live-rxe4-reconnect.comments.pcapng")
	if _, out, _ := runCmd(t, "-r", comments, "-V", "-Y", "frame.comment"); strings.Count(out, "[frame.comment]") != 2 || !strings.Contains(out, "Comment: a comment on frame 3  [frame.comment]") {
		t.Fatalf("comments in -V:\n%s", out)
	}
	if _, out, _ := runCmd(t, "-r", comments, "-T", "json", "-Y", "frame.number == 5"); !strings.Contains(out, `"frame.comment":"second comment"`) {
		t.Fatalf("comment in JSON:\n%s", out)
	}
}

// TestCaptureDrops: a pcapng whose Interface Statistics Block counts drops
// (dumpcap's, the count set to 7): stats lists them, every view warns.
func TestCaptureDrops(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(convertedDir, "live-rxe4-rfc8797.dumpcap-lo.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	// isb_ifdrop: option 5, length 8.
	i := bytes.Index(raw, []byte{5, 0, 8, 0})
	if i < 0 {
		t.Fatal("no isb_ifdrop in dumpcap's capture")
	}
	binary.LittleEndian.PutUint64(raw[i+4:], 7)
	path := writeTemp(t, "drops.pcapng", raw)
	want := "capture dropped 7 packets on interface lo"
	code, out, stderr := runCmd(t, "stats", path)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(stderr, want+" ("+path+")") {
		t.Fatalf("stats: exit %d\n%s\nstderr %q", code, out, stderr)
	}
	if _, out, _ := runCmd(t, "stats", "--json", path); !strings.Contains(out, `"dropped":7`) || !strings.Contains(out, `"lost":7`) {
		t.Fatalf("stats --json: %s", out)
	}
	for _, v := range [][]string{{"-r", path}, {"conns", path}, {"check", path}} {
		if code, _, stderr := runCmd(t, v...); code != 0 || strings.Count(stderr, want) != 1 {
			t.Fatalf("%v: exit %d, stderr %q", v, code, stderr)
		}
	}
}

// TestCutCapture: a capture cut inside a packet (a full disk, Ctrl-C while
// writing): the good frames, one warning on stderr naming the file, the
// frame and the offset, the damaged record's real facts, and the
// connections read before it.
func TestCutCapture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(real, "live-rxe4-reconnect.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cut  int
		want string // in -V
	}{
		{"mid-packet.pcap", len(raw) - 50, "Frame 10: 322 bytes on wire, 322 captured"},
		{"mid-header.pcap", 3080, "Link Type: 1 (Ethernet)"},
	} {
		path := filepath.Join(dir, tc.name)
		os.WriteFile(path, raw[:tc.cut], 0o644)
		code, out, stderr := runCmd(t, "-r", path)
		if code != 0 || strings.Count(out, "\n") != 10 || !strings.Contains(out, "source.record-damaged") {
			t.Fatalf("%s: exit %d\n%s", tc.name, code, out)
		}
		if last := out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:]; tc.name == "mid-header.pcap" && strings.Contains(last, "0.000000") {
			t.Fatalf("%s: a time shown for a record without one: %q", tc.name, last)
		}
		want := "cmpd-dissect: warning: " + path + " appears to have been cut short in the middle of a packet (frame 10, at byte offset 3066: "
		if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) {
			t.Fatalf("%s: stderr %q, want one line starting %q", tc.name, stderr, want)
		}
		for _, v := range [][]string{{"-V"}, {"-T", "json"}} {
			_, out, _ = runCmd(t, append([]string{"-r", path, "-Y", "frame.number == 10"}, v...)...)
			for _, bad := range []string{"-6795364578", "18446744073709551615", "0001-01-01", "-1 bytes"} {
				if strings.Contains(out, bad) {
					t.Fatalf("%s %v: zero value %q shown:\n%s", tc.name, v, bad, out)
				}
			}
			if v[0] == "-V" && !strings.Contains(out, tc.want) {
				t.Fatalf("%s: -V lacks %q:\n%s", tc.name, tc.want, out)
			}
		}
		_, out, stderr = runCmd(t, "conns", path)
		// The second connection's DREQ is the last frame before the cut:
		// its teardown was under way when the capture ended.
		if !strings.Contains(out, "192.0.2.1:44181") || !strings.Contains(out, "192.0.2.1:33433") || !strings.Contains(out, "disconnecting (capture ended)") ||
			strings.Contains(out, "timed out") || strings.Count(stderr, "cut short") != 1 {
			t.Fatalf("%s: conns\n%s\nstderr %q", tc.name, out, stderr)
		}
	}
}

// lineWriter collects output and signals each write.
type lineWriter struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestPipeOutputPerPacket: from a pipe (tcpdump -w - | cmpd-dissect -r -),
// a packet's line is written when the packet has arrived, while the writer
// still holds the pipe open, not at 512 packets or the end of input; the
// same with -l, and for -T json.
func TestPipeOutputPerPacket(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(real, "live-rxe4-rfc8797.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	first := 24 + 16 + int(binary.LittleEndian.Uint32(raw[24+8:]))
	for _, args := range [][]string{{"-r", "-"}, {"-r", "-", "-l"}, {"-r", "-", "-T", "json"}} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		out := &lineWriter{wrote: make(chan struct{}, 1)}
		done := make(chan int)
		go func() { done <- run(args, pr, out, io.Discard) }()
		start := time.Now()
		if _, err := pw.Write(raw[:first]); err != nil {
			t.Fatal(err)
		}
		select {
		case <-out.wrote:
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: nothing written 5 s after the packet", args)
		}
		if !strings.Contains(out.String(), "CM REQ") && !strings.Contains(out.String(), `"frame":1`) {
			t.Fatalf("%v: wrote %q", args, out.String())
		}
		t.Logf("%v: first packet's output after %v", args, time.Since(start))
		pw.Write(raw[first:])
		pw.Close()
		if code := <-done; code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		pr.Close()
	}
}

// TestLiveOutputPerPacket: a live capture writes a packet's line soon after
// the packet arrives (about 60 ms by design: the ring's block timeout and
// the poll timeout), not when the capture ends. The wait for a line is
// generous (a loaded CI machine), but the capture lasts until four packets
// (more than the waits send: the rest follow the first line) or far longer
// than all the waits, so a line written only at its end still fails.
func TestLiveOutputPerPacket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW): skipped")
	}
	out := &lineWriter{wrote: make(chan struct{}, 1)}
	done := make(chan int)
	go func() {
		done <- run([]string{"-i", "lo", "-f", "udp port 4791", "--all", "-a", "packets:4", "-a", "duration:12"}, nil, out, io.Discard)
	}()
	// Unconnected: a connected socket's next write fails after the ICMP
	// port unreachable that the first packet draws.
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4791}
	// Send every 2.5 s until a line comes (the first packet may go out
	// before the capture has started): each wait starts at a send, and all
	// of them end long before the capture does.
	for i := 0; ; i++ {
		if i == 3 {
			t.Fatal("no line within 2.5 s of any of 3 packets")
		}
		sent := time.Now()
		c.WriteTo([]byte("hello rdma"), to)
		select {
		case <-out.wrote:
			t.Logf("line %v after the packet", time.Since(sent))
		case <-time.After(2500 * time.Millisecond):
			continue
		}
		break
	}
	for i := 0; i < 4; i++ {
		c.WriteTo([]byte("packets that end the capture"), to)
	}
	if code := <-done; code != 0 || !strings.Contains(out.String(), "4791") {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
}

// TestCaptureFramesAsTshark: every converted capture (PROVENANCE.md: other
// tools' layouts, both byte orders, several sections, odd timestamp
// resolutions, FCS octets, an original length under the captured one)
// has tshark's frames: the same count, times, lengths and captured
// lengths; tshark finds in each frame the protocols it finds in the
// capture it was made from; and the captures whose lengths differ from
// that one still decode to its RDMA fields.
func TestCaptureFramesAsTshark(t *testing.T) {
	frameFields := []string{"frame.number", "frame.time_epoch", "frame.len", "frame.cap_len"}
	rdmaFields := []string{"-T", "fields", "-e", "frame.number", "-e", "cm.attribute_id", "-e", "cm.req.localcommid", "-e", "pvtdata.send_size",
		"-e", "mpa.frame_type", "-e", "mpa.pdlength", "-e", "bth.icrc", "-e", "rpcrdma.xid"}
	for _, tc := range append(append([]converted.Capture(nil), converted.Captures...), converted.Reshaped...) {
		conv := filepath.Join(convertedDir, tc.File)
		args := []string{"-r", conv, "--all", "-T", "fields"}
		for _, f := range frameFields {
			args = append(args, "-e", f)
		}
		code, out, stderr := runCmd(t, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", tc.File, code, stderr)
		}
		var want strings.Builder
		for _, row := range testcap.TsharkFields(t, conv, "", frameFields...) {
			want.WriteString(strings.Join(row, "\t") + "\n")
		}
		if out != want.String() {
			t.Errorf("%s: frames\n%s--- tshark\n%s", tc.File, out, want.String())
		}
		if len(tc.From) != 1 {
			continue
		}
		orig := filepath.Join(pcaps, tc.From[0])
		protos := func(path string) [][]string { return testcap.TsharkFields(t, path, "", "frame.protocols") }
		if g, w := protos(conv), protos(orig); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: tshark's protocols %q, in the original %q", tc.File, g, w)
		}
		_, got, _ := runCmd(t, append([]string{"-r", conv}, rdmaFields...)...)
		_, fromOrig, _ := runCmd(t, append([]string{"-r", orig}, rdmaFields...)...)
		if got != fromOrig || !strings.Contains(got, "\t") {
			t.Errorf("%s: RDMA fields\n%s--- in the original\n%s", tc.File, got, fromOrig)
		}
	}
}
