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
// (draft-ietf-opsawg-pcap §4), and which of the format's variants wiretap
// reads the file as.
type pcapFile struct {
	// big: the file's numbers are big-endian (read by u32 with direct
	// loads: through a binary.ByteOrder each was a dynamic call, four per
	// record header).
	big      bool
	nanos    bool
	linkType int
	snaplen  uint32
	// hdrLen is the file header's length: 24, or 28 in Ixia's lcap files
	// (a 4-octet count of record bytes follows the header).
	hdrLen int
	// recLen is the record header's length: 16, 24 for the modified
	// formats of Alexey Kuznetsov's 1999 Linux patches (ss990417, with the
	// standard magic, as Red Hat 6.1 wrote it, and ss991029, with the
	// modified magic), 28 for ss990915 (SuSE 6.3), 20 for Nokia IPSO's.
	// Their extra fields (interface index, protocol, packet type) are not
	// needed: frames carry their link-layer header.
	recLen int
	// lens is how the captured and original lengths are ordered: before
	// version 2.3 (and in DG/UX's 543.0) the original length came first;
	// in 2.3 files either order was written.
	lens uint8
}

const (
	lensAsIs    = iota
	lensSwapped // the original length first (versions 2.0-2.2, 543.0)
	lensMaybe   // version 2.3: swapped when the captured length is the larger
)

// pcapMagic is what a classic pcap file's first four octets say: which
// magic number (magic, as written) in which byte order; ok is false for
// none.
func pcapMagic(b []byte) (magic uint32, big, ok bool) {
	le := binary.LittleEndian.Uint32(b)
	for _, m := range [...]uint32{pcapMagicMicro, pcapMagicNano, pcapMagicModified, pcapMagicIxiaHW, pcapMagicIxiaSW} {
		switch m {
		case le:
			return m, false, true
		case bits.ReverseBytes32(le):
			return m, true, true
		}
	}
	return 0, false, false
}

// The magic numbers wiretap reads as pcap.
const (
	pcapMagicMicro    = 0xa1b2c3d4
	pcapMagicNano     = 0xa1b23c4d
	pcapMagicModified = 0xa1b2cd34 // Kuznetzov's patched libpcap (ss990915, ss991029)
	pcapMagicIxiaHW   = 0x1c0001ac // Ixia lcap, hardware capture: ns
	pcapMagicIxiaSW   = 0x1c0001ab // Ixia lcap, software capture: µs
)

// parsePcapHeader reads the file header at the start of b. The records
// after it in b, as many as b holds, tell apart the variants that share a
// magic number (variant).
func parsePcapHeader(b []byte) (pcapFile, error) {
	h := pcapFile{hdrLen: 24, recLen: 16}
	if len(b) < 4 {
		return h, fmt.Errorf("%w: file ends inside the capture file header", errShortPcapMagic)
	}
	magic, big, ok := pcapMagic(b)
	if !ok {
		return h, fmt.Errorf("%w (first bytes % x)", errNotACapture, b[:4])
	}
	h.big = big
	switch magic {
	case pcapMagicNano, pcapMagicIxiaHW:
		h.nanos = true
	}
	if magic == pcapMagicIxiaHW || magic == pcapMagicIxiaSW {
		h.hdrLen = 28
	}
	if len(b) < h.hdrLen {
		return h, fmt.Errorf("%w: file ends inside the capture file header", errShortPcapMagic)
	}
	// wiretap reads every version from 2.0 on (libpcap 2.x and 543.0).
	major, minor := h.u16(b[4:]), h.u16(b[6:])
	switch {
	case major < 2:
		return h, fmt.Errorf("pcap version %d.%d (2.0 and later are read)", major, minor)
	case major == 2 && minor < 3 || major == 543:
		h.lens = lensSwapped
	case major == 2 && minor == 3:
		h.lens = lensMaybe
	}
	h.snaplen = h.u32(b[16:])
	// The link type is the low 16 bits; the upper ones carry FCS
	// information (draft-ietf-opsawg-pcap §4), which changes nothing
	// here: the frames' link-layer lengths bound what is decoded.
	h.linkType = int(h.u32(b[20:]) & 0xffff)
	switch {
	case magic == pcapMagicModified:
		h.recLen = h.variant(b[h.hdrLen:], 24, 28)
	case magic == pcapMagicMicro && h.lens == lensAsIs:
		h.recLen = h.variant(b[h.hdrLen:], 16, 24, 20)
	}
	return h, nil
}

// variant is the record header length, of those the magic number allows
// (recLens, the usual first), with which the first records of b (as many
// as it holds, up to three) make sense, as wiretap's libpcap_try_variants
// chooses: the first whose records show no problem. When each shows some,
// wiretap takes the one with the fewest; here the usual one stays: a
// damaged record near the start of an ordinary capture is not a reason to
// read it as a format of 1999.
func (h *pcapFile) variant(b []byte, recLens ...int) int {
	for _, n := range recLens {
		if h.problems(b, n) == 0 {
			return n
		}
	}
	return recLens[0]
}

