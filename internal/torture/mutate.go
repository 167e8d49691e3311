package torture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// Kind names a family of damage.
type Kind string

// The kinds of damage. Each Mutant has exactly one.
const (
	KindFileHeader   Kind = "file-header"   // pcap header or pcapng SHB/IDB damaged
	KindTruncFile    Kind = "trunc-file"    // file cut short, at record boundaries ±1 and inside records
	KindTruncLayer   Kind = "trunc-layer"   // one packet cut at a layer boundary ±1 (snaplen-style: caplen < origlen)
	KindRecordLen    Kind = "record-len"    // pcap record caplen/origlen lie (0, huge, off by one)
	KindBlock        Kind = "pcapng-block"  // pcapng block lengths and fields lie
	KindGzip         Kind = "gzip"          // gzip stream cut, corrupted, concatenated, sizes lying
	KindZstd         Kind = "zstd"          // zstd stream likewise, and skippable frames, windows and content sizes
	KindLZ4          Kind = "lz4"           // LZ4 frame-format stream likewise, block checksums and sizes
	KindFlip         Kind = "flip"          // random bytes of a packet's headers flipped
	KindLength       Kind = "length"        // a protocol length field lies (IP, UDP, LRH, MPA PD_Length, ULPDU, chunk counts …)
	KindChunkList    Kind = "chunk-list"    // RPC-over-RDMA lists never terminated or claiming huge counts
	KindDuplicate    Kind = "duplicate"     // a transport packet (TCP segment, BTH packet) captured twice
	KindReorder      Kind = "reorder"       // two transport packets swapped
	KindDrop         Kind = "drop"          // a transport packet lost
	KindRepeat       Kind = "repeat"        // one packet repeated many times
	KindControlChars Kind = "control-chars" // terminal escape sequences written into strings the packet carries
)

// Kinds lists every kind in a stable order.
var Kinds = []Kind{
	KindFileHeader, KindTruncFile, KindTruncLayer, KindRecordLen, KindBlock, KindGzip, KindZstd, KindLZ4, KindFlip,
	KindLength, KindChunkList, KindDuplicate, KindReorder, KindDrop, KindRepeat, KindControlChars,
}

// Mutant is one damaged capture.
type Mutant struct {
	// Name is unique within a capture's plan and stable for a given seed:
	// "rxe-nfs42-rdma.pcap/length/f12/udp.length=0".
	Name string
	Kind Kind
	// Frame is the 1-based number of the first frame that may be damaged:
	// every frame numbered below it must decode as in the clean capture.
	// 0 means no frame is promised (the file header itself is damaged).
	Frame int
	// HeaderDamaged reports damage to the file header (the reader must
	// refuse the file: exit status 2).
	HeaderDamaged bool
	// Large marks mutants that are big by design (repeat): harnesses give
	// them a longer time bound.
	Large bool
	// Data is the damaged file's bytes (built by Build).
	Data  []byte
	build func() []byte
}

// Build returns the mutant's bytes, making them on first use.
func (m *Mutant) Build() []byte {
	if m.Data == nil && m.build != nil {
		m.Data = m.build()
	}
	return m.Data
}

// Options tune a plan.
type Options struct {
	// Seed makes the random choices (flipped bytes, sampled frames).
	Seed uint64
	// Repeat is how many times KindRepeat repeats a packet (default 100000).
	Repeat int
	// FlipsPerFrame is how many random flip mutants each frame gets
	// (default 3).
	FlipsPerFrame int
	// Offsets, when set, adds layer boundaries found by a clean
	// dissection: Offsets[i] are frame offsets where layers of packet i
	// start. Truncations are made at each ±1 too, besides the walker's.
	Offsets [][]int
}

