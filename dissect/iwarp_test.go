package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// iwFrame is what one frame of a capture produced: copies of the iWARP
// layers appended and the findings.
type iwFrame struct {
	frame    int
	srcPort  uint16
	frames   []*mpa.Frame
	fpdus    []*mpa.FPDU
	ddps     []*mpa.DDP
	rdmaps   []*mpa.RDMAP
	offsets  []int
	findings []finding.Finding
}

// iwSend is one Send handed to the ULP decoder.
type iwSend struct {
	frame   int
	payload []byte
	info    SendInfo
}

type iwRun struct {
	w      *IWARP
	frames map[int]*iwFrame
	sends  []iwSend
	final  *iwFrame // what Flush produced
}

func (r *iwRun) codes() map[string]int {
	m := map[string]int{}
	add := func(f *iwFrame) {
		for _, x := range f.findings {
			m[x.Code]++
		}
	}
	for _, f := range r.frames {
		add(f)
	}
	if r.final != nil {
		add(r.final)
	}
	return m
}

// all returns the iWARP layers of the whole run in frame order, then those
// of the end-of-input flush.
func (r *iwRun) all() (frames []*mpa.Frame, fpdus []*mpa.FPDU, rdmaps []*mpa.RDMAP) {
	for _, n := range r.frameNumbers() {
		f := r.frames[n]
		frames = append(frames, f.frames...)
		fpdus = append(fpdus, f.fpdus...)
		rdmaps = append(rdmaps, f.rdmaps...)
	}
	if r.final != nil {
		frames = append(frames, r.final.frames...)
		fpdus = append(fpdus, r.final.fpdus...)
		rdmaps = append(rdmaps, r.final.rdmaps...)
	}
	return
}

// frameNumbers lists the frames that produced something, in order.
func (r *iwRun) frameNumbers() []int {
	keys := make([]int, 0, len(r.frames))
	for n := range r.frames {
		keys = append(keys, n)
	}
	slices.Sort(keys)
	return keys
}

// collect copies the iWARP layers and findings of rec.
func collect(rec *Record) *iwFrame {
	f := &iwFrame{frame: rec.Frame, findings: append([]finding.Finding(nil), rec.Findings...)}
	for i, l := range rec.Layers {
		switch x := l.(type) {
		case *mpa.Frame:
			f.frames = append(f.frames, x)
		case *mpa.FPDU:
			f.fpdus = append(f.fpdus, x)
			f.offsets = append(f.offsets, rec.Offsets[i])
		case *mpa.DDP:
			f.ddps = append(f.ddps, x)
		case *mpa.RDMAP:
			f.rdmaps = append(f.rdmaps, x)
		}
	}
	return f
}

