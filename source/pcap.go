package source

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"
)

// pcapFile is what a classic pcap file header says about its records
// (draft-ietf-opsawg-pcap §4).
type pcapFile struct {
	// big: the file's numbers are big-endian (read by u32 with direct
	// loads: through a binary.ByteOrder each was a dynamic call, four per
	// record header).
	big      bool
	nanos    bool
	linkType int
}

// parsePcapHeader reads the 24-byte file header b.
func parsePcapHeader(b []byte) (pcapFile, error) {
	var h pcapFile
	if len(b) < 24 {
		return h, fmt.Errorf("%w: file ends inside the capture file header", errShortPcapMagic)
	}
	switch [4]byte(b[:4]) {
	case magicPcapMicroLE:
	case magicPcapMicroBE:
		h.big = true
	case magicPcapNanoLE:
		h.nanos = true
	case magicPcapNanoBE:
		h.big, h.nanos = true, true
	default:
		return h, fmt.Errorf("%w (first bytes % x)", errNotACapture, b[:4])
	}
	if major, minor := h.u16(b[4:]), h.u16(b[6:]); major != 2 || minor != 4 {
		return h, fmt.Errorf("pcap version %d.%d (2.4 is read)", major, minor)
	}
	// The link type is the low 16 bits; the upper ones carry FCS
	// information (draft-ietf-opsawg-pcap §4).
	h.linkType = int(h.u32(b[20:]) & 0xffff)
	return h, nil
}

// u16 and u32 read a number of the file's byte order.
func (h *pcapFile) u16(b []byte) uint16 {
	if h.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (h *pcapFile) u32(b []byte) uint32 {
	v := binary.LittleEndian.Uint32(b)
	if h.big {
		v = bits.ReverseBytes32(v)
	}
	return v
}

// record reads the 16-byte record header b: the timestamp and lengths,
// and an error for a captured length over maxPacket or over the original
// length (the timestamp and lengths are set then too). The file's snap
// length is not a limit: writers that do not cut to their declared snap
// length exist, and wiretap and libpcap read their records.
func (h *pcapFile) record(b []byte) (ts time.Time, capLen, origLen int, err error) {
	b = b[:16]
	sec := int64(h.u32(b[0:]))
	frac := int64(h.u32(b[4:]))
	if !h.nanos {
		frac *= 1000
	}
	capLen = int(h.u32(b[8:]))
	origLen = int(h.u32(b[12:]))
	if capLen > maxPacket || capLen > origLen {
		err = h.badLengths(capLen, origLen)
	}
	return time.Unix(sec, frac).UTC(), capLen, origLen, err
}

// badLengths is record's error (apart, so that record stays small enough
// to be inlined in the readers' loops).
func (h *pcapFile) badLengths(capLen, origLen int) error {
	if capLen > maxPacket {
		return fmt.Errorf("captured length %d is over the %d-byte limit", capLen, maxPacket)
	}
	return fmt.Errorf("capture length exceeds original packet length: %d > %d", capLen, origLen)
}

// pcapStream reads a classic pcap file from a buffered stream (pipes,
// stdin, gzip; mapped files go through mappedPcap).
type pcapStream struct {
	pcapFile
	buf     *bufio.Reader
	scratch []byte
	// pending is what the last frame still holds in buf, consumed at the
	// next call.
	pending int
}

func newPcapStream(buf *bufio.Reader) (*pcapStream, error) {
	b, err := buf.Peek(24)
	if len(b) < 24 {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	h, err := parsePcapHeader(b)
	if err != nil {
		return nil, err
	}
	buf.Discard(24)
	return &pcapStream{pcapFile: h, buf: buf}, nil
}

// next reads the next record into fr (Data aliases the stream's buffer
// until the next call). io.EOF at a clean end; otherwise an error with fr
// holding what the record header said (lengths -1 when it is cut).
func (p *pcapStream) next(fr *Frame) error {
	if p.pending > 0 {
		p.buf.Discard(p.pending)
		p.pending = 0
	}
	*fr = Frame{CaptureLength: -1, Length: -1, LinkType: p.linkType}
	hdr, _ := p.buf.Peek(16)
	switch {
	case len(hdr) == 0:
		return io.EOF
	case len(hdr) < 16:
		n := len(hdr)
		p.buf.Discard(n)
		return fmt.Errorf("%w: record header needs 16 bytes, %d left", ErrTruncated, n)
	}
	ts, capLen, origLen, err := p.record(hdr)
	fr.Time, fr.CaptureLength, fr.Length = ts, capLen, origLen
	if err != nil {
		return err
	}
	n := 16 + capLen
	if n <= p.buf.Size() {
		data, _ := p.buf.Peek(n)
		if len(data) < n {
			p.buf.Discard(len(data))
			return fmt.Errorf("%w after %d bytes", ErrTruncated, len(data))
		}
		p.pending = n
		fr.Data = data[16:n:n]
		return nil
	}
	if cap(p.scratch) < n {
		p.scratch = make([]byte, n)
	}
	got, _ := io.ReadFull(p.buf, p.scratch[:n])
	if got < n {
		return fmt.Errorf("%w after %d bytes", ErrTruncated, got)
	}
	fr.Data = p.scratch[16:n:n]
	return nil
}

// ready reports whether the next record (or the end of the stream) is
// already buffered: reading it will not wait for input.
func (p *pcapStream) ready() bool {
	avail := p.buf.Buffered() - p.pending
	if avail < 16 {
		return false
	}
	hdr, _ := p.buf.Peek(p.pending + 16)
	return avail >= 16+int(p.u32(hdr[p.pending+8:]))
}
