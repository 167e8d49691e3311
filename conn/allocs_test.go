package conn

import (
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// TestRecordNoAllocs: once a connection is set up and its traffic has been
// seen, Record allocates nothing for the Sends, ACKs, RDMA WRITEs and READs
// that follow (the kernel's NFS traffic of the real rxe capture, replayed:
// Sends matched, calls remembered and answered, Send with Invalidate
// findings counted beyond the listed ones). Only the tracker's own
// allocations are counted, around each Record call.
func TestRecordNoAllocs(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := dissect.New(dissect.Options{})
	tr := New(Config{})
	// Set up: everything up to the last traffic frame (the DREQ and DREP
	// stay out, the connection stays established).
	var traffic []*source.Frame
	lastTraffic := 0
	for i := range frames {
		r := d.Dissect(&frames[i])
		if r.Layer("cm") == nil && r.Layer("mad") == nil {
			traffic = append(traffic, &frames[i])
			lastTraffic = i
		}
	}
	d = dissect.New(dissect.Options{})
	for i := 0; i <= lastTraffic; i++ {
		tr.Record(d.Dissect(&frames[i]))
	}
	c := only(t, tr)
	if c.State != StateEstablished || c.ToClient.Sends != 23 || c.ToClient.InvalidateChecked != 4 {
		t.Fatalf("set up: %s, traffic %+v", c.State, c.ToClient)
	}
	// The first replay lists the fifth finding (the values its message
	// names are kept); the later ones only count. Allocations are counted
	// around each replay, Dissect included (the traffic's decoding does
	// not allocate either once warm), not around each record: every count
	// stops the world, and the more stops, the likelier the runtime
	// allocates for itself (runtime.allocm).
	for _, f := range traffic {
		tr.Record(d.Dissect(f))
	}
	const rounds = 5
	allocs, calls := testcap.Allocs(rounds, 3, func() {
		for _, f := range traffic {
			tr.Record(d.Dissect(f))
		}
	})
	replays := 2 + calls // the set-up, the first replay and the counted ones
	if c.ToClient.Sends != replays*23 || c.ToClient.InvalidateChecked != replays*4 || tr.Unmatched != 0 {
		t.Errorf("replayed traffic not matched: %+v, %d unmatched", c.ToClient, tr.Unmatched)
	}
	if fc := c.FindingCount(CodeSendInvTolerated, finding.SeverityWarning); fc == nil || fc.Count != replays*4 || fc.Listed != DefaultMaxFindingsPerCode || c.NumFindings() != fc.Listed {
		t.Errorf("findings %+v, %d listed", c.FindingCounts, len(c.Findings()))
	}
	if allocs != 0 {
		t.Errorf("%d allocations in %d rounds of %d records", allocs, rounds, len(traffic))
	}
	// The DREQ and DREP close it: its Send accumulators and remembered
	// calls go (kept for reuse), so many short connections do not pile
	// them up.
	if len(tr.sends) == 0 || c.pending == nil || cap(c.pending.calls) == 0 {
		t.Fatalf("before DREP: %d accumulators, call table %v", len(tr.sends), c.pending)
	}
	for i := lastTraffic + 1; i < len(frames); i++ {
		tr.Record(d.Dissect(&frames[i]))
	}
	if c.State != StateDisconnected || len(tr.sends) != 0 || len(tr.freeAccs) == 0 || c.pending != nil ||
		len(tr.pendingPool) != 1 {
		t.Errorf("after DREP: %s, %d accumulators (%d free), call table %v (%d tables pooled)",
			c.State, len(tr.sends), len(tr.freeAccs), c.pending, len(tr.pendingPool))
	}
	for _, e := range tr.accCache {
		if e.acc != nil {
			t.Errorf("accumulator of %+v still cached", e.k)
		}
	}
}

// BenchmarkRecord measures the tracker's share of the pipeline on the real
// rxe capture: dissect alone, then dissect plus Tracker.Record (per frame).
func BenchmarkRecord(b *testing.B) {
	frames := testcap.Frames(b, testcap.RXE)
	for _, withTracker := range []bool{false, true} {
		name := "dissect"
		if withTracker {
			name = "dissect+conn"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			d := dissect.New(dissect.Options{})
			tr := New(Config{})
			base := frames[0].Time
			for i := 0; i < b.N; i++ {
				f := frames[i%len(frames)]
				// Keep capture time moving forward across laps.
				f.Time = base.Add(time.Duration(i) * time.Millisecond)
				f.Number = i + 1
				rec := d.Dissect(&f)
				if withTracker {
					tr.Record(rec)
				}
			}
		})
	}
}
