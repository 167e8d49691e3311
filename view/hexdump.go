package view

import (
	"bufio"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
)

// HexDump follows each packet the inner printer shows with the frame's
// bytes, as tshark -x does: offset, sixteen bytes in hex, the same bytes
// as ASCII (a dot for anything not printable), then a blank line. With no
// inner printer (tshark -x without -V or -P) only the dumps are printed.
type HexDump struct {
	w      *bufio.Writer
	inner  Printer
	wanted func(*dissect.Record) bool
	b      []byte
}

// NewHexDump makes the printer. inner, when not nil, must write to w
// through its own buffer (its Flush is called before each dump, so that
// the two interleave); wanted says which records inner shows (nil: all).
func NewHexDump(w *bufio.Writer, inner Printer, wanted func(*dissect.Record) bool) *HexDump {
	return &HexDump{w: w, inner: inner, wanted: wanted}
}

// Print prints the record with the inner printer, then its bytes.
func (h *HexDump) Print(r *dissect.Record) error {
	if h.wanted != nil && !h.wanted(r) {
		return nil
	}
	if h.inner != nil {
		if err := h.inner.Print(r); err != nil {
			return err
		}
		if err := h.inner.Flush(); err != nil {
			return err
		}
		if _, isSummary := h.inner.(*Summary); isSummary {
			// tshark -P -x: a blank line between the summary and the
			// dump (the tree ends with one already).
			h.w.WriteByte('\n')
		}
	}
	h.b = AppendHexDump(h.b[:0], r.Data)
	h.b = append(h.b, '\n')
	_, err := h.w.Write(h.b)
	return err
}

// Flush writes buffered output.
func (h *HexDump) Flush() error {
	if h.inner != nil {
		if err := h.inner.Flush(); err != nil {
			return err
		}
	}
	return h.w.Flush()
}

// AppendHexDump appends data as tshark -x prints it:
//
//	0000  52 54 00 12 00 02 52 54 00 12 00 01 08 00 45 00   RT....RT......E.
func AppendHexDump(b []byte, data []byte) []byte {
	const hexd = "0123456789abcdef"
	// Offsets past 0xffff take eight digits, on every line of the dump.
	wide := len(data) > 0x10000
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		if wide {
			b = append(b, hexd[off>>28&15], hexd[off>>24&15], hexd[off>>20&15], hexd[off>>16&15])
		}
		b = append(b, hexd[off>>12&15], hexd[off>>8&15], hexd[off>>4&15], hexd[off&15], ' ', ' ')
		for i := 0; i < 16; i++ {
			if i < len(line) {
				b = append(b, hexd[line[i]>>4], hexd[line[i]&15], ' ')
			} else {
				b = append(b, ' ', ' ', ' ')
			}
		}
		b = append(b, ' ', ' ')
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			b = append(b, c)
		}
		b = append(b, '\n')
	}
	return b
}
