package dissect

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/posindex"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// This file decodes complete RDMA Send payloads as RPC-over-RDMA (the
// decodeSend hook) and reassembles InfiniBand/RoCE RC Sends that span
// several packets (SEND_FIRST … SEND_LAST) by PSN (the ibSendPiece hook).

// SendsConfig bounds the RC Send reassembly and the RPC-over-RDMA decoding
// of Sends. Zero fields take the defaults of DefaultSendsConfig.
type SendsConfig struct {
	// MaxSendBytes caps one reassembled Send.
	MaxSendBytes int
	// MaxBufferedBytes caps the octets held for all partial Sends.
	MaxBufferedBytes int
	// MaxQPs caps the QPs tracked at once (least recently used evicted).
	MaxQPs int
	// MaxChunkSegments caps the segments of one RPC-over-RDMA chunk list.
	MaxChunkSegments int
	// MaxCalls caps the outstanding RPC calls remembered to name replies.
	MaxCalls int
}

// DefaultSendsConfig: 1 MiB Sends, 16 MiB buffered, 4096 QPs, 1024
// segments per chunk list, 65536 outstanding calls.
func DefaultSendsConfig() SendsConfig {
	return SendsConfig{MaxSendBytes: 1 << 20, MaxBufferedBytes: 16 << 20, MaxQPs: 4096,
		MaxChunkSegments: rpcrdma.DefaultMaxSegments, MaxCalls: 1 << 16}
}

func (c SendsConfig) withDefaults() SendsConfig {
	d := DefaultSendsConfig()
	if c.MaxSendBytes <= 0 {
		c.MaxSendBytes = d.MaxSendBytes
	}
	if c.MaxBufferedBytes <= 0 {
		c.MaxBufferedBytes = d.MaxBufferedBytes
	}
	if c.MaxQPs <= 0 {
		c.MaxQPs = d.MaxQPs
	}
	if c.MaxChunkSegments <= 0 {
		c.MaxChunkSegments = d.MaxChunkSegments
	}
	if c.MaxCalls <= 0 {
		c.MaxCalls = d.MaxCalls
	}
	return c
}

// QPKey names the receive side of an RC QP: the network endpoints (IP
// addresses for RoCEv2, GIDs for RoCEv1/GRH, LIDs for native IB) and the
// destination QP number.
type QPKey struct {
	Net    gopacket.Flow
	DestQP uint32
}

// QPKeyOf builds the key of the packet in rec from its innermost
// addressing layer.
func QPKeyOf(rec *Record, destQP uint32) QPKey {
	return QPKey{Net: netFlowOf(rec), DestQP: destQP}
}

var lidEndpoint = gopacket.RegisterEndpointType(1910, gopacket.EndpointTypeMetadata{Name: "IB LID",
	Formatter: func(b []byte) string { return fmt.Sprintf("LID %d", uint16(b[0])<<8|uint16(b[1])) }})

// netFlowOf is the flow of rec's addresses (flowAddrs), the zero Flow
// without any.
func netFlowOf(rec *Record) gopacket.Flow {
	var lids [4]byte
	typ, src, dst, ok := flowAddrs(rec, &lids)
	if !ok {
		return gopacket.Flow{}
	}
	return gopacket.NewFlow(typ, src, dst)
}

// flowAddrs picks the addresses that identify rec's connection: those of
// its last IPv4, IPv6 or GRH layer, else of its first LRH (the LIDs, written
// into lids). Scanned from the end, it stops at the addressing layer nearest
// the transport instead of walking every layer. netFlowOf (the Send
// reassembly's QP keys) and connHash (the RPC call table's) use it.
func flowAddrs(rec *Record, lids *[4]byte) (typ gopacket.EndpointType, src, dst []byte, ok bool) {
	var lrh *ibcm.LRH
	for i := len(rec.Layers) - 1; i >= 0; i-- {
		switch x := rec.Layers[i].(type) {
		case *IPv4:
			return layers.EndpointIPv4, x.SrcIP, x.DstIP, true
		case *IPv6:
			return layers.EndpointIPv6, x.SrcIP, x.DstIP, true
		case *ibcm.GRH:
			return layers.EndpointIPv6, x.SGID[:], x.DGID[:], true
		case *ibcm.LRH:
			lrh = x
		}
	}
	if lrh == nil {
		return 0, nil, nil, false
	}
	*lids = [4]byte{byte(lrh.SLID >> 8), byte(lrh.SLID), byte(lrh.DLID >> 8), byte(lrh.DLID)}
	return lidEndpoint, lids[:2], lids[2:], true
}

