package dissect

import (
	"fmt"
	"sort"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// IWARPStats counts what the reassembly did and how much it holds.
type IWARPStats struct {
	// Streams is the number of TCP connections tracked now; PeakStreams
	// the most at any time.
	Streams, PeakStreams int
	// PendingBytes is what unfinished PDUs hold now; PeakPending the most.
	PendingBytes, PeakPending int
	// Frames, FPDUs and Sends count MPA frames, FPDUs and complete Sends
	// handed to the ULP decoder.
	Frames, FPDUs, Sends int
	// Evicted counts streams forgotten because of MaxStreams; LimitHits
	// the unfinished PDUs dropped for MaxPDUBytes or MaxTCPBufferedBytes.
	Evicted, LimitHits int
}

// IWARP reassembles TCP streams and decodes iWARP on them: MPA frames on any
// port (found by their keys), then FPDUs with the M and C the frames
// negotiated, DDP and RDMAP, and reassembles untagged Sends for the ULP
// decoder. One value serves a whole run; it is not safe for concurrent use.
//
// The Dissector calls Segment for every TCP segment and Flush once at the
// end of input. The layers a call completes are appended to the Record
// given (fresh values, never reused), with offset -1 unless the PDU lies
// wholly inside the current segment, and with their findings.
type IWARP struct {
	cfg   Options
	sends sendDecoder // complete Sends go to it
	// rpc is the RPC-over-RDMA decoder behind sends (nil: none): it
	// numbers the streams whose MPA frames were seen and forgets their
	// calls when they end (closed).
	rpc   *rpcSends
	pool  *reassembly.StreamPool
	asm   *reassembly.Assembler
	live  map[*iwarpStream]struct{}
	rec   *Record
	stats IWARPStats

	// The segment being assembled.
	cur struct {
		frame      int
		seq        uint32
		payload    []byte
		payloadOff int // frame offset of payload, -1 if unknown
	}
	flushing bool // a flush by time or at end of input is running
	// snapPDU is set while the octets before a hole the snap length left
	// (iwarpHalf.snapCut) are decoded: a PDU there ends in octets the
	// capture did not store (snapPDU).
	snapPDU bool
	// queue holds the streams' callbacks during a flush, draining is set
	// while they are decoded (flush).
	queue     []queuedCall
	draining  bool
	streams   int // streams begun, to number them (iwarpStream.seq)
	lastFlush time.Time
	pendTotal int // octets held in the halves' pend buffers
	// closed is the stream the segment being assembled closed (both
	// FINs, or an RST), ended once the segment is (Segment).
	closed *iwarpStream
}

// newIWARP makes the iWARP reassembler, bounded by the iWARP limits of
// opts (zero fields: defaults), handing complete Sends to sends.
func newIWARP(opts Options, sends sendDecoder) *IWARP {
	return &IWARP{cfg: opts.withDefaults(), sends: sends, rpc: rpcOf(sends), live: map[*iwarpStream]struct{}{}}
}

// assembler makes the TCP reassembly on the first segment (a capture
// without TCP does not need its pools).
func (w *IWARP) assembler() *reassembly.Assembler {
	if w.asm != nil {
		return w.asm
	}
	w.pool = reassembly.NewStreamPool(iwarpFactory{w})
	w.asm = reassembly.NewAssembler(w.pool)
	// Data after a hole is not held for the missing octets: the first
	// page queued out of order is handed over at once with the hole
	// skipped, as tshark (tcp.reassemble_out_of_order off) decodes a
	// segment after "previous segment not captured". Its FPDUs are thus
	// reported on the frame that carried them; a late segment that fills
	// the hole is decoded on its own frame (iwarpHalf.late).
	w.asm.MaxBufferedPagesPerConnection = 1
	return w.asm
}

// Stats returns the counters.
func (w *IWARP) Stats() IWARPStats {
	s := w.stats
	s.Streams = len(w.live)
	s.PendingBytes = w.pendTotal
	return s
}

// segmentContext carries a segment's capture info through the assembler;
// InterfaceIndex holds the frame number (the assembler keeps only
// CaptureInfo for queued data).
type segmentContext struct{ ci gopacket.CaptureInfo }

func (c *segmentContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// Segment feeds one TCP segment of the frame in rec; netFlow is the IP
// layer's NetworkFlow. iWARP layers completed by it are appended to rec.
func (w *IWARP) Segment(rec *Record, netFlow gopacket.Flow, tcp *layers.TCP) {
	asm := w.assembler()
	w.rec = rec
	w.cur.frame, w.cur.seq, w.cur.payload = rec.Frame, tcp.Seq, tcp.Payload
	w.cur.payloadOff = frameOffset(rec.Data, tcp.Payload)
	now := rec.Time
	if w.lastFlush.IsZero() {
		w.lastFlush = now
	}
	if now.Sub(w.lastFlush) >= w.cfg.IdleTimeout/4 {
		// Forget idle streams.
		w.flush(func() {
			asm.FlushWithOptions(reassembly.FlushOptions{T: now.Add(-w.cfg.IdleTimeout), TC: now.Add(-w.cfg.IdleTimeout)})
		})
		w.lastFlush = now
	}
	if len(w.live) >= w.cfg.MaxStreams {
		w.evict()
	}
	ctx := &segmentContext{ci: gopacket.CaptureInfo{Timestamp: now, CaptureLength: rec.CaptureLength,
		Length: rec.Length, InterfaceIndex: rec.Frame}}
	asm.AssembleWithContext(netFlow, tcp, ctx)
	if s := w.closed; s != nil {
		// Once the segment's octets are decoded: a reply in the last
		// FIN's segment is still matched.
		w.closed = nil
		s.end()
	}
	w.stats.PeakPending = max(w.stats.PeakPending, w.pendTotal)
	w.rec = nil
}

// Flush ends the input: every stream's buffered data is pushed through and
// decoded, unfinished PDUs are reported, and every stream is forgotten.
// Layers and findings go to rec (the Dissector's end-of-input record).
func (w *IWARP) Flush(rec *Record) {
	w.rec = rec
	w.cur.frame, w.cur.payload, w.cur.payloadOff = 0, nil, -1
	if w.asm != nil {
		w.flush(func() { w.asm.FlushAll() })
	}
	// Streams the assembler no longer held, in the order they began.
	left := make([]*iwarpStream, 0, len(w.live))
	for s := range w.live {
		left = append(left, s)
	}
	sort.Slice(left, func(i, j int) bool { return left[i].seq < left[j].seq })
	w.flushing = true
	for _, s := range left {
		s.complete()
	}
	w.flushing = false
	w.rec = nil
}

func (w *IWARP) flushOlder(t time.Time) {
	if w.asm != nil {
		w.flush(func() { w.asm.FlushCloseOlderThan(t) })
	}
}

// flush runs fn, which makes the assembler hand over buffered data, with
// w.flushing set. The assembler walks its streams in map order: the
// streams' callbacks only queue what they are given, and the queue is
// decoded afterwards in the order the streams began (each
// stream's calls in the order they came), so that the same capture gives
// the same records: the decode order also decides which RPC call a reply
// is matched with.
func (w *IWARP) flush(fn func()) {
	w.flushing = true
	fn()
	q := w.queue
	sort.SliceStable(q, func(i, j int) bool { return q[i].s.seq < q[j].s.seq })
	w.draining = true
	for i := range q {
		if q[i].sg == nil {
			q[i].s.complete()
		} else {
			q[i].s.ReassembledSG(q[i].sg, nil)
		}
		q[i] = queuedCall{}
	}
	w.queue = q[:0]
	w.draining = false
	w.flushing = false
}

// queuedCall is a stream callback made during a flush, decoded once the
// flush is over (flush): a ReassembledSG with a copy of its data, or
// (sg nil) a ReassemblyComplete.
type queuedCall struct {
	s  *iwarpStream
	sg *savedSG
}

// queue reports whether a callback of s is to be queued rather than
// decoded now.
func (w *IWARP) queued(s *iwarpStream, sg reassembly.ScatterGather) bool {
	if !w.flushing || w.draining {
		return false
	}
	var saved *savedSG
	if sg != nil {
		saved = saveSG(sg)
	}
	w.queue = append(w.queue, queuedCall{s: s, sg: saved})
	return true
}

// savedSG is a copy of what a reassembly.ScatterGather gave: its octets
// and the capture info of each run of them.
type savedSG struct {
	data  []byte
	ends  []int // where each run of one capture info ends
	cis   []gopacket.CaptureInfo
	dir   reassembly.TCPFlowDirection
	start bool
	end   bool
	skip  int
	stats reassembly.TCPAssemblyStats
}

func saveSG(sg reassembly.ScatterGather) *savedSG {
	avail, _ := sg.Lengths()
	c := &savedSG{stats: sg.Stats()}
	c.dir, c.start, c.end, c.skip = sg.Info()
	c.data = append([]byte(nil), sg.Fetch(avail)...)
	// The runs of octets from one segment: found by galloping to where
	// the capture info (the frame) changes.
	for off := 0; off < avail; {
		ci := sg.CaptureInfo(off)
		lo, step := off, 1
		for lo+step < avail && sg.CaptureInfo(lo+step).InterfaceIndex == ci.InterfaceIndex {
			lo, step = lo+step, step*2
		}
		hi := min(lo+step, avail) // first octet known (or assumed at the end) to differ
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if sg.CaptureInfo(mid).InterfaceIndex == ci.InterfaceIndex {
				lo = mid
			} else {
				hi = mid
			}
		}
		c.ends = append(c.ends, hi)
		c.cis = append(c.cis, ci)
		off = hi
	}
	return c
}

func (c *savedSG) Lengths() (int, int)                { return len(c.data), 0 }
func (c *savedSG) Fetch(length int) []byte            { return c.data[:length] }
func (c *savedSG) KeepFrom(offset int)                {}
func (c *savedSG) Stats() reassembly.TCPAssemblyStats { return c.stats }
func (c *savedSG) Info() (reassembly.TCPFlowDirection, bool, bool, int) {
	return c.dir, c.start, c.end, c.skip
}
func (c *savedSG) CaptureInfo(offset int) gopacket.CaptureInfo {
	for i, e := range c.ends {
		if offset < e {
			return c.cis[i]
		}
	}
	return gopacket.CaptureInfo{}
}

// evict forgets the least recently seen quarter of the streams.
func (w *IWARP) evict() {
	seen := make([]time.Time, 0, len(w.live))
	for s := range w.live {
		seen = append(seen, s.lastSeen)
	}
	sort.Slice(seen, func(i, j int) bool { return seen[i].Before(seen[j]) })
	cut := seen[len(seen)/4].Add(time.Nanosecond)
	before := len(w.live)
	w.flushOlder(cut)
	n := before - len(w.live)
	w.stats.Evicted += n
	w.addFinding(CodeIWARPStreamLimit, finding.SeverityWarning, -1,
		fmt.Sprintf("%d TCP streams tracked (limit %d): the %d seen least recently (before %s) were flushed and forgotten",
			before, w.cfg.MaxStreams, n, cut.UTC().Format(time.RFC3339Nano)))
}

func (w *IWARP) addFinding(code string, sev finding.Severity, off int, msg string) {
	if w.rec == nil {
		return
	}
	section := Catalog.Section(code)
	if code == CodeMalformed {
		section = sectionIWARP // an MPA frame, FPDU, DDP or RDMAP header in the stream
	}
	w.rec.addFinding(code, sev, section, "tcp", off, msg)
}

// add appends a layer at frame offset off (-1 when not placed) with its
// findings.
func (w *IWARP) add(l field.Layer, off int) {
	rec := w.rec
	rec.Add(l, off)
	if w.snapPDU {
		snapPDU(l)
	}
	if f, ok := l.(findingsAppender); ok {
		first := len(rec.Findings)
		rec.Findings = f.AppendFindings(rec.Findings)
		if w.snapPDU {
			rec.Findings = dropCut(rec.Findings, first)
		}
		rec.placeFindings(first, off)
		rec.keepCaptured(first)
	}
}

type iwarpFactory struct{ w *IWARP }

func (f iwarpFactory) New(netFlow, tcpFlow gopacket.Flow, tcp *layers.TCP, ac reassembly.AssemblerContext) reassembly.Stream {
	w := f.w
	if len(w.live) >= w.cfg.MaxStreams {
		return nil
	}
	w.streams++
	s := &iwarpStream{w: w, lastSeen: ac.GetCaptureInfo().Timestamp, seq: w.streams}
	// Half 0 is the direction of the packet that opened the stream.
	s.half[0].srcPort, s.half[0].dstPort = uint16(tcp.SrcPort), uint16(tcp.DstPort)
	s.half[1].srcPort, s.half[1].dstPort = s.half[0].dstPort, s.half[0].srcPort
	for i := range s.half {
		s.half[i].s = s
		s.half[i].idx = i
	}
	w.live[s] = struct{}{}
	if len(w.live) > w.stats.PeakStreams {
		w.stats.PeakStreams = len(w.live)
	}
	return s
}
