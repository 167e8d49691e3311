package ibcm

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// A CM message's fixed fields (and the common MAD header's, mad.go) are
// declared once, as a layout: one wire per field, in the order the field
// is shown, saying where the field lies (as the IBTA vol. 1 §12.6 tables
// give it: octet, first bit counted from the octet's most significant bit,
// width) and where the decode keeps it. The decode, the encode, the field
// visit and the reserved-bits check are all walks of that table.
//
// A message the capture's snap length cut inside its fixed fields decodes
// and shows the fields wholly captured (each wire's need): the others stay
// zero and unshown, and Holds says which is which.

// span is where a field, or one piece of a split field, lies: octet, first
// bit (0 is the most significant) and width in bits. A width of 0 is the
// width of the field's declaration.
type span struct {
	octet, bit, width int
	reserved          bool // set bits here are a finding
}

// at places a field at octet and bit; its width is its declaration's.
func at(octet, bit int) span { return span{octet: octet, bit: bit} }

// piece places one piece of a field split over the message (REP's Vendor
// ID), or a field declared for no view, with its width.
func piece(octet, bit, width int) span { return span{octet: octet, bit: bit, width: width} }

// wire is one fixed field of a message (or of a part of one, a path or a
// ClassPortInfo) held in M.
type wire[M any] struct {
	spans []span // where the field lies; several for a split field
	// need is how many octets of M, from its first, decode and visit need
	// to have: all of a field's; a part's first field's (a part cut inside
	// shows the fields captured).
	need    int
	members []member[M] // the struct members the wire decodes into
	decode  func(m *M, b []byte)
	encode  func(m *M, b []byte)
	visit   func(m *M, v field.Visitor, n int) // nil: not shown; n octets of M captured
}

// member is a struct member of M a field decodes into, and how many
// octets of M, from its first, hold the field.
type member[M any] struct {
	need int
	of   func(*M) any
}

// leaf returns the wire of one field at spans decoded into the member p
// returns.
func leaf[M any, T any](spans []span, p func(*M) *T) wire[M] {
	need := 0
	for _, s := range spans {
		need = max(need, s.octet+(s.bit+s.width+7)/8)
	}
	return wire[M]{spans: spans, need: need, members: []member[M]{{need, func(m *M) any { return p(m) }}}}
}

// wires is a message's layout, or a part's, in the order it is shown.
type wires[M any] []wire[M]

// decode decodes the fields b holds (all of them unless the snap length
// cut the message's fixed fields).
func (ws wires[M]) decode(m *M, b []byte) {
	for i := range ws {
		if ws[i].need <= len(b) {
			ws[i].decode(m, b)
		}
	}
}

func (ws wires[M]) encode(m *M, b []byte) {
	for i := range ws {
		ws[i].encode(m, b)
	}
}

// visit shows the fields the first n octets of M hold.
func (ws wires[M]) visit(m *M, v field.Visitor, n int) {
	for i := range ws {
		if ws[i].visit != nil && ws[i].need <= n {
			ws[i].visit(m, v, n)
		}
	}
}

// reservedMask returns the reserved bits of the first n octets: those no
// wire covers and those of reserved spans.
func (ws wires[M]) reservedMask(n int) []byte {
	covered, mask := make([]byte, n), make([]byte, n)
	for _, w := range ws {
		for _, s := range w.spans {
			for i := s.octet*8 + s.bit; i < s.octet*8+s.bit+s.width; i++ {
				bit := byte(0x80) >> (i % 8)
				covered[i/8] |= bit
				if s.reserved {
					mask[i/8] |= bit
				}
			}
		}
	}
	for i := range mask {
		mask[i] |= ^covered[i]
	}
	return mask
}

// getBits reads the bits of s from b, big-endian.
func getBits(b []byte, s span) uint64 {
	n := (s.bit + s.width + 7) / 8
	var v uint64
	for _, o := range b[s.octet : s.octet+n] {
		v = v<<8 | uint64(o)
	}
	v >>= uint(n*8 - s.bit - s.width)
	if s.width < 64 {
		v &= 1<<s.width - 1
	}
	return v
}

