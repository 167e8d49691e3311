package view

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// benchSummary dissects the capture once per op and prints every wanted
// record reps times: the difference between reps=16 and reps=0, divided
// by 16, is the cost of one summary line.
func benchSummary(b *testing.B, reps int, opts Options) {
	file := testcap.BenchCapture(b)
	s := NewSummary(io.Discard, opts)
	lines := 0
	b.ReportAllocs()
	for b.Loop() {
		fs, err := source.OpenFiles([]string{file}, nil)
		if err != nil {
			b.Fatal(err)
		}
		d := dissect.New(dissect.Options{})
		lines = 0
		err = d.Run(fs, func(r *dissect.Record) error {
			if !s.Wanted(r) {
				return nil
			}
			lines++
			for range reps {
				if err := s.Print(r); err != nil {
					return err
				}
			}
			return nil
		})
		fs.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
}

// BenchmarkSummaryPrint: ns/line of reps16 minus reps0, over 16, is what
// formatting one line costs.
func BenchmarkSummaryPrint(b *testing.B) {
	b.Run("reps0", func(b *testing.B) { benchSummary(b, 0, Options{}) })
	b.Run("reps16", func(b *testing.B) { benchSummary(b, 16, Options{}) })
	b.Run("reps16color", func(b *testing.B) { benchSummary(b, 16, Options{Color: true}) })
}

// TestSummaryNoAllocs: printing a summary line allocates nothing, on every
// record of the real captures (RoCEv2 and iWARP, CM included), with and
// without colour.
func TestSummaryNoAllocs(t *testing.T) {
	for _, file := range realCaptures {
		for _, color := range []bool{false, true} {
			s := NewSummary(io.Discard, Options{All: true, Color: color})
			testconn.EachRecord(t, file, func(r *dissect.Record) {
				if n := testing.AllocsPerRun(5, func() { s.Print(r) }); n != 0 {
					t.Fatalf("%s frame %d (colour %v): %v allocations per line", file, r.Frame, color, n)
				}
			})
		}
	}
}

// TestSummaryColumns: the frame and time columns are what padLeft of
// appendInt and appendSeconds6 make, at the widths' edges too.
func TestSummaryColumns(t *testing.T) {
	for _, v := range []int{-12, -1, 1, 9, 10, 99, 100, 999999, 1000000, 9999999, 10000000, 123456789, 1 << 40} {
		r := &dissect.Record{Frame: v}
		want := string(padLeft(nil, appendInt(nil, int64(v)), 7))
		if got := string(appendFrameColumn(nil, r)); got != want {
			t.Errorf("frame %d: %q, want %q", v, got, want)
		}
	}
	if got := string(appendFrameColumn(nil, &dissect.Record{})); got != "    end" {
		t.Errorf("end of input: %q", got)
	}
	for _, ns := range []int64{0, 1, 499, 500, 999, 1000, 1500, 999999499, 999999500, 1e9, 1234567891,
		9999999999499, 9999999999500, 1e13, 123456789123456789, 1 << 62, 1<<62 + 1, 1<<63 - 1, -1, -500, -501, -1e9, -1 << 63} {
		r := &dissect.Record{Frame: 1, Layers: []field.Layer{&dissect.Frame{Relative: time.Duration(ns)}}}
		want := string(padLeft(nil, appendSeconds6(nil, ns), 11))
		if got := string(appendTimeColumn(nil, r)); got != want {
			t.Errorf("time %d ns: %q, want %q", ns, got, want)
		}
	}
	// A damaged record whose header is cut has no time.
	if got := string(appendTimeColumn(nil, &dissect.Record{Frame: 1, Layers: []field.Layer{&dissect.Frame{NoTime: true}}})); got != spaces[:11] {
		t.Errorf("no time: %q", got)
	}
	if got := string(appendTimeColumn(nil, &dissect.Record{Frame: 1})); got != spaces[:11] {
		t.Errorf("no frame layer: %q", got)
	}
}

// TestEscapeTail: escaping in place is appendEscaped, and the width is
// the runes of the escaped text.
func TestEscapeTail(t *testing.T) {
	s := NewSummary(io.Discard, Options{})
	for _, in := range []string{"", "plain", "plain text longer than eight", "tab\there", "back\\slash in a longer text",
		"\x1b[31mred", "é and more", "\xff\xfe", "\u202e", "ends in half a rune \xe2\x80", "\xc2\x85 C1"} {
		b := []byte("prefix ")
		b, w := s.escapeTail(append(b, in...), len(b))
		want := string(appendEscaped([]byte("prefix "), in))
		if string(b) != want {
			t.Errorf("%q: %q, want %q", in, b, want)
		}
		if ww := runeCount([]byte(want[len("prefix "):])); w != ww {
			t.Errorf("%q: width %d, want %d", in, w, ww)
		}
	}
}

// TestPlainWordAgainstTable: plainWord agrees with the table on words
// with several odd octets anywhere (borrows and carries between octets).
func TestPlainWordAgainstTable(t *testing.T) {
	odd := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0x9f, 0xc2, 0xe2, 0xff, 'a', 'Z', ' '}
	rnd := uint64(0x9e3779b97f4a7c15)
	for n := 0; n < 1<<20; n++ {
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		var w uint64
		plain := true
		for k := 0; k < 8; k++ {
			c := odd[(rnd>>(6*k))%uint64(len(odd))]
			w |= uint64(c) << (8 * k)
			plain = plain && plainASCII[c]
		}
		if plainWord(w) != plain {
			t.Fatalf("word %#016x: plainWord %v, table %v", w, plainWord(w), plain)
		}
	}
}

