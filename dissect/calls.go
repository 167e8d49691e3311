package dissect

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/internal/posindex"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// This file matches RPC replies to their calls (by connection and xid),
// so that a reply's results can be named.

// callTable remembers outstanding RPC calls by connection and xid, so a
// reply's results can be named; bounded (max outstanding calls), the
// oldest outstanding call forgotten first.
//
// The calls live in a pool of entries, found through a posindex of pool
// positions and linked in the order they were first remembered; a reply
// (or an RDMA_NOMSG or RDMA_ERROR with the call's xid: answered) unlinks
// its call and frees its entry for the next call, so the pool holds about
// as many entries as calls are outstanding at once, not max. It replaced a
// Go map with a separate order ring (a map assign, lookup and delete per
// call and reply were half the cost of naming replies), then a ring of
// every call remembered, answered or not, which grew to max entries on
// any long capture.
type callTable struct {
	max  int
	conn uint64
	// owner is the connection (service.id) of the Send being decoded, 0
	// when its CM exchange was not captured: a call is its connection's,
	// and goes when the connection ends (end), answered or not.
	owner uint32
	// chunks, when set, holds the calls' chunks: a call given up releases
	// its segments; a call answered leaves them in answered for the
	// reply's decoder to settle.
	chunks   *chunkTable
	answered answeredCall
	// frame and time (Unix nanoseconds) of the record being decoded: a
	// call remembers them, a reply is told them (rpc.reqframe, response
	// times).
	frame int
	time  int64
	pool  [][]callEntry // in chunks of callChunk entries: growing copies nothing
	size  int           // entries in the pool
	// free, oldest and newest are pool positions plus one (0: none): the
	// free entries, linked by next; the outstanding calls, oldest first.
	free, oldest, newest int32
	n                    int // outstanding calls
	idx                  posindex.Index[callIndexKey]
	// owners holds each connection's newest outstanding call (a
	// position plus one; 0: none) by its id, the others linked from it by
	// older; ids gives the ids.
	owners []int32
	ids    connIDs
	// recent are the last calls answered (a ring, next the slot to
	// write): a reply sent again, as an RC requester does after a lost
	// packet or a NAK, is named from its call too.
	recent [recentCalls]answered
	next   int
	// matched is the call MatchCall took last (a position plus one; 0:
	// none), valid for the Send being decoded (the decoder clears it
	// before each): its chunks are recorded without looking it up again.
	matched int32
}

// connIDs numbers the connections whose calls are kept apart (an IB
// connection from its REQ, an iWARP stream from its MPA frames): from 1,
// and the number of one that ended is given again, so that callTable's
// owners stays as long as the connections open at once.
type connIDs struct {
	last uint32   // the highest given so far
	free []uint32 // those of connections ended, to give again
}

// take returns a number no open connection has.
func (c *connIDs) take() uint32 {
	if n := len(c.free); n > 0 {
		id := c.free[n-1]
		c.free = c.free[:n-1]
		return id
	}
	c.last++
	return c.last
}

// give takes back the number of a connection that ended.
func (c *connIDs) give(id uint32) { c.free = append(c.free, id) }

// answered is a call that was answered, kept for its reply sent again.
type answered struct {
	key  callKey
	info callInfo
}

// recentCalls is how many answered calls a callTable keeps for the
// replies sent again.
const recentCalls = 16

// answeredCall is the outstanding call the message being decoded
// answered (ok), with its chunk chain (0: none).
type answeredCall struct {
	chunk int
	xid   uint32
	ok    bool
}

type callKey struct {
	conn uint64
	xid  uint32
}

type callInfo struct {
	prog, vers, proc uint32
	gss              bool
	gssProc, gssSvc  uint32
	frame            int
	time             int64
	// chunk is the call's chunk segments held for its reply
	// (chunkTable.advertise's chain; 0: none).
	chunk int
}

func (ci *callInfo) ref() rpcrdma.CallRef {
	return rpcrdma.CallRef{Frame: ci.frame, Time: ci.time, Program: ci.prog, Version: ci.vers, Procedure: ci.proc}
}

type callEntry struct {
	key        callKey
	info       callInfo
	prev, next int32 // links, positions plus one
	// owner is the call's connection (0: none known); older and newer
	// link the connection's calls (positions plus one).
	owner        uint32
	older, newer int32
}

// callIndexKey is a callKey packed into 12 octets for the index (a
// callKey's padding would make each slot 24).
type callIndexKey struct{ connHi, connLo, xid uint32 }

func (k callKey) indexKey() callIndexKey {
	return callIndexKey{uint32(k.conn >> 32), uint32(k.conn), k.xid}
}

