package conn

// handOff is the state of Tracker.HandOff.
type handOff struct {
	on     bool
	linger int
	// ended lists the connections that ended and are not handed off yet,
	// in the order they ended (from first; the slice is compacted as it
	// is consumed).
	ended []*Connection
	first int
	// done is what Done returns (reused).
	done []*Connection
}

// handedState is where a connection is in the hand-off.
type handedState uint8

const (
	handedEnded handedState = iota + 1 // ended, waiting for linger more
	handedOver                         // returned by Done
)

// DefaultLinger is how many connections may end after one before it is
// handed off (HandOff).
const DefaultLinger = 64

// HandOff makes t give each connection up once it is over, for a consumer
// that writes connections as they end instead of reading Connections at
// the end (the export): the memory of the tracker then stays flat in the
// number of connections a capture holds, not only in its packets. A
// connection is over when it ended — disconnected (DREP; both FINs or an
// RST on iWARP), rejected (REJ, MPA Reject), a SIDR exchange answered —
// and linger more connections ended after it (0: DefaultLinger): until
// then it is still followed, so a DREP sent again, a late Send or a
// transport finding still reach it, as they do without the hand-off. Done
// returns the connections given up, which Connections no longer lists and
// no later message reaches: a message of one (a retransmission of its
// DREQ after linger more connections ended) is taken as that of a
// connection never seen. Connections still open, timed out or evicted
// stay to the end, as without the hand-off. Call HandOff before the first
// event.
func (t *Tracker) HandOff(linger int) {
	if linger <= 0 {
		linger = DefaultLinger
	}
	t.handOff = handOff{on: true, linger: linger}
}

// ended queues c, which has just ended, for the hand-off.
func (t *Tracker) ended(c *Connection) {
	h := &t.handOff
	if !h.on || c.handed != 0 {
		return
	}
	c.handed = handedEnded
	h.ended = append(h.ended, c)
}

// Done returns the connections over since the last call (HandOff), in the
// order they ended, and forgets them: Connections no longer lists them.
// The slice is valid until the next call. Call it between events (after
// Record), not from within one.
func (t *Tracker) Done() []*Connection {
	h := &t.handOff
	h.done = h.done[:0]
	if !h.on || t.finished {
		return h.done
	}
	for len(h.ended)-h.first > h.linger {
		c := h.ended[h.first]
		h.ended[h.first] = nil
		h.first++
		if c.active {
			// The reconnection check compares a new connection with
			// the last of the same peers: it stays known for that.
			k := peersOf(c)
			last := t.last[k] == c
			t.forget(c)
			if last {
				t.last[k] = c
			}
		}
		// The connection's own earlier one is of no more use: without
		// this link, every connection between the same peers would stay
		// reachable from the last.
		c.prev = nil
		c.handed = handedOver
		h.done = append(h.done, c)
	}
	if h.first > 0 && h.first >= len(h.ended)/2 {
		n := copy(h.ended, h.ended[h.first:])
		clear(h.ended[n:])
		h.ended, h.first = h.ended[:n], 0
	}
	if len(h.done) > 0 {
		t.conns = dropHanded(t.conns)
		t.active = t.active[:compactActive(t.active, t.head)]
	}
	return h.done
}

// dropHanded removes the connections handed off from conns, which keeps
// its order.
func dropHanded(conns []*Connection) []*Connection {
	n := 0
	for _, c := range conns {
		if c.handed != handedOver {
			conns[n] = c
			n++
		}
	}
	clear(conns[n:])
	return conns[:n]
}

// compactActive removes the connections no longer followed from
// active[head:] (evictOldest and the time-outs skip them anyway) and
// returns the new length.
func compactActive(active []*Connection, head int) int {
	n := head
	for _, c := range active[head:] {
		if c != nil && c.active {
			active[n] = c
			n++
		}
	}
	clear(active[n:])
	return n
}
