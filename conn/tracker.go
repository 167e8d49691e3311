package conn

import (
	"fmt"
	"math"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/defaults"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Config bounds the tracker's memory and sets how private data is read.
// The zero value means the defaults.
type Config struct {
	// MaxConnections caps the connections followed at once; when a new one
	// would exceed it the oldest is evicted (it stays in the results with
	// the finding conn.table-full). Default DefaultMaxConnections.
	MaxConnections int
	// Timeout is how long, in capture time, a connection may wait in
	// requested, replied or disconnecting before it is marked timed out.
	// Default DefaultTimeout.
	Timeout time.Duration
	// MaxPendingCalls caps, per connection, the RPC calls remembered for
	// the invalidated-STag check (oldest forgotten first). Default
	// DefaultMaxPendingCalls.
	MaxPendingCalls int
	// MaxFindingsPerCode caps the findings of one code and severity listed
	// in full on one connection (Connection.Findings); the rest are only
	// counted (Connection.FindingCounts), so a connection's memory does not
	// grow with its traffic. Default DefaultMaxFindingsPerCode.
	MaxFindingsPerCode int
	// MaxSteps caps the ladder of one connection (retransmitted MADs can
	// repeat without end); the rest are counted in Connection.StepsDropped.
	// Default DefaultMaxSteps.
	MaxSteps int
	// Mode is how a receiver reads the private data for the negotiation
	// (default pvtdata.ModeRFC8797).
	Mode pvtdata.Mode
}

// Defaults for Config.
const (
	DefaultMaxConnections     = 65536
	DefaultTimeout            = 60 * time.Second
	DefaultMaxPendingCalls    = 1024
	DefaultMaxFindingsPerCode = 5
	DefaultMaxSteps           = 256
)

func (c Config) withDefaults() Config {
	return defaults.Fill(c, Config{MaxConnections: DefaultMaxConnections, Timeout: DefaultTimeout,
		MaxPendingCalls: DefaultMaxPendingCalls, MaxFindingsPerCode: DefaultMaxFindingsPerCode, MaxSteps: DefaultMaxSteps})
}

// keyKind says what a connKey identifies.
type keyKind uint8

const (
	keyComm   keyKind = iota + 1 // a CM communication ID at a host
	keyQP                        // a QP at a host (where Sends are delivered)
	keySIDR                      // a SIDR request ID at the requesting host
	keyStream                    // a TCP stream (iWARP), ends ordered
)

// wireKey identifies a connection by what the wire shows: a host (a
// node: hostKey; a stream's first end) and an ID of it, or the two ends of
// a stream.
type wireKey struct {
	kind keyKind
	host Peer
	id   uint32
	peer Peer
}

// connKey is a wireKey as the index holds it: the peers by their numbers
// in Tracker.peerIDs (the index outlives the connections' traffic, and a
// Peer is 32 bytes).
type connKey struct {
	kind keyKind
	host uint32
	id   uint32
	peer uint32
}

// hostKey is the part of a peer that names a node: the LID on native IB,
// else the address.
func hostKey(p Peer) Peer {
	if p.LID != 0 {
		return Peer{LID: p.LID}
	}
	return Peer{Addr: p.Addr}
}

func streamKey(a, b Peer) wireKey {
	if peerLess(b, a) {
		a, b = b, a
	}
	return wireKey{kind: keyStream, host: a, peer: b}
}

func peerLess(a, b Peer) bool {
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c < 0
	}
	if a.LID != b.LID {
		return a.LID < b.LID
	}
	return a.Port < b.Port
}

// peersKey identifies "the same peers and service" across reconnections.
type peersKey struct {
	transport      Transport
	client, server Peer
	service        uint64
}

