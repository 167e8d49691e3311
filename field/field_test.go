package field

import (
	"net/netip"
	"strings"
	"testing"
)

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

func TestDeclarationRules(t *testing.T) {
	p := NewProto("fieldtest", "field package test protocol")
	a := p.Hex("fieldtest.a", 16, "A").WithNames(map[uint64]string{1: "one"}).WithUnit("octets").WithRef("RFC 0 §1")
	if got, ok := Lookup("fieldtest.a"); !ok || got != a || got.Proto != p {
		t.Fatalf("Lookup: %v %v", got, ok)
	}
	if n, ok := a.ValueName(1); !ok || n != "one" {
		t.Errorf("ValueName(1) = %q %v", n, ok)
	}
	if _, ok := a.ValueName(2); ok {
		t.Error("ValueName(2) found a name")
	}
	if a.Kind != KindHex || a.Bits != 16 || a.Unit != "octets" || a.Ref != "RFC 0 §1" {
		t.Errorf("declaration lost a property: %+v", a)
	}
	mustPanic(t, "duplicate field", func() { p.Uint("fieldtest.a", 8, "again") })
	mustPanic(t, "field outside its protocol", func() { p.Uint("other.b", 8, "b") })
	mustPanic(t, "duplicate protocol", func() { NewProto("fieldtest", "again") })
	mustPanic(t, "upper-case protocol", func() { NewProto("Bad", "bad") })
	if got, ok := LookupProto("fieldtest"); !ok || got != p || len(got.Fields) != 1 {
		t.Errorf("LookupProto: %v %v", got, ok)
	}
	ps := Protos()
	for i := 1; i < len(ps); i++ {
		if ps[i-1].Name >= ps[i].Name {
			t.Errorf("Protos not sorted: %q before %q", ps[i-1].Name, ps[i].Name)
		}
	}
}

func TestKindNames(t *testing.T) {
	for k := KindUint; k <= KindGroup; k++ {
		if strings.HasPrefix(k.String(), "Kind(") {
			t.Errorf("kind %d has no name", k)
		}
	}
	if Kind(99).String() != "Kind(99)" {
		t.Errorf("unknown kind: %s", Kind(99))
	}
}

// recorder is a Visitor that writes what it is told, so a test can see the
// order and nesting a layer reports.
type recorder struct{ b strings.Builder }

func (r *recorder) Uint(f *Field, v uint64)     { r.b.WriteString(f.Name + " ") }
func (r *recorder) Int(f *Field, v int64)       { r.b.WriteString(f.Name + " ") }
func (r *recorder) Bool(f *Field, v bool)       { r.b.WriteString(f.Name + " ") }
func (r *recorder) String(f *Field, v string)   { r.b.WriteString(f.Name + " ") }
func (r *recorder) Bytes(f *Field, v []byte)    { r.b.WriteString(f.Name + " ") }
func (r *recorder) Addr(f *Field, v netip.Addr) { r.b.WriteString(f.Name + " ") }
func (r *recorder) Begin(f *Field)              { r.b.WriteString(f.Name + "{ ") }
func (r *recorder) End()                        { r.b.WriteString("} ") }

var (
	visitProto = NewProto("visittest", "visitor test protocol")
	visitA     = visitProto.Uint("visittest.a", 8, "A")
	visitG     = visitProto.Group("visittest.g", "G")
	visitB     = visitProto.Bool("visittest.g.b", "B")
)

type visitLayer struct{}

func (visitLayer) Proto() *Proto { return visitProto }
func (visitLayer) VisitFields(v Visitor) {
	v.Uint(visitA, 1)
	v.Begin(visitG)
	v.Bool(visitB, true)
	v.End()
}

func TestVisitOrderAndNesting(t *testing.T) {
	var l Layer = visitLayer{}
	var r recorder
	l.VisitFields(&r)
	if got, want := r.b.String(), "visittest.a visittest.g{ visittest.g.b } "; got != want {
		t.Errorf("visited %q, want %q", got, want)
	}
}
