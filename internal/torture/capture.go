// Package torture derives damaged captures from good ones, deterministically,
// so that the whole cmpd-dissect pipeline can be run on each and checked for
// panics, hangs, runaway memory, lost good frames and unsafe output.
//
// The package knows just enough of the capture formats (pcap, pcapng; gzip,
// zstd and LZ4 compressed, their blocks and checksums) and of the protocols
// (Ethernet, VLAN, IPv4/6, UDP, TCP, InfiniBand LRH/GRH/BTH and its
// extension headers, MAD/CM, MPA, FPDU/DDP/RDMAP, RPC-over-RDMA) to find
// record, block and layer boundaries and length fields. It deliberately
// shares no decoding code with the dissector it attacks (only source's
// names of the capture formats, and the compression libraries, whose
// writers it tells where to end blocks): a bug in the dissector's idea of
// an offset must not hide the same bug here.
package torture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// Link types the layout walker understands.
const (
	LinkEthernet   = 1
	LinkERF        = 197
	LinkInfiniBand = 247
)

// Packet is one captured frame.
type Packet struct {
	Time     time.Time
	LinkType int
	// Data is the captured bytes; OrigLen the length on the wire.
	Data    []byte
	OrigLen int
	// Comments are a pcapng packet's opt_comment options, kept so that a
	// re-encoded capture shows the same frames (frame.comment).
	Comments []string
}

// Capture is a parsed capture file, independent of its encoding.
type Capture struct {
	// Name identifies the capture in mutant names (usually the file's base name).
	Name   string
	Format source.Format
	// Compression is the file's (source.Uncompressed for none).
	Compression source.Compression
	// Snaplen as stated by the file (pcap header or first IDB).
	Snaplen int
	// Nanosecond reports nanosecond timestamps (a nanosecond pcap, or a
	// pcapng interface with if_tsresol 9).
	Nanosecond bool
	Packets    []Packet
}

// ErrNotCapture is returned by Parse for bytes that are neither pcap nor
// pcapng, compressed or not.
var ErrNotCapture = errors.New("torture: not a pcap or pcapng file, compressed or not")

// ReadFile reads the capture file at path and parses it (Parse, named by
// the file's base name). raw is the file's bytes, nil when it could not be
// read; c is nil when err is not.
func ReadFile(path string) (c *Capture, raw []byte, err error) {
	raw, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, err = Parse(filepath.Base(path), raw)
	return c, raw, err
}

// Parse reads a pcap or pcapng file, possibly compressed (gzip, zstd,
// LZ4). It is strict: the harness only derives mutants from captures it
// understands fully.
func Parse(name string, b []byte) (*Capture, error) {
	c := &Capture{Name: name}
	if kind := compressedKind(b); kind != source.Uncompressed {
		zr, err := decompressor(kind, b)
		if err != nil {
			return nil, fmt.Errorf("torture: %s: %v: %w", name, kind, err)
		}
		raw, err := io.ReadAll(io.LimitReader(zr, 1<<30))
		if err != nil {
			return nil, fmt.Errorf("torture: %s: %v: %w", name, kind, err)
		}
		b = raw
		c.Compression = kind
	}
	if len(b) < 4 {
		return nil, ErrNotCapture
	}
	switch {
	case binary.LittleEndian.Uint32(b) == 0x0a0d0d0a:
		c.Format = source.FormatPcapNG
		return c, parsePcapng(c, b)
	case isPcapMagic(b):
		c.Format = source.FormatPcap
		return c, parsePcap(c, b)
	}
	return nil, ErrNotCapture
}

func isPcapMagic(b []byte) bool {
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		return true
	}
	return false
}

func parsePcap(c *Capture, b []byte) error {
	if len(b) < 24 {
		return fmt.Errorf("torture: %s: pcap header: need 24 octets, have %d", c.Name, len(b))
	}
	var bo binary.ByteOrder = binary.LittleEndian
	magic := bo.Uint32(b)
	if magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1 {
		bo = binary.BigEndian
		magic = bo.Uint32(b)
	}
	c.Nanosecond = magic == 0xa1b23c4d
	c.Snaplen = int(bo.Uint32(b[16:]))
	link := int(bo.Uint32(b[20:]) & 0x0fffffff)
	for off := 24; off < len(b); {
		if len(b)-off < 16 {
			return fmt.Errorf("torture: %s: record %d header at offset %d: need 16 octets, have %d",
				c.Name, len(c.Packets)+1, off, len(b)-off)
		}
		sec, frac := bo.Uint32(b[off:]), bo.Uint32(b[off+4:])
		capLen, origLen := int(bo.Uint32(b[off+8:])), int(bo.Uint32(b[off+12:]))
		off += 16
		if capLen > len(b)-off {
			return fmt.Errorf("torture: %s: record %d data at offset %d: need %d octets, have %d",
				c.Name, len(c.Packets)+1, off, capLen, len(b)-off)
		}
		ns := int64(frac) * 1000
		if c.Nanosecond {
			ns = int64(frac)
		}
		c.Packets = append(c.Packets, Packet{
			Time: time.Unix(int64(sec), ns).UTC(), LinkType: link,
			Data: b[off : off+capLen : off+capLen], OrigLen: origLen,
		})
		off += capLen
	}
	return nil
}

