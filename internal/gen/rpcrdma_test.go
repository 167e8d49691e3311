package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// Each synthetic RPC-over-RDMA capture, written by its generator into a
// temporary directory, decodes through the Dissector to the expected
// summaries (the rpcrdma, rpc and nfs layers' contributions) and findings.
// Each capture opens with its connection's REQ, REP and RTU, which carry
// none: want lists the frames after them.
func TestSyntheticRPCRDMACaptures(t *testing.T) {
	const setupFrames = 3
	want := map[string][]string{
		"synth-rpcrdma-v1-errors.pcap": {
			"RDMA_MSG xid=0x00000100 credits=128 | RPC Call xid=0x00000100 | V4 Call COMPOUND PUTROOTFH SAVEFH RESTOREFH",
			"RDMA_ERROR xid=0x00000100 credits=128 ERR_VERS low=1 high=1",
			"RDMA_MSG xid=0x00000101 credits=128 | RPC Call xid=0x00000101 | V4 Call COMPOUND PUTROOTFH SAVEFH RESTOREFH",
			"RDMA_ERROR xid=0x00000101 credits=128 ERR_CHUNK",
			"RDMA_MSGP xid=0x00000102 credits=128 | RPC Call xid=0x00000102 | V4 Call COMPOUND PUTROOTFH SAVEFH RESTOREFH [rpcrdma.deprecated-proc]",
			"RDMA_DONE xid=0x00000103 credits=128 [rpcrdma.deprecated-proc]",
		},
		"synth-rpcrdma-v2.pcap": {
			"RDMA_MSG v2 xid=0x00000200 credits=128 | RPC Call xid=0x00000200 | V4 Call COMPOUND PUTROOTFH SAVEFH RESTOREFH",
			"RDMA_MSG v2 xid=0x00000200 credits=128 | RPC Reply xid=0x00000200 SUCCESS | V4 Reply COMPOUND NFS4_OK PUTROOTFH SAVEFH RESTOREFH",
			"RDMA_OPTIONAL v2 xid=0x00000201 credits=128 opttype=0x00000001 | RPC Call xid=0x00000201 | V4 Call COMPOUND PUTROOTFH GETFH",
			"RDMA_OPTIONAL v2 xid=0x00000202 credits=128 opttype=0x7f000001",
			"RDMA_ERROR v2 xid=0x00000202 credits=128 RDMA_ERR_INVAL_OPTION",
			"RDMA_ERROR v2 xid=0x00000203 credits=128 RDMA_ERR_VERS low=1 high=2",
			"RDMA_ERROR v2 xid=0x00000204 credits=128 RDMA_ERR_BAD_HEADER",
		},
		"synth-rpcrdma-long-chunks.pcap": {
			"RDMA_MSG xid=0x00000300 credits=128 reads=16 writes=3 reply=32768 | RPC Call xid=0x00000300 | V4 Call COMPOUND PUTROOTFH SAVEFH RESTOREFH",
			"RDMA_NOMSG xid=0x00000301 credits=128 reply=65536",
		},
		"synth-rpcrdma-split-send.pcap": {
			"", "", "", "",
			"RDMA_MSG xid=0x00000400 credits=128 | RPC Call xid=0x00000400 | V4 Call COMPOUND SEQUENCE PUTFH WRITE",
			"RDMA_MSG xid=0x00000400 credits=128 | RPC Reply xid=0x00000400 SUCCESS | V4 Reply COMPOUND NFS4_OK SEQUENCE PUTFH WRITE",
			"RDMA_MSG xid=0x00000401 credits=128 | RPC Call xid=0x00000401 | V4 Call COMPOUND PUTROOTFH READDIR",
			"",
			"RDMA_MSG xid=0x00000401 credits=128 | RPC Reply xid=0x00000401 SUCCESS | V4 Reply COMPOUND NFS4_OK PUTROOTFH READDIR [rpcrdma.reply-chunk-missing]", // 6000 octets, the client takes 4096 and offered no reply chunk
		},
		"synth-rpcrdma-unknown-version.pcap": {
			"RPC-over-RDMA unknown version 7 xid=0x00000500 [rpcrdma.unknown-version]",
			"RPC-over-RDMA unknown version 0 xid=0x00000501 [rpcrdma.unknown-version]",
		},
		"synth-rpcrdma-broken.pcap": {
			"RDMA_MSG xid=0x00000601 credits=128 reads=2 [rpcrdma.chunk-list-unterminated]",
			"RDMA_MSG xid=0x00000602 credits=128 [rpcrdma.segment-count-overrun]",
			"RDMA_NOMSG xid=0x00000603 credits=128 [rpcrdma.segment-count-overrun]",
			"RDMA_MSG xid=0x00000600 credits=128 | RPC Call xid=0x000006ff | V4 Call COMPOUND PUTROOTFH GETFH [rpcrdma.xid-mismatch]",
			"RDMA_PROC_9 xid=0x00000605 credits=128 [rpcrdma.unknown-proc]",
		},
	}
	dir := t.TempDir()
	seen := 0
	for _, g := range generators {
		exp, ok := want[g.name]
		if !ok {
			continue
		}
		exp = append(make([]string, setupFrames), exp...)
		seen++
		path := filepath.Join(dir, g.name)
		if err := g.write(path); err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		d := dissect.New(dissect.Options{})
		var got []string
		for _, f := range testcap.Frames(t, path) {
			got = append(got, summarize(d.Dissect(&f)))
		}
		if len(got) != len(exp) {
			t.Errorf("%s: %d frames, want %d", g.name, len(got), len(exp))
		}
		for i := range min(len(got), len(exp)) {
			if got[i] != exp[i] {
				t.Errorf("%s frame %d:\n got %q\nwant %q", g.name, i+1, got[i], exp[i])
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d rpcrdma generators registered", seen, len(want))
	}
}

// summarize joins the summaries of the rpcrdma, rpc and nfs layers and
// lists the codes of the findings other than the transport's.
func summarize(r *dissect.Record) string {
	var parts []string
	for _, l := range r.Layers {
		switch l.Proto().Name {
		case "rpcrdma", "rpc", "nfs":
			parts = append(parts, string(l.(field.Summarizer).AppendSummary(nil)))
		}
	}
	s := strings.Join(parts, " | ")
	var codes []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Code, "rpcrdma.") || strings.HasPrefix(f.Code, "rpc.") || strings.HasPrefix(f.Code, "nfs.") || strings.HasPrefix(f.Code, "ib.send") {
			codes = append(codes, f.Code)
		}
	}
	if len(codes) > 0 {
		s += " [" + strings.Join(codes, ",") + "]"
	}
	return s
}

