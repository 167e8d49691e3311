package view

import (
	"fmt"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// TestStatsBreakdownCounts: stats counts every breakdown value as a plain
// visit of the layers finds it (topUints, getter_test.go), whether a protocol has one breakdown field
// (oneCounter) or several (valueCounter), and for values below and above
// denseValues (UDP ports); and the frames that hold each protocol, once per
// frame, as the layers' Proto give them (Print finds a layer's protocol by
// its type).
func TestStatsBreakdownCounts(t *testing.T) {
	files := testcap.Glob(t, "pcaps/synthetic/*.pcap")
	files = append(files, realCaptures...)
	sets := [][]string{
		{"bth.opcode", "udp.dstport", "rpc.procedure", "cm.attribute_id"},                                      // one per protocol
		{"bth.opcode", "bth.destqp", "udp.dstport", "udp.srcport", "rpcrdma.msg_type", "rpcrdma.flow_control"}, // two per protocol
	}
	counted := map[string]int{}
	for _, file := range files {
		want := map[*field.Field]map[uint64]int{}
		wantProto := map[string]int{}
		var stats []*Stats
		for _, set := range sets {
			st, err := NewStats(set)
			if err != nil {
				t.Fatal(err)
			}
			stats = append(stats, st)
		}
		testconn.EachRecord(t, file, func(r *dissect.Record) {
			in := map[string]bool{}
			for _, l := range r.Layers {
				in[l.Proto().Name] = true
			}
			for name := range in {
				wantProto[name]++
			}
			for _, l := range r.Layers {
				vis := &topUints{got: map[*field.Field][]uint64{}}
				l.VisitFields(vis)
				for f, vs := range vis.got {
					if want[f] == nil {
						want[f] = map[uint64]int{}
					}
					for _, v := range vs {
						want[f][v]++
					}
				}
			}
			for _, st := range stats {
				if err := st.Print(r); err != nil {
					t.Fatal(err)
				}
			}
		})
		for i, st := range stats {
			st.Flush()
			if fmt.Sprint(st.ByProto) != fmt.Sprint(wantProto) {
				t.Fatalf("%s: frames by protocol %v, the layers' Proto give %v", file, st.ByProto, wantProto)
			}
			for _, name := range sets[i] {
				f, _ := field.Lookup(name)
				got, exp := st.ByValue[f], want[f]
				if len(got) != len(exp) {
					t.Fatalf("%s: %s by %v: %v, visiting finds %v", file, name, sets[i], got, exp)
				}
				for v, n := range exp {
					if got[v] != n {
						t.Fatalf("%s: %s=%d counted %d times by %v, visiting finds %d", file, name, v, got[v], sets[i], n)
					}
					counted[name] += n
				}
			}
		}
	}
	for _, name := range []string{"bth.opcode", "udp.dstport", "rpc.procedure", "cm.attribute_id", "bth.destqp", "rpcrdma.msg_type", "rpcrdma.flow_control"} {
		if counted[name] == 0 {
			t.Errorf("no %s value in any capture: the comparison proves nothing for it", name)
		}
	}
}

// Two layer values of one type (the Dissector's RPC-over-RDMA headers of
// two messages in a frame) are each counted by their own values, in
// whatever order they come: Print keeps the last layer value's conversion
// to a field.UintGetter, not the type's.
func TestStatsLayerValuesOfOneType(t *testing.T) {
	header := func(proc byte) *rpcrdma.Header {
		h := &rpcrdma.Header{}
		data := []byte{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 32, 0, 0, 0, proc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		if err := h.DecodeFromBytes(data, rpcrdma.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		return h
	}
	msg, nomsg := header(0), header(1)
	st, err := NewStats([]string{"rpcrdma.msg_type"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ls := range [][]field.Layer{{msg}, {nomsg}, {nomsg}, {msg, nomsg}, {nomsg, msg}, {msg}} {
		if err := st.Print(&dissect.Record{Layers: ls}); err != nil {
			t.Fatal(err)
		}
	}
	st.Flush()
	f, _ := field.Lookup("rpcrdma.msg_type")
	if got := st.ByValue[f]; got[0] != 4 || got[1] != 4 || len(got) != 2 {
		t.Errorf("rpcrdma.msg_type counts %v, want 0: 4, 1: 4", got)
	}
}
