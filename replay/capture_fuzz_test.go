package replay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// FuzzExtractorFrame feeds arbitrary frames (seeded with every frame of the
// real captures) to the connection extractor: it must never panic, and
// every connection it reports must be internally consistent.
func FuzzExtractorFrame(f *testing.F) {
	caps := testcap.Glob(f, "pcaps/real/*.pcap")
	for _, c := range caps {
		data := testcap.Data(f, c)
		for _, d := range data[:min(12, len(data))] {
			f.Add(d, d)
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var x extractor
		x.frame(1, a)
		x.frame(2, b)
		x.frame(3, a)
		for i, c := range x.conns {
			if c.N != i+1 || c.RequestFrame == 0 || c.ReplyFrame != 0 && c.ReplyFrame <= 0 {
				t.Fatalf("inconsistent connection %+v", c)
			}
			if c.Transport == "rocev2" && len(c.ClientPrivateData) != reqPDLen-cmaHeaderLen {
				t.Fatalf("RoCE client private data of %d octets", len(c.ClientPrivateData))
			}
		}
	})
}

// TestConnectionsDamagedFile: a truncated capture yields what its good
// frames held, and a missing file is an error.
func TestConnectionsDamagedFile(t *testing.T) {
	b, err := os.ReadFile(testcap.Real("live-rxe4-rfc8797.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.pcap")
	// Keep the file header, the REQ and half of the REP.
	if err := os.WriteFile(p, b[:24+16+322+100], 0o644); err != nil {
		t.Fatal(err)
	}
	conns, err := Connections(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(conns) != 1 || conns[0].ReplyFrame != 0 || conns[0].ServerPrivateData != nil {
		t.Errorf("got %+v, want the REQ alone", conns)
	}
	if _, err := Connections(filepath.Join(t.TempDir(), "missing.pcap")); err == nil {
		t.Error("no error for a missing file")
	}
	if _, err := FromCapture(testcap.Real("live-rxe4-rfc8797.pcap"), 2); err == nil {
		t.Error("no error for connection 2 of a one-connection capture")
	}
}
