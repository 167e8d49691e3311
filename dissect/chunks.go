package dissect

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// This file puts back together the RPC replies that a responder wrote
// into the requester's reply chunk (RFC 8166 §3.5.3, §4.4.3): a call's
// reply chunk segments are remembered by connection and handle, the RDMA
// Writes into them (IB RETH R_Key and VA; iWARP tagged DDP STag and TO)
// are copied into the segments' buffers, and the RDMA_NOMSG that ends the
// reply gets the RPC message the buffers hold, decoded with its call.

// replySeg is one reply chunk segment awaiting its reply.
type replySeg struct {
	conn   uint64
	xid    uint32
	handle uint32
	offset uint64
	length uint32
	buf    []byte // the written octets, at most length (nil until written)
	filled int    // octets of buf written (high-water mark)
	// next links the segments of one reply chunk (position plus one).
	next int
}

// maxSegsHeld bounds the segments remembered at once, whatever the calls
// (a requester's call in a read chunk is not in the call table that
// forgets the others).
const maxSegsHeld = 1 << 16

type segKey struct {
	conn   uint64
	handle uint32
}

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

// replyChunks holds the reply chunk segments of outstanding calls and
// what was written into them, bounded in octets per connection and in
// all (Options.MaxChunkBytesPerConn, MaxChunkBytes).
type replyChunks struct {
	maxConn, maxTotal int
	segs              map[segKey]int // positions in pool
	pool              []replySeg
	free              []int
	bufs              [][]byte // buffers to reuse
	writes            map[qpWriteKey]ibWrite
	held              map[uint64]int // octets held per connection
	total             int
	body              []byte // the reassembled reply, reused
}

func newReplyChunks(opts Options) *replyChunks {
	return &replyChunks{maxConn: opts.MaxChunkBytesPerConn, maxTotal: opts.MaxChunkBytes,
		segs: map[segKey]int{}, writes: map[qpWriteKey]ibWrite{}, held: map[uint64]int{}}
}

// waiting reports whether any reply chunk awaits its Writes.
func (c *replyChunks) waiting() bool { return len(c.segs) > 0 }

// tagged takes an iWARP tagged DDP segment of an RDMA Write.
func (c *replyChunks) tagged(rec *Record, stag uint32, to uint64, data []byte) {
	if len(c.segs) == 0 {
		return
	}
	c.write(rec, connHash(rec), stag, to, data)
}

// advertise remembers the reply chunk of a call (xid) on conn; it
// returns the chain of its segments (the first one's position plus one;
// 0: none) for forget.
func (c *replyChunks) advertise(conn uint64, xid uint32, h *rpcrdma.Header) int {
	head := 0
	for i := len(h.Reply.Segments) - 1; i >= 0; i-- {
		s := h.Reply.Segments[i]
		if len(c.segs) >= maxSegsHeld {
			break
		}
		k := segKey{conn, s.Handle}
		if pos, ok := c.segs[k]; ok {
			// The handle again (the call sent again, or a handle reused
			// after a reply that never came): the newest advertisement.
			c.release(pos)
		}
		var pos int
		if n := len(c.free); n > 0 {
			pos, c.free = c.free[n-1], c.free[:n-1]
		} else {
			pos = len(c.pool)
			c.pool = append(c.pool, replySeg{})
		}
		c.pool[pos] = replySeg{conn: conn, xid: xid, handle: s.Handle, offset: s.Offset, length: s.Length, next: head}
		c.segs[k] = pos
		head = pos + 1
	}
	return head
}

// forget releases the segments of chain head still held for the call
// (conn, xid): its reply came in the Send, or the call was given up.
func (c *replyChunks) forget(head int, conn uint64, xid uint32) {
	for head != 0 {
		pos := head - 1
		s := &c.pool[pos]
		if s.conn != conn || s.xid != xid || s.length == 0 {
			return // released already (and maybe reused)
		}
		head = s.next
		c.release(pos)
	}
}

// release forgets the segment at pos and keeps its buffer for reuse.
func (c *replyChunks) release(pos int) {
	s := &c.pool[pos]
	delete(c.segs, segKey{s.conn, s.handle})
	if s.buf != nil {
		c.held[s.conn] -= cap(s.buf)
		if c.held[s.conn] <= 0 {
			delete(c.held, s.conn)
		}
		c.total -= cap(s.buf)
		c.bufs = append(c.bufs, s.buf[:0])
	}
	*s = replySeg{}
	c.free = append(c.free, pos)
}

