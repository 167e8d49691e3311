package dissect

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// rpcrdmaCall builds an RDMA_MSG carrying an NFSv4.2 COMPOUND call
// (SEQUENCE PUTFH WRITE) whose WRITE data makes the Send size octets long.
func rpcrdmaCall(t testing.TB, xid uint32, size int) []byte {
	t.Helper()
	body := []byte{
		0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, // tag "", minor 2, 3 ops
		0, 0, 0, 53}
	body = append(body, make([]byte, 32)...) // SEQUENCE args
	body = append(body, 0, 0, 0, 22, 0, 0, 0, 4, 1, 2, 3, 4)
	body = append(body, 0, 0, 0, 38)
	body = append(body, make([]byte, 28)...) // stateid, offset, stable
	hdr := 28 + 40 + 8 + len(body) + 4
	n := max(size-hdr, 0) &^ 3
	body = append(body, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i)
	}
	body = append(body, data...)
	rpc := &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgCall, RPCVersion: 2, Program: rpcrdma.ProgNFS, ProgVersion: 4, Procedure: 1,
		Cred: rpcrdma.Auth{Flavor: rpcrdma.AuthNone}, Verf: rpcrdma.Auth{Flavor: rpcrdma.AuthNone}}
	return rpcrdmaMsg(t, &rpcrdma.Header{XID: xid, Version: 1, Credits: 128, Proc: rpcrdma.ProcMsg}, rpc, body)
}

// rpcrdmaMsg is an RPC-over-RDMA message: h, then r (when not nil) and
// body.
func rpcrdmaMsg(t testing.TB, h *rpcrdma.Header, r *rpcrdma.RPC, body []byte) []byte {
	t.Helper()
	if r == nil {
		return testcap.Serialize(t, h)
	}
	return testcap.Serialize(t, h, r, gopacket.Payload(body))
}

// rpcBytes is an RPC message with body, as it travels in a chunk.
func rpcBytes(t testing.TB, r *rpcrdma.RPC, body []byte) []byte {
	t.Helper()
	return testcap.Serialize(t, r, gopacket.Payload(body))
}

type capturedSend struct {
	frame   int
	payload []byte
	info    SendInfo
}

// sendFunc is a sendDecoder that calls the function.
type sendFunc func(rec *Record, payload []byte, info SendInfo)

func (f sendFunc) decodeSend(rec *Record, payload []byte, info SendInfo) { f(rec, payload, info) }

// captureSends returns a sendDecoder that keeps copies of the Sends.
func captureSends() (*[]capturedSend, sendDecoder) {
	var got []capturedSend
	return &got, sendFunc(func(rec *Record, payload []byte, info SendInfo) {
		got = append(got, capturedSend{rec.Frame, append([]byte(nil), payload...), info})
	})
}

// discardSends is a sendDecoder that decodes nothing.
var discardSends = sendFunc(func(*Record, []byte, SendInfo) {})

type piece struct {
	op  ibcm.Opcode
	psn uint32
	b   []byte
}

// opSeq is the opcodes of an RC message's packets: ONLY for a message in
// one packet, else FIRST, MIDDLE … and LAST.
type opSeq struct{ only, first, middle, last ibcm.Opcode }

// of is the opcode of the packet that carries octets at to end of a
// message of n octets.
func (s opSeq) of(at, end, n int) ibcm.Opcode {
	switch {
	case at == 0 && end == n:
		return s.only
	case at == 0:
		return s.first
	case end == n:
		return s.last
	}
	return s.middle
}

// split cuts msg into Send packets of at most mtu octets from PSN psn on;
// the last of several is a last (SEND LAST or SEND LAST with Invalidate).
func split(msg []byte, mtu int, psn uint32, last ibcm.Opcode) []piece {
	var out []piece
	ops := opSeq{ibcm.OpRCSendOnly, ibcm.OpRCSendFirst, ibcm.OpRCSendMiddle, last}
	for off := 0; off < len(msg); off += mtu {
		end := min(off+mtu, len(msg))
		out = append(out, piece{ops.of(off, end, len(msg)), psn & 0xffffff, msg[off:end]})
		psn++
	}
	return out
}

func codes(rec *Record) string {
	var s []string
	for _, f := range rec.Findings {
		s = append(s, f.Code)
	}
	return strings.Join(s, ",")
}