func parsePcapng(c *Capture, b []byte) error {
	var bo binary.ByteOrder = binary.LittleEndian
	type iface struct {
		link int
		ts   tsUnit
	}
	var ifaces []iface
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			return fmt.Errorf("torture: %s: block at offset %d: need 12 octets, have %d", c.Name, off, len(b)-off)
		}
		typ := binary.LittleEndian.Uint32(b[off:])
		if typ == 0x0a0d0d0a {
			switch binary.LittleEndian.Uint32(b[off+8:]) {
			case 0x1a2b3c4d:
				bo = binary.LittleEndian
			case 0x4d3c2b1a:
				bo = binary.BigEndian
			default:
				return fmt.Errorf("torture: %s: section header at offset %d: bad byte-order magic", c.Name, off)
			}
			ifaces = ifaces[:0]
		} else {
			typ = bo.Uint32(b[off:])
		}
		total := int(bo.Uint32(b[off+4:]))
		if total < 12 || total%4 != 0 || total > len(b)-off {
			return fmt.Errorf("torture: %s: block at offset %d: bad total length %d", c.Name, off, total)
		}
		body := b[off+8 : off+total-4]
		switch typ {
		case 1: // IDB
			if len(body) < 8 {
				return fmt.Errorf("torture: %s: interface block at offset %d too short", c.Name, off)
			}
			ifc := iface{link: int(bo.Uint16(body)), ts: tsUnit{ns: 1000}}
			parseIDBOptions(body[8:], bo, &ifc.ts)
			if ifc.ts.ns != 1000 {
				// Finer than µs (or not a whole number of µs):
				// re-encoded in ns.
				c.Nanosecond = true
			}
			if len(ifaces) == 0 {
				c.Snaplen = int(bo.Uint32(body[4:]))
			}
			ifaces = append(ifaces, ifc)
		case 6: // EPB
			if len(body) < 20 {
				return fmt.Errorf("torture: %s: packet block at offset %d too short", c.Name, off)
			}
			id := int(bo.Uint32(body))
			if id >= len(ifaces) {
				return fmt.Errorf("torture: %s: packet block at offset %d: interface %d not declared", c.Name, off, id)
			}
			ts := uint64(bo.Uint32(body[4:]))<<32 | uint64(bo.Uint32(body[8:]))
			capLen, origLen := int(bo.Uint32(body[12:])), int(bo.Uint32(body[16:]))
			if capLen > len(body)-20 {
				return fmt.Errorf("torture: %s: packet block at offset %d: captured length %d overruns block", c.Name, off, capLen)
			}
			c.Packets = append(c.Packets, Packet{
				Time: ifaces[id].ts.time(ts), LinkType: ifaces[id].link,
				Data: body[20 : 20+capLen : 20+capLen], OrigLen: origLen,
				Comments: parseComments(body[min(len(body), 20+(capLen+3)&^3):], bo),
			})
		case 3: // SPB
			if len(ifaces) == 0 || len(body) < 4 {
				return fmt.Errorf("torture: %s: simple packet block at offset %d: no interface", c.Name, off)
			}
			origLen := int(bo.Uint32(body))
			n := min(origLen, len(body)-4)
			c.Packets = append(c.Packets, Packet{LinkType: ifaces[0].link, Data: body[4 : 4+n : 4+n], OrigLen: origLen})
		}
		off += total
	}
	return nil
}

// parseComments reads a packet block's opt_comment options (code 1).
func parseComments(opts []byte, bo binary.ByteOrder) []string {
	var out []string
	for len(opts) >= 4 {
		code, l := bo.Uint16(opts), int(bo.Uint16(opts[2:]))
		if code == 0 || 4+l > len(opts) {
			break
		}
		if code == 1 {
			out = append(out, string(opts[4:4+l]))
		}
		opts = opts[min(len(opts), 4+(l+3)&^3):]
	}
	return out
}

// appendComments appends p's comments as opt_comment options and the end
// of options, or nothing when it has none.
func appendComments(b []byte, p Packet) []byte {
	if len(p.Comments) == 0 {
		return b
	}
	le := binary.LittleEndian
	for _, c := range p.Comments {
		b = le.AppendUint16(b, 1)
		b = le.AppendUint16(b, uint16(len(c)))
		b = append(b, c...)
		b = append(b, make([]byte, (len(c)+3)&^3-len(c))...)
	}
	return le.AppendUint32(b, 0) // opt_endofopt
}

