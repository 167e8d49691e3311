package conn

import (
	"math/rand"
	"slices"
	"testing"
)

// refPending is the plain model of pendingXIDs: a map and the arrival
// order of the calls not yet answered, the oldest forgotten beyond the
// limit.
type refPending struct {
	handles map[uint32][]uint32
	order   []uint32
}

func (p *refPending) put(xid uint32, hs []uint32, limit int) {
	if _, ok := p.handles[xid]; !ok {
		p.order = append(p.order, xid)
	}
	p.handles[xid] = slices.Clone(hs)
	for len(p.handles) > limit {
		delete(p.handles, p.order[0])
		p.order = p.order[1:]
	}
}

func (p *refPending) done(xid uint32) {
	delete(p.handles, xid)
	if i := slices.Index(p.order, xid); i >= 0 {
		p.order = slices.Delete(p.order, i, i+1)
	}
}

// TestPendingXIDs drives pendingXIDs and the model with the same random
// calls and replies (few xids, so calls repeat and replies find them).
func TestPendingXIDs(t *testing.T) {
	for _, limit := range []int{1, 3, 40, 1024} {
		rng := rand.New(rand.NewSource(int64(limit)))
		var p pendingXIDs
		ref := refPending{handles: map[uint32][]uint32{}}
		for i := 0; i < 50000; i++ {
			xid := uint32(rng.Intn(3 * limit))
			if rng.Intn(8) == 0 {
				xid = rng.Uint32()
			}
			switch rng.Intn(3) {
			case 0, 1:
				hs := make([]uint32, rng.Intn(4))
				for j := range hs {
					hs[j] = rng.Uint32()
				}
				p.put(xid, hs, limit)
				ref.put(xid, hs, limit)
			default:
				p.done(xid)
				ref.done(xid)
			}
			if rng.Intn(5000) == 0 {
				p.reset()
				ref = refPending{handles: map[uint32][]uint32{}}
			}
			if p.live != len(ref.handles) || p.idx.Len() != p.live {
				t.Fatalf("limit %d step %d: %d live (%d indexed), model %d", limit, i, p.live, p.idx.Len(), len(ref.handles))
			}
			probe := uint32(rng.Intn(3 * limit))
			got, ok := p.get(probe)
			want, wok := ref.handles[probe]
			if ok != wok || !slices.Equal(got, want) {
				t.Fatalf("limit %d step %d: xid %d: %v %v, model %v %v", limit, i, probe, got, ok, want, wok)
			}
		}
		if cap(p.calls) > 4*limit+16 {
			t.Errorf("limit %d: %d call entries kept", limit, cap(p.calls))
		}
	}
}

// TestPendingXIDsNoAllocs: once its storage has grown, a connection's
// call-and-reply traffic allocates nothing (no per-call map or slice).
func TestPendingXIDsNoAllocs(t *testing.T) {
	var p pendingXIDs
	hs := []uint32{1, 2, 3}
	xid := uint32(0)
	round := func() {
		for i := 0; i < 8; i++ {
			p.put(xid+uint32(i), hs, 1024)
		}
		// One call in eight is never answered, so compaction runs too.
		for i := 1; i < 8; i++ {
			p.done(xid + uint32(i))
		}
		xid += 8
	}
	for i := 0; i < 1000; i++ {
		round()
	}
	if n := testing.AllocsPerRun(1000, round); n != 0 {
		t.Errorf("%.1f allocations per round", n)
	}
}