func TestRCSendsInOrderAndRetransmissions(t *testing.T) {
	got, dec := captureSends()
	msg := rpcrdmaCall(t, 0x1234, 10000)
	ps := split(msg, 4096, 0xfffffe, ibcm.OpRCSendLastInv) // PSNs wrap past 2^24
	s := newRCSends(Options{}, dec)
	key := QPKey{DestQP: 0x11}
	rec := &Record{}
	feed := func(frame int, p piece) {
		rec.Reset()
		rec.Frame = frame
		s.Packet(rec, key, p.op, p.psn, 0xabc, p.b)
		if len(rec.Findings) > 0 {
			t.Fatalf("frame %d: findings %s", frame, codes(rec))
		}
	}
	feed(1, ps[0])
	feed(2, ps[1])
	feed(3, ps[1]) // duplicate MIDDLE
	feed(4, ps[0]) // go-back-N to the FIRST
	feed(5, ps[1])
	feed(6, ps[2])
	if len(*got) != 1 {
		t.Fatalf("%d Sends completed, want 1", len(*got))
	}
	g := (*got)[0]
	if !bytes.Equal(g.payload, msg) {
		t.Errorf("reassembled %d octets differ from the %d sent", len(g.payload), len(msg))
	}
	want := SendInfo{Transport: "ib", FirstFrame: 4, LastFrame: 6, Invalidate: true, InvalidateSTag: 0xabc, Length: len(msg)}
	gi := g.info
	if gi.qp == nil || *gi.qp != (qpEnd{key.Net.Dst(), key.DestQP}) {
		t.Errorf("info's QP %v, want %v", gi.qp, key)
	}
	gi.qp = nil
	if gi != want {
		t.Errorf("info %+v, want %+v", gi, want)
	}
	// Retransmissions of the completed Send are ignored silently.
	feed(7, ps[1])
	feed(8, ps[2])
	feed(9, ps[0])
	if len(*got) != 1 || s.Buffered() != 0 {
		t.Errorf("%d Sends, %d octets buffered after retransmissions", len(*got), s.Buffered())
	}
	st := s.Stats()
	if st.Sends != 1 || st.Duplicates != 5 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestRCSendsBrokenSends(t *testing.T) {
	got, dec := captureSends()
	msg := rpcrdmaCall(t, 7, 4000)
	ps := split(msg, 1024, 100, ibcm.OpRCSendLast)
	if len(ps) != 4 {
		t.Fatalf("%d pieces", len(ps))
	}
	key := QPKey{DestQP: 0x22}
	cases := []struct {
		name   string
		cfg    Options
		feed   []piece
		codes  string // findings over the whole run, with Flush
		nsends int
	}{
		{"gap never filled", Options{}, []piece{ps[0], ps[1], ps[3]}, CodeSendGap + "," + CodeSendIncomplete, 0},
		{"go-back-N after a lost packet", Options{}, []piece{ps[0], ps[1], ps[3], ps[1], ps[2], ps[3]}, CodeSendGap, 1},
		{"many out of sequence, one finding", Options{}, []piece{ps[0], ps[2], ps[3], ps[3], ps[1], ps[2], ps[3]}, CodeSendGap, 1},
		{"orphan", Options{}, []piece{ps[2], ps[3], ps[0], ps[1], ps[2], ps[3]}, CodeSendOrphan, 1},
		{"new FIRST before LAST", Options{}, []piece{ps[0], ps[1], {ibcm.OpRCSendFirst, 500, ps[0].b}}, CodeSendIncomplete + "," + CodeSendIncomplete, 0},
		{"ONLY before LAST", Options{}, []piece{ps[0], {ibcm.OpRCSendOnly, 102, msg[:64]}}, CodeSendIncomplete, 1},
		{"too large", Options{MaxSendBytes: 2048}, ps, CodeSendLimit, 0},
		{"buffer limit", Options{MaxSendBufferBytes: 1500}, []piece{ps[0], ps[1]}, CodeSendLimit, 0},
		{"flush", Options{}, ps[:3], CodeSendIncomplete, 0},
		{"other opcodes ignored", Options{}, []piece{{ibcm.OpRCWriteFirst, 1, ps[0].b}, {ibcm.OpRCAck, 2, nil}}, "", 0},
	}
	for _, tc := range cases {
		*got = nil
		s := newRCSends(tc.cfg, dec)
		rec := &Record{}
		var all []string
		for i, p := range tc.feed {
			rec.Reset()
			rec.Frame = i + 1
			s.Packet(rec, key, p.op, p.psn, 0, p.b)
			if c := codes(rec); c != "" {
				all = append(all, c)
			}
		}
		rec.Reset()
		s.Flush(rec)
		if c := codes(rec); c != "" {
			all = append(all, c)
		}
		if g := strings.Join(all, ","); g != tc.codes {
			t.Errorf("%s: findings %q, want %q", tc.name, g, tc.codes)
		}
		if len(*got) != tc.nsends {
			t.Errorf("%s: %d Sends decoded, want %d", tc.name, len(*got), tc.nsends)
		}
		if s.Buffered() != 0 {
			t.Errorf("%s: %d octets still buffered after Flush", tc.name, s.Buffered())
		}
	}
}

func TestRCSendsManyQPsBounded(t *testing.T) {
	s := newRCSends(Options{MaxQPs: 8, MaxSendBufferBytes: 64 << 10}, discardSends)
	rec := &Record{}
	limit := 0
	for qp := uint32(0); qp < 1000; qp++ {
		rec.Reset()
		s.Packet(rec, QPKey{DestQP: qp}, ibcm.OpRCSendFirst, 1, 0, make([]byte, 4096))
		limit += strings.Count(codes(rec), CodeSendLimit)
		if len(s.qps) > 8 || s.Buffered() > 64<<10 {
			t.Fatalf("qp %d: %d QPs, %d octets buffered", qp, len(s.qps), s.Buffered())
		}
	}
	if limit == 0 {
		t.Error("no limit finding while evicting")
	}
}

// Multi-packet Sends through the whole Dissector: RoCEv2 frames built with
// layers/ibcm, the Send split over FIRST, MIDDLE and LAST.
func TestDissectorMultiPacketSend(t *testing.T) {
	msg := rpcrdmaCall(t, 0xfeed, 9000)
	ps := split(msg, 4096, 40, ibcm.OpRCSendLast)
	d := New(Options{})
	var recs []string
	for i, p := range ps {
		frame, err := ibcmtest.Frame(ibcmtest.RoCEv2IPv4, &ibcmtest.Client, &ibcmtest.Server,
			&ibcm.BTH{OpCode: p.op, PKey: 0xffff, DestQP: ibcmtest.Server.QPN, PSN: p.psn}, gopacket.Payload(p.b))
		if err != nil {
			t.Fatal(err)
		}
		r := d.Dissect(&source.Frame{Number: i + 1, LinkType: source.LinkTypeEthernet, Data: frame,
			CaptureLength: len(frame), Length: len(frame)})
		recs = append(recs, layerNames(r))
		if i == len(ps)-1 {
			h, ok := r.Layer("rpcrdma").(*rpcrdma.Header)
			if !ok || h.XID != 0xfeed {
				t.Fatalf("last frame layers %s", layerNames(r))
			}
			n, ok := r.Layer("nfs").(*rpcrdma.NFS)
			if !ok || len(n.Ops) != 3 || n.Ops[2].Opcode != 38 {
				t.Fatalf("nfs layer %+v", r.Layer("nfs"))
			}
			if r.Offsets[len(r.Offsets)-1] != -1 {
				t.Errorf("reassembled layers at offset %d, want -1", r.Offsets[len(r.Offsets)-1])
			}
		} else if r.Layer("rpcrdma") != nil {
			t.Errorf("frame %d: rpcrdma before the Send is complete", i+1)
		}
		for _, f := range r.Findings {
			t.Errorf("frame %d: %s", i+1, f)
		}
	}
	t.Log(strings.Join(recs, "\n"))
}

// Every RPC-over-RDMA Send of the real captures decodes through the
// Dissector; replies are named from their calls.
func TestDissectorRealSends(t *testing.T) {
	for _, file := range []string{testcap.RXE, testcap.SIW} {
		d := New(Options{})
		var hdrs, rpcs, nfs, replies int
		for _, f := range testcap.Frames(t, file) {
			r := d.Dissect(&f)
			for i, l := range r.Layers {
				switch x := l.(type) {
				case *rpcrdma.Header:
					hdrs++
					if file == testcap.RXE && r.Offsets[i] != 54 && r.Offsets[i] != 58 {
						t.Errorf("%s frame %d: rpcrdma at frame offset %d", file, r.Frame, r.Offsets[i])
					}
				case *rpcrdma.RPC:
					rpcs++
				case *rpcrdma.NFS:
					nfs++
					if x.Reply {
						replies++
					}
				}
			}
			for _, fd := range r.Findings {
				if strings.HasPrefix(fd.Code, "rpc") || strings.HasPrefix(fd.Code, "nfs") || strings.HasPrefix(fd.Code, "ib.send") {
					t.Errorf("%s frame %d: %s", file, r.Frame, fd)
				}
			}
		}
		// 46 Sends: 23 calls, 23 replies of which 4 are RDMA_NOMSG (the
		// reply went by RDMA Write into the reply chunk, put back
		// together from the Writes).
		if hdrs != 46 || rpcs != 46 || nfs != 46 || replies != 23 {
			t.Errorf("%s: %d rpcrdma, %d rpc, %d nfs layers, %d named replies; want 46, 46, 46, 23", file, hdrs, rpcs, nfs, replies)
		}
	}
}

func TestDecodeSendFindings(t *testing.T) {
	// A Send whose RPC xid differs and whose read list never ends.
	u := newRPCSends(Options{})
	rec := &Record{Frame: 9}
	h := testcap.Serialize(t, &rpcrdma.Header{XID: 1, Version: 1, Proc: rpcrdma.ProcMsg})
	bad := append(h[:16:16], 0, 0, 0, 1, 0, 0, 0, 0)
	u.decodeSend(rec, bad, SendInfo{FirstFrame: 1, LastFrame: 9})
	if c := codes(rec); c != rpcrdma.CodeChunkListUnterminated || rec.Findings[0].Frame != 9 || rec.Findings[0].Offset != -1 {
		t.Errorf("findings %v", rec.Findings)
	}
	if rec.Layer("rpcrdma") == nil {
		t.Error("no rpcrdma layer for a header whose list is broken")
	}
	// The layers of one frame are distinct values (Records are reused).
	rec = &Record{Frame: 10}
	u.decodeSend(rec, rpcrdmaCall(t, 5, 200), SendInfo{})
	u.decodeSend(rec, rpcrdmaCall(t, 6, 200), SendInfo{})
	var xids []string
	for _, l := range rec.Layers {
		if h, ok := l.(*rpcrdma.Header); ok {
			xids = append(xids, fmt.Sprint(h.XID))
		}
	}
	if strings.Join(xids, ",") != "5,6" {
		t.Errorf("xids %v", xids)
	}
	// The same frame number again after a Reset (a new run, or a caller
	// that does not number frames): the pool is reused, not grown.
	for i := 0; i < 100; i++ {
		rec.Reset()
		rec.Frame = 10
		u.decodeSend(rec, rpcrdmaCall(t, 7, 200), SendInfo{})
	}
	if len(u.msgs) > 2 {
		t.Errorf("%d pooled messages after 100 resets", len(u.msgs))
	}
}

func FuzzRCSends(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 3, 4, 0, 0, 4}, uint16(64))
	f.Add([]byte{0, 0, 0, 1, 1, 0, 0, 3, 2, 0, 0, 2, 0, 0, 0, 1, 1, 0, 0, 2, 0x16, 0, 0, 3}, uint16(7))
	msg := rpcrdmaCall(f, 3, 600)
	f.Fuzz(func(t *testing.T, script []byte, mtu uint16) {
		s := newRCSends(Options{MaxSendBytes: 4096, MaxSendBufferBytes: 8192, MaxQPs: 4}, newRPCSends(Options{}))
		rec := &Record{}
		chunk := int(mtu%512) + 1
		for i := 0; i+4 <= len(script); i += 4 {
			op := ibcm.Opcode(script[i] % 0x18)
			qp := uint32(script[i+1] % 6)
			psn := uint32(script[i+2])<<8 | uint32(script[i+3])
			off := (int(psn) * chunk) % len(msg)
			end := min(off+chunk, len(msg))
			rec.Reset()
			rec.Frame = i/4 + 1
			s.Packet(rec, QPKey{DestQP: qp}, op, psn, 0, msg[off:end])
			if s.Buffered() > 8192 || len(s.qps) > 4 {
				t.Fatalf("buffered %d, %d QPs", s.Buffered(), len(s.qps))
			}
		}
		rec.Reset()
		s.Flush(rec)
		if s.Buffered() != 0 {
			t.Fatalf("%d octets after Flush", s.Buffered())
		}
	})
}