// openPcap opens a pcap file for reading packet by packet (closed when
// the test ends).
func openPcap(t testing.TB, path string) *pcapgo.Reader {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	rd, err := pcapgo.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// runIWARP feeds every TCP segment of a pcap to an IWARP.
func runIWARP(t testing.TB, path string, cfg Options) *iwRun {
	t.Helper()
	return runReader(t, openPcap(t, path).ReadPacketData, cfg)
}

func runReader(t testing.TB, next func() ([]byte, gopacket.CaptureInfo, error), cfg Options) *iwRun {
	run := &iwRun{frames: map[int]*iwFrame{}}
	run.w = newIWARP(cfg, sendFunc(func(rec *Record, payload []byte, info SendInfo) {
		run.sends = append(run.sends, iwSend{frame: rec.Frame, payload: append([]byte(nil), payload...), info: info})
	}))
	var (
		eth   layers.Ethernet
		ip4   layers.IPv4
		ip6   layers.IPv6
		tcp   layers.TCP
		types []gopacket.LayerType
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &ip6, &tcp)
	parser.IgnoreUnsupported = true
	var cur *Record
	for n := 1; ; n++ {
		data, ci, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		cur = &Record{Frame: n, Time: ci.Timestamp, Data: data, CaptureLength: ci.CaptureLength, Length: ci.Length}
		if err := parser.DecodeLayers(data, &types); err != nil {
			continue
		}
		var flow gopacket.Flow
		hasTCP := false
		for _, lt := range types {
			switch lt {
			case layers.LayerTypeIPv4:
				flow = ip4.NetworkFlow()
			case layers.LayerTypeIPv6:
				flow = ip6.NetworkFlow()
			case layers.LayerTypeTCP:
				hasTCP = true
			}
		}
		if !hasTCP {
			continue
		}
		run.w.Segment(cur, flow, &tcp)
		if len(cur.Layers) > 0 || len(cur.Findings) > 0 {
			run.frames[n] = collect(cur)
			run.frames[n].srcPort = uint16(tcp.SrcPort)
		}
	}
	end := &Record{}
	run.w.Flush(end)
	run.final = collect(end)
	return run
}

func TestIWARPRealSiw(t *testing.T) {
	run := runIWARP(t, testcap.SIW, Options{})
	// The MPA Request in frame 4 and the Reply in frame 6.
	for _, tc := range []struct {
		frame    int
		kind     mpa.FrameKind
		irdord   string
		ulp      string
		r        bool
		port     uint16
		frameOff int
	}{
		{4, mpa.FrameRequest, "00800000", "f6ab0e1801010303", true, 20049, 66},
		{6, mpa.FrameReply, "00000080", "f6ab0e1801000303", false, 20049, 66},
	} {
		f := run.frames[tc.frame]
		if f == nil || len(f.frames) != 1 {
			t.Fatalf("frame %d: no MPA frame: %+v", tc.frame, f)
		}
		m := f.frames[0]
		if m.Kind != tc.kind || m.Revision != 2 || !m.Enhanced() || m.Markers() || m.CRC() || m.PDLength != 12 {
			t.Errorf("frame %d: %+v", tc.frame, m)
		}
		if got := hex.EncodeToString(m.PrivateData[:4]); got != tc.irdord || hex.EncodeToString(m.ULPData) != tc.ulp || m.ULPOffset != 4 {
			t.Errorf("frame %d: IRD/ORD %s ULP %x at %d", tc.frame, got, m.ULPData, m.ULPOffset)
		}
		rd := m.PD.Reading
		if !rd.Valid || rd.Offset != 0 || rd.Message.RemoteInvalidation() != tc.r || rd.Effective().SendSize != 4096 {
			t.Errorf("frame %d: reading %+v", tc.frame, rd)
		}
		if m.PD.ULP.Kind != pvtdata.ULPRPCRDMA {
			t.Errorf("frame %d: ULP %v", tc.frame, m.PD.ULP.Kind)
		}
	}
	// Every FPDU decodes, with DDP/RDMAP version 1 and no CRC.
	_, fpdus, rdmaps := run.all()
	if len(fpdus) == 0 || len(fpdus) != len(rdmaps) {
		t.Fatalf("%d FPDUs, %d RDMAP", len(fpdus), len(rdmaps))
	}
	for _, f := range fpdus {
		if f.CRCStatus != mpa.CRCStatusNotNegotiated || f.CRC != 0 || len(f.Markers) != 0 {
			t.Fatalf("FPDU %+v", f)
		}
	}
	// Every Send reaches the ULP decoder exactly once despite the
	// duplicated segments: per direction the MSNs run 1, 2, 3 … with no
	// repeat and no hole, and each is a complete RPC-over-RDMA v1 header.
	sends := 0
	for _, r := range rdmaps {
		if r.Opcode.IsSend() {
			sends++
		}
	}
	if len(run.sends) != sends || sends == 0 {
		t.Fatalf("%d Sends decoded, %d Send FPDUs", len(run.sends), sends)
	}
	for i, s := range run.sends {
		if s.info.Transport != "iwarp" || s.info.Length != len(s.payload) || s.info.FirstFrame != s.frame || s.info.LastFrame != s.frame {
			t.Errorf("send %d: %+v in frame %d", i, s.info, s.frame)
		}
		if len(s.payload) < 28 || binary.BigEndian.Uint32(s.payload[4:]) != 1 {
			t.Errorf("send %d: not RPC-over-RDMA v1: %x", i, s.payload[:min(len(s.payload), 16)])
		}
	}
	checkMSNs(t, run)
	if c := run.codes(); len(c) != 0 {
		t.Errorf("findings on the real capture: %v", c)
	}
	// The capture has retransmitted duplicates (frames 14, 21, 59, 71):
	// they produce nothing.
	for _, n := range []int{14, 21, 59, 71} {
		if f := run.frames[n]; f != nil && (len(f.fpdus) > 0 || len(f.frames) > 0) {
			t.Errorf("duplicate frame %d decoded again", n)
		}
	}
	// Layers of a PDU inside one segment are placed in the frame.
	if f := run.frames[8]; f == nil || len(f.fpdus) != 1 || f.offsets[0] != 66 {
		t.Errorf("frame 8 FPDU offset: %+v", f)
	}
}

// checkMSNs checks that per TCP direction the Send MSNs run 1, 2, 3 ….
func checkMSNs(t *testing.T, run *iwRun) {
	t.Helper()
	var seq [2][]uint32
	for _, n := range run.frameNumbers() {
		f := run.frames[n]
		for _, r := range f.rdmaps {
			if !r.Opcode.IsSend() {
				continue
			}
			dir := 0
			if f.srcPort == 20049 {
				dir = 1 // server → client
			}
			seq[dir] = append(seq[dir], r.MSN)
		}
	}
	for d := range seq {
		for i, m := range seq[d] {
			if m != uint32(i+1) {
				t.Fatalf("direction %d: MSNs %v", d, seq[d])
			}
		}
	}
	if len(seq[0]) == 0 || len(seq[1]) == 0 {
		t.Fatalf("MSNs: %v", seq)
	}
}

func TestIWARPSynthetic(t *testing.T) {
	type want struct {
		frames, fpdus, sends int
		codes                []string // findings that must be present
		check                func(t *testing.T, run *iwRun)
	}
	for name, w := range map[string]want{
		"synth-iwarp-mpa-v1.pcap": {frames: 2, fpdus: 2, sends: 2, check: func(t *testing.T, run *iwRun) {
			fr, _, _ := run.all()
			for _, f := range fr {
				if f.Revision != 1 || f.IRDORD != mpa.IRDORDNone || f.ULPOffset != 0 || !f.PD.Reading.Valid {
					t.Errorf("%+v", f)
				}
			}
		}},
		"synth-iwarp-mpa-v2-p2p-rtr.pcap": {frames: 2, fpdus: 3, sends: 2, check: func(t *testing.T, run *iwRun) {
			fr, _, rd := run.all()
			req, rep := fr[0], fr[1]
			if !req.PeerToPeer() || !req.ZeroLengthRTR() || !req.WriteRTR() || !req.ReadRTR() || req.IRDValue() != 16 || req.ORDValue() != 16 {
				t.Errorf("request %#x %#x", req.IRD, req.ORD)
			}
			if !rep.PeerToPeer() || rep.ZeroLengthRTR() || !rep.WriteRTR() || rep.ReadRTR() {
				t.Errorf("reply %#x %#x", rep.IRD, rep.ORD)
			}
			if !req.PD.Reading.Valid || req.PD.Reading.Offset != 0 || req.ULPOffset != 4 {
				t.Errorf("request pvtdata %+v", req.PD.Reading)
			}
			if rd[0].Opcode != mpa.OpWrite || len(rd[0].Payload) != 0 {
				t.Errorf("RTR write: %+v", rd[0])
			}
		}},
		"synth-iwarp-markers-crc.pcap": {frames: 2, fpdus: 17, sends: 15, check: func(t *testing.T, run *iwRun) {
			_, fp, _ := run.all()
			markers := 0
			for _, f := range fp {
				if f.CRCStatus != mpa.CRCStatusGood || !f.Options.Markers {
					t.Errorf("FPDU crc %v markers %v", f.CRCStatus, f.Options.Markers)
				}
				markers += len(f.Markers)
			}
			if markers < 15 {
				t.Errorf("%d markers", markers)
			}
			last := run.sends[len(run.sends)-1]
			if last.info.Length != len(last.payload) || last.info.Length < 2500 || last.info.FirstFrame == last.info.LastFrame {
				t.Errorf("3-segment Send: %+v", last.info)
			}
		}},
		"synth-iwarp-crc-bad.pcap": {frames: 2, fpdus: 3, sends: 3, codes: []string{mpa.CodeCRCBad}, check: func(t *testing.T, run *iwRun) {
			_, fp, _ := run.all()
			got := []mpa.CRCStatus{fp[0].CRCStatus, fp[1].CRCStatus, fp[2].CRCStatus}
			if got[0] != mpa.CRCStatusGood || got[1] != mpa.CRCStatusBad || got[2] != mpa.CRCStatusGood {
				t.Errorf("CRC verdicts %v", got)
			}
		}},
		"synth-iwarp-reject.pcap": {frames: 2, codes: []string{mpa.CodeRejected}, check: func(t *testing.T, run *iwRun) {
			fr, _, _ := run.all()
			if !fr[1].Rejected() || string(fr[1].ULPData) != "no resources" {
				t.Errorf("reject %+v", fr[1])
			}
		}},
		// Out-of-order segments: the one after a hole is decoded at
		// once (the hole a stream gap), as tshark does; a late one that
		// fills the hole is decoded on its own frame with the octets
		// kept around the hole, and a duplicate is not decoded again.
		"synth-iwarp-split-reorder-dup.pcap": {frames: 2, fpdus: 6, sends: 4, codes: []string{CodeIWARPGap}, check: func(t *testing.T, run *iwRun) {
			fr, _, _ := run.all()
			if fr[0].Kind != mpa.FrameRequest || fr[1].Kind != mpa.FrameReply {
				t.Errorf("frames %+v", fr)
			}
			var got []string
			for _, k := range run.frameNumbers() {
				f := run.frames[k]
				for _, x := range f.frames {
					got = append(got, fmt.Sprintf("%d:%s", k, x.Kind))
				}
				for _, r := range f.rdmaps {
					got = append(got, fmt.Sprintf("%d:msn=%d,mo=%d", k, r.MSN, r.MO))
				}
				for _, x := range f.findings {
					got = append(got, fmt.Sprintf("%d:%s", k, x.Code))
				}
			}
			// Frame 5 comes after a hole in the request, which frame 6
			// fills (the request is decoded there, and the stream is in
			// step again); frame 13 after one in the 3-segment Send,
			// which 14 and 16 fill (the Send completes on 16; 15 is a
			// duplicate of 14).
			want := "[5:iwarp.stream-gap 6:Request 8:Reply 10:msn=1,mo=0 13:msn=2,mo=500 13:iwarp.stream-gap 14:msn=2,mo=0 16:msn=2,mo=250 17:msn=1,mo=0 17:msn=2,mo=0]"
			if fmt.Sprint(got) != want {
				t.Errorf("got  %v\nwant %s", got, want)
			}
		}},
		"synth-iwarp-midstream.pcap": {fpdus: 4, sends: 4, codes: []string{CodeIWARPResync}, check: func(t *testing.T, run *iwRun) {
			_, _, rd := run.all()
			var msns []uint32
			for _, r := range rd {
				msns = append(msns, r.MSN)
			}
			if fmt.Sprint(msns) != "[4 5 6 9]" {
				t.Errorf("MSNs %v", msns)
			}
		}},
		"synth-iwarp-gap.pcap": {frames: 2, fpdus: 4, sends: 4, codes: []string{CodeIWARPGap, CodeIWARPResync}, check: func(t *testing.T, run *iwRun) {
			_, fp, rd := run.all()
			var msns []uint32
			for i, r := range rd {
				msns = append(msns, r.MSN)
				if fp[i].CRCStatus != mpa.CRCStatusGood || !fp[i].Options.Markers {
					t.Errorf("FPDU %d: CRC %v markers %v", i, fp[i].CRCStatus, fp[i].Options.Markers)
				}
			}
			// The lost segment holds FPDU stream octets 1400–2799:
			// MSN 3 (944–1491) runs into it, MSN 4 and 5 lie in it, MSN 6
			// (2740–3435) starts in it; MSN 7 is found again by its
			// header and the next one's, on the marker grid.
			if fmt.Sprint(msns) != "[1 2 7 8]" {
				t.Errorf("MSNs %v", msns)
			}
		}},
		"synth-iwarp-rdmap-opcodes.pcap": {frames: 2, fpdus: 8, sends: 4, codes: []string{mpa.CodeTerminate}, check: func(t *testing.T, run *iwRun) {
			_, fp, rd := run.all()
			var ops []string
			for _, r := range rd {
				ops = append(ops, r.Opcode.String())
			}
			want := "Write,Read Request,Read Response,Send,Send with Invalidate,Send with SE,Send with SE and Invalidate,Terminate"
			if strings.Join(ops, ",") != want {
				t.Errorf("opcodes %v", ops)
			}
			for _, f := range fp {
				if f.CRCStatus != mpa.CRCStatusGood {
					t.Errorf("CRC %v", f.CRCStatus)
				}
			}
			if rd[1].ReadRequest.Size != 4096 || rd[1].ReadRequest.SrcSTag != 0x9abc {
				t.Errorf("read request %+v", rd[1].ReadRequest)
			}
			if e := rd[7].Terminate.Error(); e != "DDP: Untagged Buffer Error: Invalid MSN - no buffer available" || len(rd[7].Terminate.DDPHeader) != 18 {
				t.Errorf("terminate %q", e)
			}
			inv := 0
			for _, s := range run.sends {
				if s.info.Invalidate {
					inv++
					if s.info.InvalidateSTag>>16 != 0xabcd {
						t.Errorf("STag %#x", s.info.InvalidateSTag)
					}
				}
			}
			if inv != 2 {
				t.Errorf("%d invalidating Sends", inv)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			run := runIWARP(t, testcap.Synthetic(name), Options{})
			fr, fp, _ := run.all()
			if len(fr) != w.frames || len(fp) != w.fpdus || len(run.sends) != w.sends {
				t.Fatalf("%d frames, %d FPDUs, %d Sends; want %d, %d, %d (findings %v)", len(fr), len(fp), len(run.sends),
					w.frames, w.fpdus, w.sends, run.codes())
			}
			codes := run.codes()
			for _, c := range w.codes {
				if codes[c] == 0 {
					t.Errorf("no %s finding (have %v)", c, codes)
				}
			}
			for c := range codes {
				known := c == mpa.CodeRejected || c == pvtdata.CodeNotFound
				for _, x := range w.codes {
					known = known || x == c
				}
				if !known {
					t.Errorf("unexpected finding %s", c)
				}
			}
			if w.check != nil {
				w.check(t, run)
			}
		})
	}
}

// halfOpen feeds n half-open streams (a SYN, then data after a hole that
// is never filled) to w, one Record reused as the Dissector does, 1 µs
// apart, and returns the finding codes seen.
func halfOpen(w *IWARP, n int, gap time.Duration) map[string]int {
	codes := map[string]int{}
	rec := &Record{}
	payload := bytes.Repeat([]byte("MPA ID Req Frame"), 4)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame := 0
	for i := 0; i < n; i++ {
		src := []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
		flow := gopacket.NewFlow(layers.EndpointIPv4, src, []byte{10, 255, 0, 1})
		for k := 0; k < 2; k++ {
			frame++
			rec.Reset()
			rec.Frame, rec.Time = frame, t0.Add(time.Duration(frame)*gap)
			tcp := &layers.TCP{SrcPort: layers.TCPPort(1024 + i%50000), DstPort: 20049, Seq: 1000, SYN: true}
			if k == 1 {
				tcp.SYN, tcp.ACK, tcp.Seq = false, true, 1001+100 // a hole of 100 octets
				tcp.Payload = payload
			}
			tcp.SetInternalPortsForTesting()
			w.Segment(rec, flow, tcp)
			for _, f := range rec.Findings {
				codes[f.Code]++
			}
		}
	}
	rec.Reset()
	w.Flush(rec)
	for _, f := range rec.Findings {
		codes[f.Code]++
	}
	return codes
}

// TestIWARPMemoryBounded checks that tracked streams, buffered pages and
// pending octets stay under their caps on many half-open streams, that the
// caps are reported when hit, and that the heap does not grow with the
// number of streams.
func TestIWARPMemoryBounded(t *testing.T) {
	cfg := Options{MaxStreams: 200, MaxTCPBufferedBytes: 8 << 10}
	heap := func(n int) (uint64, IWARPStats, map[string]int) {
		runtime.GC()
		w := newIWARP(cfg, newRPCSends(cfg))
		codes := halfOpen(w, n, time.Microsecond)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := w.Stats()
		runtime.KeepAlive(w)
		return ms.HeapInuse, st, codes
	}
	small, _, _ := heap(2000)
	big, st, codes := heap(20000)
	t.Logf("stats %+v; heap in use after 2000 streams %d KiB, after 20000 %d KiB", st, small>>10, big>>10)
	if st.PeakStreams > cfg.MaxStreams {
		t.Errorf("peak streams %d > cap %d", st.PeakStreams, cfg.MaxStreams)
	}
	if st.PeakPending > cfg.MaxTCPBufferedBytes {
		t.Errorf("peak pending %d > cap %d", st.PeakPending, cfg.MaxTCPBufferedBytes)
	}
	if st.Streams != 0 || st.PendingBytes != 0 {
		t.Errorf("after Flush: %d streams, %d pending", st.Streams, st.PendingBytes)
	}
	if codes[CodeIWARPStreamLimit] == 0 || codes[CodeIWARPBufferLimit] == 0 || st.Evicted == 0 || st.LimitHits == 0 {
		t.Errorf("limits not reported: %v %+v", codes, st)
	}
	if big > small+8<<20 {
		t.Errorf("heap grows with the number of streams: %d KiB for 2000, %d KiB for 20000", small>>10, big>>10)
	}
}

// TestIWARPIdleFlush checks that streams idle for IdleTimeout of capture
// time are flushed and forgotten without the stream cap.
func TestIWARPIdleFlush(t *testing.T) {
	w := newIWARP(Options{IdleTimeout: time.Second}, newRPCSends(Options{}))
	codes := halfOpen(w, 5000, 10*time.Millisecond)
	st := w.Stats()
	// One stream every 20 ms of capture time and a 1 s timeout checked
	// every 250 ms: at most ~63 streams live at once.
	if st.PeakStreams > 70 || st.Evicted != 0 || codes[CodeIWARPStreamLimit] != 0 {
		t.Fatalf("%+v %v", st, codes)
	}
}

// TestIWARPHalfOpenCapture runs the committed half-open capture with
// small caps.
func TestIWARPHalfOpenCapture(t *testing.T) {
	run := runIWARP(t, testcap.Synthetic("synth-iwarp-half-open.pcap"), Options{MaxStreams: 64})
	st := run.w.Stats()
	if st.PeakStreams > 64 || st.Streams != 0 {
		t.Fatalf("%+v", st)
	}
	// Every request was cut at its start: nothing decodes as a frame.
	fr, fp, _ := run.all()
	if len(fr) != 0 || len(fp) != 0 {
		t.Fatalf("%d frames %d FPDUs", len(fr), len(fp))
	}
}

// TestIWARPNotIWARP checks that a TCP stream whose first octets are not an
// MPA frame is left alone.
func TestIWARPNotIWARP(t *testing.T) {
	var pkts [][]byte
	eth := &layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	seq := uint32(1)
	mk := func(syn bool, pl []byte) {
		tcp := &layers.TCP{SrcPort: 5555, DstPort: 80, Seq: seq, SYN: syn, ACK: !syn}
		_ = tcp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		_ = gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, tcp, gopacket.Payload(pl))
		pkts = append(pkts, append([]byte(nil), buf.Bytes()...))
		seq += uint32(len(pl))
		if syn {
			seq++
		}
	}
	mk(true, nil)
	mk(false, []byte("GET / HTTP/1.1\r\n\r\n"))
	// Bytes that would pass as an FPDU header must not be decoded.
	mk(false, []byte{0x00, 0x10, 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0})
	// A stream captured mid-way (no SYN) of 512 KiB of noise: searched
	// for framing for ResyncWindow octets, then left alone.
	ip.SrcIP = []byte{10, 0, 0, 3}
	seq = 77
	x := uint32(1)
	for i := 0; i < 512; i++ {
		pl := make([]byte, 1024)
		for j := range pl {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			pl[j] = byte(x)
		}
		mk(false, pl)
	}
	i := 0
	run := runReader(t, func() ([]byte, gopacket.CaptureInfo, error) {
		if i == len(pkts) {
			return nil, gopacket.CaptureInfo{}, io.EOF
		}
		i++
		return pkts[i-1], gopacket.CaptureInfo{Timestamp: time.Unix(int64(i), 0), CaptureLength: len(pkts[i-1]), Length: len(pkts[i-1])}, nil
	}, Options{})
	fr, fp, _ := run.all()
	if len(fr)+len(fp) != 0 || len(run.codes()) != 0 {
		t.Fatalf("decoded %d frames %d FPDUs, findings %v", len(fr), len(fp), run.codes())
	}
}

func BenchmarkIWARPSiw(b *testing.B) {
	data, err := os.ReadFile(testcap.SIW)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		rd, err := pcapgo.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		runReader(b, rd.ReadPacketData, Options{})
	}
}