// RCSendStats counts what the reassembly saw.
type RCSendStats struct {
	// Packets of multi-packet Sends; Sends completed and handed on;
	// Duplicates (retransmitted packets ignored); OutOfSequence (packets
	// ahead of the expected PSN, ignored); Dropped partial Sends.
	Packets, Sends, Duplicates, OutOfSequence, Dropped int
}

// rcQP is the reassembly state of one QP.
type rcQP struct {
	key        QPKey
	active     bool   // a Send is being reassembled
	dropping   bool   // the rest of a broken Send is ignored until FIRST/ONLY
	gapSeen    bool   // an out-of-sequence packet was reported for this Send
	first      uint32 // PSN of its SEND_FIRST
	next       uint32 // PSN expected next
	firstFrame int
	buf        []byte
	// newer and older link the QPs in the order they were last used
	// (RCSends.newest … oldest).
	newer, older *rcQP
	// The PSN range of the last completed Send, to recognise its
	// retransmitted packets.
	hasDone             bool
	doneFirst, doneLast uint32
}

// RCSends reassembles multi-packet RC Sends (SEND_FIRST, SEND_MIDDLE,
// SEND_LAST[_IMM|_INV]) per QP in PSN order and hands each complete Send to
// decodeSend. Retransmitted packets (PSN before the one expected, or of
// the Send just completed) are ignored; a PSN gap drops the Send with a
// finding. Memory is bounded by SendsConfig.
type RCSends struct {
	cfg SendsConfig
	qps map[QPKey]*rcQP
	// recent holds the QPs used last, by the low bits of their number:
	// a Send's packets mostly follow each other on a few QPs, and
	// comparing a key is cheaper than hashing it for the map.
	recent   [8]*rcQP
	buffered int
	// newest and oldest are the ends of the QPs' order of last use: the
	// least recently used is found without a walk over every QP (it was a
	// walk per QP added beyond MaxQPs: on the 2M bench capture, 8000 QPs
	// over a bound of 4096, about 6% of the decoding).
	newest, oldest *rcQP
	stats          RCSendStats
	// free holds emptied large buffers for reuse (freeBytes of capacity).
	free      [][]byte
	freeBytes int
}

// NewRCSends returns an empty reassembly bounded by cfg (zero fields:
// defaults).
func NewRCSends(cfg SendsConfig) *RCSends {
	return &RCSends{cfg: cfg.withDefaults(), qps: map[QPKey]*rcQP{}}
}

// Stats returns the counters so far.
func (s *RCSends) Stats() RCSendStats { return s.stats }

// Buffered returns the octets held for partial Sends.
func (s *RCSends) Buffered() int { return s.buffered }