func (k callIndexKey) Hash() uint32 {
	return uint32((uint64(k.connHi)<<32 | uint64(k.connLo) ^ uint64(k.xid)) * 0x9e3779b97f4a7c15 >> 32)
}

// callChunk is the number of pool entries allocated at once.
const callChunk = 1024

// entry is the pool entry at pos (unsigned: a shift and a mask, where
// a signed division corrects for negative positions).
func (c *callTable) entry(pos int) *callEntry {
	p := uint(pos)
	return &c.pool[p/callChunk][p%callChunk]
}

// forget removes the outstanding call at pos: from the index, from the
// order, into the free entries.
func (c *callTable) forget(pos int) {
	e := c.entry(pos)
	if e.info.chunk != 0 && c.chunks != nil {
		c.chunks.forget(e.info.chunk, e.key.conn, e.key.xid)
		e.info.chunk = 0
	}
	c.idx.Delete(e.key.indexKey())
	if e.owner != 0 {
		c.disown(e, pos)
	}
	if e.prev != 0 {
		c.entry(int(e.prev) - 1).next = e.next
	} else {
		c.oldest = e.next
	}
	if e.next != 0 {
		c.entry(int(e.next) - 1).prev = e.prev
	} else {
		c.newest = e.prev
	}
	e.prev, e.next = 0, c.free
	c.free = int32(pos + 1)
	c.n--
}

// disown unlinks the call e (at pos) from its connection's calls.
func (c *callTable) disown(e *callEntry, pos int) {
	if e.older != 0 {
		c.entry(int(e.older) - 1).newer = e.newer
	}
	if e.newer != 0 {
		c.entry(int(e.newer) - 1).older = e.older
	} else {
		c.owners[e.owner] = e.older
	}
	e.owner, e.older, e.newer = 0, 0, 0
}

// end forgets the outstanding calls of connection owner, which ended:
// no reply comes for them now, and their chunks are not used.
func (c *callTable) end(owner uint32) {
	for int(owner) < len(c.owners) && c.owners[owner] != 0 {
		c.forget(int(c.owners[owner]) - 1)
	}
}

// MatchCall implements rpcrdma.CallMatcher.
func (c *callTable) MatchCall(r *rpcrdma.RPC) {
	k := callKey{conn: c.conn, xid: r.XID}
	ik := k.indexKey()
	pos, found := c.idx.Get(ik)
	if r.MsgType == rpcrdma.MsgReply {
		ci := c.reply(k, pos, found, true)
		if ci != nil {
			r.SetCallRef(ci.ref())
			if ci.gss {
				r.SetCallGSS(ci.gssProc, ci.gssSvc)
			}
		}
		return
	}
	info := callInfo{prog: r.Program, vers: r.ProgVersion, proc: r.Procedure,
		gss: r.HasGSS, gssProc: r.GSS.Proc, gssSvc: r.GSS.Service, frame: c.frame, time: c.time}
	if found {
		c.again(r, pos, info)
		return
	}
	if c.n >= min(max(c.max, 1), 1<<30) {
		c.forget(int(c.oldest) - 1)
	}
	if c.free != 0 {
		pos = int(c.free) - 1
		c.free = c.entry(pos).next
	} else {
		pos = c.grow()
	}
	c.matched = int32(pos + 1)
	e := c.entry(pos)
	*e = callEntry{key: k, info: info, prev: c.newest}
	if c.owner != 0 {
		c.own(e, pos)
	}
	if c.newest != 0 {
		c.entry(int(c.newest) - 1).next = int32(pos + 1)
	} else {
		c.oldest = int32(pos + 1)
	}
	c.newest = int32(pos + 1)
	c.n++
	c.idx.Set(ik, pos)
}

// again takes the call r, outstanding at pos, sent again (retransmitted),
// as info: it keeps its place in the order and its first frame and time
// (tshark's response time is from the first call too).
//
//go:noinline
func (c *callTable) again(r *rpcrdma.RPC, pos int, info callInfo) {
	c.matched = int32(pos + 1)
	e := c.entry(pos)
	// Its chunks stay, with what moved in them already (the Send sent
	// again after a lost ACK, the Writes done); the decoder replaces them
	// if this call advertises others.
	info.chunk = e.info.chunk
	info.frame, info.time = e.info.frame, e.info.time
	r.Call = e.info.ref()
	e.info = info
}

// grow adds an entry to the pool and returns its position.
//
//go:noinline
func (c *callTable) grow() int {
	pos := c.size
	if pos%callChunk == 0 {
		c.pool = append(c.pool, make([]callEntry, callChunk))
	}
	c.size++
	return pos
}

// own links the new call e (at pos) to the calls of its connection.
func (c *callTable) own(e *callEntry, pos int) {
	e.owner = c.owner
	for int(c.owner) >= len(c.owners) {
		c.owners = append(c.owners, 0)
	}
	if p := c.owners[c.owner]; p != 0 {
		e.older = p
		c.entry(int(p) - 1).newer = int32(pos + 1)
	}
	c.owners[c.owner] = int32(pos + 1)
}

