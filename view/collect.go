package view

import (
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// value is one occurrence of a field in a record, as collected for filters
// and -T fields. Text and bytes are copied into the collector's arena.
type value struct {
	slot   int // index of the wanted field
	f      *field.Field
	u      uint64
	i      int64
	b      bool
	a      netip.Addr
	lo, hi int // arena range for strings and bytes
}

// collector gathers the values of a set of fields from a record, visiting
// only the layers whose protocol declares one of them.
type collector struct {
	slots  map[*field.Field]int
	protos map[*field.Proto]bool
	// fields and protoList mirror slots and protos for the hot path: a
	// linear scan of a few pointers beats a map lookup.
	fields    []*field.Field
	protoList []*field.Proto
	// byID is slot+1 by Field.ID (0: not wanted): slot is one index
	// whatever the number of wanted fields.
	byID  []int32
	vals  []value
	arena []byte
	// depth of groups we are in, for nothing but balance.
	depth int
	// ownOnly visits only the layers of the wanted fields' protocols
	// (for fields known to be reported by their own layer).
	ownOnly bool
}

func newCollector() *collector {
	return &collector{slots: map[*field.Field]int{}, protos: map[*field.Proto]bool{}}
}

// want adds f and returns its slot.
func (c *collector) want(f *field.Field) int {
	if s, ok := c.slots[f]; ok {
		return s
	}
	s := len(c.slots)
	c.slots[f] = s
	c.fields = append(c.fields, f)
	if f.ID > 0 {
		if f.ID >= len(c.byID) {
			c.byID = append(c.byID, make([]int32, f.ID+1-len(c.byID))...)
		}
		c.byID[f.ID] = int32(s + 1)
	}
	if !c.protos[f.Proto] {
		c.protos[f.Proto] = true
		c.protoList = append(c.protoList, f.Proto)
	}
	return s
}

// slot returns f's slot, -1 when f is not wanted.
func (c *collector) slot(f *field.Field) int {
	if id := f.ID; id > 0 {
		if id < len(c.byID) {
			return int(c.byID[id]) - 1
		}
		return -1
	}
	if len(c.fields) <= 16 {
		for i, w := range c.fields {
			if w == f {
				return i
			}
		}
		return -1
	}
	if s, ok := c.slots[f]; ok {
		return s
	}
	return -1
}

// wantsProto reports whether a field of p is wanted.
func (c *collector) wantsProto(p *field.Proto) bool {
	for _, w := range c.protoList {
		if w == p {
			return true
		}
	}
	return false
}

// collect resets and gathers the wanted fields of r. A layer may report
// fields of other protocols in subtrees (the CM layer reports the pvtdata
// decode under its private data), so every layer is visited except
// dissect's transport adapters, which report only their own fields.
func (c *collector) collect(r *dissect.Record) {
	c.vals = c.vals[:0]
	c.arena = c.arena[:0]
	if len(c.slots) == 0 {
		return
	}
	for _, l := range r.Layers {
		p := l.Proto()
		if c.wantsProto(p) || (!c.ownOnly && !dissect.IsTransport(p)) {
			l.VisitFields(c)
		}
	}
}

func (c *collector) add(f *field.Field) *value {
	s := c.slot(f)
	if s < 0 {
		return nil
	}
	c.vals = append(c.vals, value{slot: s, f: f})
	return &c.vals[len(c.vals)-1]
}

func (c *collector) Uint(f *field.Field, v uint64) {
	if p := c.add(f); p != nil {
		p.u = v
	}
}

func (c *collector) Int(f *field.Field, v int64) {
	if p := c.add(f); p != nil {
		p.i = v
	}
}

func (c *collector) Bool(f *field.Field, v bool) {
	if p := c.add(f); p != nil {
		p.b = v
	}
}

func (c *collector) String(f *field.Field, v string) {
	if p := c.add(f); p != nil {
		p.lo = len(c.arena)
		c.arena = append(c.arena, v...)
		p.hi = len(c.arena)
	}
}

func (c *collector) Bytes(f *field.Field, v []byte) {
	if p := c.add(f); p != nil {
		p.lo = len(c.arena)
		c.arena = append(c.arena, v...)
		p.hi = len(c.arena)
	}
}

func (c *collector) Addr(f *field.Field, v netip.Addr) {
	if p := c.add(f); p != nil {
		p.a = v
	}
}

func (c *collector) Begin(f *field.Field) {
	c.add(f)
	c.depth++
}

func (c *collector) End() { c.depth-- }

// bytesOf returns the text or bytes of v.
func (c *collector) bytesOf(v *value) []byte { return c.arena[v.lo:v.hi] }

// appendValue formats v as -T fields prints it (tshark's conventions: raw
// numbers, hex with 0x, bytes colon-separated, text escaped).
func (c *collector) appendValue(b []byte, v *value) []byte {
	switch v.f.Kind {
	case field.KindUint, field.KindHex, field.KindMAC, field.KindEUI64:
		return appendUint(b, v.f, v.u)
	case field.KindInt:
		return appendInt(b, v.i)
	case field.KindBool:
		if v.b {
			return append(b, '1')
		}
		return append(b, '0')
	case field.KindString:
		return appendEscapedBytes(b, c.bytesOf(v))
	case field.KindBytes:
		return appendColonBytes(b, c.bytesOf(v))
	case field.KindAddr:
		return appendAddr(b, v.a)
	}
	return b
}