// Tracker follows connections through a capture. Feed it events (or
// Records) in capture order, then read Connections and Findings. It is not
// safe for concurrent use.
type Tracker struct {
	cfg   Config
	conns []*Connection
	index map[connKey]*Connection
	// active holds the followed connections in creation order; head is the
	// first that may still be active.
	active  []*Connection
	head    int
	nActive int
	last    map[peersKey]*Connection
	// forgotten counts the connections forgotten since index was last
	// purged of their keys.
	forgotten int
	// peerIDs numbers the peers of the index's keys from 1 (the zero Peer
	// is 0).
	peerIDs map[Peer]uint32
	// recentPeers are the last two peers peerID found, the latest first.
	recentPeers [2]recentPeer
	// now is the latest capture time seen, lastSweep when the timeouts were
	// last looked at (ns, capNanos); swept once lastSweep is set.
	now       int64
	lastSweep int64
	swept     bool
	orphans   []finding.Finding
	evictions int
	// Unmatched counts Sends that matched no connection.
	Unmatched int
	finished  bool
	// epoch counts the changes of index, so a connection remembered from
	// an earlier lookup (sendAcc.conn) is known to be still the answer.
	epoch uint64
	// sends are the Sends in progress (Record), one accumulator per QP
	// (IB) or direction of a TCP stream (iWARP); accCache finds recent ones
	// without hashing the key.
	sends    map[sendKey]*sendAcc
	accCache [accCacheSize]accCacheEntry
	freeAccs []*sendAcc
	// pendingPool keeps the call tables of closed connections for new
	// ones.
	pendingPool []*pendingXIDs
	// stepped is the connection the last message was a step of.
	stepped *Connection
	// decoded is the decode of the last private data read (a 600-byte
	// value: kept here, not made per message).
	decoded pvtdata.PrivateData
	// shared holds private data fields by content, each kept once for the
	// connections that carried it (copyBytes).
	shared map[string][]byte
	// claimed is ClaimedFrame's answer.
	claimed int
	// created counts the connections made (the last one's ID).
	created int
	// cutTIDs finds the connections whose REQ the capture's snap length
	// cut (cutREQ; nil until one is seen).
	cutTIDs map[cutKey]*Connection
	// handOff is HandOff's state (off unless asked for).
	handOff handOff
}

// New returns a tracker with cfg (zero fields take the defaults).
func New(cfg Config) *Tracker {
	return &Tracker{
		cfg:     cfg.withDefaults(),
		index:   map[connKey]*Connection{},
		last:    map[peersKey]*Connection{},
		peerIDs: map[Peer]uint32{},
		now:     math.MinInt64,
	}
}

// Config returns the configuration in use, defaults applied.
func (t *Tracker) Config() Config { return t.cfg }

// Connections returns every connection seen, in order of first message.
func (t *Tracker) Connections() []*Connection { return t.conns }

// Findings returns what the tracker noticed that belongs to no connection
// (a DREP or MRA for a connection never seen, …).
func (t *Tracker) Findings() []finding.Finding { return t.orphans }

// AllFindings returns the connections' findings (those listed: see
// Connection.FindingCounts for all) and the tracker's own.
func (t *Tracker) AllFindings() []finding.Finding {
	var out []finding.Finding
	for _, c := range t.conns {
		out = append(out, c.Findings()...)
	}
	return append(out, t.orphans...)
}

// Finish ends the capture. Call it once after the last event; further
// events are ignored.
func (t *Tracker) Finish() {
	t.finished = true
	for _, c := range t.conns {
		switch c.State {
		case StateRequested, StateDisconnecting:
			c.CaptureEnded = true
		case StateReplied:
			// A SIDR exchange ends with its reply.
			c.CaptureEnded = c.Kind != KindSIDR
		}
	}
}

// capNanos is a capture time in nanoseconds since the Unix epoch, clamped
// to about ±145 years around 1970 so that the difference of two cannot
// overflow (the tracker compares times per packet: integers are cheaper
// than time.Time arithmetic).
func capNanos(at time.Time) int64 {
	const lim = 4_600_000_000 // seconds
	s := at.Unix()
	switch {
	case s > lim:
		s = lim
	case s < -lim:
		s = -lim
	}
	return s*1e9 + int64(at.Nanosecond())
}