// call returns the outstanding call xid on the current connection (nil:
// none): the one MatchCall took last when it has that xid, else as the
// index finds it.
func (c *callTable) call(xid uint32) *callEntry {
	if c.matched != 0 {
		if e := c.entry(int(c.matched) - 1); e.key == (callKey{c.conn, xid}) {
			return e
		}
	}
	if pos, ok := c.idx.Get(callKey{conn: c.conn, xid: xid}.indexKey()); ok {
		return c.entry(pos)
	}
	return nil
}

// setChunk records the reply chunk chain of the outstanding call xid on
// the current connection.
func (c *callTable) setChunk(xid uint32, chain int) {
	if e := c.call(xid); e != nil {
		e.info.chunk = chain
	}
}

// chunkOf returns the chunk chain of the outstanding call xid on the
// current connection (0: none).
func (c *callTable) chunkOf(xid uint32) int {
	if e := c.call(xid); e != nil {
		return e.info.chunk
	}
	return 0
}

// reply returns the call a reply with key k answers (nil: none known):
// the outstanding call at pos when found, which becomes one of the recent
// answered calls, else one of those (the reply sent again) when again.
func (c *callTable) reply(k callKey, pos int, found, again bool) *callInfo {
	if found {
		e := c.entry(pos)
		c.answered = answeredCall{chunk: e.info.chunk, xid: k.xid, ok: true}
		e.info.chunk = 0
		c.recent[c.next] = answered{key: k, info: e.info}
		ci := &c.recent[c.next].info
		c.next = (c.next + 1) % recentCalls
		c.forget(pos)
		return ci
	}
	if !again {
		return nil
	}
	for j := 1; j <= recentCalls; j++ { // newest first
		if e := &c.recent[(c.next+recentCalls-j)%recentCalls]; e.key == k && e.info != (callInfo{}) {
			return &e.info
		}
	}
	return nil
}

// answeredBy takes an RDMA_NOMSG or RDMA_ERROR with this xid on the current
// connection as the reply of an outstanding call: it returns the call
// (Frame 0: none). One sent again answers nothing (as in tshark, whose
// reply-chunk reassembly does not see the RDMA Writes of the first one
// again); a later RDMA_MSG reply is still named as one sent again.
func (c *callTable) answeredBy(xid uint32) rpcrdma.CallRef {
	k := callKey{conn: c.conn, xid: xid}
	pos, found := c.idx.Get(k.indexKey())
	if ci := c.reply(k, pos, found, false); ci != nil {
		return ci.ref()
	}
	return rpcrdma.CallRef{}
}

// connHash identifies the connection of the frame in rec regardless of
// direction (so a reply finds its call): the FastHash of netFlowOf(rec),
// 0 without addresses, computed from the addresses where the layers hold
// them (building the gopacket.Flow copies both into 16-octet arrays per
// Send); made once per frame the Dissector decoded.
func connHash(rec *Record) uint64 {
	if rec.hashDone {
		return rec.flowHash
	}
	var lids [4]byte
	typ, src, dst, ok := flowAddrs(rec, &lids)
	if !ok {
		rec.flowHash, rec.hashDone = 0, rec.hdrSet
		return 0
	}
	return hashFlow(rec, typ, src, dst)
}

// hashFlow makes connHash's hash of rec from its addresses (flowAddrs).
func hashFlow(rec *Record, typ gopacket.EndpointType, src, dst []byte) uint64 {
	h := flowHash(typ, src, dst)
	rec.flowHash, rec.hashDone = h, rec.hdrSet
	return h
}

// fnvBasis and fnvPrime are gopacket's (64-bit FNV-1).
const (
	fnvBasis = 14695981039346656037
	fnvPrime = 1099511628211
)

// fnvHash is gopacket's FNV-1 hash of an endpoint's octets; the 4-octet
// addresses of IPv4, nearly every Send's, without the loop's counting.
func fnvHash(b []byte) uint64 {
	h := uint64(fnvBasis)
	if len(b) == 4 {
		h = (h ^ uint64(b[0])) * fnvPrime
		h = (h ^ uint64(b[1])) * fnvPrime
		h = (h ^ uint64(b[2])) * fnvPrime
		return (h ^ uint64(b[3])) * fnvPrime
	}
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// flowHash is gopacket.NewFlow(typ, src, dst).FastHash().
func flowHash(typ gopacket.EndpointType, src, dst []byte) uint64 {
	h := fnvHash(src) + fnvHash(dst)
	h ^= uint64(typ)
	return h * fnvPrime
}
