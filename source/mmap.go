package source

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// mappedPcap reads a classic, uncompressed pcap file that is mapped into
// memory: records are sliced out of the mapping without copying, which
// saves the read system calls' copy and gopacket's per-record copy (about a
// fifth of the whole per-packet cost of "stats" on large captures). Other
// inputs (pcapng, gzip, pipes) go through gopacket's pcapgo readers.
type mappedPcap struct {
	data    []byte
	off     int
	order   binary.ByteOrder
	nanos   bool
	snaplen int
	unmap   func() error
	dropped int // pages before this offset were given back (dropPages)
}

// dropEvery is how much of the mapping is read between dropPages calls.
const dropEvery = 4 << 20

// keepResident is how much of the mapping behind the reading position is
// never given back: the frames a consumer may still be looking at (a
// Prefetch's batches in flight) lie there.
const keepResident = 2 << 20

// pcapMaxRecord is the largest record accepted when the file's snap length
// is smaller (pcapgo's eagerReadMax: writers that do not truncate to their
// declared snap length exist).
const pcapMaxRecord = 262144

// newMappedPcap parses the file header of a mapped pcap file; ok is false
// when the mapping does not hold a classic pcap header this reader takes
// (the caller falls back to pcapgo, which reports the error).
func newMappedPcap(data []byte, unmap func() error) (*mappedPcap, int, bool) {
	if len(data) < 24 {
		return nil, 0, false
	}
	m := &mappedPcap{data: data, off: 24, unmap: unmap}
	switch [4]byte(data[:4]) {
	case magicPcapMicroLE:
		m.order = binary.LittleEndian
	case magicPcapMicroBE:
		m.order = binary.BigEndian
	case magicPcapNanoLE:
		m.order, m.nanos = binary.LittleEndian, true
	case magicPcapNanoBE:
		m.order, m.nanos = binary.BigEndian, true
	default:
		return nil, 0, false
	}
	if m.order.Uint16(data[4:]) != 2 || m.order.Uint16(data[6:]) != 4 {
		return nil, 0, false
	}
	m.snaplen = int(m.order.Uint32(data[16:]))
	// The link type is the low 16 bits; the upper ones carry FCS
	// information (draft-ietf-opsawg-pcap §4).
	return m, int(m.order.Uint32(data[20:]) & 0xffff), true
}

// next returns the next record, sliced from the mapping.
func (m *mappedPcap) next() (data []byte, ts time.Time, capLen, origLen int, off int64, err error) {
	off = int64(m.off)
	rest := m.data[m.off:]
	if len(rest) == 0 {
		return nil, ts, 0, 0, off, io.EOF
	}
	if len(rest) < 16 {
		return nil, ts, 0, 0, off, fmt.Errorf("%w: record header needs 16 bytes, %d left", ErrTruncated, len(rest))
	}
	sec := int64(m.order.Uint32(rest[0:]))
	frac := int64(m.order.Uint32(rest[4:]))
	if !m.nanos {
		frac *= 1000
	}
	capLen = int(m.order.Uint32(rest[8:]))
	origLen = int(m.order.Uint32(rest[12:]))
	max := pcapMaxRecord
	if m.snaplen > max {
		max = m.snaplen
	}
	switch {
	case capLen < 0 || capLen > max:
		return nil, ts, 0, 0, off, fmt.Errorf("capture length exceeds snap length: %d > %d", capLen, m.snaplen)
	case capLen > origLen:
		return nil, ts, 0, 0, off, fmt.Errorf("capture length exceeds original packet length: %d > %d", capLen, origLen)
	case capLen > len(rest)-16:
		return nil, ts, 0, 0, off, fmt.Errorf("%w after %d bytes", ErrTruncated, len(rest))
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
	return rest[16 : 16+capLen : 16+capLen], time.Unix(sec, frac).UTC(), capLen, origLen, off, nil
}
