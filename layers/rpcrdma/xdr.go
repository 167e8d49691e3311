package rpcrdma

import "encoding/binary"

// xdrc is a bounds-checked XDR reader over one buffer. The first read past
// the end sets bad and every later read returns zero values, so callers
// check bad once after a sequence of reads; no read can panic or loop.
type xdrc struct {
	b   []byte
	off int
	bad bool
}

func (x *xdrc) left() int { return len(x.b) - x.off }

func (x *xdrc) u32() uint32 {
	if x.bad || x.left() < 4 {
		x.fail()
		return 0
	}
	v := binary.BigEndian.Uint32(x.b[x.off:])
	x.off += 4
	return v
}

func (x *xdrc) fail() {
	x.bad = true
	x.off = len(x.b)
}

func (x *xdrc) skip(n int) {
	if x.bad || n < 0 || x.left() < n {
		x.fail()
		return
	}
	x.off += n
}

// opaque reads a variable-length opaque or string (length, bytes, pad).
func (x *xdrc) opaque() []byte {
	n := x.u32()
	if x.bad {
		return nil
	}
	if uint64(n) > uint64(x.left()) {
		x.fail()
		return nil
	}
	v := x.b[x.off : x.off+int(n)]
	x.skip(pad4(int(n)))
	return v
}

// count reads an array length and checks that count elements of at least
// minSize octets each can fit in what is left.
func (x *xdrc) count(minSize int) int {
	n := x.u32()
	if x.bad {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if uint64(n)*uint64(minSize) > uint64(x.left()) {
		x.fail()
		return 0
	}
	return int(n)
}

// array skips an array of fixed-size elements.
func (x *xdrc) array(size int) {
	n := x.count(size)
	x.skip(n * size)
}

// opaques skips an array of opaques.
func (x *xdrc) opaques() {
	n := x.count(4)
	for i := 0; i < n && !x.bad; i++ {
		x.opaque()
	}
}

func (x *xdrc) bitmap()          { x.array(4) }
func (x *xdrc) fattr()           { x.bitmap(); x.opaque() }
func (x *xdrc) boolean() bool    { return x.u32() != 0 }
func (x *xdrc) lockOwner()       { x.skip(8); x.opaque() }
func (x *xdrc) changeInfo()      { x.skip(20) }
func (x *xdrc) layoutUpdate()    { x.skip(4); x.opaque() }
func (x *xdrc) stateProtectOps() { x.bitmap(); x.bitmap() }
