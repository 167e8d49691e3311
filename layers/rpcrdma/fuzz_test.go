package rpcrdma

import (
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/gopacket/gopacket"
)

func seedRealSends(f *testing.F) {
	for _, s := range roceSends(f) {
		f.Add(s.payload)
	}
	for _, tc := range realHeaders {
		f.Add(testcap.Hex(f, tc.hex))
	}
	f.Add(testcap.Hex(f, "00000009 00000002 00000020 00000005 00000001 00000003 010203 00"))
	f.Add(testcap.Hex(f, "00000009 00000001 00000020 00000004 00000001 00000001 00000002"))
	f.Add(testcap.Hex(f, "00000009 00000007 00000020"))
}

// FuzzHeader: any bytes decode without panic, lists stay bounded, and a
// successful decode re-serializes to the bytes it consumed.
func FuzzHeader(f *testing.F) {
	seedRealSends(f)
	var h Header
	h.MaxSegments = 64
	f.Fuzz(func(t *testing.T, data []byte) {
		err := h.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
		if h.SegmentCount() > 3*64 {
			t.Fatalf("%d segments with a cap of 64 per list", h.SegmentCount())
		}
		c := testcap.TsharkValues{}
		h.VisitFields(c)
		h.AppendSummary(nil)
		h.AppendFindings(nil)
		if err != nil {
			return
		}
		for _, f := range h.AppendFindings(nil) {
			if f.Code == CodeNonZeroPadding {
				return // re-serializing writes zero padding
			}
		}
		if len(h.Contents)+len(h.Payload) != len(data) {
			t.Fatalf("contents %d + payload %d != %d", len(h.Contents), len(h.Payload), len(data))
		}
		buf := gopacket.NewSerializeBuffer()
		if err := h.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		if string(buf.Bytes()) != string(h.Contents) {
			t.Fatalf("re-serialized %x\nwant          %x", buf.Bytes(), h.Contents)
		}
	})
}

// FuzzMessage: the whole Send decode (header, RPC, NFS with COMPOUND
// walking) never panics or loops, with and without call matching.
func FuzzMessage(f *testing.F) {
	seedRealSends(f)
	var m Message
	calls := callMap{}
	f.Fuzz(func(t *testing.T, data []byte) {
		m.Decode(data, calls)
		if len(calls) > 1000 {
			clear(calls)
		}
		c := testcap.TsharkValues{}
		for _, l := range m.Layers(nil) {
			l.VisitFields(c)
		}
		m.AppendFindings(nil)
		if m.HasNFS {
			m.NFS.AppendSummary(nil)
			if uint32(len(m.NFS.Ops)) > m.NFS.NumOps {
				t.Fatalf("%d ops listed of %d", len(m.NFS.Ops), m.NFS.NumOps)
			}
		}
		if m.HasRPC {
			m.RPC.AppendSummary(nil)
		}
	})
}

// FuzzNFSCompound feeds COMPOUND bodies (call and reply) directly.
func FuzzNFSCompound(f *testing.F) {
	var m Message
	for _, s := range roceSends(f) {
		if m.Decode(s.payload, nil) == nil && m.HasNFS {
			f.Add(append([]byte(nil), m.RPC.Payload...), m.RPC.MsgType == MsgReply, false)
		}
	}
	f.Add(testcap.Hex(f, "00000000 00000001 00000000 00000002 0000000b"+strings.Repeat("00", 36)+"00000004"+strings.Repeat("00", 20)+"00000004 01020304"), false, true)
	var n NFS
	n.MaxOps = 32
	f.Fuzz(func(t *testing.T, body []byte, reply, callback bool) {
		prog, vers := uint32(ProgNFS), uint32(4)
		if callback {
			prog, vers = 0x40000000, 1
		}
		n.DecodeBody(prog, vers, 1, reply, body, gopacket.NilDecodeFeedback)
		if len(n.Ops) > 32 {
			t.Fatalf("%d ops with a cap of 32", len(n.Ops))
		}
		n.VisitFields(testcap.TsharkValues{})
		n.AppendFindings(nil)
	})
}
