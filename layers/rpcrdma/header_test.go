package rpcrdma

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/gopacket/gopacket"
)

// Transport headers copied from the real rxe capture (frame numbers of
// testdata/pcaps/real/rxe-nfs42-rdma.pcap).
var realHeaders = []struct {
	name    string
	hex     string
	want    Header
	hdrLen  int
	summary string
}{
	{"frame 4 RDMA_MSG NULL call", "bf4e396a 00000001 00000080 00000000 00000000 00000000 00000000",
		Header{XID: 0xbf4e396a, Version: 1, Credits: 128, Proc: ProcMsg}, 28, "RDMA_MSG xid=0xbf4e396a credits=128"},
	{"frame 12 RDMA_NOMSG reply chunk", "c04e396a 00000001 00000040 00000001 00000000 00000000 00000001 00000001 00000cd1 00000064 c04e396ac5568000",
		Header{XID: 0xc04e396a, Version: 1, Credits: 64, Proc: ProcNoMsg, HasReply: true,
			Reply: WriteChunk{Segments: []Segment{{Handle: 0xcd1, Length: 100, Offset: 0xc04e396ac5568000}}}}, 48,
		"RDMA_NOMSG xid=0xc04e396a credits=64 reply=100"},
	{"frame 72 reply chunk of 3 segments",
		"cf4e396a 00000001 00000080 00000000 00000000 00000000 00000001 00000003 00000ae8 00000068 cf4e396ac6051000 000009f9 0000ffa8 cf4e396ac57e0058 0000087e 00000004 cf4e396ac6051068",
		Header{XID: 0xcf4e396a, Version: 1, Credits: 128, Proc: ProcMsg, HasReply: true,
			Reply: WriteChunk{Segments: []Segment{{0xae8, 0x68, 0xcf4e396ac6051000}, {0x9f9, 0xffa8, 0xcf4e396ac57e0058}, {0x87e, 4, 0xcf4e396ac6051068}}}}, 80,
		"RDMA_MSG xid=0xcf4e396a credits=128 reply=65556"},
	{"frame 86 write list", "d14e396a 00000001 00000080 00000000 00000000 00000001 00000001 00000754 00001000 d14e396ac5c74000 00000000 00000000",
		Header{XID: 0xd14e396a, Version: 1, Credits: 128, Proc: ProcMsg,
			Writes: []WriteChunk{{Segments: []Segment{{0x754, 4096, 0xd14e396ac5c74000}}}}}, 52,
		"RDMA_MSG xid=0xd14e396a credits=128 writes=1"},
}

func cmpHeader(t *testing.T, got *Header, want Header) {
	t.Helper()
	g := *got
	g.BaseLayer = want.BaseLayer
	g.segs, g.spans, g.reply, g.listed, g.notes = nil, nil, span{}, false, notes{}
	norm := func(h *Header) {
		if len(h.Reads) == 0 {
			h.Reads = nil
		}
		if len(h.Writes) == 0 {
			h.Writes = nil
		}
		if len(h.Unknown) == 0 {
			h.Unknown = nil
		}
		if len(h.OptInfo) == 0 {
			h.OptInfo = nil
		}
	}
	norm(&g)
	norm(&want)
	if !reflect.DeepEqual(g, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", g, want)
	}
}

func TestHeaderRealBytes(t *testing.T) {
	for _, tc := range realHeaders {
		t.Run(tc.name, func(t *testing.T) {
			data := testcap.Hex(t, tc.hex)
			data = append(data, 0xde, 0xad, 0xbe, 0xef) // what follows is payload
			var h Header
			if err := h.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			cmpHeader(t, &h, tc.want)
			if len(h.Contents) != tc.hdrLen || len(h.Payload) != 4 {
				t.Errorf("contents %d payload %d, want %d and 4", len(h.Contents), len(h.Payload), tc.hdrLen)
			}
			if s := string(h.AppendSummary(nil)); s != tc.summary {
				t.Errorf("summary %q, want %q", s, tc.summary)
			}
			// SerializeTo gives back the same bytes.
			buf := gopacket.NewSerializeBuffer()
			if err := h.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(buf.Bytes()); got != hex.EncodeToString(data[:tc.hdrLen]) {
				t.Errorf("serialized %s\nwant       %x", got, data[:tc.hdrLen])
			}
		})
	}
}

