// Package fieldval collects the values of chosen fields from a dissected
// record: the display filter (dfilter), -T fields and the statistics'
// breakdowns (view) read them from here.
package fieldval

import (
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// Value is one occurrence of a field in a record. Text and bytes are
// copied into the collector's arena (Collector.BytesOf).
type Value struct {
	Slot  int // the field's index among the wanted fields
	Field *field.Field
	Uint  uint64
	Int   int64
	Bool  bool
	Addr  netip.Addr
	// lo, hi is the arena range of a string or bytes value.
	lo, hi int
}

// Collector gathers the values of a set of fields from a record, visiting
// only the layers whose protocol declares one of them. It is the
// field.Visitor the layers report to.
type Collector struct {
	slots  map[*field.Field]int
	protos map[*field.Proto]bool
	// fields and protoList mirror slots and protos for the hot path: a
	// linear scan of a few pointers beats a map lookup.
	fields    []*field.Field
	protoList []*field.Proto
	// byID is slot+1 by Field.ID (0: not wanted): slot is one index
	// whatever the number of wanted fields.
	byID []int32
	// eitherByID is slot+1 of the wanted either-side field (ip.addr) a
	// field is a member of, by the member's Field.ID: its values go to
	// that slot too.
	eitherByID []int32
	vals       []Value
	arena      []byte
	// depth of groups we are in, for nothing but balance.
	depth int
	// OwnOnly visits only the layers of the wanted fields' protocols
	// (for fields known to be reported by their own layer).
	OwnOnly bool
}

// New makes a collector that wants no field yet.
func New() *Collector {
	return &Collector{slots: map[*field.Field]int{}, protos: map[*field.Proto]bool{}}
}

// Want adds f and returns its slot. The slot of an either-side field
// (ipv4.addr) holds the values of both its members.
func (c *Collector) Want(f *field.Field) int {
	if s, ok := c.slots[f]; ok {
		return s
	}
	s := len(c.slots)
	c.slots[f] = s
	c.fields = append(c.fields, f)
	for _, m := range f.Members {
		if m.ID >= len(c.eitherByID) {
			c.eitherByID = append(c.eitherByID, make([]int32, m.ID+1-len(c.eitherByID))...)
		}
		c.eitherByID[m.ID] = int32(s + 1)
	}
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

// Wanted returns the wanted fields, indexed by slot.
func (c *Collector) Wanted() []*field.Field { return c.fields }

// Slot returns f's slot, -1 when f is not wanted.
func (c *Collector) Slot(f *field.Field) int {
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

// WantsProto reports whether a field of p is wanted.
func (c *Collector) WantsProto(p *field.Proto) bool {
	for _, w := range c.protoList {
		if w == p {
			return true
		}
	}
	return false
}

// Collect resets and gathers the wanted fields of r. A layer may report
// fields of other protocols in subtrees (the CM layer reports the pvtdata
// decode under its private data), so every layer is visited except
// dissect's transport adapters, which report only their own fields.
func (c *Collector) Collect(r *dissect.Record) {
	c.vals = c.vals[:0]
	c.arena = c.arena[:0]
	if len(c.slots) == 0 {
		return
	}
	for _, l := range r.Layers {
		p := l.Proto()
		if c.WantsProto(p) || (!c.OwnOnly && !dissect.IsTransport(p)) {
			l.VisitFields(c)
		}
	}
}

// Values are the values the last Collect gathered, in the order the
// layers reported them.
func (c *Collector) Values() []Value { return c.vals }

// BytesOf returns the text or bytes of v.
func (c *Collector) BytesOf(v *Value) []byte { return c.arena[v.lo:v.hi] }

// add appends a value of f to its slot, or to the slot of the wanted
// either-side field f is a member of when f itself is not wanted.
func (c *Collector) add(f *field.Field) *Value {
	s := c.Slot(f)
	if s < 0 {
		if s = c.eitherSlot(f); s < 0 {
			return nil
		}
	}
	c.vals = append(c.vals, Value{Slot: s, Field: f})
	return &c.vals[len(c.vals)-1]
}

// eitherSlot is the slot of the wanted either-side field f is a member
// of, -1 if none.
func (c *Collector) eitherSlot(f *field.Field) int {
	if id := f.ID; id > 0 && id < len(c.eitherByID) {
		return int(c.eitherByID[id]) - 1
	}
	return -1
}

// also copies the value just added (*p) to the either-side field's slot
// when f is wanted both itself and through that field (-e ip.src -e
// ip.addr).
func (c *Collector) also(f *field.Field, p *Value) {
	if len(c.eitherByID) == 0 {
		return
	}
	if s := c.eitherSlot(f); s >= 0 && s != p.Slot {
		v := *p
		v.Slot = s
		c.vals = append(c.vals, v)
	}
}

// set adds v as a value of f, and again for the either-side field (also).
func (c *Collector) set(f *field.Field, v Value) {
	if p := c.add(f); p != nil {
		v.Slot, v.Field = p.Slot, f
		*p = v
		c.also(f, p)
	}
}

// setText adds v as a value of f, its octets in the arena, and again for
// the either-side field (also).
func setText[T string | []byte](c *Collector, f *field.Field, v T) {
	if p := c.add(f); p != nil {
		p.lo = len(c.arena)
		c.arena = append(c.arena, v...)
		p.hi = len(c.arena)
		c.also(f, p)
	}
}

func (c *Collector) Uint(f *field.Field, v uint64)     { c.set(f, Value{Uint: v}) }
func (c *Collector) Int(f *field.Field, v int64)       { c.set(f, Value{Int: v}) }
func (c *Collector) Bool(f *field.Field, v bool)       { c.set(f, Value{Bool: v}) }
func (c *Collector) Addr(f *field.Field, v netip.Addr) { c.set(f, Value{Addr: v}) }
func (c *Collector) String(f *field.Field, v string)   { setText(c, f, v) }
func (c *Collector) Bytes(f *field.Field, v []byte)    { setText(c, f, v) }

func (c *Collector) Begin(f *field.Field) {
	c.add(f)
	c.depth++
}

func (c *Collector) End() { c.depth-- }