// summaryLayer is a layer whose summary is fixed text.
type summaryLayer struct{ text string }

func (l *summaryLayer) Proto() *field.Proto           { return dissect.ProtoUDP }
func (l *summaryLayer) VisitFields(field.Visitor)     {}
func (l *summaryLayer) AppendSummary(b []byte) []byte { return append(b, l.text...) }
func (l *summaryLayer) AppendSrc(b []byte) []byte     { return append(b, "src\x1bé"...) }
func (l *summaryLayer) AppendDst(b []byte) []byte     { return append(b, "a-long-destination-name"...) }

var _ interface {
	dissect.Addresser
	field.Summarizer
} = (*summaryLayer)(nil)

// TestSummaryEscapesEachPart: the summaries, escaped together, read as
// each escaped apart and joined by two spaces; empty ones add no
// separator; the endpoints are escaped and padded by their runes.
func TestSummaryEscapesEachPart(t *testing.T) {
	parts := []string{"one\xe2\x80", "", "\x80two\\", "thr\u00e9e \x1b", ""}
	r := &dissect.Record{Frame: 3, Layers: []field.Layer{&dissect.Frame{Relative: 1500 * time.Microsecond}}}
	for _, p := range parts {
		r.Layers = append(r.Layers, &summaryLayer{text: p})
	}
	var out bytes.Buffer
	s := NewSummary(&out, Options{All: true})
	for range 2 { // the second time through the cached summarisers
		out.Reset()
		if err := s.Print(r); err != nil {
			t.Fatal(err)
		}
		s.Flush()
		var info []string
		for _, p := range parts {
			if p != "" {
				info = append(info, string(appendEscaped(nil, p)))
			}
		}
		want := "      3    0.001500 src\\x1bé          → a-long-destination-name udp      " + strings.Join(info, "  ") + "\n"
		if out.String() != want {
			t.Fatalf("got  %q\nwant %q", out.String(), want)
		}
	}
}

// BenchmarkSummaryLine prints the wanted records among the capture's
// first 512 frames, each dissected by a Dissector of its own so that all
// stay valid at once (Sends spanning packets are not reassembled). ns/op
// divided by the lines reported is one line's formatting, without the
// dissection.
func BenchmarkSummaryLine(b *testing.B) {
	fs, err := source.OpenFiles([]string{testcap.BenchCapture(b)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer fs.Close()
	s := NewSummary(io.Discard, Options{})
	var recs []*dissect.Record
	for range 512 {
		var f source.Frame
		if err := fs.Next(&f); err != nil {
			break
		}
		f.Data = append([]byte(nil), f.Data...)
		if r := dissect.New(dissect.Options{}).Dissect(&f); s.Wanted(r) {
			recs = append(recs, r)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range recs {
			s.Print(r)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/line")
}