// rdmaMsg is an RDMA_MSG Send payload carrying r with body after its
// header, built with the layers' SerializeTo.
func rdmaMsg(t testing.TB, r *rpcrdma.RPC, body []byte) []byte {
	return rpcrdmaMsg(t, &rpcrdma.Header{XID: r.XID, Version: 1, Credits: 1, Proc: rpcrdma.ProcMsg}, r, body)
}

// A reply is named from its call, including the call's RPCSEC_GSS
// service (the integrity wrapper is removed from the reply's results too).
func TestDecodeSendMatchesGSSReply(t *testing.T) {
	gss := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 0} // DATA, seq 5, integrity, no handle
	callBody := []byte{0, 0, 0, 20, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 24}
	replyBody := []byte{0, 0, 0, 24, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 24, 0, 0, 0, 0}
	u := newRPCSends(Options{})
	rec := &Record{Frame: 1}
	u.decodeSend(rec, rdmaMsg(t, &rpcrdma.RPC{XID: 42, MsgType: rpcrdma.MsgCall, RPCVersion: 2, Program: rpcrdma.ProgNFS,
		ProgVersion: 4, Procedure: 1, Cred: rpcrdma.Auth{Flavor: rpcrdma.RPCSecGSS, Body: gss}}, callBody), SendInfo{})
	rec2 := rec // the next frame
	rec2.Reset()
	rec2.Frame = 2
	u.decodeSend(rec2, rdmaMsg(t, &rpcrdma.RPC{XID: 42, MsgType: rpcrdma.MsgReply}, replyBody), SendInfo{})
	n, ok := rec2.Layer("nfs").(*rpcrdma.NFS)
	if !ok || !n.Reply || len(n.Ops) != 1 || n.Ops[0].Opcode != 24 || !n.HasStatus {
		t.Fatalf("reply nfs layer %+v (layers %s, findings %v)", rec2.Layer("nfs"), layerNames(rec2), rec2.Findings)
	}
	if s := string(n.AppendSummary(nil)); s != "V4 Reply COMPOUND NFS4_OK PUTROOTFH" {
		t.Errorf("summary %q", s)
	}
}

