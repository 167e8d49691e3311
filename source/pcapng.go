package source

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/netip"
	"time"
)

// pcapng block types (draft-ietf-opsawg-pcapng §4, §11.1).
const (
	blockSHB      = 0x0A0D0D0A // Section Header
	blockIDB      = 0x00000001 // Interface Description
	blockPB       = 0x00000002 // Packet (obsolete)
	blockSPB      = 0x00000003 // Simple Packet
	blockNRB      = 0x00000004 // Name Resolution
	blockISB      = 0x00000005 // Interface Statistics
	blockEPB      = 0x00000006 // Enhanced Packet
	blockDSB      = 0x0000000A // Decryption Secrets
	blockCustom   = 0x00000BAD // Custom, may be copied
	blockCustomNC = 0x40000BAD // Custom, not to be copied
)

// byteOrderMagic is the Section Header's byte-order magic as written in
// the section's own byte order.
const byteOrderMagic = 0x1A2B3C4D

// Option codes (draft-ietf-opsawg-pcapng §3.5, §4.2, §4.6).
const (
	optEnd         = 0
	optComment     = 1
	optIfName      = 2
	optIfDesc      = 3
	optIfTsresol   = 9
	optIfTsoffset  = 14
	optIsbIfRecv   = 4
	optIsbIfDrop   = 5
	optIsbFilterOK = 6
	optIsbOSDrop   = 7
	optIsbUsrDeliv = 8
	nrbEnd         = 0
	nrbIPv4        = 1
	nrbIPv6        = 2
)

// maxBlock bounds a block's total length: larger is taken as damage, as
// Wireshark does (its limit is 16 MiB too), so that a corrupt length
// cannot make the reader allocate gigabytes. A packet block's packet data
// is bounded by maxPacket too (ngReader.oversized).
const maxBlock = 16 << 20

// ngInterface is one Interface Description Block of the current section.
type ngInterface struct {
	linkType int
	snaplen  int
	name     string
	// A timestamp counts units of 10^-pow10 s, or of 2^-shift s when
	// pow10 is negative (if_tsresol); offset is if_tsoffset in seconds.
	pow10  int
	shift  uint
	offset int64
}

// time converts a block's 64-bit timestamp to UTC time.
func (ifc *ngInterface) time(ts uint64) time.Time {
	var sec, ns uint64
	if ifc.pow10 >= 0 {
		if ifc.pow10 > 19 {
			// More units per second than a uint64 counts: under a second.
			return time.Unix(ifc.offset, 0).UTC()
		}
		div := pow10u(ifc.pow10)
		sec, ns = ts/div, ts%div
		if ifc.pow10 <= 9 {
			ns *= pow10u(9 - ifc.pow10)
		} else {
			ns /= pow10u(ifc.pow10 - 9)
		}
	} else {
		if ifc.shift >= 64 {
			return time.Unix(ifc.offset, 0).UTC()
		}
		sec, ns = ts>>ifc.shift, ts&(1<<ifc.shift-1)
		hi, lo := bits.Mul64(ns, 1e9)
		if ifc.shift == 0 {
			ns = 0
		} else {
			ns = lo>>ifc.shift | hi<<(64-ifc.shift)
		}
	}
	return time.Unix(int64(sec)+ifc.offset, int64(ns)).UTC()
}

func pow10u(n int) uint64 {
	p := uint64(1)
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}

// InterfaceStats is what a pcapng file's Interface Statistics Blocks said
// about one interface (the last such block for it); a count the blocks did
// not give is -1.
type InterfaceStats struct {
	// File is the capture file; Section (0-based) and Interface the
	// interface's place in it.
	File               string
	Section, Interface int
	// Name is the interface's if_name (or if_description), "" if none.
	Name     string
	LinkType int
	// Received (isb_ifrecv) and Dropped (isb_ifdrop: lost by the
	// interface, for lack of buffers) are the interface's counts;
	// OSDropped (isb_osdrop) the packets the operating system dropped;
	// Accepted (isb_filteraccept) those the capture filter accepted;
	// Delivered (isb_usrdeliv) those handed to the capturing program.
	Received, Dropped, OSDropped, Accepted, Delivered int64
}

