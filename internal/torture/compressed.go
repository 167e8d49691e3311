package torture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/cmpd-dissect/cmpd-dissect/source"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The magic numbers of the compressed formats read, and of the skippable
// frames zstd and LZ4 share (the low 4 bits free, a 32-bit length of what
// to skip after).
const (
	zstdMagic      = 0xfd2fb528
	lz4Magic       = 0x184d2204
	skippableMagic = 0x184d2a50
)

// compressedKind is the format b is compressed in, found by its magic
// after any skippable frames, or source.Uncompressed.
func compressedKind(b []byte) source.Compression {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return source.Gzip
	}
	for len(b) >= 8 && binary.LittleEndian.Uint32(b)&^0xf == skippableMagic {
		n := uint64(binary.LittleEndian.Uint32(b[4:]))
		if n > uint64(len(b)-8) {
			return source.Uncompressed
		}
		b = b[8+n:]
	}
	if len(b) >= 4 {
		switch binary.LittleEndian.Uint32(b) {
		case zstdMagic:
			return source.Zstd
		case lz4Magic:
			return source.LZ4
		}
	}
	return source.Uncompressed
}

// decompressor reads b decompressed (kind is compressedKind's).
func decompressor(kind source.Compression, b []byte) (io.Reader, error) {
	r := bytes.NewReader(b)
	switch kind {
	case source.Gzip:
		return gzip.NewReader(r)
	case source.Zstd:
		return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	case source.LZ4:
		return lz4.NewReader(r), nil
	}
	return r, nil
}

// compressed is a capture file written compressed in blocks that end
// where the writer was told to flush.
type compressed struct {
	kind source.Compression
	data []byte
	// header is the length of the format's header, before the first
	// block.
	header int
	// ends[i] is where block i ends in data, plain[i] how many octets of
	// the capture the blocks up to it hold: what a decompressor gives
	// once it has read ends[i] octets, whatever follows.
	ends, plain []int
}

// compress writes b compressed as kind, ending a block at each offset of
// flushes (increasing); the last block, written when the stream is
// closed, ends the frame (zstd's with its Last_Block flag) and holds the
// octets after the last flush. The writers are set for a deterministic
// output: one goroutine, the fastest levels, zstd's and LZ4's content
// checksums and LZ4's block checksums on, 64 KiB LZ4 blocks.
func compress(kind source.Compression, b []byte, flushes []int) compressed {
	var buf bytes.Buffer
	var w interface {
		io.WriteCloser
		Flush() error
	}
	c := compressed{kind: kind}
	switch kind {
	case source.Gzip:
		w, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		c.header = 10
	case source.Zstd:
		w, _ = zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderCRC(true), zstd.WithWindowSize(1<<20), zstd.WithZeroFrames(true))
		c.header = 6 // magic, Frame_Header_Descriptor 0x04 (a checksum), Window_Descriptor
	case source.LZ4:
		zw := lz4.NewWriter(&buf)
		zw.Apply(lz4.ConcurrencyOption(1), lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(true),
			lz4.BlockChecksumOption(true), lz4.CompressionLevelOption(lz4.Fast))
		w = zw
		c.header = 7 // magic, FLG, BD, HC
	default:
		panic("torture: compress: " + kind.String())
	}
	at := 0
	for _, f := range flushes {
		if f <= at || f >= len(b) {
			continue
		}
		w.Write(b[at:f])
		w.Flush()
		at = f
		c.ends, c.plain = append(c.ends, buf.Len()), append(c.plain, f)
	}
	w.Write(b[at:])
	w.Close()
	c.data = buf.Bytes()
	c.ends, c.plain = append(c.ends, c.lastEnd()), append(c.plain, len(b))
	return c
}

// Compress writes b compressed as kind (deterministically: see
// compress).
func Compress(kind source.Compression, b []byte) []byte {
	return compress(kind, b, nil).data
}

// lastEnd is where the last block ends: before the checksums and end
// marks that end the stream.
func (c compressed) lastEnd() int {
	switch c.kind {
	case source.Gzip:
		return len(c.data) - 8 // CRC-32, ISIZE
	case source.LZ4:
		return len(c.data) - 8 // EndMark, Content Checksum
	}
	return len(c.data) - 4 // Content_Checksum
}

// decodable is how many octets of the capture data[:at] holds in whole
// blocks.
func (c compressed) decodable(at int) int {
	n := 0
	for i, e := range c.ends {
		if e <= at {
			n = c.plain[i]
		}
	}
	return n
}

// blockStart is where block i starts.
func (c compressed) blockStart(i int) int {
	if i == 0 {
		return c.header
	}
	return c.ends[i-1]
}