// build serializes h (a Header or RPC) and payload after it.
func build(t testing.TB, h gopacket.SerializableLayer, payload []byte) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if len(payload) > 0 {
		b, _ := buf.PrependBytes(len(payload))
		copy(b, payload)
	}
	if err := h.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func TestHeaderRoundTrip(t *testing.T) {
	segs := func(n int, base uint32) []Segment {
		s := make([]Segment, n)
		for i := range s {
			s[i] = Segment{Handle: base + uint32(i), Length: 4096, Offset: uint64(base)<<32 | uint64(i)*4096}
		}
		return s
	}
	cases := []struct {
		name    string
		h       Header
		summary string
	}{
		{"v1 MSG all lists", Header{XID: 1, Version: 1, Credits: 32, Proc: ProcMsg,
			Reads:    []ReadSegment{{Position: 0, Segment: Segment{1, 2, 3}}, {Position: 0, Segment: Segment{4, 5, 6}}, {Position: 128, Segment: Segment{7, 8, 9}}},
			Writes:   []WriteChunk{{Segments: segs(2, 10)}, {Segments: segs(3, 20)}},
			HasReply: true, Reply: WriteChunk{Segments: segs(1, 30)}}, "RDMA_MSG xid=0x00000001 credits=32 reads=3 writes=2 reply=4096"},
		{"v1 MSGP", Header{XID: 2, Version: 1, Credits: 1, Proc: ProcMsgP, Align: 4096, Thresh: 1024}, "RDMA_MSGP xid=0x00000002 credits=1"},
		{"v1 DONE", Header{XID: 3, Version: 1, Credits: 1, Proc: ProcDone}, "RDMA_DONE xid=0x00000003 credits=1"},
		{"v1 ERR_VERS", Header{XID: 4, Version: 1, Credits: 1, Proc: ProcError, Err: ErrVers, VersLow: 1, VersHigh: 1}, "RDMA_ERROR xid=0x00000004 credits=1 ERR_VERS low=1 high=1"},
		{"v1 ERR_CHUNK", Header{XID: 5, Version: 1, Credits: 1, Proc: ProcError, Err: ErrChunk}, "RDMA_ERROR xid=0x00000005 credits=1 ERR_CHUNK"},
		{"v2 OPTIONAL", Header{XID: 6, Version: 2, Credits: 8, Proc: ProcOptional, OptType: 0xc0de, OptInfo: []byte("hello")}, "RDMA_OPTIONAL v2 xid=0x00000006 credits=8 opttype=0x0000c0de"},
		{"v2 INVAL_OPTION", Header{XID: 7, Version: 2, Credits: 8, Proc: ProcError, Err: ErrInvalOption}, "RDMA_ERROR v2 xid=0x00000007 credits=8 RDMA_ERR_INVAL_OPTION"},
		{"v2 BAD_HEADER", Header{XID: 7, Version: 2, Credits: 8, Proc: ProcError, Err: ErrBadHeader}, "RDMA_ERROR v2 xid=0x00000007 credits=8 RDMA_ERR_BAD_HEADER"},
		{"v2 MSG", Header{XID: 8, Version: 2, Credits: 8, Proc: ProcMsg, HasReply: true, Reply: WriteChunk{Segments: segs(2, 40)}}, "RDMA_MSG v2 xid=0x00000008 credits=8 reply=8192"},
		{"unknown version", Header{XID: 9, Version: 7, Unknown: []byte{0, 0, 0, 1, 0, 0, 0, 0, 0xaa}}, "RPC-over-RDMA unknown version 7 xid=0x00000009"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := build(t, &tc.h, nil)
			var h Header
			if err := h.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			cmpHeader(t, &h, tc.h)
			if s := string(h.AppendSummary(nil)); s != tc.summary {
				t.Errorf("summary %q, want %q", s, tc.summary)
			}
			c := testcap.TsharkValues{}
			h.VisitFields(c)
			if c.Get("rpcrdma.xid") == "" || c.Get("rpcrdma.version") == "" {
				t.Errorf("fields %v", c)
			}
		})
	}
}

