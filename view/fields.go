package view

import (
	"bufio"
	"fmt"
	"io"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// FieldsOptions shape -T fields output (tshark's -E options).
type FieldsOptions struct {
	// Header prints the field names as the first line (-E header=y).
	Header bool
	// Separator between fields; tab by default (-E separator=…).
	Separator string
	// Aggregator between repeated values of one field; "," by default
	// (-E aggregator=…).
	Aggregator string
	// Occurrence selects which occurrence of a repeated field is printed:
	// 0 all (default), n>0 the n-th, n<0 the n-th from the end
	// (-E occurrence=…).
	Occurrence int
}

// Fields prints the values of the chosen fields, one line per packet,
// tab-separated; repeated values of one field are joined with ",", as
// tshark does; a missing field is an empty column.
type Fields struct {
	w      *bufio.Writer
	opts   FieldsOptions
	fields []*field.Field
	col    *collector
	b      []byte
	idx    []int
}

// NewFields checks the names (each must be a declared field) and makes the
// printer.
func NewFields(w io.Writer, names []string, opts FieldsOptions) (*Fields, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("-T fields needs at least one -e FIELD")
	}
	if opts.Separator == "" {
		opts.Separator = "\t"
	}
	if opts.Aggregator == "" {
		opts.Aggregator = ","
	}
	p := &Fields{w: bufio.NewWriterSize(w, 64<<10), opts: opts, col: newCollector()}
	for _, n := range names {
		f, ok := field.Lookup(n)
		if !ok {
			if _, isProto := field.LookupProto(n); isProto {
				return nil, fmt.Errorf("-e %s: that is a protocol; -e takes field names (cmpd-dissect fields lists them)", n)
			}
			return nil, fmt.Errorf("-e %s: no such field (cmpd-dissect fields lists them)", n)
		}
		p.fields = append(p.fields, f)
		p.col.want(f)
	}
	if opts.Header {
		var b []byte
		for i, f := range p.fields {
			if i > 0 {
				b = append(b, opts.Separator...)
			}
			b = append(b, f.Name...)
		}
		b = append(b, '\n')
		p.w.Write(b)
	}
	return p, nil
}

// Print renders one line.
func (p *Fields) Print(r *dissect.Record) error {
	p.col.collect(r)
	b := p.b[:0]
	for i, f := range p.fields {
		if i > 0 {
			b = append(b, p.opts.Separator...)
		}
		slot := p.col.slots[f]
		p.idx = p.idx[:0]
		for k := range p.col.vals {
			if p.col.vals[k].slot == slot {
				p.idx = append(p.idx, k)
			}
		}
		sel := p.idx
		if o := p.opts.Occurrence; o != 0 {
			n := o - 1
			if o < 0 {
				n = len(sel) + o
			}
			if n >= 0 && n < len(sel) {
				sel = sel[n : n+1]
			} else {
				sel = nil
			}
		}
		for k, vi := range sel {
			if k > 0 {
				b = append(b, p.opts.Aggregator...)
			}
			v := &p.col.vals[vi]
			if v.f.Kind == field.KindGroup {
				b = append(b, v.f.Name...)
				continue
			}
			b = p.col.appendValue(b, v)
		}
	}
	b = append(b, '\n')
	p.b = b
	_, err := p.w.Write(b)
	return err
}

// Flush writes buffered output.
func (p *Fields) Flush() error { return p.w.Flush() }
