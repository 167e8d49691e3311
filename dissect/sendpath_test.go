package dissect

import (
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// sendPacket is one RC Send packet as the Dissector hands it to sendOn,
// with copies of the layers the Send path reads (the addressing layers
// and the BTH).
type sendPacket struct {
	frame   int
	data    []byte
	layers  []field.Layer
	bth     ibcm.BTH
	inv     uint32
	payload []byte
}

// sendPackets dissects the first max frames of file and keeps the RC Send
// packets, as sendOn receives them: the payload is that of the last layer
// the frame's decoding added (before the layers of a Send it completed).
func sendPackets(t testing.TB, file string, max int) []sendPacket {
	frames := testcap.Frames(t, file)
	if len(frames) > max {
		frames = frames[:max]
	}
	var out []sendPacket
	d := New(Options{})
	for i := range frames {
		rec := d.Dissect(&frames[i])
		if slices.ContainsFunc(rec.Findings, func(f finding.Finding) bool { return f.Code == CodeMalformed }) {
			continue // sendOn is not called
		}
		p := sendPacket{frame: rec.Frame, data: rec.Data}
		var last gopacket.Layer
		isSend := false
	layers:
		for _, l := range rec.Layers {
			switch x := l.(type) {
			case *IPv4:
				c := *x
				p.layers = append(p.layers, &c)
			case *IPv6:
				c := *x
				p.layers = append(p.layers, &c)
			case *ibcm.GRH:
				c := *x
				p.layers = append(p.layers, &c)
			case *ibcm.LRH:
				c := *x
				p.layers = append(p.layers, &c)
			case *ibcm.BTH:
				p.bth = *x
				p.layers = append(p.layers, &p.bth)
				isSend = x.OpCode.IsSend()
			case *ibcm.IETH:
				p.inv = x.RKey
			case *rpcrdma.Header:
				break layers
			}
			last, _ = l.(gopacket.Layer)
		}
		if !isSend || last == nil {
			continue
		}
		if payload := last.LayerPayload(); len(payload) > 0 {
			off := frameOffset(rec.Data, payload)
			if off < 0 {
				t.Fatalf("frame %d: Send payload outside the frame", rec.Frame)
			}
			p.payload = rec.Data[off : off+len(payload)]
		}
		out = append(out, p)
	}
	return out
}

// BenchmarkSendPath times the RPC-over-RDMA path of RC Send packets alone
// (sendOn: multi-packet reassembly, transport header, RPC and NFS
// decoding, naming replies by their calls), on the Sends of the first
// 8000 frames of $CMPD_BENCH_PCAP (the bench capture: make bench), or
// of the real rxe capture.
func BenchmarkSendPath(b *testing.B) {
	pkts := sendPackets(b, testcap.BenchCapture(b), 8000)
	if len(pkts) == 0 {
		b.Skip("no Sends")
	}
	d := New(Options{})
	rec := &Record{}
	run := func() {
		for i := range pkts {
			p := &pkts[i]
			rec.Reset()
			rec.Frame, rec.Data = p.frame, p.data
			rec.Layers = append(rec.Layers, p.layers...)
			for range p.layers {
				rec.Offsets = append(rec.Offsets, 0)
			}
			d.sendOn(rec, &p.bth, p.inv, p.payload)
		}
	}
	run()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pkts)), "ns/packet")
}

// mapCalls is the reference for callTable: a map of the outstanding
// calls and the list of their keys in the order they were first
// remembered; a reply forgets its call, and a new call beyond max forgets
// the oldest outstanding one.
type mapCalls struct {
	m      map[callKey]callInfo
	order  []callKey
	max    int
	conn   uint64
	recent []callEntry // the last answered, oldest first
}

func (c *mapCalls) forget(k callKey) {
	delete(c.m, k)
	c.order = slices.DeleteFunc(c.order, func(o callKey) bool { return o == k })
}

// reply is callTable.reply.
func (c *mapCalls) reply(k callKey, again bool) (callInfo, bool) {
	ci, ok := c.m[k]
	if ok {
		c.forget(k)
		// The last recentCalls answered name a reply sent again.
		c.recent = append(c.recent, callEntry{key: k, info: ci})
		if len(c.recent) > recentCalls {
			c.recent = c.recent[1:]
		}
		return ci, true
	}
	if !again {
		return ci, false
	}
	for _, e := range c.recent {
		if e.key == k && e.info != (callInfo{}) {
			ci, ok = e.info, true
		}
	}
	return ci, ok
}