// psnDiff is a−b in 24-bit PSN arithmetic, in −2²³ … 2²³−1.
func psnDiff(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

func psnIn(p, lo, hi uint32) bool { return psnDiff(p, lo) >= 0 && psnDiff(hi, p) >= 0 }

func addFinding(rec *Record, code string, sev finding.Severity, msg string) {
	rec.Findings = append(rec.Findings, finding.Finding{Code: code, Severity: sev, Message: msg,
		Section: Catalog.Section(code), Frame: rec.Frame, Layer: "bth", Offset: -1})
}

func (s *RCSends) qp(rec *Record, key QPKey) *rcQP {
	r := &s.recent[key.DestQP%uint32(len(s.recent))]
	q := *r
	if q == nil || q.key != key {
		q = s.qps[key]
		if q == nil {
			if len(s.qps) >= s.cfg.MaxQPs {
				s.evictLRU(rec)
			}
			q = &rcQP{key: key}
			s.qps[key] = q
			s.pushNewest(q)
		}
		*r = q
	}
	if s.newest != q {
		s.unlink(q)
		s.pushNewest(q)
	}
	return q
}

func (s *RCSends) pushNewest(q *rcQP) {
	q.newer, q.older = nil, s.newest
	if s.newest != nil {
		s.newest.newer = q
	} else {
		s.oldest = q
	}
	s.newest = q
}

func (s *RCSends) unlink(q *rcQP) {
	if q.newer != nil {
		q.newer.older = q.older
	} else {
		s.newest = q.older
	}
	if q.older != nil {
		q.older.newer = q.newer
	} else {
		s.oldest = q.newer
	}
	q.newer, q.older = nil, nil
}

// evictLRU forgets the least recently used QP, preferring one with no
// partial Send.
func (s *RCSends) evictLRU(rec *Record) {
	victim := s.oldest
	for q := s.oldest; q != nil; q = q.newer {
		if !q.active {
			victim = q
			break
		}
	}
	if victim == nil {
		return
	}
	if victim.active {
		addFinding(rec, CodeSendLimit, finding.SeverityWarning, fmt.Sprintf(
			"%d QPs tracked (limit %d): the partial Send of QP 0x%06x (first frame %d, %d octets) is dropped",
			len(s.qps), s.cfg.MaxQPs, victim.key.DestQP, victim.firstFrame, len(victim.buf)))
		s.abort(victim)
	}
	delete(s.qps, victim.key)
	s.unlink(victim)
	if r := &s.recent[victim.key.DestQP%uint32(len(s.recent))]; *r == victim {
		*r = nil
	}
}

func (s *RCSends) abort(q *rcQP) {
	if q.active {
		s.stats.Dropped++
	}
	s.buffered -= len(q.buf)
	q.active = false
	s.release(q)
}

// maxFreeBytes bounds the capacity of the buffers RCSends keeps for reuse.
const maxFreeBytes = 8 << 20

// release empties q's buffer into the free list (bounded) for the next
// Send of any QP: buffers follow the Sends in progress, not the QPs seen
// (a buffer left with each QP made memory grow with the QPs of a long
// capture, up to MaxQPs of them).
func (s *RCSends) release(q *rcQP) {
	if cap(q.buf) == 0 {
		return
	}
	if s.freeBytes+cap(q.buf) <= maxFreeBytes {
		s.free = append(s.free, q.buf[:0])
		s.freeBytes += cap(q.buf)
	}
	q.buf = nil
}

// grow gives q's buffer room for n more octets, from the free list when
// its own capacity is short.
func (s *RCSends) grow(q *rcQP, n int) {
	if len(q.buf)+n <= cap(q.buf) || len(s.free) == 0 {
		return
	}
	i := len(s.free) - 1
	b := s.free[i]
	if cap(b) <= cap(q.buf) {
		return
	}
	s.free = s.free[:i]
	s.freeBytes -= cap(b)
	b = append(b, q.buf...)
	if cap(q.buf) > 0 && s.freeBytes+cap(q.buf) <= maxFreeBytes {
		s.free = append(s.free, q.buf[:0])
		s.freeBytes += cap(q.buf)
	}
	q.buf = b
}

// Packet takes one RC Send packet: op its BTH opcode, psn its PSN,
// invRKey the IETH R_Key of SEND_LAST_WITH_INVALIDATE, payload what follows
// the BTH and extension headers (without pad and ICRC). SEND_ONLY packets
// are decoded at once (and end any partial Send on the QP).
func (s *RCSends) Packet(rec *Record, key QPKey, op ibcm.Opcode, psn, invRKey uint32, payload []byte) {
	psn &= 0xffffff
	q := s.qp(rec, key)
	switch op {
	case ibcm.OpRCSendOnly, ibcm.OpRCSendOnlyImm, ibcm.OpRCSendOnlyInv:
		if q.hasDone && psnIn(psn, q.doneFirst, q.doneLast) && !q.active {
			s.stats.Duplicates++
			return
		}
		s.incomplete(rec, q, "a SEND_ONLY")
		q.dropping = false
		q.hasDone, q.doneFirst, q.doneLast = true, psn, psn
		s.stats.Sends++
		if decodeSend != nil {
			decodeSend(rec, payload, SendInfo{Transport: "ib", FirstFrame: rec.Frame, LastFrame: rec.Frame,
				Invalidate: op == ibcm.OpRCSendOnlyInv, InvalidateSTag: invRKey, Length: len(payload)})
		}
		return
	case ibcm.OpRCSendFirst:
		s.stats.Packets++
		if q.active && psn == q.first {
			// The SEND_FIRST again: the requester went back to it.
			s.stats.Duplicates++
			s.buffered -= len(q.buf)
			q.buf = q.buf[:0]
			q.firstFrame = rec.Frame
		} else {
			if !q.active && q.hasDone && psnIn(psn, q.doneFirst, q.doneLast) {
				s.stats.Duplicates++
				return
			}
			s.incomplete(rec, q, "a SEND_FIRST")
			q.active, q.first, q.firstFrame, q.gapSeen = true, psn, rec.Frame, false
		}
		q.dropping = false
		q.next = (psn + 1) & 0xffffff
		s.add(rec, q, payload)
		return
	case ibcm.OpRCSendMiddle, ibcm.OpRCSendLast, ibcm.OpRCSendLastImm, ibcm.OpRCSendLastInv:
	default:
		return
	}
	s.stats.Packets++
	if !q.active {
		switch {
		case q.hasDone && psnIn(psn, q.doneFirst, q.doneLast):
			s.stats.Duplicates++
		case q.dropping:
		default:
			addFinding(rec, CodeSendOrphan, finding.SeverityInfo, fmt.Sprintf(
				"%s PSN %d on QP 0x%06x without its SEND_FIRST (the capture starts inside the Send)", op, psn, key.DestQP))
			q.dropping = true
		}
		return
	}
	switch d := psnDiff(psn, q.next); {
	case d < 0:
		s.stats.Duplicates++ // retransmitted packet already placed
		return
	case d > 0:
		// Out of sequence: the responder discards it and NAKs, and the
		// requester goes back to the missing PSN, so wait for that. If the
		// capture lost the packet, the Send stays partial and is reported
		// incomplete.
		if !q.gapSeen {
			q.gapSeen = true
			addFinding(rec, CodeSendGap, finding.SeverityInfo, fmt.Sprintf(
				"QP 0x%06x: %s PSN %d, expected PSN %d (Send begun in frame %d): out of sequence, ignored as the responder does; waiting for the retransmission",
				key.DestQP, op, psn, q.next, q.firstFrame))
		}
		s.stats.OutOfSequence++
		return
	}
	q.next = (psn + 1) & 0xffffff
	if !s.add(rec, q, payload) {
		return
	}
	if op == ibcm.OpRCSendMiddle {
		return
	}
	q.active = false
	q.hasDone, q.doneFirst, q.doneLast = true, q.first, psn
	s.stats.Sends++
	s.buffered -= len(q.buf)
	if decodeSend != nil {
		decodeSend(rec, q.buf, SendInfo{Transport: "ib", FirstFrame: q.firstFrame, LastFrame: rec.Frame,
			Invalidate: op == ibcm.OpRCSendLastInv, InvalidateSTag: invRKey, Length: len(q.buf)})
	}
	s.release(q)
}

// add appends payload to q's Send within the limits; false when the Send
// was dropped.
func (s *RCSends) add(rec *Record, q *rcQP, payload []byte) bool {
	if len(q.buf)+len(payload) > s.cfg.MaxSendBytes {
		addFinding(rec, CodeSendLimit, finding.SeverityWarning, fmt.Sprintf(
			"QP 0x%06x: the Send begun in frame %d exceeds the reassembly limit of %d octets; it is not decoded",
			q.key.DestQP, q.firstFrame, s.cfg.MaxSendBytes))
		s.abort(q)
		q.dropping = true
		return false
	}
	for s.buffered+len(payload) > s.cfg.MaxBufferedBytes {
		oldest := s.oldestActive(q)
		if oldest == nil {
			addFinding(rec, CodeSendLimit, finding.SeverityWarning, fmt.Sprintf(
				"QP 0x%06x: buffering %d more octets would pass the limit of %d for all partial Sends; the Send is not decoded",
				q.key.DestQP, len(payload), s.cfg.MaxBufferedBytes))
			s.abort(q)
			q.dropping = true
			return false
		}
		addFinding(rec, CodeSendLimit, finding.SeverityWarning, fmt.Sprintf(
			"%d octets buffered for partial Sends (limit %d): the Send of QP 0x%06x begun in frame %d is dropped",
			s.buffered, s.cfg.MaxBufferedBytes, oldest.key.DestQP, oldest.firstFrame))
		s.abort(oldest)
		oldest.dropping = true
	}
	s.grow(q, len(payload))
	q.buf = append(q.buf, payload...)
	s.buffered += len(payload)
	return true
}

func (s *RCSends) oldestActive(except *rcQP) *rcQP {
	for q := s.oldest; q != nil; q = q.newer {
		if q.active && q != except {
			return q
		}
	}
	return nil
}

func (s *RCSends) incomplete(rec *Record, q *rcQP, what string) {
	if !q.active {
		return
	}
	addFinding(rec, CodeSendIncomplete, finding.SeverityWarning, fmt.Sprintf(
		"QP 0x%06x: %s arrived before the SEND_LAST of the Send begun in frame %d (PSN %d, %d octets so far); that Send is not decoded",
		q.key.DestQP, what, q.firstFrame, q.first, len(q.buf)))
	s.abort(q)
}

// Flush ends the input: every partial Send is reported incomplete (in the
// order they began) and forgotten.
func (s *RCSends) Flush(rec *Record) {
	var open []*rcQP
	for _, q := range s.qps {
		if q.active {
			open = append(open, q)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].firstFrame < open[j].firstFrame })
	for _, q := range open {
		addFinding(rec, CodeSendIncomplete, finding.SeverityWarning, fmt.Sprintf(
			"QP 0x%06x: the capture ended before the SEND_LAST of the Send begun in frame %d (PSN %d, %d octets); it is not decoded",
			q.key.DestQP, q.firstFrame, q.first, len(q.buf)))
		s.abort(q)
	}
	clear(s.qps)
	clear(s.recent[:])
	s.newest, s.oldest = nil, nil
	s.buffered = 0
}

