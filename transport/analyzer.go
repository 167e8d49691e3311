// Package transport is the per-queue-pair transport analysis: it follows
// the PSN sequence of every RC queue pair (seeded from the CM REQ/REP
// where the capture holds them), and reports on the frame concerned what
// the transport did: PSNs skipped (and whether the network or the capture
// lost them), packets resent, NAKs by code, RNR NAKs with their timer, MSN
// going back, congestion marks (ECN CE, CNPs, FECN/BECN); for iWARP, TCP
// retransmissions. It keeps per-QP counters and ACK latency for the
// connection views.
//
// Memory is bounded and does not grow with the packets: at most
// Config.MaxQPs queue pairs are followed (the least recently used is
// forgotten), each with a ring of its last ringSize requests, and the
// queue pairs of a connection that ended (its DREP) are let go at once,
// their slots and rings reused; steady traffic allocates nothing.
package transport

import (
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/defaults"
	"github.com/cmpd-dissect/cmpd-dissect/internal/posindex"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// Config bounds the analysis. The zero value means the defaults.
type Config struct {
	// MaxQPs caps the queue pairs followed at once (DefaultMaxQPs).
	MaxQPs int
	// MaxRetired caps the summaries of CM-seeded queue pairs kept after
	// they were forgotten or reseeded, for the connection views
	// (DefaultMaxRetired).
	MaxRetired int
	// MaxPairs caps the IP address pairs whose congestion marks are
	// counted (DefaultMaxPairs); later pairs are not counted.
	MaxPairs int
	// MaxStreams caps the iWARP TCP half-streams followed (DefaultMaxStreams).
	MaxStreams int
	// ForgetEnded keeps no summary of a queue pair that ended (its
	// connection's DREP, a new REP, eviction): for the views that never ask
	// Summary for one (stats, the packet views).
	ForgetEnded bool
}

// Defaults for Config.
const (
	DefaultMaxQPs     = 4096
	DefaultMaxRetired = 16384
	DefaultMaxPairs   = 4096
	DefaultMaxStreams = 4096
)

// ringSize is how many recent requests a queue pair remembers (a power of
// two: the slot of PSN p is p & ringMask), to match a retransmission to
// its original and an ACK to its request.
const (
	ringSize = 64
	ringMask = ringSize - 1
)

// psnMask: PSNs are 24 bits.
const psnMask = 1<<24 - 1

// psnDiff is a − b in the 24-bit PSN space, as a signed distance.
func psnDiff(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

// reqSlot is one remembered request packet (16 octets: a ring is 1 KiB).
type reqSlot struct {
	t     int64 // capture time, ns since the epoch
	frame int32
	// tag is the PSN (24 bits) and the slot* flags above it.
	tag uint32
}

const (
	slotValid uint32 = 1 << (24 + iota)
	slotResent
	slotAnswered
)

// holds reports whether s remembers the request of PSN p.
func (s *reqSlot) holds(p uint32) bool { return s.tag&(slotValid|psnMask) == slotValid|p }

// qp is the state of one queue pair: the requests delivered to it (the
// peer's PSN sequence) and, through pair, the requests it sent. The fields
// every packet touches come first.
type qp struct {
	key     qpKey
	used    bool // looked up since the clock hand last passed
	started bool
	seeded  bool
	// following: started, and the sender of its requests is known.
	following bool
	pair      int32 // the peer queue pair's slot, -1 unknown
	// ePSN is the next request PSN expected; up to eHi is in order too
	// (an RDMA Read whose response packet count is not known exactly).
	ePSN, eHi uint32
	ring      *[ringSize]reqSlot
	// The counters every packet adds to (QPSummary's, kept here).
	// (Packets are the requests, the responses and the others.)
	others, bytes, requests, responses uint64

	src hostKey // the peer that sends requests to it (first seen)
	// commID is the communication ID of its side of the connection whose
	// REP seeded it: the DREP naming it ends the queue pair.
	commID    uint32
	pairTries uint8
	mtu       uint32
	// The last gap not yet explained: PSNs gapFrom..gapTo, reported on
	// gapFrame; gapLost once a NAK PSN Sequence Error showed the network
	// lost it.
	gapOpen, gapLost bool
	gapFrom, gapTo   uint32
	gapFrame         int
	// The last ACK delivered to it: its PSN and MSN.
	ackHave bool
	ackPSN  uint32
	ackMSN  uint32
	sum     QPSummary
}

// summary is q's counters.
func (q *qp) summary() QPSummary {
	s := q.sum
	s.Packets, s.Bytes, s.Requests, s.Responses = q.requests+q.responses+q.others, q.bytes, q.requests, q.responses
	return s
}

// Analyzer is the per-queue-pair analysis. Record every dissected frame in
// order; Summaries and Pairs give the counters.
type Analyzer struct {
	cfg Config

	qps  []qp
	idx  posindex.Index[qpKey]
	hand int32 // the clock hand: the next slot to consider for eviction
	free []*[ringSize]reqSlot
	// freeSlots are the slots of queue pairs that ended, for new ones.
	freeSlots []int32
	cache     [cacheMask + 1]cacheEntry

	retired []QPSummary
	// retiredIdx finds retired summaries by queue pair and seeding REP
	// (built by Summary as far as indexed: the connection views ask for
	// every connection's, and a scan per question grew with the square of
	// the connections).
	retiredIdx posindex.Index[retiredKey]
	indexed    int
	released   int // retired summaries Release let go, not yet compacted away
	// RetiredDropped counts summaries not kept past MaxRetired.
	RetiredDropped int

	pairs    []Pair
	pairIdx  posindex.Index[pairKey]
	lastPair int32
	// lastPairKey is the key of lastPair.
	lastPairKey pairKey

	reqs    [maxPendingREQ]pendingREQ
	nextREQ int

	tcp tcpStreams

	// Evicted counts queue pairs forgotten when the table was full.
	Evicted int
}

// maxPendingREQ bounds the REQs remembered until their REP.
const maxPendingREQ = 64

type pendingREQ struct {
	host   hostKey
	commID uint32
	qpn    uint32
	psn    uint32
	mtu    uint8
	valid  bool
}

// New returns an Analyzer.
func New(cfg Config) *Analyzer {
	cfg = defaults.Fill(cfg, Config{MaxQPs: DefaultMaxQPs, MaxRetired: DefaultMaxRetired, MaxPairs: DefaultMaxPairs,
		MaxStreams: DefaultMaxStreams})
	a := &Analyzer{cfg: cfg, lastPair: -1}
	a.tcp.max = cfg.MaxStreams
	return a
}

// addresses are the keys of the frame's sender and receiver (where the
// queue pair it is delivered to lives).
func addresses(h *dissect.Headers) (src, dst hostKey) {
	switch {
	case h.IPv4 != nil:
		return ipKey(h.IPv4.SrcIP), ipKey(h.IPv4.DstIP)
	case h.IPv6 != nil:
		return ipKey(h.IPv6.SrcIP), ipKey(h.IPv6.DstIP)
	}
	if h.GRH != nil {
		src, dst = addrKey(h.GRH.SrcGID()), addrKey(h.GRH.DstGID())
	}
	if h.LRH != nil {
		src.lid, dst.lid = h.LRH.SLID, h.LRH.DLID
	}
	return src, dst
}

// sender is the key of the frame's sender.
func sender(h *dissect.Headers) hostKey {
	src, _ := addresses(h)
	return src
}

// receiver is the key of the frame's receiver.
func receiver(h *dissect.Headers) hostKey {
	_, dst := addresses(h)
	return dst
}

// ceMarked reports an IP header marked ECN Congestion Experienced.
func ceMarked(h *dissect.Headers) bool {
	switch {
	case h.IPv4 != nil:
		return h.IPv4.TOS&3 == 3
	case h.IPv6 != nil:
		return h.IPv6.TrafficClass&3 == 3
	}
	return false
}

// Record analyses one dissected frame and appends its findings to
// rec.Findings. Records of damaged frames and end-of-input records are
// ignored.
//
// It is on every packet's path, so the common packet is found here at
// the cost of a few compares: an RC packet over RoCEv2 and IPv4 with no
// congestion mark, to a queue pair in the lookup cache (by its tag).
// Anything else goes to uncommon, out of line; what only a few packets do
// (a finding's message, a queue pair's first request, a PSN out of order)
// is in functions of their own, kept out of line too (//go:noinline: not
// inlined back by profile-guided optimisation), so the common path stays
// a few cache lines of code.
func (a *Analyzer) Record(rec *dissect.Record) {
	if rec.Frame <= 0 {
		return
	}
	h := rec.Headers()
	b, ip := h.BTH, h.IPv4
	var q *qp
	qi := int32(-1)
	if b != nil && ip != nil && b.OpCode <= 0x1f && h.TCP == nil && h.CM == nil && ip.TOS&3 != 3 && !b.FECN && !b.BECN {
		if dst := ip.DstIP; len(dst) == 4 {
			t := ipv4Tag(binary.BigEndian.Uint32(dst), b.DestQP)
			if c := &a.cache[cacheSlot(t)]; c.tag == t && int(c.slot) < len(a.qps) {
				qi, q = int32(c.slot), &a.qps[c.slot]
			}
		}
	}
	if qi < 0 {
		var ok bool
		if qi, ok = a.uncommon(rec, h); !ok {
			return
		}
		q = &a.qps[qi]
	}
	// A non-CM packet with a BTH, delivered to the queue pair in slot qi.
	q.used = true
	b = h.BTH
	q.bytes += uint64(b.PayloadLength)
	switch op := b.OpCode; {
	case op > 0x1f: // not RC: no sequence to follow here
		q.others++
	case rcOps[op]&opResponse != 0:
		q.responses++
		a.response(rec, h, q, qi)
	case rcOps[op]&opRequest != 0:
		q.requests++
		a.request(rec, h, q)
	default:
		q.others++
	}
}

// The RC opcodes by what they are: requests (that take a PSN of the
// requester's sequence) and responses (that answer one).
const (
	requestOps = 1<<(ibcm.OpRCReadRequest+1) - 1 | 1<<ibcm.OpRCCompareSwap | 1<<ibcm.OpRCFetchAdd |
		1<<ibcm.OpRCSendLastInv | 1<<ibcm.OpRCSendOnlyInv | 1<<ibcm.OpRCFlush | 1<<ibcm.OpRCAtomicWrite
	responseOps = 1<<(ibcm.OpRCAtomicAck+1) - 1<<ibcm.OpRCReadRespFirst
	// mtuOps are the opcodes whose payload fills the path MTU: the FIRST
	// and MIDDLE packets of a message.
	mtuOps = 1<<ibcm.OpRCSendFirst | 1<<ibcm.OpRCSendMiddle | 1<<ibcm.OpRCWriteFirst | 1<<ibcm.OpRCWriteMiddle |
		1<<ibcm.OpRCReadRespFirst | 1<<ibcm.OpRCReadRespMiddle
)

// rcOps is the masks above by RC opcode, one load where a mask test
// takes a variable shift.
var rcOps = func() (t [32]uint8) {
	for op := range t {
		for _, c := range []struct {
			mask uint32
			flag uint8
		}{{requestOps, opRequest}, {responseOps, opResponse}, {mtuOps, opFillsMTU}} {
			if c.mask>>op&1 != 0 {
				t[op] |= c.flag
			}
		}
	}
	return t
}()

// The flags of rcOps.
const (
	opRequest uint8 = 1 << iota
	opResponse
	opFillsMTU
)

// uncommon is Record for the frames its common path does not take: it
// analyses iWARP TCP segments, CM messages, CNPs and congestion marks, and
// returns the slot of the queue pair a packet with a BTH (not CM) is
// delivered to, for Record to go on with it.
//
//go:noinline
func (a *Analyzer) uncommon(rec *dissect.Record, h *dissect.Headers) (int32, bool) {
	if h.TCP != nil {
		a.tcpSegment(rec, h, hasIWARP(rec.Layers))
		return 0, false
	}
	b := h.BTH
	if b == nil {
		return 0, false
	}
	if h.CM != nil {
		a.cmMessage(rec, h)
		return 0, false
	}
	if b.OpCode == ibcm.OpCNP {
		a.cnp(rec, h)
		return 0, false
	}
	qi := a.lookup(qpKey{receiver(h), b.DestQP}, rec)
	if ceMarked(h) || b.FECN || b.BECN {
		a.congestion(rec, h, &a.qps[qi])
	}
	return qi, true
}

// cnp counts a congestion notification packet and reports it.
//
//go:noinline
func (a *Analyzer) cnp(rec *dissect.Record, h *dissect.Headers) {
	b, dst := h.BTH, receiver(h)
	q := &a.qps[a.lookup(qpKey{dst, b.DestQP}, rec)]
	q.sum.CNPs++
	if p := a.pair(h); p != nil {
		p.CNPs++
	}
	a.add(rec, CodeCNP, finding.SeverityInfo, "IBTA Vol 1 Annex A17.9.2",
		"congestion notification to QP "+hexQP(b.DestQP)+" at "+dst.String()+" from "+sender(h).String()+": the receiver of its CE-marked packets asks it to slow down")
}

// congestion counts and reports the congestion marks of a packet to q:
// IP ECN Congestion Experienced, BTH FECN and BECN.
//
//go:noinline
func (a *Analyzer) congestion(rec *dissect.Record, h *dissect.Headers, q *qp) {
	b := h.BTH
	if ceMarked(h) {
		q.sum.ECNCE++
		if p := a.pair(h); p != nil {
			p.ECNCE++
		}
		a.add(rec, CodeECNCE, finding.SeverityInfo, "RFC 3168 §5",
			"IP ECN Congestion Experienced on a packet to QP "+hexQP(b.DestQP)+" at "+receiver(h).String()+": a queue on the path from "+sender(h).String()+" was filling")
	}
	if b.FECN {
		q.sum.FECN++
		a.add(rec, CodeFECN, finding.SeverityInfo, "IBTA Vol 1 §9.2.1",
			"BTH FECN set on a packet to QP "+hexQP(b.DestQP)+": congestion on the way from "+sender(h).String())
	}
	if b.BECN {
		q.sum.BECN++
		a.add(rec, CodeBECN, finding.SeverityInfo, "IBTA Vol 1 §9.2.1",
			"BTH BECN set on a packet to QP "+hexQP(b.DestQP)+": "+sender(h).String()+" reports that this QP's packets met congestion")
	}
}

// learnMTU raises q's path MTU to the payload of a packet that fills it
// (op in mtuOps; an RC opcode, below 0x20).
func learnMTU(q *qp, op ibcm.Opcode, payload int) {
	if n := uint32(payload); rcOps[op&0x1f]&opFillsMTU != 0 && n >= 256 && n > q.mtu {
		q.mtu = n
	}
}

// request follows the PSN sequence of a request delivered to q: here the
// common case, the PSN expected next (not an RDMA Read, whose responses
// take PSNs of their own) of a sequence already followed; sequence does
// the rest.
func (a *Analyzer) request(rec *dissect.Record, h *dissect.Headers, q *qp) {
	b := h.BTH
	p, op := b.PSN&psnMask, b.OpCode
	learnMTU(q, op, b.PayloadLength)
	if !q.following || p != q.ePSN || p != q.eHi || op == ibcm.OpRCReadRequest {
		a.sequence(rec, h, q, p)
		return
	}
	q.ring[p&ringMask] = reqSlot{t: rec.Time.UnixNano(), frame: int32(rec.Frame), tag: p | slotValid}
	q.ePSN, q.eHi = (p+1)&psnMask, (p+1)&psnMask
}

// sequence is request for the requests its common case leaves: the first
// of a queue pair, one out of order, an RDMA Read.
//
//go:noinline
func (a *Analyzer) sequence(rec *dissect.Record, h *dissect.Headers, q *qp, p uint32) {
	if !q.following {
		a.start(q, h, p)
	}
	now := rec.Time.UnixNano()
	if d := psnDiff(p, q.ePSN); d < 0 || psnDiff(p, q.eHi) > 0 {
		// Not in order.
		if d <= 0 {
			a.resent(rec, h, q, p, now)
			return
		}
		a.gap(rec, h, q, p)
	}
	q.ring[p&ringMask] = reqSlot{t: now, frame: int32(rec.Frame), tag: p | slotValid}
	if h.BTH.OpCode == ibcm.OpRCReadRequest {
		if r := h.RETH; r != nil && r.DMALen > 0 {
			a.readRequest(q, p, r.DMALen)
			return
		}
		if h.RETH == nil && h.BTH.Uncaptured() {
			// The capture's snap length cut the RETH: how many PSNs
			// the responses take is not known, any up to the window.
			q.ePSN, q.eHi = (p+1)&psnMask, (p+uncapturedReadWindow)&psnMask
			return
		}
	}
	q.ePSN, q.eHi = (p+1)&psnMask, (p+1)&psnMask
}

// start notes the sender of the requests delivered to q (the first one
// known) and begins following them with the first, of PSN p (from p, where
// its REP did not seed the sequence).
//
//go:noinline
func (a *Analyzer) start(q *qp, h *dissect.Headers, p uint32) {
	if q.src == (hostKey{}) {
		q.src = sender(h)
	}
	// Until the sender is known, each request asks again.
	q.following = q.src != (hostKey{})
	if q.started {
		return
	}
	q.started = true
	if q.ring == nil {
		q.ring = a.newRing()
	}
	if !q.seeded {
		q.ePSN, q.eHi = p, p
	}
}

// uncapturedReadWindow is how many PSNs the responses of an RDMA Read whose
// length was not captured may take: a 2 GiB Read in 512-octet packets.
const uncapturedReadWindow = 1 << 22

// readRequest moves q's expected PSN past the response packets of an RDMA
// Read of length octets at PSN p: as many as the path MTU makes, or, the
// MTU not known, a window from 4096- to 256-octet packets.
func (a *Analyzer) readRequest(q *qp, p, length uint32) {
	mtu := q.mtu
	if q.pair >= 0 && a.qps[q.pair].mtu > mtu {
		mtu = a.qps[q.pair].mtu
	}
	lo, hi := (length+4095)/4096, (length+255)/256
	if mtu != 0 {
		lo = (length + mtu - 1) / mtu
		hi = lo
	}
	q.ePSN, q.eHi = (p+lo)&psnMask, (p+hi)&psnMask
}

// gap reports the PSNs skipped before the request of PSN p delivered to q.
//
//go:noinline
func (a *Analyzer) gap(rec *dissect.Record, h *dissect.Headers, q *qp, p uint32) {
	from := q.eHi
	if q.eHi == q.ePSN {
		from = q.ePSN
	}
	n := uint32(psnDiff(p, from))
	q.sum.PSNGaps++
	q.sum.Missing += uint64(n)
	q.gapOpen, q.gapLost, q.gapFrom, q.gapTo, q.gapFrame = true, false, from, (p-1)&psnMask, rec.Frame
	msg := "QP " + hexQP(h.BTH.DestQP) + " at " + receiver(h).String() + ": request PSN " + itoa(uint64(p)) + " follows " +
		itoa(uint64((from-1)&psnMask)) + "; " + psnRange(from, (p-1)&psnMask) + " (" + itoa(uint64(n)) + " packet"
	if n != 1 {
		msg += "s"
	}
	msg += ") not in the capture: lost on the network or by the capture (a later ACK covering them without a NAK or retransmission means the capture)"
	a.add(rec, CodePSNGap, finding.SeverityWarning, "IBTA Vol 1 §9.7.1", msg)
}

// notCaptured is what a retransmission finding says when the capture
// never showed the original (SentBefore).
const notCaptured = ", the original is not in the capture"

// SentBefore reports whether f is a transport.retransmission finding of a
// request whose original the capture showed (or may have shown, longer
// ago than the analysis remembers): the packet repeats one already seen.
// A retransmission of a packet the capture lost is the first copy seen.
func SentBefore(f *finding.Finding) bool {
	return f.Code == CodeRetransmission && !strings.Contains(f.Message, notCaptured)
}

// resent reports a request whose PSN was already passed.
//
//go:noinline
func (a *Analyzer) resent(rec *dissect.Record, h *dissect.Headers, q *qp, p uint32, now int64) {
	q.sum.Retransmissions++
	msg := "QP " + hexQP(h.BTH.DestQP) + " at " + receiver(h).String() + ": request PSN " + itoa(uint64(p)) + " sent again"
	s := &q.ring[p&ringMask]
	switch {
	case s.holds(p):
		msg += ", first sent in frame " + itoa(uint64(s.frame)) + " " + durationText(time.Duration(now-s.t)) + " earlier"
		s.tag |= slotResent
	case q.gapOpen && psnDiff(p, q.gapFrom) >= 0 && psnDiff(p, q.gapTo) <= 0:
		msg += notCaptured + " (gap reported in frame " + itoa(uint64(q.gapFrame)) + ")"
		if q.gapLost {
			msg += ": the network lost it, the responder asked for it again"
		}
		if p == q.gapTo {
			q.gapOpen = false
		}
	default:
		msg += "; the original is not among the last " + itoa(ringSize) + " requests remembered"
	}
	a.add(rec, CodeRetransmission, finding.SeverityWarning, "IBTA Vol 1 §9.7.5.1", msg)
}

// response handles an ACK, NAK, read response or atomic ACK delivered to
// q, the requester, in slot qi: here the common case, an acknowledgement
// from the queue pair its requests go to, of a PSN it expects answered,
// with no gap open; answer does the rest.
func (a *Analyzer) response(rec *dissect.Record, h *dissect.Headers, q *qp, qi int32) {
	b, ae := h.BTH, h.AETH
	p, op := b.PSN&psnMask, b.OpCode
	learnMTU(q, op, b.PayloadLength)
	if q.pair < 0 || ae == nil || ae.Type() != ibcm.AETHAck {
		if q.pair >= 0 && ae == nil {
			return // a read response's MIDDLE packet
		}
		a.answer(rec, h, qi, p)
		return
	}
	peer := &a.qps[q.pair]
	followed := peer.started || peer.seeded
	if op == ibcm.OpRCAck && q.msnBack(p, ae.MSN) || followed && psnDiff(p, peer.eHi) >= 0 || peer.gapOpen {
		a.answer(rec, h, qi, p)
		return
	}
	if op == ibcm.OpRCAck {
		q.noteAck(p, ae.MSN)
	}
	if followed {
		peer.within(p)
	}
	if t, ok := peer.answered(p); ok {
		q.sum.AckLatency.add(time.Duration(rec.Time.UnixNano() - t))
	}
}

// within notes a response of PSN p, before eHi, to the requests to q:
// within the window an RDMA Read left uncertain, the responses used the
// PSNs up to p.
func (q *qp) within(p uint32) {
	if psnDiff(p, q.ePSN) >= 0 {
		q.ePSN = (p + 1) & psnMask
	}
}

// msnBack reports an ACK of PSN p with MSN msn, past the last ACK
// delivered to q, whose MSN is less than that ACK's.
func (q *qp) msnBack(p, msn uint32) bool {
	return q.ackHave && psnDiff(p, q.ackPSN) > 0 && psnDiff(msn, q.ackMSN) < 0
}

// noteAck notes an ACK of PSN p with MSN msn delivered to q, the last one
// unless an ACK of a later PSN came before.
func (q *qp) noteAck(p, msn uint32) {
	if !q.ackHave || psnDiff(p, q.ackPSN) >= 0 {
		q.ackHave, q.ackPSN, q.ackMSN = true, p, msn
	}
}

// answered marks the request of PSN p delivered to q answered, and
// returns its capture time, when it is the first answer to a request not
// resent: the ACK latency is from then to the answer.
func (q *qp) answered(p uint32) (int64, bool) {
	if q.ring == nil {
		return 0, false
	}
	if s := &q.ring[p&ringMask]; s.holds(p) && s.tag&(slotResent|slotAnswered) == 0 {
		s.tag |= slotAnswered
		return s.t, true
	}
	return 0, false
}

// answer is response for the responses its common case leaves: from a
// queue pair not paired yet, NAKs, an MSN going back, an answer to
// requests the capture did not show, a gap open.
//
//go:noinline
func (a *Analyzer) answer(rec *dissect.Record, h *dissect.Headers, qi int32, p uint32) {
	q := &a.qps[qi]
	if q.pair < 0 && q.pairTries < 8 {
		q.pairTries++
		a.findPair(qi, h, p)
	}
	ae := h.AETH
	if ae == nil {
		return
	}
	if t := ae.Type(); t != ibcm.AETHAck {
		if t == ibcm.AETHNak || t == ibcm.AETHRNRNak {
			a.nak(rec, h, q, p)
		}
		return
	}
	if h.BTH.OpCode == ibcm.OpRCAck {
		if q.msnBack(p, ae.MSN) {
			a.msnRegress(rec, h, q, p)
		}
		q.noteAck(p, ae.MSN)
	}
	if q.pair < 0 {
		return
	}
	peer := &a.qps[q.pair]
	if peer.started || peer.seeded {
		if psnDiff(p, peer.eHi) >= 0 {
			a.acked(rec, h, peer, p)
		} else {
			peer.within(p)
		}
	}
	if t, ok := peer.answered(p); ok {
		q.sum.AckLatency.add(time.Duration(rec.Time.UnixNano() - t))
	}
	if peer.gapOpen && !peer.gapLost && psnDiff(p, peer.gapTo) >= 0 && psnDiff(p, peer.ePSN) < 0 {
		a.captureLoss(rec, h, peer, p)
	}
}

// nak counts and reports a NAK or RNR NAK of PSN p delivered to q.
//
//go:noinline
func (a *Analyzer) nak(rec *dissect.Record, h *dissect.Headers, q *qp, p uint32) {
	b, ae := h.BTH, h.AETH
	if ae.Type() == ibcm.AETHRNRNak {
		q.sum.RNRNAKs++
		t := RNRTimer(ae.Value())
		a.add(rec, CodeRNRNAK, finding.SeverityWarning, "IBTA Vol 1 §9.7.5.2.8",
			"QP "+hexQP(b.DestQP)+" at "+receiver(h).String()+" got RNR NAK for PSN "+itoa(uint64(p))+" from "+sender(h).String()+
				": no receive buffer was posted; retry after the RNR timer "+itoa(uint64(ae.Value()))+" = "+RNRTimerText(t))
		return
	}
	var peer *qp
	if q.pair >= 0 {
		peer = &a.qps[q.pair]
	}
	code := int(ae.Value())
	if code >= NAKCodes {
		code = NAKCodes - 1
	}
	q.sum.NAKs[code]++
	fcode, sev := CodeNAK, finding.SeverityError
	msg := "QP " + hexQP(b.DestQP) + " at " + receiver(h).String() + " got NAK " + NAKName(int(ae.Value())) + " (code " + itoa(uint64(ae.Value())) + ") for PSN " + itoa(uint64(p)) + " from " + sender(h).String()
	if code == 0 {
		fcode, sev = CodeSequenceNAK, finding.SeverityWarning
		msg += ": the responder expected PSN " + itoa(uint64(p)) + " and got a later one; the requester must resend from it"
		if peer != nil && peer.gapOpen && psnDiff(p, peer.gapFrom) >= 0 && psnDiff(p, peer.gapTo) <= 0 {
			msg += " (the gap reported in frame " + itoa(uint64(peer.gapFrame)) + " was lost on the network)"
			peer.gapLost = true
		}
	} else {
		msg += ": the queue pair goes to the error state"
	}
	a.add(rec, fcode, sev, "IBTA Vol 1 §9.7.5.2", msg)
}

// msnRegress reports an ACK of PSN p delivered to q whose MSN is less than
// the earlier ACK's.
//
//go:noinline
func (a *Analyzer) msnRegress(rec *dissect.Record, h *dissect.Headers, q *qp, p uint32) {
	q.sum.MSNRegress++
	a.add(rec, CodeMSNRegress, finding.SeverityWarning, "IBTA Vol 1 §9.7.5.1.2",
		"QP "+hexQP(h.BTH.DestQP)+": ACK of PSN "+itoa(uint64(p))+" carries MSN "+itoa(uint64(h.AETH.MSN))+
			", less than MSN "+itoa(uint64(q.ackMSN))+" of the ACK of the earlier PSN "+itoa(uint64(q.ackPSN)))
}

// captureLoss reports an ACK of PSN p that covers the gap open in the
// requests to peer: the capture, not the network, lost them.
//
//go:noinline
func (a *Analyzer) captureLoss(rec *dissect.Record, h *dissect.Headers, peer *qp, p uint32) {
	peer.gapOpen = false
	peer.sum.CaptureLoss++
	a.add(rec, CodeCaptureLoss, finding.SeverityInfo, "IBTA Vol 1 §9.7.5.1",
		"ACK of PSN "+itoa(uint64(p))+" from "+sender(h).String()+" covers "+psnRange(peer.gapFrom, peer.gapTo)+
			", missing before frame "+itoa(uint64(peer.gapFrame))+": the responder received them, the capture lost them (not the network)")
}

// acked reports an ACK or read response of PSN p, at or past the requests
// to peer expected next: the responder received requests the capture
// never showed.
//
//go:noinline
func (a *Analyzer) acked(rec *dissect.Record, h *dissect.Headers, peer *qp, p uint32) {
	from := peer.eHi
	if peer.eHi == peer.ePSN {
		from = peer.ePSN
	}
	n := uint32(psnDiff(p, from)) + 1
	peer.sum.PSNGaps++
	peer.sum.Missing += uint64(n)
	peer.sum.CaptureLoss++
	peer.ePSN, peer.eHi = (p+1)&psnMask, (p+1)&psnMask
	msg := "requests to QP " + hexQP(peer.key.qpn) + " at " + peer.key.host.String() + ": " + sender(h).String() +
		" acknowledges PSN " + itoa(uint64(p)) + ", but " + psnRange(from, p) + " (" + itoa(uint64(n)) + " packet"
	if n != 1 {
		msg += "s"
	}
	msg += ") never appeared in the capture: the responder received them, the capture lost them (not the network)"
	a.add(rec, CodeCaptureLoss, finding.SeverityInfo, "IBTA Vol 1 §9.7.5.1", msg)
}

// findPair looks for the queue pair q's requests go to: the one queue
// pair at the response's sender, fed by q's host, that holds a request of
// PSN p not yet paired.
//
//go:noinline
func (a *Analyzer) findPair(qi int32, h *dissect.Headers, p uint32) {
	q := &a.qps[qi]
	src, dst := addresses(h)
	found := int32(-1)
	for i := range a.qps {
		c := &a.qps[i]
		if c.pair >= 0 || c.ring == nil || c == q || c.key.host != src || c.src != dst {
			continue
		}
		if !c.ring[p&ringMask].holds(p) {
			continue
		}
		if found >= 0 {
			return // ambiguous
		}
		found = int32(i)
	}
	if found >= 0 {
		q.pair, a.qps[found].pair = found, qi
	}
}

// cmMessage seeds the queue pairs of a connection from its REQ and REP.
func (a *Analyzer) cmMessage(rec *dissect.Record, h *dissect.Headers) {
	cm := h.CM
	src, dst := addresses(h)
	switch cm.AttributeID {
	case ibcm.AttrREQ:
		r := &cm.REQ
		for i := range a.reqs {
			if p := &a.reqs[i]; p.valid && p.host == src && p.commID == r.LocalCommID {
				p.qpn, p.psn, p.mtu = r.LocalQPN, r.StartingPSN, r.PathMTU
				return
			}
		}
		a.reqs[a.nextREQ] = pendingREQ{host: src, commID: r.LocalCommID, qpn: r.LocalQPN, psn: r.StartingPSN & psnMask, mtu: r.PathMTU, valid: true}
		a.nextREQ = (a.nextREQ + 1) % maxPendingREQ
	case ibcm.AttrREP:
		r := &cm.REP
		var req *pendingREQ
		for i := range a.reqs {
			if p := &a.reqs[i]; p.valid && p.host == dst && p.commID == r.RemoteCommID {
				req = p
				break
			}
		}
		if req == nil {
			return
		}
		req.valid = false
		ck := qpKey{dst, req.qpn}
		ci := a.lookup(ck, rec)
		si := a.lookup(qpKey{src, r.LocalQPN}, rec)
		if ci == si || a.qps[ci].key != ck {
			return // the table is too small to hold both
		}
		c, s := &a.qps[ci], &a.qps[si]
		mtu := mtuOctets(req.mtu)
		// Each side names the PSN it expects to receive: the REQ's
		// Starting PSN is the client's receive queue's, the REP's the
		// server's (IBTA Vol 1 §12.7.21, §12.7.33; Linux's rq_psn).
		a.seed(c, src, req.psn, mtu, rec.Frame)
		a.seed(s, dst, r.StartingPSN&psnMask, mtu, rec.Frame)
		c.pair, s.pair = si, ci
		c.commID, s.commID = req.commID, r.LocalCommID
	case ibcm.AttrDREP:
		// The disconnection is complete: both queue pairs are gone
		// (IBTA Vol 1 §12.9.7); what they counted is kept as a summary.
		a.end(src, cm.DREP.LocalCommID)
		a.end(dst, cm.DREP.RemoteCommID)
	}
}

// end lets go of the CM-seeded queue pair at host of the connection side
// commID names, if it is still followed.
func (a *Analyzer) end(host hostKey, commID uint32) {
	for i := range a.qps {
		if q := &a.qps[i]; q.seeded && q.commID == commID && q.key.host == host && q.key.qpn != emptyQPN {
			a.drop(int32(i))
			a.freeSlots = append(a.freeSlots, int32(i))
			return
		}
	}
}

// seed starts q's sequence at psn, from a REP in frame; what q counted
// before is kept as a retired summary when it belonged to another
// connection.
func (a *Analyzer) seed(q *qp, src hostKey, psn, mtu uint32, frame int) {
	a.retire(q)
	if q.pair >= 0 {
		a.qps[q.pair].pair = -1
	}
	ring := q.ring
	*q = qp{key: q.key, used: true, pair: -1, src: src, seeded: true, ePSN: psn, eHi: psn, mtu: mtu, ring: ring}
	if ring != nil {
		clear(ring[:])
	}
	q.sum.Host, q.sum.QPN, q.sum.Frame = q.key.host.Host(), q.key.qpn, frame
}

// retire keeps q's summary when it was seeded by a CM exchange (the
// connection views look it up) or counted traffic.
func (a *Analyzer) retire(q *qp) {
	if q.sum.Frame == 0 || a.cfg.ForgetEnded {
		return
	}
	if len(a.retired)-a.released >= a.cfg.MaxRetired {
		a.RetiredDropped++
		return
	}
	if len(a.retired) == cap(a.retired) {
		// Doubled (up to MaxRetired): append grows a slice this large
		// by a quarter, and the copies it left behind came to three
		// times the summaries kept (9 MB allocated for the 2 MB of the
		// 8000 queue pairs of the 2M-packet bench capture; conns' peak
		// RSS there 3 MB higher).
		// (Released summaries not compacted away yet count as room.)
		a.retired = slices.Grow(a.retired, min(max(len(a.retired), 64), a.cfg.MaxRetired+a.released-len(a.retired)))
	}
	a.retired = append(a.retired, q.summary())
}

func mtuOctets(enum uint8) uint32 {
	if enum >= 1 && enum <= 5 {
		return 128 << enum
	}
	return 0
}

// Summaries returns the summary of every queue pair followed or retired,
// the retired ones first.
func (a *Analyzer) Summaries() []QPSummary {
	out := make([]QPSummary, 0, len(a.retired)-a.released)
	for i := range a.retired {
		if a.retired[i].Frame != 0 {
			out = append(out, a.retired[i])
		}
	}
	for i := range a.qps {
		if a.qps[i].key.qpn != emptyQPN {
			out = append(out, a.qps[i].summary())
		}
	}
	return out
}

// Summary returns the summary of the queue pair qpn at host seeded by the
// CM REP in frame (0: the current one of that queue pair, seeded or not).
func (a *Analyzer) Summary(host Host, qpn uint32, frame int) (QPSummary, bool) {
	if i, ok := a.idx.Get(qpKey{hostKeyOf(host), qpn}); ok {
		if s := a.qps[i].summary(); frame == 0 || s.Frame == frame {
			return s, true
		}
	}
	if frame == 0 {
		return QPSummary{}, false
	}
	// (Keyed by host key: a summary's address is unmapped, the one asked
	// for may be IPv4-mapped IPv6, as a RoCEv1 GID gives it. A queue pair
	// retired twice for one REP is found by its later summary.)
	a.indexRetired()
	if i, ok := a.retiredIdx.Get(retiredKey{hostKeyOf(host), qpn, frame}); ok {
		return a.retired[i], true
	}
	return QPSummary{}, false
}

// retiredKey is a retired summary's queue pair and the REP that seeded it.
type retiredKey struct {
	host  hostKey
	qpn   uint32
	frame int
}

func (k retiredKey) Hash() uint32 {
	h := qpKey{k.host, k.qpn}.Hash() ^ uint32(k.frame)*0x85ebca6b
	return h ^ h>>15
}

// Pairs returns the IP address pairs' counters.
func (a *Analyzer) Pairs() []Pair { return append([]Pair(nil), a.pairs...) }

// PairCounts returns the counters of packets from src to dst.
func (a *Analyzer) PairCounts(src, dst Host) (Pair, bool) {
	if i, ok := a.pairIdx.Get(pairKey{hostKeyOf(src), hostKeyOf(dst)}); ok {
		return a.pairs[i], true
	}
	return Pair{}, false
}

func (a *Analyzer) pair(h *dissect.Headers) *Pair {
	src, dst := addresses(h)
	k := pairKey{src, dst}
	if a.lastPair >= 0 && a.lastPairKey == k {
		return &a.pairs[a.lastPair]
	}
	i, ok := a.pairIdx.Get(k)
	if !ok {
		if len(a.pairs) >= a.cfg.MaxPairs {
			return nil
		}
		i = len(a.pairs)
		a.pairs = append(a.pairs, Pair{Src: k.src.Host().Addr, Dst: k.dst.Host().Addr})
		a.pairIdx.Set(k, i)
	}
	a.lastPair, a.lastPairKey = int32(i), k
	return &a.pairs[i]
}

// Layer is the Layer of this package's findings.
const Layer = "transport"

// add appends a finding on rec's frame.
func (a *Analyzer) add(rec *dissect.Record, code string, sev finding.Severity, section, msg string) {
	rec.Findings = append(rec.Findings, finding.Finding{Code: code, Severity: sev, Section: section,
		Message: msg, Frame: rec.Frame, Layer: Layer, Offset: -1})
}
