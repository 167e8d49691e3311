package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cmpd-dissect/cmpd-dissect/dfilter"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
)

var realCaptures = []string{
	testcap.RXE,
	testcap.SIW,
}

// occurrence is one field value seen in a record, rendered as a filter
// literal.
type occurrence struct {
	f   *field.Field
	lit string
}

// recorder renders every visited value as a -Y literal.
type recorder struct{ occ []occurrence }

func (r *recorder) add(f *field.Field, lit string) { r.occ = append(r.occ, occurrence{f, lit}) }
func (r *recorder) Uint(f *field.Field, v uint64) {
	switch f.Kind {
	case field.KindMAC, field.KindEUI64:
		r.add(f, string(appendUint(nil, f, v)))
	default:
		r.add(f, fmt.Sprintf("%d", v))
	}
}
func (r *recorder) Int(f *field.Field, v int64) { r.add(f, fmt.Sprintf("%d", v)) }
func (r *recorder) Bool(f *field.Field, v bool) { r.add(f, fmt.Sprintf("%v", v)) }
func (r *recorder) String(f *field.Field, v string) {
	r.add(f, string(appendJSONString(nil, v))) // quoted; JSON escapes are a subset of ours
}
func (r *recorder) Bytes(f *field.Field, v []byte) {
	if len(v) == 0 {
		r.add(f, `""`)
		return
	}
	r.add(f, string(appendHexBytes(nil, v)))
}
func (r *recorder) Addr(f *field.Field, v netip.Addr) { r.add(f, v.String()) }
func (r *recorder) Begin(f *field.Field)              { r.add(f, "") }
func (r *recorder) End()                              {}

