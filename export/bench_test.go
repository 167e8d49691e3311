package export

import (
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// earlyRecords is where BenchmarkExportMemory takes the live heap it
// compares the rest of the capture with: the first 200k records (the
// small bench capture).
const earlyRecords = 200_000

// exportGrowthMargin is how much more live heap the Parquet writers may
// hold after earlyRecords than before (beyond what NDJSON, which buffers
// nothing but a 64 KiB writer per table, gains on the same capture: the
// dissector's, the transport analysis' and the tracker's state).
const exportGrowthMargin = 3 << 20

// BenchmarkExportMemory exports a capture as the command does (every
// table, packets included), the connections written as they are over
// (handoff), as Parquet and as NDJSON, and, for comparison, Parquet with
// the connections written at the end (at-end). It reports the most the
// live heap held (after a collection: /gc/heap/live:bytes, read every 4096
// records and at the end with the tracker) in the first earlyRecords
// records and in all, and the most connections the tracker listed at
// once. Run it on the bench captures to see the export flat in the
// packets and the connections:
//
//	go run ./internal/gen -bench-out /tmp/b.pcap -bench-packets 2000000
//	CMPD_BENCH_PCAP=/tmp/b.pcap go test -run='^$' -bench=ExportMemory -benchtime=1x ./export
//
// On a capture of more than earlyRecords records it fails when the Parquet
// writers' share of the live heap grows after them by more than
// exportGrowthMargin. Without CMPD_BENCH_PCAP it runs on the largest real
// capture.
func BenchmarkExportMemory(b *testing.B) {
	path := testcap.BenchCapture(b)
	type run struct {
		name    string
		format  Format
		handOff bool
	}
	growth := map[Format]float64{}
	records := 0
	for _, r := range []run{{"handoff", Parquet, true}, {"ndjson", NDJSON, true}, {"at-end", Parquet, false}} {
		b.Run(r.name, func(b *testing.B) {
			live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var early, peak uint64
			conns, n := 0, 0
			each := func(t *conn.Tracker) {
				conns = max(conns, len(t.Connections()))
				if n++; n%4096 == 0 {
					metrics.Read(live)
					peak = max(peak, live[0].Value.Uint64())
					if n <= earlyRecords {
						early = peak
					}
				}
			}
			for range b.N {
				ex := exportEach(b, Options{Format: r.format, Dir: b.TempDir(), Packets: true}, path, r.handOff, each)
				// At the end, with what the tracker still holds.
				runtime.GC()
				metrics.Read(live)
				peak = max(peak, live[0].Value.Uint64())
				runtime.KeepAlive(ex.tracker)
			}
			records = n / b.N
			b.ReportMetric(float64(early)/(1<<20), "early-live-MiB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-live-MiB")
			b.ReportMetric(float64(conns), "max-conns")
			if r.handOff {
				growth[r.format] = float64(peak) - float64(early)
			}
		})
	}
	if records <= earlyRecords || len(growth) < 2 {
		return
	}
	own := growth[Parquet] - growth[NDJSON]
	b.Logf("live heap growth after %d of %d records: Parquet %.1f MiB, NDJSON %.1f MiB", earlyRecords, records, growth[Parquet]/(1<<20), growth[NDJSON]/(1<<20))
	if own > exportGrowthMargin {
		b.Errorf("the Parquet writers' live heap grew by %.1f MiB after the first %d records, more than %d MiB", own/(1<<20), earlyRecords, exportGrowthMargin>>20)
	}
}
