package dissect

// The per-connection state machine of iWARP reassembly: each direction reads
// the MPA request or reply, then FPDUs with what the frames negotiated, and
// finds its framing again after a hole or in a capture that starts
// mid-stream.

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ulp"
)

type halfState uint8

const (
	stateNew    halfState = iota // no data yet
	stateFrame                   // reading the MPA request or reply
	stateFPDU                    // reading FPDUs
	stateResync                  // looking for FPDU framing
	stateIgnore                  // not iWARP, or after a reject: drop
)

// iwarpStream is one TCP connection: two halves, each its own state machine,
// sharing what the MPA frames negotiated.
type iwarpStream struct {
	w        *IWARP
	half     [2]iwarpHalf
	lastSeen time.Time
	seq      int // the order the stream began in (flush order)
	done     bool
	// closed is set by the second FIN or an RST: the TCP connection, and
	// so the iWARP connection, ended (as conn.Tracker.TCPClose ends it).
	closed bool

	// What the MPA frames said, once seen.
	reqSeen, repSeen   bool
	reqFlags, repFlags uint8
	initiator          int // half index that sent the request
	// svc is the ULP the passive side's port names, once an MPA frame
	// was seen (svcKnown).
	svc      service
	svcKnown bool
	// inline is the initiator's Receive size from its MPA request's RFC
	// 8797 private data (RFC 8166's default without one), once seen.
	inline int
}

// iwarpHalf is one direction of a stream.
type iwarpHalf struct {
	s                *iwarpStream
	idx              int
	srcPort, dstPort uint16
	state            halfState
	fin              bool // a FIN was sent this way
	seqKnown         bool
	synSeen          bool
	seqBase          uint32 // TCP sequence number of stream position 0
	pos              int    // stream position of pend[0] (of the next data when pend is empty)
	// pend holds octets received but not yet consumed (an unfinished PDU,
	// or the tail a resync is looking at); pendFrame is the frame of
	// pend[0]. It is never overwritten in place once layers may alias
	// it: a new array is taken instead.
	pend      []byte
	pendFrame int
	// While data is processed: the SG it came from and how much of it
	// was pending before.
	sg            reassembly.ScatterGather
	pend0         int
	fpduBase      int // stream position where the FPDU stream starts (markers)
	fpduBaseKnown bool
	scanned       int // octets searched for framing while not yet synchronised
	synced        bool
	sends         map[uint32]*partialSend
	// inGap is set while the octets before a hole are finished; afterGap
	// from a hole until the first FPDU after it is decoded; cutSend from
	// a hole until a message starts (MO 0): segments before that end
	// messages begun in the hole.
	inGap, afterGap, cutSend bool
	// markersOn is whether h carries markers when the MPA frame that says
	// so was lost, once markersDecided (decideMarkers).
	markersOn, markersDecided bool
	// holes are the stretches of the stream never decoded (a hole and
	// the octets around it no PDU could be framed in), oldest first, for
	// a late segment that fills one (lateSegment); lateSends collects
	// the Sends such segments carry, orphans the DDP segments after a
	// hole that end a message begun in it.
	holes     []streamHole
	gapCut    int // while inGap: where the unfinished PDU before the hole begins, or -1
	lateSends map[uint32]*partialSend
	orphans   []orphanSegment
	lateMode  bool // decoding a late segment (decodeLate)
	// lateHeld is what holes and orphans hold, counted in the IWARP's
	// pendTotal (accountLate); lateLimited is set once keeping octets for
	// a late segment hit MaxTCPBufferedBytes, until the next hole: one
	// finding per hole.
	lateHeld    int
	lateLimited bool
	// snapHoles counts the segments whose payload the capture's snap
	// length cut (snapCut) and whose hole has not come yet; snapNoted is
	// set once CodeIWARPNotCaptured was reported.
	snapHoles int
	snapNoted bool
	// snapResync is set from such a hole until framing is found again.
	snapResync bool
}

// streamHole is a stretch [start, end) of a direction's stream that was
// never decoded. pre holds the octets captured from start on (the
// unfinished PDU before the hole), post those captured up to end (skipped
// before framing was found again); boundary is set when start is where a
// PDU begins.
type streamHole struct {
	start, end int
	gapEnd     int  // where the octets never captured end (post begins)
	open       bool // framing not found again yet: end is not known
	boundary   bool
	pre, post  []byte
	// postCut: octets after the hole were not kept (a bound), so post
	// takes no more: it stays the octets right after the hole.
	postCut bool
}

// orphanSegment is a DDP segment of a Send whose first octets were lost in
// a hole, kept in case a late segment brings them.
type orphanSegment struct {
	msn, mo uint32
	last    bool
	payload []byte
}

// Bounds of what is held for late segments, per direction; all
// directions' together count in MaxTCPBufferedBytes with the unfinished
// PDUs.
const (
	maxHoles          = 8
	maxHoleOctets     = 64 << 10
	maxOrphanSegments = 16
	maxOrphanBytes    = 64 << 10
)

// partialSend collects the DDP segments of one untagged Send (one MSN).
type partialSend struct {
	buf        []byte // the octets so far, in MO order
	got, total int    // octets received; total once the L segment arrived (else -1)
	firstFrame int
	lastFrame  int
	invalidate bool
	stag       uint32
	order      int // arrival order, to drop the oldest first
}

func (s *iwarpStream) Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, ac reassembly.AssemblerContext) bool {
	if ci.Timestamp.After(s.lastSeen) {
		s.lastSeen = ci.Timestamp
	}
	h := &s.half[dirIndex(dir)]
	if tcp.FIN || tcp.RST {
		s.closing(h, tcp.RST)
	}
	if h.state == stateIgnore {
		return false
	}
	if !h.seqKnown {
		switch {
		case tcp.SYN:
			h.seqBase, h.synSeen = tcp.Seq+1, true
		case nextSeq == -1:
			// No SYN: the capture started mid-connection. Start the
			// stream at the first segment seen.
			*start = true
			h.seqBase = tcp.Seq
		}
		h.seqKnown = true
	}
	if w := s.w; w.rec != nil && w.rec.CaptureLength < w.rec.Length {
		h.snapCut(w.rec, tcp.Payload)
	}
	if nextSeq != -1 && len(tcp.Payload) > 0 && len(h.holes) > 0 {
		// Octets before what the assembler handed over: the assembler
		// drops them, but those that fill a hole are decoded here.
		a := int(int32(tcp.Seq - h.seqBase))
		if next := int(int32(uint32(nextSeq) - h.seqBase)); a < next {
			h.late(a, tcp.Payload[:min(len(tcp.Payload), next-a)])
		}
	}
	return true
}

