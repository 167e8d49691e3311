package transport

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// TestSteadyState: a capture of connection after connection (the real rxe
// NFSv4.2 mount, REQ to DREP, replayed with the same QPNs and comm IDs as
// a long capture would reuse them) keeps the analysis' memory where the
// first connection left it: each DREP lets its queue pairs go, the next
// REP takes their slots and rings again, and nothing is allocated.
func TestSteadyState(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := dissect.New(dissect.Options{})
	a := New(Config{ForgetEnded: true})
	n := 0
	replay := func() {
		for i := range frames {
			n++
			frames[i].Number = n
			a.Record(d.Dissect(&frames[i]))
		}
	}
	replay()
	replay()
	slots, rings, indexed := len(a.qps), len(a.free), a.idx.Len()
	if indexed != 0 || len(a.freeSlots) != slots || rings != slots {
		t.Fatalf("after DREP: %d slots, %d free, %d rings free, %d indexed; want every queue pair let go", slots, len(a.freeSlots), rings, indexed)
	}
	allocs, _ := testcap.Allocs(5, 10, replay)
	if allocs != 0 {
		t.Errorf("%d allocations in 5 replays of %d frames", allocs, len(frames))
	}
	if len(a.qps) != slots || len(a.free) != rings || len(a.retired) != 0 || a.Evicted != 0 {
		t.Errorf("after the replays: %d slots (was %d), %d rings free (was %d), %d retired, %d evicted",
			len(a.qps), slots, len(a.free), rings, len(a.retired), a.Evicted)
	}
}

// TestRetiredSummaries: with summaries kept, each connection's queue pairs
// are found after their DREP by the REP that seeded them, the last
// connection's as well as the first's (the replays reuse the QPNs).
func TestRetiredSummaries(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := dissect.New(dissect.Options{})
	a := New(Config{})
	n := 0
	var reps []int
	for range 4 {
		for i := range frames {
			n++
			frames[i].Number = n
			rec := d.Dissect(&frames[i])
			if cm, ok := rec.Layer("cm").(*ibcm.CM); ok && cm.AttributeID == ibcm.AttrREP {
				reps = append(reps, n)
			}
			a.Record(rec)
		}
	}
	if len(reps) != 4 || len(a.retired) != 8 {
		t.Fatalf("%d REPs, %d retired", len(reps), len(a.retired))
	}
	for _, s := range a.retired[:2] {
		for _, rep := range reps {
			got, ok := a.Summary(s.Host, s.QPN, rep)
			if !ok || got.Frame != rep || got.Packets != s.Packets {
				t.Errorf("QP %#x REP %d: %+v %v", s.QPN, rep, got, ok)
			}
		}
		if _, ok := a.Summary(s.Host, s.QPN, reps[3]+1); ok {
			t.Errorf("QP %#x found for a frame that is no REP", s.QPN)
		}
	}
}