// roceSendPayloads returns the RPC-over-RDMA payloads of the real rxe
// capture, found by the Dissector itself.
func roceSendPayloads(t testing.TB) [][]byte {
	var out [][]byte
	d := New(Options{})
	for _, f := range testcap.Frames(t, testcap.RXE) {
		r := d.Dissect(&f)
		if h, ok := r.Layer("rpcrdma").(*rpcrdma.Header); ok {
			out = append(out, append([]byte(nil), h.Contents[:len(h.Contents)+len(h.Payload)]...))
		}
	}
	if len(out) != 46 {
		t.Fatalf("%d Sends", len(out))
	}
	return out
}

func TestDecodeSendNoAllocs(t *testing.T) {
	var payloads [][]byte
	for _, p := range roceSendPayloads(t) {
		// Not the READ reply whose write list reports data written by RDMA
		// Writes this test does not feed: its rpcrdma.chunk-unwritten
		// finding (a message formatted) would allocate.
		var h rpcrdma.Header
		if h.DecodeFromBytes(p, rpcrdma.NilDecodeFeedback) == nil && len(h.Writes) > 0 && len(h.Payload) >= 8 && h.Payload[7] == 1 {
			continue
		}
		payloads = append(payloads, p)
	}
	if len(payloads) != 45 {
		t.Fatalf("%d payloads without a write list reporting data, want 45", len(payloads))
	}
	u := newRPCSends(Options{})
	rec := &Record{}
	run := func() {
		for i, p := range payloads {
			rec.Reset()
			rec.Frame = i + 1
			u.decodeSend(rec, p, SendInfo{Transport: "ib", FirstFrame: i + 1, LastFrame: i + 1, Length: len(p)})
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations per pass over 45 real Sends (decode, layers, call matching, chunks), want 0", n)
	}
}

func BenchmarkDecodeSend(b *testing.B) {
	payloads := roceSendPayloads(b)
	u := newRPCSends(Options{})
	rec := &Record{}
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range payloads {
			rec.Reset()
			rec.Frame = i + 1
			u.decodeSend(rec, p, SendInfo{Transport: "ib", FirstFrame: i + 1, LastFrame: i + 1, Length: len(p)})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(payloads)), "ns/send")
}