// Plan derives every mutant of c. Nothing is built until Mutant.Build is
// called, so a plan of thousands is cheap; Sample picks a bounded subset.
func Plan(c *Capture, opt Options) []*Mutant {
	if opt.Repeat <= 0 {
		opt.Repeat = 100000
	}
	if opt.FlipsPerFrame <= 0 {
		opt.FlipsPerFrame = 3
	}
	p := planner{c: c, opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x70727475726521))}
	p.layouts = make([]Layout, len(c.Packets))
	for i, pk := range c.Packets {
		p.layouts[i] = Walk(pk.LinkType, pk.Data)
		if i < len(opt.Offsets) {
			for _, off := range opt.Offsets[i] {
				if off > 0 && off < len(pk.Data) {
					p.layouts[i].Layers = append(p.layouts[i].Layers, Span{"dissected", off, off})
				}
			}
		}
	}
	p.fileHeader()
	p.truncFile()
	p.recordLen()
	p.blocks()
	for _, kind := range []source.Compression{source.Gzip, source.Zstd, source.LZ4} {
		p.compressedDamage(kind)
	}
	for i := range c.Packets {
		p.truncLayer(i)
		p.flips(i)
		p.lengths(i)
		p.chunkLists(i)
		p.controlChars(i)
	}
	p.transport()
	p.repeat()
	return p.out
}

type planner struct {
	c       *Capture
	opt     Options
	rng     *rand.Rand
	layouts []Layout
	out     []*Mutant
}

func (p *planner) add(kind Kind, frame int, detail string, build func() []byte) *Mutant {
	name := fmt.Sprintf("%s/%s/f%d/%s", p.c.Name, kind, frame, detail)
	if frame == 0 {
		name = fmt.Sprintf("%s/%s/%s", p.c.Name, kind, detail)
	}
	m := &Mutant{Name: name, Kind: kind, Frame: frame, build: build}
	p.out = append(p.out, m)
	return m
}

// container picks, deterministically per mutant, the encoding a
// packet-level mutant is written in: mostly the capture's own, sometimes
// pcapng, gzip, zstd or LZ4, so the readers see damaged packets in every
// format.
func (p *planner) container(n int) func(*Capture) []byte {
	pcap := p.pcap()
	switch n % 8 {
	case 3:
		return func(c *Capture) []byte { b, _ := c.Encode(source.FormatPcapNG); return b }
	case 5:
		return func(c *Capture) []byte { b, _ := c.Encode(pcap); return Compress(source.LZ4, b) }
	case 6:
		return func(c *Capture) []byte { b, _ := c.Encode(pcap); return Gzip(b) }
	case 7:
		return func(c *Capture) []byte { b, _ := c.Encode(source.FormatPcapNG); return Compress(source.Zstd, b) }
	}
	return func(c *Capture) []byte { b, _ := c.Encode(p.c.Format); return b }
}

// pcap is the format of mutants written as pcap: pcapng for a capture of
// several link types, which a pcap file (of one) would misstate.
func (p *planner) pcap() source.Format {
	if p.c.oneLinkType() {
		return source.FormatPcap
	}
	return source.FormatPcapNG
}

// packetMutant adds a mutant that changes packet i of a copy of the capture.
func (p *planner) packetMutant(kind Kind, i int, detail string, change func(d *Capture)) {
	enc := p.container(len(p.out))
	p.add(kind, i+1, detail, func() []byte {
		d := p.c.Clone()
		change(d)
		return enc(d)
	})
}