// begin starts an event at capture time at: it reports false once Finish
// has run (the tracker takes no more events), else it advances time. It is
// small enough to inline: an event costs what the check written out did.
func (t *Tracker) begin(at time.Time) bool {
	if t.finished {
		return false
	}
	t.advance(at)
	return true
}

// advance moves capture time forward and times out stalled connections.
func (t *Tracker) advance(at time.Time) {
	if now := capNanos(at); now > t.now {
		t.now = now
	}
	if !t.swept {
		t.lastSweep, t.swept = t.now, true
		return
	}
	step := max(int64(t.cfg.Timeout/8), int64(time.Millisecond))
	if t.now-t.lastSweep < step {
		return
	}
	t.lastSweep = t.now
	for _, c := range t.active[t.head:] {
		if c == nil || !c.active {
			continue
		}
		switch c.State {
		case StateRequested, StateReplied, StateDisconnecting:
			if t.now-c.lastActive > int64(t.cfg.Timeout) {
				c.State = StateTimedOut
				t.finding(c, finding.Finding{
					Code: CodeTimedOut, Severity: finding.SeverityWarning, Layer: "conn", Offset: -1,
					Frame:   lastFrame(c),
					Section: "IBTA vol 1 §12.9",
					Message: fmt.Sprintf("no answer within %s of capture time after frame %d; the connection is taken as timed out", t.cfg.Timeout, lastFrame(c)),
				})
			}
		}
	}
}

func lastFrame(c *Connection) int {
	if len(c.steps) == 0 {
		return 0
	}
	return c.steps[len(c.steps)-1].frame
}

// newConn creates a connection and makes room for it.
func (t *Tracker) newConn(kind Kind, tr Transport, frame int, at time.Time) *Connection {
	t.created++
	c := &Connection{ID: t.created, Kind: kind, Transport: tr, FirstTime: at, LastTime: at,
		lastActive: capNanos(at), active: true}
	t.conns = append(t.conns, c)
	t.active = append(t.active, c)
	t.nActive++
	for t.nActive > t.cfg.MaxConnections {
		t.evictOldest(c, frame)
	}
	// Compact the active queue now and then so it does not grow without
	// bound.
	if t.head > 1024 && t.head > len(t.active)/2 {
		n := copy(t.active, t.active[t.head:])
		clear(t.active[n:])
		t.active = t.active[:n]
		t.head = 0
	}
	return c
}

func (t *Tracker) evictOldest(keep *Connection, frame int) {
	for t.head < len(t.active) {
		c := t.active[t.head]
		t.active[t.head] = nil
		t.head++
		if c == nil || !c.active || c == keep {
			continue
		}
		t.forget(c)
		c.Evicted = true
		t.evictions++
		t.finding(c, finding.Finding{
			Code: CodeTableFull, Severity: finding.SeverityWarning, Layer: "conn", Offset: -1, Frame: frame,
			Message: fmt.Sprintf("the connection table is full (%d connections): this, the oldest, is no longer followed from frame %d on; later messages and Sends of it are not matched (raise the limit to follow more)",
				t.cfg.MaxConnections, frame),
		})
		return
	}
}

// forget drops c from the indexes. Its keys stay in index until a lookup
// meets them, a new connection takes them over, or a purge (lookup and
// bind treat a key of a connection no longer followed as unbound): a
// connection does not keep the list of its keys.
func (t *Tracker) forget(c *Connection) {
	if k := peersOf(c); t.last[k] == c {
		delete(t.last, k)
	}
	t.closed(c)
	c.active = false
	t.nActive--
	t.epoch++
	// Purge the keys of forgotten connections: at once from a small
	// index, else once they may be a quarter of it (a connection has two
	// to four keys), the cost of a purge spread over the evictions before
	// it.
	t.forgotten++
	if len(t.index) <= smallIndex || 16*t.forgotten >= len(t.index) {
		for k, c := range t.index {
			if !c.active {
				delete(t.index, k)
			}
		}
		t.forgotten = 0
	}
}

// smallIndex is the size up to which the index is purged of a forgotten
// connection's keys at once.
const smallIndex = 1024

