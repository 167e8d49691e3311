package posindex

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// key hashes to few distinct home slots on purpose (long probe runs that
// wrap around the table: the backward-shift deletion's hard cases).
type key uint32

func (k key) Hash() uint32 { return uint32(k) % 7 * 0x9e3779b1 }

// run applies ops to an Index and to a map and fails at the first
// difference: op%4 0,1 set, 2 delete, 3 reset (rare).
func run(t *testing.T, ops []byte) {
	t.Helper()
	var x Index[key]
	m := map[key]int{}
	for i := 0; i+1 < len(ops); i += 2 {
		k := key(ops[i+1] % 64)
		switch ops[i] % 16 {
		case 15:
			x.Reset()
			clear(m)
		case 10, 11, 12, 13, 14:
			x.Delete(k)
			delete(m, k)
		default:
			x.Set(k, i)
			m[k] = i
		}
		if x.Len() != len(m) {
			t.Fatalf("op %d: Len %d, map %d", i/2, x.Len(), len(m))
		}
		for k := key(0); k < 64; k++ {
			p, ok := x.Get(k)
			q, mok := m[k]
			if ok != mok || p != q {
				t.Fatalf("op %d: Get(%d) = %d %v, map %d %v", i/2, k, p, ok, q, mok)
			}
		}
	}
}

// TestIndexMatchesMap: random sets, deletes and resets give what a Go map
// gives, with keys crowding into few home slots.
func TestIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		ops := make([]byte, 2*rng.IntN(400))
		for i := range ops {
			ops[i] = byte(rng.Uint32())
		}
		run(t, ops)
	}
}

// TestIndexNoAllocs: once grown, setting and deleting as many keys as it
// holds allocates nothing.
func TestIndexNoAllocs(t *testing.T) {
	var x Index[key]
	for k := range key(100) {
		x.Set(k, int(k))
	}
	n := testing.AllocsPerRun(100, func() {
		for k := range key(100) {
			x.Delete(k)
		}
		for k := range key(100) {
			x.Set(k, int(k))
		}
	})
	if n != 0 {
		t.Errorf("%.1f allocations per round", n)
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 1, 0, 8, 0, 15, 10, 1, 0, 22, 10, 8})
	f.Fuzz(func(t *testing.T, ops []byte) { run(t, ops) })
}

// TestTableMatchesMap: random puts, in-place changes, deletes, DeleteFunc
// and resets of a Table give what a Go map gives; once grown, a round of
// deletes and puts allocates nothing.
func TestTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var x Table[key, [2]int]
	m := map[key][2]int{}
	for i := range 20000 {
		k := key(rng.IntN(64))
		switch op := rng.IntN(64); {
		case op == 0:
			x.Reset()
			clear(m)
		case op < 3:
			// The keys of values divisible by 3 (a key and value told
			// apart: the value's key is not 0).
			del := func(k key, v [2]int) bool { return k != 0 && (v[0]+v[1])%3 == 0 }
			x.DeleteFunc(func(k key, v *[2]int) bool { return del(k, *v) })
			maps.DeleteFunc(m, del)
		case op < 20:
			x.Delete(k)
			delete(m, k)
		case op < 30:
			if v := x.Get(k); v != nil {
				v[1]++
				w := m[k]
				w[1]++
				m[k] = w
			}
		default:
			x.Put(k, [2]int{i, 0})
			m[k] = [2]int{i, 0}
		}
		if x.Len() != len(m) {
			t.Fatalf("op %d: Len %d, map %d", i, x.Len(), len(m))
		}
		for k := key(0); k < 64; k++ {
			v := x.Get(k)
			w, ok := m[k]
			if (v != nil) != ok || v != nil && *v != w {
				t.Fatalf("op %d: Get(%d) = %v, map %v %v", i, k, v, w, ok)
			}
		}
	}
	n := testing.AllocsPerRun(100, func() {
		for k := range key(64) {
			x.Delete(k)
		}
		for k := range key(64) {
			x.Put(k, [2]int{int(k), 0})
		}
	})
	if n != 0 {
		t.Errorf("%.1f allocations per round", n)
	}
}
