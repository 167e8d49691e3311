package source

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
)

// passer hands its input on to a decompressor a part at a time, so that
// the format's structure is looked at between parts (step) while the
// octets themselves pass as they are, read straight into the
// decompressor's buffer.
type passer struct {
	r *bufio.Reader
	// left is how many octets of the input pass before the next step
	// (math.MaxInt64: the rest of the input).
	left int64
	// made are octets made by a step, handed on before the input's next.
	made    []byte
	madeBuf [3]byte
}

// read hands on made, then at most left octets of the input, calling step
// whenever both are used up.
func (p *passer) read(b []byte, step func()) (int, error) {
	for len(p.made) == 0 && p.left == 0 {
		step()
	}
	if len(p.made) > 0 {
		n := copy(b, p.made)
		p.made = p.made[n:]
		return n, nil
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, err := p.r.Read(b)
	p.left -= int64(n)
	return n, err
}

// The magic numbers of the frames the two formats share the range of
// (RFC 8878 §3.1.2, lz4_Frame_format.md): the low 4 bits are free; a
// 32-bit length of what to skip follows.
const skippableMagic, skippableMask = 0x184d2a50, 0xfffffff0

// zstdLastBlocks hands a zstd stream (RFC 8878) to the decoder with each
// frame's last block split in two: the block with its Last_Block bit
// cleared, then an empty last block (a raw block of no octets) made here.
// The decoder gives a block's octets only once the checks that end its
// frame pass: the 4-octet content checksum and the declared content size
// it reads and compares when it decodes the last block. So a file cut
// inside the checksum, or one whose checksum differs, lost the whole last
// block, up to 128 KiB of packets the file holds intact. Split, that block
// comes out as any other, and the same checks, still the decoder's, fall
// on the empty block after it: a bad checksum or size is still an error,
// after the packets. Everything else passes unchanged (skippable frames,
// and whatever is not zstd, for the decoder to refuse).
type zstdLastBlocks struct {
	passer
	next zstdPart
	// checksum: the frame being passed has a content checksum.
	checksum bool
}

// zstdPart is what the input holds once left is passed.
type zstdPart uint8

const (
	zstdFrameStart zstdPart = iota // a frame, a skippable frame or the end
	zstdBlockStart                 // a block header
	zstdLastEnd                    // the end of a frame's last block: the empty block goes here
)

func (z *zstdLastBlocks) Read(p []byte) (int, error) { return z.read(p, z.step) }

// step looks at the structure at the input's position. Input too short
// for a header passes as it is: the decoder finds it cut.
func (z *zstdLastBlocks) step() {
	z.left = math.MaxInt64
	switch z.next {
	case zstdFrameStart:
		head, _ := z.r.Peek(8)
		if len(head) < 5 {
			return
		}
		switch magic := binary.LittleEndian.Uint32(head); {
		case magic == 0xfd2fb528:
			fhd := head[4]
			// Magic, Frame_Header_Descriptor, Dictionary_ID and
			// Frame_Content_Size (1 octet when its flag is 0 in a
			// single segment), Window_Descriptor (when not single).
			size := 5 + [4]int64{0, 1, 2, 4}[fhd&3] + [4]int64{0, 2, 4, 8}[fhd>>6]
			if fhd&0x20 == 0 || fhd>>6 == 0 {
				size++
			}
			z.left, z.next, z.checksum = size, zstdBlockStart, fhd&4 != 0
		case magic&skippableMask == skippableMagic && len(head) == 8:
			z.left = 8 + int64(binary.LittleEndian.Uint32(head[4:]))
		}
	case zstdBlockStart:
		head, _ := z.r.Peek(3)
		if len(head) < 3 {
			return
		}
		h := uint32(head[0]) | uint32(head[1])<<8 | uint32(head[2])<<16
		size := int64(h >> 3)
		switch h >> 1 & 3 {
		case 1: // RLE: one octet repeated
			size = 1
		case 3: // reserved: the decoder refuses it
			return
		}
		if h&1 == 0 {
			z.left = 3 + size
			return
		}
		h &^= 1
		z.madeBuf = [3]byte{byte(h), byte(h >> 8), byte(h >> 16)}
		z.made = z.madeBuf[:]
		z.r.Discard(3)
		z.left, z.next = size, zstdLastEnd
	case zstdLastEnd:
		z.madeBuf = [3]byte{1, 0, 0} // Last_Block, raw, Block_Size 0
		z.made = z.madeBuf[:]
		z.left, z.next = 0, zstdFrameStart
		if z.checksum {
			z.left = 4
		}
	}
}

// lz4Ends follows an LZ4 frame-format stream (lz4's
// doc/lz4_Frame_format.md) as it passes to the decoder, to tell where the
// input ended. The decoder takes the input's end before a block's length,
// before the content checksum or inside a skippable frame for the end of
// the stream: a file cut just after a block read as whole, without an
// error, when its last record happened to end there.
type lz4Ends struct {
	passer
	inFrame bool
	flags   byte // the frame's FLG
	// whole: the input ended where a frame may start.
	whole bool
}

func (z *lz4Ends) Read(p []byte) (int, error) { return z.read(p, z.step) }

func (z *lz4Ends) step() {
	z.left = math.MaxInt64
	le := binary.LittleEndian
	if !z.inFrame {
		head, _ := z.r.Peek(8)
		z.whole = len(head) == 0
		if len(head) < 6 {
			return
		}
		switch magic := le.Uint32(head); {
		case magic == 0x184d2204:
			// Magic, FLG, BD, Content Size and Dictionary ID when
			// flagged, Header Checksum.
			z.flags = head[4]
			z.left, z.inFrame = 7, true
			if z.flags&0x08 != 0 {
				z.left += 8
			}
			if z.flags&0x01 != 0 {
				z.left += 4
			}
		case magic&skippableMask == skippableMagic:
			if len(head) == 8 {
				z.left = 8 + int64(le.Uint32(head[4:]))
			}
		default:
			// Not a frame followed here (a legacy LZ4 frame,
			// garbage): how it ends is the library's to judge.
			z.whole = true
		}
		return
	}
	head, _ := z.r.Peek(4)
	if len(head) < 4 {
		return
	}
	size := int64(le.Uint32(head) &^ (1 << 31)) // the top bit: stored uncompressed
	if size == 0 {
		z.left, z.inFrame = 4, false // EndMark
		if z.flags&0x04 != 0 {
			z.left += 4 // Content Checksum
		}
		return
	}
	z.left = 4 + size
	if z.flags&0x10 != 0 {
		z.left += 4 // Block Checksum
	}
}

// lz4Reader is the LZ4 decoder's output, its end an error when the input
// did not end where a frame may start.
type lz4Reader struct {
	io.Reader
	in *lz4Ends
}

func (r lz4Reader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if err == io.EOF && !r.in.whole {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