// tsharkFields are the tshark fields compared, in order.
var tsharkFields = []string{
	"iwarp_mpa.rev", "iwarp_mpa.pdlength", "iwarp_mpa.privatedata", "iwarp_mpa.marker_flag", "iwarp_mpa.crc_flag",
	"iwarp_mpa.rej_flag", "iwarp_mpa.res", "iwarp_mpa.ulpdulength", "iwarp_mpa.crc", "iwarp_mpa.crc_check",
	"iwarp_ddp.tagged_flag", "iwarp_ddp.last_flag", "iwarp_ddp.dv", "iwarp_ddp.stag", "iwarp_ddp.tagged_offset",
	"iwarp_ddp.qn", "iwarp_ddp.msn", "iwarp_ddp.mo", "iwarp_rdma.version", "iwarp_rdma.opcode", "iwarp_rdma.inval_stag",
	"iwarp_rdma.sinkstag", "iwarp_rdma.rdmardsz", "iwarp_rdma.srcstag",
}

// ourFields renders what we decoded for one frame the way tshark -T fields
// prints the same fields (several occurrences joined by commas).
func ourFields(f *iwFrame) []string {
	out := make([][]string, len(tsharkFields))
	put := func(name, v string) {
		for i, n := range tsharkFields {
			if n == name {
				out[i] = append(out[i], v)
			}
		}
	}
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	for _, m := range f.frames {
		put("iwarp_mpa.rev", fmt.Sprint(m.Revision))
		put("iwarp_mpa.pdlength", fmt.Sprint(m.PDLength))
		if len(m.PrivateData) > 0 {
			put("iwarp_mpa.privatedata", hex.EncodeToString(m.PrivateData))
		}
		put("iwarp_mpa.marker_flag", b(m.Markers()))
		put("iwarp_mpa.crc_flag", b(m.CRC()))
		put("iwarp_mpa.rej_flag", b(m.Rejected()))
		put("iwarp_mpa.res", fmt.Sprintf("0x%02x", m.Flags&0x1f))
	}
	for i, fp := range f.fpdus {
		put("iwarp_mpa.ulpdulength", fmt.Sprint(fp.ULPDULength))
		if fp.CRCStatus == mpa.CRCStatusNotNegotiated {
			put("iwarp_mpa.crc", fmt.Sprintf("0x%08x", fp.CRC))
		} else {
			put("iwarp_mpa.crc_check", fmt.Sprintf("0x%08x", fp.CRC))
		}
		d, r := f.ddps[i], f.rdmaps[i]
		put("iwarp_ddp.tagged_flag", b(d.Tagged))
		put("iwarp_ddp.last_flag", b(d.Last))
		put("iwarp_ddp.dv", fmt.Sprint(d.Version))
		if d.Tagged {
			put("iwarp_ddp.stag", fmt.Sprintf("0x%08x", d.STag))
			put("iwarp_ddp.tagged_offset", fmt.Sprintf("0x%016x", d.TO))
		} else {
			put("iwarp_ddp.qn", fmt.Sprint(d.QN))
			put("iwarp_ddp.msn", fmt.Sprint(d.MSN))
			put("iwarp_ddp.mo", fmt.Sprint(d.MO))
		}
		put("iwarp_rdma.version", fmt.Sprint(r.Version))
		put("iwarp_rdma.opcode", fmt.Sprintf("0x%02x", uint8(r.Opcode)))
		if r.Opcode.Invalidates() {
			put("iwarp_rdma.inval_stag", fmt.Sprint(r.InvalidateSTag))
		}
		if r.Opcode == mpa.OpReadRequest && len(r.Contents) > 0 {
			put("iwarp_rdma.sinkstag", fmt.Sprintf("0x%08x", r.ReadRequest.SinkSTag))
			put("iwarp_rdma.rdmardsz", fmt.Sprint(r.ReadRequest.Size))
			put("iwarp_rdma.srcstag", fmt.Sprintf("0x%08x", r.ReadRequest.SrcSTag))
		}
	}
	res := make([]string, len(out))
	for i, v := range out {
		res[i] = strings.Join(v, ",")
	}
	return res
}

