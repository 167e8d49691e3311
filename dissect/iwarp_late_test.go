package dissect

import (
	"slices"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// splitSegment returns frame f's TCP segment as two frames, the first
// with the first n octets of its payload (serialized again with the
// layers' SerializeTo).
func splitSegment(t *testing.T, f source.Frame, n int) (a, b source.Frame) {
	t.Helper()
	p := gopacket.NewPacket(f.Data, layers.LinkTypeEthernet, gopacket.Default)
	eth, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if eth == nil || ip == nil || tcp == nil || n <= 0 || n >= len(tcp.Payload) {
		t.Fatalf("frame %d: not an IPv4 TCP segment of more than %d octets", f.Number, n)
	}
	part := func(seq uint32, payload []byte) source.Frame {
		e, i, c := *eth, *ip, *tcp
		c.Seq = seq
		if err := c.SetNetworkLayerForChecksum(&i); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			&e, &i, &c, gopacket.Payload(payload)); err != nil {
			t.Fatal(err)
		}
		out := f
		out.Data = slices.Clone(buf.Bytes())
		out.CaptureLength, out.Length = len(out.Data), len(out.Data)
		return out
	}
	payload := slices.Clone(tcp.Payload)
	return part(tcp.Seq, payload[:n]), part(tcp.Seq+uint32(n), payload[n:])
}

// TestIWARPLateBytesCounted: the octets kept around a hole for a late
// segment count in MaxTCPBufferedBytes with the unfinished PDUs. A real
// siw segment that holds whole FPDUs is split in two and its second half
// captured after the next segment of its direction: the first half (an
// unfinished FPDU cut by the hole) is kept until the late half completes
// it, on the late frame. Within the limit, it is counted while kept and
// given back after; with room for the unfinished FPDU but not for the
// copy kept for the late segment, iwarp.buffer-limit says so on the frame
// after the hole, and the late half's FPDUs cannot be framed.
func TestIWARPLateBytesCounted(t *testing.T) {
	frames := testcap.Frames(t, testcap.Real("live-siw4-nfs42.pcap"))
	orig := summarise(frames)
	k, next := -1, -1
	for i := range frames {
		if o := orig[i+1]; o == nil || len(o.rdmaps) == 0 || !o.placed {
			continue
		}
		dir, _, n, _ := tcpSegment(&frames[i])
		if n < 300 {
			continue
		}
		for j := i + 1; j < len(frames); j++ {
			if d, _, m, ok := tcpSegment(&frames[j]); ok && d == dir && m > 0 {
				if o := orig[j+1]; o != nil && len(o.rdmaps) > 0 && o.placed {
					k, next = i, j
				}
				break
			}
		}
		if k >= 0 {
			break
		}
	}
	if k < 0 {
		t.Fatal("no segment of 300 octets or more with whole FPDUs, followed by one")
	}
	const half = 160
	a, b := splitSegment(t, frames[k], half)
	var order []source.Frame
	for i := range frames {
		switch {
		case i == k:
			order = append(order, a)
		case i == next:
			order = append(order, frames[i], b)
		default:
			order = append(order, frames[i])
		}
	}
	after, late := next+1, next+2 // 1-based frames of the next segment and the late half
	run := func(limit int) (codes map[int][]string, pendingAfter int, lateMsgs int, st IWARPStats) {
		d := New(Options{MaxTCPBufferedBytes: limit})
		codes = map[int][]string{}
		for i := range order {
			f := order[i]
			f.Number = i + 1
			r := d.Dissect(&f)
			for _, x := range r.Findings {
				if x.Layer == "tcp" || x.Layer == "iwarp" || x.Layer == "mpa" {
					codes[r.Frame] = append(codes[r.Frame], x.Code)
				}
			}
			if r.Frame == after {
				pendingAfter = d.iwarp.Stats().PendingBytes
			}
			if r.Frame == late {
				for _, l := range r.Layers {
					if _, ok := l.(*mpa.RDMAP); ok {
						lateMsgs++
					}
				}
			}
		}
		d.Finish(func(*Record) {})
		return codes, pendingAfter, lateMsgs, d.iwarp.Stats()
	}
	codes, pending, msgs, st := run(0)
	if pending < half || st.PendingBytes != 0 || msgs == 0 || len(codes[after]) != 1 || codes[after][0] != CodeIWARPGap || st.LimitHits != 0 {
		t.Errorf("default limit: findings %v, %d octets pending after the hole (want the %d kept), %d at the end, %d layers on the late frame %d, %d limit hits",
			codes, pending, half, st.PendingBytes, msgs, late, st.LimitHits)
	}
	// Room for the unfinished FPDU (256 octets of buffer) but not for it
	// and its copy kept for the late segment.
	codes, pending, msgs, st = run(300)
	if !slices.Contains(codes[after], CodeIWARPBufferLimit) || pending != 0 || st.PendingBytes != 0 || st.LimitHits != 1 || st.PeakPending > 300 || msgs != 0 {
		t.Errorf("limit 300: findings %v, %d octets pending after the hole, %d at the end, %d limit hits, peak %d, %d RDMAP messages on the late frame: want one buffer-limit finding on frame %d, nothing kept, nothing decoded late",
			codes, pending, st.PendingBytes, st.LimitHits, st.PeakPending, msgs, after)
	}
}

// TestIWARPOrphansCounted: the DDP segments kept after a hole for a Send
// begun in it count in MaxTCPBufferedBytes, over all streams; one that
// would exceed it is not kept (one iwarp.buffer-limit finding until the
// next hole), and what was kept is given back when the stream ends.
func TestIWARPOrphansCounted(t *testing.T) {
	w := newIWARP(Options{MaxTCPBufferedBytes: 1000}, nil)
	rec := &Record{Frame: 3}
	w.rec = rec
	var streams [2]*iwarpStream
	for i := range streams {
		s := &iwarpStream{w: w}
		for j := range s.half {
			s.half[j].s, s.half[j].idx = s, j
		}
		w.live[s] = struct{}{}
		streams[i] = s
	}
	seg := func(msn uint32, n int) *mpa.RDMAP {
		r := &mpa.RDMAP{MSN: msn, MO: 512}
		r.Payload = make([]byte, n)
		return r
	}
	a, b := &streams[0].half[0], &streams[1].half[1]
	// Sizes of Go's size classes: the buffers kept hold just them.
	a.keepOrphan(seg(1, 512))
	b.keepOrphan(seg(2, 256))
	b.keepOrphan(seg(3, 512)) // 1280 in all: not kept
	b.keepOrphan(seg(4, 384)) // 1152: not kept either, no second finding
	a.keepOrphan(seg(5, 128))
	if w.pendTotal != 896 || len(a.orphans) != 2 || len(b.orphans) != 1 {
		t.Errorf("%d octets held, %d and %d segments kept: want 896, 2 and 1", w.pendTotal, len(a.orphans), len(b.orphans))
	}
	var limits []string
	for _, f := range rec.Findings {
		limits = append(limits, f.Code)
	}
	if !slices.Equal(limits, []string{CodeIWARPBufferLimit}) || w.stats.LimitHits != 1 {
		t.Errorf("findings %v, %d limit hits: want one %s", limits, w.stats.LimitHits, CodeIWARPBufferLimit)
	}
	streams[0].complete()
	if w.pendTotal != 256 {
		t.Errorf("%d octets held after the first stream ended, want the other's 256", w.pendTotal)
	}
	streams[1].complete()
	if w.pendTotal != 0 {
		t.Errorf("%d octets held after both streams ended", w.pendTotal)
	}
}
