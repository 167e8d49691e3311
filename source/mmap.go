package source

import (
	"fmt"
	"io"
	"time"
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
// (the caller falls back to the stream reader, which reports the error).
func newMappedPcap(data []byte, unmap func() error) (*mappedPcap, int, bool) {
	h, err := parsePcapHeader(data)
	if err != nil {
		return nil, 0, false
	}
	return &mappedPcap{pcapFile: h, data: data, off: 24, unmap: unmap}, h.linkType, true
}

// next returns the next record, sliced from the mapping. On an error the
// timestamp and lengths are the record header's when it could be read
// (lengths -1 when not).
func (m *mappedPcap) next() (data []byte, ts time.Time, capLen, origLen int, off int64, err error) {
	off = int64(m.off)
	rest := m.data[m.off:]
	if len(rest) == 0 {
		return nil, ts, 0, 0, off, io.EOF
	}
	if len(rest) < 16 {
		return nil, ts, -1, -1, off, fmt.Errorf("%w: record header needs 16 bytes, %d left", ErrTruncated, len(rest))
	}
	ts, capLen, origLen, err = m.record(rest)
	if err != nil {
		return nil, ts, capLen, origLen, off, err
	}
	if capLen > len(rest)-16 {
		return nil, ts, capLen, origLen, off, fmt.Errorf("%w after %d bytes", ErrTruncated, len(rest))
	}
	m.off += 16 + capLen
	if m.off-m.dropped > dropEvery {
		// Keep the last keepResident octets: the frame just returned,
		// and those handed over before it, lie there.
		end := (m.off - keepResident) &^ (1<<16 - 1)
		if end > m.dropped {
			dropPages(m.data[m.dropped:end])
			m.dropped = end
		}
	}
	return rest[16 : 16+capLen : 16+capLen], ts, capLen, origLen, off, nil
}
