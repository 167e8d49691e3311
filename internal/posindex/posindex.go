// Package posindex is a small hash index from keys to positions in a
// table the caller keeps (a ring of remembered RPC calls, a list of calls
// awaiting their reply): open addressing with linear probing, at most half
// full, deletion by shifting the following entries back (no tombstones).
// It allocates only when it grows, so steady traffic that adds and removes
// as many keys as it holds allocates nothing — where a Go map's assign,
// lookup and delete per call and reply were a visible share of the
// per-packet cost.
package posindex

// Key is what an Index is keyed by: comparable, with a 32-bit hash whose
// low bits spread well (the home slot is hash & (len-1)).
type Key interface {
	comparable
	Hash() uint32
}

// Index maps keys to non-negative positions. The zero Index is empty and
// ready.
type Index[K Key] struct {
	slots []slot[K] // len a power of two, or 0
	n     int
}

type slot[K Key] struct {
	key K
	pos int32 // position + 1; 0: empty
}

// Len is the number of keys held.
func (x *Index[K]) Len() int { return x.n }

// Get returns k's position.
func (x *Index[K]) Get(k K) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := len(x.slots) - 1
	for i := int(k.Hash()) & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.pos == 0 {
			return 0, false
		}
		if s.key == k {
			return int(s.pos - 1), true
		}
	}
}

// Set makes pos k's position (adding k, or moving it).
func (x *Index[K]) Set(k K, pos int) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	for i := int(k.Hash()) & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.pos == 0 {
			s.key, s.pos = k, int32(pos+1)
			x.n++
			return
		}
		if s.key == k {
			s.pos = int32(pos + 1)
			return
		}
	}
}

// Delete removes k (nothing when it is not held).
func (x *Index[K]) Delete(k K) {
	if x.n == 0 {
		return
	}
	mask := len(x.slots) - 1
	i := int(k.Hash()) & mask
	for x.slots[i].pos == 0 || x.slots[i].key != k {
		if x.slots[i].pos == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Shift back the entries of the probe run after i that may sit at i:
	// those whose home slot is not cyclically within (i, j].
	for j := (i + 1) & mask; x.slots[j].pos != 0; j = (j + 1) & mask {
		home := int(x.slots[j].key.Hash()) & mask
		if (j-home)&mask >= (j-i)&mask {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = slot[K]{}
	x.n--
}

// Reset removes every key, keeping the memory.
func (x *Index[K]) Reset() {
	clear(x.slots)
	x.n = 0
}

func (x *Index[K]) grow() {
	old := x.slots
	x.slots = make([]slot[K], max(16, 2*len(old)))
	mask := len(x.slots) - 1
	for _, s := range old {
		if s.pos != 0 {
			i := int(s.key.Hash()) & mask
			for x.slots[i].pos != 0 {
				i = (i + 1) & mask
			}
			x.slots[i] = s
		}
	}
}

// Table maps keys to values of V kept in a slice (the index gives their
// positions; the positions of deleted keys are reused), for small values
// looked up per packet: like a Go map, without hashing the key's bytes
// generically or allocating once it has held as many keys as it holds.
// The zero Table is empty and ready.
type Table[K Key, V any] struct {
	idx  Index[K]
	vals []V
	free []int32
}

// Len is the number of keys held.
func (t *Table[K, V]) Len() int { return t.idx.n }

// Get returns k's value, to read or change in place until the next Put or
// Delete; nil when k is not held.
func (t *Table[K, V]) Get(k K) *V {
	if i, ok := t.idx.Get(k); ok {
		return &t.vals[i]
	}
	return nil
}

// Put makes v k's value.
func (t *Table[K, V]) Put(k K, v V) {
	if i, ok := t.idx.Get(k); ok {
		t.vals[i] = v
		return
	}
	var pos int32
	if n := len(t.free); n > 0 {
		pos, t.free = t.free[n-1], t.free[:n-1]
		t.vals[pos] = v
	} else {
		pos = int32(len(t.vals))
		t.vals = append(t.vals, v)
	}
	t.idx.Set(k, int(pos))
}

// Delete removes k (nothing when it is not held).
func (t *Table[K, V]) Delete(k K) {
	i, ok := t.idx.Get(k)
	if !ok {
		return
	}
	var zero V
	t.vals[i] = zero
	t.free = append(t.free, int32(i))
	t.idx.Delete(k)
}

// DeleteFunc removes the keys for which del, told each key and its value,
// returns true.
func (t *Table[K, V]) DeleteFunc(del func(K, *V) bool) {
	var keys []K
	for _, s := range t.idx.slots {
		if s.pos != 0 && del(s.key, &t.vals[s.pos-1]) {
			keys = append(keys, s.key)
		}
	}
	for _, k := range keys {
		t.Delete(k)
	}
}

// Reset removes every key, keeping the memory.
func (t *Table[K, V]) Reset() {
	t.idx.Reset()
	clear(t.vals)
	t.vals, t.free = t.vals[:0], t.free[:0]
}
