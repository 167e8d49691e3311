package source

import (
	"fmt"
	"io"
)

// mappedPcap reads a classic, uncompressed pcap file that is mapped into
// memory: records are sliced out of the mapping without copying, which
// saves the read system calls' copy and gopacket's per-record copy (about a
// fifth of the whole per-packet cost of "stats" on large captures). Other
// inputs (pcapng, gzip, pipes) are read from a buffer (pcapStream,
// ngReader).
type mappedPcap struct {
	pcapFile
	data    []byte
	off     int
	unmap   func() error
	dropped int // pages before this offset were given back (dropPages)
}

// dropEvery is how much of the mapping is read between dropPages calls.
const dropEvery = 4 << 20

// keepResident is how much of the mapping behind the reading position is
// never given back: the frames a consumer may still be looking at (a
// Prefetch's batches in flight) lie there.
const keepResident = 2 << 20

// newMappedPcap parses the file header of a mapped pcap file; ok is false
// when the mapping does not hold a classic pcap header this reader takes
// (the caller falls back to the stream reader, which reports the error,
// or reads the variants whose record headers are not 16 octets).
func newMappedPcap(data []byte, unmap func() error) (*mappedPcap, int, bool) {
	h, err := parsePcapHeader(data)
	if err != nil || h.recLen != 16 || h.lens != lensAsIs {
		return nil, 0, false
	}
	return &mappedPcap{pcapFile: h, data: data, off: h.hdrLen, unmap: unmap}, h.linkType, true
}

// next slices the next record out of the mapping into fr (all of fr but
// Source and Number, which the caller sets). On an error fr holds the
// record header's timestamp and lengths when it could be read (lengths
// -1 when not). The common record is filled here in one pass; the others
// (the end, a damaged record) go to bad, apart, so that this stays small.
func (m *mappedPcap) next(fr *Frame) error {
	off := m.off
	rest := m.data[off:]
	if len(rest) >= 16 {
		ts, capLen, origLen, err := m.record(rest)
		if err == nil && capLen <= len(rest)-16 {
			m.off = off + 16 + capLen
			if m.off-m.dropped > dropEvery {
				m.drop()
			}
			*fr = Frame{Time: ts, CaptureLength: capLen, Length: origLen, LinkType: m.linkType,
				Data: rest[16 : 16+capLen : 16+capLen], Offset: int64(off)}
			return nil
		}
	}
	return m.bad(fr, rest)
}

// bad is next's error (or io.EOF) for the record at the end of the
// mapping, rest.
//
//go:noinline
func (m *mappedPcap) bad(fr *Frame, rest []byte) error {
	*fr = Frame{CaptureLength: -1, Length: -1, LinkType: m.linkType, Offset: int64(m.off)}
	switch {
	case len(rest) == 0:
		return io.EOF
	case len(rest) < 16:
		return fmt.Errorf("%w: record header needs 16 bytes, %d left", ErrTruncated, len(rest))
	}
	ts, capLen, origLen, err := m.record(rest)
	fr.Time, fr.CaptureLength, fr.Length = ts, capLen, origLen
	if err != nil {
		return err
	}
	return fmt.Errorf("%w after %d bytes", ErrTruncated, len(rest))
}

// drop gives back the pages read, but the last keepResident octets: the
// frame just returned, and those handed over before it, lie there.
func (m *mappedPcap) drop() {
	end := (m.off - keepResident) &^ (1<<16 - 1)
	if end > m.dropped {
		dropPages(m.data[m.dropped:end])
		m.dropped = end
	}
}