// sendState is what one Dissector keeps for Sends: the RC reassembly, the
// per-frame pool of decoded messages (Records are reused, so layers are
// pooled per frame) and the outstanding RPC calls by xid.
type sendState struct {
	cfg   SendsConfig
	rc    *RCSends
	frame int
	msgs  []*rpcrdma.Message
	used  int
	calls callTable
}

// The hooks below receive only the Record, so the state of each Dissector
// hangs off its (reused) Record, made on first use; Reset keeps it. (It was
// found in a map of weak pointers under a mutex: a lock and a map lookup
// per Send packet, a visible share of the per-packet cost.)
func stateFor(rec *Record) *sendState {
	if st := rec.sends; st != nil {
		return st
	}
	cfg := DefaultSendsConfig()
	st := &sendState{cfg: cfg, rc: NewRCSends(cfg), frame: -1}
	rec.sends = st
	return st
}

// SetSendsConfig sets the limits of the Send reassembly and RPC-over-RDMA
// decoding of d (before the first frame; partial Sends are dropped).
func (d *Dissector) SetSendsConfig(cfg SendsConfig) {
	st := stateFor(&d.rec)
	st.cfg = cfg.withDefaults()
	st.rc = NewRCSends(st.cfg)
	st.calls = callTable{}
}

// SendStats returns d's RC Send reassembly counters.
func (d *Dissector) SendStats() RCSendStats { return stateFor(&d.rec).rc.Stats() }