func TestHeaderFindings(t *testing.T) {
	codes := func(h *Header) string {
		var s []string
		for _, f := range h.AppendFindings(nil) {
			s = append(s, f.Code)
		}
		return strings.Join(s, ",")
	}
	cases := []struct {
		name string
		hex  string
		want string
		uk   int // len(Unknown)
	}{
		{"unknown version keeps its bytes", "00000009 00000007 00000020 00000000 cafe", CodeUnknownVersion, 10},
		{"unknown proc", "00000009 00000001 00000020 00000009 01020304", CodeUnknownProc, 4},
		{"OPTIONAL in v1", "00000009 00000001 00000020 00000005 01020304", CodeUnknownProc, 4},
		{"unknown v1 errcode", "00000009 00000001 00000020 00000004 00000003", CodeUnknownError, 0},
		{"DONE deprecated", "00000009 00000001 00000020 00000003", CodeDeprecatedProc, 0},
		{"RDMA_MSG without RPC", "00000009 00000001 00000020 00000000 00000000 00000000 00000000", CodeMissingRPC, 0},
		{"bytes after NOMSG", "00000009 00000001 00000020 00000001 00000000 00000000 00000000 abcd", CodeUnexpectedPayload, 0},
	}
	for _, tc := range cases {
		var h Header
		if err := h.DecodeFromBytes(testcap.Hex(t, tc.hex), gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := codes(&h); got != tc.want {
			t.Errorf("%s: findings %q, want %q", tc.name, got, tc.want)
		}
		if len(h.Unknown) != tc.uk {
			t.Errorf("%s: %d unknown octets, want %d", tc.name, len(h.Unknown), tc.uk)
		}
		c := testcap.TsharkValues{}
		h.VisitFields(c)
		if tc.uk > 0 && c.Get("rpcrdma.unknown") == "" {
			t.Errorf("%s: unknown bytes not visited", tc.name)
		}
	}
}

func TestHeaderErrors(t *testing.T) {
	cases := []struct {
		name, hex, code, field string
		off                    int
	}{
		{"short", "000000", CodeTruncated, "rdma_xid/rdma_vers", 0},
		{"no proc", "00000001 00000001 00000001", CodeTruncated, "rdma_credit/rdma_proc", 8},
		{"read list never terminates", "00000001 00000001 00000001 00000000" + strings.Repeat("00000001 00000000 00000001 00000002 0000000000000003", 3),
			CodeChunkListUnterminated, "read list", 88},
		{"read entry cut", "00000001 00000001 00000001 00000000 00000001 00000000 00000001", CodeChunkListUnterminated, "read list entry 0", 20},
		{"write list never terminates", "00000001 00000001 00000001 00000000 00000000 00000001 00000000 00000001 00000000",
			CodeChunkListUnterminated, "write list", 36},
		{"segment count overrun", "00000001 00000001 00000001 00000000 00000000 00000001 40000000 00000001 00000002 0000000000000003",
			CodeSegmentCountOverrun, "write list chunk 0 segment count", 24},
		{"reply count overrun", "00000001 00000001 00000001 00000000 00000000 00000000 00000001 ffffffff", CodeSegmentCountOverrun, "reply chunk segment count", 28},
		{"no reply discriminator", "00000001 00000001 00000001 00000000 00000000 00000000", CodeChunkListUnterminated, "reply chunk", 24},
		{"bad discriminator", "00000001 00000001 00000001 00000000 00000002", CodeBadDiscriminator, "read list entry 0", 16},
		{"ERR_VERS cut", "00000001 00000001 00000001 00000004 00000001 00000001", CodeTruncated, "rdma_vers_low/rdma_vers_high", 20},
		{"optinfo too long", "00000001 00000002 00000001 00000005 00000001 00000100 00", CodeTruncated, "rdma_optinfo", 24},
	}
	for _, tc := range cases {
		var h Header
		err := h.DecodeFromBytes(testcap.Hex(t, tc.hex), gopacket.NilDecodeFeedback)
		var e *DecodeError
		if !errors.As(err, &e) {
			t.Errorf("%s: error %v, want *DecodeError", tc.name, err)
			continue
		}
		if e.Code != tc.code || e.Field != tc.field || e.Offset != tc.off {
			t.Errorf("%s: got %s %q @%d (%v), want %s %q @%d", tc.name, e.Code, e.Field, e.Offset, err, tc.code, tc.field, tc.off)
		}
		if f := e.Finding(); f.Code != tc.code || f.Severity.String() != "error" || f.Section == "" {
			t.Errorf("%s: finding %+v", tc.name, f)
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: message %q does not name the field", tc.name, err)
		}
	}
}

func TestHeaderSegmentCap(t *testing.T) {
	h := Header{XID: 1, Version: 1, Proc: ProcMsg}
	for i := 0; i < 40; i++ {
		h.Reads = append(h.Reads, ReadSegment{Position: 0, Segment: Segment{Handle: uint32(i), Length: 1}})
	}
	h.Writes = []WriteChunk{{Segments: make([]Segment, 40)}}
	data := build(t, &h, nil)
	var d Header
	if err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		t.Fatalf("default cap: %v", err)
	}
	if len(d.Reads) != 40 || len(d.Writes) != 1 || len(d.Writes[0].Segments) != 40 {
		t.Fatalf("decoded %d reads, %d writes", len(d.Reads), len(d.Writes))
	}
	d.MaxSegments = 16
	err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
	var e *DecodeError
	if !errors.As(err, &e) || e.Code != CodeSegmentCap {
		t.Fatalf("cap 16: %v", err)
	}
	if len(d.Reads) != 16 || d.MaxSegments != 16 {
		t.Errorf("kept %d reads (cap %d), want the 16 decoded before the cap", len(d.Reads), d.MaxSegments)
	}
	// The cap is this program's, no rule of RFC 8166: a warning, while a
	// header that breaks the XDR (cut inside its read list) is an error.
	if f := e.Finding(); f.Severity != finding.SeverityWarning || f.Code != CodeSegmentCap {
		t.Errorf("cap 16: finding %v, want a %s warning", f, CodeSegmentCap)
	}
	d.MaxSegments = 0
	if err := d.DecodeFromBytes(data[:40], gopacket.NilDecodeFeedback); !errors.As(err, &e) || e.Finding().Severity != finding.SeverityError {
		t.Errorf("header cut in its read list: %v, want an error finding", err)
	}
	d.MaxSegments = 40
	if err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		t.Errorf("cap 40 (per list): %v", err)
	}
}