// peerID returns p's number, numbering it when add is set; false when p
// has none.
func (t *Tracker) peerID(p Peer, add bool) (uint32, bool) {
	if p.IsZero() {
		return 0, true
	}
	// A connection's messages name its two hosts over and over: the last
	// two numbered are found without hashing.
	for i := range t.recentPeers {
		if r := &t.recentPeers[i]; r.id != 0 && r.p == p {
			return r.id, true
		}
	}
	id, ok := t.peerIDs[p]
	if !ok && add {
		id, ok = uint32(len(t.peerIDs)+1), true
		t.peerIDs[p] = id
	}
	if ok {
		t.recentPeers[1], t.recentPeers[0] = t.recentPeers[0], recentPeer{p, id}
	}
	return id, ok
}

// recentPeer is a peer and its number in Tracker.peerIDs.
type recentPeer struct {
	p  Peer
	id uint32
}

// key returns the index key of w, numbering its peers when add is set;
// false when a peer has no number (nothing is bound to w).
func (t *Tracker) key(w wireKey, add bool) (connKey, bool) {
	host, ok := t.peerID(w.host, add)
	if !ok {
		return connKey{}, false
	}
	peer, ok := t.peerID(w.peer, add)
	return connKey{kind: w.kind, host: host, id: w.id, peer: peer}, ok
}

func (t *Tracker) bind(c *Connection, w wireKey) {
	if !c.active {
		return
	}
	k, _ := t.key(w, true)
	if old, ok := t.index[k]; ok && old == c {
		return
	}
	t.index[k] = c
	t.epoch++
}

func (t *Tracker) lookup(w wireKey) *Connection {
	k, ok := t.key(w, false)
	if !ok {
		return nil
	}
	c := t.index[k]
	if c != nil && !c.active {
		delete(t.index, k)
		return nil
	}
	return c
}

// finding counts f on c and lists it within the per-code cap.
func (t *Tracker) finding(c *Connection, f finding.Finding) {
	if t.listed(c, f.Code, f.Severity, f.Frame) {
		t.keep(c, f)
	}
}

// keep lists f, whole, on c.
func (t *Tracker) keep(c *Connection, f finding.Finding) {
	r := c.extra()
	c.list(listedFinding{check: checkFull, frame: f.Frame, n: len(r.full)}, t.cfg.MaxFindingsPerCode)
	r.full = append(r.full, f)
}

// list appends f to c.listed; the first time with room for the findings
// of one code a connection lists (limit, up to 8), not growing 1, 2, 4, 8.
func (c *Connection) list(f listedFinding, limit int) {
	if c.listed == nil {
		c.listed = make([]listedFinding, 0, min(limit, 8))
	}
	c.listed = append(c.listed, f)
}

// extra returns c's rare part, made on first use.
func (c *Connection) extra() *connRare {
	if c.rare == nil {
		c.rare = &connRare{}
	}
	return c.rare
}

// listed counts a finding of code and sev at frame on c and reports
// whether it is to be listed: the caller then appends it to c.listed.
// Checks that raise a finding per packet call it before building the
// message, which only the listed ones need.
func (t *Tracker) listed(c *Connection, code string, sev finding.Severity, frame int) bool {
	return c.countFinding(code, sev, frame, t.cfg.MaxFindingsPerCode)
}

// maxOrphans caps the findings outside connections the tracker keeps.
const maxOrphans = 1000

func (t *Tracker) orphan(f finding.Finding) {
	if len(t.orphans) < maxOrphans {
		t.orphans = append(t.orphans, f)
	}
}

// addStep appends a step of msg to c's ladder within the cap and returns
// it, for the caller to add its note; nil when the ladder is full.
func (t *Tracker) addStep(c *Connection, msg stepMsg, frame int, at time.Time, fromClient, retrans bool) *step {
	t.stepped = c
	if len(c.steps) >= t.cfg.MaxSteps {
		c.StepsDropped++
		return nil
	}
	s := step{msg: msg, frame: frame, sec: at.Unix(), nsec: int32(at.Nanosecond())}
	if fromClient {
		s.flags |= stepFromClient
	}
	if retrans {
		s.flags |= stepRetrans
	}
	if c.steps == nil {
		// Room for a whole ladder (REQ, REP, RTU, DREQ, DREP) at once.
		c.steps = make([]step, 0, min(typicalSteps, t.cfg.MaxSteps))
	}
	c.steps = append(c.steps, s)
	return &c.steps[len(c.steps)-1]
}

