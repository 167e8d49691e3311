package source

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

const (
	realRXE = "../testdata/pcaps/real/rxe-nfs42-rdma.pcap"
	realSIW = "../testdata/pcaps/real/siw-nfs42-rdma.pcap"
)

// readAll reads every frame of src, copying the bytes.
func readAll(t *testing.T, src Source) (frames []Frame, errs []error) {
	t.Helper()
	var f Frame
	for {
		err := src.Next(&f)
		if err == io.EOF {
			return frames, errs
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c := f
		c.Data = append([]byte(nil), f.Data...)
		frames = append(frames, c)
	}
}

func mustRead(t *testing.T, names ...string) []Frame {
	t.Helper()
	fs, err := OpenFiles(names, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	frames, errs := readAll(t, fs)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	return frames
}

func TestRealCaptures(t *testing.T) {
	for _, tc := range []struct {
		file   string
		frames int
	}{{realRXE, 0}, {realSIW, 0}} {
		frames := mustRead(t, tc.file)
		if len(frames) < 10 {
			t.Fatalf("%s: only %d frames", tc.file, len(frames))
		}
		raw, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		// Each frame's bytes are in the file right after its 16-byte
		// record header at the reported offset.
		prev := time.Time{}
		for i, f := range frames {
			if f.Number != i+1 || f.LinkType != LinkTypeEthernet || f.Source != tc.file {
				t.Fatalf("frame %d: %+v", i+1, f)
			}
			if !bytes.Equal(raw[f.Offset+16:f.Offset+16+int64(len(f.Data))], f.Data) {
				t.Fatalf("frame %d: bytes at offset %d differ", f.Number, f.Offset)
			}
			if f.Time.Before(prev) {
				t.Fatalf("frame %d: time goes back", f.Number)
			}
			prev = f.Time
		}
		if frames[0].Offset != 24 {
			t.Fatalf("first record offset %d, want 24", frames[0].Offset)
		}
	}
}

// writeNG writes frames as pcapng and returns the bytes.
func writeNG(t *testing.T, frames []Frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, frames[0].LinkType, "test0")
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		if err := w.Write(&frames[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func sameFrames(t *testing.T, what string, got, want []Frame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d frames, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].Data, want[i].Data) || !got[i].Time.Equal(want[i].Time) || got[i].LinkType != want[i].LinkType {
			t.Fatalf("%s: frame %d differs", what, i+1)
		}
	}
}

func TestFormats(t *testing.T) {
	want := mustRead(t, realRXE)
	raw, _ := os.ReadFile(realRXE)
	// Mixed link types in one pcapng: frames 2 and 3 relabelled.
	mixed := append([]Frame(nil), want...)
	mixed[1].LinkType, mixed[2].LinkType = LinkTypeInfiniBand, LinkTypeERF
	dir := t.TempDir()
	files := map[string][]byte{
		"a.pcapng":     writeNG(t, want),
		"a.pcapng.bin": gz(t, writeNG(t, want)), // gzip found by magic, not name
		"a.pcap.gz":    gz(t, raw),
		"noext":        raw,
		"mixed.pcapng": writeNG(t, mixed),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a.pcapng", "a.pcapng.bin", "a.pcap.gz", "noext"} {
		sameFrames(t, name, mustRead(t, filepath.Join(dir, name)), want)
	}
	sameFrames(t, "mixed", mustRead(t, filepath.Join(dir, "mixed.pcapng")), mixed)

	f, err := Open(filepath.Join(dir, "a.pcapng.bin"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Compression() != Gzip || f.Format() != FormatPcapNG {
		t.Fatalf("compression %v format %v", f.Compression(), f.Format())
	}
	f.Close()

	// Several files in one run: numbering continues.
	both := mustRead(t, filepath.Join(dir, "noext"), filepath.Join(dir, "a.pcapng"))
	if len(both) != 2*len(want) || both[len(want)].Number != len(want)+1 {
		t.Fatalf("two files: %d frames", len(both))
	}

	// stdin.
	fs, err := OpenFiles([]string{"-"}, bytes.NewReader(gz(t, raw)))
	if err != nil {
		t.Fatal(err)
	}
	got, errs := readAll(t, fs)
	if len(errs) != 0 || got[0].Source != "-" {
		t.Fatalf("stdin: %v", errs)
	}
	sameFrames(t, "stdin", got, want)
	if r, tot := fs.Progress(); tot != 0 || r == 0 {
		t.Fatalf("stdin progress %d/%d", r, tot)
	}
}

func TestDamagedHeader(t *testing.T) {
	raw, _ := os.ReadFile(realRXE)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one byte", []byte{0xd4}},
		{"text", []byte("hello, world, not a capture file")},
		{"short pcap header", raw[:20]},
		{"bad version", append(append([]byte{}, raw[:4]...), append([]byte{1, 0}, raw[6:100]...)...)},
		{"gzip garbage", []byte{0x1f, 0x8b, 1, 2, 3}},
		{"pcapng bad byte order", []byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 1, 2, 3, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0}},
	} {
		_, err := NewFile("x.pcap", bytes.NewReader(tc.data))
		var he *HeaderError
		if !errors.As(err, &he) || he.File != "x.pcap" {
			t.Errorf("%s: err %v, want a HeaderError naming the file", tc.name, err)
		}
	}
	_, err := Open("/nonexistent/file.pcap", nil)
	var he *HeaderError
	if !errors.As(err, &he) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestTruncatedRecord(t *testing.T) {
	raw, _ := os.ReadFile(realRXE)
	all := mustRead(t, realRXE)
	last := all[len(all)-1]
	// Cut the file 5 bytes into the last record's data.
	cut := raw[:last.Offset+16+5]
	for name, data := range map[string][]byte{"plain": cut, "gzip": gz(t, cut)} {
		fs, err := OpenFiles([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		got, errs := readAll(t, fs)
		if len(got) != len(all)-1 {
			t.Fatalf("%s: %d good frames, want %d", name, len(got), len(all)-1)
		}
		var re *RecordError
		if len(errs) != 1 || !errors.As(errs[0], &re) || re.Frame != last.Number || re.Offset != last.Offset || !errors.Is(re, ErrTruncated) {
			t.Fatalf("%s: errors %v, want a truncation at frame %d offset %d", name, errs, last.Number, last.Offset)
		}
	}
	// A record header claiming more than the snap length.
	bad := append([]byte(nil), raw...)
	off := all[2].Offset
	copy(bad[off+8:], []byte{0xff, 0xff, 0xff, 0x7f})
	fs, _ := OpenFiles([]string{"-"}, bytes.NewReader(bad))
	got, errs := readAll(t, fs)
	var re *RecordError
	if len(got) != 2 || len(errs) != 1 || !errors.As(errs[0], &re) || re.Frame != 3 || re.Offset != off {
		t.Fatalf("lying length: %d frames, %v", len(got), errs)
	}
}

func FuzzFile(f *testing.F) {
	raw, _ := os.ReadFile(realRXE)
	f.Add(raw[:600])
	f.Add([]byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0})
	f.Add(gz(&testing.T{}, raw[:300]))
	huge, _ := pcapWith(binary.LittleEndian, false, 0xfffffff0)
	f.Add(huge)
	f.Add(compressAs(f, Zstd, raw[:300]))
	f.Add(compressAs(f, LZ4, raw[:300]))
	// The variants of classic pcap (their readers choose by the first
	// records).
	for _, name := range []string{"live-siw4-rfc8797.modpcap.pcap", "live-siw4-rfc8797.suse6_3pcap.pcap", "live-siw4-rfc8797.rh6_1pcap.pcap",
		"live-siw4-rfc8797.nokiapcap.pcap", "live-rxe4-rfc8797.lenswap.pcap"} {
		b, err := os.ReadFile(convertedDir + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 600)])
	}
	ixia := append([]byte{0x1c, 0, 1, 0xac}, raw[4:24]...)
	f.Add(append(append(ixia, 0, 0, 0, 0), raw[24:400]...))
	lowerZstdWindow(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		// The mapped-file reader and gopacket's stream reader agree on
		// every input: same frames, same errors.
		path := filepath.Join(dir, "in.pcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, aerr := OpenFiles([]string{path}, nil)
		b, berr := OpenFiles([]string{"-"}, bytes.NewReader(data))
		if (aerr == nil) != (berr == nil) {
			t.Fatalf("file: %v, stream: %v", aerr, berr)
		}
		if aerr == nil {
			var fa, fb Frame
			for i := 0; i < 10000; i++ {
				ea, eb := a.Next(&fa), b.Next(&fb)
				if (ea == nil) != (eb == nil) || (ea == io.EOF) != (eb == io.EOF) {
					t.Fatalf("frame %d: file %v, stream %v", i+1, ea, eb)
				}
				if ea != nil {
					var ra, rb *RecordError
					if errors.As(ea, &ra) != errors.As(eb, &rb) || ra != nil && (ra.Frame != rb.Frame || ra.Offset != rb.Offset) {
						t.Fatalf("frame %d: file %v, stream %v", i+1, ea, eb)
					}
					if ea == io.EOF {
						break
					}
					continue
				}
				// pcapgo's microsecond arithmetic overflows for a fraction
				// field over 4294966 (an invalid value anyway): compare the
				// times only for sane fields.
				sane := true
				if fa.Offset+8 <= int64(len(data)) {
					frac := binary.LittleEndian.Uint32(data[fa.Offset+4:])
					if data[0] == 0xa1 {
						frac = binary.BigEndian.Uint32(data[fa.Offset+4:])
					}
					sane = frac < 1000000
				}
				if !bytes.Equal(fa.Data, fb.Data) || sane && !fa.Time.Equal(fb.Time) || fa.Offset != fb.Offset || fa.Length != fb.Length || fa.LinkType != fb.LinkType {
					t.Fatalf("frame %d differs: file %+v, stream %+v", i+1, fa, fb)
				}
			}
			a.Close()
			b.Close()
		}
		// No record makes a reader allocate more than the largest block
		// it accepts (and its buffers): a corrupt length is damage found
		// before the read.
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		defer func() {
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*maxBlock {
				t.Fatalf("%d bytes allocated", alloc)
			}
		}()
		fs := openFuzzInput(t, data)
		if fs == nil {
			return
		}
		var fr Frame
		for i := 0; i < 10000; i++ {
			err := fs.Next(&fr)
			if err == io.EOF {
				return
			}
			if err != nil {
				var re *RecordError
				if !errors.As(err, &re) {
					t.Fatalf("record error %T %v", err, err)
				}
				continue
			}
			if len(fr.Data) > fr.CaptureLength && fr.CaptureLength >= 0 {
				t.Fatalf("data %d > caplen %d", len(fr.Data), fr.CaptureLength)
			}
		}
	})
}

// openFuzzInput opens a fuzz target's data as a capture on stdin: nil when
// it is refused, which must be for its header (a HeaderError).
func openFuzzInput(t *testing.T, data []byte) *Files {
	t.Helper()
	fs, err := OpenFiles([]string{"-"}, bytes.NewReader(data))
	if err != nil {
		var he *HeaderError
		if !errors.As(err, &he) {
			t.Fatalf("open error %T %v is not a HeaderError", err, err)
		}
		return nil
	}
	return fs
}

// pcapVariant rewrites the classic pcap raw (little-endian, µs) in
// another layout of the format: magic, byte order, version and file
// header length, and each record header (from the record's fields and
// data) by rec.
func pcapVariant(raw []byte, o binary.AppendByteOrder, magic uint32, major, minor uint16, extra []byte,
	rec func(b []byte, sec, usec, incl, orig uint32) []byte) []byte {
	h := binary.LittleEndian
	b := o.AppendUint32(nil, magic)
	b = o.AppendUint16(o.AppendUint16(b, major), minor)
	b = append(b, make([]byte, 8)...)
	b = o.AppendUint32(o.AppendUint32(b, h.Uint32(raw[16:])), h.Uint32(raw[20:]))
	b = append(b, extra...)
	for off := 24; off < len(raw); {
		incl := h.Uint32(raw[off+8:])
		b = rec(b, h.Uint32(raw[off:]), h.Uint32(raw[off+4:]), incl, h.Uint32(raw[off+12:]))
		b = append(b, raw[off+16:off+16+int(incl)]...)
		off += 16 + int(incl)
	}
	return b
}

// TestPcapVariants: the layouts of classic pcap that wiretap reads besides
// 2.4 (editcap's variants are converted captures, TestConverted), written
// from a real capture: the same frames from a mapped file, a stream and
// gzip. Versions before 2.3 store the original length first, 2.3 either
// way round; Ixia's lcap files have 4 more octets of file header (µs or
// ns); the modified format's record headers carry 8 more; an original
// length under the captured one is read as it is, the frame whole.
func TestPcapVariants(t *testing.T) {
	const src = "../testdata/pcaps/real/live-siw4-rfc8797.pcap"
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	orig := mustRead(t, src)
	// The second frame claims 100 more octets on the wire; the fifth 10
	// fewer than were captured (but in version 2.3, where that is the
	// sign of lengths stored swapped; after the first three records,
	// which tell the variants apart).
	be, le := binary.BigEndian, binary.LittleEndian
	type layout struct {
		o       binary.AppendByteOrder
		swapped bool   // the original length first
		nanos   bool   // ns timestamps
		v23     bool   // no frame with an original length under the captured one
		extra   []byte // after the 16 octets of each record header
	}
	rec := func(l layout) func(b []byte, sec, usec, incl, orig uint32) []byte {
		i := 0
		return func(b []byte, sec, usec, incl, orig uint32) []byte {
			switch {
			case i == 1:
				orig += 100
			case i == 4 && !l.v23:
				orig -= 10
			}
			i++
			if l.nanos {
				usec *= 1000
			}
			if l.swapped {
				incl, orig = orig, incl
			}
			b = l.o.AppendUint32(l.o.AppendUint32(l.o.AppendUint32(l.o.AppendUint32(b, sec), usec), incl), orig)
			return append(b, l.extra...)
		}
	}
	// The modified formats' interface index 2, protocol IPv4, packet
	// type 0 (to us) and padding.
	modified := func(o binary.AppendByteOrder, pad ...byte) []byte {
		return append(o.AppendUint16(o.AppendUint32(nil, 2), 0x0800), append([]byte{0, 0}, pad...)...)
	}
	for _, tc := range []struct {
		name         string
		magic        uint32
		major, minor uint16
		extra        []byte // after the file header
		layout
	}{
		{"2.4", 0xa1b2c3d4, 2, 4, nil, layout{o: le}},
		{"2.2 big-endian, lengths swapped", 0xa1b2c3d4, 2, 2, nil, layout{o: be, swapped: true}},
		{"543.0 (DG/UX), lengths swapped", 0xa1b2c3d4, 543, 0, nil, layout{o: le, swapped: true}},
		{"2.3, lengths swapped", 0xa1b2c3d4, 2, 3, nil, layout{o: le, swapped: true, v23: true}},
		{"2.3, lengths in order", 0xa1b2c3d4, 2, 3, nil, layout{o: be, v23: true}},
		{"Ixia software lcap", 0x1c0001ab, 2, 4, []byte{1, 2, 3, 4}, layout{o: le}},
		{"Ixia hardware lcap big-endian", 0x1c0001ac, 2, 4, []byte{1, 2, 3, 4}, layout{o: be, nanos: true}},
		{"modified big-endian", 0xa1b2cd34, 2, 4, nil, layout{o: be, extra: modified(be)}},
		{"ss990417 (standard magic)", 0xa1b2c3d4, 2, 4, nil, layout{o: le, extra: modified(le)}},
		{"modified ss990915", 0xa1b2cd34, 2, 4, nil, layout{o: le, extra: modified(le, 1, 2, 3, 4)}},
	} {
		data := pcapVariant(raw, tc.o, tc.magic, tc.major, tc.minor, tc.extra, rec(tc.layout))
		want := append([]Frame(nil), orig...)
		want[1].Length += 100
		if !tc.v23 {
			want[4].Length -= 10
		}
		path := filepath.Join(t.TempDir(), "x.pcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for via, files := range map[string][]string{"file": {path}, "stdin": {"-"}, "gzip": {"-"}} {
			var stdin io.Reader = bytes.NewReader(data)
			if via == "gzip" {
				stdin = bytes.NewReader(gz(t, data))
			}
			fs, err := OpenFiles(files, stdin)
			if err != nil {
				t.Fatalf("%s via %s: %v", tc.name, via, err)
			}
			got, errs := readAll(t, fs)
			fs.Close()
			if len(errs) > 0 {
				t.Fatalf("%s via %s: %v", tc.name, via, errs)
			}
			sameFrames(t, tc.name+" via "+via, got, want)
			for i := range got {
				if got[i].Length != want[i].Length || got[i].CaptureLength != len(want[i].Data) {
					t.Fatalf("%s via %s: frame %d lengths %d/%d, want %d/%d", tc.name, via, i+1,
						got[i].CaptureLength, got[i].Length, len(want[i].Data), want[i].Length)
				}
			}
		}
	}
}
