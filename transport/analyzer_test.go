package transport

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// brief renders findings as "frame code severity", one per finding.
func brief(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%d %s %s", f.Frame, f.Code, f.Severity))
	}
	return out
}

// TestSynthetic pins every transport finding of the synthetic captures
// made for them (internal/gen/transport.go), frame by frame.
func TestSynthetic(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
		// contains holds words some findings' messages must carry.
		contains map[int][]string
	}{
		{"synth-transport-rocev2-loss.pcap", []string{
			"6 transport.capture-loss info",
			"7 transport.psn-gap warning",
			"8 transport.capture-loss info",
			"9 transport.psn-gap warning",
			"10 transport.nak-sequence warning",
			"11 transport.retransmission warning",
			"12 transport.retransmission warning",
			"15 transport.msn-regress warning",
		}, map[int][]string{
			6:  {"QP 0x000013", "PSN 10913231", "the capture lost them"},
			8:  {"PSN 10913232", "missing before frame 7", "the capture lost them"},
			10: {"PSN Sequence Error", "frame 9 was lost on the network"},
			11: {"PSN 10913234", "not in the capture", "the network lost it"},
			12: {"first sent in frame 9 3.000 ms earlier"},
			15: {"MSN 3", "MSN 6"},
		}},
		{"synth-transport-rocev2-naks.pcap", []string{
			"5 transport.nak error",
			"12 transport.nak error",
			"19 transport.nak error",
			"26 transport.nak error",
			"33 transport.rnr-nak warning",
			"34 transport.retransmission warning",
		}, map[int][]string{
			5:  {"Invalid Request (code 1)", "QP 0x000014"},
			12: {"Remote Access Error (code 2)"},
			19: {"Remote Operational Error (code 3)"},
			26: {"Invalid RD Request (code 4)"},
			33: {"timer 14 = 1.28 ms"},
			34: {"first sent in frame 32 2.280 ms earlier"},
		}},
		{"synth-transport-rocev2-congestion.pcap", []string{
			"4 transport.ecn-ce info",
			"6 transport.cnp info",
			"7 transport.fecn info",
			"8 transport.becn info",
		}, map[int][]string{
			4: {"QP 0x000013", "192.0.2.2"},
			6: {"QP 0x000012"},
		}},
		// The decoding showcase: an RC stream with PSNs picked per
		// opcode, a NAK Invalid Request, a CNP.
		{"synth-ibcm-rocev2-ipv4-rc-data.pcap", []string{
			"8 transport.nak error",
			"9 transport.psn-gap warning",
			"10 transport.capture-loss info",
			"12 transport.cnp info",
		}, nil},
		// A SEND_MIDDLE sent twice (after the CM exchange's 3 frames).
		{"synth-rpcrdma-split-send.pcap", []string{"7 transport.retransmission warning"}, map[int][]string{
			7: {"first sent in frame 6 1.000 ms earlier"},
		}},
		// RC traffic that follows the CM's Starting PSNs: nothing.
		{"synth-conn-rocev2-traffic.pcap", nil, nil},
		{"synth-conn-rocev2-credits.pcap", nil, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fs, _ := analyse(t, testcap.Frames(t, synthDir+tc.file))
			if got := brief(fs); !slices.Equal(got, tc.want) {
				t.Errorf("findings:\n got %q\nwant %q", got, tc.want)
			}
			for frame, words := range tc.contains {
				for _, f := range fs {
					if f.Frame != frame {
						continue
					}
					for _, w := range words {
						if !strings.Contains(f.Message, w) {
							t.Errorf("frame %d: %q lacks %q", frame, f.Message, w)
						}
					}
				}
			}
		})
	}
}