// typicalSteps is the ladder of a connection set up and torn down without
// retransmissions.
const typicalSteps = 5

// noteText gives s the note text (rare: REJ's reason).
func (c *Connection) noteText(s *step, text string) {
	if s == nil || text == "" {
		return
	}
	r := c.extra()
	s.note, s.arg = noteText, uint32(len(r.notes))
	r.notes = append(r.notes, text)
}

func (t *Tracker) touch(c *Connection, at time.Time) {
	c.lastActive = capNanos(at)
	if at.After(c.LastTime) {
		c.LastTime = at
	}
}

// sendAcc accumulates a Send (IB: of one QP; iWARP: of one direction of a
// stream) until its last packet. It stays for the next Send on its key.
type sendAcc struct {
	open   bool   // a Send is in progress
	msn    uint32 // iWARP: the Send's message sequence number
	first  int
	length int
	rpc    bool
	xid    uint32
	proc   uint32
	hs     []uint32
	// credits is the header's credit field, rpcMsg the RPC message type
	// plus one (0: no RPC message inline).
	credits uint32
	rpcMsg  uint8
	// chunks is the chunk data the reply's header carries.
	chunks ChunkTotals
	// conn is the connection the key's Sends belong to (nil: none), as
	// the index said at epoch connEpoch; connKnown once looked up.
	conn      *Connection
	connEpoch uint64
	connKnown bool
}

// maxFreeAccs bounds the accumulators kept for reuse.
const maxFreeAccs = 256

// closed lets go of what c's traffic needed: its remembered calls and its
// Send accumulators (those still of c: a QP number already reused by a
// newer connection keeps its own).
func (t *Tracker) closed(c *Connection) {
	t.releasePending(c)
	if c.Transport == IWARP {
		hint := uint32(c.Client.Port ^ c.Server.Port)
		t.dropAcc(sendKey{host: c.Client, peer: c.Server}, hint, c)
		t.dropAcc(sendKey{host: c.Server, peer: c.Client}, hint, c)
		return
	}
	if c.ClientQPN != 0 {
		t.dropAcc(sendKey{host: hostKey(c.Client), qp: c.ClientQPN}, c.ClientQPN, c)
	}
	if c.ServerQPN != 0 {
		t.dropAcc(sendKey{host: hostKey(c.Server), qp: c.ServerQPN}, c.ServerQPN, c)
	}
}

// dropAcc forgets the accumulator of k (hint as sendAcc's) when its Sends
// were last matched to c, and keeps it for reuse.
func (t *Tracker) dropAcc(k sendKey, hint uint32, c *Connection) {
	acc := t.sends[k]
	if acc == nil || (acc.connKnown && acc.conn != nil && acc.conn != c) {
		return
	}
	delete(t.sends, k)
	if e := &t.accCache[accSlot(hint)]; e.acc == acc {
		*e = accCacheEntry{}
	}
	if len(t.freeAccs) < maxFreeAccs {
		*acc = sendAcc{hs: acc.hs[:0]}
		t.freeAccs = append(t.freeAccs, acc)
	}
}

func accSlot(hint uint32) uint32 { return (hint ^ hint>>8) & (accCacheSize - 1) }

// accCacheSize is the number of recent Send keys accCache holds (a power
// of two): enough for the QPs that interleave on a busy link.
const accCacheSize = 64

type accCacheEntry struct {
	k   sendKey
	acc *sendAcc
}

// maxSendAccs bounds the Sends in progress followed at once.
const maxSendAccs = 1 << 16

type sendKey struct {
	host Peer // IB: the receiving host; iWARP: the sending TCP end
	peer Peer // iWARP: the receiving TCP end
	qp   uint32
}