// TestIWARPTshark compares every iwarp_mpa, iwarp_ddp and iwarp_rdma field
// tshark decodes with ours, frame by frame, on the real siw capture and on
// the synthetic captures tshark can frame (one PDU per segment or its own
// TCP reassembly).
func TestIWARPTshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: the comparison with Wireshark's iwarp_mpa/iwarp_ddp/iwarp_rdma fields is skipped (apt-get install tshark)")
	}
	// Frames tshark cannot frame: its MPA dissector assumes one FPDU per
	// TCP segment (packet-iwarp-mpa.c, expected_ulpdu_length), and the
	// last Send of the markers capture is three FPDUs in two segments.
	beyondTshark := map[string]map[int]bool{"synth-iwarp-markers-crc.pcap": {23: true, 24: true}}
	for _, path := range []string{testcap.SIW, testcap.Synthetic("synth-iwarp-mpa-v1.pcap"), testcap.Synthetic("synth-iwarp-mpa-v2-p2p-rtr.pcap"),
		testcap.Synthetic("synth-iwarp-crc-bad.pcap"), testcap.Synthetic("synth-iwarp-rdmap-opcodes.pcap"), testcap.Synthetic("synth-iwarp-markers-crc.pcap"),
		testcap.Synthetic("synth-iwarp-reject.pcap")} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			extra := beyondTshark[filepath.Base(path)]
			args := []string{"-r", path, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,", "-e", "frame.number"}
			for _, f := range tsharkFields {
				args = append(args, "-e", f)
			}
			args = append(args, "iwarp_mpa")
			out, err := exec.Command(tshark, args...).Output()
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			run := runIWARP(t, path, Options{})
			compared := 0
			seen := map[int]bool{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				cols := strings.Split(line, "\t")
				var n int
				fmt.Sscan(cols[0], &n)
				seen[n] = true
				f := run.frames[n]
				if f == nil {
					t.Errorf("frame %d: tshark decodes iWARP, we do not", n)
					continue
				}
				ours := ourFields(f)
				for i, name := range tsharkFields {
					theirs := ""
					if i+1 < len(cols) {
						theirs = strings.ReplaceAll(cols[i+1], ":", "")
					}
					if theirs != ours[i] {
						t.Errorf("frame %d %s: tshark %q, ours %q", n, name, theirs, ours[i])
					}
					if theirs != "" {
						compared++
					}
				}
			}
			for n, f := range run.frames {
				if (len(f.frames) > 0 || len(f.fpdus) > 0) && !seen[n] && !extra[n] {
					t.Errorf("frame %d: we decode iWARP, tshark does not", n)
				}
			}
			if compared == 0 {
				t.Fatal("nothing compared")
			}
			t.Logf("%d field values equal to tshark's in %d frames", compared, len(seen))
		})
	}
}

