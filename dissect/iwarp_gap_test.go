package dissect

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// frameSum is what the Dissector reported on one frame, as far as the
// iWARP tests compare it.
type frameSum struct {
	rdmaps []string // each RDMAP message: opcode, MSN/MO or STag/TO, length
	placed bool     // every FPDU lies wholly in the frame
	gaps   int      // iwarp.stream-gap findings
	bad    []string // error findings, and rpcrdma findings of any severity
}

func rdmapSummary(d *mpa.DDP, r *mpa.RDMAP) string {
	if r.Tagged {
		return fmt.Sprintf("%s stag=%#x to=%#x len=%d", r.Opcode, d.STag, d.TO, len(r.Payload))
	}
	return fmt.Sprintf("%s qn=%d msn=%d mo=%d len=%d", r.Opcode, r.QN, r.MSN, r.MO, len(r.Payload))
}

// summarise runs a Dissector over frames (numbered from 1 in order, as in
// a file holding just them) and sums up each frame; 0 is the end of input.
func summarise(frames []source.Frame) map[int]*frameSum {
	d := New(Options{})
	out := map[int]*frameSum{}
	add := func(r *Record) {
		s := &frameSum{placed: true}
		var ddp *mpa.DDP
		for i, l := range r.Layers {
			switch x := l.(type) {
			case *mpa.FPDU:
				s.placed = s.placed && r.Offsets[i] >= 0
			case *mpa.DDP:
				ddp = x
			case *mpa.RDMAP:
				s.rdmaps = append(s.rdmaps, rdmapSummary(ddp, x))
			}
		}
		for _, f := range r.Findings {
			if f.Code == CodeIWARPGap {
				s.gaps++
			}
			if f.Severity == finding.SeverityError || strings.HasPrefix(f.Code, "rpcrdma.") {
				s.bad = append(s.bad, f.Code)
			}
		}
		out[r.Frame] = s
	}
	for i := range frames {
		f := frames[i]
		f.Number = i + 1
		add(d.Dissect(&f))
	}
	d.Finish(add)
	return out
}

// tcpSegment returns the direction (addresses and ports), sequence number
// and payload length of a frame's TCP segment.
func tcpSegment(f *source.Frame) (dir string, seq uint32, n int, ok bool) {
	var (
		eth  layers.Ethernet
		ip4  layers.IPv4
		ip6  layers.IPv6
		tcp  layers.TCP
		got  []gopacket.LayerType
		flow gopacket.Flow
	)
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &ip6, &tcp)
	p.IgnoreUnsupported = true
	if f.LinkType != 1 || p.DecodeLayers(f.Data, &got) != nil || !slices.Contains(got, layers.LayerTypeTCP) {
		return "", 0, 0, false
	}
	if slices.Contains(got, layers.LayerTypeIPv4) {
		flow = ip4.NetworkFlow()
	} else {
		flow = ip6.NetworkFlow()
	}
	return flow.String() + " " + tcp.TransportFlow().String(), tcp.Seq, len(tcp.Payload), true
}

// TestIWARPGapRealCaptures removes, one at a time, every frame that carried
// whole FPDUs from the real siw captures (and the synthetic one with
// markers and CRC), and checks what a capture that lost the segment gives:
// every other frame reports the RDMAP messages it reported before, on the
// same frame; the next segment of that direction carries the one
// iwarp.stream-gap finding and, when its FPDUs lie wholly in it, all of
// them (framing is found again at once); no error and no rpcrdma finding
// comes from the damage. When the next segment resends the lost octets
// (a retransmission), there is no gap: it reports what the lost one did.
func TestIWARPGapRealCaptures(t *testing.T) {
	eachWholeFPDUSegment(t, []string{testcap.Real("live-siw4-nfs42.pcap"), testcap.Real("live-siw4-nfs42-inline.pcap"),
		testcap.Real("live-siw4-crc-nfs42.pcap"), testcap.Real("live-siw4-nfs3.pcap"), testcap.Real("live-siw4-nfs3-inline.pcap"),
		testcap.Synthetic("synth-iwarp-markers-crc.pcap"), testcap.Synthetic("synth-iwarp-rdmap-opcodes.pcap")},
		func(t *testing.T, frames []source.Frame, orig map[int]*frameSum, k int) bool {
			dir, seq, _, _ := tcpSegment(&frames[k])
			next, refill := 0, false
			for j := k + 1; j < len(frames); j++ {
				if d, s, n, ok := tcpSegment(&frames[j]); ok && d == dir && n > 0 {
					next, refill = j+1, s == seq
					break
				}
			}
			got := summarise(slices.Delete(slices.Clone(frames), k, k+1))
			errorf := func(format string, a ...any) {
				t.Helper()
				t.Errorf("without frame %d: "+format, append([]any{k + 1}, a...)...)
			}
			gaps := 0
			for n := 1; n <= len(frames); n++ {
				if n == k+1 {
					continue
				}
				m := n
				if n > k+1 {
					m = n - 1
				}
				o, g := frameSums(orig, got, n, m)
				gaps += g.gaps
				for _, c := range g.bad {
					if !slices.Contains(o.bad, c) {
						errorf("frame %d (%d in the damaged copy): finding %s", n, m, c)
					}
				}
				want := o.rdmaps
				switch {
				case n == next && refill:
					want = orig[k+1].rdmaps
				case n == next:
					if g.gaps != 1 {
						errorf("frame %d (%d in the damaged copy), the first after the hole: %d stream-gap findings", n, m, g.gaps)
					}
					if !o.placed && len(g.rdmaps) <= len(o.rdmaps) && slices.Equal(g.rdmaps, o.rdmaps[len(o.rdmaps)-len(g.rdmaps):]) {
						want = g.rdmaps // an FPDU begun in the lost segment is lost too
					}
				}
				if !slices.Equal(g.rdmaps, want) {
					errorf("frame %d (%d in the damaged copy): RDMAP %q, want %q", n, m, g.rdmaps, want)
				}
			}
			if e := got[0]; e != nil {
				gaps += e.gaps
			}
			if wantGaps := b2i(next > 0 && !refill); gaps != wantGaps {
				errorf("%d stream-gap findings, want %d", gaps, wantGaps)
			}
			return true
		})
}

