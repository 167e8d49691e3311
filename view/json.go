package view

import (
	"bufio"
	"encoding/json"
	"io"
	"net/netip"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// JSON prints one JSON object per packet per line:
//
//	{"frame":12,"time":"2026-11-01T10:00:00.000123Z","source":"x.pcap",
//	 "layers":[{"name":"frame","offset":0,"fields":{…}},
//	           {"name":"ethernet","offset":0,"fields":{"ethernet.dst":"52:54:00:…",…}},
//	           …],
//	 "findings":[{"code":…,"severity":"error",…}]}
//
// The end-of-input record (reassembly flushed when the input ended) has
// "end_of_input": true instead of "frame", "time" and "source".
//
// "layers" is a list, so order and repeated layers are kept. In "fields",
// keys are the field names; a field that occurs more than once in the same
// object becomes an array of its values, in order; a subtree (group) is an
// object under its own name. Unsigned and signed integers are JSON numbers
// (as strings "0x…" when wider than 53 bits, so no precision is lost);
// flags are booleans; addresses, MACs and GUIDs strings; byte strings are
// lower-case hex; text is escaped to valid UTF-8. Layers decoded from
// reassembled bytes have "offset": -1.
type JSON struct {
	w   *bufio.Writer
	b   []byte
	ent []jentry
	val []byte // rendered values
	cur int    // current parent group entry, -1 at layer level
}

type jentry struct {
	f       *field.Field
	lo, hi  int // rendered value in val
	parent  int
	isGroup bool
}

// NewJSON makes a JSON-lines printer writing to w.
func NewJSON(w io.Writer) *JSON { return &JSON{w: bufio.NewWriterSize(w, 64<<10)} }

func (j *JSON) add(f *field.Field, lo int) {
	j.ent = append(j.ent, jentry{f: f, lo: lo, hi: len(j.val), parent: j.cur})
}

// put takes val, j.val with f's value appended, as j.val and records the
// value (an argument is evaluated before the call: j.val still ends where
// the value begins).
func (j *JSON) put(f *field.Field, val []byte) {
	lo := len(j.val)
	j.val = val
	j.add(f, lo)
}

func (j *JSON) Uint(f *field.Field, v uint64) {
	lo := len(j.val)
	switch {
	case f.Kind == field.KindMAC || f.Kind == field.KindEUI64:
		j.val = append(j.val, '"')
		j.val = appendUint(j.val, f, v)
		j.val = append(j.val, '"')
	case f.Bits > 53 || v > 1<<53:
		j.val = append(j.val, '"', '0', 'x')
		j.val = appendHexDigits(j.val, v, (f.Bits+3)/4)
		j.val = append(j.val, '"')
	case f.Kind == field.KindBool:
		j.val = appendBool(j.val, v != 0)
	default:
		j.val = appendUintDec(j.val, v)
	}
	j.add(f, lo)
}

func (j *JSON) Int(f *field.Field, v int64)     { j.put(f, appendInt(j.val, v)) }
func (j *JSON) Bool(f *field.Field, v bool)     { j.put(f, appendBool(j.val, v)) }
func (j *JSON) String(f *field.Field, v string) { j.put(f, appendJSONString(j.val, v)) }

func (j *JSON) Bytes(f *field.Field, v []byte) {
	j.put(f, append(appendHexBytes(append(j.val, '"'), v), '"'))
}

func (j *JSON) Addr(f *field.Field, v netip.Addr) {
	j.put(f, append(appendAddr(append(j.val, '"'), v), '"'))
}

func (j *JSON) Begin(f *field.Field) {
	j.ent = append(j.ent, jentry{f: f, parent: j.cur, isGroup: true})
	j.cur = len(j.ent) - 1
}

func (j *JSON) End() {
	if j.cur >= 0 {
		j.cur = j.ent[j.cur].parent
	}
}

// object renders the children of parent as a JSON object.
func (j *JSON) object(parent int) {
	j.b = append(j.b, '{')
	first := true
	for i := range j.ent {
		e := &j.ent[i]
		if e.parent != parent || e.f == nil {
			continue
		}
		// First occurrence of this key under parent: gather all.
		dup := false
		for k := 0; k < i; k++ {
			if j.ent[k].parent == parent && j.ent[k].f == e.f {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		n := 0
		for k := i; k < len(j.ent); k++ {
			if j.ent[k].parent == parent && j.ent[k].f == e.f {
				n++
			}
		}
		if !first {
			j.b = append(j.b, ',')
		}
		first = false
		j.b = appendJSONString(j.b, e.f.Name)
		j.b = append(j.b, ':')
		if n > 1 {
			j.b = append(j.b, '[')
		}
		m := 0
		for k := i; k < len(j.ent); k++ {
			o := &j.ent[k]
			if o.parent != parent || o.f != e.f {
				continue
			}
			if m > 0 {
				j.b = append(j.b, ',')
			}
			m++
			if o.isGroup {
				j.object(k)
			} else {
				j.b = append(j.b, j.val[o.lo:o.hi]...)
			}
		}
		if n > 1 {
			j.b = append(j.b, ']')
		}
	}
	j.b = append(j.b, '}')
}

// Print renders one line.
func (j *JSON) Print(r *dissect.Record) error {
	b := j.b[:0]
	if r.EndOfInput() {
		// Not a packet: what reassembly completed or found incomplete
		// when the input ended.
		b = append(b, `{"end_of_input":true`...)
	} else {
		b = append(b, `{"frame":`...)
		b = appendInt(b, int64(r.Frame))
		if !r.Time.IsZero() {
			// (A damaged record whose header is cut has no time.)
			b = append(b, `,"time":"`...)
			b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
		}
		b = append(b, `,"source":`...)
		b = appendJSONString(b, r.Source)
	}
	b = append(b, `,"layers":[`...)
	j.b = b
	for i, l := range r.Layers {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.b = append(j.b, `{"name":`...)
		j.b = appendJSONString(j.b, l.Proto().Name)
		j.b = append(j.b, `,"offset":`...)
		j.b = appendInt(j.b, int64(r.Offsets[i]))
		j.b = append(j.b, `,"fields":`...)
		j.ent, j.val, j.cur = j.ent[:0], j.val[:0], -1
		l.VisitFields(j)
		j.object(-1)
		j.b = append(j.b, '}')
	}
	j.b = append(j.b, ']')
	if len(r.Findings) > 0 {
		fb, err := json.Marshal(r.Findings)
		if err != nil {
			return err
		}
		j.b = append(j.b, `,"findings":`...)
		j.b = append(j.b, fb...)
	}
	j.b = append(j.b, '}', '\n')
	_, err := j.w.Write(j.b)
	return err
}

// Flush writes buffered output.
func (j *JSON) Flush() error { return j.w.Flush() }

func appendUintDec(b []byte, v uint64) []byte {
	f := field.Field{Kind: field.KindUint}
	return appendUint(b, &f, v)
}