// BenchmarkIWARPSegment measures the steady state: one connection past its
// MPA frames, each segment one 200-octet Send FPDU handed to the Send decoder.
func BenchmarkIWARPSegment(b *testing.B) {
	sends := 0
	w := newIWARP(Options{}, sendFunc(func(*Record, []byte, SendInfo) { sends++ }))
	flow := gopacket.NewFlow(layers.EndpointIPv4, []byte{10, 0, 0, 1}, []byte{10, 0, 0, 2})
	rec := &Record{}
	seq := uint32(1)
	frame := 0
	t0 := time.Unix(1000, 0)
	seg := func(syn bool, pl []byte) {
		frame++
		rec.Reset()
		rec.Frame, rec.Time, rec.Data = frame, t0.Add(time.Duration(frame)*time.Microsecond), pl
		tcp := &layers.TCP{SrcPort: 40000, DstPort: 20049, Seq: seq, SYN: syn, ACK: !syn}
		tcp.Payload = pl
		tcp.SetInternalPortsForTesting()
		w.Segment(rec, flow, tcp)
		seq += uint32(len(pl))
		if syn {
			seq++
		}
	}
	req := mpa.Frame{Kind: mpa.FrameRequest, Revision: 1, PrivateData: make([]byte, 8)}
	buf := gopacket.NewSerializeBuffer()
	if err := req.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		b.Fatal(err)
	}
	seg(true, nil)
	seg(false, append([]byte(nil), buf.Bytes()...))
	// One Send FPDU, reused with its MSN rewritten.
	fb := gopacket.NewSerializeBuffer()
	pl, _ := fb.PrependBytes(200)
	clear(pl)
	r := mpa.RDMAP{Version: 1, Opcode: mpa.OpSend}
	d := mpa.DDP{Last: true, Version: 1, MSN: 1, RsvdULP: r.AppendRsvdULP(nil, false)}
	f := mpa.FPDU{}
	for _, l := range []gopacket.SerializableLayer{&d, &f} {
		if err := l.SerializeTo(fb, gopacket.SerializeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	fpdu := append([]byte(nil), fb.Bytes()...)
	b.SetBytes(int64(len(fpdu)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint32(fpdu[2+10:], uint32(i+1))
		seg(false, fpdu)
	}
	if sends == 0 {
		b.Fatal("no Send decoded")
	}
}

// TestIWARPWithoutHandshake drops the TCP handshake of captures: the
// streams start at the MPA frames and decode as with it.
func TestIWARPWithoutHandshake(t *testing.T) {
	for _, name := range []string{"synth-iwarp-mpa-v1.pcap", "synth-iwarp-markers-crc.pcap", "synth-iwarp-rdmap-opcodes.pcap"} {
		t.Run(name, func(t *testing.T) {
			full := runIWARP(t, testcap.Synthetic(name), Options{})
			rd := openPcap(t, testcap.Synthetic(name))
			for range 3 { // SYN, SYN-ACK, ACK
				if _, _, err := rd.ReadPacketData(); err != nil {
					t.Fatal(err)
				}
			}
			cut := runReader(t, rd.ReadPacketData, Options{})
			f1, p1, _ := full.all()
			f2, p2, _ := cut.all()
			if len(f1) != len(f2) || len(p1) != len(p2) || len(full.sends) != len(cut.sends) || len(cut.codes()) != len(full.codes()) {
				t.Fatalf("with handshake %d frames %d FPDUs %d Sends %v; without %d %d %d %v",
					len(f1), len(p1), len(full.sends), full.codes(), len(f2), len(p2), len(cut.sends), cut.codes())
			}
			for i := range p1 {
				if p1[i].CRCStatus != p2[i].CRCStatus || len(p1[i].Markers) != len(p2[i].Markers) {
					t.Fatalf("FPDU %d differs", i)
				}
			}
		})
	}
}

// TestIWARPGapNotHeld spreads the gap capture over capture time (one
// packet a second): data after the hole is decoded on the frame that
// carried it, whatever the time, never held for the missing octets.
func TestIWARPGapNotHeld(t *testing.T) {
	rd := openPcap(t, testcap.Synthetic("synth-iwarp-gap.pcap"))
	n := 0
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next := func() ([]byte, gopacket.CaptureInfo, error) {
		data, ci, err := rd.ReadPacketData()
		n++
		ci.Timestamp = t0.Add(time.Duration(n) * time.Second)
		return data, ci, err
	}
	run := runReader(t, next, Options{})
	var got []string
	for _, k := range run.frameNumbers() {
		for _, r := range run.frames[k].rdmaps {
			got = append(got, fmt.Sprintf("%d:%d", k, r.MSN))
		}
	}
	if fmt.Sprint(got) != "[6:1 6:2 7:7 8:8]" || len(run.final.fpdus) != 0 {
		t.Fatalf("frame:MSN %v, %d FPDUs at the end of input", got, len(run.final.fpdus))
	}
	if codes := run.codes(); codes[CodeIWARPGap] != 1 || len(run.frames[7].findings) == 0 || run.frames[7].findings[0].Code != CodeIWARPGap {
		t.Fatalf("findings %v", codes)
	}
}

// TestIWARPFlushDeterministic: two Dissectors fed the same frames (every
// capture, and damaged copies that open streams of their own) give the
// same records: the iWARP streams a flush hands over (the assembler walks
// them in map order) are decoded in the order they began.
func TestIWARPFlushDeterministic(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	eachFrameDamaged(t, rand.New(rand.NewSource(3)), 4, func(name string, f *source.Frame) {
		x := dumpRecord(a.Dissect(f))
		g := *f
		if y := dumpRecord(b.Dissect(&g)); x != y {
			t.Fatalf("%s frame %d: two runs differ:\n%s\nand\n%s", name, f.Number, x, y)
		}
	})
	var x, y strings.Builder
	a.Finish(func(r *Record) { x.WriteString(dumpRecord(r)) })
	b.Finish(func(r *Record) { y.WriteString(dumpRecord(r)) })
	if x.String() != y.String() {
		t.Fatalf("end of input: two runs differ:\n%s\nand\n%s", x.String(), y.String())
	}
}