// closing notes a FIN or an RST sent by h: after an RST, or a FIN each
// way, no reply comes for the calls sent on the stream. One FIN alone
// half-closes it: the other side may still answer.
func (s *iwarpStream) closing(h *iwarpHalf, rst bool) {
	h.fin = h.fin || !rst
	if !s.closed && (rst || s.half[0].fin && s.half[1].fin) {
		s.closed = true
		s.w.closed = s
	}
}

// end forgets the calls sent on the stream, which closed, with their
// chunks and the RDMA Reads pending for them; its number goes back.
func (s *iwarpStream) end() {
	if s.svc.id != 0 {
		s.w.rpc.end(s.svc.id)
		s.svc.id = 0
	}
}

func dirIndex(d reassembly.TCPFlowDirection) int {
	if d == reassembly.TCPDirClientToServer {
		return 0
	}
	return 1
}

func (s *iwarpStream) ReassembledSG(sg reassembly.ScatterGather, ac reassembly.AssemblerContext) {
	w := s.w
	if w.queued(s, sg) {
		return
	}
	dir, _, end, skip := sg.Info()
	h := &s.half[dirIndex(dir)]
	avail, _ := sg.Lengths()
	if skip > 0 {
		// Octets never seen: finish what came before the hole (an
		// unfinished PDU there is lost, not reported on its own), then
		// look for framing after it.
		lost := 0
		h.lateLimited = false
		// Where the undecoded stretch begins, and whether a PDU begins
		// there: a stream seen from its SYN begins with its MPA frame.
		hole := streamHole{start: h.pos + len(h.pend), open: true,
			boundary: h.state == stateFPDU || h.state == stateNew && h.synSeen && h.pos == 0}
		if len(h.pend) > 0 && h.state != stateIgnore {
			boundary := h.state == stateFPDU || h.state == stateFrame
			h.pend0, h.inGap, h.gapCut = len(h.pend), true, -1
			w.snapPDU = h.snapHoles > 0
			used := h.process(h.pend, nil, true)
			h.inGap, w.snapPDU = false, false
			lost = len(h.pend) - used
			if c := h.gapCut - h.pos; boundary && c >= 0 && c < len(h.pend) && len(h.pend)-c <= maxHoleOctets && h.keepLate(len(h.pend)-c, "the unfinished PDU before a hole") {
				hole.start, hole.pre, hole.boundary = h.pos+c, append([]byte(nil), h.pend[c:]...), true
			} else {
				hole.boundary = false
			}
		}
		h.pos += len(h.pend) + skip
		h.setPend(nil, 0)
		if h.state != stateIgnore {
			hole.end, hole.gapEnd = h.pos, h.pos
			h.addHole(hole)
		}
		h.accountLate()
		s.gap(h, skip, lost)
	}
	if n := len(h.holes); n > 0 && h.holes[n-1].open && avail > 0 {
		// Octets after the hole are kept until framing is found again:
		// a late segment may need them to complete its last PDU.
		if last := &h.holes[n-1]; !last.postCut {
			if len(last.post)+avail <= maxHoleOctets && h.keepLate(avail, "the octets after a hole") {
				last.post = append(last.post, sg.Fetch(avail)...)
			} else {
				last.postCut = true
			}
			h.accountLate()
		}
	}
	if h.state == stateIgnore || avail == 0 {
		h.pos += avail
		return
	}
	data := sg.Fetch(avail)
	buf := data
	if len(h.pend) > 0 {
		if len(h.pend)+len(data) > w.cfg.MaxPDUBytes || !w.reserve(len(data)) {
			w.addFinding(CodeIWARPBufferLimit, finding.SeverityWarning, -1,
				fmt.Sprintf("TCP %d→%d: %d octets pending for one PDU, or %d in all, exceed the limits (%d, %d): they are dropped and the stream resynchronised",
					h.srcPort, h.dstPort, len(h.pend)+len(data), w.pendTotal+len(data), w.cfg.MaxPDUBytes, w.cfg.MaxTCPBufferedBytes))
			w.stats.LimitHits++
			h.pos += len(h.pend)
			h.setPend(nil, 0)
			h.toResync()
		} else {
			old := cap(h.pend)
			h.pend = append(h.pend, data...)
			w.pendTotal += cap(h.pend) - old
			buf = h.pend
		}
	} else if sg.Stats().Chunks == 1 && !aliases(data, w.cur.payload) {
		// One page of the assembler: it is reused once this call returns,
		// and the layers decoded from it live on in the record.
		buf = append([]byte(nil), data...)
	}
	h.sg, h.pend0 = sg, len(buf)-len(data)
	used := h.process(buf, sg, w.flushing || end)
	if h.state == stateFrame && h.snapHoles > 0 && len(buf)-used >= mpa.FrameHeaderLen {
		used += h.snapFrame(buf[used:], used)
	}
	tail := buf[used:]
	frame := 0
	if len(tail) > 0 {
		frame = h.frameAt(used)
	}
	h.sg = nil
	h.pos += used
	if used == 0 && len(h.pend) > 0 {
		return // pend is buf, unchanged
	}
	if len(tail) > 0 && w.pendTotal-cap(h.pend)+len(tail) > w.cfg.MaxTCPBufferedBytes {
		w.addFinding(CodeIWARPBufferLimit, finding.SeverityWarning, -1,
			fmt.Sprintf("TCP %d→%d: %d octets of an unfinished PDU would exceed the %d octets held for all streams: they are dropped and the stream resynchronised",
				h.srcPort, h.dstPort, len(tail), w.cfg.MaxTCPBufferedBytes))
		w.stats.LimitHits++
		h.pos += len(tail)
		h.setPend(nil, 0)
		h.toResync()
		return
	}
	h.setPend(tail, frame)
}

// setPend makes tail (which may alias decoded layers) the pending octets,
// in a new array.
func (h *iwarpHalf) setPend(tail []byte, frame int) {
	w := h.s.w
	w.pendTotal -= cap(h.pend)
	h.pend = nil
	if len(tail) > 0 {
		h.pend = append(make([]byte, 0, max(len(tail), 256)), tail...)
		w.pendTotal += cap(h.pend)
	}
	h.pendFrame = frame
}

// reserve accounts n more pending octets against MaxTCPBufferedBytes.
func (w *IWARP) reserve(n int) bool {
	return w.pendTotal+n <= w.cfg.MaxTCPBufferedBytes
}

// frameAt is the frame number of the octet at offset p of the data being
// processed.
func (h *iwarpHalf) frameAt(p int) int {
	if p < h.pend0 || h.sg == nil {
		return h.pendFrame
	}
	return h.sg.CaptureInfo(p - h.pend0).InterfaceIndex
}

