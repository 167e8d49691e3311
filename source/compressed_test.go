package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
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

// TestCompressedCut cuts the files the compression tools wrote, and
// files of several frames or members the libraries wrote, at every block
// boundary (±1), inside the checksums that end them and at points between:
// the frames read are exactly those the decodable part holds whole (the
// octets of the blocks wholly before the cut, as a plain capture cut
// there reads them), then one error: a RecordError that the data was cut
// short at the next frame's number and offset, or a HeaderError naming
// the file when not even the capture's header could be decompressed.
func TestCompressedCut(t *testing.T) {
	inputs := compressedInputs(t)
	dir := t.TempDir()
	for name, data := range inputs {
		kind := compressionOf(t, data)
		prefix := decodable(t, kind, data)
		whole := prefix(len(data))
		if len(whole) == 0 {
			t.Fatalf("%s: nothing decompressed", name)
		}
		seen := map[int]bool{}
		for _, at := range cutPoints(kind, data) {
			if at <= 0 || at >= len(data) || seen[at] {
				continue
			}
			seen[at] = true
			plain := prefix(at)
			want, wantErrs, wantOpen := readPlain(t, plain)
			cut := filepath.Join(dir, fmt.Sprintf("%s@%d", name, at))
			if err := os.WriteFile(cut, data[:at], 0o644); err != nil {
				t.Fatal(err)
			}
			fs, err := OpenFiles([]string{cut}, nil)
			if err != nil {
				var he *HeaderError
				if !errors.As(err, &he) || !strings.Contains(err.Error(), cut) {
					t.Fatalf("%s: %v, want a HeaderError naming the file", cut, err)
				}
				if wantOpen == nil {
					t.Fatalf("%s: not opened (%v); the %d octets decompressed open", cut, err, len(plain))
				}
				continue
			}
			if wantOpen != nil {
				t.Fatalf("%s: opened; the %d octets decompressed do not (%v)", cut, len(plain), wantOpen)
			}
			got, errs := readAll(t, fs)
			fs.Close()
			if len(got) != len(want) {
				t.Fatalf("%s: %d frames, the %d octets decompressed hold %d (errors %v)", cut, len(got), len(plain), len(want), errs)
			}
			for i := range got {
				if !bytes.Equal(got[i].Data, want[i].Data) || got[i].Offset != want[i].Offset {
					t.Fatalf("%s: frame %d differs from the decompressed octets'", cut, i+1)
				}
			}
			if len(errs) == 0 && len(got) == len(want) && bytes.Equal(data[at:], skippable) {
				continue // only the last skippable frame cut off
			}
			var re *RecordError
			if len(errs) != 1 || !errors.As(errs[0], &re) || !errors.Is(re, ErrTruncated) || re.Frame != len(got)+1 ||
				!strings.Contains(re.Error(), cut) {
				t.Fatalf("%s: %d frames, errors %v: want one cut record at frame %d naming the file", cut, len(got), errs, len(got)+1)
			}
			if len(wantErrs) > 0 {
				var pe *RecordError
				if !errors.As(wantErrs[0], &pe) || pe.Frame != re.Frame || pe.Offset != re.Offset {
					t.Fatalf("%s: %v; the decompressed octets: %v", cut, re, wantErrs)
				}
			} else if len(got) > 0 && re.Offset <= got[len(got)-1].Offset {
				t.Fatalf("%s: cut at offset %d, after frame %d at %d", cut, re.Offset, len(got), got[len(got)-1].Offset)
			}
		}
	}
}

// skippable is a skippable frame (zstd's and LZ4's) of 3 octets.
var skippable = []byte{0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}