// The version 1 synthetic captures decode as tshark decodes them
// (rpcordma.* for every message; the RPC call and NFS operations where
// tshark shows them: it holds back calls with read chunks, waiting for the
// RDMA Read data, and does not match these replies to their calls).
func TestSyntheticRPCRDMAMatchesTshark(t *testing.T) {
	hdrFields := []string{"xid", "version", "flow_control", "msg_type", "reads_count", "writes_count", "reply_count",
		"segment_count", "position", "rdma_handle", "rdma_length", "rdma_offset", "errcode", "vers_low", "vers_high",
		"rdma_align", "rdma_thresh"}
	rpcFields := []string{"rpc.xid", "rpc.msgtyp", "rpc.program", "rpc.programversion", "rpc.procedure", "nfs.opcode"}
	dir := t.TempDir()
	for _, g := range generators {
		switch g.name {
		case "synth-rpcrdma-v1-errors.pcap", "synth-rpcrdma-long-chunks.pcap", "synth-rpcrdma-split-send.pcap":
		default:
			continue
		}
		path := filepath.Join(dir, g.name)
		if err := g.write(path); err != nil {
			t.Fatal(err)
		}
		fields := make([]string, 0, len(hdrFields)+len(rpcFields))
		for _, f := range hdrFields {
			fields = append(fields, "rpcordma."+f)
		}
		want := testcap.TsharkByFrame(t, path, "rpcordma", append(fields, rpcFields...)...)
		d := dissect.New(dissect.Options{})
		compared := 0
		for _, f := range testcap.Frames(t, path) {
			r := d.Dissect(&f)
			cols, ok := want[r.Frame]
			c := testcap.TsharkValues{}
			for _, l := range r.Layers {
				switch l.Proto().Name {
				case "rpcrdma", "rpc", "nfs":
					l.VisitFields(c)
				}
			}
			if !ok {
				if len(c) > 0 {
					t.Errorf("%s frame %d: we decode RPC-over-RDMA, tshark does not", g.name, r.Frame)
				}
				continue
			}
			for i, name := range hdrFields {
				if got := c.Get("rpcrdma." + name); got != cols[i] {
					t.Errorf("%s frame %d: rpcrdma.%s = %q, tshark %q", g.name, r.Frame, name, got, cols[i])
				}
				compared++
			}
			if cols[len(hdrFields)+1] != "0" { // RPC fields of calls shown by tshark
				continue
			}
			for i, name := range rpcFields {
				w := cols[len(hdrFields)+i]
				if name == "rpc.programversion" {
					w = strings.Split(w, ",")[0]
				}
				if got := c.Get(name); got != w {
					t.Errorf("%s frame %d: %s = %q, tshark %q", g.name, r.Frame, name, got, w)
				}
				compared++
			}
		}
		t.Logf("%s: %d messages, %d values equal to tshark's", g.name, len(want), compared)
	}
}