// setBits writes the low bits of v to the bits of s, leaving the other
// bits of the octets as they are.
func setBits(b []byte, s span, v uint64) {
	n := (s.bit + s.width + 7) / 8
	shift := uint(n*8 - s.bit - s.width)
	mask := ^uint64(0)
	if s.width < 64 {
		mask = 1<<s.width - 1
	}
	mask <<= shift
	v = v << shift & mask
	for i := n - 1; i >= 0; i-- {
		o := &b[s.octet+i]
		*o = *o&^byte(mask) | byte(v)
		mask >>= 8
		v >>= 8
	}
}

// sized fills in the width of spans that take their field's, and checks
// that the pieces of a field add up to its width and that each fits the
// 64 bits getBits reads.
func sized(f *field.Field, spans []span) []span {
	out := make([]span, len(spans))
	total := 0
	for i, s := range spans {
		if s.width == 0 && f != nil {
			s.width = f.Bits
		}
		if s.width <= 0 || s.bit < 0 || s.bit > 7 || (s.bit+s.width+7)/8 > 8 {
			panic(fmt.Sprintf("ibcm: bad span %+v of %v", s, f))
		}
		out[i] = s
		total += s.width
	}
	if f != nil && total != f.Bits {
		panic(fmt.Sprintf("ibcm: %s is %d bits, its spans %d", f.Name, f.Bits, total))
	}
	return out
}

// num is an integer field (f nil: decoded and encoded, not shown).
func num[M any, T ~uint8 | ~uint16 | ~uint32 | ~uint64](f *field.Field, p func(*M) *T, spans ...span) wire[M] {
	spans = sized(f, spans)
	w := leaf(spans, p)
	w.decode = func(m *M, b []byte) {
		var v uint64
		for _, s := range spans {
			v = v<<s.width | getBits(b, s)
		}
		*p(m) = T(v)
	}
	w.encode = func(m *M, b []byte) {
		v := uint64(*p(m))
		for i := len(spans) - 1; i >= 0; i-- {
			setBits(b, spans[i], v)
			v >>= spans[i].width
		}
	}
	if f != nil {
		w.visit = func(m *M, v field.Visitor, _ int) { v.Uint(f, uint64(*p(m))) }
	}
	return w
}

// reserved marks w's bits reserved: it is still decoded and shown, and set
// bits in it are a finding.
func reserved[M any](w wire[M]) wire[M] {
	w.spans = append([]span(nil), w.spans...)
	for i := range w.spans {
		w.spans[i].reserved = true
	}
	return w
}

// flag is a one-bit field.
func flag[M any](f *field.Field, p func(*M) *bool, s span) wire[M] {
	spans := sized(f, []span{s})
	s = spans[0]
	w := leaf(spans, p)
	w.decode = func(m *M, b []byte) { *p(m) = getBits(b, s) != 0 }
	w.encode = func(m *M, b []byte) { setBits(b, s, uint64(b2u(*p(m)))) }
	w.visit = func(m *M, v field.Visitor, _ int) { v.Bool(f, *p(m)) }
	return w
}

// octetSpans covers the n octets at octet.
func octetSpans(octet, n int) []span {
	var out []span
	for ; n > 0; n, octet = n-8, octet+8 {
		out = append(out, piece(octet, 0, min(n, 8)*8))
	}
	return out
}

// gid is a 16-octet GID at octet.
func gid[M any](f *field.Field, p func(*M) *[16]byte, octet int) wire[M] {
	w := leaf(octetSpans(octet, 16), p)
	w.decode = func(m *M, b []byte) { copy(p(m)[:], b[octet:octet+16]) }
	w.encode = func(m *M, b []byte) { copy(b[octet:octet+16], p(m)[:]) }
	w.visit = func(m *M, v field.Visitor, _ int) { v.Addr(f, netip.AddrFrom16(*p(m))) }
	return w
}

// octets is n octets at octet, kept as a slice of the packet.
func octets[M any](f *field.Field, p func(*M) *[]byte, octet, n int) wire[M] {
	end := octet + n
	w := leaf(octetSpans(octet, n), p)
	w.decode = func(m *M, b []byte) { *p(m) = b[octet:end:end] }
	w.encode = func(m *M, b []byte) { copy(b[octet:end], *p(m)) }
	w.visit = func(m *M, v field.Visitor, _ int) { v.Bytes(f, *p(m)) }
	return w
}

