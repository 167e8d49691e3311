package view

import (
	"bufio"
	"io"
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// Tree prints every field of every layer, indented, like tshark -V:
//
//	InfiniBand Base Transport Header: RC SEND_ONLY qp=0x11 psn=123
//	    OpCode: 0x04 (RC SEND_ONLY)
//	    ...
//
// Byte strings longer than 16 octets are shown as a hex dump under their
// line; subtrees (groups) are indented under their title, so the RFC 8797
// decode appears under the private-data bytes. Findings close the packet.
type Tree struct {
	w     *bufio.Writer
	opts  Options
	b     []byte
	tmp   []byte
	depth int
}

// NewTree makes a tree printer writing to w.
func NewTree(w io.Writer, opts Options) *Tree {
	return &Tree{w: bufio.NewWriterSize(w, 64<<10), opts: opts}
}

func (t *Tree) indent() {
	for i := 0; i < t.depth; i++ {
		t.b = append(t.b, "    "...)
	}
}

func (t *Tree) label(f *field.Field) {
	t.indent()
	t.b = appendEscaped(t.b, f.Desc)
	t.b = append(t.b, ": "...)
}

func (t *Tree) end(f *field.Field) {
	if f.Unit != "" {
		t.b = append(t.b, ' ')
		t.b = append(t.b, f.Unit...)
	}
	if t.opts.Color {
		t.b = append(t.b, ansiDim...)
	}
	t.b = append(t.b, "  ["...)
	t.b = append(t.b, f.Name...)
	t.b = append(t.b, ']')
	if t.opts.Color {
		t.b = append(t.b, ansiReset...)
	}
	t.b = append(t.b, '\n')
}

// valueName appends " (name)" when f names v.
func (t *Tree) valueName(f *field.Field, v uint64) {
	if name, ok := f.ValueName(v); ok {
		t.b = append(t.b, " ("...)
		t.b = appendEscaped(t.b, name)
		t.b = append(t.b, ')')
	}
}

func (t *Tree) Uint(f *field.Field, v uint64) {
	t.label(f)
	t.b = appendUint(t.b, f, v)
	t.valueName(f, v)
	t.end(f)
}

func (t *Tree) Int(f *field.Field, v int64) {
	t.label(f)
	t.b = appendInt(t.b, v)
	if v >= 0 {
		t.valueName(f, uint64(v))
	}
	t.end(f)
}

func (t *Tree) Bool(f *field.Field, v bool) {
	t.label(f)
	t.b = appendBool(t.b, v)
	t.end(f)
}

func (t *Tree) String(f *field.Field, v string) {
	t.label(f)
	t.b = appendEscaped(t.b, v)
	t.end(f)
}

func (t *Tree) Bytes(f *field.Field, v []byte) {
	t.label(f)
	if len(v) <= 16 {
		for i, c := range v {
			if i > 0 {
				t.b = append(t.b, ' ')
			}
			t.b = appendHexDigits(t.b, uint64(c), 2)
		}
		if len(v) == 0 {
			t.b = append(t.b, "<empty>"...)
		}
		t.end(f)
		return
	}
	t.b = appendInt(t.b, int64(len(v)))
	t.b = append(t.b, " octets"...)
	t.end(f)
	t.depth++
	t.hexdump(v)
	t.depth--
}

// hexdump appends v as offset, 16 hex bytes and their printable ASCII.
func (t *Tree) hexdump(v []byte) {
	for off := 0; off < len(v); off += 16 {
		t.indent()
		t.b = appendHexDigits(t.b, uint64(off), 4)
		t.b = append(t.b, "  "...)
		end := off + 16
		if end > len(v) {
			end = len(v)
		}
		for i := off; i < off+16; i++ {
			if i < end {
				t.b = appendHexDigits(t.b, uint64(v[i]), 2)
			} else {
				t.b = append(t.b, ' ', ' ')
			}
			t.b = append(t.b, ' ')
			if i == off+7 {
				t.b = append(t.b, ' ')
			}
		}
		t.b = append(t.b, ' ')
		for _, c := range v[off:end] {
			if c >= 0x20 && c < 0x7f {
				t.b = append(t.b, c)
			} else {
				t.b = append(t.b, '.')
			}
		}
		t.b = append(t.b, '\n')
	}
}

func (t *Tree) Addr(f *field.Field, v netip.Addr) {
	t.label(f)
	t.b = appendAddr(t.b, v)
	t.end(f)
}

func (t *Tree) Begin(f *field.Field) {
	t.indent()
	t.b = appendEscaped(t.b, f.Desc)
	t.end(f)
	t.depth++
}

func (t *Tree) End() {
	if t.depth > 1 {
		t.depth--
	}
}

// Print renders the record's tree followed by a blank line.
func (t *Tree) Print(r *dissect.Record) error {
	t.b = t.b[:0]
	if r.EndOfInput() {
		t.b = append(t.b, "End of input: reassembly flushed\n"...)
	}
	for i, l := range r.Layers {
		t.depth = 0
		if t.opts.Color {
			t.b = append(t.b, ansiBold...)
		}
		p := l.Proto()
		t.b = appendEscaped(t.b, p.Desc)
		if _, isFrame := l.(*dissect.Frame); isFrame {
			t.b = append(t.b, ' ')
			t.b = appendInt(t.b, int64(r.Frame))
			if r.Length >= 0 && r.CaptureLength >= 0 {
				// (A damaged record cut inside its header has neither.)
				t.b = append(t.b, ": "...)
				t.b = appendInt(t.b, int64(r.Length))
				t.b = append(t.b, " bytes on wire, "...)
				t.b = appendInt(t.b, int64(r.CaptureLength))
				t.b = append(t.b, " captured"...)
			}
		} else if sm, ok := l.(field.Summarizer); ok && i >= 0 {
			t.tmp = sm.AppendSummary(t.tmp[:0])
			if len(t.tmp) > 0 {
				t.b = append(t.b, ": "...)
				t.b = appendEscapedBytes(t.b, t.tmp)
			}
		}
		if r.Offsets[i] < 0 {
			t.b = append(t.b, " (reassembled)"...)
		}
		if t.opts.Color {
			t.b = append(t.b, ansiReset...)
		}
		t.b = append(t.b, '\n')
		if t.opts.Expand == nil || t.opts.Expand[p] {
			t.fields(l)
		}
	}
	if len(r.Findings) > 0 {
		t.b = append(t.b, "Findings\n"...)
		for i := range r.Findings {
			f := &r.Findings[i]
			t.b = append(t.b, "    "...)
			if t.opts.Color {
				switch f.Severity {
				case finding.SeverityError:
					t.b = append(t.b, ansiRed...)
				case finding.SeverityWarning:
					t.b = append(t.b, ansiYellow...)
				}
			}
			t.b = append(t.b, '[')
			t.b = append(t.b, f.Severity.String()...)
			t.b = append(t.b, "] "...)
			t.b = appendEscaped(t.b, f.Code)
			if f.Layer != "" {
				t.b = append(t.b, " in "...)
				t.b = appendEscaped(t.b, f.Layer)
			}
			if f.Offset >= 0 {
				t.b = append(t.b, " at frame offset "...)
				t.b = appendInt(t.b, int64(f.Offset))
			}
			t.b = append(t.b, ": "...)
			t.b = appendEscaped(t.b, f.Message)
			if f.Section != "" {
				t.b = append(t.b, " ("...)
				t.b = appendEscaped(t.b, f.Section)
				t.b = append(t.b, ')')
			}
			if t.opts.Color {
				t.b = append(t.b, ansiReset...)
			}
			t.b = append(t.b, '\n')
		}
	}
	t.b = append(t.b, '\n')
	_, err := t.w.Write(t.b)
	return err
}

// fields appends the lines of every field l reports, indented under its
// title.
func (t *Tree) fields(l field.Layer) {
	t.depth = 1
	l.VisitFields(t)
}

// PrintFields renders one layer that is not part of a record (the private
// data "pvtdata" decodes on its own): title on a line, then the layer's
// fields under it as Print renders them, so every command shows a field the
// same way.
func (t *Tree) PrintFields(title string, l field.Layer) error {
	t.b = appendEscaped(t.b[:0], title)
	t.b = append(t.b, '\n')
	t.fields(l)
	_, err := t.w.Write(t.b)
	return err
}

// Flush writes buffered output.
func (t *Tree) Flush() error { return t.w.Flush() }
