package export

import (
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// BenchmarkExportMemory exports a capture as the command does (every
// table, Parquet) and reports the most the live heap held (after a
// collection: /gc/heap/live:bytes, read every 4096 records and at the end
// with the tracker) and the most
// connections the tracker listed at once, with the connections written as
// they are over (handoff) and, for comparison, all at the end (at-end).
// Run it on the bench captures to see both flat in the packets:
//
//	go run ./internal/gen -bench-out /tmp/b.pcap -bench-packets 200000
//	CMPD_BENCH_PCAP=/tmp/b.pcap go test -run='^$' -bench=ExportMemory -benchtime=1x ./export
//
// Without CMPD_BENCH_PCAP it runs on the largest real capture.
func BenchmarkExportMemory(b *testing.B) {
	path := testcap.BenchCapture(b)
	for _, handOff := range []bool{true, false} {
		name := "at-end"
		if handOff {
			name = "handoff"
		}
		b.Run(name, func(b *testing.B) {
			live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var peak uint64
			conns, n := 0, 0
			each := func(t *conn.Tracker) {
				conns = max(conns, len(t.Connections()))
				if n++; n%4096 == 0 {
					metrics.Read(live)
					peak = max(peak, live[0].Value.Uint64())
				}
			}
			for range b.N {
				ex := exportEach(b, Options{Format: Parquet, Dir: b.TempDir()}, path, handOff, each)
				// At the end, with what the tracker still holds.
				runtime.GC()
				metrics.Read(live)
				peak = max(peak, live[0].Value.Uint64())
				runtime.KeepAlive(ex.tracker)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-live-MiB")
			b.ReportMetric(float64(conns), "max-conns")
		})
	}
}
