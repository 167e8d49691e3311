package conn

import (
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

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