// flushSends reports the RC Sends still partial at the end of input into
// rec (the Dissector calls it from its end-of-input flush).
func flushSends(rec *Record) {
	stateFor(rec).rc.Flush(rec)
}

func init() {
	decodeSend = decodeRPCRDMASend
	ibSendPiece = func(rec *Record, bth *ibcm.BTH, payload []byte) {
		var inv uint32
		if bth.OpCode == ibcm.OpRCSendLastInv {
			for _, l := range rec.Layers {
				if e, ok := l.(*ibcm.IETH); ok {
					inv = e.RKey
				}
			}
		}
		stateFor(rec).rc.Packet(rec, QPKeyOf(rec, bth.DestQP), bth.OpCode, bth.PSN, inv, payload)
	}
}

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
	pool [][]callEntry // in chunks of callChunk entries: growing copies nothing
	size int           // entries in the pool
	// free, oldest and newest are pool positions plus one (0: none): the
	// free entries, linked by next; the outstanding calls, oldest first.
	free, oldest, newest int32
	n                    int // outstanding calls
	idx                  posindex.Index[callIndexKey]
}

type callKey struct {
	conn uint64
	xid  uint32
}

type callInfo struct {
	prog, vers, proc uint32
	gss              bool
	gssProc, gssSvc  uint32
}