func (c *mapCalls) MatchCall(r *rpcrdma.RPC) {
	k := callKey{conn: c.conn, xid: r.XID}
	if r.MsgType == rpcrdma.MsgReply {
		ci, ok := c.reply(k, true)
		if ok {
			r.SetCall(ci.prog, ci.vers, ci.proc)
			if ci.gss {
				r.SetCallGSS(ci.gssProc, ci.gssSvc)
			}
		}
		return
	}
	if _, dup := c.m[k]; !dup {
		if len(c.order) >= c.max {
			c.forget(c.order[0])
		}
		c.order = append(c.order, k)
	}
	c.m[k] = callInfo{prog: r.Program, vers: r.ProgVersion, proc: r.Procedure,
		gss: r.HasGSS, gssProc: r.GSS.Proc, gssSvc: r.GSS.Service}
}

func (c *mapCalls) answered(xid uint32) (callInfo, bool) {
	return c.reply(callKey{conn: c.conn, xid: xid}, false)
}

// Random calls, replies and RDMA_NOMSG answers over a few connections and
// xids (so calls are repeated, replied to, re-sent after their reply and
// forgotten at the bound) name every reply as the reference does, and the
// pool never holds more entries than calls were outstanding at once.
func TestCallTableMatchesMap(t *testing.T) {
	for _, bound := range []int{1, 2, 3, 8, 64, callChunk + 500} {
		rng := rand.New(rand.NewPCG(uint64(bound), 7))
		ref := &mapCalls{m: map[callKey]callInfo{}, max: bound}
		var ct callTable
		ct.max = bound
		matched, highWater := 0, 0
		for i := 0; i < 20000; i++ {
			highWater = max(highWater, len(ref.m))
			conn := uint64(rng.IntN(3)) * 0x9e3779b97f4a7c15
			xid := uint32(rng.IntN(3 * bound))
			ref.conn, ct.conn, ct.frame = conn, conn, i+1
			a := rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgCall}
			if rng.IntN(2) == 0 {
				a.MsgType = rpcrdma.MsgReply
			} else {
				a.Program, a.ProgVersion, a.Procedure = rng.Uint32(), rng.Uint32(), rng.Uint32()
				if rng.IntN(4) == 0 {
					a.HasGSS, a.GSS.Proc, a.GSS.Service = true, rng.Uint32(), rng.Uint32()
				}
			}
			b := a
			if rng.IntN(8) == 0 {
				// An RDMA_NOMSG or RDMA_ERROR with this xid.
				ci, ok := ref.answered(xid)
				got := ct.answeredBy(xid)
				if ok != (got.Frame != 0) || ok && (got.Program != ci.prog || got.Version != ci.vers || got.Procedure != ci.proc) {
					t.Fatalf("bound %d, step %d: RDMA_NOMSG xid %d answers %+v, the map %+v (%v)", bound, i, xid, got, ci, ok)
				}
				continue
			}
			ref.MatchCall(&a)
			ct.MatchCall(&b)
			if a.CallKnown {
				matched++
			}
			highWater = max(highWater, len(ref.m))
			if a.CallKnown != b.CallKnown || a.Program != b.Program || a.ProgVersion != b.ProgVersion ||
				a.Procedure != b.Procedure || a.HasGSS != b.HasGSS || a.GSS.Proc != b.GSS.Proc || a.GSS.Service != b.GSS.Service {
				t.Fatalf("bound %d, step %d (conn %x xid %d type %d): table %+v, map %+v", bound, i, conn, xid, a.MsgType, b, a)
			}
		}
		if ct.idx.Len() != len(ref.m) || ct.n != len(ref.m) {
			t.Errorf("bound %d: %d calls remembered (%d counted), the map has %d", bound, ct.idx.Len(), ct.n, len(ref.m))
		}
		if ct.size != highWater {
			// The pool holds as many entries as calls were outstanding
			// at once at most (never more than the bound).
			t.Errorf("bound %d: %d entries in the pool, at most %d calls were outstanding", bound, ct.size, highWater)
		}
		if matched == 0 {
			t.Errorf("bound %d: no reply matched", bound)
		}
	}
}

// refNetFlowOf is netFlowOf as it was: a walk over every layer, the last
// IPv4/IPv6/GRH winning, an LRH only when nothing came before it.
func refNetFlowOf(rec *Record) gopacket.Flow {
	var f gopacket.Flow
	for _, l := range rec.Layers {
		switch x := l.(type) {
		case *IPv4:
			f = x.NetworkFlow()
		case *IPv6:
			f = x.NetworkFlow()
		case *ibcm.GRH:
			f = gopacket.NewFlow(layers.EndpointIPv6, x.SGID[:], x.DGID[:])
		case *ibcm.LRH:
			if f == (gopacket.Flow{}) {
				f = gopacket.NewFlow(lidEndpoint, []byte{byte(x.SLID >> 8), byte(x.SLID)}, []byte{byte(x.DLID >> 8), byte(x.DLID)})
			}
		}
	}
	return f
}

