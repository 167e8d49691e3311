package view

import (
	"bufio"
	"io"
	"time"
	"unsafe"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
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
	// TimeFormat is the summary's time column as tshark's -t: "" or "r"
	// seconds since the first frame, "a" "ad" "adoy" local time of day
	// (with the date, with the day of the year), "u" "ud" "udoy" the
	// same in UTC, "e" seconds since the epoch, "d" since the previous
	// frame, "dd" since the previous frame shown.
	TimeFormat string
	// Expand, when not nil, names the protocols whose fields the tree
	// shows (tshark -O); the others show their title line only.
	Expand map[*field.Proto]bool
}

// TimeFormats are the -t values, as tshark's.
var TimeFormats = []string{"a", "ad", "adoy", "d", "dd", "e", "r", "u", "ud", "udoy"}

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
	// timeR is the default time column (-t r).
	timeR bool
	// shapes are what a record's layers decide of its line, for the last
	// few shapes of record seen (a Dissector reuses its layer values, so
	// records of one shape hold the very same ones, and the shapes of a
	// capture's packets interleave: Sends, their ACKs, RDMA Reads…); cur
	// is the last one used and next the one to be replaced.
	shapes    [8]lineShape
	cur, next int
	// shown is the time of the last record printed (-t dd).
	shown time.Time
}

// lineShape is what the layers of a record decide of its summary line.
type lineShape struct {
	layers []field.Layer
	// sums are the summarisers among the layers.
	sums []field.Summarizer
	// info is the last layer with an Info text (used only when no
	// summariser has text), nil if none.
	info dissect.InfoSummarizer
	// proto is the protocol column (the last summariser's, else the
	// info layer's, else the last layer's), protoW its width in runes.
	proto  *field.Proto
	protoW int
	// addr is the layer the endpoints come from (dissect.EndpointsLayer).
	addr dissect.Addresser
	// relevant is dissect.Relevant of a record of these layers without
	// findings (Relevant asks the layers only what they are).
	relevant bool
}