// eachWholeFPDUSegment runs fn, for each capture of paths, on every frame
// (index k) whose FPDUs all lie wholly in it; fn reports whether it made a
// damaged copy of the capture from it.
func eachWholeFPDUSegment(t *testing.T, paths []string, fn func(t *testing.T, frames []source.Frame, orig map[int]*frameSum, k int) bool) {
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			frames := testcap.Frames(t, path)
			orig := summarise(frames)
			tried := 0
			for k := range frames {
				if o := orig[k+1]; o != nil && len(o.rdmaps) > 0 && o.placed && fn(t, frames, orig, k) {
					tried++
				}
			}
			if tried == 0 {
				t.Fatal("no frame with whole FPDUs")
			}
			t.Logf("%d damaged copies", tried)
		})
	}
}

// frameSums returns what frame n of the whole capture and frame m of a
// damaged copy reported (empty when nothing).
func frameSums(orig, got map[int]*frameSum, n, m int) (o, g *frameSum) {
	o, g = orig[n], got[m]
	if o == nil {
		o = &frameSum{}
	}
	if g == nil {
		g = &frameSum{}
	}
	return o, g
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestIWARPGapPinned pins what a lost client segment of the real siw
// NFSv4.2 capture gives: frame 20 (the client's Send MSN 4, CREATE_SESSION)
// removed, the server's reply (now frame 20) is decoded as before, and the
// client's next segment (frame 21, Send MSN 5) is decoded on that frame
// with the one stream-gap finding; nothing waits for a later frame.
func TestIWARPGapPinned(t *testing.T) {
	frames := testcap.Frames(t, testcap.Real("live-siw4-nfs42.pcap"))
	got := summarise(slices.Delete(frames, 19, 20))
	want := map[int]string{
		19: "",
		20: "[Send qn=0 msn=4 mo=0 len=152]",
		21: "[Send qn=0 msn=5 mo=0 len=152]",
		23: "[Send qn=0 msn=5 mo=0 len=116]",
		24: "[Send qn=0 msn=6 mo=0 len=156]",
	}
	for n, w := range want {
		var s frameSum
		if got[n] != nil {
			s = *got[n]
		}
		if fmt.Sprint(s.rdmaps) != w && !(w == "" && len(s.rdmaps) == 0) {
			t.Errorf("frame %d: %q, want %s", n, s.rdmaps, w)
		}
		if wantGap := b2i(n == 21); s.gaps != wantGap {
			t.Errorf("frame %d: %d stream-gap findings, want %d", n, s.gaps, wantGap)
		}
	}
}

// TestIWARPGapMarkersLostFrame loses the MPA request, then the reply, of
// the capture with markers and CRC both ways: the direction whose FPDU
// stream start was in the lost frame finds where its markers sit from a
// marker that points back at an FPDU, the other learns whether it sends
// markers from the first marker position an FPDU spans. Every RDMAP
// message decoded is one the whole capture has on the same frame, nearly
// all are decoded, and no error comes from markers the decoder could not
// place (a CRC over them, framing lost).
func TestIWARPGapMarkersLostFrame(t *testing.T) {
	frames := testcap.Frames(t, testcap.Synthetic("synth-iwarp-markers-crc.pcap"))
	orig := summarise(frames)
	all := 0
	for _, s := range orig {
		all += len(s.rdmaps)
	}
	for _, lost := range []int{4, 5} {
		got := summarise(slices.Delete(slices.Clone(frames), lost-1, lost))
		decoded := 0
		for m, g := range got {
			if m == 0 {
				continue
			}
			n := m
			if m >= lost {
				n = m + 1
			}
			// Without the request its RFC 8797 inline thresholds are not
			// known: a long inline reply is measured against the default.
			if bad := slices.DeleteFunc(g.bad, func(c string) bool { return c == CodeReplyOverDefault }); len(bad) > 0 {
				t.Errorf("without frame %d: frame %d: findings %v", lost, m, bad)
			}
			if len(g.rdmaps) == 0 {
				continue
			}
			decoded += len(g.rdmaps)
			if !slices.Equal(g.rdmaps, orig[n].rdmaps) {
				t.Errorf("without frame %d: frame %d: RDMAP %q, the whole capture %q (frame %d)", lost, m, g.rdmaps, orig[n].rdmaps, n)
			}
		}
		if decoded < all-3 {
			t.Errorf("without frame %d: %d of %d RDMAP messages decoded", lost, decoded, all)
		}
	}
}

// TestIWARPReorderRealCaptures reorders the real siw captures (and the
// synthetic one with markers and CRC) as a lossy link does: a segment
// carrying whole FPDUs swapped with the next segment of its direction, or
// moved 2 or 3 frames later (a retransmission after later data). Every
// RDMAP message of the undamaged capture is reported exactly once, on the
// frame that carried it (the late segment decodes its own FPDUs), one
// stream-gap finding marks the hole, and no error comes from the damage.
// Two segments moved later in reverse order: the first to arrive fills the
// middle of the hole and is framed by FPDUs that end exactly with it.
func TestIWARPReorderRealCaptures(t *testing.T) {
	eachWholeFPDUSegment(t, []string{testcap.Real("live-siw4-nfs42.pcap"), testcap.Real("live-siw4-crc-nfs42.pcap"),
		testcap.Real("live-siw4-nfs3.pcap"), testcap.Synthetic("synth-iwarp-markers-crc.pcap")},
		func(t *testing.T, frames []source.Frame, orig map[int]*frameSum, k int) bool {
			dir, seq, _, _ := tcpSegment(&frames[k])
			next := -1
			for j := k + 1; j < len(frames); j++ {
				if d, s, n, ok := tcpSegment(&frames[j]); ok && d == dir && n > 0 {
					if s != seq {
						next = j
					}
					break
				}
			}
			// The next segment of the direction must begin with an
			// FPDU (else the late one completes that FPDU, and
			// reports it) and must not resend this one.
			if o := orig[next+1]; next < 0 || o == nil || len(o.rdmaps) == 0 || !o.placed {
				return false
			}
			// order[i] is the index in frames of the i-th frame of
			// the reordered copy.
			var orders [][]int
			var holes []int // stream-gap findings each order gives
			swap := make([]int, len(frames))
			for i := range swap {
				swap[i] = i
			}
			swap[k], swap[next] = next, k
			orders, holes = append(orders, swap), append(holes, 1)
			for _, by := range []int{2, 3} {
				if k+by >= len(frames) {
					continue
				}
				moved := make([]int, 0, len(frames))
				for i := range frames {
					if i != k {
						moved = append(moved, i)
					}
					if i == k+by {
						moved = append(moved, k)
					}
				}
				orders, holes = append(orders, moved), append(holes, b2i(next <= k+by))
			}
			// Both segments later, the second first: it fills the
			// middle of the hole, framed by its own FPDUs.
			// (After the next segment that begins with an FPDU and
			// resends neither, so that the hole is seen first.)
			_, nseq, _, _ := tcpSegment(&frames[next])
			after := -1
			for j := next + 1; j < len(frames); j++ {
				if d, s, n, ok := tcpSegment(&frames[j]); ok && d == dir && n > 0 {
					if o := orig[j+1]; s != seq && s != nseq && o != nil && len(o.rdmaps) > 0 && o.placed {
						after = j
					}
					break
				}
			}
			if after >= 0 {
				both := make([]int, 0, len(frames))
				for i := range frames {
					if i != k && i != next {
						both = append(both, i)
					}
					if i == after {
						both = append(both, next, k)
					}
				}
				orders, holes = append(orders, both), append(holes, 1)
			}
			for oi, order := range orders {
				copyFrames := make([]source.Frame, len(order))
				for i, o := range order {
					copyFrames[i] = frames[o]
				}
				got := summarise(copyFrames)
				errorf := func(format string, a ...any) {
					t.Helper()
					t.Errorf("frame %d moved (order %v…): "+format, append([]any{k + 1, order[max(0, k-1):min(len(order), k+5)]}, a...)...)
				}
				gaps := 0
				for i, o := range order {
					n, m := o+1, i+1
					want, g := frameSums(orig, got, n, m)
					gaps += g.gaps
					for _, c := range g.bad {
						if !slices.Contains(want.bad, c) && !strings.HasPrefix(c, "rpcrdma.") {
							errorf("frame %d (%d in the copy): finding %s", n, m, c)
						}
					}
					if !slices.Equal(g.rdmaps, want.rdmaps) {
						errorf("frame %d (%d in the copy): RDMAP %q, want %q", n, m, g.rdmaps, want.rdmaps)
					}
				}
				if e := got[0]; e != nil {
					gaps += e.gaps
					if len(e.rdmaps) > 0 {
						errorf("end of input: RDMAP %q", e.rdmaps)
					}
				}
				if gaps != holes[oi] {
					errorf("%d stream-gap findings, want %d", gaps, holes[oi])
				}
			}
			return true
		})
}
