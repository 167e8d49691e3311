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
	// BufferedPages is the number of reassembly pages in use now;
	// PeakPages the most seen (sampled every 32 segments).
	BufferedPages, PeakPages int
	// PendingBytes is what unfinished PDUs hold now; PeakPending the most.
	PendingBytes, PeakPending int
	// Frames, FPDUs and Sends count MPA frames, FPDUs and complete Sends
	// handed to the ULP decoder.
	Frames, FPDUs, Sends int
	// Evicted counts streams forgotten because of MaxStreams; LimitHits
	// the times a page cap made the reassembler skip a hole.
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
	flushing  bool // a flush by time or at end of input is running
	lastFlush time.Time
	pendTotal int // octets held in the halves' pend buffers
	segments  int // segments seen, to sample the page count
}

// newIWARP makes the iWARP reassembler, bounded by the iWARP limits of
// opts (zero fields: defaults), handing complete Sends to sends.
func newIWARP(opts Options, sends sendDecoder) *IWARP {
	w := &IWARP{cfg: opts.withDefaults(), sends: sends, live: map[*iwarpStream]struct{}{}}
	w.pool = reassembly.NewStreamPool(iwarpFactory{w})
	w.asm = reassembly.NewAssembler(w.pool)
	w.asm.MaxBufferedPagesPerConnection = w.cfg.MaxPagesPerConn
	w.asm.MaxBufferedPagesTotal = w.cfg.MaxPagesTotal
	return w
}

// Stats returns the counters.
func (w *IWARP) Stats() IWARPStats {
	s := w.stats
	s.Streams = len(w.live)
	s.BufferedPages = w.pages()
	s.PendingBytes = w.pendTotal
	return s
}

// pages reads the assembler's page count (exposed only through Dump).
func (w *IWARP) pages() int {
	var n int
	fmt.Sscanf(w.asm.Dump(), "pageCache: used: %d:", &n)
	return n
}

// segmentContext carries a segment's capture info through the assembler;
// InterfaceIndex holds the frame number (the assembler keeps only
// CaptureInfo for queued data).
type segmentContext struct{ ci gopacket.CaptureInfo }

func (c *segmentContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// Segment feeds one TCP segment of the frame in rec; netFlow is the IP
// layer's NetworkFlow. iWARP layers completed by it are appended to rec.
func (w *IWARP) Segment(rec *Record, netFlow gopacket.Flow, tcp *layers.TCP) {
	w.rec = rec
	w.cur.frame, w.cur.seq, w.cur.payload = rec.Frame, tcp.Seq, tcp.Payload
	w.cur.payloadOff = frameOffset(rec.Data, tcp.Payload)
	now := rec.Time
	if w.lastFlush.IsZero() {
		w.lastFlush = now
	}
	if now.Sub(w.lastFlush) >= min(w.cfg.IdleTimeout, w.cfg.HoleTimeout)/4 {
		// Push data that waited too long behind a hole, and forget idle
		// streams.
		w.flushing = true
		w.asm.FlushWithOptions(reassembly.FlushOptions{T: now.Add(-w.cfg.HoleTimeout), TC: now.Add(-w.cfg.IdleTimeout)})
		w.flushing = false
		w.lastFlush = now
	}
	if len(w.live) >= w.cfg.MaxStreams {
		w.evict()
	}
	ctx := &segmentContext{ci: gopacket.CaptureInfo{Timestamp: now, CaptureLength: rec.CaptureLength,
		Length: rec.Length, InterfaceIndex: rec.Frame}}
	w.asm.AssembleWithContext(netFlow, tcp, ctx)
	// The page count is only exposed as text: sample it.
	if w.segments++; w.segments%32 == 0 {
		if p := w.pages(); p > w.stats.PeakPages {
			w.stats.PeakPages = p
		}
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
	w.flushing = true
	w.asm.FlushAll()
	w.flushing = false
	for s := range w.live {
		// Streams the assembler no longer held.
		s.complete()
	}
	w.rec = nil
}

func (w *IWARP) flushOlder(t time.Time) {
	w.flushing = true
	w.asm.FlushCloseOlderThan(t)
	w.flushing = false
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
	if f, ok := l.(findingsAppender); ok {
		first := len(rec.Findings)
		rec.Findings = f.AppendFindings(rec.Findings)
		rec.placeFindings(first, off)
	}
}

type iwarpFactory struct{ w *IWARP }

func (f iwarpFactory) New(netFlow, tcpFlow gopacket.Flow, tcp *layers.TCP, ac reassembly.AssemblerContext) reassembly.Stream {
	w := f.w
	if len(w.live) >= w.cfg.MaxStreams {
		return nil
	}
	s := &iwarpStream{w: w, lastSeen: ac.GetCaptureInfo().Timestamp}
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