// compressedInputs are the files the compression tools wrote, and
// streams of several frames (members) the libraries wrote, split inside a
// record: two of each format, and zstd's and LZ4's with skippable frames
// (which the two share) before, between and after them.
func compressedInputs(t *testing.T) map[string][]byte {
	inputs := map[string][]byte{}
	for path := range compressedConverted(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(path)] = data
	}
	raw, _ := os.ReadFile(realRXE)
	half := 24 + (len(raw)-24)/2
	for _, kind := range compressions {
		inputs[fmt.Sprintf("two-%v", kind)] = append(compressAs(t, kind, raw[:half]), compressAs(t, kind, raw[half:])...)
	}
	for _, kind := range []Compression{Zstd, LZ4} {
		inputs[fmt.Sprintf("skippable-%v", kind)] = slices.Concat(skippable, compressAs(t, kind, raw[:half]), skippable, compressAs(t, kind, raw[half:]), skippable)
	}
	return inputs
}

// inSkipped tells whether data[at] is what a skippable frame of data
// skips.
func inSkipped(data []byte, at int) bool {
	for i := 0; ; i++ {
		k := bytes.Index(data[i:], skippable)
		if k < 0 {
			return false
		}
		if i += k; at >= i+8 && at < i+len(skippable) {
			return true
		}
	}
}

// compressionOf is the compression data starts with.
func compressionOf(t *testing.T, data []byte) Compression {
	t.Helper()
	d, err := decompress(bufio.NewReader(bytes.NewReader(data)))
	if err != nil || d == nil {
		t.Fatalf("not compressed in a format read: %v", err)
	}
	return d.kind
}

// readPlain reads decompressed octets as a plain capture: its frames and
// errors, or why it does not open.
func readPlain(t *testing.T, plain []byte) ([]Frame, []error, error) {
	t.Helper()
	fs, err := OpenFiles([]string{"-"}, bytes.NewReader(plain))
	if err != nil {
		return nil, nil, err
	}
	defer fs.Close()
	frames, errs := readAll(t, fs)
	return frames, errs, nil
}

// decodable returns what a decompressor can give of data[:at]: for gzip
// and LZ4 what their libraries give of it (they give each octet, or
// block, as it is decoded); for zstd the octets of the blocks that end by
// at, as the library decoded them from the whole of data.
func decodable(t *testing.T, kind Compression, data []byte) func(at int) []byte {
	t.Helper()
	if kind == Zstd {
		ends := zstdBlockEnds(data)
		out, sizes := zstdBlockOutput(t, data, ends)
		return func(at int) []byte {
			if i := sort.SearchInts(ends, at+1) - 1; i >= 0 {
				return out[:sizes[i]]
			}
			return nil
		}
	}
	return func(at int) []byte {
		var r io.Reader = lz4.NewReader(bytes.NewReader(data[:at]))
		if kind == Gzip {
			zr, err := gzip.NewReader(bytes.NewReader(data[:at]))
			if err != nil {
				return nil
			}
			r = zr
		}
		out, _ := io.ReadAll(r)
		return out
	}
}

// cutPoints are where TestCompressedCut cuts data: around each block's
// end (the zstd and LZ4 blocks; deflate's end at any bit) and in the
// checksums that end the formats, and at 32 points between.
func cutPoints(kind Compression, data []byte) []int {
	var ends []int
	switch kind {
	case Zstd:
		ends = zstdBlockEnds(data)
	case LZ4:
		ends = lz4BlockEnds(data)
	}
	var at []int
	for _, e := range ends {
		at = append(at, e-1, e, e+1, e+2, e+4)
	}
	for i := 1; i <= 9; i++ {
		at = append(at, len(data)-i)
	}
	for i := 1; i < 32; i++ {
		at = append(at, len(data)*i/32)
	}
	return at
}

// lz4BlockEnds walks the frames of an LZ4 frame-format stream (lz4's
// doc/lz4_Frame_format.md): where each block (its checksum included)
// ends. Skippable frames are passed over.
func lz4BlockEnds(b []byte) []int {
	var ends []int
	le := binary.LittleEndian
	for off := 0; off+8 <= len(b); {
		magic := le.Uint32(b[off:])
		if magic&^0xf == 0x184d2a50 {
			off += 8 + int(le.Uint32(b[off+4:]))
			continue
		}
		if magic != 0x184d2204 {
			break
		}
		flg := b[off+4]
		off += 7 // magic, FLG, BD, HC
		if flg&0x08 != 0 {
			off += 8 // Content Size
		}
		if flg&0x01 != 0 {
			off += 4 // Dictionary ID
		}
		for {
			if off+4 > len(b) {
				return ends
			}
			size := int(le.Uint32(b[off:]) &^ (1 << 31))
			off += 4
			if size == 0 {
				break // EndMark
			}
			off += size
			if flg&0x10 != 0 {
				off += 4 // Block Checksum
			}
			if off > len(b) {
				return ends
			}
			ends = append(ends, off)
		}
		if flg&0x04 != 0 {
			off += 4 // Content Checksum
		}
	}
	return ends
}