// netFlowOf picks the layer the walk over every layer picked, and
// connHash is the FastHash of that flow (0 without any), whatever the
// addressing layers.
func TestConnHashIsFlowFastHash(t *testing.T) {
	ip4 := &IPv4{}
	ip4.SrcIP, ip4.DstIP = net.IP{192, 0, 2, 1}, net.IP{192, 0, 2, 2}
	ip6 := &IPv6{}
	ip6.SrcIP, ip6.DstIP = net.ParseIP("fe80::1"), net.ParseIP("fe80::2")
	grh := &ibcm.GRH{SGID: [16]byte{0xfe, 0x80, 15: 3}, DGID: [16]byte{0xfe, 0x80, 15: 4}}
	lrh := &ibcm.LRH{SLID: 0x1234, DLID: 7}
	lrh2 := &ibcm.LRH{SLID: 9, DLID: 0x0506}
	bth := &ibcm.BTH{}
	for _, ls := range [][]field.Layer{
		nil, {bth}, {ip4, bth}, {ip6, bth}, {lrh, grh, bth}, {lrh, bth}, {lrh, lrh2, bth},
		{grh, lrh, bth}, {ip4, lrh, bth}, {ip6, ip4, bth},
	} {
		rec := &Record{Layers: ls}
		f := refNetFlowOf(rec)
		if got := netFlowOf(rec); got != f {
			t.Errorf("%s: netFlowOf %v, want %v", layerNames(rec), got, f)
		}
		want := uint64(0)
		if f != (gopacket.Flow{}) {
			want = f.FastHash()
		}
		if got := connHash(rec); got != want {
			t.Errorf("%s: connHash %x, flow's FastHash %x", layerNames(rec), got, want)
		}
	}
	a := connHash(&Record{Layers: []field.Layer{ip4}})
	ip4.SrcIP, ip4.DstIP = ip4.DstIP, ip4.SrcIP
	if b := connHash(&Record{Layers: []field.Layer{ip4}}); a != b || a == 0 {
		t.Errorf("connHash by direction: %x, %x", a, b)
	}
}

// A QP evicted at the bound and seen again is tracked again, whatever
// the cache of recent QPs held for it.
func TestRCSendsEvictedQPTrackedAgain(t *testing.T) {
	s := newRCSends(Options{MaxQPs: 2}, discardSends)
	rec := &Record{}
	for _, qp := range []uint32{1, 2, 3, 1} {
		rec.Reset()
		s.Packet(rec, QPKey{DestQP: qp}, ibcm.OpRCSendFirst, 1, 0, make([]byte, 16))
		q := s.qps[QPKey{DestQP: qp}]
		if q == nil || !q.active || len(s.qps) > 2 {
			t.Fatalf("after a SEND_FIRST on QP %d: tracked %v, %d QPs", qp, q != nil, len(s.qps))
		}
	}
	for qp, q := range s.recent {
		if q != nil && s.qps[q.key] != q {
			t.Errorf("cache slot %d holds QP %d, which is not tracked", qp, q.key.DestQP)
		}
	}
	s.Flush(rec)
	rec.Reset()
	s.Packet(rec, QPKey{DestQP: 1}, ibcm.OpRCSendMiddle, 2, 0, make([]byte, 16))
	if q := s.qps[QPKey{DestQP: 1}]; q == nil || len(s.qps) != 1 || !strings.Contains(codes(rec), CodeSendOrphan) {
		t.Errorf("after Flush, a SEND_MIDDLE on QP 1: tracked %v of %d, findings %s (want %s)", q != nil, len(s.qps), codes(rec), CodeSendOrphan)
	}
}

// TestNotedHeadersAsLayers: the Headers the Dissector notes as it decodes
// (noteHeaders, from what decodeLayers found and the layers after the
// BTH) are those a walk over the frame's layers finds, on every frame of
// the real captures (RoCEv2 over IPv4 and IPv6, RoCEv1, native IB, iWARP,
// the CM's MADs).
func TestNotedHeadersAsLayers(t *testing.T) {
	files := testcap.Glob(t, "pcaps/real/*.pcap")
	files = append(files, testcap.Glob(t, "pcaps/synthetic/*.pcap")...)
	withBTH := 0
	for _, file := range files {
		d := New(Options{})
		for _, f := range testcap.Frames(t, file) {
			rec := d.Dissect(&f)
			// The frame's own layers: those before what its Sends and
			// FPDUs added.
			own := rec.Layers
			for i, off := range rec.Offsets {
				if off < 0 {
					own = rec.Layers[:i]
					break
				}
			}
			want := headersIn(own)
			want.TCP = nil // noted only as the chain's last layer
			got := *rec.Headers()
			if got.TCP != nil {
				got.TCP = nil
			}
			if got.BTH != nil {
				withBTH++
			}
			if got != want {
				t.Fatalf("%s frame %d: noted %+v, the layers give %+v", file, f.Number, got, want)
			}
		}
	}
	t.Logf("%d captures, %d frames with a BTH", len(files), withBTH)
	if withBTH < 1000 {
		t.Errorf("only %d frames with a BTH", withBTH)
	}
}