// serviceID is the 8-octet service ID at octet, shown with what it says.
func serviceID[M any](f serviceIDFields, p func(*M) *ServiceID, octet int) wire[M] {
	w := leaf(octetSpans(octet, 8), p)
	w.decode = func(m *M, b []byte) { *p(m) = ServiceID(binary.BigEndian.Uint64(b[octet:])) }
	w.encode = func(m *M, b []byte) { binary.BigEndian.PutUint64(b[octet:], uint64(*p(m))) }
	w.visit = func(m *M, v field.Visitor, _ int) { f.visit(v, *p(m)) }
	return w
}

// part is a part of the message with its own layout (a path, the
// communication IDs, a ClassPortInfo) at octet, shown under group (nil:
// in line).
func part[M, P any](group *field.Field, p func(*M) *P, octet int, ws wires[P]) wire[M] {
	var spans []span
	var members []member[M]
	need := 0
	for i, w := range ws {
		for _, s := range w.spans {
			s.octet += octet
			spans = append(spans, s)
		}
		for _, pm := range w.members {
			of := pm.of
			members = append(members, member[M]{octet + pm.need, func(m *M) any { return of(p(m)) }})
		}
		if i == 0 || w.need < need {
			need = w.need
		}
	}
	return wire[M]{
		spans:   spans,
		need:    octet + need,
		members: members,
		decode:  func(m *M, b []byte) { ws.decode(p(m), b[octet:]) },
		encode:  func(m *M, b []byte) { ws.encode(p(m), b[octet:]) },
		visit: func(m *M, v field.Visitor, n int) {
			if group != nil {
				v.Begin(group)
			}
			ws.visit(p(m), v, n-octet)
			if group != nil {
				v.End()
			}
		},
	}
}

// fixed is a CM message's layout bound to where a CM keeps the message.
type fixed interface {
	decode(c *CM, b []byte)
	encode(c *CM, b []byte)
	visit(c *CM, v field.Visitor)
	// reserved reports set reserved bits in the fixed fields b (as far as
	// b goes).
	reserved(b []byte) bool
	// message returns the decoded message (*REQ …).
	message(c *CM) any
	// need returns how many octets of the message hold the field decoded
	// into member, a pointer to a member of c's message (ok false: none).
	need(c *CM, member any) (n int, ok bool)
}

// layout is a CM message's fixed fields.
type layout[M any] struct {
	of      func(*CM) *M
	ws      wires[M]
	members []member[M]
	mask    []byte
}

// shownAfter is what a message shows after its fixed fields that follows
// from their values rather than the layout (a REJ's decoded Additional
// Rejection Information, a redirect's ClassPortInfo).
type shownAfter interface{ visitAfter(v field.Visitor) }

// newLayout declares the layout of the message of attribute attr, kept by
// of in a CM.
func newLayout[M any](attr uint16, of func(*CM) *M, ws ...wire[M]) *layout[M] {
	l := &layout[M]{of: of, ws: ws, mask: wires[M](ws).reservedMask(messages[attr].hdr)}
	for _, w := range ws {
		l.members = append(l.members, w.members...)
	}
	return l
}

func (l *layout[M]) decode(c *CM, b []byte) { l.ws.decode(l.of(c), b) }
func (l *layout[M]) encode(c *CM, b []byte) { l.ws.encode(l.of(c), b) }
func (l *layout[M]) message(c *CM) any      { return l.of(c) }

func (l *layout[M]) visit(c *CM, v field.Visitor) {
	m := l.of(c)
	l.ws.visit(m, v, c.fixed)
	if a, ok := any(m).(shownAfter); ok && c.fixed >= len(l.mask) {
		a.visitAfter(v)
	}
}

func (l *layout[M]) reserved(b []byte) bool {
	for i, x := range l.mask[:min(len(l.mask), len(b))] {
		if b[i]&x != 0 {
			return true
		}
	}
	return false
}

func (l *layout[M]) need(c *CM, member any) (int, bool) {
	m := l.of(c)
	for _, x := range l.members {
		if x.of(m) == member {
			return x.need, true
		}
	}
	return 0, false
}
