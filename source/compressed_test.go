package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap/converted"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// compressAs compresses b with the libraries' encoders (the committed
// files in testdata/pcaps/converted are the command-line tools' output).
func compressAs(t testing.TB, kind Compression, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch kind {
	case Gzip:
		w = gzip.NewWriter(&buf)
	case Zstd:
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	case LZ4:
		w = lz4.NewWriter(&buf)
	default:
		return b
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var compressions = []Compression{Gzip, Zstd, LZ4}

// TestCompressed: pcap and pcapng compressed each way are found by their
// magic (the files have no extension) and read as the plain capture, from
// a file and from stdin; several files of mixed compressions are read in
// one run with their frames numbered on.
func TestCompressed(t *testing.T) {
	want := mustRead(t, realRXE)
	raw, err := os.ReadFile(realRXE)
	if err != nil {
		t.Fatal(err)
	}
	plain := map[Format][]byte{FormatPcap: raw, FormatPcapNG: writeNG(t, want)}
	dir := t.TempDir()
	var all []string
	for _, kind := range compressions {
		for format, b := range plain {
			data := compressAs(t, kind, b)
			path := filepath.Join(dir, fmt.Sprintf("%v-%v", kind, format))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			all = append(all, path)
			f, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if f.Compression() != kind || f.Format() != format {
				t.Fatalf("%s: compression %v format %v", path, f.Compression(), f.Format())
			}
			f.Close()
			sameFrames(t, path, mustRead(t, path), want)

			fs, err := OpenFiles([]string{"-"}, bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			got, errs := readAll(t, fs)
			if len(errs) != 0 {
				t.Fatalf("%s on stdin: %v", path, errs)
			}
			sameFrames(t, path+" on stdin", got, want)
			if r, _ := fs.Progress(); r != int64(len(data)) {
				t.Fatalf("%s on stdin: progress %d of %d compressed bytes", path, r, len(data))
			}
		}
	}
	got := mustRead(t, all...)
	if len(got) != len(all)*len(want) || got[len(got)-1].Number != len(got) {
		t.Fatalf("%d files in one run: %d frames, want %d", len(all), len(got), len(all)*len(want))
	}
	if f, err := Open(realRXE, nil); err != nil || f.Compression() != Uncompressed {
		t.Fatalf("plain pcap: %v %v", f.Compression(), err)
	} else {
		f.Close()
	}
}

// compressedConverted are the committed captures the compression tools
// wrote, each with its frames as read whole.
func compressedConverted(t *testing.T) map[string][]Frame {
	out := map[string][]Frame{}
	for _, tc := range converted.Captures {
		path := convertedDir + tc.File
		f, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		kind := f.Compression()
		f.Close()
		if kind != Uncompressed {
			out[path] = mustRead(t, path)
		}
	}
	if len(out) < 7 {
		t.Fatalf("only %d compressed captures in %s", len(out), convertedDir)
	}
	return out
}

// TestCompressedCut cuts the files the compression tools wrote at many
// points: the frames before the cut are read as in the whole file, then
// one error: a RecordError at the next frame's number and offset that
// says the file was cut short (as a cut plain capture), or, when no record
// could be decompressed at all, a HeaderError naming the compression. The
// files of several blocks must give frames before the error.
func TestCompressedCut(t *testing.T) {
	partial := map[string]bool{
		"live-rxe4-nfs42-bulk.pcap.zst":    false, // five zstd blocks
		"live-siw4-nvme.pcap.lz4":          false, // two linked 64 KiB LZ4 blocks
		"rxe-nfs42-rdma.editcap.pcapng.gz": false,
	}
	dir := t.TempDir()
	for path, whole := range compressedConverted(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cuts := []int{len(data) - 1, len(data) - 4, len(data) - 9}
		for i := 1; i < 24; i++ {
			cuts = append(cuts, len(data)*i/24)
		}
		for _, at := range cuts {
			cut := filepath.Join(dir, fmt.Sprintf("%s@%d", filepath.Base(path), at))
			if err := os.WriteFile(cut, data[:at], 0o644); err != nil {
				t.Fatal(err)
			}
			fs, err := OpenFiles([]string{cut}, nil)
			var he *HeaderError
			if err != nil {
				if !errors.As(err, &he) || !strings.Contains(err.Error(), cut) {
					t.Fatalf("%s: %v, want a HeaderError naming the file", cut, err)
				}
				continue
			}
			got, errs := readAll(t, fs)
			fs.Close()
			if len(got) > len(whole) {
				t.Fatalf("%s: %d frames of %d", cut, len(got), len(whole))
			}
			for i := range got {
				if !bytes.Equal(got[i].Data, whole[i].Data) || got[i].Offset != whole[i].Offset {
					t.Fatalf("%s: frame %d differs from the whole file's", cut, i+1)
				}
			}
			if len(errs) == 0 && len(got) == len(whole) && strings.HasSuffix(path, ".lz4") && at == len(data)-4 {
				// The LZ4 frame's content checksum cut off whole: the
				// library (as liblz4, so tshark) takes the end mark
				// for the end.
				continue
			}
			var re *RecordError
			if len(errs) != 1 || !errors.As(errs[0], &re) || !errors.Is(re, ErrTruncated) || re.Frame != len(got)+1 {
				t.Fatalf("%s: %d frames, errors %v: want one cut record at frame %d", cut, len(got), errs, len(got)+1)
			}
			wantOff := whole[len(whole)-1].Offset
			if len(got) < len(whole) {
				wantOff = whole[len(got)].Offset
			}
			if len(got) < len(whole) && re.Offset != wantOff || len(got) == len(whole) && re.Offset <= wantOff {
				t.Fatalf("%s: cut at offset %d, want %d", cut, re.Offset, wantOff)
			}
			if len(got) > 0 {
				if _, ok := partial[filepath.Base(path)]; ok {
					partial[filepath.Base(path)] = true
				}
			}
		}
	}
	for name, ok := range partial {
		if !ok {
			t.Errorf("%s: no cut gave the frames before it", name)
		}
	}
}

// TestCompressedDamaged flips bytes of the files the compression tools
// wrote: never read silently as whole (each format has a checksum of the
// content, which those tools write), and the error names the file.
func TestCompressedDamaged(t *testing.T) {
	dir := t.TempDir()
	for path, whole := range compressedConverted(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < 12; i++ {
			at := 4 + (len(data)-4)*i/12
			bad := bytes.Clone(data)
			bad[at] ^= 0x5a
			p := filepath.Join(dir, fmt.Sprintf("%s^%d", filepath.Base(path), at))
			if err := os.WriteFile(p, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			fs, err := OpenFiles([]string{p}, nil)
			if err != nil {
				if !strings.Contains(err.Error(), p) {
					t.Fatalf("%s: %v does not name the file", p, err)
				}
				continue
			}
			got, errs := readAll(t, fs)
			fs.Close()
			if len(errs) == 0 {
				t.Fatalf("%s: a damaged file read without an error (%d frames of %d)", p, len(got), len(whole))
			}
			for _, err := range errs {
				if !strings.Contains(err.Error(), p) {
					t.Fatalf("%s: %v does not name the file", p, err)
				}
			}
		}
	}
	// Damage the decompressor finds is named as such, not as a cut.
	raw, _ := os.ReadFile(realRXE)
	for _, kind := range compressions {
		data := compressAs(t, kind, raw)
		data[len(data)-2] ^= 0xff // in the checksum that ends each format
		fs, err := OpenFiles([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), kind.String()+" data damaged") {
				t.Fatalf("%v: %v", kind, err)
			}
			continue
		}
		_, errs := readAll(t, fs)
		var re *RecordError
		if len(errs) != 1 || !errors.As(errs[0], &re) || errors.Is(re, ErrTruncated) || !strings.Contains(re.Error(), kind.String()+" data damaged") {
			t.Fatalf("%v: bad checksum: %v", kind, errs)
		}
	}
}

// TestUnreadCompressions: a capture compressed in a format tshark does
// not read either is refused with the format's name.
func TestUnreadCompressions(t *testing.T) {
	for _, c := range compressedFormats {
		if len(c.magic) > maxMagic {
			t.Fatalf("%s: magic of %d octets, maxMagic %d", c.name, len(c.magic), maxMagic)
		}
	}
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{[]byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46"), "compressed with xz"},
		{[]byte("BZh91AY&SY"), "compressed with bzip2"},
		{[]byte("\x02\x21\x4c\x18\x10\x00\x00\x00"), "compressed with legacy LZ4 (lz4 -l)"},
	} {
		_, err := NewFile("x.pcap", bytes.NewReader(tc.data))
		var he *HeaderError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want+" (first bytes ") || !strings.Contains(err.Error(), "decompress it first") {
			t.Errorf("% x: %v, want %q", tc.data, err, tc.want)
		}
	}
}

// TestZstdWindowBound: a zstd frame header that asks for a window over
// zstdMaxWindow (libzstd's default limit) is an error, not an allocation
// of its size; one at the limit is read.
func TestZstdWindowBound(t *testing.T) {
	raw, _ := os.ReadFile(realRXE)
	for _, tc := range []struct {
		name string
		head []byte // frame header after the magic
	}{
		// Window_Descriptor exponent 31: 2 TiB.
		{"window 2 TiB", []byte{0x00, 0xf8}},
		// Window_Descriptor exponent 18 (2^28): over the limit by one step.
		{"window 256 MiB", []byte{0x00, 0x90}},
		// Single segment, an 8-octet Frame_Content_Size of 2^40: the
		// window is the content size.
		{"content 1 TiB", []byte{0xe0, 0, 0, 0, 0, 0, 1, 0, 0}},
	} {
		data := append([]byte{0x28, 0xb5, 0x2f, 0xfd}, tc.head...)
		// A last raw block of 16 octets of a pcap header, so that only
		// the header's limit stops it.
		data = append(append(data, rawBlock(16)...), raw[:16]...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := NewFile("x.zst", bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "zstd data damaged") {
			t.Errorf("%s: %v, want the zstd decoder's refusal", tc.name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("%s: %d bytes allocated", tc.name, grew)
		}
	}
	// A window at the limit (zstd --long=27) is read.
	data := append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x88}, rawBlock(len(raw))...)
	data = append(data, raw...)
	fs, err := OpenFiles([]string{"-"}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, errs := readAll(t, fs)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	sameFrames(t, "window at the limit", got, mustRead(t, realRXE))
}

// rawBlock is the header of a last zstd block of n raw (stored) octets.
func rawBlock(n int) []byte {
	h := 1 | n<<3 // Last_Block, Block_Type 0 (raw), Block_Size
	return []byte{byte(h), byte(h >> 8), byte(h >> 16)}
}

// lowerZstdWindow bounds zstd windows at 1 MiB for a fuzz target: its
// worker runs thousands of inputs a second, and a frame header asking
// for the real limit's window costs a 256 MiB history each, which
// outgrew the worker's memory (6 GB in 35 s). The limit itself is
// TestZstdWindowBound's.
func lowerZstdWindow(f *testing.F) {
	old := zstdMaxWindow
	zstdMaxWindow = 1 << 20
	f.Cleanup(func() { zstdMaxWindow = old })
}

// FuzzCompressed: a compressed capture is read as the bytes its
// decompressor gives: the same frames, and an error from the reader
// whenever decompression fails, never a silent clean end.
func FuzzCompressed(f *testing.F) {
	raw, _ := os.ReadFile(realRXE)
	for _, kind := range compressions {
		f.Add(compressAs(f, kind, raw[:700]))
	}
	for _, name := range []string{"live-siw4-offset.pcap.zst", "siw-nfs42-rdma.tshark.pcapng.lz4"} {
		b, _ := os.ReadFile(convertedDir + name)
		f.Add(b[:min(len(b), 2048)])
	}
	lowerZstdWindow(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var format *compressedFormat
		for i := range compressedFormats {
			if c := &compressedFormats[i]; c.open != nil && bytes.HasPrefix(data, []byte(c.magic)) {
				format = c
			}
		}
		if format == nil {
			return // not compressed: FuzzFile's
		}
		// What the decompressor gives, at most 4 MiB of it.
		var plain []byte
		var derr error
		if r, err := format.open(bytes.NewReader(data)); err != nil {
			derr = err
		} else {
			plain, derr = io.ReadAll(io.LimitReader(r, 4<<20))
		}
		if len(plain) == 4<<20 {
			return
		}
		fs := openFuzzInput(t, data)
		if fs == nil {
			return
		}
		got, errs := readAll(t, fs)
		fs.Close()
		var want []Frame
		var werrs []error
		if ps, err := OpenFiles([]string{"-"}, bytes.NewReader(plain)); err == nil {
			want, werrs = readAll(t, ps)
		}
		if len(got) > len(want) {
			t.Fatalf("%d frames, the decompressed bytes hold %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].Data, want[i].Data) || got[i].Offset != want[i].Offset {
				t.Fatalf("frame %d differs from the decompressed bytes'", i+1)
			}
		}
		if derr != nil && len(errs) == 0 {
			t.Fatalf("decompression failed (%v) but %d frames were read without an error", derr, len(got))
		}
		if derr == nil && (len(got) != len(want) || len(errs) != len(werrs)) {
			t.Fatalf("%d frames, errors %v; the decompressed bytes: %d frames, errors %v", len(got), errs, len(want), werrs)
		}
	})
}