func BenchmarkRCSendsReassembly(b *testing.B) {
	msg := rpcrdmaCall(b, 1, 64<<10)
	ps := split(msg, 4096, 0, ibcm.OpRCSendLast)
	s := newRCSends(Options{}, discardSends)
	rec := &Record{}
	key := QPKey{DestQP: 1}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	psn := uint32(0)
	for b.Loop() {
		for _, p := range ps {
			s.Packet(rec, key, p.op, psn, 0, p.b)
			psn++
		}
	}
}

// A multi-packet Send whose LAST never arrives is reported when the
// Dissector flushes at end of input (Finish).
func TestDissectorFinishReportsIncompleteSend(t *testing.T) {
	msg := rpcrdmaCall(t, 0xbeef, 9000)
	ps := split(msg, 4096, 40, ibcm.OpRCSendLast)
	d := New(Options{})
	for i, p := range ps[:len(ps)-1] {
		frame, err := ibcmtest.Frame(ibcmtest.RoCEv2IPv4, &ibcmtest.Client, &ibcmtest.Server,
			&ibcm.BTH{OpCode: p.op, PKey: 0xffff, DestQP: ibcmtest.Server.QPN, PSN: p.psn}, gopacket.Payload(p.b))
		if err != nil {
			t.Fatal(err)
		}
		d.Dissect(&source.Frame{Number: i + 1, LinkType: source.LinkTypeEthernet, Data: frame,
			CaptureLength: len(frame), Length: len(frame)})
	}
	var codes []string
	d.Finish(func(r *Record) {
		for _, f := range r.Findings {
			codes = append(codes, f.Code)
		}
	})
	if len(codes) != 1 || codes[0] != CodeSendIncomplete {
		t.Fatalf("end-of-input findings %v, want [%s]", codes, CodeSendIncomplete)
	}
}

