package dissect

import (
	"fmt"
	"sort"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// This file reassembles InfiniBand/RoCE RC Sends that span several packets
// (SEND_FIRST … SEND_LAST) by PSN, per QP.

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
// without any; made once per frame the Dissector decoded.
func netFlowOf(rec *Record) gopacket.Flow {
	if rec.flowDone {
		return rec.flow
	}
	var flow gopacket.Flow
	var lids [4]byte
	if typ, src, dst, ok := flowAddrs(rec, &lids); ok {
		flow = gopacket.NewFlow(typ, src, dst)
	}
	rec.flow, rec.flowDone = flow, rec.hdrSet
	return flow
}

// flowAddrs picks the addresses that identify rec's connection: those of
// the innermost of its IP header and GRH, else of its LRH (the LIDs,
// written into lids).
func flowAddrs(rec *Record, lids *[4]byte) (typ gopacket.EndpointType, src, dst []byte, ok bool) {
	h := rec.Headers()
	switch {
	case h.GRH != nil && h.GRHInner:
		return layers.EndpointIPv6, h.GRH.SGID[:], h.GRH.DGID[:], true
	case h.IPv4 != nil:
		return layers.EndpointIPv4, h.IPv4.SrcIP, h.IPv4.DstIP, true
	case h.IPv6 != nil:
		return layers.EndpointIPv6, h.IPv6.SrcIP, h.IPv6.DstIP, true
	case h.LRH != nil:
		*lids = [4]byte{byte(h.LRH.SLID >> 8), byte(h.LRH.SLID), byte(h.LRH.DLID >> 8), byte(h.LRH.DLID)}
		return lidEndpoint, lids[:2], lids[2:], true
	}
	return 0, nil, nil, false
}

// sendOn hands the payload of an RC Send packet, whose layers are in r,
// on: single-packet Sends (SEND_ONLY, with immediate data or invalidate;
// invRKey is the IETH's R_Key) straight to the RPC-over-RDMA decoder, the
// pieces of multi-packet Sends to the reassembly, which hands it each
// complete Send.
func (d *Dissector) sendOn(r *Record, bth *ibcm.BTH, invRKey uint32, payload []byte) {
	switch bth.OpCode {
	case ibcm.OpRCSendOnly, ibcm.OpRCSendOnlyImm, ibcm.OpRCSendOnlyInv:
		info := SendInfo{Transport: "ib", FirstFrame: r.Frame, LastFrame: r.Frame, Length: len(payload),
			qp: d.sends.qpOf(r, bth.DestQP)}
		if bth.OpCode == ibcm.OpRCSendOnlyInv {
			info.Invalidate, info.InvalidateSTag = true, invRKey
		}
		d.sends.decode(r, payload, &info)
	default:
		var inv uint32
		if e := r.Headers().IETH; e != nil && bth.OpCode == ibcm.OpRCSendLastInv {
			inv = e.RKey
		}
		d.rc.Packet(r, QPKeyOf(r, bth.DestQP), bth.OpCode, bth.PSN, inv, payload)
	}
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
	end        qpEnd  // the QP as the service table keys it (its Sends' SendInfo.qp)
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
// its sendDecoder. Retransmitted packets (PSN before the one expected, or of
// the Send just completed) are ignored; a PSN gap drops the Send with a
// finding. Memory is bounded by Options (MaxSendBytes,
// MaxSendBufferBytes, MaxQPs).
type RCSends struct {
	cfg   Options
	sends sendDecoder // complete Sends go to it
	qps   map[QPKey]*rcQP
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

// newRCSends returns an empty reassembly bounded by the RC Send limits of
// opts (zero fields: defaults), handing complete Sends to sends.
func newRCSends(opts Options, sends sendDecoder) *RCSends {
	return &RCSends{cfg: opts.withDefaults(), sends: sends, qps: map[QPKey]*rcQP{}}
}

// Stats returns the counters so far.
func (s *RCSends) Stats() RCSendStats { return s.stats }

// Buffered returns the octets held for partial Sends.
func (s *RCSends) Buffered() int { return s.buffered }

// psnDiff is a−b in 24-bit PSN arithmetic, in −2²³ … 2²³−1.
func psnDiff(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

func psnIn(p, lo, hi uint32) bool { return psnDiff(p, lo) >= 0 && psnDiff(hi, p) >= 0 }

func addFinding(rec *Record, code string, sev finding.Severity, msg string) {
	rec.addFinding(code, sev, Catalog.Section(code), "bth", -1, msg)
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
			q = &rcQP{key: key, end: qpEnd{key.Net.Dst(), key.DestQP}}
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
		s.sends.decodeSend(rec, payload, SendInfo{Transport: "ib", FirstFrame: rec.Frame, LastFrame: rec.Frame,
			Invalidate: op == ibcm.OpRCSendOnlyInv, InvalidateSTag: invRKey, Length: len(payload), qp: &q.end})
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
			sendOrphan(rec, q, op, psn)
		}
		return
	}
	switch d := psnDiff(psn, q.next); {
	case d < 0:
		s.stats.Duplicates++ // retransmitted packet already placed
		return
	case d > 0:
		s.outOfSequence(rec, q, op, psn)
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
	s.sends.decodeSend(rec, q.buf, SendInfo{Transport: "ib", FirstFrame: q.firstFrame, LastFrame: rec.Frame,
		Invalidate: op == ibcm.OpRCSendLastInv, InvalidateSTag: invRKey, Length: len(q.buf), qp: &q.end})
	s.release(q)
}

// sendOrphan notes a SEND_MIDDLE or SEND_LAST (op, psn) on q, which has no
// Send in progress and was not dropping one: the capture began inside the
// Send. The rest of it is dropped. (Out of Packet, as the other findings:
// rare, and long.)
func sendOrphan(rec *Record, q *rcQP, op ibcm.Opcode, psn uint32) {
	addFinding(rec, CodeSendOrphan, finding.SeverityInfo, fmt.Sprintf(
		"%s PSN %d on QP 0x%06x without its SEND_FIRST (the capture starts inside the Send)", op, psn, q.key.DestQP))
	q.dropping = true
}

// outOfSequence takes a packet (op, psn) of q's Send ahead of the PSN
// expected. The responder discards it and NAKs, and the requester goes
// back to the missing PSN, so wait for that. If the capture lost the
// packet, the Send stays partial and is reported incomplete.
func (s *RCSends) outOfSequence(rec *Record, q *rcQP, op ibcm.Opcode, psn uint32) {
	if !q.gapSeen {
		q.gapSeen = true
		addFinding(rec, CodeSendGap, finding.SeverityInfo, fmt.Sprintf(
			"QP 0x%06x: %s PSN %d, expected PSN %d (Send begun in frame %d): out of sequence, ignored as the responder does; waiting for the retransmission",
			q.key.DestQP, op, psn, q.next, q.firstFrame))
	}
	s.stats.OutOfSequence++
}

// add appends payload to q's Send within the limits; false when the Send
// was dropped.
func (s *RCSends) add(rec *Record, q *rcQP, payload []byte) bool {
	if (len(q.buf)+len(payload) > s.cfg.MaxSendBytes || s.buffered+len(payload) > s.cfg.MaxSendBufferBytes) && !s.makeRoom(rec, q, payload) {
		return false
	}
	s.grow(q, len(payload))
	q.buf = append(q.buf, payload...)
	s.buffered += len(payload)
	return true
}

// makeRoom keeps the limits for payload, more octets of q's Send: false
// when that Send is dropped (it would pass MaxSendBytes, or the other
// partial Sends cannot make room in MaxSendBufferBytes); to make room, the
// partial Sends used least recently are dropped.
func (s *RCSends) makeRoom(rec *Record, q *rcQP, payload []byte) bool {
	if len(q.buf)+len(payload) > s.cfg.MaxSendBytes {
		addFinding(rec, CodeSendLimit, finding.SeverityWarning, fmt.Sprintf(
			"QP 0x%06x: the Send begun in frame %d exceeds the reassembly limit of %d octets; it is not decoded",
			q.key.DestQP, q.firstFrame, s.cfg.MaxSendBytes))
		s.abort(q)
		q.dropping = true
		return false
	}
	for s.buffered+len(payload) > s.cfg.MaxSendBufferBytes {
		oldest := s.oldestActive(q)
		if oldest == nil {
			addFinding(rec, CodeSendLimit, finding.SeverityWarning, fmt.Sprintf(
				"QP 0x%06x: buffering %d more octets would pass the limit of %d for all partial Sends; the Send is not decoded",
				q.key.DestQP, len(payload), s.cfg.MaxSendBufferBytes))
			s.abort(q)
			q.dropping = true
			return false
		}
		addFinding(rec, CodeSendLimit, finding.SeverityWarning, fmt.Sprintf(
			"%d octets buffered for partial Sends (limit %d): the Send of QP 0x%06x begun in frame %d is dropped",
			s.buffered, s.cfg.MaxSendBufferBytes, oldest.key.DestQP, oldest.firstFrame))
		s.abort(oldest)
		oldest.dropping = true
	}
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
	if q.active {
		s.dropIncomplete(rec, q, what)
	}
}

// dropIncomplete reports the Send in progress on q incomplete (what came
// before its SEND_LAST) and drops it.
func (s *RCSends) dropIncomplete(rec *Record, q *rcQP, what string) {
	addFinding(rec, CodeSendIncomplete, finding.SeverityWarning, fmt.Sprintf(
		"QP 0x%06x: %s arrived before the SEND_LAST of the Send begun in frame %d (PSN %d, %d octets so far); that Send is not decoded",
		q.key.DestQP, what, q.firstFrame, q.first, len(q.buf)))
	s.abort(q)
}

// end forgets the QP of key, whose connection ended (its DREP), unless a
// Send is in progress on it (the capture's end reports that one).
func (s *RCSends) end(key QPKey) {
	q := s.qps[key]
	if q == nil || q.active {
		return
	}
	s.release(q)
	delete(s.qps, key)
	s.unlink(q)
	if r := &s.recent[key.DestQP%uint32(len(s.recent))]; *r == q {
		*r = nil
	}
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
	// Sends begun in frames of the same number (captures read one after
	// the other by one Dissector number their frames alike) by QP, then
	// endpoints: never in map order.
	sort.Slice(open, func(i, j int) bool {
		a, b := open[i], open[j]
		if a.firstFrame != b.firstFrame {
			return a.firstFrame < b.firstFrame
		}
		if a.key.DestQP != b.key.DestQP {
			return a.key.DestQP < b.key.DestQP
		}
		return a.key.Net.String() < b.key.Net.String()
	})
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