type callEntry struct {
	key        callKey
	info       callInfo
	prev, next int32 // links, positions plus one
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

func (c *callTable) entry(pos int) *callEntry {
	return &c.pool[pos/callChunk][pos%callChunk]
}

// forget removes the outstanding call at pos: from the index, from the
// order, into the free entries.
func (c *callTable) forget(pos int) {
	e := c.entry(pos)
	c.idx.Delete(e.key.indexKey())
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

// MatchCall implements rpcrdma.CallMatcher.
func (c *callTable) MatchCall(r *rpcrdma.RPC) {
	k := callKey{conn: c.conn, xid: r.XID}
	ik := k.indexKey()
	pos, found := c.idx.Get(ik)
	if r.MsgType == rpcrdma.MsgReply {
		if found {
			ci := &c.entry(pos).info
			r.SetCall(ci.prog, ci.vers, ci.proc)
			if ci.gss {
				r.SetCallGSS(ci.gssProc, ci.gssSvc)
			}
			c.forget(pos)
		}
		return
	}
	info := callInfo{prog: r.Program, vers: r.ProgVersion, proc: r.Procedure,
		gss: r.HasGSS, gssProc: r.GSS.Proc, gssSvc: r.GSS.Service}
	if found {
		// The call again (retransmitted): it keeps its place in the order.
		c.entry(pos).info = info
		return
	}
	if c.n >= min(max(c.max, 1), 1<<30) {
		c.forget(int(c.oldest) - 1)
	}
	if c.free != 0 {
		pos = int(c.free) - 1
		c.free = c.entry(pos).next
	} else {
		pos = c.size
		if pos%callChunk == 0 {
			c.pool = append(c.pool, make([]callEntry, callChunk))
		}
		c.size++
	}
	*c.entry(pos) = callEntry{key: k, info: info, prev: c.newest}
	if c.newest != 0 {
		c.entry(int(c.newest) - 1).next = int32(pos + 1)
	} else {
		c.oldest = int32(pos + 1)
	}
	c.newest = int32(pos + 1)
	c.n++
	c.idx.Set(ik, pos)
}

// answered forgets the outstanding call with this xid on the current
// connection, if there is one.
func (c *callTable) answered(xid uint32) {
	if pos, ok := c.idx.Get(callKey{conn: c.conn, xid: xid}.indexKey()); ok {
		c.forget(pos)
	}
}

// frameOffset is where payload starts in the frame's bytes, or -1 when it
// is not inside them (reassembled).
func frameOffset(data, payload []byte) int {
	if len(payload) == 0 || len(data) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(payload)))
	if p < d || p+uintptr(len(payload)) > d+uintptr(len(data)) {
		return -1
	}
	return int(p - d)
}

