package conn

import (
	"io"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

func loadFrames(b *testing.B, path string) []source.Frame {
	src, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var out []source.Frame
	for {
		var f source.Frame
		if err := src.Next(&f); err == io.EOF {
			return out
		} else if err != nil {
			b.Fatal(err)
		}
		f.Data = append([]byte(nil), f.Data...)
		out = append(out, f)
	}
}

// BenchmarkRecord measures the tracker's share of the pipeline on the real
// rxe capture: dissect alone, then dissect plus Tracker.Record (per frame).
func BenchmarkRecord(b *testing.B) {
	frames := loadFrames(b, "../testdata/pcaps/real/rxe-nfs42-rdma.pcap")
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