// zstdBlockEnds walks the frames of a zstd stream (RFC 8878 §3.1): where
// each block's octets end. Skippable frames are passed over; the walk
// stops at anything else or at a block that runs past the data.
func zstdBlockEnds(b []byte) []int {
	var ends []int
	le := binary.LittleEndian
	for off := 0; off+8 <= len(b); {
		magic := le.Uint32(b[off:])
		if magic&^0xf == 0x184d2a50 {
			off += 8 + int(le.Uint32(b[off+4:]))
			continue
		}
		if magic != 0xfd2fb528 {
			break
		}
		fhd := b[off+4]
		fcs := []int{0, 2, 4, 8}[fhd>>6]
		single := fhd&0x20 != 0
		if single && fcs == 0 {
			fcs = 1
		}
		off += 5 + fcs + []int{0, 1, 2, 4}[fhd&3]
		if !single {
			off++ // Window_Descriptor
		}
		for last := false; !last; {
			if off+3 > len(b) {
				return ends
			}
			h := int(b[off]) | int(b[off+1])<<8 | int(b[off+2])<<16
			size := h >> 3
			if h>>1&3 == 1 {
				size = 1 // RLE
			}
			off += 3 + size
			if off > len(b) {
				return ends
			}
			ends = append(ends, off)
			last = h&1 != 0
		}
		if fhd&4 != 0 {
			off += 4 // Content_Checksum
		}
	}
	return ends
}

