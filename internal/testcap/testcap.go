// Package testcap finds the repository's test data and reads its captures,
// for tests in any directory: paths come from the repository root, not
// from the test's working directory.
//
// It imports nothing of the project but source, so every package's tests
// but source's own can use it.
package testcap

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// The two real captures of the Linux kernel's NFSv4.2 mount most tests
// read: over soft-RoCE (RoCEv2) and over soft-iWARP.
var (
	RXE = Real("rxe-nfs42-rdma.pcap")
	SIW = Real("siw-nfs42-rdma.pcap")
)

var root = sync.OnceValue(func() string {
	// This file is internal/testcap/testcap.go under the root.
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "..", "..")
		if isRoot(dir) {
			return filepath.Clean(dir)
		}
	}
	// Built without source paths (-trimpath): walk up from the test's
	// working directory, which go test sets to the package's directory.
	dir, err := os.Getwd()
	if err != nil {
		panic("testcap: " + err.Error())
	}
	for {
		if isRoot(dir) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testcap: no go.mod with a testdata directory above the working directory")
		}
		dir = parent
	}
})

func isRoot(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "testdata"))
	return err == nil && st.IsDir()
}

// Root is the repository's root directory.
func Root() string { return root() }

// Path is elem joined under the repository's testdata directory:
// Path("expect", "x.yaml") is testdata/expect/x.yaml.
func Path(elem ...string) string {
	return filepath.Join(append([]string{root(), "testdata"}, elem...)...)
}

// Real is the path of a capture in testdata/pcaps/real.
func Real(name string) string { return Path("pcaps", "real", name) }

// Synthetic is the path of a capture in testdata/pcaps/synthetic.
func Synthetic(name string) string { return Path("pcaps", "synthetic", name) }

// Glob returns the test data files matching pattern (filepath.Match's
// syntax), which is relative to testdata; it fails t when none does.
func Glob(t testing.TB, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(Path(pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatalf("no test data matches testdata/%s", pattern)
	}
	return m
}

// Frames reads every frame of a capture with the source package, each
// with its own copy of the bytes. A capture that does not read to its end
// fails t.
func Frames(t testing.TB, path string) []source.Frame {
	t.Helper()
	return read(t, path, nil)
}

// FramesOf is Frames of a capture held in memory.
func FramesOf(t testing.TB, capture []byte) []source.Frame {
	t.Helper()
	return read(t, "-", bytes.NewReader(capture))
}

// WritePcap writes frames (each one's Time, Data and Length) to a new
// pcap file at path of link type lt, for tests that hand a tool a
// capture they built or cut; an error fails t.
func WritePcap(t testing.TB, path string, lt layers.LinkType, frames []source.Frame) {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	if err := w.WriteFileHeader(262144, lt); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: f.Time, CaptureLength: len(f.Data), Length: f.Length}
		if err := w.WritePacket(ci, f.Data); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// read reads path, or stdin when path is "-".
func read(t testing.TB, path string, stdin io.Reader) []source.Frame {
	t.Helper()
	src, err := source.OpenFiles([]string{path}, stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []source.Frame
	for {
		var f source.Frame
		err := src.Next(&f)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		f.Data = append([]byte(nil), f.Data...)
		out = append(out, f)
	}
}

// BenchCapture is the capture benchmarks read: $CMPD_BENCH_PCAP (the
// bench capture of make bench) when set, else the real rxe capture; the
// benchmark is skipped when neither is there.
func BenchCapture(b testing.TB) string {
	if p := os.Getenv("CMPD_BENCH_PCAP"); p != "" {
		return p
	}
	if _, err := os.Stat(RXE); err != nil {
		b.Skipf("no capture: set CMPD_BENCH_PCAP (%v)", err)
	}
	return RXE
}

// Data is the bytes of every frame of a capture (Frames without the
// metadata); a capture without frames fails t.
func Data(t testing.TB, path string) [][]byte {
	t.Helper()
	data, _ := DataLink(t, path)
	return data
}

// DataLink is Data and the capture's link type (every frame of a file has
// the file's).
func DataLink(t testing.TB, path string) ([][]byte, layers.LinkType) {
	t.Helper()
	frames := Frames(t, path)
	if len(frames) == 0 {
		t.Fatalf("%s: no frames", path)
	}
	out := make([][]byte, len(frames))
	for i := range frames {
		out[i] = frames[i].Data
	}
	return out, layers.LinkType(frames[0].LinkType)
}

// Hex is the octets a test writes as hex digits, with spaces between
// groups for reading ("00000601 00000001"); bad hex fails the test.
func Hex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