func (p *planner) fileHeader() {
	raw, _ := p.c.Encode(source.FormatPcap)
	set := func(detail string, off int, val []byte, frame int, header bool) {
		m := p.add(KindFileHeader, frame, "pcap/"+detail, func() []byte {
			b := bytes.Clone(raw)
			copy(b[off:], val)
			return b
		})
		m.HeaderDamaged = header
	}
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	u16 := func(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
	set("magic=0", 0, u32(0), 0, true)
	set("magic=pcapng-ish", 0, u32(0x0a0d0d0a), 0, true)
	set("magic-byte-flip", 1, []byte{0xb3}, 0, true)
	set("version=1.0", 4, u16(1), 0, false)
	set("version=3.9", 4, append(u16(3), u16(9)...), 0, false)
	set("snaplen=0", 16, u32(0), 1, false)
	set("snaplen=1", 16, u32(1), 1, false)
	set("snaplen=max", 16, u32(0xffffffff), 1, false)
	set("linktype=65535", 20, u32(0xffff), 1, false)
	set("linktype=247", 20, u32(LinkInfiniBand), 1, false)
	set("linktype=197", 20, u32(LinkERF), 1, false)
	set("linktype=fcs-bits", 20, u32(0x1000_0000|LinkEthernet), 1, false)
	// A file that is only a header, or less than one.
	for _, n := range []int{0, 1, 4, 23, 24} {
		m := p.add(KindFileHeader, 0, fmt.Sprintf("pcap/only-%d-octets", n), func() []byte { return bytes.Clone(raw[:n]) })
		m.HeaderDamaged = n < 24
	}
	ng, nidx := p.c.Encode(source.FormatPcapNG)
	setNG := func(detail string, off int, val []byte, frame int, header bool) {
		if off+len(val) > len(ng) {
			return
		}
		m := p.add(KindFileHeader, frame, "pcapng/"+detail, func() []byte {
			b := bytes.Clone(ng)
			copy(b[off:], val)
			return b
		})
		m.HeaderDamaged = header
	}
	setNG("shb-byte-order=0", 8, u32(0), 0, true)
	setNG("shb-length=0", 4, u32(0), 0, true)
	setNG("shb-length=huge", 4, u32(0xfffffff0), 0, true)
	setNG("shb-major=2", 12, u16(2), 0, false)
	setNG("idb-linktype=65535", 36, u16(0xffff), 1, false)
	setNG("idb-length=0", 32, u32(0), 0, false)
	setNG("idb-length=huge", 32, u32(0x7ffffff0), 0, false)
	setNG("idb-snaplen=0", 40, u32(0), 1, false)
	// An IDB with a garbage if_tsresol option and a never-ending option list.
	if nidx.HeaderEnd >= 48 {
		p.add(KindFileHeader, 1, "pcapng/idb-options-garbage", func() []byte {
			var b []byte
			b = append(b, ng[:28]...)
			le := binary.LittleEndian
			b = le.AppendUint32(b, 1)
			b = le.AppendUint32(b, 32)
			b = append(b, ng[36:44]...)
			b = le.AppendUint16(b, 9) // if_tsresol
			b = le.AppendUint16(b, 0xfff0)
			b = append(b, 0xff, 0, 0, 0)
			b = le.AppendUint32(b, 32)
			return append(b, ng[nidx.HeaderEnd:]...)
		})
	}
	// Several interfaces declared; packets name one that does not exist.
	p.add(KindFileHeader, 0, "pcapng/empty-section", func() []byte { return bytes.Clone(ng[:28]) })
}

func (p *planner) truncFile() {
	raw, idx := p.c.Encode(p.c.Format)
	seen := map[int]bool{}
	cut := func(frame int, at int, why string) {
		if at < 0 || at >= len(raw) || seen[at] {
			return
		}
		seen[at] = true
		p.add(KindTruncFile, frame, fmt.Sprintf("%s@%d", why, at), func() []byte { return bytes.Clone(raw[:at]) })
	}
	for i, r := range idx.Records {
		f := i + 1
		cut(f, r.Start-1, "before-record")
		cut(f, r.Start+1, "record-header")
		cut(f, r.Data-1, "record-header-end")
		cut(f, r.Data, "record-data-start")
		for _, b := range p.layouts[i].Boundaries() {
			for _, d := range []int{-1, 0, 1} {
				at := r.Data + b + d
				if at > r.Data && at < r.Data+len(p.c.Packets[i].Data) {
					cut(f, at, fmt.Sprintf("inside-data+%d", b+d))
				}
			}
		}
		cut(f, r.End-1, "record-end-1")
	}
}

func (p *planner) truncLayer(i int) {
	data := p.c.Packets[i].Data
	seen := map[int]bool{}
	for _, b := range p.layouts[i].Boundaries() {
		for _, d := range []int{-1, 0, 1} {
			n := b + d
			if n < 0 || n >= len(data) || seen[n] {
				continue
			}
			seen[n] = true
			p.packetMutant(KindTruncLayer, i, fmt.Sprintf("caplen=%d", n), func(c *Capture) {
				c.Packets[i].Data = c.Packets[i].Data[:n]
			})
		}
	}
}

func (p *planner) recordLen() {
	if p.pcap() != source.FormatPcap {
		return // pcapng's lengths: blocks
	}
	raw, idx := p.c.Encode(source.FormatPcap)
	for i, r := range idx.Records {
		capLen := uint32(len(p.c.Packets[i].Data))
		lie := func(detail string, off int, v uint32) {
			p.add(KindRecordLen, i+1, detail, func() []byte {
				b := bytes.Clone(raw)
				binary.LittleEndian.PutUint32(b[off:], v)
				return b
			})
		}
		lie("caplen=0", r.CapLen, 0)
		lie("caplen=max", r.CapLen, 0xffffffff)
		lie("caplen=2G", r.CapLen, 0x7fffffff)
		lie("caplen+1", r.CapLen, capLen+1)
		lie("caplen-1", r.CapLen, capLen-1)
		lie("caplen=snaplen+1", r.CapLen, uint32(p.c.snaplen())+1)
		lie("origlen=0", r.OrigLen, 0)
		lie("origlen<caplen", r.OrigLen, capLen-1)
		lie("origlen=max", r.OrigLen, 0xffffffff)
		lie("ts-usec=max", r.Start+4, 0xffffffff)
		lie("ts-sec=0", r.Start, 0)
	}
}

func (p *planner) blocks() {
	raw, idx := p.c.Encode(source.FormatPcapNG)
	le := binary.LittleEndian
	for i, r := range idx.Records {
		blockLen := le.Uint32(raw[r.BlockLen:])
		lie := func(detail string, off int, v uint32) {
			p.add(KindBlock, i+1, detail, func() []byte {
				b := bytes.Clone(raw)
				le.PutUint32(b[off:], v)
				return b
			})
		}
		lie("block-length=0", r.BlockLen, 0)
		lie("block-length=12", r.BlockLen, 12)
		lie("block-length=max", r.BlockLen, 0xffffffff)
		lie("block-length+1", r.BlockLen, blockLen+1)
		lie("block-length+4", r.BlockLen, blockLen+4)
		lie("block-length-4", r.BlockLen, blockLen-4)
		lie("trailer-length-mismatch", r.TrailerLen, blockLen+4)
		lie("caplen=max", r.CapLen, 0xffffffff)
		lie("caplen=block+1", r.CapLen, blockLen-32+1)
		lie("interface=7", r.Start+8, 7)
		lie("type=unknown", r.Start, 0x0bad)
		lie("type=shb", r.Start, 0x0a0d0d0a)
		lie("type=idb", r.Start, 1)
		lie("type=spb", r.Start, 3)
		lie("type=obsolete-pb", r.Start, 2)
	}
}

func (p *planner) flips(i int) {
	lay := p.layouts[i]
	data := p.c.Packets[i].Data
	if len(data) == 0 {
		return
	}
	// Header octets: the union of the layer spans.
	var hdr []int
	for _, s := range lay.Layers {
		for x := s.Start; x < s.End && x < len(data); x++ {
			hdr = append(hdr, x)
		}
	}
	for k := 0; k < p.opt.FlipsPerFrame; k++ {
		var at int
		if len(hdr) > 0 && k < p.opt.FlipsPerFrame-1 {
			at = hdr[p.rng.IntN(len(hdr))]
		} else {
			at = p.rng.IntN(len(data))
		}
		x := byte(1 + p.rng.IntN(255))
		p.packetMutant(KindFlip, i, fmt.Sprintf("%d^%02x", at, x), func(c *Capture) { c.Packets[i].Data[at] ^= x })
	}
	// Several bytes of one header at once.
	var spans []Span
	for _, s := range lay.Layers {
		if s.End > s.Start {
			spans = append(spans, s)
		}
	}
	if len(spans) > 0 {
		s := spans[p.rng.IntN(len(spans))]
		seed := p.rng.Uint64()
		p.packetMutant(KindFlip, i, fmt.Sprintf("%s-scramble", s.Name), func(c *Capture) {
			r := rand.New(rand.NewPCG(seed, 1))
			for x := s.Start; x < s.End && x < len(c.Packets[i].Data); x++ {
				c.Packets[i].Data[x] = byte(r.Uint32())
			}
		})
	}
}

// putField writes v into the length field l of data (masking as l says).
func putField(data []byte, l Length, v uint64) {
	if l.Off < 0 || l.Off+l.Size > len(data) {
		return
	}
	var cur uint64
	for k := 0; k < l.Size; k++ {
		cur = cur<<8 | uint64(data[l.Off+k])
	}
	if l.Bits > 0 {
		mask := (uint64(1)<<l.Bits - 1) << l.Shift
		cur = cur&^mask | (v<<l.Shift)&mask
	} else {
		cur = v
	}
	for k := l.Size - 1; k >= 0; k-- {
		data[l.Off+k] = byte(cur)
		cur >>= 8
	}
}

func getField(data []byte, l Length) uint64 {
	if l.Off < 0 || l.Off+l.Size > len(data) {
		return 0
	}
	var cur uint64
	for k := 0; k < l.Size; k++ {
		cur = cur<<8 | uint64(data[l.Off+k])
	}
	if l.Bits > 0 {
		cur = cur >> l.Shift & (uint64(1)<<l.Bits - 1)
	}
	return cur
}

func (p *planner) lengths(i int) {
	data := p.c.Packets[i].Data
	for _, l := range p.layouts[i].Lengths {
		v := getField(data, l)
		maxV := uint64(1)<<(8*l.Size) - 1
		if l.Bits > 0 {
			maxV = uint64(1)<<l.Bits - 1
		}
		vals := map[string]uint64{"0": 0, "max": maxV, "-1": v - 1, "+1": v + 1, "x2": v * 2}
		switch l.Name {
		case "mpa.pd_length":
			vals["513"] = 513 // over the RFC 5044 limit
			vals["4"] = 4     // IRD/ORD only
		case "rpcrdma.write_chunk.count", "rpcrdma.reply_chunk.count":
			vals["2^31"] = 1 << 31
			vals["65536"] = 65536
		}
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			nv := vals[k] & maxV
			if nv == v && k != "0" {
				continue
			}
			l := l
			p.packetMutant(KindLength, i, fmt.Sprintf("%s=%s", l.Name, k), func(c *Capture) { putField(c.Packets[i].Data, l, nv) })
		}
	}
}