// TestSummaries checks the per-QP counters of the synthetic captures.
func TestSummaries(t *testing.T) {
	_, a := analyse(t, testcap.Frames(t, synthDir+"synth-transport-rocev2-loss.pcap"))
	client, server := hostKeyOf(Host{}), hostKeyOf(Host{})
	for _, s := range a.Summaries() {
		switch s.QPN {
		case 0x12:
			client = hostKeyOf(s.Host)
			if s.AckLatency.Samples != 3 || s.AckLatency.Min != time.Millisecond || s.NAKs[0] != 1 || s.MSNRegress != 1 {
				t.Errorf("client QP: %+v", s)
			}
		case 0x13:
			server = hostKeyOf(s.Host)
			if s.PSNGaps != 3 || s.Missing != 3 || s.CaptureLoss != 2 || s.Retransmissions != 2 || s.Requests != 6 {
				t.Errorf("server QP: %+v", s)
			}
		}
	}
	if client == (hostKey{}) || server == (hostKey{}) {
		t.Fatalf("queue pairs missing: %+v", a.Summaries())
	}
	// Seeded by the REP in frame 2: found by that frame.
	if s, ok := a.Summary(server.Host(), 0x13, 2); !ok || s.Frame != 2 {
		t.Errorf("Summary by REP frame: %+v %v", s, ok)
	}
	if _, ok := a.Summary(server.Host(), 0x13, 99); ok {
		t.Errorf("Summary of another REP frame found")
	}

	_, a = analyse(t, testcap.Frames(t, synthDir+"synth-transport-rocev2-congestion.pcap"))
	var ce, cnp, fecn, becn uint64
	for _, s := range a.Summaries() {
		ce, cnp, fecn, becn = ce+s.ECNCE, cnp+s.CNPs, fecn+s.FECN, becn+s.BECN
	}
	if ce != 1 || cnp != 1 || fecn != 1 || becn != 1 {
		t.Errorf("congestion counts CE %d CNP %d FECN %d BECN %d", ce, cnp, fecn, becn)
	}
	var pairCE, pairCNP uint64
	for _, p := range a.Pairs() {
		pairCE, pairCNP = pairCE+p.ECNCE, pairCNP+p.CNPs
	}
	if pairCE != 1 || pairCNP != 1 {
		t.Errorf("per IP pair: CE %d CNP %d (%+v)", pairCE, pairCNP, a.Pairs())
	}
}

// TestRNRTimer checks the IBTA table at its ends and in the middle.
func TestRNRTimer(t *testing.T) {
	for v, want := range map[uint8]string{0: "655.36 ms", 1: "0.01 ms", 14: "1.28 ms", 18: "5.12 ms", 31: "491.52 ms"} {
		if got := RNRTimerText(RNRTimer(v)); got != want {
			t.Errorf("timer %d: %s, want %s", v, got, want)
		}
	}
}

// TestRealCaptures: the lab's captures of the real rxe and siw stacks.
// rxe's RC traffic is clean (no gap, no retransmission); the siw ones
// carry the TCP retransmissions tshark also marks
// (tcp.analysis.retransmission and spurious_retransmission).
func TestRealCaptures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"live-rxe4-nfs42.pcap", nil},
		{"live-rxe4-nfs3.pcap", nil},
		{"rxe-nfs42-rdma.pcap", nil},
		{"live-siw4-nfs42.pcap", []string{"14 transport.tcp-retransmission warning", "57 transport.tcp-retransmission warning"}},
		// The lab's RNR scenario: the replay server posts no receive
		// buffer; rxe answers RNR NAK (timer 0, 655.36 ms) and the
		// client's rxe resends the Send about 0.7 s later.
		{"live-rxe4-rnr-nfsnull.pcap", []string{
			"5 transport.rnr-nak warning", "6 transport.retransmission warning",
			"7 transport.rnr-nak warning", "8 transport.retransmission warning",
			"9 transport.rnr-nak warning"}},
		// The lab's loss scenario: every 7th packet the client received
		// dropped after the capture saw it; the server's rxe resends
		// after its timeout, or go-back-N after the client's NAK.
		{"live-rxe4-nfs42-drop.pcap", []string{
			"43 transport.retransmission warning", "56 transport.retransmission warning",
			"69 transport.retransmission warning", "84 transport.nak-sequence warning",
			"85 transport.retransmission warning", "87 transport.retransmission warning",
			"88 transport.retransmission warning", "94 transport.retransmission warning",
			"107 transport.retransmission warning", "120 transport.retransmission warning",
			"133 transport.retransmission warning"}},
		{"live-siw4-garbage.pcap", []string{"9 transport.tcp-retransmission warning", "13 transport.tcp-retransmission warning"}},
		{"live-siw6-reject.pcap", []string{"8 transport.tcp-retransmission warning"}},
	} {
		fs, a := analyse(t, testcap.Frames(t, realDir+tc.file))
		if got := brief(fs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: findings\n got %q\nwant %q", tc.file, got, tc.want)
		}
		if strings.HasPrefix(tc.file, "live-rxe4-nfs") {
			n := 0
			for _, s := range a.Summaries() {
				if s.Frame == 2 && s.AckLatency.Samples > 0 && s.Requests > 0 {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%s: want both CM-seeded QPs with ACK latency: %+v", tc.file, a.Summaries())
			}
		}
	}
}

