package dissect

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// ourRDMAPOpcodes runs the Dissector over frames and returns, by frame
// number, the opcodes of the RDMAP messages each frame reports, as tshark
// prints iwarp_rdma.opcode (0x%02x, joined with commas).
func ourRDMAPOpcodes(frames []source.Frame) map[int]string {
	d := New(Options{})
	out := map[int]string{}
	add := func(r *Record) {
		var ops []string
		for _, l := range r.Layers {
			if x, ok := l.(*mpa.RDMAP); ok {
				ops = append(ops, fmt.Sprintf("0x%02x", uint8(x.Opcode)))
			}
		}
		if len(ops) > 0 {
			out[r.Frame] = strings.Join(ops, ",")
		}
	}
	for i := range frames {
		add(d.Dissect(&frames[i]))
	}
	d.Finish(add)
	return out
}

// TestIWARPRDMAPFramesAsTshark: every frame tshark decodes as RDMAP
// (iwarp_rdma) we decode as RDMAP too, with the same opcodes, on every
// iWARP capture of the test data (the real siw ones, their conversions to
// other formats and link types, the synthetic ones) and on copies of the
// real NFSv4.2 capture that lost segments (tshark decodes the segment
// after the hole at once; so must we). Frames we decode and tshark does
// not are allowed: tshark frames FPDUs only from a segment's start, and
// not in a stream whose MPA request it did not see.
func TestIWARPRDMAPFramesAsTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed: the comparison with Wireshark is skipped (apt-get install tshark; .ci/run installs it)")
	}
	var paths []string
	for _, g := range []string{"pcaps/real/*siw*.pcap", "pcaps/converted/*siw*", "pcaps/synthetic/*iwarp*.pcap"} {
		paths = append(paths, testcap.Glob(t, g)...)
	}
	// Damaged copies: the client's Send MSN 4 lost (frame 20); a Write
	// and the Send after it lost (53, 56: the Write at 55 comes after a
	// hole, the retransmission at 57 fills the second one); the server's
	// first reply lost (9), and three segments in a row (24-26).
	nfs := testcap.Frames(t, testcap.Real("live-siw4-nfs42.pcap"))
	dir := t.TempDir()
	for _, drop := range [][]int{{20}, {53, 56}, {9}, {24, 25, 26}} {
		var kept []source.Frame
		for i, f := range nfs {
			if !slices.Contains(drop, i+1) {
				kept = append(kept, f)
			}
		}
		name := fmt.Sprintf("live-siw4-nfs42-without-%s.pcap", strings.Trim(strings.ReplaceAll(fmt.Sprint(drop), " ", "-"), "[]"))
		path := filepath.Join(dir, name)
		testcap.WritePcap(t, path, layers.LinkTypeEthernet, kept)
		paths = append(paths, path)
	}
	if len(paths) < 30 {
		t.Fatalf("only %d iWARP captures", len(paths))
	}
	tsharkFrames := 0
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			theirs := testcap.TsharkByFrame(t, path, "iwarp_rdma", "iwarp_rdma.opcode")
			ours := ourRDMAPOpcodes(testcap.Frames(t, path))
			for n, cols := range theirs {
				tsharkFrames++
				got, ok := ours[n]
				switch {
				case !ok:
					t.Errorf("frame %d: tshark decodes RDMAP (opcode %s), we do not", n, cols[0])
				case got != cols[0]:
					t.Errorf("frame %d: RDMAP opcodes %s, tshark %s", n, got, cols[0])
				}
			}
		})
	}
	if tsharkFrames == 0 {
		t.Fatal("tshark decoded no RDMAP frame at all")
	}
}
