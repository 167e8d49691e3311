package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression is how a capture file is compressed. It is found from the
// file's first bytes (the compressed format's magic number), never from
// its name, so that stdin and a renamed file read alike. The three read
// are those Wireshark 4.x reads, as users keep captures: gzip, zstd and
// the LZ4 frame format.
type Compression uint8

const (
	// Uncompressed is a plain pcap or pcapng file.
	Uncompressed Compression = iota
	// Gzip is gzip (RFC 1952), several members read as one stream.
	Gzip
	// Zstd is Zstandard (RFC 8878), several frames read as one stream.
	Zstd
	// LZ4 is the LZ4 frame format, several frames read as one stream.
	LZ4
)

var compressionNames = [...]string{Uncompressed: "uncompressed", Gzip: "gzip", Zstd: "zstd", LZ4: "lz4"}

func (c Compression) String() string { return enum.Name("Compression", compressionNames[:], c) }

// zstdMaxWindow bounds the history a zstd frame may ask the decoder to
// keep: libzstd's default limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2^27), so
// every file the zstd command and tshark read without extra options is
// read, and a frame header that claims more (a hostile or damaged file)
// is an error instead of an allocation of gigabytes. A variable only for
// the fuzz targets (lowerZstdWindow).
var zstdMaxWindow uint64 = 1 << 27

// compressedFormat is a compressed-file format known by its magic number.
type compressedFormat struct {
	magic string
	kind  Compression // Uncompressed: recognised, not read
	name  string
	// open returns the decompressed stream of r, which starts with magic.
	open func(r *bufio.Reader) (io.Reader, error)
}

// compressedFormats are the formats found by magic: the three read, then
// others users compress captures with, which neither this tool nor tshark
// reads, named in the error instead of bare magic bytes.
var compressedFormats = []compressedFormat{
	{magic: "\x1f\x8b", kind: Gzip, name: "gzip", open: openGzip},
	{magic: "\x28\xb5\x2f\xfd", kind: Zstd, name: "zstd", open: openZstd},
	{magic: "\x04\x22\x4d\x18", kind: LZ4, name: "lz4", open: openLZ4},
	{magic: "\xfd7zXZ\x00", name: "xz"},
	{magic: "BZh", name: "bzip2"},
	{magic: "LZIP", name: "lzip"},
	{magic: "\x1f\x9d", name: "compress (.Z)"},
	{magic: "\x02\x21\x4c\x18", name: "legacy LZ4 (lz4 -l)"},
	{magic: "7z\xbc\xaf\x27\x1c", name: "7-Zip"},
	{magic: "PK\x03\x04", name: "zip"},
}

// maxMagic is the longest magic in compressedFormats.
const maxMagic = 6

func openGzip(r *bufio.Reader) (io.Reader, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("gzip header: %w", err)
	}
	gz.Multistream(true)
	return gz, nil
}

// openZstd decodes with each frame's last block split off
// (zstdLastBlocks), so that it comes out before the checks that end the
// frame.
func openZstd(r *bufio.Reader) (io.Reader, error) {
	return zstdDecoder(&zstdLastBlocks{passer: passer{r: r}})
}

// zstdDecoder decodes on the calling goroutine (concurrency 1: the
// reading goroutine already has a core of its own; more would only add
// goroutines and blocks in flight) with the window bounded by
// zstdMaxWindow, so that memory is about twice the file's window
// whatever the file's size. Not the low-memory history: it keeps the
// window plus 1 MiB and moves the whole window down every MiB decoded,
// which for a 128 MiB window (zstd --long) cost 9 s of CPU instead of
// 1.4 s on a 740 MB capture, to save 130 MB; at zstd's default levels
// (a 2 MiB window) both peak at the same 33 MB.
func zstdDecoder(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false),
		zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderMaxMemory(zstdMaxWindow))
}

// openLZ4 decodes on the calling goroutine (the library's default, kept
// explicit); the frame descriptor's block size (at most 4 MiB) bounds
// its buffers. The input is followed (lz4Ends) to tell a cut file from a
// whole one.
func openLZ4(r *bufio.Reader) (io.Reader, error) {
	in := &lz4Ends{passer: passer{r: r}}
	zr := lz4.NewReader(in)
	if err := zr.Apply(lz4.ConcurrencyOption(1)); err != nil {
		return nil, err
	}
	return lz4Reader{zr, in}, nil
}

// decompress looks for a compressed format's magic at the start of br. It
// returns nil for a file that is not compressed (to be read as it is), the
// decompressed stream for a format read, and an error for one that is not.
func decompress(br *bufio.Reader) (*decompressed, error) {
	head, _ := br.Peek(8)
	// Skippable frames first (pzstd writes one before each frame): the
	// format is the next frame's, zstd or LZ4, which share them.
	at := 0
	for len(head) >= at+8 && binary.LittleEndian.Uint32(head[at:])&skippableMask == skippableMagic {
		at += 8 + int(binary.LittleEndian.Uint32(head[at+4:]))
		head, _ = br.Peek(min(at+maxMagic, br.Size()))
	}
	next := head[min(at, len(head)):]
	for i := range compressedFormats {
		c := &compressedFormats[i]
		if !bytes.HasPrefix(next, []byte(c.magic)) || at > 0 && c.kind != Zstd && c.kind != LZ4 {
			continue
		}
		if c.open == nil {
			return nil, fmt.Errorf("compressed with %s (first bytes % x): not read; decompress it first", c.name, head[:min(len(head), maxMagic)])
		}
		r, err := c.open(br)
		if err != nil {
			return nil, err
		}
		return &decompressed{r: r, kind: c.kind}, nil
	}
	return nil, nil
}

// decompressed is a decompressor's output. Its first error other than
// io.EOF is kept, naming the compression: the capture readers take a
// short read for a cut record, and File.Next tells from err whether the
// compressed data was damaged rather than cut.
type decompressed struct {
	r    io.Reader
	kind Compression
	err  error // sticky: the decompressors are not read after an error
}

func (d *decompressed) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	switch {
	case err == nil:
	case err == io.EOF:
		d.err = io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		d.err = cutError{d.kind}
	default:
		d.err = fmt.Errorf("%v data damaged: %w", d.kind, err)
	}
	if d.err != nil {
		if c, ok := d.r.(interface{ Close() }); ok {
			// zstd's decoder: its buffers are not needed again.
			c.Close()
		}
	}
	return n, d.err
}

// failed is why decompression stopped before the end of the data (the
// compressed file cut short, or damaged); nil while it has not, and for a
// file that is not compressed (d nil).
func (d *decompressed) failed() error {
	if d == nil || d.err == io.EOF {
		return nil
	}
	return d.err
}

// cutError is compressed data that ends before its end: a cut record
// (ErrTruncated) wherever it ends, also after the last whole record, in
// the format's end mark or checksum (tshark: "cut short in the middle of
// a packet").
type cutError struct{ kind Compression }

func (e cutError) Error() string { return fmt.Sprintf("%v data cut short", e.kind) }
func (e cutError) Is(target error) bool {
	return target == ErrTruncated || target == io.ErrUnexpectedEOF
}

// damaged is the compressed data's damage when decompression failed for
// another reason than the file's end (a corrupt block, a checksum that
// differs, garbage after the last frame); nil otherwise, when what the
// capture readers found (a cut record, a clean end) stands.
func (d *decompressed) damaged() error {
	if err := d.failed(); err != nil && !errors.Is(err, ErrTruncated) {
		return err
	}
	return nil
}