// request reports an RC request packet and its destination QP.
func request(t *testing.T, d *dissect.Dissector, f *source.Frame) (uint32, bool) {
	t.Helper()
	for _, l := range d.Dissect(f).Layers {
		if b, ok := l.(*ibcm.BTH); ok {
			op := b.OpCode
			return b.DestQP, op <= ibcm.OpRCReadRequest || op == ibcm.OpRCSendLastInv || op == ibcm.OpRCSendOnlyInv
		}
	}
	return 0, false
}

// TestDamagedCopies removes, then repeats, each RC request of a real
// capture in turn: a removed one gives one finding naming its QP on the
// next packet that shows the hole: transport.psn-gap on the next request to
// that QP, or transport.capture-loss on its ACK; a repeated one gives one transport.retransmission on the
// copy, matched to the original.
func TestDamagedCopies(t *testing.T) {
	frames := testcap.Frames(t, realNFS42)
	d := dissect.New(dissect.Options{})
	checked := 0
	for i := range frames {
		qp, ok := request(t, d, &frames[i])
		if !ok {
			continue
		}
		qpName := "QP " + hexQP(qp)

		removed := slices.Concat(frames[:i:i], frames[i+1:])
		fs, _ := analyse(t, cloneFrames(removed))
		// What shows the hole: a psn-gap on the next request (a later
		// capture-loss on the ACK covering it says no more), or a
		// capture-loss when the ACK comes first.
		var gaps []finding.Finding
		for _, f := range fs {
			switch {
			case f.Code == CodePSNGap:
				gaps = append(gaps, f)
			case f.Code == CodeCaptureLoss:
				if len(gaps) == 0 || gaps[0].Code == CodeCaptureLoss {
					gaps = append(gaps, f)
				}
			default:
				t.Errorf("frame %d removed: unexpected %v", i+1, f)
			}
		}
		// Frame numbers after the removal: the frame after it is i+1.
		if len(gaps) != 1 || gaps[0].Frame < i+1 || !strings.Contains(gaps[0].Message, qpName) {
			t.Errorf("frame %d (to %s) removed: psn-gap or capture-loss findings %v", i+1, qpName, gaps)
		} else if next := nextToShow(t, removed, i, qp, psnOf(t, d, &frames[i])); gaps[0].Frame != next {
			t.Errorf("frame %d removed: psn-gap on frame %d, want %d", i+1, gaps[0].Frame, next)
		}

		repeated := slices.Concat(frames[:i+1:i+1], frames[i:])
		fs, _ = analyse(t, cloneFrames(repeated))
		want := fmt.Sprintf("%d transport.retransmission warning", i+2)
		if got := brief(fs); len(got) != 1 || got[0] != want ||
			!strings.Contains(fs[0].Message, fmt.Sprintf("first sent in frame %d", i+1)) || !strings.Contains(fs[0].Message, qpName) {
			t.Errorf("frame %d repeated: %q, want %q", i+1, fs, want)
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("only %d requests checked", checked)
	}
}

// nextToShow is the 1-based number, in frames (the capture with frame i
// removed), of the first frame after i that shows the hole in the requests
// to qp: the next request to qp, or an ACK or read response for a PSN at
// or after the removed one.
func nextToShow(t *testing.T, frames []source.Frame, i int, qp, psn uint32) int {
	t.Helper()
	d := dissect.New(dissect.Options{})
	for j := i; j < len(frames); j++ {
		f := frames[j]
		rec := d.Dissect(&f)
		for _, l := range rec.Layers {
			b, ok := l.(*ibcm.BTH)
			if !ok {
				continue
			}
			if b.DestQP == qp && b.OpCode <= ibcm.OpRCSendOnlyInv {
				if op := b.OpCode; op <= ibcm.OpRCReadRequest || op == ibcm.OpRCSendLastInv || op == ibcm.OpRCSendOnlyInv {
					return j + 1
				}
			}
			if b.DestQP != qp && rec.Layer("aeth") != nil && psnDiff(b.PSN, psn) >= 0 {
				return j + 1
			}
		}
	}
	return -1
}

// psnOf is the BTH PSN of a frame.
func psnOf(t *testing.T, d *dissect.Dissector, f *source.Frame) uint32 {
	t.Helper()
	for _, l := range d.Dissect(f).Layers {
		if b, ok := l.(*ibcm.BTH); ok {
			return b.PSN
		}
	}
	t.Fatalf("frame %d: no BTH", f.Number)
	return 0
}

// cloneFrames gives frames of their own (analyse numbers them).
func cloneFrames(fs []source.Frame) []source.Frame { return append([]source.Frame(nil), fs...) }

// TestNoAllocs: the steady path (in-order requests and their ACKs, the
// congestion counters) allocates nothing.
func TestNoAllocs(t *testing.T) {
	a := New(Config{})
	ip := &dissect.IPv4{}
	ip.SrcIP, ip.DstIP = []byte{192, 0, 2, 1}, []byte{192, 0, 2, 2}
	ipBack := &dissect.IPv4{}
	ipBack.SrcIP, ipBack.DstIP = ip.DstIP, ip.SrcIP
	req := &ibcm.BTH{OpCode: ibcm.OpRCSendOnly, DestQP: 0x11, PSN: 100, PayloadLength: 200}
	ack := &ibcm.BTH{OpCode: ibcm.OpRCAck, DestQP: 0x12, PSN: 100}
	aeth := &ibcm.AETH{Syndrome: 0x1f, MSN: 1}
	reqRec := &dissect.Record{Frame: 1, Time: time.Unix(1, 0), Layers: []field.Layer{ip, req}}
	ackRec := &dissect.Record{Frame: 2, Time: time.Unix(1, 1000), Layers: []field.Layer{ipBack, ack, aeth}}
	step := func() {
		reqRec.Findings, ackRec.Findings = reqRec.Findings[:0], ackRec.Findings[:0]
		reqRec.Frame += 2
		ackRec.Frame += 2
		a.Record(reqRec)
		a.Record(ackRec)
		req.PSN = (req.PSN + 1) & psnMask
		ack.PSN, aeth.MSN = req.PSN, aeth.MSN+1
	}
	for range 100 {
		step()
	}
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Errorf("%.1f allocations per request and ACK", n)
	}
	if len(reqRec.Findings)+len(ackRec.Findings) != 0 {
		t.Errorf("findings on the steady path: %v %v", reqRec.Findings, ackRec.Findings)
	}
	s, _ := a.Summary(Host{Addr: ipKey(ip.DstIP).Host().Addr}, 0x11, 0)
	if s.Requests != 1101 || s.Packets != 1101 {
		t.Errorf("summary %+v", s)
	}
	if r, _ := a.Summary(Host{Addr: ipKey(ip.SrcIP).Host().Addr}, 0x12, 0); r.AckLatency.Samples != 1101 || r.AckLatency.Max != time.Microsecond {
		t.Errorf("ACK latency %+v", r.AckLatency)
	}
}

// TestTableFull: past MaxQPs the least recently used queue pair is
// forgotten, once reported, and memory stays bounded.
func TestTableFull(t *testing.T) {
	a := New(Config{MaxQPs: 4})
	ip := &dissect.IPv4{}
	ip.SrcIP, ip.DstIP = []byte{192, 0, 2, 1}, []byte{192, 0, 2, 2}
	b := &ibcm.BTH{OpCode: ibcm.OpRCSendOnly}
	rec := &dissect.Record{Time: time.Unix(1, 0), Layers: []field.Layer{ip, b}}
	var codes []string
	for i := range 20 {
		rec.Frame, rec.Findings = i+1, rec.Findings[:0]
		b.DestQP, b.PSN = uint32(i%10), uint32(i)
		a.Record(rec)
		for _, f := range rec.Findings {
			codes = append(codes, f.Code)
		}
	}
	if len(a.qps) != 4 || a.idx.Len() != 4 || a.Evicted != 16 {
		t.Errorf("%d slots, %d indexed, %d evicted", len(a.qps), a.idx.Len(), a.Evicted)
	}
	if !slices.Equal(codes, []string{CodeTableFull}) {
		t.Errorf("findings %v", codes)
	}
}