// TestEveryFieldFilterAndFields: for every field that occurs in the real
// captures, "-Y name", "-Y name == value" (with the value the record has)
// and "-T fields -e name" work and agree; every declared field compiles
// as a presence filter and is accepted by -e.
func TestEveryFieldFilterAndFields(t *testing.T) {
	tested := map[*field.Field]bool{}
	synth := testcap.Glob(t, "pcaps/synthetic/*.pcap")
	for _, file := range append(append([]string(nil), realCaptures...), synth...) {
		testconn.EachRecord(t, file, func(r *dissect.Record) {
			var rec recorder
			for _, l := range r.Layers {
				l.VisitFields(&rec)
			}
			for _, o := range rec.occ {
				if tested[o.f] {
					continue
				}
				tested[o.f] = true
				pres, err := dfilter.Compile(o.f.Name)
				if err != nil || !pres.Match(r) {
					t.Errorf("frame %d: -Y %s: %v (match %v)", r.Frame, o.f.Name, err, err == nil && pres.Match(r))
					continue
				}
				if o.f.Kind == field.KindGroup || o.f.Kind == field.KindString && strings.ContainsAny(o.lit, `\`) {
					continue
				}
				expr := o.f.Name + " == " + o.lit
				eq, err := dfilter.Compile(expr)
				if err != nil {
					t.Errorf("-Y %s: %v", expr, err)
					continue
				}
				if !eq.Match(r) {
					t.Errorf("frame %d: -Y %s does not match its own value", r.Frame, expr)
				}
				ne, _ := dfilter.Compile(o.f.Name + " != " + o.lit)
				if ne.Match(r) {
					t.Errorf("frame %d: -Y %s != … matches", r.Frame, o.f.Name)
				}
				var out bytes.Buffer
				fp, err := NewFields(&out, []string{"frame.number", o.f.Name}, FieldsOptions{})
				if err != nil {
					t.Fatal(err)
				}
				fp.Print(r)
				fp.Flush()
				cols := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\t")
				if len(cols) != 2 || cols[1] == "" && o.lit != `""` {
					t.Errorf("frame %d: -T fields -e %s: %q", r.Frame, o.f.Name, out.String())
				}
			}
		})
	}
	if len(tested) < 40 {
		t.Fatalf("only %d fields seen in the captures", len(tested))
	}
	t.Logf("%d fields round-tripped through -Y and -T fields (of %d declared)", len(tested), declaredFields())
	for _, p := range field.Protos() {
		if _, err := dfilter.Compile(p.Name); err != nil {
			t.Errorf("-Y %s: %v", p.Name, err)
		}
		for _, f := range p.Fields {
			if _, err := dfilter.Compile(f.Name); err != nil {
				t.Errorf("-Y %s: %v", f.Name, err)
			}
			if _, err := NewFields(&bytes.Buffer{}, []string{f.Name}, FieldsOptions{}); err != nil {
				t.Errorf("-e %s: %v", f.Name, err)
			}
		}
	}
}

func TestViewsOnRealCaptures(t *testing.T) {
	for _, file := range realCaptures {
		var sum, tree, js, flds bytes.Buffer
		s := NewSummary(&sum, Options{All: true})
		tr := NewTree(&tree, Options{Color: true})
		j := NewJSON(&js)
		fp, err := NewFields(&flds, []string{"frame.number", "ipv4.src", "frame.protocols"}, FieldsOptions{Header: true})
		if err != nil {
			t.Fatal(err)
		}
		st, err := NewStats([]string{"ipv4.proto"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewStats([]string{"ipv4.proto", "nosuch.field"}); err == nil || !strings.Contains(err.Error(), "nosuch.field: no such field") {
			t.Fatalf("an unknown breakdown field: %v", err)
		}
		n := 0
		testconn.EachRecord(t, file, func(r *dissect.Record) {
			n++
			for _, p := range []Printer{s, tr, j, fp, st} {
				if err := p.Print(r); err != nil {
					t.Fatal(err)
				}
			}
		})
		for _, p := range []Printer{s, tr, j, fp, st} {
			p.Flush()
		}
		if got := strings.Count(sum.String(), "\n"); got != n {
			t.Errorf("%s: %d summary lines for %d packets", file, got, n)
		}
		lines := strings.Split(strings.TrimSuffix(js.String(), "\n"), "\n")
		if len(lines) != n {
			t.Fatalf("%s: %d JSON lines for %d packets", file, len(lines), n)
		}
		for i, l := range lines {
			var obj struct {
				Frame  int
				Layers []struct {
					Name   string
					Offset int
					Fields map[string]any
				}
			}
			if !utf8.ValidString(l) || json.Unmarshal([]byte(l), &obj) != nil {
				t.Fatalf("%s: line %d is not valid JSON: %s", file, i+1, l)
			}
			if obj.Frame != i+1 || len(obj.Layers) < 4 || obj.Layers[0].Name != "frame" || obj.Layers[1].Name != "ethernet" {
				t.Fatalf("%s: line %d: %+v", file, i+1, obj)
			}
			if obj.Layers[2].Fields["ipv4.version"] != float64(4) {
				t.Fatalf("%s: line %d: ipv4 fields %v", file, i+1, obj.Layers[2].Fields)
			}
		}
		fl := strings.Split(flds.String(), "\n")
		if fl[0] != "frame.number\tipv4.src\tframe.protocols" || !strings.HasPrefix(fl[1], "1\t") {
			t.Errorf("%s: fields output %q", file, fl[:2])
		}
		if !strings.Contains(tree.String(), "Internet Protocol Version 4") || !strings.Contains(tree.String(), "[ipv4.src]") {
			t.Errorf("%s: tree lacks IPv4", file)
		}
		if st.Packets != n || st.ByProto["ipv4"] != n {
			t.Errorf("%s: stats %+v", file, st)
		}
		var sb bytes.Buffer
		st.Render(&sb)
		if !strings.Contains(sb.String(), "ipv4") {
			t.Errorf("stats render: %s", sb.String())
		}
	}
}

func TestEscaping(t *testing.T) {
	in := "a\x1b[31mred\x07\x9b\u202eb\\\xff\u00e9\u0085"
	got := string(appendEscaped(nil, in))
	want := `a\x1b[31mred\x07\x9b\xe2\x80\xaeb\\\xff` + "\u00e9" + `\xc2\x85`
	if got != want {
		t.Errorf("escaped %q, want %q", got, want)
	}
	for _, c := range got {
		if c < 0x20 || c == 0x7f {
			t.Fatalf("control character left in %q", got)
		}
	}
	js := appendJSONString(nil, in)
	var back string
	if !utf8.Valid(js) || json.Unmarshal(js, &back) != nil {
		t.Fatalf("JSON string invalid: %s", js)
	}
	if strings.ContainsRune(string(js), 0x1b) {
		t.Fatalf("raw ESC in JSON %q", js)
	}
}

func TestFieldList(t *testing.T) {
	var b bytes.Buffer
	if err := FieldList(&b, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"P\tipv4\t", "F\tipv4.src\taddr\tSource Address\tipv4\t", "F\tframe.number\tuint\t"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("field list lacks %q", want)
		}
	}
	b.Reset()
	FieldList(&b, "udp.src")
	if b.String() != "P\tudp\tUser Datagram Protocol\nF\tudp.srcport\tuint\tSource Port\tudp\t\t\n" {
		t.Errorf("prefix: %q", b.String())
	}
	// tshark's names are listed beside the field, and a prefix of them
	// finds it.
	b.Reset()
	FieldList(&b, "ip.a")
	if b.String() != "P\tipv4\tInternet Protocol Version 4\nF\tipv4.addr\taddr\tSource or Destination Address\tipv4\t\tip.addr\n" {
		t.Errorf("alias prefix: %q", b.String())
	}
}

func TestColorMode(t *testing.T) {
	for s, want := range map[string]ColorMode{"auto": ColorAuto, "always": ColorAlways, "never": ColorNever, "": ColorAuto} {
		if m, err := ParseColorMode(s); err != nil || m != want {
			t.Errorf("%q: %v %v", s, m, err)
		}
	}
	if _, err := ParseColorMode("sometimes"); err == nil {
		t.Error("sometimes accepted")
	}
	var b bytes.Buffer
	if UseColor(ColorAuto, &b) || !UseColor(ColorAlways, &b) || UseColor(ColorNever, &b) {
		t.Error("colour decision for a buffer")
	}
	t.Setenv("NO_COLOR", "1")
	if UseColor(ColorAuto, &b) {
		t.Error("NO_COLOR ignored")
	}
}

func TestProgress(t *testing.T) {
	var mu syncBuffer
	var read int64 = 50 << 20
	p := StartProgress(&mu, 100<<20, func() int64 { return read })
	for i := 0; i < 1000; i++ {
		p.Packet()
	}
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(mu.String(), "50%") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop()
	out := mu.String()
	if !strings.Contains(out, " 50% 50.0 MB/100.0 MB ") || !strings.Contains(out, "pkt/s") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Fatalf("progress output %q", out)
	}
	var nilP *Progress
	nilP.Packet()
	nilP.Stop()
}

// syncBuffer is a bytes.Buffer safe for the progress goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func declaredFields() int {
	n := 0
	for _, p := range field.Protos() {
		n += len(p.Fields)
	}
	return n
}

// TestPlainPrefix: plainPrefix stops at the first odd octet wherever it
// lies (in a whole word, in the tail, in both) and takes plain text whole,
// for every length around the word size.
func TestPlainPrefix(t *testing.T) {
	for n := 0; n <= 26; n++ {
		plain := strings.Repeat("abcdefghij", 3)[:n]
		if got := plainPrefix(plain); got != n {
			t.Fatalf("plain %q: %d, want %d", plain, got, n)
		}
		for at := 0; at < n; at++ {
			for _, c := range []byte{0x01, '\\', 0x7f, 0xc3} {
				b := []byte(plain)
				b[at] = c
				if got := plainPrefix(string(b)); got != at {
					t.Fatalf("%q: %d, want %d", b, got, at)
				}
				if at+2 < n {
					b[n-1] = c
					if got := plainPrefix(string(b)); got != at {
						t.Fatalf("%q: %d, want %d", b, got, at)
					}
				}
			}
		}
	}
}

// TestPlainWordMatchesTable: the eight-octet check of appendEscaped's fast
// path agrees with the per-octet table on every octet in every position.
func TestPlainWordMatchesTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			var w uint64
			for k := 0; k < 8; k++ {
				w |= uint64('a') << (8 * k)
			}
			w &^= 0xff << (8 * pos)
			w |= uint64(c) << (8 * pos)
			if got := plainWord(w); got != plainASCII[c] {
				t.Fatalf("octet 0x%02x at %d: plainWord %v, table %v", c, pos, got, plainASCII[c])
			}
		}
	}
	for in, want := range map[string]string{
		"plain text here!":     "plain text here!",
		"tab\there and more":   "tab\\x09here and more",
		"back\\slash 12345":    "back\\\\slash 12345",
		"utf8 é and more text": "utf8 é and more text",
		"\x7f DEL at start ok": "\\x7f DEL at start ok",
		"eight ok\x01":         "eight ok\\x01",
	} {
		if got := string(appendEscaped(nil, in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
