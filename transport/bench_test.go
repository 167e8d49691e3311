package transport

import (
	"os"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// BenchmarkRecord measures the analysis alone on a capture's records
// (BENCH_PCAP, default the real rxe NFSv4.2 capture): each frame is
// dissected outside the timer's share that matters, by subtracting the
// "dissect" sub-benchmark from "dissect+transport".
func BenchmarkRecord(b *testing.B) {
	file := os.Getenv("BENCH_PCAP")
	if file == "" {
		file = realNFS42
	}
	frames := testcap.Frames(b, file)
	for _, withAnalysis := range []bool{false, true} {
		name := "dissect"
		if withAnalysis {
			name = "dissect+transport"
		}
		b.Run(name, func(b *testing.B) {
			d := dissect.New(dissect.Options{})
			a := New(Config{})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%len(frames) == 0 {
					// Each pass is a new capture: the same PSNs again
					// would be retransmissions.
					d, a = dissect.New(dissect.Options{}), New(Config{})
				}
				f := &frames[i%len(frames)]
				rec := d.Dissect(f)
				if withAnalysis {
					a.Record(rec)
				}
			}
		})
	}
}
