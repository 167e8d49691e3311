package dissect

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// dumpVisitor renders every field of a record, for comparing records.
type dumpVisitor struct{ b *strings.Builder }

func (v dumpVisitor) Uint(f *field.Field, x uint64)     { fmt.Fprintf(v.b, " %s=%d", f.Name, x) }
func (v dumpVisitor) Int(f *field.Field, x int64)       { fmt.Fprintf(v.b, " %s=%d", f.Name, x) }
func (v dumpVisitor) Bool(f *field.Field, x bool)       { fmt.Fprintf(v.b, " %s=%t", f.Name, x) }
func (v dumpVisitor) String(f *field.Field, x string)   { fmt.Fprintf(v.b, " %s=%q", f.Name, x) }
func (v dumpVisitor) Bytes(f *field.Field, x []byte)    { fmt.Fprintf(v.b, " %s=%x", f.Name, x) }
func (v dumpVisitor) Addr(f *field.Field, x netip.Addr) { fmt.Fprintf(v.b, " %s=%s", f.Name, x) }
func (v dumpVisitor) Begin(f *field.Field)              { fmt.Fprintf(v.b, " %s{", f.Name) }
func (v dumpVisitor) End()                              { v.b.WriteString(" }") }

// dumpRecord renders everything a consumer can see of r.
func dumpRecord(r *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "frame %d src=%s len=%d/%d lt=%d end=%t\n", r.Frame, r.Source, r.CaptureLength, r.Length, r.LinkType, r.EndOfInput())
	for i, l := range r.Layers {
		fmt.Fprintf(&b, "  %s@%d:", l.Proto().Name, r.Offsets[i])
		l.VisitFields(dumpVisitor{&b})
		if s, ok := l.(field.Summarizer); ok {
			fmt.Fprintf(&b, " | %s", s.AppendSummary(nil))
		}
		b.WriteByte('\n')
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  finding %+v\n", f)
	}
	return b.String()
}

// runBoth dissects the files frame by frame as the command's sequential
// loop does (at most max good frames, then Finish) and with RunPipelined,
// and returns both dumps.
func runBoth(t *testing.T, max int, files ...string) (seq, pipe []string) {
	t.Helper()
	src, err := source.OpenFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := New(Options{})
	var f source.Frame
	good := 0
	var seqErr error
	for max <= 0 || good < max {
		err := src.Next(&f)
		if err == io.EOF {
			break
		}
		var re *source.RecordError
		if errors.As(err, &re) {
			seq = append(seq, dumpRecord(d.DamagedRecord(re)))
			continue
		}
		if err != nil {
			seqErr = err
			break
		}
		good++
		seq = append(seq, dumpRecord(d.Dissect(&f)))
	}
	if seqErr == nil {
		d.Finish(func(r *Record) { seq = append(seq, dumpRecord(r)) })
	}
	src.Close()
	src, err = source.OpenFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	err = New(Options{}).RunPipelined(src, max, func(r *Record, f *source.Frame) error {
		if f != nil && (f.Number != r.Frame || &f.Data[0] != &r.Data[0]) {
			t.Errorf("frame %d: the Frame handed with the record is frame %d", r.Frame, f.Number)
		}
		pipe = append(pipe, dumpRecord(r))
		return nil
	})
	if fmt.Sprint(err) != fmt.Sprint(seqErr) {
		t.Errorf("RunPipelined: error %v, frame by frame: %v", err, seqErr)
	}
	return seq, pipe
}

var errStop = errors.New("stop")

func compareDumps(t *testing.T, name string, seq, pipe []string) {
	t.Helper()
	if len(seq) != len(pipe) {
		t.Errorf("%s: Run gave %d records, RunPipelined %d", name, len(seq), len(pipe))
	}
	for i := range min(len(seq), len(pipe)) {
		if seq[i] != pipe[i] {
			t.Errorf("%s: record %d differs:\nRun:\n%s\nRunPipelined:\n%s", name, i, seq[i], pipe[i])
			return
		}
	}
}

// TestPipelineSameRecords: every real and synthetic capture (RoCEv2, RoCEv1,
// native IB 247 and ERF, iWARP with TCP reassembly, multi-packet Sends,
// damaged files) gives the same records, field for field, through
// RunPipelined as through Run.
func TestPipelineSameRecords(t *testing.T) {
	var files []string
	for _, g := range []string{"../testdata/pcaps/real/*.pcap*", "../testdata/pcaps/synthetic/*.pcap*"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 40 {
		t.Fatalf("found only %d captures", len(files))
	}
	frames := 0
	for _, f := range files {
		seq, pipe := runBoth(t, 0, f)
		compareDumps(t, f, seq, pipe)
		frames += len(seq)
	}
	// All of them in one run: frame numbers, relative times and
	// reassembly state run across files.
	seq, pipe := runBoth(t, 0, files...)
	compareDumps(t, "all files in one run", seq, pipe)
	t.Logf("%d captures, %d records compared", len(files), frames)
}

// TestPipelineCountAndDamage: -c N stops after N good frames; a damaged
// record comes through (without a Frame) where Run reports it.
func TestPipelineCountAndDamage(t *testing.T) {
	data, err := os.ReadFile(realRXE)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	seq, pipe := runBoth(t, 0, cut, realRXE)
	compareDumps(t, "cut + whole", seq, pipe)
	if !strings.Contains(strings.Join(pipe, ""), CodeRecordDamaged) {
		t.Errorf("no %s finding for the cut capture", CodeRecordDamaged)
	}
	total := len(readFrames(t, realRXE))
	for _, max := range []int{1, 63, 64, 65, total + 50} {
		seq, pipe := runBoth(t, max, realRXE)
		compareDumps(t, fmt.Sprintf("max %d", max), seq, pipe)
		good := 0
		for _, d := range pipe {
			if !strings.HasPrefix(d, "frame 0 ") {
				good++
			}
		}
		if good != min(max, total) {
			t.Errorf("max %d: %d frames", max, good)
		}
	}
}

// TestPipelineStops: an error from fn stops the run at once and the
// worker goroutine ends; a capture whose header is bad is an error after
// the frames before it.
func TestPipelineStops(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		src, err := source.OpenFiles([]string{realRXE}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = New(Options{}).RunPipelined(src, 0, func(r *Record, f *source.Frame) error {
			n++
			if n == 70 {
				return errStop
			}
			return nil
		})
		src.Close()
		if err != errStop || n != 70 {
			t.Fatalf("got %v after %d records, want errStop after 70", err, n)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines left running (%d before)", g, before)
	}

	bad := filepath.Join(t.TempDir(), "bad.pcap")
	if err := os.WriteFile(bad, []byte("this is not a capture file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenFiles([]string{realRXE, bad}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := 0
	err = New(Options{}).RunPipelined(src, 0, func(r *Record, f *source.Frame) error {
		n++
		return nil
	})
	var he *source.HeaderError
	if !errors.As(err, &he) || he.File != bad {
		t.Errorf("got %v, want the header error of %s", err, bad)
	}
	if want := len(readFrames(t, realRXE)); n != want {
		t.Errorf("%d records before the bad file, want %d", n, want)
	}
}
