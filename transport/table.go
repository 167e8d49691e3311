package transport

import (
	"strconv"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// cacheMask sizes Analyzer.cache, a direct-mapped cache in front of the
// index: the queue pairs of a busy capture interleave, so the last slot
// alone misses most of the time.
//
// An entry names the slot of the queue pair whose key slot() puts there
// last, and, when that key has a tag (qpKey.tag), the tag: Record finds
// the common packet's queue pair by comparing one word, where lookup
// compares the key in the slot. So that a tag never names a slot that
// holds another queue pair, drop clears it.
const (
	cacheBits = 10
	cacheMask = 1<<cacheBits - 1
)

// lookup returns the slot of queue pair k, adding it (and forgetting one
// not used lately when the table is full: a clock, the cheap stand-in for
// least recently used) when it is new. (Record looks in the cache itself
// for the common packet.)
func (a *Analyzer) lookup(k qpKey, rec *dissect.Record) int32 {
	c := &a.cache[k.slot()]
	if i := c.slot; int(i) < len(a.qps) && a.qps[i].key == k {
		a.qps[i].used = true
		return int32(i)
	}
	return a.find(k, c, rec)
}

// cacheEntry is an entry of Analyzer.cache.
type cacheEntry struct {
	tag  uint64
	slot uint32
}

// find is lookup past its cache: the index, else a new slot; c is k's
// cache entry.
//
//go:noinline
func (a *Analyzer) find(k qpKey, c *cacheEntry, rec *dissect.Record) int32 {
	if i, ok := a.idx.Get(k); ok {
		a.qps[i].used = true
		*c = cacheEntry{k.tag(), uint32(i)}
		return int32(i)
	}
	var n int32
	if k := len(a.freeSlots); k > 0 {
		n = a.freeSlots[k-1]
		a.freeSlots = a.freeSlots[:k-1]
	} else if len(a.qps) < a.cfg.MaxQPs {
		n = int32(len(a.qps))
		a.qps = append(a.qps, qp{})
	} else {
		n = a.victim()
		a.evict(n, rec)
	}
	q := &a.qps[n]
	*q = qp{key: k, used: true, pair: -1}
	q.sum.Host, q.sum.QPN = k.host.Host(), k.qpn
	a.idx.Set(k, int(n))
	*c = cacheEntry{k.tag(), uint32(n)}
	return n
}

// victim moves the clock hand to a slot not used since it last passed
// (clearing the marks it passes) and returns it.
func (a *Analyzer) victim() int32 {
	for {
		n := a.hand
		a.hand = (a.hand + 1) % int32(len(a.qps))
		if q := &a.qps[n]; q.used {
			q.used = false
		} else {
			return n
		}
	}
}

// evict forgets the queue pair in slot n to make room for another.
func (a *Analyzer) evict(n int32, rec *dissect.Record) {
	q := &a.qps[n]
	a.Evicted++
	if a.Evicted == 1 {
		a.add(rec, CodeTableFull, finding.SeverityInfo, "",
			"more than "+strconv.Itoa(a.cfg.MaxQPs)+" queue pairs active: one not used lately ("+hexQP(q.key.qpn)+" at "+q.key.host.String()+
				") and others after it are forgotten; their later packets start a new sequence")
	}
	a.drop(n)
}

// drop forgets the queue pair in slot n (its summary is retired when a CM
// exchange seeded it) and keeps its ring for reuse; the slot is marked
// empty by a QPN no packet has.
func (a *Analyzer) drop(n int32) {
	q := &a.qps[n]
	a.retire(q)
	if q.pair >= 0 {
		a.qps[q.pair].pair = -1
	}
	if q.ring != nil {
		a.free = append(a.free, q.ring)
	}
	a.idx.Delete(q.key)
	if c := &a.cache[q.key.slot()]; c.slot == uint32(n) {
		c.tag = 0
	}
	*q = qp{key: qpKey{qpn: emptyQPN}, pair: -1}
}

// emptyQPN marks a slot that holds no queue pair (QPNs are 24 bits).
const emptyQPN = 1 << 31

// newRing returns a cleared request ring, reused when one is free.
func (a *Analyzer) newRing() *[ringSize]reqSlot {
	if n := len(a.free); n > 0 {
		r := a.free[n-1]
		a.free = a.free[:n-1]
		clear(r[:])
		return r
	}
	return new([ringSize]reqSlot)
}

// hexQP renders a QPN as 0x%06x.
func hexQP(q uint32) string {
	const digits = "0123456789abcdef"
	b := []byte{'0', 'x', 0, 0, 0, 0, 0, 0}
	for i := 7; i >= 2; i-- {
		b[i] = digits[q&0xf]
		q >>= 4
	}
	return string(b)
}

// psnRange renders "PSN a" or "PSNs a–b".
func psnRange(from, to uint32) string {
	if from == to {
		return "PSN " + itoa(uint64(from))
	}
	return "PSNs " + itoa(uint64(from)) + "–" + itoa(uint64(to))
}

// durationText renders a delay in the unit that suits it.
func durationText(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) + " µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + " s"
}