func (p *planner) chunkLists(i int) {
	for _, s := range p.layouts[i].Lists {
		s := s
		// Every word a "present" discriminator: the read list never ends.
		p.packetMutant(KindChunkList, i, "read-list-never-terminated", func(c *Capture) {
			d := c.Packets[i].Data
			for x := s.Start; x+4 <= s.End && x+4 <= len(d); x += 4 {
				binary.BigEndian.PutUint32(d[x:], 1)
			}
		})
		// Empty read list, then a write list whose entries never end:
		// {1, count=1, segment} repeated.
		p.packetMutant(KindChunkList, i, "write-list-never-terminated", func(c *Capture) {
			d := c.Packets[i].Data
			x := s.Start
			if x+4 > min(s.End, len(d)) {
				return
			}
			binary.BigEndian.PutUint32(d[x:], 0)
			x += 4
			for ; x+24 <= s.End && x+24 <= len(d); x += 24 {
				binary.BigEndian.PutUint32(d[x:], 1)
				binary.BigEndian.PutUint32(d[x+4:], 1)
			}
		})
		// Empty lists, then a reply chunk claiming 2^32-1 segments.
		p.packetMutant(KindChunkList, i, "reply-chunk-count=max", func(c *Capture) {
			d := c.Packets[i].Data
			if s.Start+16 > min(s.End, len(d)) {
				return
			}
			binary.BigEndian.PutUint32(d[s.Start:], 0)
			binary.BigEndian.PutUint32(d[s.Start+4:], 0)
			binary.BigEndian.PutUint32(d[s.Start+8:], 1)
			binary.BigEndian.PutUint32(d[s.Start+12:], 0xffffffff)
		})
		// A discriminator that is neither 0 nor 1.
		p.packetMutant(KindChunkList, i, "discriminator=2", func(c *Capture) {
			d := c.Packets[i].Data
			if s.Start+4 <= len(d) {
				binary.BigEndian.PutUint32(d[s.Start:], 2)
			}
		})
	}
}

