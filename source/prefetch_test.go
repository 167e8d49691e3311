package source

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// readEach reads src frame by frame like a consumer and returns copies of
// the frames and the frames and errors as text, in order. With lifetime
// (src a Prefetch), it takes the frames in place (Frame) and checks on
// each call that every frame handed out earlier in the same batch still
// has its number and bytes (what a Prefetch promises; Files reusing a
// buffer does not).
func readEach(t *testing.T, src Source, lifetime bool) (frames []Frame, events []string) {
	t.Helper()
	var own Frame
	var live []*Frame // frames handed out in place, of the current batch
	for {
		f, err := &own, error(nil)
		if lifetime {
			f, err = src.(*Prefetch).Frame()
		} else {
			err = src.Next(f)
		}
		if err == io.EOF {
			return frames, events
		}
		if err != nil {
			events = append(events, fmt.Sprintf("after %d: %v", len(frames), err))
			live = live[:0]
			continue
		}
		c := *f
		c.Data = append([]byte(nil), f.Data...)
		frames = append(frames, c)
		events = append(events, fmt.Sprintf("frame %d", f.Number))
		if !lifetime {
			continue
		}
		if pf := src.(*Prefetch); pf.i == 1 {
			// The first frame of a batch.
			live = live[:0]
		}
		live = append(live, f)
		base := len(frames) - len(live)
		for i, l := range live {
			if w := frames[base+i]; l.Number != w.Number || !bytes.Equal(l.Data, w.Data) {
				t.Fatalf("frame %d: changed while frame %d was read", w.Number, f.Number)
			}
		}
	}
}

