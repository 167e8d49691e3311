package transport

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

const (
	realNFS42 = "../testdata/pcaps/real/live-rxe4-nfs42.pcap"
	realSIW42 = "../testdata/pcaps/real/live-siw4-nfs42.pcap"
	synthDir  = "../testdata/pcaps/synthetic/"
)

// readFrames reads every frame of a capture, each with its own copy of the
// bytes.
func readFrames(t testing.TB, name string) []source.Frame {
	t.Helper()
	fs, err := source.OpenFiles([]string{name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	var out []source.Frame
	var f source.Frame
	for fs.Next(&f) == nil {
		c := f
		c.Data = append([]byte(nil), f.Data...)
		out = append(out, c)
	}
	return out
}

// analyse dissects frames in order through an Analyzer and returns the
// transport findings it added, and the Analyzer.
func analyse(t testing.TB, frames []source.Frame) ([]finding.Finding, *Analyzer) {
	t.Helper()
	d := dissect.New(dissect.Options{})
	a := New(Config{})
	var out []finding.Finding
	for i := range frames {
		frames[i].Number = i + 1
		rec := d.Dissect(&frames[i])
		n := len(rec.Findings)
		a.Record(rec)
		out = append(out, rec.Findings[n:]...)
	}
	return out, a
}