// TestDecodeSendNoMsgAnswersCall: an RDMA_NOMSG (the reply went by RDMA
// Write into the reply chunk) or RDMA_ERROR with a call's xid answers that
// call (Header.Answers names the call's frame); one with another xid
// leaves it outstanding. A later RDMA_MSG reply with the call's xid is
// named either way: the reply, or the reply sent again.
func TestDecodeSendNoMsgAnswersCall(t *testing.T) {
	callBody := []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 24}              // tag "", minor 1, PUTROOTFH
	replyBody := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 24, 0, 0, 0, 0} // NFS4_OK, PUTROOTFH OK
	header := func(xid uint32, proc rpcrdma.Proc) []byte {
		h := &rpcrdma.Header{XID: xid, Version: 1, Credits: 1, Proc: proc}
		if proc == rpcrdma.ProcError {
			h.Err, h.VersLow, h.VersHigh = rpcrdma.ErrVers, 1, 1
		}
		return testcap.Serialize(t, h)
	}
	for _, tc := range []struct {
		name    string
		answer  []byte // between the call and the RDMA_MSG reply; nil: none
		answers bool
	}{
		{"no answer in between", nil, false},
		{"RDMA_NOMSG, same xid", header(42, rpcrdma.ProcNoMsg), true},
		{"RDMA_ERROR, same xid", header(42, rpcrdma.ProcError), true},
		{"RDMA_NOMSG, other xid", header(43, rpcrdma.ProcNoMsg), false},
	} {
		u := newRPCSends(Options{})
		rec := &Record{Frame: 1}
		u.decodeSend(rec, rdmaMsg(t, &rpcrdma.RPC{XID: 42, MsgType: rpcrdma.MsgCall, RPCVersion: 2, Program: rpcrdma.ProgNFS,
			ProgVersion: 4, Procedure: 1}, callBody), SendInfo{})
		if rec.Layer("nfs") == nil {
			t.Fatalf("%s: call not decoded: %s %v", tc.name, layerNames(rec), rec.Findings)
		}
		if tc.answer != nil {
			rec.Reset()
			rec.Frame = 2
			u.decodeSend(rec, tc.answer, SendInfo{})
			if rec.Layer("rpcrdma") == nil || rec.Layer("rpc") != nil || len(rec.Findings) > 0 {
				t.Fatalf("%s: answer decoded as %s %v", tc.name, layerNames(rec), rec.Findings)
			}
			if a := rec.Layer("rpcrdma").(*rpcrdma.Header).Answers; (a.Frame == 1) != tc.answers || tc.answers && a.Procedure != 1 {
				t.Fatalf("%s: the answer answers %+v, want the call of frame 1: %v", tc.name, a, tc.answers)
			}
		}
		rec.Reset()
		rec.Frame = 3
		u.decodeSend(rec, rdmaMsg(t, &rpcrdma.RPC{XID: 42, MsgType: rpcrdma.MsgReply}, replyBody), SendInfo{})
		n, named := rec.Layer("nfs").(*rpcrdma.NFS)
		if !named || rec.Layer("rpc").(*rpcrdma.RPC).Call.Frame != 1 {
			t.Fatalf("%s: reply named %v (%s), want it named after the call of frame 1", tc.name, named, layerNames(rec))
		}
		if string(n.AppendSummary(nil)) != "V4 Reply COMPOUND NFS4_OK PUTROOTFH" {
			t.Fatalf("%s: reply %q", tc.name, n.AppendSummary(nil))
		}
	}
}

