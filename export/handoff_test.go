package export

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
)

// TestExportHandOffSameRows: writing each connection as soon as it is over
// (Capture.HandOff, with the shortest linger: one connection) gives the
// same rows, in every table, as writing them all at the end, on every real
// and synthetic capture; only the order of the rows differs.
func TestExportHandOffSameRows(t *testing.T) {
	var paths []string
	for _, dir := range []string{"real", "synthetic"} {
		m, err := filepath.Glob(testcap.Path("pcaps", dir, "*.pcap*"))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 50 {
		t.Fatalf("%d captures found", len(paths))
	}
	handed := 0
	for _, path := range paths {
		atEnd, asTheyEnd := t.TempDir(), t.TempDir()
		exportFileHandOff(t, Options{Format: NDJSON, Dir: atEnd, Packets: true}, path, false)
		ex := exportFileHandOff(t, Options{Format: NDJSON, Dir: asTheyEnd, Packets: true, Linger: 1}, path, true)
		for _, table := range []string{TableConnections, TableQueuePairs, TableFindings, TableRPC, TablePackets} {
			want, got := docs(t, atEnd, table, path), docs(t, asTheyEnd, table, path)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Errorf("%s %s: %d rows, want %d; first difference:\n got %s\nwant %s", filepath.Base(path), table, len(got), len(want), got[i], want[i])
						break
					}
				}
				if len(got) != len(want) {
					t.Errorf("%s %s: %d rows, want %d", filepath.Base(path), table, len(got), len(want))
				}
			}
		}
		handed += ex.handed
	}
	// The captures with several connections ended hand some off.
	t.Logf("%d handed off", handed)
	if handed == 0 {
		t.Error("no connection was handed off before the end of its capture")
	}
}

// docs returns the documents of the NDJSON file of table.
func docs(t *testing.T, dir, table, path string) []string {
	t.Helper()
	var out []string
	for _, d := range readNDJSON[json.RawMessage](t, filepath.Join(dir, table, "capture="+CaptureName(path), "part-0.ndjson"), table) {
		out = append(out, string(d))
	}
	return out
}

// TestExportHandOffBounded: with the connections written as they end, what
// the export and the tracker hold does not grow with the connections of a
// capture. The real NFSv3 capture (one connection: set up, used, torn
// down) is fed again and again, frames renumbered (each REQ after the
// previous DREP is a new connection); at no record may the tracker list
// more than the lingering connections and the open one, the transport
// analysis keep more summaries, or the export more index keys or calls,
// than after the first rounds; every connection and its two queue pairs are written.
func TestExportHandOffBounded(t *testing.T) {
	const (
		linger = 3
		rounds = 300
	)
	frames := testcap.Frames(t, testcap.Real("live-rxe4-nfs3.pcap"))
	c, err := NewCapture(Options{Format: Parquet, Dir: t.TempDir(), Linger: linger}, "bounded")
	if err != nil {
		t.Fatal(err)
	}
	d := dissect.New(dissect.Options{})
	tr := conn.New(conn.Config{})
	qps := transport.New(transport.Config{})
	c.HandOff(tr, qps)
	n := 0
	maxConns, maxSummaries, maxKeys, maxSteps := 0, 0, 0, 0
	var early [4]int
	for r := range rounds {
		for i := range frames {
			f := frames[i]
			n++
			f.Number = n
			rec := d.Dissect(&f)
			qps.Record(rec)
			tr.Record(rec)
			if err := c.Record(rec, tr); err != nil {
				t.Fatal(err)
			}
			maxConns = max(maxConns, len(tr.Connections()))
			maxSummaries = max(maxSummaries, len(qps.Summaries()))
			maxKeys = max(maxKeys, len(c.index.keys)+len(c.index.commIDs)+len(c.index.waiting))
			maxSteps = max(maxSteps, len(c.stepFindings)+len(c.calls.pending))
		}
		if r == 2*linger {
			early = [4]int{maxConns, maxSummaries, maxKeys, maxSteps}
		}
	}
	if maxConns > linger+1 {
		t.Errorf("the tracker listed up to %d connections at once, want at most %d (lingering and open)", maxConns, linger+1)
	}
	if now := [4]int{maxConns, maxSummaries, maxKeys, maxSteps}; now != early {
		t.Errorf("connections, queue pair summaries, index keys, CM frame findings and calls awaiting their reply held at most: %v after %d rounds, %v after %d", early, 2*linger+1, now, rounds)
	}
	d.Finish(func(rec *dissect.Record) {
		qps.Record(rec)
		tr.Record(rec)
		if err := c.Record(rec, tr); err != nil {
			t.Fatal(err)
		}
	})
	tr.Finish()
	tr.AttachTransport(qps)
	if err := c.Finish(tr); err != nil {
		t.Fatal(err)
	}
	rows := c.Rows()
	if rows[TableConnections] != rounds || rows[TableQueuePairs] != 2*rounds {
		t.Errorf("%d connection rows, %d queue pair rows; want %d and %d", rows[TableConnections], rows[TableQueuePairs], rounds, 2*rounds)
	}
}
