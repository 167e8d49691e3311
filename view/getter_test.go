package view

import (
	"fmt"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// topUints records the integer values a layer's VisitFields reports at top
// level (outside Begin/End), by field, in order, and which fields it
// reports inside a group.
type topUints struct {
	field.NopVisitor
	depth  int
	got    map[*field.Field][]uint64
	nested map[*field.Field]bool
}

func (u *topUints) Uint(f *field.Field, v uint64) {
	if u.depth == 0 {
		u.got[f] = append(u.got[f], v)
	} else if u.nested != nil {
		u.nested[f] = true
	}
}
func (u *topUints) Begin(*field.Field) { u.depth++ }
func (u *topUints) End()               { u.depth-- }

// getterStats counts, per field, how often a getter answered with and
// without the field, so a test can tell that the comparison covered both.
type getterStats map[string][2]int

// checkGetters compares every field.UintGetter layer of r with its
// VisitFields, for every declared field: where GetUint knows a field, it
// has it exactly when VisitFields reports it once at top level, with that
// value, and VisitFields does not report it inside a group (stats counts
// every occurrence a visit finds).
func checkGetters(r *dissect.Record, seen getterStats) error {
	for _, l := range r.Layers {
		g, ok := l.(field.UintGetter)
		if !ok {
			continue
		}
		vis := &topUints{got: map[*field.Field][]uint64{}, nested: map[*field.Field]bool{}}
		l.VisitFields(vis)
		for _, p := range field.Protos() {
			for _, f := range p.Fields {
				v, has, known := g.GetUint(f)
				if !known {
					continue
				}
				want := vis.got[f]
				switch {
				case vis.nested[f]:
					return fmt.Errorf("frame %d %s: VisitFields reports %s inside a group; GetUint cannot stand for it", r.Frame, p.Name, f.Name)
				case len(want) > 1:
					return fmt.Errorf("frame %d %s: VisitFields reports %s %d times; GetUint cannot stand for it", r.Frame, p.Name, f.Name, len(want))
				case has != (len(want) == 1):
					return fmt.Errorf("frame %d %s: GetUint(%s) has=%v, VisitFields reports it %d times", r.Frame, l.Proto().Name, f.Name, has, len(want))
				case has && v != want[0]:
					return fmt.Errorf("frame %d %s: GetUint(%s) = %d, VisitFields reports %d", r.Frame, l.Proto().Name, f.Name, v, want[0])
				}
				c := seen[f.Name]
				if has {
					c[0]++
				} else {
					c[1]++
				}
				seen[f.Name] = c
			}
		}
	}
	return nil
}

// TestUintGetterAgrees: on every layer of every real and synthetic capture
// that gives field values directly (field.UintGetter: stats' breakdown), the
// values are those VisitFields reports.
func TestUintGetterAgrees(t *testing.T) {
	files := testcap.Glob(t, "pcaps/synthetic/*.pcap*")
	real := testcap.Glob(t, "pcaps/real/*.pcap*")
	files = append(files, real...)
	seen := getterStats{}
	for _, file := range files {
		testconn.EachRecord(t, file, func(r *dissect.Record) {
			if err := checkGetters(r, seen); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		})
	}
	for _, name := range []string{"bth.opcode", "bth.destqp", "bth.psn", "cm.attribute_id", "mpa.frame_type", "rdmap.opcode",
		"rpcrdma.xid", "rpcrdma.version", "rpcrdma.flow_control", "rpcrdma.msg_type", "rpc.xid", "rpc.msgtyp", "rpc.program", "rpc.programversion", "rpc.procedure"} {
		if seen[name][0] == 0 {
			t.Errorf("%s: no layer gave it: not compared", name)
		}
	}
	if seen["rpc.procedure"][1] == 0 {
		t.Errorf("rpc.procedure: never absent (a reply to an unseen call): the has=false side is not compared")
	}
	t.Logf("compared: %v", seen)
}

// FuzzUintGetterAgrees: the comparison of TestUintGetterAgrees on any
// frames (the fuzz input is frames of Ethernet, each behind a 2-octet
// length, as FuzzConnsPipeline's), seeded with the real captures' first
// frames.
func FuzzUintGetterAgrees(f *testing.F) {
	real := testcap.Glob(f, "pcaps/real/*.pcap")
	for _, p := range real {
		addFrameSeed(f, p, 16)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := dissect.New(dissect.Options{})
		seen := getterStats{}
		eachPackedFrame(data, func(fr *source.Frame) {
			if err := checkGetters(d.Dissect(fr), seen); err != nil {
				t.Fatal(err)
			}
		})
	})
}