// Lost is the packets the capture lost on this interface (Dropped plus
// OSDropped, those known), and whether the statistics say anything about
// losses at all.
func (s *InterfaceStats) Lost() (n int64, known bool) {
	for _, v := range []int64{s.Dropped, s.OSDropped} {
		if v >= 0 {
			n, known = n+v, true
		}
	}
	return n, known
}

// Label names the interface for messages: its name, else "#N" (and the
// section when the file has several).
func (s *InterfaceStats) Label() string {
	l := s.Name
	if l == "" {
		l = fmt.Sprintf("#%d", s.Interface)
	}
	if s.Section > 0 {
		l += fmt.Sprintf(" (section %d)", s.Section+1)
	}
	return l
}

// ngReader reads pcapng blocks (draft-ietf-opsawg-pcapng) from a buffered
// stream: every section with its own byte order and interfaces; Enhanced,
// Simple and obsolete Packet Blocks as frames; Interface Statistics and
// Name Resolution Blocks kept for the caller; every other block (Decryption
// Secrets, custom, unknown) skipped by its length.
type ngReader struct {
	buf     *bufio.Reader
	order   binary.ByteOrder
	section int // sections begun, minus one
	ifaces  []ngInterface
	stats   []InterfaceStats
	names   map[netip.Addr][]string
	scratch []byte // blocks larger than buf
	last    time.Time
	// offset is the stream position of the next unread byte; at is that
	// of the block being read.
	offset func() int64
	at     int64
	// pending is the byte count Discard still owes after a frame whose
	// data is handed out from buf (consumed before the next block).
	pending int
}

// newNgReader reads the first Section Header Block.
func newNgReader(buf *bufio.Reader, offset func() int64) (*ngReader, error) {
	r := &ngReader{buf: buf, section: -1, offset: offset}
	var be blockError
	var fr Frame
	ok, err := r.block(&fr, &be)
	if err != nil {
		return nil, err
	}
	if ok || r.section != 0 {
		return nil, errors.New("pcapng: no section header block")
	}
	// The first interface, which writers send with the section header,
	// gives the file's link type (File.LinkType).
	// A damaged one is left for Next to report as a damaged record.
	if head, _ := buf.Peek(8); len(head) == 8 && r.order.Uint32(head) == blockIDB {
		if total := int(r.order.Uint32(head[4:])); total >= 20 && total%4 == 0 && total <= buf.Size() {
			if b, _ := buf.Peek(total); len(b) == total && r.order.Uint32(b[total-4:]) == uint32(total) {
				if _, err := r.block(&fr, &be); err != nil {
					return nil, err
				}
			}
		}
	}
	return r, nil
}

// blockError is what is known of a damaged block, for the RecordError.
type blockError struct {
	err   error
	frame *Frame // the packet block's header fields, when it is one and they could be read
}