// decodeRPCRDMASend is the decodeSend hook: it decodes a complete Send
// payload as RPC-over-RDMA, appends the rpcrdma, rpc and nfs layers to rec
// and the findings of those layers (Frame set; Offset from the start of
// the frame, or -1 when the Send was reassembled). The Dissector must not
// collect these layers' findings again.
func decodeRPCRDMASend(rec *Record, payload []byte, info SendInfo) {
	st := stateFor(rec)
	if st.frame != rec.Frame || (st.used > 0 && !holds(rec, st.msgs[st.used-1])) {
		// A new frame (or the Record was reset): the pooled layers are
		// free again.
		st.frame, st.used = rec.Frame, 0
	}
	if st.used == len(st.msgs) {
		st.msgs = append(st.msgs, &rpcrdma.Message{})
	}
	m := st.msgs[st.used]
	st.used++
	m.Header.MaxSegments = st.cfg.MaxChunkSegments
	st.calls.max = st.cfg.MaxCalls
	st.calls.conn = connHash(rec)
	err := m.Decode(payload, &st.calls)
	if m.HasHeader && !m.HasRPC && m.Header.Known() && (m.Header.Proc == rpcrdma.ProcNoMsg || m.Header.Proc == rpcrdma.ProcError) {
		// RDMA_NOMSG without an RPC message in the Send: the responder's
		// reply went by RDMA Write into the reply chunk (RFC 8166 §3.5.3,
		// §4.2.4), or the requester's call is in a position-zero Read chunk;
		// RDMA_ERROR answers a call. Either way the transport header's xid
		// is the RPC's: an outstanding call with this xid on the connection
		// is answered (a requester does not send a new call with the xid of
		// one it is still waiting for), and no longer kept for naming a
		// reply.
		st.calls.answered(m.Header.XID)
	}

	base := -1
	if info.FirstFrame == info.LastFrame {
		base = frameOffset(rec.Data, payload)
	}
	at := func(rel int) int {
		if base < 0 {
			return -1
		}
		return base + rel
	}
	if m.HasHeader {
		rec.Add(&m.Header, at(0))
	}
	if m.HasRPC {
		rec.Add(&m.RPC, at(m.RPCOffset))
	}
	if m.HasNFS {
		rec.Add(&m.NFS, at(m.NFSOffset()))
	}
	first := len(rec.Findings)
	rec.Findings = m.AppendFindings(rec.Findings)
	if err != nil {
		if e, ok := err.(*rpcrdma.Error); ok {
			rec.Findings = append(rec.Findings, e.Finding())
		} else {
			rec.Findings = append(rec.Findings, finding.Finding{Code: CodeMalformed, Severity: finding.SeverityError,
				Message: err.Error(), Layer: "rpcrdma", Offset: -1})
		}
	}
	for i := first; i < len(rec.Findings); i++ {
		f := &rec.Findings[i]
		f.Frame = rec.Frame
		if f.Offset >= 0 {
			f.Offset = at(f.Offset)
		}
	}
}

// holds reports whether rec still lists m's header (or m decoded nothing
// the record kept).
func holds(rec *Record, m *rpcrdma.Message) bool {
	if !m.HasHeader {
		return true
	}
	for _, l := range rec.Layers {
		if l == field.Layer(&m.Header) {
			return true
		}
	}
	return false
}

// connHash identifies the connection of the frame in rec regardless of
// direction (so a reply finds its call): the FastHash of netFlowOf(rec),
// 0 without addresses, computed from the addresses where the layers hold
// them (building the gopacket.Flow copies both into 16-octet arrays per
// Send).
func connHash(rec *Record) uint64 {
	var lids [4]byte
	typ, src, dst, ok := flowAddrs(rec, &lids)
	if !ok {
		return 0
	}
	return flowHash(typ, src, dst)
}

// fnvBasis and fnvPrime are gopacket's (64-bit FNV-1).
const (
	fnvBasis = 14695981039346656037
	fnvPrime = 1099511628211
)

func fnvHash(b []byte) uint64 {
	h := uint64(fnvBasis)
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
