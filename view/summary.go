package view

import (
	"bufio"
	"io"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Printer renders records one at a time.
type Printer interface {
	// Print renders one record (the caller has already applied -Y).
	Print(r *dissect.Record) error
	// Flush writes out anything buffered.
	Flush() error
}

// Options shared by the packet views.
type Options struct {
	// Color enables ANSI colours (only ever set for a terminal).
	Color bool
	// All shows every packet in the summary view, not only the RDMA ones.
	All bool
}

// ANSI colours.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
	ansiBold   = "\x1b[1m"
)

// Summary prints one line per packet, tshark-like:
//
//	12   0.001234 192.168.1.1 → 192.168.1.2 cm  CM REQ svc=NFS/RDMA(20049) …
//
// Columns: frame number, seconds since the first frame, source and
// destination (from the innermost layer that has addresses), protocol (the
// last layer that summarised) and info (the layers' summaries joined by two
// spaces, then the findings' codes).
type Summary struct {
	w    *bufio.Writer
	opts Options
	buf  []byte
	tmp  []byte
	dst  []byte
}

// NewSummary makes a summary printer writing to w.
func NewSummary(w io.Writer, opts Options) *Summary {
	return &Summary{w: bufio.NewWriterSize(w, 64<<10), opts: opts, buf: make([]byte, 0, 512), tmp: make([]byte, 0, 512)}
}

// Wanted reports whether the summary view shows r at all (RDMA-relevant,
// or --all).
func (s *Summary) Wanted(r *dissect.Record) bool { return s.opts.All || dissect.Relevant(r) }

// spaces pads the columns (wider than any column).
const spaces = "                                "

func padRight(b []byte, start, width int) []byte {
	if n := runeCount(b[start:]); n < width {
		b = appendSpaces(b, width-n)
	}
	return b
}

func padLeft(b []byte, s []byte, width int) []byte {
	if n := len(s); n < width {
		b = appendSpaces(b, width-n)
	}
	return append(b, s...)
}

func appendSpaces(b []byte, n int) []byte {
	for n > len(spaces) {
		b = append(b, spaces...)
		n -= len(spaces)
	}
	return append(b, spaces[:n]...)
}

func runeCount(b []byte) int {
	n := 0
	for _, c := range b {
		if c&0xc0 != 0x80 {
			n++
		}
	}
	return n
}

// Print renders one line, if the record is wanted.
func (s *Summary) Print(r *dissect.Record) error {
	if !s.Wanted(r) {
		return nil
	}
	b := s.buf[:0]
	color := s.opts.Color
	sev := maxSeverity(r.Findings)
	if color {
		switch sev {
		case pvtdata.SeverityError:
			b = append(b, ansiRed...)
		case pvtdata.SeverityWarning:
			b = append(b, ansiYellow...)
		}
	}
	t := s.tmp[:0]
	if r.EndOfInput() {
		t = append(t, "end"...)
	} else {
		t = appendInt(t, int64(r.Frame))
	}
	b = padLeft(b, t, 7)
	b = append(b, ' ')
	t = t[:0]
	if fr, ok := firstFrame(r); ok {
		t = appendSeconds6(t, int64(fr.Relative))
	}
	b = padLeft(b, t, 11)
	b = append(b, ' ')

	var proto *field.Proto
	var info dissect.InfoSummarizer
	var infoProto *field.Proto
	for _, l := range r.Layers {
		if _, ok := l.(field.Summarizer); ok {
			proto = l.Proto()
		}
		if is, ok := l.(dissect.InfoSummarizer); ok {
			info, infoProto = is, l.Proto()
		}
	}
	start := len(b)
	t, s.dst = dissect.AppendEndpoints(r, t[:0], s.dst[:0])
	b = appendEscapedBytes(b, t)
	b = padRight(b, start, 17)
	b = append(b, " → "...)
	start = len(b)
	b = appendEscapedBytes(b, s.dst)
	b = padRight(b, start, 17)
	b = append(b, ' ')
	start = len(b)
	if proto == nil {
		proto = infoProto
	}
	if proto == nil && len(r.Layers) > 0 {
		proto = r.Layers[len(r.Layers)-1].Proto()
	}
	if proto != nil {
		if color && sev == 0 {
			b = append(b, ansiCyan...)
		}
		b = append(b, proto.Name...)
		if color && sev == 0 {
			b = append(b, ansiReset...)
		}
	}
	if color && sev == 0 {
		b = padRight(b, start+len(ansiCyan)+len(ansiReset), 8)
	} else {
		b = padRight(b, start, 8)
	}
	b = append(b, ' ')
	n := 0
	for _, l := range r.Layers {
		if sm, ok := l.(field.Summarizer); ok {
			t = sm.AppendSummary(t[:0])
			if len(t) == 0 {
				continue
			}
			if n > 0 {
				b = append(b, ' ', ' ')
			}
			b = appendEscapedBytes(b, t)
			n++
		}
	}
	if n == 0 && info != nil {
		t = info.AppendInfo(t[:0])
		b = appendEscapedBytes(b, t)
		n++
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if n > 0 {
			b = append(b, ' ', ' ')
		}
		b = append(b, '[')
		b = append(b, f.Severity.String()...)
		b = append(b, ' ')
		b = appendEscaped(b, f.Code)
		b = append(b, ']')
		n++
	}
	if color && sev != 0 {
		b = append(b, ansiReset...)
	}
	b = append(b, '\n')
	s.buf, s.tmp = b, t
	_, err := s.w.Write(b)
	return err
}

// Flush writes buffered lines.
func (s *Summary) Flush() error { return s.w.Flush() }

func maxSeverity(fs []pvtdata.Finding) pvtdata.Severity {
	var m pvtdata.Severity
	for i := range fs {
		if fs[i].Severity > m {
			m = fs[i].Severity
		}
	}
	return m
}

func firstFrame(r *dissect.Record) (*dissect.Frame, bool) {
	if len(r.Layers) == 0 {
		return nil, false
	}
	f, ok := r.Layers[0].(*dissect.Frame)
	return f, ok
}

// appendSeconds6 appends nanoseconds as seconds with six decimals.
func appendSeconds6(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	us := (ns + 500) / 1000
	b = appendInt(b, us/1e6)
	b = append(b, '.')
	frac := us % 1e6
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, d[:]...)
}
