package fieldval

import (
	"strconv"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

func lookup(t *testing.T, name string) *field.Field {
	t.Helper()
	f, ok := field.Lookup(name)
	if !ok {
		t.Fatalf("no field %s", name)
	}
	return f
}

// The REQ of the rxe capture (frame 1): the values of the wanted fields,
// slots in the order asked, and the pvtdata fields the CM layer reports
// under its private data only when layers of other protocols are visited.
func TestCollectREQ(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	rec := dissect.New(dissect.Options{}).Dissect(&frames[0])

	c := New()
	port, src, ulp, plen := lookup(t, "udp.dstport"), lookup(t, "ipv4.src"), lookup(t, "pvtdata.ulp"), lookup(t, "pvtdata.length")
	for i, f := range []*field.Field{port, src, ulp, plen} {
		if s := c.Want(f); s != i {
			t.Fatalf("Want(%s) = slot %d, want %d", f.Name, s, i)
		}
	}
	if c.Want(port) != 0 || len(c.Wanted()) != 4 {
		t.Fatalf("wanting a field twice added it again: %d wanted", len(c.Wanted()))
	}
	if s := c.Slot(lookup(t, "udp.srcport")); s != -1 {
		t.Fatalf("an unwanted field has slot %d", s)
	}
	c.Collect(rec)
	got := map[*field.Field]string{}
	for i := range c.Values() {
		v := &c.Values()[i]
		if v.Field != c.Wanted()[v.Slot] {
			t.Fatalf("value of %s in slot %d", v.Field.Name, v.Slot)
		}
		switch v.Field.Kind {
		case field.KindString:
			got[v.Field] = string(c.BytesOf(v))
		case field.KindAddr:
			got[v.Field] = v.Addr.String()
		default:
			got[v.Field] = strconv.FormatUint(v.Uint, 10)
		}
	}
	for f, want := range map[*field.Field]string{port: "4791", src: "192.0.2.2", ulp: "rpcrdma-v1", plen: "56"} {
		if got[f] != want {
			t.Errorf("%s = %q, want %q", f.Name, got[f], want)
		}
	}

	// OwnOnly visits only the wanted protocols' layers: the CM layer's
	// pvtdata subtree is not reached.
	own := New()
	own.OwnOnly = true
	own.Want(port)
	own.Want(ulp)
	own.Collect(rec)
	for _, v := range own.Values() {
		if v.Field == ulp {
			t.Errorf("OwnOnly collected %s from the CM layer", ulp.Name)
		}
	}
	if len(own.Values()) != 1 || own.Values()[0].Field != port {
		t.Errorf("OwnOnly values: %+v", own.Values())
	}

	// Collect resets: a record without the fields leaves no values.
	c.Collect(&dissect.Record{})
	if len(c.Values()) != 0 {
		t.Errorf("%d values left from the previous record", len(c.Values()))
	}
}
