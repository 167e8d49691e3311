package view

import (
	"fmt"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// statsReference counts records as stats must: the frames that hold each
// protocol, once per frame, as the layers' Proto give them, every
// breakdown value a plain visit of the layers finds (topUints,
// getter_test.go), and the findings by code with the worst severity of
// each.
type statsReference struct {
	proto    map[string]int
	values   map[*field.Field]map[uint64]int
	findings map[string]int
	worst    map[string]finding.Severity
}

func newStatsReference() *statsReference {
	return &statsReference{
		proto:    map[string]int{},
		values:   map[*field.Field]map[uint64]int{},
		findings: map[string]int{},
		worst:    map[string]finding.Severity{},
	}
}

func (ref *statsReference) add(r *dissect.Record) {
	in := map[string]bool{}
	for _, l := range r.Layers {
		in[l.Proto().Name] = true
	}
	for name := range in {
		ref.proto[name]++
	}
	for _, l := range r.Layers {
		vis := &topUints{got: map[*field.Field][]uint64{}}
		l.VisitFields(vis)
		for f, vs := range vis.got {
			if ref.values[f] == nil {
				ref.values[f] = map[uint64]int{}
			}
			for _, v := range vs {
				ref.values[f][v]++
			}
		}
	}
	for _, f := range r.Findings {
		ref.findings[f.Code]++
		ref.worst[f.Code] = max(ref.worst[f.Code], f.Severity)
	}
}

// check compares st, which counted the records ref did by the breakdown
// fields named, with ref; counted adds up, per field, the values compared.
func (ref *statsReference) check(t *testing.T, what string, st *Stats, names []string, counted map[string]int) {
	t.Helper()
	st.Flush()
	if fmt.Sprint(st.ByProto) != fmt.Sprint(ref.proto) {
		t.Fatalf("%s: frames by protocol %v, the layers' Proto give %v", what, st.ByProto, ref.proto)
	}
	for _, name := range names {
		f, _ := field.Lookup(name)
		got, exp := st.ByValue[f], ref.values[f]
		if len(got) != len(exp) {
			t.Fatalf("%s: %s by %v: %v, visiting finds %v", what, name, names, got, exp)
		}
		for v, n := range exp {
			if got[v] != n {
				t.Fatalf("%s: %s=%d counted %d times by %v, visiting finds %d", what, name, v, got[v], names, n)
			}
			counted[name] += n
		}
	}
	if fmt.Sprint(st.ByFinding) != fmt.Sprint(ref.findings) {
		t.Fatalf("%s: findings by code %v, the records hold %v", what, st.ByFinding, ref.findings)
	}
	worst := map[string]string{}
	for code, sv := range ref.worst {
		worst[code] = sv.String()
	}
	if fmt.Sprint(st.Severity) != fmt.Sprint(worst) {
		t.Fatalf("%s: worst severity by code %v, the records hold %v", what, st.Severity, worst)
	}
}

// TestStatsBreakdownCounts: stats counts every breakdown value as a plain
// visit of the layers finds it, whether a protocol has one breakdown field
// (oneCounter) or several (valueCounter), and for values below and above
// denseValues (UDP ports); and the frames that hold each protocol (Print
// finds a layer's protocol by its type).
func TestStatsBreakdownCounts(t *testing.T) {
	files := testcap.Glob(t, "pcaps/synthetic/*.pcap")
	files = append(files, realCaptures...)
	sets := [][]string{
		{"bth.opcode", "udp.dstport", "rpc.procedure", "cm.attribute_id"},                                      // one per protocol
		{"bth.opcode", "bth.destqp", "udp.dstport", "udp.srcport", "rpcrdma.msg_type", "rpcrdma.flow_control"}, // two per protocol
	}
	counted := map[string]int{}
	for _, file := range files {
		ref := newStatsReference()
		var stats []*Stats
		for _, set := range sets {
			st, err := NewStats(set)
			if err != nil {
				t.Fatal(err)
			}
			stats = append(stats, st)
		}
		testconn.EachRecord(t, file, func(r *dissect.Record) {
			ref.add(r)
			for _, st := range stats {
				if err := st.Print(r); err != nil {
					t.Fatal(err)
				}
			}
		})
		for i, st := range stats {
			ref.check(t, file, st, sets[i], counted)
		}
	}
	for _, name := range []string{"bth.opcode", "udp.dstport", "rpc.procedure", "cm.attribute_id", "bth.destqp", "rpcrdma.msg_type", "rpcrdma.flow_control"} {
		if counted[name] == 0 {
			t.Errorf("no %s value in any capture: the comparison proves nothing for it", name)
		}
	}
}

// TestStatsLayerSequences: Print counts a record by its sequence of layer
// types, kept from the first record of that sequence. Records whose
// sequences have the same length and last layer type but differ before it,
// that hold one protocol twice, that hold no layer, records of a kept
// sequence whose layers are other values of the same types or the same
// values changed since (the Dissector reuses its layer values), and their
// findings, are each counted by their own layers; and once the sequences
// kept hold maxLayers layers, the records of a sequence not kept are
// counted layer by layer, alike.
func TestStatsLayerSequences(t *testing.T) {
	bth := func(op ibcm.Opcode, qp uint32) *ibcm.BTH { return &ibcm.BTH{OpCode: op, DestQP: qp} }
	ack, write, ud, read := bth(0x11, 0x12), bth(0x0a, 0x3456), bth(0x64, 1), bth(0x0c, 0x3456)
	aeth, aeth2 := &ibcm.AETH{Syndrome: 0x1f, MSN: 7}, &ibcm.AETH{Syndrome: 0x60, MSN: 9}
	reth, deth := &ibcm.RETH{}, &ibcm.DETH{QKey: 0x80010000, SrcQP: 1}
	warn := []finding.Finding{{Code: "stats-test-a", Severity: finding.SeverityWarning}}
	errs := []finding.Finding{{Code: "stats-test-a", Severity: finding.SeverityError}, {Code: "stats-test-b", Severity: finding.SeverityInfo}}
	records := []dissect.Record{
		{Layers: []field.Layer{ack, aeth}, Findings: warn},
		{Layers: []field.Layer{write, reth, aeth}},
		{Layers: []field.Layer{ud, deth, aeth}}, // as the one before but for its middle layer
		{Layers: []field.Layer{write, read, aeth2}},
		{Layers: []field.Layer{read}},
		{Findings: errs},
		{Layers: []field.Layer{aeth2}},
		{Layers: []field.Layer{read, reth, aeth2}}, // the second's sequence, other values
		{Layers: []field.Layer{ud, deth, aeth}},
		{Layers: []field.Layer{ack, aeth2}},
		{Layers: []field.Layer{read, read, read}},
		{Layers: []field.Layer{ud}, Findings: warn},
		{Layers: []field.Layer{deth, ud, aeth}},
	}
	sets := [][]string{
		{"bth.opcode", "aeth.msn"}, // one per protocol; AETH is visited
		{"bth.destqp"},             // values above denseValues
		{"bth.opcode", "bth.destqp", "deth.q_key", "deth.srcqp"}, // two per protocol
		{"bth.padcnt"}, // one the BTH does not give (GetUint): visited
	}
	counted := map[string]int{}
	// Every sequence kept, none, and some (the first three: 2+3+3 layers).
	for _, limit := range []int{maxSeqLayers, 0, 8} {
		for _, set := range sets {
			st, err := NewStats(set)
			if err != nil {
				t.Fatal(err)
			}
			st.maxLayers = limit
			ref := newStatsReference()
			for round := range 3 {
				ack.OpCode, write.DestQP, read.PadCnt = ibcm.Opcode(0x11+round), uint32(0x3456+round), uint8(round)
				for i := range records {
					ref.add(&records[i])
					if err := st.Print(&records[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if limit == 8 && len(st.seqList) != 3 {
				t.Fatalf("%d sequences kept in %d layers, want 3", len(st.seqList), limit)
			}
			ref.check(t, fmt.Sprintf("sequences kept up to %d layers", limit), st, set, counted)
		}
	}
	for _, name := range []string{"bth.opcode", "aeth.msn", "bth.destqp", "deth.q_key", "deth.srcqp", "bth.padcnt"} {
		if counted[name] == 0 {
			t.Errorf("no %s value counted: the comparison proves nothing for it", name)
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