// NewSummary makes a summary printer writing to w.
func NewSummary(w io.Writer, opts Options) *Summary {
	return &Summary{w: bufio.NewWriterSize(w, 64<<10), opts: opts, buf: make([]byte, 0, 512), tmp: make([]byte, 0, 512),
		dst: make([]byte, 0, 64), timeR: opts.TimeFormat == "" || opts.TimeFormat == "r"}
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

// escapeTail escapes b[start:] in place, as appendEscaped would have
// appended it, and returns b and the width of b[start:] in runes. Plain
// text (the usual case) is only checked, not copied.
func (s *Summary) escapeTail(b []byte, start int) ([]byte, int) {
	tail := b[start:]
	if plainPrefix(unsafe.String(unsafe.SliceData(tail), len(tail))) == len(tail) {
		return b, len(tail)
	}
	return s.escapeTailSlow(b, start)
}

// escapeTailSlow is escapeTail for text that needs escaping, kept out of
// the per-line code.
//
//go:noinline
func (s *Summary) escapeTailSlow(b []byte, start int) ([]byte, int) {
	s.tmp = append(s.tmp[:0], b[start:]...)
	b = appendEscapedBytes(b[:start], s.tmp)
	return b, runeCount(b[start:])
}

// digitPairs holds "00" to "99" for writing two decimal digits at once.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// decimalLen is the number of decimal digits of v.
func decimalLen(v uint64) int {
	n := 1
	for v >= 10000 {
		v /= 10000
		n += 4
	}
	switch {
	case v >= 1000:
		return n + 3
	case v >= 100:
		return n + 2
	case v >= 10:
		return n + 1
	}
	return n
}

// putDecimal writes v in decimal at the end of d, which is at least v's
// decimalLen long; the octets before the digits stay as they are.
func putDecimal(d []byte, v uint64) {
	i := len(d)
	for v >= 100 && i >= 2 {
		q := v / 100
		j := (v - q*100) * 2
		d[i-2], d[i-1] = digitPairs[j], digitPairs[j+1]
		i -= 2
		v = q
	}
	if v >= 10 && i >= 2 {
		d[i-2], d[i-1] = digitPairs[v*2], digitPairs[v*2+1]
		return
	}
	if i >= 1 {
		d[i-1] = byte('0' + v)
	}
}

// appendDecimalRight appends v in decimal right-aligned in width columns.
// The digits are written straight into b, after the padding.
func appendDecimalRight(b []byte, v uint64, width int) []byte {
	n := decimalLen(v)
	if n < width {
		b = append(b, spaces[:width-n]...)
	}
	b = append(b, spaces[:n]...)
	putDecimal(b[len(b)-n:], v)
	return b
}

// appendFrameColumn appends the frame number (or "end") right-aligned in
// seven columns.
func appendFrameColumn(b []byte, r *dissect.Record) []byte {
	if r.Frame > 0 && r.Frame < 1e7 {
		// Seven columns exactly: the digits over spaces, from the right.
		b = append(b, spaces[:7]...)
		putDecimal(b[len(b)-7:], uint64(r.Frame))
		return b
	}
	return appendOddFrame(b, r)
}

// appendOddFrame is appendFrameColumn for the end of input, negative
// frame numbers and those wider than the column.
//
//go:noinline
func appendOddFrame(b []byte, r *dissect.Record) []byte {
	switch {
	case r.EndOfInput():
		return append(b, "    end"...)
	case r.Frame < 0:
		return padLeft(b, appendInt(nil, int64(r.Frame)), 7)
	}
	return appendDecimalRight(b, uint64(r.Frame), 7)
}

// appendTimeColumn appends the seconds since the first frame with six
// decimals (appendSeconds6), right-aligned in eleven columns; blank
// without a frame layer or a time (a damaged record cut in its header).
func appendTimeColumn(b []byte, r *dissect.Record) []byte {
	fr, ok := firstFrame(r)
	if !ok || fr.NoTime {
		return append(b, spaces[:11]...)
	}
	ns := int64(fr.Relative)
	if ns < 0 || ns > 1<<62 {
		// Out-of-order and absurd times: as appendSeconds6 has them.
		return padLeft(b, appendSeconds6(nil, ns), 11)
	}
	us := uint64(ns+500) / 1000
	sec, frac := us/1e6, us%1e6
	if sec < 1e4 {
		// Eleven columns exactly: up to four digits of seconds over
		// spaces, the point and six digits.
		b = append(b, "   0.000000"...)
		d := b[len(b)-11:]
		for i := 3; sec > 0; i-- {
			d[i] = byte('0' + sec%10)
			sec /= 10
		}
		for i := 10; i > 5; i -= 2 {
			q := frac / 100
			j := (frac - q*100) * 2
			d[i-1], d[i] = digitPairs[j], digitPairs[j+1]
			frac = q
		}
		return b
	}
	b = appendDecimalRight(b, sec, 11-7)
	b = append(b, ".000000"...)
	putDecimal(b[len(b)-6:], frac+1e6) // the leading 1 falls off
	return b
}

// Print renders one line, if the record is wanted.
func (s *Summary) Print(r *dissect.Record) error {
	sh := &s.shapes[s.cur]
	if !sameLayers(r.Layers, sh.layers) {
		sh = s.shapeOf(r)
	}
	if !s.opts.All && !sh.relevant && (len(r.Findings) == 0 || !dissect.Relevant(r)) {
		return nil
	}
	b := s.buf[:0]
	var sev finding.Severity
	if len(r.Findings) > 0 {
		sev = maxSeverity(r.Findings)
	}
	if s.opts.Color {
		b = appendSeverityColor(b, sev)
	}
	b = appendFrameColumn(b, r)
	b = append(b, ' ')
	if s.timeR {
		b = appendTimeColumn(b, r)
	} else {
		b = s.appendTimeAs(b, r, s.opts.TimeFormat)
	}
	b = append(b, ' ')

	// The source is appended in place, the destination escaped from dst.
	start := len(b)
	var w int
	if sh.addr != nil {
		b = sh.addr.AppendSrc(b)
		s.dst = sh.addr.AppendDst(s.dst[:0])
	} else {
		s.dst = s.dst[:0]
	}
	b, w = s.escapeTail(b, start)
	if w < 17 {
		b = append(b, spaces[:17-w]...)
	}
	b = append(b, " → "...)
	start = len(b)
	b = append(b, s.dst...)
	b, w = s.escapeTail(b, start)
	if w < 17 {
		b = append(b, spaces[:17-w]...)
	}
	b = append(b, ' ')
	if sh.proto != nil {
		if s.opts.Color && sev == 0 {
			b = appendProtoColored(b, sh.proto)
		} else {
			b = append(b, sh.proto.Name...)
		}
	}
	if w = sh.protoW; w < 8 {
		b = append(b, spaces[:8-w]...)
	}
	b = append(b, ' ')
	// The summaries are appended in place (the separator goes again when
	// a layer has nothing to say), then escaped together: escaping works
	// octet by octet or rune by rune, and no rune spans the plain two
	// spaces between summaries, so this is escaping each one.
	n := 0
	start = len(b)
	for _, sm := range sh.sums {
		mark := len(b)
		if n > 0 {
			b = append(b, ' ', ' ')
		}
		sumStart := len(b)
		b = sm.AppendSummary(b)
		if len(b) == sumStart {
			b = b[:mark]
			continue
		}
		n++
	}
	b, _ = s.escapeTail(b, start)
	if n == 0 && sh.info != nil {
		start := len(b)
		b = sh.info.AppendInfo(b)
		b, _ = s.escapeTail(b, start)
		n++
	}
	if len(r.Findings) > 0 {
		b = appendFindingCodes(b, r.Findings, n)
	}
	if s.opts.Color && sev != 0 {
		b = append(b, ansiReset...)
	}
	b = append(b, '\n')
	s.buf = b
	_, err := s.w.Write(b)
	return err
}

// shapeOf returns the shape of r's layers: one of the shapes kept, or
// one made in place of the oldest.
//
//go:noinline
func (s *Summary) shapeOf(r *dissect.Record) *lineShape {
	for i := range s.shapes {
		if sameLayers(r.Layers, s.shapes[i].layers) {
			s.cur = i
			return &s.shapes[i]
		}
	}
	s.cur = s.next
	s.next = (s.next + 1) % len(s.shapes)
	sh := &s.shapes[s.cur]
	sh.sums, sh.proto, sh.info = sh.sums[:0], nil, nil
	for _, l := range r.Layers {
		if sm, ok := l.(field.Summarizer); ok {
			sh.sums = append(sh.sums, sm)
			sh.proto = l.Proto()
		}
	}
	if i := lastInfo(r); i >= 0 {
		sh.info = r.Layers[i].(dissect.InfoSummarizer)
		if sh.proto == nil {
			sh.proto = r.Layers[i].Proto()
		}
	}
	if sh.proto == nil && len(r.Layers) > 0 {
		sh.proto = r.Layers[len(r.Layers)-1].Proto()
	}
	sh.protoW = 0
	if sh.proto != nil {
		sh.protoW = runeCount(unsafe.Slice(unsafe.StringData(sh.proto.Name), len(sh.proto.Name)))
	}
	sh.addr = dissect.EndpointsLayer(r)
	sh.layers = append(sh.layers[:0], r.Layers...)
	if len(r.Findings) == 0 {
		sh.relevant = dissect.Relevant(r)
	} else {
		sh.relevant = dissect.Relevant(&dissect.Record{Layers: r.Layers})
	}
	return sh
}

// appendSeverityColor starts a line of findings of severity sev in its
// colour (none for a line without).
//
//go:noinline
func appendSeverityColor(b []byte, sev finding.Severity) []byte {
	switch sev {
	case finding.SeverityError:
		b = append(b, ansiRed...)
	case finding.SeverityWarning:
		b = append(b, ansiYellow...)
	}
	return b
}

// appendProtoColored appends the protocol column's name in its colour.
//
//go:noinline
func appendProtoColored(b []byte, proto *field.Proto) []byte {
	b = append(b, ansiCyan...)
	b = append(b, proto.Name...)
	return append(b, ansiReset...)
}

// appendFindingCodes appends the findings' severities and codes after n
// parts of info text.
//
//go:noinline
func appendFindingCodes(b []byte, fs []finding.Finding, n int) []byte {
	for i := range fs {
		f := &fs[i]
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
	return b
}

// Flush writes buffered lines.
func (s *Summary) Flush() error { return s.w.Flush() }

func maxSeverity(fs []finding.Finding) finding.Severity {
	var m finding.Severity
	for i := range fs {
		if fs[i].Severity > m {
			m = fs[i].Severity
		}
	}
	return m
}

// sameLayers reports whether a and b hold the same layer values in the
// same order: the same two words (type and pointer), compared as words
// (== on interfaces calls runtime.ifaceeq for each), innermost first:
// records of different shapes mostly share their outer layers.
func sameLayers(a, b []field.Layer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := len(a) - 1; i >= 0; i-- {
		if *(*[2]unsafe.Pointer)(unsafe.Pointer(&a[i])) != *(*[2]unsafe.Pointer)(unsafe.Pointer(&b[i])) {
			return false
		}
	}
	return true
}

// lastInfo returns the index of the last layer of r that is a
// dissect.InfoSummarizer, or -1.
func lastInfo(r *dissect.Record) int {
	for i := len(r.Layers) - 1; i >= 0; i-- {
		if _, ok := r.Layers[i].(dissect.InfoSummarizer); ok {
			return i
		}
	}
	return -1
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

// appendTimeAs appends the time column in a -t format other than r,
// right-aligned in eleven columns like r's (the dates are wider), with
// microseconds as tshark shows a microsecond capture.
func (s *Summary) appendTimeAs(b []byte, r *dissect.Record, tf string) []byte {
	fr, ok := firstFrame(r)
	if !ok || fr.NoTime {
		return append(b, spaces[:11]...)
	}
	var t []byte
	switch tf {
	case "d":
		t = appendSeconds6(nil, int64(fr.Delta))
	case "dd":
		var d time.Duration
		if !s.shown.IsZero() {
			d = r.Time.Sub(s.shown)
		}
		s.shown = r.Time
		t = appendSeconds6(nil, int64(d))
	case "e":
		t = appendSeconds6(nil, r.Time.UnixNano())
	default:
		at := r.Time
		if tf[0] == 'u' {
			at = at.UTC()
		} else {
			at = at.Local()
		}
		layout := "15:04:05.000000"
		switch tf[1:] {
		case "d":
			layout = "2006-01-02 15:04:05.000000"
		case "doy":
			layout = "2006/002 15:04:05.000000"
		}
		t = at.AppendFormat(nil, layout)
	}
	return padLeft(b, t, 11)
}
