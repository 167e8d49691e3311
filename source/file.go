package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
)

// Format is a capture file format.
type Format uint8

const (
	// FormatPcap is the classic libpcap format (either byte order, µs or ns).
	FormatPcap Format = iota + 1
	// FormatPcapNG is pcapng, possibly with several sections and interfaces
	// of different link types.
	FormatPcapNG
)

var formatNames = [...]string{FormatPcap: "pcap", FormatPcapNG: "pcapng"}

func (f Format) String() string { return enum.Name("Format", formatNames[:], f) }

// File magics, as the first four bytes appear in the file.
var (
	magicPcapNG       = [4]byte{0x0a, 0x0d, 0x0d, 0x0a}
	errNotACapture    = errors.New("not a pcap or pcapng capture")
	errEmptyFile      = errors.New("empty file: no capture file header")
	errShortPcapMagic = errors.New("file too short for a capture file header")
)

// readBufferSize is the read-ahead of a capture file.
const readBufferSize = 256 << 10

// countingReader counts the bytes read through it, so a record's file
// offset is known although the readers buffer ahead.
type countingReader struct {
	r io.Reader
	n atomic.Int64 // read by progress bars from another goroutine
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// File is one capture being read.
type File struct {
	name     string
	format   Format
	dec      *decompressed // nil: not compressed
	closer   io.Closer
	raw      *countingReader // bytes of the file itself (compressed, if it is)
	stream   *countingReader // bytes of the capture (decompressed)
	buf      *bufio.Reader   // what the readers read from: stream, buffered
	pcap     *pcapStream
	ng       *ngReader
	linkType int
	size     int64 // file size on disk, 0 if unknown (stdin)
	frames   int   // frames read from this file
	mapped   *mappedPcap
	// waker is the opened file, set once at Open, for wake (which runs
	// on another goroutine: closer is cleared when the file is done).
	waker deadliner
}

// Open opens a capture file by name; "-" reads stdin. The format is found
// from the first bytes: a compression (see Compression), then pcap or
// pcapng inside. A file whose header cannot be read is a *HeaderError.
func Open(name string, stdin io.Reader) (*File, error) {
	var r io.Reader
	var closer io.Closer
	var size int64
	if name == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, &HeaderError{File: name, Err: err}
		}
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				f.Close()
				return nil, &HeaderError{File: name, Err: errors.New("is a directory")}
			}
			size = st.Size()
		}
		r, closer = f, f
		if data, unmap, ok := mmapFile(f, size); ok {
			if m, lt, ok := newMappedPcap(data, unmap); ok {
				file := &File{name: name, format: FormatPcap, closer: f, raw: &countingReader{r: f},
					linkType: lt, size: size, mapped: m}
				file.raw.n.Store(int64(m.off))
				return file, nil
			}
			unmap()
		}
	}
	file, err := NewFile(name, r)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return nil, err
	}
	file.closer = closer
	file.size = size
	file.waker, _ = closer.(deadliner)
	return file, nil
}

// NewFile reads a capture from r; name is used in errors and frames.
func NewFile(name string, r io.Reader) (*File, error) {
	f := &File{name: name, raw: &countingReader{r: r}}
	herr := func(err error) error {
		if derr := f.dec.failed(); derr != nil {
			// The decompressor knows why the header is not there.
			err = derr
		} else if errors.Is(err, io.EOF) && f.stream != nil && f.stream.n.Load() == 0 {
			err = errEmptyFile
		} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: file ends inside the capture file header", errShortPcapMagic)
		}
		return &HeaderError{File: name, Err: err}
	}
	outer := bufio.NewReaderSize(f.raw, readBufferSize)
	dec, err := decompress(outer)
	switch {
	case err != nil:
		return nil, &HeaderError{File: name, Err: err}
	case dec != nil:
		f.dec = dec
		f.stream = &countingReader{r: dec}
		f.buf = bufio.NewReaderSize(f.stream, readBufferSize)
	case f.raw.n.Load() == 0:
		return nil, &HeaderError{File: name, Err: errEmptyFile}
	default:
		// No second buffer: the stream is the file itself.
		f.stream = f.raw
		f.buf = outer
	}
	m, err := f.buf.Peek(4)
	if err != nil {
		return nil, herr(err)
	}
	var magic [4]byte
	copy(magic[:], m)
	_, _, pcap := pcapMagic(m)
	switch {
	case pcap:
		pr, err := newPcapStream(f.buf)
		if err != nil {
			return nil, herr(fmt.Errorf("pcap file header: %w", err))
		}
		f.format, f.pcap, f.linkType = FormatPcap, pr, pr.linkType
	case magic == magicPcapNG:
		nr, err := newNgReader(f.buf, f.offset)
		if err != nil {
			return nil, herr(fmt.Errorf("pcapng section header: %w", err))
		}
		f.format, f.ng = FormatPcapNG, nr
		if len(nr.ifaces) > 0 {
			f.linkType = nr.ifaces[0].linkType
		}
	default:
		return nil, &HeaderError{File: name, Err: fmt.Errorf("%w (first bytes % x)", errNotACapture, m)}
	}
	return f, nil
}

// Name is the file name given to Open ("-" for stdin).
func (f *File) Name() string { return f.name }