// next reads blocks up to the next packet and fills fr (Data aliases the
// reader's buffer until the next call). It returns io.EOF at a clean end
// of the stream, and a *blockError for a cut or inconsistent block.
func (r *ngReader) next(fr *Frame) error {
	if r.pending > 0 {
		r.buf.Discard(r.pending)
		r.pending = 0
	}
	var be blockError
	for {
		ok, err := r.block(fr, &be)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
}

// blockName names a block type for messages.
func blockName(typ uint32) string {
	switch typ {
	case blockSHB:
		return "Section Header Block"
	case blockIDB:
		return "Interface Description Block"
	case blockPB:
		return "Packet Block"
	case blockSPB:
		return "Simple Packet Block"
	case blockNRB:
		return "Name Resolution Block"
	case blockISB:
		return "Interface Statistics Block"
	case blockEPB:
		return "Enhanced Packet Block"
	case blockDSB:
		return "Decryption Secrets Block"
	case blockCustom, blockCustomNC:
		return "Custom Block"
	}
	return fmt.Sprintf("block of type 0x%08x", typ)
}

// block reads one block; ok is true when it was a packet (fr filled).
func (r *ngReader) block(fr *Frame, be *blockError) (ok bool, err error) {
	r.at = r.offset() + int64(r.pending)
	head, err := r.buf.Peek(12)
	if len(head) == 0 && err != nil {
		if err == io.EOF {
			return false, io.EOF
		}
		return false, err
	}
	if len(head) < 8 {
		return false, r.damaged(be, fmt.Errorf("%w: block header needs 8 bytes, %d left", ErrTruncated, len(head)))
	}
	order := r.order
	if binary.LittleEndian.Uint32(head) == blockSHB {
		if len(head) < 12 {
			return false, r.damaged(be, fmt.Errorf("%w: Section Header Block needs 28 bytes, %d left", ErrTruncated, len(head)))
		}
		switch {
		case binary.LittleEndian.Uint32(head[8:]) == byteOrderMagic:
			order = binary.LittleEndian
		case binary.BigEndian.Uint32(head[8:]) == byteOrderMagic:
			order = binary.BigEndian
		default:
			return false, r.damaged(be, fmt.Errorf("Section Header Block: unknown byte-order magic % x", head[8:12]))
		}
	} else if order == nil {
		return false, r.damaged(be, errors.New("block before the first Section Header Block"))
	}
	typ := order.Uint32(head)
	total := int(order.Uint32(head[4:]))
	name := blockName(typ)
	switch {
	case total < 12 || total%4 != 0 || typ == blockSHB && total < 28:
		return false, r.damaged(be, fmt.Errorf("%s: total length %d is not a valid block length", name, total))
	case total > maxBlock:
		return false, r.damaged(be, fmt.Errorf("%s: total length %d is over the %d-byte limit", name, total, maxBlock))
	}
	if typ == blockEPB || typ == blockPB || typ == blockSPB {
		if err := r.oversized(typ, total, fr); err != nil {
			be.frame = fr
			return false, r.damaged(be, fmt.Errorf("%s: %w", name, err))
		}
	}
	data, got := r.read(total)
	if got < total {
		if typ == blockEPB || typ == blockPB || typ == blockSPB {
			// The header fields of a cut packet block are facts the
			// views show (its time, lengths, link type).
			be.frame = fr
			r.packet(typ, data[8:got], fr, true)
		}
		return false, r.damaged(be, fmt.Errorf("%w: %s of %d bytes cut after %d", ErrTruncated, name, total, got))
	}
	if t := int(order.Uint32(data[total-4:])); t != total {
		return false, r.damaged(be, fmt.Errorf("%s: trailing length %d differs from the leading %d", name, t, total))
	}
	body := data[8 : total-4]
	switch typ {
	case blockSHB:
		if v := order.Uint16(body[4:]); v != 1 {
			return false, r.damaged(be, fmt.Errorf("Section Header Block: version %d.%d (1.x is read)", v, order.Uint16(body[6:])))
		}
		r.order = order
		r.section++
		r.ifaces = r.ifaces[:0]
	case blockIDB:
		if len(body) < 8 {
			return false, r.damaged(be, fmt.Errorf("%s: body of %d bytes, 8 at least", name, len(body)))
		}
		ifc := ngInterface{linkType: int(order.Uint16(body)), snaplen: int(order.Uint32(body[4:])), pow10: 6}
		r.options(body[8:], func(code uint16, v []byte) {
			switch code {
			case optIfName:
				ifc.name = string(v)
			case optIfDesc:
				if ifc.name == "" {
					ifc.name = string(v)
				}
			case optIfTsresol:
				if len(v) == 1 {
					if v[0]&0x80 != 0 {
						ifc.pow10, ifc.shift = -1, uint(v[0]&0x7f)
					} else {
						ifc.pow10 = int(v[0])
					}
				}
			case optIfTsoffset:
				if len(v) == 8 {
					ifc.offset = int64(order.Uint64(v))
				}
			}
		})
		r.ifaces = append(r.ifaces, ifc)
	case blockEPB, blockPB, blockSPB:
		if err := r.packet(typ, body, fr, false); err != nil {
			be.frame = fr
			return false, r.damaged(be, fmt.Errorf("%s: %w", name, err))
		}
		if total <= r.buf.Size() {
			// fr.Data lies in buf: consumed when the next block is read.
			r.pending = total
		}
		return true, nil
	case blockISB:
		r.interfaceStats(body)
	case blockNRB:
		r.nameRecords(body)
	}
	r.discard(data, total)
	return false, nil
}

// oversized is the error for a packet block, not yet read, whose packet
// data is over maxPacket (fr gets the header fields then): such a block is
// damage, and is not read, so that a packet block's read never holds more
// than maxPacket octets of packet data. A block cut before these fields is
// left for the read to report.
func (r *ngReader) oversized(typ uint32, total int, fr *Frame) error {
	n := 28 // the block header and an EPB's or PB's fields up to its original length
	if typ == blockSPB {
		n = 12
	}
	head, _ := r.buf.Peek(n)
	if len(head) < n {
		return nil
	}
	if typ == blockSPB {
		// No captured length: the block's packet data is what it holds.
		if data := total - 16; data > maxPacket {
			r.packet(typ, head[8:], fr, true)
			return fmt.Errorf("packet data of %d bytes is over the %d-byte limit", data, maxPacket)
		}
		return nil
	}
	if capLen := int(r.order.Uint32(head[20:])); capLen > maxPacket {
		r.packet(typ, head[8:], fr, true)
		return tooLong(capLen)
	}
	return nil
}

// damaged records err; the rest of the stream is given up.
func (r *ngReader) damaged(be *blockError, err error) error {
	be.err = err
	return be
}

func (e *blockError) Error() string { return e.err.Error() }
func (e *blockError) Unwrap() error { return e.err }

// read returns the next n bytes of the stream (fewer, got, at its end):
// from the buffer without copying when they fit, else copied into scratch
// and consumed. Bytes returned from the buffer are consumed by discard.
func (r *ngReader) read(n int) (data []byte, got int) {
	if n <= r.buf.Size() {
		data, _ = r.buf.Peek(n)
		if len(data) < n {
			r.buf.Discard(len(data))
		}
		return data, len(data)
	}
	if cap(r.scratch) < n {
		r.scratch = make([]byte, n)
	}
	r.scratch = r.scratch[:n]
	got, _ = io.ReadFull(r.buf, r.scratch)
	return r.scratch[:got], got
}

// discard consumes a whole block read by read.
func (r *ngReader) discard(data []byte, n int) {
	if n <= r.buf.Size() {
		r.buf.Discard(n)
	}
}

// options calls fn for each option of an options list, stopping at
// opt_endofopt or at an option running past the block: options are
// metadata, and a broken list loses only them, not the packet.
func (r *ngReader) options(b []byte, fn func(code uint16, v []byte)) {
	for len(b) >= 4 {
		code, n := r.order.Uint16(b), int(r.order.Uint16(b[2:]))
		if code == optEnd || 4+n > len(b) {
			return
		}
		fn(code, b[4:4+n])
		pad := (n + 3) &^ 3
		if 4+pad > len(b) {
			return
		}
		b = b[4+pad:]
	}
}

// packet fills fr from the body of a packet block. With cut set, the body
// is what the file holds of a damaged block: fr gets the header fields
// that are there (its Time stays zero and its lengths -1 where not).
func (r *ngReader) packet(typ uint32, body []byte, fr *Frame, cut bool) error {
	*fr = Frame{CaptureLength: -1, Length: -1, LinkType: -1}
	var ifc *ngInterface
	iface := func(id int) error {
		if id >= len(r.ifaces) {
			return fmt.Errorf("interface %d is not described (the section has %d)", id, len(r.ifaces))
		}
		ifc = &r.ifaces[id]
		fr.LinkType = ifc.linkType
		return nil
	}
	var capLen, hdr int
	switch typ {
	case blockSPB:
		if err := iface(0); err != nil {
			return err
		}
		if len(body) < 4 {
			return fmt.Errorf("body of %d bytes, 4 at least", len(body))
		}
		fr.Length = int(r.order.Uint32(body))
		// No timestamp: the time of the packet before it.
		fr.Time = r.last
		// No captured length either: the original length, cut to the
		// snap length and to the block.
		hdr, capLen = 4, fr.Length
		if ifc.snaplen > 0 && capLen > ifc.snaplen {
			capLen = ifc.snaplen
		}
		if !cut && capLen > len(body)-4 {
			capLen = len(body) - 4
		}
	default:
		hdr = 20
		var id int
		if typ == blockEPB {
			if len(body) < 4 {
				return fmt.Errorf("body of %d bytes, 20 at least", len(body))
			}
			id = int(r.order.Uint32(body))
		} else {
			if len(body) < 2 {
				return fmt.Errorf("body of %d bytes, 20 at least", len(body))
			}
			id = int(r.order.Uint16(body))
		}
		if err := iface(id); err != nil {
			return err
		}
		if len(body) < 20 {
			return fmt.Errorf("body of %d bytes, 20 at least", len(body))
		}
		fr.Time = ifc.time(uint64(r.order.Uint32(body[4:]))<<32 | uint64(r.order.Uint32(body[8:])))
		capLen = int(r.order.Uint32(body[12:]))
		fr.Length = int(r.order.Uint32(body[16:]))
	}
	fr.CaptureLength = capLen
	if cut {
		return nil
	}
	if capLen < 0 || capLen > len(body)-hdr {
		return fmt.Errorf("captured length %d runs past the block (%d bytes of packet data)", capLen, len(body)-hdr)
	}
	fr.Data = body[hdr : hdr+capLen : hdr+capLen]
	r.last = fr.Time
	if typ != blockSPB {
		if opts := hdr + (capLen+3)&^3; opts < len(body) {
			r.options(body[opts:], func(code uint16, v []byte) {
				if code == optComment {
					fr.Comments = append(fr.Comments, string(v))
				}
			})
		}
	}
	return nil
}

// interfaceStats keeps an Interface Statistics Block's counters: the last
// block for an interface holds its final counts. A block for an interface
// not described is ignored (only its statistics would be lost).
func (r *ngReader) interfaceStats(body []byte) {
	if len(body) < 12 {
		return
	}
	id := int(r.order.Uint32(body))
	if id >= len(r.ifaces) {
		return
	}
	s := InterfaceStats{Section: r.section, Interface: id, Name: r.ifaces[id].name, LinkType: r.ifaces[id].linkType,
		Received: -1, Dropped: -1, OSDropped: -1, Accepted: -1, Delivered: -1}
	r.options(body[12:], func(code uint16, v []byte) {
		if len(v) != 8 {
			return
		}
		n := int64(r.order.Uint64(v))
		if n < 0 {
			return
		}
		switch code {
		case optIsbIfRecv:
			s.Received = n
		case optIsbIfDrop:
			s.Dropped = n
		case optIsbOSDrop:
			s.OSDropped = n
		case optIsbFilterOK:
			s.Accepted = n
		case optIsbUsrDeliv:
			s.Delivered = n
		}
	})
	for i := range r.stats {
		if r.stats[i].Section == s.Section && r.stats[i].Interface == id {
			r.stats[i] = s
			return
		}
	}
	r.stats = append(r.stats, s)
}

// nameRecords keeps a Name Resolution Block's IPv4 and IPv6 names; a
// malformed record ends the block's list (only names would be lost).
func (r *ngReader) nameRecords(b []byte) {
	for len(b) >= 4 {
		typ, n := r.order.Uint16(b), int(r.order.Uint16(b[2:]))
		if typ == nrbEnd || 4+n > len(b) {
			return
		}
		v := b[4 : 4+n]
		var addr netip.Addr
		var rest []byte
		switch {
		case typ == nrbIPv4 && n > 4:
			addr, rest = netip.AddrFrom4([4]byte(v[:4])), v[4:]
		case typ == nrbIPv6 && n > 16:
			addr, rest = netip.AddrFrom16([16]byte(v[:16])), v[16:]
		}
		for len(rest) > 0 {
			end := 0
			for end < len(rest) && rest[end] != 0 {
				end++
			}
			if end > 0 {
				if r.names == nil {
					r.names = map[netip.Addr][]string{}
				}
				r.names[addr] = append(r.names[addr], string(rest[:end]))
			}
			if end < len(rest) {
				end++
			}
			rest = rest[end:]
		}
		pad := (n + 3) &^ 3
		if 4+pad > len(b) {
			return
		}
		b = b[4+pad:]
	}
}

// ready reports whether the next block is already buffered whole:
// reading it will not wait for input. Blocks that
// are not packets are read without a frame to show for them, so a pipe's
// reader may still wait after them; their writers (dumpcap's ISB at the
// end) send them with the packets around them.
func (r *ngReader) ready() bool {
	avail := r.buf.Buffered() - r.pending
	if avail < 8 {
		return false
	}
	head, _ := r.buf.Peek(r.pending + 8)
	order := r.order
	if binary.LittleEndian.Uint32(head[r.pending:]) == blockSHB {
		return false
	}
	total := int(order.Uint32(head[r.pending+4:]))
	return avail >= total
}
