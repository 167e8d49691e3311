package view

import (
	"bufio"
	"fmt"
	"io"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/fieldval"
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
	// Quote, when not 0, is put around every value printed ('"' for -E
	// quote=d, '\'' for quote=s); an empty column stays empty, as in
	// tshark.
	Quote byte
	// BOM starts the output with the UTF-8 byte order mark (-E bom=y).
	BOM bool
}

// Fields prints the values of the chosen fields, one line per packet,
// tab-separated; repeated values of one field are joined with ",", as
// tshark does; a missing field is an empty column.
type Fields struct {
	w      *bufio.Writer
	opts   FieldsOptions
	fields []*field.Field
	names  []string // as given (-E header=y prints them: ip.src, not ipv4.src)
	// disp[i], when not nil, formats column i's integers as tshark does
	// for the tshark name given (infiniband.bth.opcode in decimal).
	disp []*field.Field
	col  *fieldval.Collector
	b    []byte
	idx  []int
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
	p := &Fields{w: bufio.NewWriterSize(w, 64<<10), opts: opts, col: fieldval.New()}
	for _, n := range names {
		f, ok := field.Lookup(n)
		if !ok {
			if _, isProto := field.LookupProto(n); isProto {
				return nil, fmt.Errorf("-e %s: that is a protocol; -e takes field names (cmpd-dissect fields lists them)", n)
			}
			return nil, fmt.Errorf("-e %s: no such field (cmpd-dissect fields lists them)", n)
		}
		p.fields = append(p.fields, f)
		p.names = append(p.names, n)
		var disp *field.Field
		if kind, bits, ok := field.TsharkFormat(n); ok {
			disp = &field.Field{Name: n, Kind: kind, Bits: bits}
		}
		p.disp = append(p.disp, disp)
		p.col.Want(f)
	}
	if opts.BOM {
		p.w.WriteString("\ufeff")
	}
	if opts.Header {
		var b []byte
		for i, n := range p.names {
			if i > 0 {
				b = append(b, opts.Separator...)
			}
			b = append(b, n...)
		}
		b = append(b, '\n')
		p.w.Write(b)
	}
	return p, nil
}

// Print renders one line.
func (p *Fields) Print(r *dissect.Record) error {
	p.col.Collect(r)
	b := p.b[:0]
	for i, f := range p.fields {
		if i > 0 {
			b = append(b, p.opts.Separator...)
		}
		slot := p.col.Slot(f)
		vals := p.col.Values()
		p.idx = p.idx[:0]
		for k := range vals {
			if vals[k].Slot == slot {
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
		if len(sel) > 0 && p.opts.Quote != 0 {
			b = append(b, p.opts.Quote)
		}
		for k, vi := range sel {
			if k > 0 {
				b = append(b, p.opts.Aggregator...)
			}
			v := &vals[vi]
			if v.Field.Kind == field.KindGroup {
				b = append(b, v.Field.Name...)
				continue
			}
			if d := p.disp[i]; d != nil {
				switch v.Field.Kind {
				case field.KindUint, field.KindHex, field.KindEUI64:
					b = appendUint(b, d, v.Uint)
					continue
				case field.KindBool:
					bit := uint64(0)
					if v.Bool {
						bit = 1
					}
					b = appendUint(b, d, bit)
					continue
				}
			}
			b = appendValue(b, p.col, v)
		}
		if len(sel) > 0 && p.opts.Quote != 0 {
			b = append(b, p.opts.Quote)
		}
	}
	b = append(b, '\n')
	p.b = b
	_, err := p.w.Write(b)
	return err
}

// Flush writes buffered output.
func (p *Fields) Flush() error { return p.w.Flush() }

// appendValue formats v as -T fields prints it (tshark's conventions: raw
// numbers, hex with 0x, bytes as plain hex, text escaped).
func appendValue(b []byte, c *fieldval.Collector, v *fieldval.Value) []byte {
	switch v.Field.Kind {
	case field.KindUint, field.KindHex, field.KindMAC, field.KindEUI64:
		return appendUint(b, v.Field, v.Uint)
	case field.KindInt:
		return appendInt(b, v.Int)
	case field.KindBool:
		if v.Bool {
			return append(b, '1')
		}
		return append(b, '0')
	case field.KindString:
		return appendEscapedBytes(b, c.BytesOf(v))
	case field.KindBytes:
		return appendHexBytes(b, c.BytesOf(v))
	case field.KindAddr:
		return appendAddr(b, v.Addr)
	}
	return b
}