// problems counts what is wrong with the first three records of b read
// with n-octet record headers (wiretap's libpcap_try_record): a fraction
// of a second of a million or more, a captured length over maxPacket,
// over the snap length or over the original length, an original length
// over 128 MiB, a record cut by the end of b; in the modified formats an
// interface index over 10000, a protocol that is no EtherType nor a Linux
// ETH_P_ value, a packet type over 4.
func (h *pcapFile) problems(b []byte, n int) int {
	m := 0
	for i := 0; i < 3 && len(b) > 0; i++ {
		if len(b) < n {
			return m + 1
		}
		frac, capLen, origLen := h.u32(b[4:]), h.u32(b[8:]), h.u32(b[12:])
		for _, bad := range [...]bool{frac >= 1e6, capLen > maxPacket, capLen > h.snaplen, origLen > 128<<20, capLen > origLen} {
			if bad {
				m++
			}
		}
		if n >= 24 {
			p := h.u16(b[20:])
			for _, bad := range [...]bool{h.u32(b[16:]) > 10000, !(p >= 0x600 || p <= 0x17 || p == 0x60 || p == 0x200 || p == 0x400), b[22] > 4} {
				if bad {
					m++
				}
			}
		}
		switch {
		case capLen > maxPacket:
			return m
		case uint64(len(b)) < uint64(n)+uint64(capLen):
			return m + 1
		}
		b = b[n+int(capLen):]
	}
	return m
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
// and an error for a captured length over maxPacket (the timestamp and
// lengths are set then too). Neither the file's snap length nor the
// record's original length is a limit: writers that do not cut to their
// declared snap length exist, others store an original length smaller
// than what they captured (the length once a header or FCS was
// stripped), and wiretap and libpcap read their records whole (tshark
// flags the second as "Frame length is less than captured length").
func (h *pcapFile) record(b []byte) (ts time.Time, capLen, origLen int, err error) {
	b = b[:16]
	sec := int64(h.u32(b[0:]))
	frac := int64(h.u32(b[4:]))
	if !h.nanos {
		frac *= 1000
	}
	capLen = int(h.u32(b[8:]))
	origLen = int(h.u32(b[12:]))
	if capLen > maxPacket {
		err = tooLong(capLen)
	}
	return time.Unix(sec, frac).UTC(), capLen, origLen, err
}

// lengths reads the lengths of the record header b in the order the
// file's version stores them, for the stream reader (the mapped reader
// reads only files whose lengths are in the usual order, with record).
func (h *pcapFile) lengths(b []byte) (capLen, origLen int, err error) {
	capLen, origLen = int(h.u32(b[8:])), int(h.u32(b[12:]))
	if h.lens == lensSwapped || h.lens == lensMaybe && capLen > origLen {
		capLen, origLen = origLen, capLen
	}
	if capLen > maxPacket {
		err = tooLong(capLen)
	}
	return capLen, origLen, err
}

// tooLong is record's error (apart, so that record stays small enough to
// be inlined in the readers' loops).
func tooLong(capLen int) error {
	return fmt.Errorf("captured length %d is over the %d-byte limit", capLen, maxPacket)
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
	// What is buffered of the records tells the variants of a magic
	// apart; reading more would wait on a pipe for packets to come. The
	// modified magic has no usual variant to fall back on: its records
	// are waited for (wiretap refuses such a file on a pipe).
	switch magic, _, _ := pcapMagic(b); magic {
	case pcapMagicModified:
		b, _ = buf.Peek(buf.Size())
	case pcapMagicIxiaHW, pcapMagicIxiaSW:
		b, _ = buf.Peek(28)
	default:
		b, _ = buf.Peek(buf.Buffered())
	}
	h, err := parsePcapHeader(b)
	if err != nil {
		return nil, err
	}
	buf.Discard(h.hdrLen)
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
	r := p.recLen
	hdr, _ := p.buf.Peek(r)
	switch {
	case len(hdr) == 0:
		return io.EOF
	case len(hdr) < r:
		n := len(hdr)
		p.buf.Discard(n)
		return fmt.Errorf("%w: record header needs %d bytes, %d left", ErrTruncated, r, n)
	}
	ts, capLen, origLen, err := p.record(hdr)
	if p.lens != lensAsIs {
		capLen, origLen, err = p.lengths(hdr)
	}
	fr.Time, fr.CaptureLength, fr.Length = ts, capLen, origLen
	if err != nil {
		return err
	}
	n := r + capLen
	if n <= p.buf.Size() {
		data, _ := p.buf.Peek(n)
		if len(data) < n {
			p.buf.Discard(len(data))
			return fmt.Errorf("%w after %d bytes", ErrTruncated, len(data))
		}
		p.pending = n
		fr.Data = data[r:n:n]
		return nil
	}
	if cap(p.scratch) < n {
		p.scratch = make([]byte, n)
	}
	got, _ := io.ReadFull(p.buf, p.scratch[:n])
	if got < n {
		return fmt.Errorf("%w after %d bytes", ErrTruncated, got)
	}
	fr.Data = p.scratch[r:n:n]
	return nil
}

// ready reports whether the next record (or the end of the stream) is
// already buffered: reading it will not wait for input.
func (p *pcapStream) ready() bool {
	avail := p.buf.Buffered() - p.pending
	if avail < p.recLen {
		return false
	}
	hdr, _ := p.buf.Peek(p.pending + p.recLen)
	capLen, _, _ := p.lengths(hdr[p.pending:])
	return avail >= p.recLen+capLen
}
