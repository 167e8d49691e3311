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
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
)

// IWARPConfig bounds the iWARP TCP reassembly. Zero fields take the
// defaults of DefaultIWARPConfig.
type IWARPConfig struct {
	// MaxPagesPerConn caps the out-of-order pages (about 1900 octets
	// each) buffered for one TCP connection.
	MaxPagesPerConn int
	// MaxPagesTotal caps the pages buffered for all connections.
	MaxPagesTotal int
	// MaxStreams caps the TCP connections tracked at once; beyond it the
	// least recently seen quarter is flushed and forgotten.
	MaxStreams int
	// IdleTimeout closes a connection that saw no packet for this long in
	// capture time (never wall-clock time).
	IdleTimeout time.Duration
	// HoleTimeout is how long (in capture time) data waits behind a hole
	// in a stream for the missing octets (a retransmission) before it is
	// decoded without them.
	HoleTimeout time.Duration
	// MaxSendBytes caps the size of a Send reassembled from several DDP
	// segments; MaxPendingSends the partial Sends kept per direction.
	MaxSendBytes    int
	MaxPendingSends int
	// MaxPDUBytes caps the octets held for one unfinished PDU of one
	// direction; MaxBufferedBytes those held for all streams.
	MaxPDUBytes      int
	MaxBufferedBytes int
	// ResyncWindow is how many octets of a stream that did not start
	// with an MPA frame are searched for FPDU framing before the stream
	// is taken as not iWARP.
	ResyncWindow int
	// MaxPrivateData is the MPA PD_Length above which a request, reply
	// or reject is reported (mpa.pd-length-over-512); default
	// mpa.MaxPrivateData, RFC 5044's 512.
	MaxPrivateData int
}

// DefaultIWARPConfig returns the default limits: 256 pages (~475 KiB) per
// connection, 16384 pages (~30 MiB) in all, 8192 streams, 2 minutes idle,
// 1 second behind a hole,
// 1 MiB Sends, 64 partial Sends per direction, 70000 octets for one
// unfinished PDU (the largest FPDU with markers fits), 64 MiB of unfinished
// PDUs in all, 256 KiB resync window.
func DefaultIWARPConfig() IWARPConfig {
	return IWARPConfig{MaxPagesPerConn: 256, MaxPagesTotal: 16384, MaxStreams: 8192, IdleTimeout: 2 * time.Minute, HoleTimeout: time.Second,
		MaxSendBytes: 1 << 20, MaxPendingSends: 64, ResyncWindow: 256 << 10,
		MaxPDUBytes: 70000, MaxBufferedBytes: 64 << 20, MaxPrivateData: mpa.MaxPrivateData}
}

func (c IWARPConfig) withDefaults() IWARPConfig {
	d := DefaultIWARPConfig()
	if c.MaxPagesPerConn <= 0 {
		c.MaxPagesPerConn = d.MaxPagesPerConn
	}
	if c.MaxPagesTotal <= 0 {
		c.MaxPagesTotal = d.MaxPagesTotal
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = d.MaxStreams
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.HoleTimeout <= 0 {
		c.HoleTimeout = d.HoleTimeout
	}
	if c.MaxSendBytes <= 0 {
		c.MaxSendBytes = d.MaxSendBytes
	}
	if c.MaxPendingSends <= 0 {
		c.MaxPendingSends = d.MaxPendingSends
	}
	if c.MaxPDUBytes <= 0 {
		c.MaxPDUBytes = d.MaxPDUBytes
	}
	if c.MaxBufferedBytes <= 0 {
		c.MaxBufferedBytes = d.MaxBufferedBytes
	}
	if c.ResyncWindow <= 0 {
		c.ResyncWindow = d.ResyncWindow
	}
	if c.MaxPrivateData <= 0 {
		c.MaxPrivateData = d.MaxPrivateData
	}
	return c
}

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
	cfg   IWARPConfig
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

// NewIWARP makes the iWARP reassembler.
func NewIWARP(cfg IWARPConfig) *IWARP {
	w := &IWARP{cfg: cfg.withDefaults(), live: map[*iwarpStream]struct{}{}}
	w.pool = reassembly.NewStreamPool(iwarpFactory{w})
	w.asm = reassembly.NewAssembler(w.pool)
	w.asm.MaxBufferedPagesPerConnection = w.cfg.MaxPagesPerConn
	w.asm.MaxBufferedPagesTotal = w.cfg.MaxPagesTotal
	return w
}

// Config returns the limits in force.
func (w *IWARP) Config() IWARPConfig { return w.cfg }

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
	w.cur.payloadOff = -1
	if len(tcp.Payload) > 0 {
		if off := cap(rec.Data) - cap(tcp.Payload); off >= 0 && off+len(tcp.Payload) <= len(rec.Data) &&
			&rec.Data[off] == &tcp.Payload[0] {
			w.cur.payloadOff = off
		}
	}
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
	w.rec.Findings = append(w.rec.Findings, finding.Finding{Code: code, Severity: sev, Message: msg,
		Section: section, Frame: w.rec.Frame, Layer: "tcp", Offset: off})
}

// add appends a layer at frame offset off (-1 when not placed) with its
// findings.
func (w *IWARP) add(l field.Layer, off int) {
	rec := w.rec
	rec.Add(l, off)
	f, ok := l.(interface {
		AppendFindings([]finding.Finding) []finding.Finding
	})
	if !ok {
		return
	}
	start := len(rec.Findings)
	rec.Findings = f.AppendFindings(rec.Findings)
	for i := start; i < len(rec.Findings); i++ {
		x := &rec.Findings[i]
		x.Frame = rec.Frame
		if off < 0 {
			x.Offset = -1
		} else if x.Offset >= 0 {
			x.Offset += off
		}
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
