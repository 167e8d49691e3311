package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// statsCodes are the finding codes "stats" lists for a capture, with
// their severities ("rpc.truncated error").
func statsCodes(t *testing.T, path string) map[string]bool {
	t.Helper()
	code, out, errOut := runCmd(t, "stats", path)
	if code != 0 {
		t.Fatalf("stats %s: exit %d: %s", path, code, errOut)
	}
	codes := map[string]bool{}
	_, list, _ := strings.Cut(out, "Findings by code\n")
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			codes[f[0]+" "+f[1]] = true
		}
	}
	return codes
}

// snapCodes are the findings a capture cut by a snap length has that the
// whole capture has not: the frames cut, and the iWARP streams whose PDUs
// are not wholly captured.
var snapCodes = map[string]bool{"dissect.truncated warning": true, "iwarp.not-captured info": true}

var errorFinding = regexp.MustCompile(`(?m)\berror\b`)

// checkSnapCut checks a capture cut by a snap length against the whole
// capture it was cut from (whose finding codes are fullCodes): "check"
// passes (no error finding: running out of captured octets breaks no
// protocol rule) and no finding appears that the whole capture has not,
// but for snapCodes.
func checkSnapCut(t *testing.T, cut string, fullCodes map[string]bool) {
	t.Helper()
	code, out, errOut := runCmd(t, "check", cut)
	if code != 0 || errorFinding.MatchString(out) {
		t.Errorf("check %s: exit %d, want 0:\n%s%s", filepath.Base(cut), code, out, errOut)
	}
	for c := range statsCodes(t, cut) {
		if !fullCodes[c] && !snapCodes[c] {
			t.Errorf("%s: %s, which the whole capture does not have", filepath.Base(cut), c)
		}
	}
}

// TestSnapLengthCaptures: every real capture that "check" passes passes
// cut at each of testcap.SnapLengths, as "tcpdump -s N" or "editcap -s N"
// writes it, with no finding the whole capture has not (tshark: "[Packet
// size limited during capture]", not a malformed packet).
func TestSnapLengthCaptures(t *testing.T) {
	fulls := testcap.Glob(t, "pcaps/real/*.pcap")
	dir := t.TempDir()
	checked := 0
	for _, full := range fulls {
		if code, _, _ := runCmd(t, "check", full); code != 0 {
			continue // a capture whose own findings fail check
		}
		fullCodes := statsCodes(t, full)
		for _, snap := range testcap.SnapLengths {
			name := fmt.Sprintf("%s.s%d.pcap", strings.TrimSuffix(filepath.Base(full), ".pcap"), snap)
			cut := filepath.Join(dir, name)
			frames := testcap.SnapCut(t, full, snap)
			testcap.WritePcap(t, cut, layers.LinkType(frames[0].LinkType), frames)
			checkSnapCut(t, cut, fullCodes)
			checked++
		}
	}
	if checked < 300 {
		t.Errorf("%d cut captures checked: the real captures are missing", checked)
	}
}

// TestTcpdumpSnapLength: the captures tcpdump -s 128 wrote of the real
// ones' frames (testdata/pcaps/converted/PROVENANCE.md).
func TestTcpdumpSnapLength(t *testing.T) {
	for _, name := range []string{"live-rxe4-nfs42", "live-siw4-nfs42"} {
		cut := testcap.Path("pcaps", "converted", name+".tcpdump-s128.pcap")
		checkSnapCut(t, cut, statsCodes(t, testcap.Real(name+".pcap")))
	}
	// The REP's private data is cut after 6 of its 196 octets: what the
	// server advertised, and so the negotiation, is not known (not RFC
	// 8797's defaults, which a server that sent nothing would mean).
	cut := testcap.Path("pcaps", "converted", "live-rxe4-nfs42.tcpdump-s128.pcap")
	_, table, _ := runCmd(t, "conns", cut)
	if strings.Count(table, "not captured") != 2 || strings.Contains(table, "1024") {
		t.Errorf("conns: the REP's private data and the negotiation should be not captured:\n%s", table)
	}
	_, js, _ := runCmd(t, "conns", "--json", cut)
	if !strings.Contains(js, `"negotiated":null`) || !strings.Contains(js, `"uncaptured":true`) || strings.Contains(js, "pvtdata.overrun") {
		t.Errorf("conns --json: a negotiation the capture did not hold:\n%s", js)
	}
}

// TestSnapLengthTshark compares the tcpdump -s 128 captures with tshark.
// On the iWARP one both agree: tshark marks no frame malformed (the cut
// segments are "[Packet size limited during capture]", its BoundsError),
// and no frame has an error finding here. On the RoCEv2 one we differ on
// purpose: tshark 4.0's InfiniBand dissector sizes a RoCEv2 packet from
// the captured octets, finds its "LRH" length wrong and calls every cut
// frame "Invalid Packet Length from LRH! [Malformed Packet]" (a RoCEv2
// packet has no LRH; the packet's own lengths, IP and UDP, are whole). We
// count the packet from its IP length as tshark's own rule for a frame
// cut by the snap length says: a warning that the frame was cut, no error.
func TestSnapLengthTshark(t *testing.T) {
	for _, tc := range []struct {
		name      string
		malformed bool // tshark calls the cut frames malformed
	}{{"live-siw4-nfs42", false}, {"live-rxe4-nfs42", true}} {
		path := testcap.Path("pcaps", "converted", tc.name+".tcpdump-s128.pcap")
		info := testcap.TsharkByFrame(t, path, "", "frame.len", "frame.cap_len", "_ws.col.Info")
		_, out, _ := runCmd(t, "-r", path, "-T", "fields", "-e", "frame.number", "-e", "frame.len", "-e", "frame.cap_len")
		ours := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			ours[line] = true
		}
		code, checkOut, _ := runCmd(t, "check", path)
		if code != 0 {
			t.Errorf("%s: check exit %d:\n%s", tc.name, code, checkOut)
		}
		cut, malformed := 0, 0
		for n, row := range info {
			if !ours[fmt.Sprintf("%d\t%s\t%s", n, row[0], row[1])] {
				t.Errorf("%s frame %d: tshark's lengths %s/%s are not ours", tc.name, n, row[0], row[1])
			}
			if row[0] == row[1] {
				continue
			}
			cut++
			if strings.Contains(row[2], "[Malformed Packet]") {
				malformed++
			}
		}
		if cut == 0 {
			t.Fatalf("%s: no frame cut", tc.name)
		}
		if tc.malformed && malformed == 0 || !tc.malformed && malformed != 0 {
			t.Errorf("%s: tshark calls %d of %d cut frames malformed; this test pins it doing so: %v", tc.name, malformed, cut, tc.malformed)
		}
	}
}