// TestPrefetchSameAsFiles: Prefetch hands the frames and errors Files.Next
// hands, in the same order, for mapped pcap, pcapng and gzip files, a damaged
// record, an unreadable later file and several files in a row; the hook has
// run on each frame first.
func TestPrefetchSameAsFiles(t *testing.T) {
	raw, err := os.ReadFile(realRXE)
	if err != nil {
		t.Fatal(err)
	}
	want := mustRead(t, realRXE)
	last := want[len(want)-1]
	// Enough frames for several batches.
	var many []Frame
	for len(many) < 3*prefetchBatch+17 {
		many = append(many, want...)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"a.pcap":        raw,
		"many.pcapng":   writeNG(t, many),
		"many.pcapng.z": gz(t, writeNG(t, many)),
		"cut.pcap":      raw[:last.Offset+16+5],
		"cut.pcap.gz":   gz(t, raw[:last.Offset+16+5]),
		"garbage":       []byte("not a capture at all"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, names := range [][]string{
		{p("a.pcap")},
		{p("many.pcapng")},
		{p("many.pcapng.z")},
		{p("cut.pcap")},
		{p("cut.pcap.gz"), p("a.pcap")},
		{p("a.pcap"), p("garbage"), p("many.pcapng"), p("cut.pcap"), p("many.pcapng.z")},
	} {
		fs, err := OpenFiles(names, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantFrames, wantEvents := readEach(t, fs, false)
		fs.Close()

		fs, err = OpenFiles(names, nil)
		if err != nil {
			t.Fatal(err)
		}
		hooked := 0
		pf := NewPrefetch(fs, func(f *Frame) {
			hooked++
			f.Ahead = Ahead{Kind: 7, At: int32(len(f.Data)), CRC: uint32(f.Number)}
		})
		gotFrames, gotEvents := readEach(t, pf, true)
		if err := pf.Close(); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(gotEvents) != fmt.Sprint(wantEvents) {
			t.Fatalf("%v: prefetched\n%v\nwant\n%v", names, gotEvents, wantEvents)
		}
		if hooked != len(wantFrames) {
			t.Fatalf("%v: hook ran %d times for %d frames", names, hooked, len(wantFrames))
		}
		for i, g := range gotFrames {
			w := wantFrames[i]
			if g.Ahead != (Ahead{Kind: 7, At: int32(len(w.Data)), CRC: uint32(w.Number)}) {
				t.Fatalf("%v frame %d: Ahead %+v: the hook's result is lost", names, w.Number, g.Ahead)
			}
			g.Ahead = Ahead{}
			if !bytes.Equal(g.Data, w.Data) || fmt.Sprint(g.Source, g.Number, g.Time, g.CaptureLength, g.Length, g.LinkType, g.Offset) !=
				fmt.Sprint(w.Source, w.Number, w.Time, w.CaptureLength, w.Length, w.LinkType, w.Offset) {
				t.Fatalf("%v frame %d differs", names, w.Number)
			}
		}
		if len(wantFrames) == 0 {
			t.Fatalf("%v: no frames", names)
		}
	}
}

// TestPrefetchCloseEarly: a consumer that stops early (-c N) closes the
// Prefetch while its goroutine is reading ahead or waiting for a free
// batch; Close returns, the goroutine has ended and the files are closed.
func TestPrefetchCloseEarly(t *testing.T) {
	// Enough copies of the capture for more than two batches.
	names := []string{realRXE}
	for per := len(mustRead(t, realRXE)); len(names)*per < 3*prefetchBatch; {
		names = append(names, realRXE)
	}
	for _, stopAfter := range []int{0, 1, prefetchBatch, 2*prefetchBatch + 3} {
		fs, err := OpenFiles(names, nil)
		if err != nil {
			t.Fatal(err)
		}
		pf := NewPrefetch(fs, nil)
		var f Frame
		for i := 0; i < stopAfter; i++ {
			if err := pf.Next(&f); err != nil {
				t.Fatalf("frame %d: %v", i+1, err)
			}
		}
		if err := pf.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-pf.exited:
		default:
			t.Fatal("reading goroutine still running after Close")
		}
		if fs.cur != nil && fs.cur.closer != nil {
			t.Fatal("file left open")
		}
		if err := pf.Close(); err != nil { // twice is harmless
			t.Fatal(err)
		}
	}
}

// TestPrefetchAheadReset: every other source leaves Ahead zero, so a Frame
// reused after a Prefetch does not carry a stale result into the next
// frame.
func TestPrefetchAheadReset(t *testing.T) {
	raw, _ := os.ReadFile(realRXE)
	for _, src := range []func() Source{
		func() Source { fs, _ := OpenFiles([]string{realRXE}, nil); return fs },
		func() Source { fs, _ := OpenFiles([]string{"-"}, bytes.NewReader(gz(t, raw))); return fs },
	} {
		s := src()
		f := Frame{Ahead: Ahead{Kind: 3, OK: true, At: 14, CRC: 1}}
		if err := s.Next(&f); err != nil {
			t.Fatal(err)
		}
		if f.Ahead != (Ahead{}) {
			t.Fatalf("stale Ahead %+v", f.Ahead)
		}
		s.Close()
	}
}

// TestPrefetchBatchBytes: large frames end a batch before prefetchBatch
// frames, so the reader stays within prefetchDepth*prefetchBatchBytes (plus
// a frame per batch) of the consumer, mapped or copied.
func TestPrefetchBatchBytes(t *testing.T) {
	small := mustRead(t, realRXE)
	var big []Frame
	for i := 0; i < 40; i++ {
		f := small[i%len(small)]
		f.Data = bytes.Repeat(f.Data[:1], 30000)
		f.CaptureLength, f.Length = len(f.Data), len(f.Data)
		big = append(big, f)
	}
	// A classic pcap file of the same frames (mapped when read).
	var pcap bytes.Buffer
	pcap.Write([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0})
	for _, f := range big {
		var h [16]byte
		h[8], h[9] = byte(len(f.Data)), byte(len(f.Data)>>8)
		h[12], h[13] = byte(len(f.Data)), byte(len(f.Data)>>8)
		pcap.Write(h[:])
		pcap.Write(f.Data)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"big.pcap": pcap.Bytes(), "big.pcapng": writeNG(t, big)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fs, err := OpenFiles([]string{path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		pf := NewPrefetch(fs, nil)
		got, events := readEach(t, pf, true)
		if len(got) != len(big) || len(events) != len(big) {
			t.Fatalf("%s: %d frames, %v", name, len(got), events)
		}
		for i := range got {
			if !bytes.Equal(got[i].Data, big[i].Data) {
				t.Fatalf("%s: frame %d differs", name, i+1)
			}
		}
		pf.Close()
	}
	// The batch sizes themselves.
	fs, _ := OpenFiles([]string{filepath.Join(dir, "big.pcap")}, nil)
	pf := NewPrefetch(fs, nil)
	defer pf.Close()
	var f Frame
	if err := pf.Next(&f); err != nil {
		t.Fatal(err)
	}
	if n := pf.cur.n; n != (prefetchBatchBytes+30016-1)/30016 {
		t.Fatalf("a batch of %d frames of 30000 octets", n)
	}
}
