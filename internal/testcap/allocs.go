package testcap

import "runtime"

// Allocs counts the heap allocations of rounds calls of fn, for tests that
// a warm path allocates nothing. Reading the memory statistics stops the
// world, and restarting it may start an OS thread: an allocation of the
// runtime's own, which a loaded machine makes likely. So a round that saw
// an allocation is measured again, up to tries calls in all, and the
// fewest of its tries counts: an allocation fn makes on every call still
// counts. calls is how many times fn ran (rounds to rounds·tries).
func Allocs(rounds, tries int, fn func()) (allocs uint64, calls int) {
	var before, after runtime.MemStats
	runtime.GC()
	for range rounds {
		m := ^uint64(0)
		for try := 0; try < tries && m != 0; try++ {
			runtime.ReadMemStats(&before)
			fn()
			runtime.ReadMemStats(&after)
			calls++
			m = min(m, after.Mallocs-before.Mallocs)
		}
		allocs += m
	}
	return allocs, calls
}