// frameAfter is the first frame of idx not wholly within the first n
// octets.
func frameAfter(idx Index, n int) int {
	for i, r := range idx.Records {
		if r.End > n {
			return i + 1
		}
	}
	return len(idx.Records) + 1
}

// flushPoints are where compress ends blocks for a capture: about six
// blocks, at record ends and inside records alternately, after the file
// header.
func flushPoints(idx Index) []int {
	n := len(idx.Records)
	var out []int
	for k := 1; k < 6; k++ {
		i := n * k / 6
		if i == 0 || i >= n {
			continue
		}
		r := idx.Records[i]
		if k%2 == 1 {
			out = append(out, r.Start)
		} else {
			out = append(out, r.Data+(r.End-r.Data)/2)
		}
	}
	return out
}

// compressedDamage adds the mutants of the capture compressed as kind:
// cut at each block's end ±1, inside blocks, headers and the checksums
// that end the stream; octets flipped in the header, block headers, block
// data and checksums; concatenated frames (members), whole and damaged;
// skippable frames; sizes declared huge; garbage after the end; and a
// small bomb of empty records. Frame is the first frame not held whole by
// the blocks before the damage: every decompressor read here gives a
// block once it has read it (gzip even each octet), before it checks
// what ends its frame.
func (p *planner) compressedDamage(kind source.Compression) {
	plain, idx := p.c.Encode(p.c.Format)
	c := compress(kind, plain, flushPoints(idx))
	mk := map[source.Compression]Kind{source.Gzip: KindGzip, source.Zstd: KindZstd, source.LZ4: KindLZ4}[kind]
	add := func(frame int, detail string, build func() []byte) *Mutant { return p.add(mk, frame, detail, build) }
	// edit: the stream as change leaves a copy of it.
	edit := func(frame int, detail string, change func(b []byte) []byte) *Mutant {
		return add(frame, detail, func() []byte { return change(bytes.Clone(c.data)) })
	}
	all := len(idx.Records) + 1
	// Nothing decompresses before the first block (zstd and LZ4) or
	// after the gzip header alone: the capture's header is not there.
	nothing := c.ends[0]
	if kind == source.Gzip {
		nothing = c.header + 1
	}
	seen := map[int]bool{}
	cut := func(at int, why string) {
		if at <= 0 || at >= len(c.data) || seen[at] {
			return
		}
		seen[at] = true
		m := add(frameAfter(idx, c.decodable(at)), fmt.Sprintf("cut-%s@%d", why, at), func() []byte { return bytes.Clone(c.data[:at]) })
		m.HeaderDamaged = at < nothing
	}
	cut(2, "magic")
	cut(c.header-1, "header")
	cut(c.header, "header-end")
	for i, e := range c.ends {
		cut(e-1, fmt.Sprintf("block%d-end", i))
		cut(e, fmt.Sprintf("block%d-end", i))
		cut(e+1, fmt.Sprintf("block%d-end", i))
		cut((c.blockStart(i)+e)/2, fmt.Sprintf("block%d", i))
	}
	for k := 1; k <= 8; k++ {
		cut(len(c.data)-k, "trailer")
	}

	flip := func(at int, what string, frame int) *Mutant {
		x := byte(1 + p.rng.IntN(255))
		return edit(frame, fmt.Sprintf("flip-%s@%d^%02x", what, at, x), func(b []byte) []byte { b[at] ^= x; return b })
	}
	magic := 4
	if kind == source.Gzip {
		magic = 2
	}
	edit(0, "magic-flip", func(b []byte) []byte { b[1] ^= 0x01; return b }).HeaderDamaged = true
	for at := magic; at < c.header; at++ {
		flip(at, "header", 0)
	}
	for i, e := range c.ends {
		start := c.blockStart(i)
		before := frameAfter(idx, c.decodable(start))
		if kind != source.Gzip {
			flip(start+p.rng.IntN(3), fmt.Sprintf("block%d-header", i), before)
		}
		if e-start > 8 {
			flip(start+4+p.rng.IntN(e-start-8), fmt.Sprintf("block%d", i), before)
		}
		if kind == source.LZ4 {
			flip(e-1-p.rng.IntN(4), fmt.Sprintf("block%d-checksum", i), before)
		}
	}
	for k := 1; k <= 8 && len(c.data)-k >= c.ends[len(c.ends)-1]; k++ {
		flip(len(c.data)-k, "trailer", all)
	}
	if kind == source.Gzip {
		edit(all, "isize=max", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[len(b)-4:], 0xffffffff); return b })
	}
	edit(all, "trailing-garbage", func(b []byte) []byte { return append(b, "garbage after the end\x00\xff"...) })

	// Two frames (members), split inside a record: one stream, read
	// whole; with the second cut or its magic damaged, the first's
	// frames are kept.
	split := idx.HeaderEnd
	if len(idx.Records) > 0 {
		r := idx.Records[len(idx.Records)/2]
		split = r.Data + (r.End-r.Data)/2
	}
	frames := func(change func(first, second []byte) []byte) func() []byte {
		return func() []byte { return change(Compress(kind, plain[:split]), Compress(kind, plain[split:])) }
	}
	add(all, "two-frames", frames(func(a, b []byte) []byte { return append(a, b...) }))
	add(frameAfter(idx, split), "two-frames-second-cut", frames(func(a, b []byte) []byte { return append(a, b[:len(b)/2]...) }))
	add(frameAfter(idx, split), "two-frames-second-magic", frames(func(a, b []byte) []byte { b[1] ^= 0x01; return append(a, b...) }))

	// A pcap header and a run of zeros: a small bomb of empty records.
	add(0, "zeros-1MiB", func() []byte {
		return Compress(kind, append(bytes.Clone(plain[:idx.HeaderEnd]), make([]byte, 1<<20)...))
	}).Large = true

	le := binary.LittleEndian
	switch kind {
	case source.Gzip:
		// A header with FEXTRA of 65535 octets that are not there, and
		// one whose FNAME never ends.
		edit(0, "fextra-65535", func(b []byte) []byte {
			b[3] |= 0x04
			return append(append(b[:10:10], 0xff, 0xff), b[10:]...)
		}).HeaderDamaged = true
		edit(0, "fname-unterminated", func(b []byte) []byte {
			b[3] |= 0x08
			return append(b[:10], bytes.Repeat([]byte{'x'}, 300)...)
		}).HeaderDamaged = true
	case source.Zstd, source.LZ4:
		// Skippable frames (pzstd writes one before each frame), and
		// one that claims 4 GiB the file does not hold.
		skippable := func(n uint32, body string) []byte {
			return append(le.AppendUint32(le.AppendUint32(nil, skippableMagic|0x7), n), body...)
		}
		sk := skippable(5, "pzstd")
		add(all, "skippable-before-between-after", frames(func(a, b []byte) []byte { return bytes.Join([][]byte{sk, a, sk, b, sk}, nil) }))
		add(frameAfter(idx, split), "skippable-4GiB", frames(func(a, b []byte) []byte { return slices.Concat(a, skippable(0xffffffff, ""), b) }))
	}
	mid := len(c.ends) / 2
	switch kind {
	case source.Zstd:
		// Window_Descriptor exponent 31 (2^41 octets): refused.
		edit(0, "window=2^41", func(b []byte) []byte { b[5] = 0xf8; return b }).HeaderDamaged = true
		// An 8-octet Frame_Content_Size: far more than the frame holds
		// (an error after every frame), less than a capture header (the
		// first block is more: refused), and a single segment of 2^62
		// (its window).
		fcs := func(fhd byte, wd []byte, size uint64) func(b []byte) []byte {
			return func(b []byte) []byte {
				h := append(append([]byte{0x28, 0xb5, 0x2f, 0xfd, fhd}, wd...), le.AppendUint64(nil, size)...)
				return append(h, b[c.header:]...)
			}
		}
		edit(all, "content-size=2^62", fcs(0xc4, c.data[5:6], 1<<62))
		edit(0, "content-size=16", fcs(0xc4, c.data[5:6], 16)).HeaderDamaged = true
		edit(0, "single-segment-content-size=2^62", fcs(0xe4, nil, 1<<62)).HeaderDamaged = true
		// A block of the reserved type; the last block's Last_Block
		// flag cleared (the checksum read as a block header).
		edit(frameAfter(idx, c.decodable(c.blockStart(mid))), fmt.Sprintf("block%d-reserved-type", mid),
			func(b []byte) []byte { b[c.blockStart(mid)] |= 0x06; return b })
		last := len(c.ends) - 1
		edit(frameAfter(idx, c.decodable(c.blockStart(last))), "last-block-not-last",
			func(b []byte) []byte { b[c.blockStart(last)] &^= 1; return b })
	case source.LZ4:
		// A declared content size of 2^62 (the library does not check
		// it), and a block longer than the frame's 64 KiB.
		add(all, "content-size=2^62", func() []byte {
			var buf bytes.Buffer
			zw := lz4.NewWriter(&buf)
			zw.Apply(lz4.ConcurrencyOption(1), lz4.SizeOption(1<<62))
			zw.Write(plain)
			zw.Close()
			return buf.Bytes()
		})
		edit(frameAfter(idx, c.decodable(c.blockStart(mid))), fmt.Sprintf("block%d-size=64KiB+1", mid),
			func(b []byte) []byte { le.PutUint32(b[c.blockStart(mid):], 64<<10+1); return b })
	}
}
