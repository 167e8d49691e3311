package transport

import (
	"runtime"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
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
	var before, after runtime.MemStats
	runtime.GC()
	var allocs uint64
	for round := 0; round < 5; round++ {
		var m uint64
		// A round that saw the runtime allocate for itself (an OS thread
		// started when the world restarts) is measured again.
		for try := 0; try < 3; try++ {
			runtime.ReadMemStats(&before)
			replay()
			runtime.ReadMemStats(&after)
			if m = after.Mallocs - before.Mallocs; m == 0 {
				break
			}
		}
		allocs += m
	}
	if allocs != 0 {
		t.Errorf("%d allocations in 5 replays of %d frames", allocs, len(frames))
	}
	if len(a.qps) != slots || len(a.free) != rings || len(a.retired) != 0 || a.Evicted != 0 {
		t.Errorf("after the replays: %d slots (was %d), %d rings free (was %d), %d retired, %d evicted",
			len(a.qps), slots, len(a.free), rings, len(a.retired), a.Evicted)
	}
}