// Format is the file's capture format.
func (f *File) Format() Format { return f.format }

// Compression is how the file is compressed.
func (f *File) Compression() Compression {
	if f.dec == nil {
		return Uncompressed
	}
	return f.dec.kind
}

// LinkType is the link type of the file (of its first interface for pcapng;
// frames carry their own).
func (f *File) LinkType() int { return f.linkType }

// Size is the file's size on disk, 0 when unknown (stdin).
func (f *File) Size() int64 { return f.size }

// BytesRead is how far into the file (on disk, compressed if it is) reading
// has got, for progress reports.
func (f *File) BytesRead() int64 { return f.raw.n.Load() }

// offset is the position in the capture stream of the next unread byte.
func (f *File) offset() int64 { return f.stream.n.Load() - int64(f.buf.Buffered()) }

// Next reads the next frame into fr, numbering it number. It returns io.EOF
// at the clean end of the file and a *RecordError for a damaged record.
func (f *File) Next(fr *Frame, number int) error {
	if m := f.mapped; m != nil {
		err := m.next(fr)
		if err != nil || f.frames%64 == 0 {
			// For progress bars: an atomic store per frame was a
			// visible cost; at the end of the file the count is exact.
			f.raw.n.Store(int64(m.off))
		}
		if err != nil {
			return f.mappedErr(fr, number, err)
		}
		f.frames++
		fr.Source, fr.Number = f.name, number
		return nil
	}
	var off int64
	var err error
	if f.ng != nil {
		err = f.ng.next(fr)
		off = f.ng.at
	} else {
		off = f.offset() + int64(f.pcap.pending)
		err = f.pcap.next(fr)
	}
	if err != nil {
		if err == io.EOF {
			if err = f.dec.failed(); err == nil {
				return io.EOF
			}
			// Every record was whole, but the compressed data
			// after them is cut or damaged (a checksum, garbage).
			return &RecordError{File: f.name, Frame: number, Offset: off, Err: err,
				CaptureLength: -1, Length: -1, LinkType: -1}
		}
		re := &RecordError{File: f.name, Frame: number, Offset: off, Err: err,
			CaptureLength: -1, Length: -1, LinkType: -1}
		var be *blockError
		if errors.As(err, &be) {
			re.Err = be.err
			if be.frame != nil {
				re.Time, re.CaptureLength, re.Length, re.LinkType = be.frame.Time, be.frame.CaptureLength, be.frame.Length, be.frame.LinkType
			}
		} else {
			re.Time, re.CaptureLength, re.Length, re.LinkType = fr.Time, fr.CaptureLength, fr.Length, fr.LinkType
		}
		if derr := f.dec.damaged(); derr != nil {
			// The reader saw a short read; the decompressor says why.
			re.Err = derr
		}
		return re
	}
	f.frames++
	fr.Source = f.name
	fr.Number = number
	fr.Offset = off
	return nil
}

// mappedErr is Next's error for a mapped file's record that next could not
// read (err; fr holds what its header said).
//
//go:noinline
func (f *File) mappedErr(fr *Frame, number int, err error) error {
	if err == io.EOF {
		return io.EOF
	}
	return &RecordError{File: f.name, Frame: number, Offset: fr.Offset, Err: err,
		Time: fr.Time, CaptureLength: fr.CaptureLength, Length: fr.Length, LinkType: f.linkType}
}

// Ready reports whether the next frame (or the end of the file) can be
// read without waiting for input: a pipe's reader flushes its output when
// it cannot.
func (f *File) Ready() bool {
	switch {
	case f.mapped != nil:
		return true
	case f.ng != nil:
		return f.ng.ready()
	}
	return f.pcap.ready()
}

// InterfaceStats are the counts of the file's Interface Statistics Blocks
// read so far (pcapng), one per interface, in the order first seen.
func (f *File) InterfaceStats() []InterfaceStats {
	if f.ng == nil {
		return nil
	}
	out := append([]InterfaceStats(nil), f.ng.stats...)
	for i := range out {
		out[i].File = f.name
	}
	return out
}

// Names are the host names of the file's Name Resolution Blocks read so
// far (pcapng), by address; nil when there are none.
func (f *File) Names() map[netip.Addr][]string {
	if f.ng == nil {
		return nil
	}
	return f.ng.names
}

// deadliner is an *os.File (a pipe or FIFO can be woken from a read
// through a deadline).
type deadliner interface{ SetReadDeadline(time.Time) error }

// wake makes a read of the file waiting for input return (Files.Stop).
func (f *File) wake() {
	if f.waker != nil {
		f.waker.SetReadDeadline(time.Now())
	}
}

// closeKeepMapping closes the file descriptor but leaves a mapping in
// place, returning the function that removes it (nil if not mapped).
func (f *File) closeKeepMapping() func() error {
	var unmap func() error
	if f.mapped != nil {
		unmap, f.mapped.unmap = f.mapped.unmap, nil
	}
	if f.closer != nil {
		f.closer.Close()
		f.closer = nil
	}
	return unmap
}

// Close closes the underlying file (not stdin) and unmaps it. Frame data
// from a mapped file is invalid after Close.
func (f *File) Close() error {
	if f.mapped != nil && f.mapped.unmap != nil {
		f.mapped.unmap()
		f.mapped.unmap = nil
	}
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}
