package main

import (
	"io"
	"os"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// Whole-command benchmarks on one capture, for profiling the commands make
// bench times against tshark:
//
//	go run ./internal/gen -bench-out /tmp/b.pcap -bench-packets 200000
//	CMPD_BENCH_PCAP=/tmp/b.pcap go test -run='^$' -bench=Command -cpuprofile cpu.out ./cmd/cmpd-dissect
//
// Without CMPD_BENCH_PCAP they run on the largest real capture.
func benchCommand(b *testing.B, args ...string) {
	path := testcap.BenchCapture(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	args = append(args, path)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if code := run(args, nil, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("%v: exit %d", args, code)
		}
	}
}

func BenchmarkCommandStats(b *testing.B) { benchCommand(b, "stats") }
func BenchmarkCommandConns(b *testing.B) { benchCommand(b, "conns") }
func BenchmarkCommandView(b *testing.B)  { benchCommand(b, "-r") }

// BenchmarkCommandExport writes every table, packets included, as Parquet.
func BenchmarkCommandExport(b *testing.B) {
	benchCommand(b, "export", "--packets", "-o", b.TempDir())
}
