package transport

// indexRetired indexes the retired summaries not indexed yet.
func (a *Analyzer) indexRetired() {
	for ; a.indexed < len(a.retired); a.indexed++ {
		s := &a.retired[a.indexed]
		if s.Frame != 0 {
			a.retiredIdx.Set(retiredKey{hostKeyOf(s.Host), s.QPN, s.Frame}, a.indexed)
		}
	}
}

// Release lets go of the retired summary of queue pair qpn at host seeded
// by the CM REP in frame (as Summary finds it) once its connection was
// written (the export writes each connection when it is over): the
// retired summaries then stay as few as the connections not written yet,
// instead of growing with the connections of the capture. Summary no
// longer finds it. Nothing happens when no such summary is retired (the
// queue pair is still followed, or was never seeded).
func (a *Analyzer) Release(host Host, qpn uint32, frame int) {
	if frame == 0 {
		return
	}
	a.indexRetired()
	k := retiredKey{hostKeyOf(host), qpn, frame}
	i, ok := a.retiredIdx.Get(k)
	if !ok {
		return
	}
	a.retiredIdx.Delete(k)
	a.retired[i] = QPSummary{} // Frame 0: released
	a.released++
	if a.released < minCompact || 2*a.released < len(a.retired) {
		return
	}
	// Compact: the positions change, so the index is built again (by the
	// next question), the cost spread over the releases before.
	n := 0
	for _, s := range a.retired {
		if s.Frame != 0 {
			a.retired[n] = s
			n++
		}
	}
	clear(a.retired[n:])
	a.retired, a.released, a.indexed = a.retired[:n], 0, 0
	a.retiredIdx.Reset()
}

// minCompact is the fewest released summaries worth compacting for.
const minCompact = 64