// Escape is what KindControlChars writes into strings: a terminal title
// change (OSC), clear screen (CSI), an 8-bit CSI, backspaces, a carriage
// return, a NUL, a DEL and a right-to-left override.
const Escape = "\x1b]0;pwned\x07\x1b[2J\x9b31m\rX\x08\x00\x7f\u202e"

func (p *planner) controlChars(i int) {
	for _, s := range p.layouts[i].Strings {
		s := s
		p.packetMutant(KindControlChars, i, s.Name, func(c *Capture) {
			d := c.Packets[i].Data
			for k := 0; s.Start+k < s.End && s.Start+k < len(d); k++ {
				d[s.Start+k] = Escape[k%len(Escape)]
			}
		})
	}
}

// transport adds duplicated, reordered and dropped transport packets.
func (p *planner) transport() {
	for i := range p.c.Packets {
		lay := p.layouts[i]
		if !lay.TCPPayload && !lay.RDMA {
			continue
		}
		p.packetMutant(KindDuplicate, i, "next", func(c *Capture) {
			c.Packets = append(c.Packets[:i+1], append([]Packet{c.Packets[i]}, c.Packets[i+1:]...)...)
		})
		if i+1 < len(p.c.Packets) {
			p.packetMutant(KindReorder, i, "swap-next", func(c *Capture) {
				c.Packets[i], c.Packets[i+1] = c.Packets[i+1], c.Packets[i]
			})
		}
		if i+3 < len(p.c.Packets) {
			p.packetMutant(KindReorder, i, "move-after-3", func(c *Capture) {
				pk := c.Packets[i]
				copy(c.Packets[i:], c.Packets[i+1:i+4])
				c.Packets[i+3] = pk
			})
			p.packetMutant(KindDuplicate, i, "again-after-3", func(c *Capture) {
				c.Packets = append(c.Packets[:i+4], append([]Packet{c.Packets[i]}, c.Packets[i+4:]...)...)
			})
		}
		p.packetMutant(KindDrop, i, "lost", func(c *Capture) {
			c.Packets = append(c.Packets[:i], c.Packets[i+1:]...)
		})
	}
}

