package transport

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// The captures the tests read.
var (
	realNFS42 = testcap.Real("live-rxe4-nfs42.pcap")
	realDir   = testcap.Path("pcaps", "real") + "/"
	synthDir  = testcap.Path("pcaps", "synthetic") + "/"
)

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