// A long chunk list: many write chunks of many segments.
func TestHeaderLongLists(t *testing.T) {
	h := Header{XID: 0xabc, Version: 1, Credits: 128, Proc: ProcNoMsg}
	for c := 0; c < 8; c++ {
		segs := make([]Segment, 100)
		for i := range segs {
			segs[i] = Segment{Handle: uint32(c<<16 | i), Length: 4096, Offset: uint64(i) << 12}
		}
		h.Writes = append(h.Writes, WriteChunk{Segments: segs})
	}
	data := build(t, &h, nil)
	var d Header
	if err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if len(d.Writes) != 8 || d.SegmentCount() != 800 || d.Writes[7].Segments[99].Handle != 7<<16|99 {
		t.Errorf("decoded %d chunks, %d segments", len(d.Writes), d.SegmentCount())
	}
	d.MaxSegments = 500
	if err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err == nil {
		t.Error("800 segments in one write list with a cap of 500: no error")
	}
}

func TestHeaderNoAllocs(t *testing.T) {
	data := testcap.Hex(t, realHeaders[2].hex)
	var h Header
	h.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
	long := build(t, &Header{XID: 1, Version: 1, Proc: ProcMsg,
		Reads:  []ReadSegment{{Position: 4, Segment: Segment{1, 2, 3}}, {Position: 4, Segment: Segment{1, 2, 3}}},
		Writes: []WriteChunk{{Segments: make([]Segment, 5)}, {Segments: make([]Segment, 3)}}, HasReply: true,
		Reply: WriteChunk{Segments: make([]Segment, 4)}}, nil)
	h.DecodeFromBytes(long, gopacket.NilDecodeFeedback)
	n := testing.AllocsPerRun(200, func() {
		if err := h.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if err := h.DecodeFromBytes(long, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per decode of headers with chunk lists, want 0", n)
	}
}

func TestMessageNoAllocs(t *testing.T) {
	sends := roceSends(t)
	var m Message
	calls := callMap{}
	for _, s := range sends {
		m.Decode(s.payload, calls)
	}
	n := testing.AllocsPerRun(20, func() {
		for _, s := range sends {
			if err := m.Decode(s.payload, nil); err != nil {
				t.Fatal(err)
			}
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per pass over the 46 real Sends (header, RPC, NFS), want 0", n)
	}
}

func BenchmarkHeaderDecode(b *testing.B) {
	data := testcap.Hex(b, realHeaders[2].hex)
	var h Header
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		h.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
	}
}

func BenchmarkMessageDecodeReal(b *testing.B) {
	sends := roceSends(b)
	var m Message
	calls := callMap{}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range sends {
			m.Decode(s.payload, calls)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sends)), "ns/msg")
}