// tsUnit is what an interface's timestamps count: ns nanoseconds per tick
// (if_tsresol 10^-n, n <= 9), or 2^-shift s when shift is set; offset is
// if_tsoffset in seconds.
type tsUnit struct {
	ns     int64
	shift  uint
	offset int64
}

func (u tsUnit) time(ts uint64) time.Time {
	if u.shift == 0 {
		return time.Unix(u.offset, int64(ts)*u.ns).UTC()
	}
	// ns = frac * 10^9 / 2^shift, rounded down, without overflow.
	frac := ts & (1<<u.shift - 1)
	hi, lo := bits.Mul64(frac, 1e9)
	return time.Unix(u.offset+int64(ts>>u.shift), int64(lo>>u.shift|hi<<(64-u.shift))).UTC()
}

// parseIDBOptions reads if_tsresol (option 9) and if_tsoffset (option 14)
// into unit.
func parseIDBOptions(opts []byte, bo binary.ByteOrder, unit *tsUnit) {
	for len(opts) >= 4 {
		code, l := bo.Uint16(opts), int(bo.Uint16(opts[2:]))
		if code == 0 || 4+l > len(opts) {
			return
		}
		switch {
		case code == 9 && l >= 1:
			r := opts[4]
			switch {
			case r&0x80 == 0 && r <= 9:
				u := int64(1)
				for i := 0; i < 9-int(r); i++ {
					u *= 10
				}
				unit.ns = u
			case r&0x80 != 0 && r&0x7f > 0 && r&0x7f < 64:
				unit.ns, unit.shift = 0, uint(r&0x7f)
			}
		case code == 14 && l == 8:
			unit.offset = int64(bo.Uint64(opts[4:]))
		}
		opts = opts[4+(l+3)&^3:]
	}
}

// Index locates the parts of an encoded capture, for mutations that damage
// the encoding itself rather than a packet.
type Index struct {
	// HeaderEnd is where the first record (pcap) or first packet block
	// (pcapng) starts: everything before is file/section/interface headers.
	HeaderEnd int
	// Records[i] locates packet i.
	Records []RecordIndex
}

// RecordIndex locates one packet record in an encoded capture.
type RecordIndex struct {
	// Start is the first byte of the record header (pcap) or block (pcapng);
	// Data the first packet byte; End one past the record or block.
	Start, Data, End int
	// CapLen and OrigLen are the offsets of the two 32-bit length fields.
	CapLen, OrigLen int
	// BlockLen and TrailerLen are the offsets of the pcapng block's two
	// total-length fields (-1 for pcap).
	BlockLen, TrailerLen int
}

// Encode writes the capture in format f (uncompressed) and returns the
// bytes and the index of what was written. Timestamps are microseconds for
// pcap and pcapng (nanoseconds when c.Nanosecond: a pcapng interface with
// if_tsresol 9).
func (c *Capture) Encode(f source.Format) ([]byte, Index) {
	if f == source.FormatPcapNG {
		return c.encodePcapng()
	}
	return c.encodePcap()
}

// EncodeFile encodes in the capture's own format and compression.
func (c *Capture) EncodeFile() []byte {
	b, _ := c.Encode(c.Format)
	if c.Compression != source.Uncompressed {
		return Compress(c.Compression, b)
	}
	return b
}

// oneLinkType tells whether every packet has the same link type (the
// one a pcap file can state).
func (c *Capture) oneLinkType() bool {
	for _, p := range c.Packets {
		if p.LinkType != c.linkType() {
			return false
		}
	}
	return true
}

func (c *Capture) linkType() int {
	if len(c.Packets) > 0 {
		return c.Packets[0].LinkType
	}
	return LinkEthernet
}

func (c *Capture) snaplen() int {
	if c.Snaplen > 0 {
		return c.Snaplen
	}
	return 262144
}

func (c *Capture) encodePcap() ([]byte, Index) {
	le := binary.LittleEndian
	n := 24
	for _, p := range c.Packets {
		n += 16 + len(p.Data)
	}
	b := make([]byte, 24, n)
	magic := uint32(0xa1b2c3d4)
	if c.Nanosecond {
		magic = 0xa1b23c4d
	}
	le.PutUint32(b, magic)
	le.PutUint16(b[4:], 2)
	le.PutUint16(b[6:], 4)
	le.PutUint32(b[16:], uint32(c.snaplen()))
	le.PutUint32(b[20:], uint32(c.linkType()))
	idx := Index{HeaderEnd: 24, Records: make([]RecordIndex, 0, len(c.Packets))}
	for _, p := range c.Packets {
		start := len(b)
		frac := uint32(p.Time.Nanosecond() / 1000)
		if c.Nanosecond {
			frac = uint32(p.Time.Nanosecond())
		}
		b = le.AppendUint32(b, uint32(p.Time.Unix()))
		b = le.AppendUint32(b, frac)
		b = le.AppendUint32(b, uint32(len(p.Data)))
		b = le.AppendUint32(b, uint32(p.OrigLen))
		b = append(b, p.Data...)
		idx.Records = append(idx.Records, RecordIndex{
			Start: start, Data: start + 16, End: len(b),
			CapLen: start + 8, OrigLen: start + 12, BlockLen: -1, TrailerLen: -1,
		})
	}
	return b, idx
}