// zstdBlockOutput decodes data with the library alone, through a reader
// that counts the compressed octets taken: sizes[i] is the decompressed
// length up to the end of block i (ends[i]). The library reads a block
// whole before it decodes it, reads no further before its octets are
// read (but a last block's checksum), and a Read gives the octets of one
// block: those of the last block whose end was taken.
func zstdBlockOutput(t *testing.T, data []byte, ends []int) (out []byte, sizes []int) {
	t.Helper()
	cr := &countingReader{r: bytes.NewReader(data)}
	dec, err := zstd.NewReader(cr, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	sizes = make([]int, len(ends))
	buf := make([]byte, 512)
	for {
		n, err := dec.Read(buf)
		out = append(out, buf[:n]...)
		if i := sort.SearchInts(ends, int(cr.n.Load())+1) - 1; n > 0 && i >= 0 {
			sizes[i] = len(out)
		}
		if err != nil {
			break
		}
	}
	for i := 1; i < len(sizes); i++ {
		sizes[i] = max(sizes[i], sizes[i-1])
	}
	return out, sizes
}

// TestCompressedDamaged flips octets of the compressed inputs: never
// read silently as whole (each format has a checksum of the content,
// which the tools write), the error names the file, and every frame the
// blocks before the damage hold whole is read, as it is.
func TestCompressedDamaged(t *testing.T) {
	dir := t.TempDir()
	for name, data := range compressedInputs(t) {
		prefix := decodable(t, compressionOf(t, data), data)
		for i := 1; i < 24; i++ {
			at := 4 + (len(data)-4)*i/24
			bad := bytes.Clone(data)
			bad[at] ^= 0x5a
			p := filepath.Join(dir, fmt.Sprintf("%s^%d", name, at))
			if err := os.WriteFile(p, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			want, _, _ := readPlain(t, prefix(at))
			fs, err := OpenFiles([]string{p}, nil)
			if err != nil {
				if !strings.Contains(err.Error(), p) || len(want) > 0 {
					t.Fatalf("%s: %v: not opened, or not named (%d frames before the damage)", p, err, len(want))
				}
				continue
			}
			got, errs := readAll(t, fs)
			fs.Close()
			if len(errs) == 0 && !inSkipped(data, at) {
				t.Fatalf("%s: a damaged file read without an error (%d frames)", p, len(got))
			}
			for _, err := range errs {
				if !strings.Contains(err.Error(), p) {
					t.Fatalf("%s: %v does not name the file", p, err)
				}
			}
			if len(got) < len(want) {
				t.Fatalf("%s: %d frames, the blocks before the damage hold %d", p, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i].Data, want[i].Data) || got[i].Offset != want[i].Offset {
					t.Fatalf("%s: frame %d differs from the undamaged file's", p, i+1)
				}
			}
		}
	}
	// Damage the decompressor finds is named as such, not as a cut, after
	// every frame: a checksum that differs, or a declared content size
	// (zstd's, in the frame header the library writes) that does.
	raw, _ := os.ReadFile(realRXE)
	whole := mustRead(t, realRXE)
	for _, tc := range []struct {
		kind Compression
		at   func(data []byte) int
		what string
	}{
		{Gzip, func(d []byte) int { return len(d) - 6 }, "CRC-32"},
		{Gzip, func(d []byte) int { return len(d) - 2 }, "ISIZE"},
		{Zstd, func(d []byte) int { return len(d) - 2 }, "checksum"},
		{Zstd, func(d []byte) int { return 5 }, "Frame_Content_Size"},
		{LZ4, func(d []byte) int { return len(d) - 2 }, "content checksum"},
	} {
		data := compressAs(t, tc.kind, raw)
		data[tc.at(data)] ^= 0x01
		fs, err := OpenFiles([]string{"-"}, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%v %s: %v", tc.kind, tc.what, err)
		}
		got, errs := readAll(t, fs)
		var re *RecordError
		if len(errs) != 1 || !errors.As(errs[0], &re) || errors.Is(re, ErrTruncated) || !strings.Contains(re.Error(), tc.kind.String()+" data damaged") ||
			re.Frame != len(whole)+1 {
			t.Fatalf("%v %s: %v", tc.kind, tc.what, errs)
		}
		sameFrames(t, fmt.Sprintf("%v %s", tc.kind, tc.what), got, whole)
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
		// Two frames (members), zstd's and LZ4's after a skippable one.
		two := append(compressAs(f, kind, raw[:300]), compressAs(f, kind, raw[300:700])...)
		if kind != Gzip {
			two = append(bytes.Clone(skippable), two...)
		}
		f.Add(two)
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
		if r, err := format.open(bufio.NewReader(bytes.NewReader(data))); err != nil {
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
		// What the readers pass the libraries changes no octet: the
		// library alone gives a prefix of the same octets (zstd's holds a
		// frame's last block back until its checks pass), and all of
		// them when it ends cleanly. Only LZ4's cut before a block's
		// length or the checksum, which the library takes for the end,
		// is an error here.
		var lib io.Reader
		var lerr error
		switch format.kind {
		case Zstd:
			lib, lerr = zstdDecoder(bytes.NewReader(data))
		case LZ4:
			lib = lz4.NewReader(bytes.NewReader(data))
		case Gzip:
			return
		}
		var alone []byte
		if lerr == nil {
			alone, lerr = io.ReadAll(io.LimitReader(lib, 4<<20))
		}
		if !bytes.HasPrefix(plain, alone) {
			t.Fatalf("%d octets decompressed, the library alone gives %d, not their prefix (%v)", len(plain), len(alone), lerr)
		}
		if lerr == nil && len(alone) < 4<<20 && (!bytes.Equal(plain, alone) || derr != nil && !(format.kind == LZ4 && errors.Is(derr, io.ErrUnexpectedEOF))) {
			t.Fatalf("%d octets decompressed (%v), the library alone gives %d cleanly", len(plain), derr, len(alone))
		}
		if derr == nil && lerr != nil {
			t.Fatalf("decompressed cleanly, the library alone fails: %v", lerr)
		}
	})
}