// toResync starts looking for FPDU framing after the stream lost it.
func (h *iwarpHalf) toResync() {
	switch h.state {
	case stateFPDU, stateFrame:
		h.state, h.synced, h.scanned = stateResync, true, 0
	case stateNew:
		// The stream's start is missing: its first octets cannot be
		// trusted to be an MPA frame.
		h.state, h.scanned = stateResync, 0
	}
}

func aliases(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// gap notes octets missing from a stream: the segment being assembled
// starts after a hole (the capture lost the octets, or they come later as
// a late segment, decoded on its own when it can be framed: late). It is
// reported on the frame after the hole, and the stream looks for framing
// from there.
func (s *iwarpStream) gap(h *iwarpHalf, skip, lost int) {
	w := s.w
	if h.state == stateIgnore {
		return
	}
	if h.snapHoles > 0 {
		h.snapGap(skip)
		return
	}
	if h.state == stateFPDU || h.state == stateFrame {
		msg := fmt.Sprintf("TCP %d→%d: %d octets of the iWARP stream are missing before this segment (not captured, or out of order: a segment that fills the hole later is decoded on its own frame); %d octets of an unfinished PDU before them are lost; resynchronising on the next FPDU",
			h.srcPort, h.dstPort, skip, lost)
		if len(h.sends) > 0 {
			// Messages begun before the hole cannot be completed.
			msns := make([]uint32, 0, len(h.sends))
			for msn := range h.sends {
				msns = append(msns, msn)
			}
			slices.Sort(msns)
			msg += fmt.Sprintf("; partial Sends dropped: MSN %v", msns)
			h.sends = nil
		}
		w.addFinding(CodeIWARPGap, finding.SeverityWarning, -1, msg)
		if p := rpcOf(w.sends); p != nil {
			p.chunks.lost(connHash(w.rec), h.path())
		}
	}
	h.afterGap, h.cutSend = true, true
	h.toResync()
}

func (s *iwarpStream) ReassemblyComplete(ac reassembly.AssemblerContext) bool {
	if !s.w.queued(s, nil) {
		s.complete()
	}
	return true
}

// complete decodes what is pending, reports unfinished PDUs and forgets
// the stream.
func (s *iwarpStream) complete() {
	if s.done {
		return
	}
	s.done = true
	w := s.w
	delete(w.live, s)
	for i := range s.half {
		h := &s.half[i]
		if len(h.pend) > 0 && h.state != stateIgnore && h.snapHoles == 0 {
			// (After a segment the snap length cut, the unfinished PDU
			// runs into octets not captured: the frame says so.)
			h.pend0 = len(h.pend)
			h.process(h.pend, nil, true)
		}
		h.setPend(nil, 0)
		h.holes, h.orphans = nil, nil
		h.accountLate()
		msns := make([]uint32, 0, len(h.sends))
		for msn := range h.sends {
			msns = append(msns, msn)
		}
		slices.Sort(msns) // in a fixed order, not the map's
		if h.snapHoles > 0 {
			msns = nil
		}
		for _, msn := range msns {
			p := h.sends[msn]
			w.addFinding(CodeIWARPIncomplete, finding.SeverityWarning, -1,
				fmt.Sprintf("TCP %d→%d ended with Send MSN %d incomplete: %d octets of it arrived (first frame %d)", h.srcPort, h.dstPort, msn, p.got, p.firstFrame))
		}
		h.sends = nil
	}
}

// incomplete reports a stream that ends inside a PDU (at stream position
// at): have of want octets (want 0 when not known).
func (h *iwarpHalf) incomplete(at, have, want int) {
	if h.inGap {
		h.gapCut = at // where the PDU the hole cuts begins
		return        // the hole's finding says so
	}
	msg := fmt.Sprintf("TCP %d→%d ended inside an MPA %s: %d octets of it were captured", h.srcPort, h.dstPort, h.pduName(), have)
	if want > 0 {
		msg += fmt.Sprintf(" of %d", want)
	}
	h.s.w.addFinding(CodeIWARPIncomplete, finding.SeverityWarning, -1, msg)
}

func (h *iwarpHalf) pduName() string {
	if h.state == stateFrame {
		return "request/reply frame"
	}
	return "FPDU"
}

// placeOf returns the frame offset of the stream octets [at, at+n) of h when
// they all lie in the current segment, else -1.
func (h *iwarpHalf) placeOf(at, n int) int {
	w := h.s.w
	if w.cur.payloadOff < 0 || w.flushing {
		return -1
	}
	seq := h.seqBase + uint32(at)
	d := int(int32(seq - w.cur.seq))
	if d < 0 || d+n > len(w.cur.payload) {
		return -1
	}
	return w.cur.payloadOff + d
}

// process decodes what it can of data (which starts at stream position
// h.pos) and returns how many octets it consumed; the rest is kept for the
// next call. final is set when no more data will come before this call's
// data is dropped (flush).
func (h *iwarpHalf) process(data []byte, sg reassembly.ScatterGather, final bool) int {
	h.sg = sg
	p := 0
	for p < len(data) {
		rest := data[p:]
		switch h.state {
		case stateNew:
			if mpa.IsKeyPrefix(rest) {
				h.state = stateFrame
				continue
			}
			if h.synSeen {
				// The stream's first octets are not an MPA frame: not
				// iWARP (or a capture we cannot frame).
				h.state = stateIgnore
				return len(data)
			}
			h.state = stateResync
		case stateFrame:
			n, ok := h.frame(rest, p, final)
			if !ok {
				return p
			}
			p += n
		case stateFPDU:
			n, ok := h.fpdu(rest, p, final)
			if !ok {
				return p
			}
			p += n
		case stateResync:
			n, ok := h.resync(rest, p, final)
			p += n
			if !ok {
				if h.state == stateIgnore {
					return len(data)
				}
				return p
			}
		default:
			return len(data)
		}
	}
	return p
}

// frame decodes the MPA request or reply at the start of b (data offset p).
func (h *iwarpHalf) frame(b []byte, p int, final bool) (int, bool) {
	s, w := h.s, h.s.w
	kind, complete := mpa.FrameKindOf(b)
	if kind == 0 || (!complete && len(b) >= len(mpa.KeyRequest)) {
		if h.synSeen && h.pos+p == 0 {
			// A stream seen from its SYN that does not open with an
			// MPA key is not iWARP.
			h.state = stateIgnore
			return len(b), true
		}
		h.state = stateResync
		return 0, true
	}
	n := mpa.FrameLen(b)
	if n == 0 || len(b) < n {
		if !final {
			return 0, false
		}
		if len(b) < mpa.FrameHeaderLen {
			h.incomplete(h.pos+p, len(b), mpa.FrameHeaderLen)
			return len(b), true
		}
		n = len(b)
	}
	f := new(mpa.Frame)
	if err := f.DecodeFromBytes(b[:n], gopacket.NilDecodeFeedback); err != nil {
		w.addFinding(CodeMalformed, finding.SeverityError, h.placeOf(h.pos+p, n), "mpa: "+err.Error())
		h.state = stateResync
		return 1, true // past the key, so the resync does not find it again
	}
	f.PDLimit = w.cfg.MaxPrivateData
	// The ULP is known by the passive side's port: the request's
	// destination, the reply's source.
	port := h.srcPort
	if f.Kind == mpa.FrameRequest {
		port = h.dstPort
	}
	f.Identify(port)
	id := s.svc.id
	if id == 0 && !s.closed && w.rpc != nil {
		id = w.rpc.open() // the stream's calls are its own until it ends
	}
	s.svc, s.svcKnown = service{kind: ulp.ByPort(port), name: ibcm.ServiceIDFor(ibcm.PortSpaceTCP, port).ULP(), id: id}, true
	w.stats.Frames++
	w.add(f, h.placeOf(h.pos+p, n))
	if f.Kind == mpa.FrameRequest {
		s.reqSeen, s.reqFlags, s.initiator = true, f.Flags, h.idx
		s.inline = defaultInline
		if rd := &f.PD.Reading; rd.Valid {
			s.inline = rd.Message.ReceiveBytes()
		}
	} else {
		s.repSeen, s.repFlags = true, f.Flags
		if !s.reqSeen {
			s.initiator = 1 - h.idx
		}
	}
	h.state = stateFPDU
	if f.Kind == mpa.FrameReply && f.Rejected() {
		// No FPDUs follow a reject in either direction.
		h.state = stateIgnore
		s.half[1-h.idx].state = stateIgnore
	}
	h.fpduBase, h.fpduBaseKnown, h.synced = h.pos+p+n, true, true
	return n, true
}

// options are the FPDU settings of h's direction as negotiated.
func (h *iwarpHalf) options(at int) mpa.FPDUOptions {
	s := h.s
	var o mpa.FPDUOptions
	switch {
	case s.reqSeen && s.repSeen:
		if (s.reqFlags|s.repFlags)&mpa.FlagCRC != 0 {
			o.CRC = mpa.CRCNegotiated
		}
	case s.reqSeen && s.reqFlags&mpa.FlagCRC != 0, s.repSeen && s.repFlags&mpa.FlagCRC != 0:
		o.CRC = mpa.CRCNegotiated
	default:
		o.CRC = mpa.CRCUnknown
	}
	on, known := h.markers()
	if (s.reqSeen || s.repSeen) && (!known || on && !h.fpduBaseKnown) {
		// Markers may sit in the data where they cannot be told from it
		// (the MPA frame that says so, or where they start, was lost): a
		// CRC over them says nothing.
		o.CRC = mpa.CRCUnknown
	}
	if h.fpduBaseKnown {
		o.Markers = on
		o.StreamOffset = at - h.fpduBase
	}
	return o
}

// markers reports whether h's FPDUs carry markers, and whether that is
// known. The receiver asks for markers: the request's M governs what the
// responder sends, the reply's M what the initiator sends. When that frame
// was lost, the first marker position an FPDU spans tells (decideMarkers).
func (h *iwarpHalf) markers() (on, known bool) {
	s := h.s
	switch {
	case h.idx == s.initiator && s.repSeen:
		return s.repFlags&mpa.FlagMarkers != 0, true
	case h.idx != s.initiator && s.reqSeen:
		return s.reqFlags&mpa.FlagMarkers != 0, true
	}
	return h.markersOn, h.markersDecided
}

// decideMarkers settles, when the frame that says whether h carries
// markers was lost but where they would sit is known, whether the FPDU
// whose header starts b (stream position at, no marker before it unless
// one is due there) has a marker at the first marker position it spans:
// a marker at an FPDU's start is 0 (and precedes the header), one inside
// it holds its distance back to the header (RFC 5044 §5).
func (h *iwarpHalf) decideMarkers(b []byte, at int) {
	if _, known := h.markers(); known || !h.fpduBaseKnown || len(b) < mpa.MarkerLen {
		return
	}
	d := (mpa.MarkerInterval - (at-h.fpduBase)%mpa.MarkerInterval) % mpa.MarkerInterval
	if d == 0 {
		h.markersOn, h.markersDecided = binary.BigEndian.Uint32(b) == 0, true
		return
	}
	n := int(binary.BigEndian.Uint16(b))
	if d >= mpa.ULPDULengthLen+n+mpa.PadLen(n)+mpa.CRCLen {
		return // the FPDU ends before the marker position
	}
	if len(b) >= d+mpa.MarkerLen {
		h.markersOn, h.markersDecided = binary.BigEndian.Uint32(b[d:]) == uint32(d), true
	}
}

// markersUnplaced reports that h's FPDUs may carry markers whose positions
// are not known: the MPA frame that starts h's FPDU stream was lost (a hole
// at the start), and the frame that governs h's markers says M or was lost
// too, while the other direction's frame was seen (else nothing says the
// stream is iWARP with markers at all, and a guess would find markers in
// any data).
func (h *iwarpHalf) markersUnplaced() bool {
	s := h.s
	if h.fpduBaseKnown || !(s.reqSeen || s.repSeen) {
		return false
	}
	on, known := h.markers()
	return on || !known
}

// placeMarkers looks, in the FPDU whose header starts b (stream position
// at), for the first marker: four octets at distance d (4-aligned, under
// the marker interval) from the header that read 0, d (RFC 5044 §5: a
// marker points back at the header of the FPDU it sits in). When found,
// the markers' positions are known from there on.
func (h *iwarpHalf) placeMarkers(b []byte, at int) {
	if len(b) < mpa.ULPDULengthLen {
		return
	}
	n := int(binary.BigEndian.Uint16(b))
	end := min(len(b), mpa.ULPDULengthLen+n+mpa.PadLen(n)+mpa.CRCLen+mpa.MarkerLen, mpa.MarkerInterval)
	for d := 4; d+mpa.MarkerLen <= end; d += 4 {
		if binary.BigEndian.Uint32(b[d:]) == uint32(d) {
			h.fpduBase, h.fpduBaseKnown = at+d-mpa.MarkerInterval, true
			return
		}
	}
}

// fpdu decodes the FPDU at the start of b (data offset p).
func (h *iwarpHalf) fpdu(b []byte, p int, final bool) (int, bool) {
	w := h.s.w
	at := h.pos + p
	if h.markersUnplaced() {
		h.placeMarkers(b, at)
	}
	h.decideMarkers(b, at)
	opts := h.options(at)
	n, ok := mpa.PeekULPDULength(b, opts.StreamOffset, opts.Markers)
	if !ok {
		if final {
			h.incomplete(at, len(b), 0)
			return len(b), true
		}
		return 0, false
	}
	var hb [2 + mpa.DDPUntaggedHeaderLen]byte
	hdr := unmarked(hb[:0], b, opts)
	if len(hdr) == len(hb) || len(hdr) >= 2+n {
		if !plausibleFPDU(hdr, n) {
			w.addFinding(CodeIWARPFramingLost, finding.SeverityError, h.placeOf(at, min(len(b), 4)),
				fmt.Sprintf("TCP %d→%d: no plausible FPDU header at stream offset %d (ULPDU_Length %d, control % x); resynchronising",
					h.srcPort, h.dstPort, at, n, hdr[2:min(len(hdr), 4)]))
			h.state, h.scanned = stateResync, 0
			return 0, true
		}
	}
	wl := mpa.WireLen(n, opts.StreamOffset, opts.Markers)
	if len(b) < wl {
		if final {
			h.incomplete(at, len(b), wl)
			return len(b), true
		}
		return 0, false
	}
	h.decodeFPDU(b[:wl], p, opts)
	return wl, true
}

// decodeFPDU decodes one whole FPDU and hands a complete Send on.
func (h *iwarpHalf) decodeFPDU(wire []byte, p int, opts mpa.FPDUOptions) {
	w := h.s.w
	at := h.pos + p
	off := h.placeOf(at, len(wire))
	f := new(mpa.FPDU)
	f.Options = opts
	if err := f.DecodeFromBytes(wire, gopacket.NilDecodeFeedback); err != nil {
		w.addFinding(CodeMalformed, finding.SeverityError, off, "fpdu: "+err.Error())
		return
	}
	w.stats.FPDUs++
	w.add(f, off)
	segOff := -1
	if off >= 0 && len(f.Markers) == 0 {
		segOff = off + mpa.ULPDULengthLen
	}
	d := new(mpa.DDP)
	if err := d.DecodeFromBytes(f.ULPDU, gopacket.NilDecodeFeedback); err != nil {
		w.addFinding(CodeMalformed, finding.SeverityError, segOff, "ddp: "+err.Error())
		return
	}
	w.add(d, segOff)
	r := new(mpa.RDMAP)
	if err := r.DecodeFromDDP(d, gopacket.NilDecodeFeedback); err != nil {
		w.addFinding(CodeMalformed, finding.SeverityError, segOff, "rdmap: "+err.Error())
		return
	}
	w.add(r, segOff)
	if p := rpcOf(w.sends); p != nil && p.chunks.waiting() {
		switch {
		case d.Tagged && r.Opcode == mpa.OpWrite:
			p.chunks.iwarpWrite(w.rec, h.path(), d.STag, d.TO, r.Payload)
		case d.Tagged && r.Opcode == mpa.OpReadResponse:
			p.chunks.iwarpReadResponse(w.rec, d.STag, d.TO, d.Last, r.Payload)
		case !d.Tagged && r.Opcode == mpa.OpReadRequest:
			p.chunks.iwarpReadRequest(w.rec, h.path(), &r.ReadRequest)
		}
	}
	h.send(r, h.frameAt(p))
}

// send hands a complete untagged Send to the ULP decoder, reassembling
// Sends that span several DDP segments by MSN and MO.
func (h *iwarpHalf) send(r *mpa.RDMAP, firstFrame int) {
	if !r.Opcode.IsSend() || r.Tagged || r.QN != mpa.QueueSend {
		return
	}
	w := h.s.w
	last := w.rec.Frame
	if r.MO == 0 && r.Last {
		h.deliver(SendInfo{Transport: "iwarp", FirstFrame: firstFrame, LastFrame: last,
			Invalidate: r.Opcode.Invalidates(), InvalidateSTag: r.InvalidateSTag, Length: len(r.Payload)}, r.Payload)
		return
	}
	end := int(r.MO) + len(r.Payload)
	if end > w.cfg.MaxSendBytes || int(r.MO) > w.cfg.MaxSendBytes {
		w.addFinding(CodeIWARPSendLimit, finding.SeverityWarning, -1,
			fmt.Sprintf("Send MSN %d: segment at MO %d ends at %d octets, past the reassembly limit of %d; the Send is not decoded",
				r.MSN, r.MO, end, w.cfg.MaxSendBytes))
		delete(h.sends, r.MSN)
		return
	}
	if h.sends == nil {
		h.sends = map[uint32]*partialSend{}
	}
	ps := h.sends[r.MSN]
	if r.MO == 0 {
		h.cutSend = false
	} else if ps == nil && h.cutSend {
		// The end of a message begun in a hole (gap): kept in case a
		// late segment brings its beginning.
		h.keepOrphan(r)
		return
	}
	if ps != nil && r.MO == 0 {
		// A new message reusing the MSN (after a hole): start again.
		ps = nil
	}
	if ps == nil {
		if len(h.sends) >= w.cfg.MaxPendingSends {
			var oldest uint32
			first := true
			for msn, q := range h.sends {
				if first || q.order < h.sends[oldest].order {
					oldest, first = msn, false
				}
			}
			w.addFinding(CodeIWARPSendLimit, finding.SeverityWarning, -1,
				fmt.Sprintf("%d partial Sends pending (limit %d): Send MSN %d is dropped", len(h.sends), w.cfg.MaxPendingSends, oldest))
			delete(h.sends, oldest)
		}
		ps = &partialSend{total: -1, firstFrame: firstFrame, order: w.stats.FPDUs}
		h.sends[r.MSN] = ps
	}
	if int(r.MO) != ps.got {
		// The segments of one message go out in order on one TCP
		// stream: a different MO means octets were lost (a hole in the
		// capture) or repeated.
		w.addFinding(CodeIWARPIncomplete, finding.SeverityWarning, -1,
			fmt.Sprintf("Send MSN %d: segment at MO %d after %d octets of the message: the Send is not decoded", r.MSN, r.MO, ps.got))
		delete(h.sends, r.MSN)
		return
	}
	ps.buf = append(ps.buf, r.Payload...)
	ps.got += len(r.Payload)
	ps.lastFrame = last
	if r.Opcode.Invalidates() {
		ps.invalidate, ps.stag = true, r.InvalidateSTag
	}
	if r.Last {
		ps.total = end
	}
	if h.lateMode {
		h.adoptOrphans(r.MSN, ps)
	}
	if ps.total >= 0 && ps.got >= ps.total {
		delete(h.sends, r.MSN)
		h.deliver(SendInfo{Transport: "iwarp", FirstFrame: ps.firstFrame, LastFrame: ps.lastFrame,
			Invalidate: ps.invalidate, InvalidateSTag: ps.stag, Length: ps.total}, ps.buf[:ps.total])
	}
}

// path names the stream for the chunks of RPC-over-RDMA calls: its port
// pair, the same both ways.
func (h *iwarpHalf) path() uint32 {
	a, b := uint32(h.srcPort), uint32(h.dstPort)
	if a > b {
		a, b = b, a
	}
	return a<<16 | b
}

// deliver hands a complete Send to the ULP decoder, with the service the
// stream's MPA frames named.
func (h *iwarpHalf) deliver(info SendInfo, payload []byte) {
	w := h.s.w
	if h.s.svcKnown {
		info.service = &h.s.svc
	}
	info.path, info.setup, info.inline = h.path(), h.s.reqSeen, h.s.inline
	w.stats.Sends++
	w.sends.decodeSend(w.rec, payload, info)
}

// resync looks for FPDU framing in b (data offset p): a plausible header
// confirmed by a good CRC or by a plausible header right after it. It
// returns the octets to skip and whether framing was found.
func (h *iwarpHalf) resync(b []byte, p int, final bool) (int, bool) {
	w := h.s.w
	if !h.synced && h.scanned >= w.cfg.ResyncWindow {
		h.state = stateIgnore
		return len(b), false
	}
	for q := 0; q+2+mpa.DDPTaggedHeaderLen <= len(b); q++ {
		at := h.pos + p + q
		if h.fpduBaseKnown && (at-h.fpduBase)%4 != 0 {
			// FPDUs (and markers) are 4-aligned in the FPDU stream.
			continue
		}
		if !h.synced && h.scanned+q >= w.cfg.ResyncWindow {
			h.state = stateIgnore
			return len(b), false
		}
		if mpa.IsKeyPrefix(b[q:]) && !h.synced {
			// An MPA frame (the stream began just before the capture's
			// first octets of it).
			h.scanned += q
			h.state = stateFrame
			h.closeHole(at)
			return q, true
		}
		opts := h.options(at)
		var hb [2 + mpa.DDPUntaggedHeaderLen]byte
		hdr := unmarked(hb[:0], b[q:], opts)
		if len(hdr) < 2+mpa.DDPTaggedHeaderLen {
			break
		}
		n := int(binary.BigEndian.Uint16(hdr))
		if !plausibleFPDU(hdr, n) {
			continue
		}
		placed := false
		if h.markersUnplaced() {
			// Where the markers sit, if this is an FPDU that spans one.
			if h.placeMarkers(b[q:], at); h.fpduBaseKnown {
				placed, opts = true, h.options(at)
			}
		}
		wl := mpa.WireLen(n, opts.StreamOffset, opts.Markers)
		if q+wl > len(b) {
			if placed {
				h.fpduBaseKnown = false
			}
			if final {
				break
			}
			// Wait for the whole candidate and the next header.
			h.scanned += q
			return q, false
		}
		// Confirm the candidate: a good CRC, or plausible headers at the
		// next FPDU positions (two of them when no MPA frame was seen, as
		// the stream may not be iWARP at all), or, at the end of the
		// input, a chain that ends exactly where the data ends.
		f := mpa.FPDU{Options: opts}
		if f.DecodeFromBytes(b[q:q+wl], gopacket.NilDecodeFeedback) != nil || !markersAgree(&f) {
			// The markers inside the candidate point elsewhere: it is
			// not an FPDU start.
			if placed {
				h.fpduBaseKnown = false
			}
			continue
		}
		// A marker inside the candidate that points back at it (checked
		// above) confirms it as well as a CRC does.
		confirmed := f.CRCStatus == mpa.CRCStatusGood || len(f.Markers) > 0
		if !confirmed {
			need := 1
			if !h.fpduBaseKnown {
				need = 2
			}
			var wait bool
			confirmed, wait = h.chain(b[q+wl:], at+wl, need, final)
			if wait {
				if placed {
					h.fpduBaseKnown = false
				}
				h.scanned += q
				return q, false
			}
		}
		if !confirmed {
			if placed {
				h.fpduBaseKnown = false
			}
			continue
		}
		if !h.fpduBaseKnown {
			// Markers cannot be placed without the MPA frames; a
			// stream captured mid-way is read without them.
			h.fpduBase = at
		}
		if skipped := h.scanned + q; (skipped > 0 || !h.afterGap) && !h.snapResync {
			// (An FPDU right after a hole needs no word beyond the
			// hole's; CodeIWARPNotCaptured said the stream resynchronises
			// after each hole the snap length left.)
			w.addFinding(CodeIWARPResync, finding.SeverityInfo, h.placeOf(at, 2),
				fmt.Sprintf("TCP %d→%d: FPDU framing found at stream offset %d after skipping %d octets", h.srcPort, h.dstPort, at, skipped))
		}
		h.state, h.synced, h.scanned, h.afterGap, h.snapResync = stateFPDU, true, 0, false, false
		h.closeHole(at)
		return q, true
	}
	// Nothing here: keep the tail a header could start in.
	keep := min(len(b), 2+mpa.DDPUntaggedHeaderLen+mpa.MarkerLen)
	if final {
		keep = 0
	}
	skip := len(b) - keep
	h.scanned += skip
	return skip, false
}

// chain reports whether need plausible FPDU headers follow one another at
// the start of b (stream position at), or wait when b ends before they can
// be checked and more data may come. A chain that ends exactly at the end
// of b is enough at the end of the input, and in a stream known to be
// iWARP (in sync before a hole or lost framing, or an MPA frame of the
// connection seen): senders align FPDUs with TCP segments (RFC 5044 §8),
// so the FPDU that ends the data at hand is decoded on the frame that
// carried it, not held for the next header.
func (h *iwarpHalf) chain(b []byte, at, need int, final bool) (ok, wait bool) {
	known := h.synced || h.s.reqSeen || h.s.repSeen
	for i := 0; i < need; i++ {
		if len(b) == 0 && (final || known) {
			return true, false
		}
		opts := h.options(at)
		var hb [2 + mpa.DDPUntaggedHeaderLen]byte
		hdr := unmarked(hb[:0], b, opts)
		if len(hdr) < 2+mpa.DDPTaggedHeaderLen {
			return false, !final
		}
		n := int(binary.BigEndian.Uint16(hdr))
		if !plausibleFPDU(hdr, n) {
			return false, false
		}
		wl := mpa.WireLen(n, opts.StreamOffset, opts.Markers)
		if i+1 < need {
			if wl > len(b) {
				return false, !final
			}
			b, at = b[wl:], at+wl
		}
	}
	return true, false
}

// markersAgree reports that every marker inside a decoded FPDU points back
// at it (RFC 5044 §4.3): markers are what lets a receiver find FPDUs again.
func markersAgree(f *mpa.FPDU) bool {
	for _, m := range f.Markers {
		if m.Reserved != 0 || m.FPDUPtr != m.Want {
			return false
		}
	}
	return true
}

// unmarked appends to dst (up to its capacity) the octets of b, an FPDU
// stream from stream offset opts.StreamOffset, without the markers.
func unmarked(dst, b []byte, opts mpa.FPDUOptions) []byte {
	for i := 0; i < len(b) && len(dst) < cap(dst); i++ {
		if opts.Markers && (opts.StreamOffset+i)%mpa.MarkerInterval < mpa.MarkerLen {
			continue
		}
		dst = append(dst, b[i])
	}
	return dst
}

// plausibleFPDU checks the header of an FPDU at the start of b (no marker
// before it) whose ULPDU_Length is n: DDP and RDMAP version 1, reserved
// bits clear, an RFC 5040 opcode in the buffer model and queue it belongs
// to, and a length that holds the headers.
func plausibleFPDU(b []byte, n int) bool {
	if len(b) < 4 {
		return false
	}
	ddp, rdmap := b[2], b[3]
	if ddp&mpa.DDPVersionMask != mpa.DDPVersion1 || ddp&mpa.DDPReservedMask != 0 {
		return false
	}
	if rdmap&mpa.RDMAPVersionMask != mpa.RDMAPVersion1<<6 || rdmap&mpa.RDMAPReservedMask != 0 {
		return false
	}
	op := mpa.Opcode(rdmap & mpa.RDMAPOpcodeMask)
	if op > mpa.OpTerminate {
		return false
	}
	tagged := ddp&mpa.DDPFlagTagged != 0
	if op.Tagged() != tagged || n < mpa.HeaderLen(ddp) {
		return false
	}
	if !tagged && len(b) >= 2+10 && binary.BigEndian.Uint32(b[2+6:]) != op.Queue() {
		return false
	}
	return true
}

// addHole records a stretch of the stream never decoded, for a late
// segment that fills it. An open hole before it ends where it begins.
func (h *iwarpHalf) addHole(hl streamHole) {
	if n := len(h.holes); n > 0 && h.holes[n-1].open {
		h.closeHole(hl.start)
	}
	if len(h.holes) >= maxHoles {
		h.holes = slices.Delete(h.holes, 0, 1)
	}
	h.holes = append(h.holes, hl)
}

// keepLate reports whether n more octets (what, for the finding) may be
// kept for a late segment within MaxTCPBufferedBytes; when not, the first
// time since the last hole, an iwarp.buffer-limit finding says so.
func (h *iwarpHalf) keepLate(n int, what string) bool {
	w := h.s.w
	if w.reserve(n) {
		return true
	}
	if !h.lateLimited {
		h.lateLimited = true
		w.addFinding(CodeIWARPBufferLimit, finding.SeverityWarning, -1,
			fmt.Sprintf("TCP %d→%d: %d octets of %s, kept for a segment that fills it later, would exceed the %d octets held for all streams: not kept (a late segment that needs them is not decoded)",
				h.srcPort, h.dstPort, n, what, w.cfg.MaxTCPBufferedBytes))
		w.stats.LimitHits++
	}
	return false
}

// accountLate counts what h's holes and orphans hold in the IWARP's
// pendTotal after they changed.
func (h *iwarpHalf) accountLate() {
	n := 0
	for i := range h.holes {
		n += cap(h.holes[i].pre) + cap(h.holes[i].post)
	}
	for i := range h.orphans {
		n += cap(h.orphans[i].payload)
	}
	h.s.w.pendTotal += n - h.lateHeld
	h.lateHeld = n
}

// closeHole notes where framing was found again after the last hole (at):
// the octets after the hole up to there were not decoded.
func (h *iwarpHalf) closeHole(at int) {
	n := len(h.holes)
	if n == 0 || !h.holes[n-1].open {
		return
	}
	defer h.accountLate()
	hl := &h.holes[n-1]
	hl.open = false
	hl.end = max(at, hl.gapEnd)
	if k := hl.end - hl.gapEnd; k == 0 {
		hl.post = nil
	} else if k <= len(hl.post) {
		hl.post = hl.post[:k]
	} else {
		hl.post = nil // not all kept
	}
}

// late decodes the octets of a segment that arrived after later ones
// (stream position a): those that fill a hole, together with the octets
// kept around it, are decoded on this frame when a PDU can be framed there:
// at the hole's start when a PDU began there, else where a plausible FPDU
// header is confirmed by its CRC or by FPDUs that end exactly where the
// octets at hand end (senders align FPDUs with segments, RFC 5044 §8).
// Octets already decoded are a retransmission and not decoded again.
func (h *iwarpHalf) late(a int, data []byte) {
	if h.state == stateIgnore {
		return
	}
	defer h.accountLate()
	b := a + len(data)
	for i := range h.holes {
		hl := &h.holes[i]
		missing := hl.start + len(hl.pre)
		lo, hi := max(a, hl.start), min(b, hl.gapEnd)
		if hi <= max(lo, missing) {
			continue // nothing missing in it
		}
		var run []byte
		runStart, known := lo, false
		if lo <= missing {
			run = append(run, hl.pre[:lo-hl.start]...)
			runStart, known = hl.start, hl.boundary
		}
		run = append(run, data[lo-a:hi-a]...)
		withPost := hi == hl.gapEnd
		if withPost {
			run = append(run, hl.post...)
		}
		used := h.decodeLate(run, runStart, known)
		end := runStart + used
		switch {
		case used == 0 && runStart == hl.start && len(run) <= maxHoleOctets:
			// Nothing to frame yet: keep the octets for the segment
			// that brings what is still missing.
			if withPost {
				run = run[:len(run)-len(hl.post)]
			}
			if h.keepLate(cap(run)-cap(hl.pre), "a late segment's octets in a hole") {
				hl.pre = run
			}
		case used == 0:
		case hl.open && end >= hl.gapEnd:
			// The late octets framed what came after the hole: the
			// stream is in step again from where they end.
			if end >= h.pos && end <= h.pos+len(h.pend) && h.state == stateResync {
				h.setPend(h.pend[end-h.pos:], h.pendFrame)
				h.pos = end
				h.state, h.synced, h.scanned, h.afterGap = stateFPDU, true, 0, false
			}
			if runStart > hl.start {
				// The octets before the late ones are still missing.
				hl.end, hl.gapEnd, hl.open, hl.post = runStart, runStart, false, nil
			} else {
				h.holes = slices.Delete(h.holes, i, i+1)
			}
		default:
			// What is left of the hole begins where the decoded PDUs end.
			var rest []streamHole
			if end < hl.gapEnd {
				r := streamHole{start: end, end: hl.end, gapEnd: hl.gapEnd, open: hl.open, boundary: true, post: hl.post, postCut: hl.postCut}
				if n := hi - runStart - used; n > 0 && h.keepLate(n, "a late segment's octets in a hole") {
					r.pre = append([]byte(nil), run[used:hi-runStart]...)
				}
				rest = append(rest, r)
			}
			if runStart > hl.start {
				// The octets before the late ones are still missing.
				hl.end, hl.gapEnd, hl.open, hl.post = runStart, runStart, false, nil
				h.holes = slices.Insert(h.holes, i+1, rest...)
			} else {
				h.holes = slices.Replace(h.holes, i, i+1, rest...)
			}
		}
		return
	}
}

// decodeLate decodes the PDUs at the start of run (octets from stream
// position at0 a late segment completed) on the current frame, and returns
// how many octets they took. known is set when a PDU begins at at0;
// otherwise the first FPDU must be confirmed. Nothing that cannot be framed
// is decoded, so mis-framed octets raise no finding.
func (h *iwarpHalf) decodeLate(run []byte, at0 int, known bool) int {
	w := h.s.w
	pos, sg, pend0, pendFrame, state, synced := h.pos, h.sg, h.pend0, h.pendFrame, h.state, h.synced
	sends, cut := h.sends, h.cutSend
	h.pos, h.sg, h.pend0, h.pendFrame = at0, nil, len(run), w.cur.frame
	// Sends are collected apart from the stream's own; a segment whose
	// message began in what is still missing is not one to complain of.
	h.sends, h.cutSend, h.lateMode = h.lateSends, true, true
	defer func() {
		h.lateSends = h.sends
		h.pos, h.sg, h.pend0, h.pendFrame, h.synced = pos, sg, pend0, pendFrame, synced
		h.sends, h.cutSend, h.lateMode = sends, cut, false
		if h.state != stateIgnore {
			h.state = state
		}
	}()
	p := 0
	if at0 == 0 && known && mpa.IsKeyPrefix(run) {
		// The MPA request or reply that starts the stream.
		n := mpa.FrameLen(run)
		if kind, _ := mpa.FrameKindOf(run); kind == 0 || n == 0 || n > len(run) {
			return 0
		}
		h.state = stateFrame
		if m, ok := h.frame(run, 0, true); ok && h.state != stateResync {
			p = m
		}
		if h.state == stateIgnore || p == 0 {
			return p
		}
	}
	for p < len(run) {
		at := at0 + p
		opts := h.options(at)
		n, ok := mpa.PeekULPDULength(run[p:], opts.StreamOffset, opts.Markers)
		if !ok {
			break
		}
		var hb [2 + mpa.DDPUntaggedHeaderLen]byte
		hdr := unmarked(hb[:0], run[p:], opts)
		if len(hdr) < 2+mpa.DDPTaggedHeaderLen || !plausibleFPDU(hdr, n) {
			break
		}
		wl := mpa.WireLen(n, opts.StreamOffset, opts.Markers)
		if p+wl > len(run) {
			break
		}
		if !known {
			f := mpa.FPDU{Options: opts}
			if f.DecodeFromBytes(run[p:p+wl], gopacket.NilDecodeFeedback) != nil || !markersAgree(&f) {
				break
			}
			if f.CRCStatus != mpa.CRCStatusGood && len(f.Markers) == 0 && !h.tiles(run[p:], at) {
				break
			}
			known = true
		}
		h.decodeFPDU(run[p:p+wl], p, opts)
		p += wl
	}
	return p
}

// tiles reports whether plausible FPDUs follow one another from the start
// of b (stream position at) to exactly its end.
func (h *iwarpHalf) tiles(b []byte, at int) bool {
	for len(b) > 0 {
		opts := h.options(at)
		var hb [2 + mpa.DDPUntaggedHeaderLen]byte
		hdr := unmarked(hb[:0], b, opts)
		if len(hdr) < 2+mpa.DDPTaggedHeaderLen {
			return false
		}
		n := int(binary.BigEndian.Uint16(hdr))
		wl := mpa.WireLen(n, opts.StreamOffset, opts.Markers)
		if !plausibleFPDU(hdr, n) || wl > len(b) {
			return false
		}
		b, at = b[wl:], at+wl
	}
	return true
}

// keepOrphan keeps a DDP segment of a Send whose beginning was lost in a
// hole, within bounds (the oldest go first).
func (h *iwarpHalf) keepOrphan(r *mpa.RDMAP) {
	if len(r.Payload) > maxOrphanBytes {
		return
	}
	size := len(r.Payload)
	for _, o := range h.orphans {
		size += len(o.payload)
	}
	for len(h.orphans) > 0 && (len(h.orphans) >= maxOrphanSegments || size > maxOrphanBytes) {
		size -= len(h.orphans[0].payload)
		h.orphans = slices.Delete(h.orphans, 0, 1)
	}
	h.accountLate()
	if !h.keepLate(len(r.Payload), "a DDP segment of a Send begun in a hole") {
		return
	}
	defer h.accountLate()
	h.orphans = append(h.orphans, orphanSegment{msn: r.MSN, mo: r.MO, last: r.Last, payload: append([]byte(nil), r.Payload...)})
}

// adoptOrphans appends to ps, a Send a late segment continued, the
// segments of it kept after the hole that follow on from what it has.
func (h *iwarpHalf) adoptOrphans(msn uint32, ps *partialSend) {
	for again := true; again; {
		again = false
		for i, o := range h.orphans {
			if o.msn != msn || int(o.mo) != ps.got {
				continue
			}
			ps.buf = append(ps.buf, o.payload...)
			ps.got += len(o.payload)
			if o.last {
				ps.total = ps.got
			}
			h.orphans = slices.Delete(h.orphans, i, i+1)
			again = true
			break
		}
	}
}