// TestRCSendsEvictsLeastRecentlyUsed: beyond MaxQPs the QP forgotten is
// the least recently used one without a partial Send (the least recently
// used of all when every QP has one), and the buffered-bytes limit drops
// the least recently used partial Send first.
func TestRCSendsEvictsLeastRecentlyUsed(t *testing.T) {
	s := newRCSends(Options{MaxQPs: 3, MaxSendBufferBytes: 64 << 10}, discardSends)
	rec := &Record{}
	only := func(qp uint32) {
		rec.Reset()
		s.Packet(rec, QPKey{DestQP: qp}, ibcm.OpRCSendOnly, 1, 0, []byte{0, 0, 0, 1})
	}
	first := func(qp uint32, n int) {
		rec.Reset()
		s.Packet(rec, QPKey{DestQP: qp}, ibcm.OpRCSendFirst, 10, 0, make([]byte, n))
	}
	tracked := func() string {
		var qps []string
		for q := s.oldest; q != nil; q = q.newer {
			qps = append(qps, fmt.Sprintf("%x%s", q.key.DestQP, map[bool]string{true: "*"}[q.active]))
		}
		if len(qps) != len(s.qps) {
			t.Fatalf("order lists %d QPs, %d tracked", len(qps), len(s.qps))
		}
		return strings.Join(qps, " ")
	}
	first(0xa, 100) // a has a partial Send
	only(0xb)
	only(0xc)
	only(0xb)
	if got := tracked(); got != "a* c b" {
		t.Fatalf("order %q", got)
	}
	only(0xd) // c: the oldest without a partial Send
	if got := tracked(); got != "a* b d" {
		t.Fatalf("after d: %q", got)
	}
	first(0xb, 100)
	first(0xd, 100)
	first(0xe, 100) // every QP has a partial Send: a, the oldest, goes
	if got := tracked(); got != "b* d* e*" || !strings.Contains(codes(rec), CodeSendLimit) {
		t.Fatalf("after e: %q (%s)", got, codes(rec))
	}
	// The buffered-bytes limit drops the oldest partial Send (b), not the
	// one growing (e).
	rec.Reset()
	s.Packet(rec, QPKey{DestQP: 0xe}, ibcm.OpRCSendMiddle, 11, 0, make([]byte, 64<<10-250))
	if got := tracked(); got != "b d* e*" || !strings.Contains(codes(rec), CodeSendLimit) {
		t.Fatalf("after the buffer limit: %q (%s)", got, codes(rec))
	}
}

// BenchmarkRCSendsManyQPs: a fabric with more QPs than MaxQPs (4096): every
// packet of a new QP evicts the least recently used one.
func BenchmarkRCSendsManyQPs(b *testing.B) {
	s := newRCSends(Options{}, newRPCSends(Options{}))
	rec := &Record{}
	payload := make([]byte, 64)
	qp := uint32(0)
	b.ReportAllocs()
	for b.Loop() {
		rec.Reset()
		s.Packet(rec, QPKey{DestQP: qp & 0xffffff}, ibcm.OpRCSendOnly, 1, 0, payload)
		qp++
	}
}