func (c *Capture) encodePcapng() ([]byte, Index) {
	le := binary.LittleEndian
	var b []byte
	// Section header block, no options, section length unknown (-1).
	b = le.AppendUint32(b, 0x0a0d0d0a)
	b = le.AppendUint32(b, 28)
	b = le.AppendUint32(b, 0x1a2b3c4d)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint64(b, ^uint64(0))
	b = le.AppendUint32(b, 28)
	// One interface per link type, in order of first use.
	ifaceOf := map[int]int{}
	for _, p := range c.Packets {
		if _, ok := ifaceOf[p.LinkType]; ok {
			continue
		}
		ifaceOf[p.LinkType] = len(ifaceOf)
		b = c.appendIDB(b, p.LinkType)
	}
	if len(c.Packets) == 0 {
		b = c.appendIDB(b, LinkEthernet)
	}
	idx := Index{HeaderEnd: len(b), Records: make([]RecordIndex, 0, len(c.Packets))}
	for _, p := range c.Packets {
		start := len(b)
		padded := (len(p.Data) + 3) &^ 3
		total := 32 + padded + len(appendComments(nil, p))
		ts := uint64(p.Time.UnixMicro())
		if c.Nanosecond {
			ts = uint64(p.Time.UnixNano())
		}
		b = le.AppendUint32(b, 6)
		b = le.AppendUint32(b, uint32(total))
		b = le.AppendUint32(b, uint32(ifaceOf[p.LinkType]))
		b = le.AppendUint32(b, uint32(ts>>32))
		b = le.AppendUint32(b, uint32(ts))
		b = le.AppendUint32(b, uint32(len(p.Data)))
		b = le.AppendUint32(b, uint32(p.OrigLen))
		b = append(b, p.Data...)
		b = append(b, make([]byte, padded-len(p.Data))...)
		b = appendComments(b, p)
		b = le.AppendUint32(b, uint32(total))
		idx.Records = append(idx.Records, RecordIndex{
			Start: start, Data: start + 28, End: len(b),
			CapLen: start + 20, OrigLen: start + 24, BlockLen: start + 4, TrailerLen: len(b) - 4,
		})
	}
	return b, idx
}

// appendIDB appends an Interface Description Block for link type lt:
// link type at offset 8, snap length at 12, then if_tsresol 9 when the
// capture has nanosecond timestamps.
func (c *Capture) appendIDB(b []byte, lt int) []byte {
	le := binary.LittleEndian
	total := uint32(20)
	if c.Nanosecond {
		total = 32
	}
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, total)
	b = le.AppendUint16(b, uint16(lt))
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, uint32(c.snaplen()))
	if c.Nanosecond {
		b = le.AppendUint16(b, 9) // if_tsresol
		b = le.AppendUint16(b, 1)
		b = append(b, 9, 0, 0, 0)
		b = le.AppendUint32(b, 0) // opt_endofopt
	}
	return le.AppendUint32(b, total)
}

// Gzip compresses b (deterministically: no name, no modification time).
func Gzip(b []byte) []byte { return Compress(source.Gzip, b) }

// HasComments tells whether any packet carries a pcapng comment, which a
// mutant written as pcap cannot keep.
func (c *Capture) HasComments() bool {
	for _, p := range c.Packets {
		if len(p.Comments) > 0 {
			return true
		}
	}
	return false
}

// KeepsComments tells whether an encoded capture (possibly compressed)
// is pcapng, the one format here that holds packet comments.
func KeepsComments(b []byte) bool {
	if kind := compressedKind(b); kind != source.Uncompressed {
		zr, err := decompressor(kind, b)
		if err != nil {
			return false
		}
		head := make([]byte, 4)
		if _, err := io.ReadFull(zr, head); err != nil {
			return false
		}
		b = head
	}
	return len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0x0a0d0d0a
}

// Clone returns a deep copy of the capture (packet data included), so a
// mutation can change it freely.
func (c *Capture) Clone() *Capture {
	d := *c
	d.Packets = make([]Packet, len(c.Packets))
	for i, p := range c.Packets {
		p.Data = append([]byte(nil), p.Data...)
		d.Packets[i] = p
	}
	return &d
}
