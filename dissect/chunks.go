package dissect

import (
	"fmt"
	"slices"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/posindex"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// This file follows the chunks of RPC-over-RDMA calls (RFC 8166 §3.4,
// §4.4). Every segment a call advertises (read list, write list, reply
// chunk) is remembered by connection and handle until the call is
// answered. The RDMA Writes (IB RETH R_Key and VA; iWARP tagged DDP STag
// and TO) and RDMA Reads (IB READ_REQUEST and the responses that follow
// it by PSN; iWARP Read Request and the tagged Read Response to its sink
// STag) are matched to the segment that holds them and counted there.
// What a reply chunk receives is kept, so that an RDMA_NOMSG reply
// decodes as the RPC reply the Writes put there; what a position-zero
// read chunk gives likewise, for an RDMA_NOMSG call. When the reply comes,
// what moved is checked against what the reply says and shown on it.
//
// Several segments can share a handle on one connection: a stack that
// registers all its memory under one R_Key (a global or ALLPHYSICAL
// registration) tells its segments apart by offset only, and several
// connections between the same two hosts (NFS nconnect, several QPs) can
// advertise the same handle. A transfer belongs to the segment whose
// [offset, offset+length) holds it, on the same QP when the CM exchange
// paired the QPs (on the same TCP connection for iWARP).

// chunkKind is the chunk list a segment was advertised in.
type chunkKind uint8

const (
	chunkRead chunkKind = 1 + iota
	chunkWrite
	chunkReply
)

// chunkSeg is one advertised segment of an outstanding call.
type chunkSeg struct {
	conn   uint64
	xid    uint32
	handle uint32
	offset uint64
	length uint32
	// path is where the transfers into and out of the segment travel:
	// the requester's QPN (IB, from the CM exchange) or the TCP port
	// pair (iWARP); 0 when unknown. The connection's setup was captured
	// when setup is set.
	path  uint32
	setup bool
	// qp is the QP the call was delivered to (IB; 0 on iWARP): the
	// responder's RDMA Reads of the segment go out from it, so their
	// responses come back to it.
	qp   uint32
	kind chunkKind
	// index is the write chunk's place in the write list; for a read
	// segment, its place in the read list.
	index uint16
	// position is a read segment's XDR position.
	position uint32
	// hold: what moves is copied into buf (reply chunk, position-zero
	// read chunk); dropped: it could not be, within the reassembly
	// limits; lossy: the capture lost octets of the connection while the
	// segment was held (a transfer may be in the hole).
	hold, dropped, lossy bool
	// owned: the call table holds the chain (a call in a position-zero
	// read chunk is not in it until it is decoded).
	owned bool
	buf   []byte
	// filled is the high-water mark of the octets moved, from the
	// segment's start (a transfer sent again counts once).
	filled      int
	first, last int   // frames of the first and last transfer (0: none)
	lastTime    int64 // the last transfer's time (Unix ns)
	// next links the call's segments, same the segments with the same
	// connection and handle; head is the call's first segment (positions
	// plus one).
	next, same, head int
}

// maxSegsHeld bounds the segments remembered at once, whatever the calls
// (a requester's call in a read chunk is not in the call table that
// forgets the others).
const maxSegsHeld = 1 << 16

type segKey struct {
	conn   uint64
	handle uint32
}

// The chunk tables' keys hash the connection's hash (already well mixed)
// with the handle, QP or PSN: per packet, cheaper than a Go map's hashing
// of the key's bytes.

func mixConn(conn uint64, id uint32) uint32 {
	h := uint32(conn) ^ uint32(conn>>32) ^ id*0x9e3779b1
	return h ^ h>>16
}

func (k segKey) Hash() uint32 { return mixConn(k.conn, k.handle) }

// ibWrite is where the next packet of a multi-packet RDMA Write on a QP
// goes (its R_Key and VA), set by the RETH of the FIRST packet.
type ibWrite struct {
	rkey   uint32
	va     uint64
	active bool
}

type qpWriteKey struct {
	conn uint64
	qp   uint32
}

func (k qpWriteKey) Hash() uint32 { return mixConn(k.conn, k.qp) }

// readKey finds an RDMA Read in progress: IB by the PSN of its request
// (the responses come back with it) and the QP they come back to (the
// Read requester's: PSNs are per QP, and two QPs between the same hosts
// may use the same ones at once), iWARP by the sink STag the Read
// Response is tagged with.
type readKey struct {
	conn uint64
	id   uint32
	qp   uint32
	ib   bool
}

func (k readKey) Hash() uint32 { return mixConn(k.conn, k.id^k.qp*0x85ebca6b) }

// connKey is a connection (its hash) as the table of octets held keys it.
type connKey uint64

func (k connKey) Hash() uint32 { return mixConn(uint64(k), 0) }

// pendingRead is an RDMA Read matched to a read segment: pos is the
// segment (plus one; checked against conn and xid before use), at the
// segment offset the next response octets go to; for IB, psn is the PSN
// the next response packet must have, for iWARP sinkTO the tagged offset
// of the sink buffer's first octet.
type pendingRead struct {
	pos    int
	xid    uint32
	at     uint64
	psn    uint32
	sinkTO uint64
}

// chunkTable holds the chunks of outstanding calls and what moved into
// and out of them, the octets kept bounded per connection and in all
// (Options.MaxChunkBytesPerConn, MaxChunkBytes).
type chunkTable struct {
	maxConn, maxTotal int
	segs              posindex.Index[segKey] // the first of the same list, plus one
	n                 int                    // segments held
	pool              []chunkSeg
	free              []int
	bufs              [][]byte // buffers to reuse
	writes            posindex.Table[qpWriteKey, ibWrite]
	reads             posindex.Table[readKey, pendingRead]
	// active: the IB Read whose responses are arriving on a QP (keyed by
	// the responses' destination QP), after its FIRST.
	active posindex.Table[qpWriteKey, pendingRead]
	held   posindex.Table[connKey, int] // octets held per connection
	total  int
	body   []byte // the reassembled message, reused
	// call is told the body of a call that came in a position-zero read
	// chunk, once all of it was read.
	call func(rec *Record, conn uint64, xid uint32, head int, body []byte)
	// orphans are the chains of such calls, oldest first from next (a
	// ring of maxOrphans): one whose Reads the capture never shows is
	// forgotten when the ring comes round to it, unless its call was
	// decoded and the call table holds it.
	orphans []orphan
	next    int
	// uncaptured is how many octets the IB packet being placed moved
	// that the capture's snap length did not store (after the payload's
	// captured octets): they count as moved, and a segment kept for its
	// RPC message cannot be decoded.
	uncaptured int
}

type orphan struct {
	head int
	conn uint64
	xid  uint32
}

// maxOrphans bounds the chains of calls in position-zero read chunks
// awaiting their Reads.
const maxOrphans = 4096

func newChunkTable(opts Options) *chunkTable {
	return &chunkTable{maxConn: opts.MaxChunkBytesPerConn, maxTotal: opts.MaxChunkBytes}
}

// sameList returns the first segment (plus one) with k's connection and
// handle, 0 when there is none.
func (c *chunkTable) sameList(k segKey) int {
	q, _ := c.segs.Get(k)
	return q
}

// heldBy returns the octets held for conn's segments.
func (c *chunkTable) heldBy(conn uint64) int {
	if n := c.held.Get(connKey(conn)); n != nil {
		return *n
	}
	return 0
}

// waiting reports whether any chunk awaits its transfers.
func (c *chunkTable) waiting() bool { return c.n > 0 }

// advertise remembers the chunks of call xid on conn (transfers on path;
// setup: the connection's setup was captured; qp: the IB QP the call was
// delivered to, 0 on iWARP); nomsg says the call itself
// is in its position-zero read chunk. It returns the chain of the
// segments (the first one's position plus one; 0: none) for forget.
func (c *chunkTable) advertise(conn uint64, path uint32, setup bool, qp, xid uint32, h *rpcrdma.Header, nomsg bool) int {
	// Added last to first, so the chain runs in wire order.
	seg := chunkSeg{conn: conn, xid: xid, path: path, setup: setup, qp: qp, owned: !nomsg}
	seg.kind, seg.hold = chunkReply, true
	for i := len(h.Reply.Segments) - 1; i >= 0; i-- {
		c.add(&seg, h.Reply.Segments[i])
	}
	seg.kind, seg.hold = chunkWrite, false
	for i := len(h.Writes) - 1; i >= 0; i-- {
		seg.index = uint16(i)
		for j := len(h.Writes[i].Segments) - 1; j >= 0; j-- {
			c.add(&seg, h.Writes[i].Segments[j])
		}
	}
	seg.kind = chunkRead
	for i := len(h.Reads) - 1; i >= 0; i-- {
		seg.index, seg.position = uint16(i), h.Reads[i].Position
		seg.hold = nomsg && seg.position == 0
		c.add(&seg, h.Reads[i].Segment)
	}
	head := seg.next
	for q := head; q != 0; q = c.pool[q-1].next {
		c.pool[q-1].head = head
	}
	if nomsg && head != 0 {
		c.orphan(orphan{head, conn, xid})
	}
	return head
}

// add remembers the segment s as seg says (its call, list and place)
// in front of the chain seg.next, which it becomes.
func (c *chunkTable) add(seg *chunkSeg, s rpcrdma.Segment) {
	if c.n >= maxSegsHeld {
		return
	}
	var pos int
	if n := len(c.free); n > 0 {
		pos, c.free = c.free[n-1], c.free[:n-1]
	} else {
		pos = c.grow()
	}
	k := segKey{seg.conn, s.Handle}
	p := &c.pool[pos]
	*p = *seg
	p.handle, p.offset, p.length, p.same = s.Handle, s.Offset, s.Length, c.sameList(k)
	c.segs.Set(k, pos+1)
	c.n++
	seg.next = pos + 1
}

// grow adds a segment to the pool and returns its position.
//
//go:noinline
func (c *chunkTable) grow() int {
	pos := len(c.pool)
	if len(c.pool) == cap(c.pool) {
		// Doubled: append's quarter growth of a pool this large left
		// copies behind of three times its size, which made the GC's
		// heap goal (and the peak RSS of every view: 0.5 MB, conns 1.5
		// MB on the 2M-packet bench capture) higher.
		c.pool = slices.Grow(c.pool, max(len(c.pool), 64))
	}
	c.pool = append(c.pool, chunkSeg{})
	return pos
}

// orphan remembers the chain of a call in a position-zero read chunk,
// forgetting the oldest such chain whose call was not decoded when
// maxOrphans are held.
//
//go:noinline
func (c *chunkTable) orphan(o orphan) {
	if len(c.orphans) < maxOrphans {
		c.orphans = append(c.orphans, o)
		return
	}
	if old := c.orphans[c.next]; c.live(old.head, old.conn, old.xid) && !c.pool[old.head-1].owned {
		c.forget(old.head, old.conn, old.xid)
	}
	c.orphans[c.next] = o
	c.next = (c.next + 1) % maxOrphans
}

// same reports whether chain head of call (conn, h.XID) holds the
// segments h advertises, in the same lists and order.
func (c *chunkTable) same(head int, conn uint64, h *rpcrdma.Header) bool {
	q := head
	next := func(kind chunkKind, s rpcrdma.Segment) bool {
		if !c.live(q, conn, h.XID) {
			return false
		}
		p := &c.pool[q-1]
		q = p.next
		return p.kind == kind && p.handle == s.Handle && p.offset == s.Offset && p.length == s.Length
	}
	for _, r := range h.Reads {
		if !next(chunkRead, r.Segment) {
			return false
		}
	}
	for _, w := range h.Writes {
		for _, s := range w.Segments {
			if !next(chunkWrite, s) {
				return false
			}
		}
	}
	for _, s := range h.Reply.Segments {
		if !next(chunkReply, s) {
			return false
		}
	}
	return !c.live(q, conn, h.XID)
}

// own notes that the call table holds the chain head of call (conn, xid).
func (c *chunkTable) own(head int, conn uint64, xid uint32) {
	for q := head; c.live(q, conn, xid); q = c.pool[q-1].next {
		c.pool[q-1].owned = true
	}
}

// live reports whether the segment at pos (plus one) is still the one of
// call (conn, xid).
func (c *chunkTable) live(pos int, conn uint64, xid uint32) bool {
	if pos <= 0 || pos > len(c.pool) {
		return false
	}
	s := &c.pool[pos-1]
	return s.kind != 0 && s.conn == conn && s.xid == xid
}

// forget releases the segments of chain head still held for the call
// (conn, xid): its reply came, or the call was given up.
func (c *chunkTable) forget(head int, conn uint64, xid uint32) {
	for c.live(head, conn, xid) {
		pos := head - 1
		head = c.pool[pos].next
		c.release(pos)
	}
}

// release forgets the segment at pos and keeps its buffer for reuse.
func (c *chunkTable) release(pos int) {
	s := &c.pool[pos]
	k := segKey{s.conn, s.handle}
	if first := c.sameList(k); first == pos+1 {
		if s.same == 0 {
			c.segs.Delete(k)
		} else {
			c.segs.Set(k, s.same)
		}
	} else {
		for q := first; q != 0; q = c.pool[q-1].same {
			if c.pool[q-1].same == pos+1 {
				c.pool[q-1].same = s.same
				break
			}
		}
	}
	if s.buf != nil {
		c.unhold(s)
	}
	*s = chunkSeg{}
	c.free = append(c.free, pos)
	c.n--
}

// unhold gives the segment's buffer back.
func (c *chunkTable) unhold(s *chunkSeg) {
	if n := c.held.Get(connKey(s.conn)); n != nil {
		if *n -= cap(s.buf); *n <= 0 {
			c.held.Delete(connKey(s.conn))
		}
	}
	c.total -= cap(s.buf)
	c.bufs = append(c.bufs, s.buf[:0])
	s.buf = nil
}

// find returns the segment (plus one) of the given kinds (read: reads;
// else write and reply chunks) with handle on conn that holds n octets at
// off, on path when both are known; 0 when there is none. outside reports
// that the transfer is a broken rule: it runs across the edge of a
// segment, or segments with this handle on this connection exist and
// none holds it while the handle is one call's own registration or the
// connection's setup was captured (under a handle shared by several
// calls, a transfer outside every segment seen may be into one advertised
// before the capture began). near is the segment named in the finding.
func (c *chunkTable) find(conn uint64, path, handle uint32, off, n uint64, read bool) (pos int, outside bool, near *chunkSeg) {
	shared, across := false, false
	for q := c.sameList(segKey{conn, handle}); q != 0; q = c.pool[q-1].same {
		s := &c.pool[q-1]
		if (s.kind == chunkRead) != read || path != 0 && s.path != 0 && s.path != path {
			continue
		}
		if off >= s.offset && off-s.offset+n <= uint64(s.length) {
			return q, false, nil
		}
		if off < s.offset+uint64(s.length) && s.offset < off+n {
			across, near = true, s
		}
		if near != nil && near.xid != s.xid {
			shared = true
		}
		if near == nil {
			near = s
		}
	}
	if near == nil {
		return 0, false, nil
	}
	return 0, across || !shared || near.setup, near
}

// place copies data moved at segment offset at into the segment at pos
// (plus one), when it is kept, and counts it; findings go to rec.
func (c *chunkTable) place(rec *Record, pos int, at uint64, data []byte) {
	s := &c.pool[pos-1]
	if s.first == 0 {
		s.first = rec.Frame
	}
	s.last = rec.Frame
	s.lastTime = rec.Time.UnixNano()
	end := int(at) + len(data) + c.uncaptured
	s.filled = max(s.filled, end)
	if !s.hold || s.dropped || c.uncaptured > 0 && c.dropUncaptured(s) {
		return
	}
	if s.buf == nil {
		n := int(s.length)
		if c.maxConn > 0 && c.heldBy(s.conn)+n > c.maxConn || c.maxTotal > 0 && c.total+n > c.maxTotal {
			what := "reply chunk"
			if s.kind == chunkRead {
				what = "position-zero read chunk"
			}
			rec.addFinding(CodeChunkLimit, finding.SeverityWarning, "", "rpcrdma", -1,
				fmt.Sprintf("%s segment of xid 0x%08x (%d octets) not held: the reassembly limit (%d octets per connection, %d in all) is reached; its RPC message is not decoded",
					what, s.xid, n, c.maxConn, c.maxTotal))
			// The call's other kept segments too: one finding per call.
			for i := range c.pool {
				if p := &c.pool[i]; p.kind == s.kind && p.hold && p.conn == s.conn && p.xid == s.xid {
					p.dropped = true
					if p.buf != nil {
						c.unhold(p)
					}
				}
			}
			return
		}
		s.buf = c.buffer(n)
		c.held.Put(connKey(s.conn), c.heldBy(s.conn)+cap(s.buf))
		c.total += cap(s.buf)
	}
	copy(s.buf[at:], data)
}

// write takes n octets written by RDMA Write at (handle, off) on conn and
// path: counted in the write or reply chunk segment that holds them (data,
// when not nil, kept there for a reply chunk).
func (c *chunkTable) write(rec *Record, conn uint64, path, handle uint32, off uint64, data []byte) {
	if c.n == 0 || len(data)+c.uncaptured == 0 {
		return
	}
	pos, outside, near := c.find(conn, path, handle, off, uint64(len(data)+c.uncaptured), false)
	if pos == 0 {
		if outside {
			rec.addFinding(CodeChunkOutside, finding.SeverityError, sectionChunks, "rpcrdma", -1,
				fmt.Sprintf("RDMA Write of %d octets at 0x%x with handle 0x%08x falls outside every segment advertised with that handle (as the %s segment of xid 0x%08x: 0x%x, %d octets)",
					len(data), off, handle, near.kind, near.xid, near.offset, near.length))
		}
		return
	}
	c.place(rec, pos, off-c.pool[pos-1].offset, data)
}

// readRequest takes an RDMA Read of n octets at (handle, off) on conn and
// path; it returns the read segment (plus one) that holds it, 0 when none
// does.
func (c *chunkTable) readRequest(rec *Record, conn uint64, path, handle uint32, off uint64, n uint32) int {
	pos, outside, near := c.find(conn, path, handle, off, uint64(n), true)
	if pos == 0 && outside {
		rec.addFinding(CodeChunkReadOutside, finding.SeverityError, sectionReadChunk, "rpcrdma", -1,
			fmt.Sprintf("RDMA Read of %d octets at 0x%x with handle 0x%08x falls outside every read segment advertised with that handle (as the one of xid 0x%08x: 0x%x, %d octets)",
				n, off, handle, near.xid, near.offset, near.length))
	}
	return pos
}

// readData takes the octets of a Read Response for the read segment at
// pos (plus one) of call xid, at segment offset at: placed in the
// segment; when a call's position-zero read chunk is complete, the call
// is decoded from it. It returns the octets placed.
func (c *chunkTable) readData(rec *Record, pos int, xid uint32, conn uint64, at uint64, data []byte) uint64 {
	if !c.live(pos, conn, xid) || len(data)+c.uncaptured == 0 {
		return 0
	}
	s := &c.pool[pos-1]
	if at >= uint64(s.length) {
		return 0
	}
	if at+uint64(len(data)) > uint64(s.length) {
		data = data[:uint64(s.length)-at]
	}
	c.place(rec, pos, at, data)
	if s.hold && s.filled == int(s.length) && c.call != nil {
		if body, ok := c.message(s.head, conn, xid, chunkRead); ok {
			c.call(rec, conn, xid, s.head, body)
		}
	}
	return uint64(len(data) + c.uncaptured)
}

// message returns the RPC message that the kept segments of kind (the
// reply chunk, or the position-zero read chunk) of call xid on conn
// (chain head) hold, each segment whole, in the order advertised; ok is
// false while one of them is not wholly moved.
func (c *chunkTable) message(head int, conn uint64, xid uint32, kind chunkKind) ([]byte, bool) {
	c.body = c.body[:0]
	for q := head; c.live(q, conn, xid); q = c.pool[q-1].next {
		s := &c.pool[q-1]
		if s.kind != kind || !s.hold {
			continue
		}
		if s.dropped || s.filled < int(s.length) || s.buf == nil {
			return nil, false
		}
		c.body = append(c.body, s.buf[:s.length]...)
	}
	return c.body, len(c.body) > 0
}

// buffer returns a buffer of n octets, reused when one is large enough.
func (c *chunkTable) buffer(n int) []byte {
	for i := len(c.bufs) - 1; i >= 0; i-- {
		if b := c.bufs[i]; cap(b) >= n {
			c.bufs[i] = c.bufs[len(c.bufs)-1]
			c.bufs = c.bufs[:len(c.bufs)-1]
			return b[:n]
		}
	}
	return make([]byte, n)
}

// reply returns the RPC message an RDMA_NOMSG reply (h) wrote into the
// reply chunk of its call (head, the call's chain) on conn: the segments
// in order, each up to the length the reply gives (valid until the next
// call); ok is false when a segment was not advertised or not (wholly)
// written, as when the capture missed Writes. The segments stay until
// their call is forgotten.
func (c *chunkTable) reply(head int, conn uint64, h *rpcrdma.Header) (body []byte, ok bool) {
	c.body = c.body[:0]
	ok = len(h.Reply.Segments) > 0
	i := 0
	for q := head; c.live(q, conn, h.XID) && ok; q = c.pool[q-1].next {
		s := &c.pool[q-1]
		if s.kind != chunkReply {
			continue
		}
		if i >= len(h.Reply.Segments) {
			break
		}
		seg := h.Reply.Segments[i]
		i++
		if seg.Handle != s.handle || seg.Length > s.length || int(seg.Length) > s.filled || s.dropped || s.buf == nil && seg.Length > 0 {
			ok = false
			break
		}
		c.body = append(c.body, s.buf[:seg.Length]...)
	}
	return c.body, ok && i == len(h.Reply.Segments)
}

// movesChunkData reports the RC opcodes ibPacket takes: RDMA Write
// (0x06–0x0b), RDMA Read Request (0x0c) and Read Response (0x0d–0x10).
// The other packets (ACKs, a third of a busy capture's) pass by with this
// test instead of a call.
func movesChunkData(op ibcm.Opcode) bool {
	return op-ibcm.OpRCWriteFirst <= ibcm.OpRCReadRespOnly-ibcm.OpRCWriteFirst
}

// ibPacket takes an RC RDMA Write, RDMA Read Request or Read Response
// packet (movesChunkData): the RETH (Write FIRST and ONLY, Read Request) says where it and
// the packets after it go.
func (c *chunkTable) ibPacket(rec *Record, bth *ibcm.BTH, reth *ibcm.RETH, payload []byte) {
	switch c.uncaptured = uncapturedPayload(bth, payload); bth.OpCode {
	case ibcm.OpRCWriteFirst, ibcm.OpRCWriteOnly, ibcm.OpRCWriteOnlyImm, ibcm.OpRCWriteMiddle, ibcm.OpRCWriteLast, ibcm.OpRCWriteLastImm:
		c.ibWrite(rec, bth, reth, payload)
	case ibcm.OpRCReadRequest:
		conn := connHash(rec)
		if pos := c.readRequest(rec, conn, bth.DestQP, reth.RKey, reth.VA, reth.DMALen); pos != 0 {
			s := &c.pool[pos-1]
			c.pend(readKey{conn, bth.PSN, s.qp, true}, pendingRead{pos: pos, xid: s.xid, at: reth.VA - s.offset, psn: bth.PSN})
		}
	case ibcm.OpRCReadRespFirst, ibcm.OpRCReadRespOnly:
		if c.reads.Len() == 0 {
			return
		}
		conn := connHash(rec)
		k := readKey{conn, bth.PSN, bth.DestQP, true}
		p := c.reads.Get(k)
		if p == nil {
			return
		}
		r := *p
		c.reads.Delete(k)
		r.at += c.readData(rec, r.pos, r.xid, conn, r.at, payload)
		if bth.OpCode == ibcm.OpRCReadRespFirst {
			r.psn = (bth.PSN + 1) & 0xffffff
			c.active.Put(qpWriteKey{conn, bth.DestQP}, r)
		}
	case ibcm.OpRCReadRespMiddle, ibcm.OpRCReadRespLast:
		if c.active.Len() == 0 {
			return
		}
		conn := connHash(rec)
		k := qpWriteKey{conn, bth.DestQP}
		p := c.active.Get(k)
		if p == nil || bth.PSN != p.psn {
			return // sent again, or a packet the capture missed
		}
		r := *p
		r.at += c.readData(rec, r.pos, r.xid, conn, r.at, payload)
		r.psn = (r.psn + 1) & 0xffffff
		if bth.OpCode == ibcm.OpRCReadRespLast {
			c.active.Delete(k)
		} else {
			c.active.Put(k, r)
		}
	}
}

// pend remembers a Read until its responses come, the pending Reads
// bounded by the segments.
func (c *chunkTable) pend(k readKey, r pendingRead) {
	if c.reads.Len() >= maxSegsHeld {
		c.reads.Reset()
	}
	c.reads.Put(k, r)
}

// sweep forgets the RDMA Reads pending for segments no longer held: their
// responses would find nothing to fill.
func (c *chunkTable) sweep() {
	c.reads.DeleteFunc(func(k readKey, r *pendingRead) bool { return !c.live(r.pos, k.conn, r.xid) })
	c.active.DeleteFunc(func(k qpWriteKey, r *pendingRead) bool { return !c.live(r.pos, k.conn, r.xid) })
}

func (c *chunkTable) ibWrite(rec *Record, bth *ibcm.BTH, reth *ibcm.RETH, payload []byte) {
	conn := connHash(rec)
	k := qpWriteKey{conn, bth.DestQP}
	var w ibWrite
	switch bth.OpCode {
	case ibcm.OpRCWriteFirst, ibcm.OpRCWriteOnly, ibcm.OpRCWriteOnlyImm:
		w = ibWrite{rkey: reth.RKey, va: reth.VA, active: true}
	default:
		if p := c.writes.Get(k); p != nil {
			w = *p
		}
		if !w.active {
			return
		}
	}
	c.write(rec, conn, bth.DestQP, w.rkey, w.va, payload)
	w.va += uint64(len(payload) + c.uncaptured)
	switch bth.OpCode {
	case ibcm.OpRCWriteFirst, ibcm.OpRCWriteMiddle:
		c.writes.Put(k, w)
	default:
		if c.writes.Len() > 0 {
			c.writes.Delete(k)
		}
	}
}

// iwarpWrite takes an iWARP tagged DDP segment of an RDMA Write on the
// TCP connection path.
func (c *chunkTable) iwarpWrite(rec *Record, path, stag uint32, to uint64, data []byte) {
	c.uncaptured = 0 // reassembled: what was not captured is not decoded
	c.write(rec, connHash(rec), path, stag, to, data)
}

// iwarpReadRequest takes an iWARP RDMA Read Request on the TCP
// connection path: the data source (the requester's read segment) is
// read into the sink STag.
func (c *chunkTable) iwarpReadRequest(rec *Record, path uint32, rr *mpa.ReadRequest) {
	conn := connHash(rec)
	if pos := c.readRequest(rec, conn, path, rr.SrcSTag, rr.SrcTO, rr.Size); pos != 0 {
		s := &c.pool[pos-1]
		c.pend(readKey{conn, rr.SinkSTag, 0, false}, pendingRead{pos: pos, xid: s.xid, at: rr.SrcTO - s.offset, sinkTO: rr.SinkTO})
	}
}

// iwarpReadResponse takes a tagged DDP segment of an RDMA Read Response:
// its octets at sink offset to are the source's at the same distance
// from the start; last ends the Read.
func (c *chunkTable) iwarpReadResponse(rec *Record, stag uint32, to uint64, last bool, data []byte) {
	c.uncaptured = 0 // reassembled: what was not captured is not decoded
	if c.reads.Len() == 0 {
		return
	}
	conn := connHash(rec)
	k := readKey{conn, stag, 0, false}
	r := c.reads.Get(k)
	if r == nil || to < r.sinkTO {
		return
	}
	c.readData(rec, r.pos, r.xid, conn, r.at+(to-r.sinkTO), data)
	if last {
		c.reads.Delete(k)
	}
}

// lost notes that the capture lost octets of connection conn (on path)
// while its segments were held: what they are missing is not reported.
func (c *chunkTable) lost(conn uint64, path uint32) {
	if c.n == 0 {
		return
	}
	for i := range c.pool {
		if s := &c.pool[i]; s.kind != 0 && s.conn == conn && (path == 0 || s.path == 0 || s.path == path) {
			s.lossy = true
		}
	}
}

// chunkUse is what moved for one chunk of a call, for its reply.
type chunkUse = rpcrdma.ChunkData

// settle checks what moved in the chunks of call (conn, xid) — chain head
// — against its reply m, lists it on the reply's header, and releases the
// segments. It reports whether the call offered a reply chunk.
func (c *chunkTable) settle(rec *Record, head int, conn uint64, xid uint32, m *rpcrdma.Message) (hadReply bool) {
	h := &m.Header
	var cur *chunkUse
	lossy := false
	for q := head; c.live(q, conn, xid); q = c.pool[q-1].next {
		s := &c.pool[q-1]
		kind := rpcrdma.ChunkDataRead
		switch s.kind {
		case chunkWrite:
			kind = rpcrdma.ChunkDataWrite
		case chunkReply:
			kind = rpcrdma.ChunkDataReply
			hadReply = true
		}
		if cur == nil || cur.Kind != kind || kind == rpcrdma.ChunkDataWrite && cur.Index != int(s.index) {
			h.Chunks = append(h.Chunks, chunkUse{Kind: kind, Index: int(s.index)})
			cur = &h.Chunks[len(h.Chunks)-1]
		}
		lossy = lossy || s.lossy
		cur.Advertised += uint64(s.length)
		cur.Octets += uint64(s.filled)
		cur.Segments++
		if s.first != 0 {
			cur.Used++
		}
		if s.first != 0 && (cur.FirstFrame == 0 || s.first < cur.FirstFrame) {
			cur.FirstFrame = s.first
		}
		if s.last > cur.LastFrame {
			cur.LastFrame, cur.LastTime = s.last, s.lastTime
		}
	}
	for i := range h.Chunks {
		u := &h.Chunks[i]
		switch u.Kind {
		case rpcrdma.ChunkDataWrite:
			// The reply's write list gives the octets the responder
			// wrote into each chunk (RFC 8166 §3.4.6).
			if u.Index < len(h.Writes) && h.HasChunkLists() {
				u.Reported = h.Writes[u.Index].Length()
				u.HasReported = true
				// Not when the capture lost octets of the connection since
				// the call: the Writes not seen may be among them.
				if u.Reported > u.Octets && !lossy {
					chunkUnwritten(rec, xid, u)
				}
			}
		case rpcrdma.ChunkDataRead:
			// A successful reply means the responder used the call's
			// arguments, the data of its read chunks among them.
			if u.Octets < u.Advertised && !lossy && m.HasRPC && m.RPC.MsgType == rpcrdma.MsgReply &&
				m.RPC.ReplyStat == rpcrdma.ReplyAccepted && m.RPC.AcceptStat == rpcrdma.AcceptSuccess && (!m.HasNFS || !m.NFS.HasStatus || m.NFS.Status == 0) {
				chunkUnread(rec, xid, u)
			}
		}
	}
	c.forget(head, conn, xid)
	return hadReply
}

// The findings of settle are made out of line: rare, and long.

// chunkUnwritten reports the write chunk u of the reply to call xid
// short of what the reply says was written.
//
//go:noinline
func chunkUnwritten(rec *Record, xid uint32, u *chunkUse) {
	rec.addFinding(CodeChunkUnwritten, finding.SeverityWarning, sectionWriteChunk, "rpcrdma", -1,
		fmt.Sprintf("the reply to xid 0x%08x reports %d octets written into write chunk %d, the capture saw %d placed by RDMA Write",
			xid, u.Reported, u.Index, u.Octets))
}

// chunkUnread reports the read chunks u of call xid not wholly read
// before its successful reply.
//
//go:noinline
func chunkUnread(rec *Record, xid uint32, u *chunkUse) {
	rec.addFinding(CodeChunkUnread, finding.SeverityWarning, sectionReadChunk, "rpcrdma", -1,
		fmt.Sprintf("the call xid 0x%08x offered %d octets in its read chunks; the capture saw %d of them read by RDMA Read before its successful reply",
			xid, u.Advertised, u.Octets))
}

func (k chunkKind) String() string {
	switch k {
	case chunkRead:
		return "read"
	case chunkWrite:
		return "write chunk"
	case chunkReply:
		return "reply chunk"
	}
	return "unknown"
}