// write places data written at (handle, off) on conn, when it falls in an
// advertised reply chunk segment; findings go to rec.
func (c *replyChunks) write(rec *Record, conn uint64, handle uint32, off uint64, data []byte) {
	if len(c.segs) == 0 || len(data) == 0 {
		return
	}
	pos, ok := c.segs[segKey{conn, handle}]
	if !ok {
		return
	}
	s := &c.pool[pos]
	if off < s.offset || off-s.offset+uint64(len(data)) > uint64(s.length) {
		rec.addFinding(CodeChunkOutside, finding.SeverityError, sectionChunks, "rpcrdma", -1,
			fmt.Sprintf("RDMA Write of %d octets at 0x%x into handle 0x%08x falls outside the reply chunk segment of xid 0x%08x (0x%x, %d octets)",
				len(data), off, handle, s.xid, s.offset, s.length))
		return
	}
	at := int(off - s.offset)
	if s.buf == nil {
		n := int(s.length)
		if c.maxConn > 0 && c.held[conn]+n > c.maxConn || c.maxTotal > 0 && c.total+n > c.maxTotal {
			rec.addFinding(CodeChunkLimit, finding.SeverityWarning, "", "rpcrdma", -1,
				fmt.Sprintf("reply chunk segment of xid 0x%08x (%d octets) not held: the reassembly limit (%d octets per connection, %d in all) is reached; its reply is not decoded",
					s.xid, n, c.maxConn, c.maxTotal))
			// The reply's other segments too: one finding per reply.
			xid := s.xid
			for i := range c.pool {
				if p := &c.pool[i]; p.length > 0 && p.conn == conn && p.xid == xid {
					c.release(i)
				}
			}
			return
		}
		s.buf = c.buffer(n)
		c.held[conn] += cap(s.buf)
		c.total += cap(s.buf)
	}
	copy(s.buf[at:], data)
	s.filled = max(s.filled, at+len(data))
}

// buffer returns a buffer of n octets, reused when one is large enough.
func (c *replyChunks) buffer(n int) []byte {
	for i := len(c.bufs) - 1; i >= 0; i-- {
		if b := c.bufs[i]; cap(b) >= n {
			c.bufs[i] = c.bufs[len(c.bufs)-1]
			c.bufs = c.bufs[:len(c.bufs)-1]
			return b[:n]
		}
	}
	return make([]byte, n)
}

// reply returns the RPC message an RDMA_NOMSG reply (h) wrote into its
// reply chunk on conn, the segments in order each up to the length the
// reply gives (valid until the next call); ok is false when a segment was
// not advertised or not (wholly) written, as when the capture missed
// Writes. The segments stay until their call is forgotten (answered by
// this reply, or given up): forget releases them all, the unused ones
// too.
func (c *replyChunks) reply(conn uint64, h *rpcrdma.Header) (body []byte, ok bool) {
	c.body = c.body[:0]
	ok = len(h.Reply.Segments) > 0
	for _, seg := range h.Reply.Segments {
		pos, found := c.segs[segKey{conn, seg.Handle}]
		if !found {
			ok = false
			continue
		}
		s := &c.pool[pos]
		if s.xid != h.XID || int(seg.Length) > s.filled {
			ok = false
		} else if ok {
			c.body = append(c.body, s.buf[:seg.Length]...)
		}
	}
	return c.body, ok
}

// ibPacket takes an RC RDMA Write packet: the RETH (FIRST, ONLY) says
// where it and the packets after it go.
func (c *replyChunks) ibPacket(rec *Record, bth *ibcm.BTH, reth *ibcm.RETH, payload []byte) {
	if len(c.segs) == 0 {
		return
	}
	conn := connHash(rec)
	k := qpWriteKey{conn, bth.DestQP}
	var w ibWrite
	switch bth.OpCode {
	case ibcm.OpRCWriteFirst, ibcm.OpRCWriteOnly, ibcm.OpRCWriteOnlyImm:
		w = ibWrite{rkey: reth.RKey, va: reth.VA, active: true}
	case ibcm.OpRCWriteMiddle, ibcm.OpRCWriteLast, ibcm.OpRCWriteLastImm:
		w = c.writes[k]
		if !w.active {
			return
		}
	default:
		return
	}
	c.write(rec, conn, w.rkey, w.va, payload)
	w.va += uint64(len(payload))
	switch bth.OpCode {
	case ibcm.OpRCWriteFirst, ibcm.OpRCWriteMiddle:
		c.writes[k] = w
	default:
		delete(c.writes, k)
	}
}