// repeat adds one mutant per capture repeating its first connection
// message (the most stateful packet), or else its first packet.
func (p *planner) repeat() {
	if len(p.c.Packets) == 0 {
		return
	}
	i := 0
	for k, l := range p.layouts {
		if l.CM {
			i = k
			break
		}
	}
	n := p.opt.Repeat
	m := p.add(KindRepeat, i+2, fmt.Sprintf("x%d", n), func() []byte {
		d := p.c.Clone()
		pk := d.Packets[i]
		rep := make([]Packet, n)
		for k := range rep {
			rep[k] = pk
			rep[k].Time = pk.Time.Add(time.Duration(k) * time.Microsecond)
		}
		d.Packets = append(d.Packets[:i+1], append(rep, d.Packets[i+1:]...)...)
		b, _ := d.Encode(p.pcap())
		return b
	})
	m.Large = true
}

// Sample picks at most n mutants from plan, deterministically for a seed:
// round-robin over the kinds (so every kind is covered even for small n),
// shuffled within each kind. n <= 0 returns the whole plan. The result is
// in plan order.
func Sample(plan []*Mutant, n int, seed uint64) []*Mutant {
	if n <= 0 || n >= len(plan) {
		return plan
	}
	byKind := map[Kind][]int{}
	for i, m := range plan {
		byKind[m.Kind] = append(byKind[m.Kind], i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65))
	var kinds []Kind
	for _, k := range Kinds {
		if len(byKind[k]) > 0 {
			idx := byKind[k]
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			kinds = append(kinds, k)
		}
	}
	// The kinds' turn order depends on the seed too, so samples smaller
	// than the number of kinds differ in kind between seeds.
	rng.Shuffle(len(kinds), func(a, b int) { kinds[a], kinds[b] = kinds[b], kinds[a] })
	picked := make([]int, 0, n)
	for len(picked) < n {
		progress := false
		for _, k := range kinds {
			if len(picked) == n {
				break
			}
			if idx := byKind[k]; len(idx) > 0 {
				picked = append(picked, idx[0])
				byKind[k] = idx[1:]
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	sort.Ints(picked)
	out := make([]*Mutant, len(picked))
	for i, x := range picked {
		out[i] = plan[x]
	}
	return out
}
