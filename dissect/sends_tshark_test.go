package dissect

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// Every RPC-over-RDMA message of every real capture (the kernel's NFSv3
// and NFSv4.2 over rxe and siw, default and small inline thresholds, MPA
// CRC on and off) decodes through the Dissector — Send reassembly
// included — with the values tshark gives.
func TestRealCapturesMatchTshark(t *testing.T) {
	hdr := []string{"xid", "version", "flow_control", "msg_type", "reads_count", "writes_count", "reply_count",
		"segment_count", "position", "rdma_handle", "rdma_length", "rdma_offset", "errcode"}
	rpc := []string{"rpc.xid", "rpc.msgtyp", "rpc.program", "rpc.programversion", "rpc.procedure", "rpc.auth.flavor",
		"rpc.auth.uid", "rpc.replystat", "rpc.state_accept", "nfs.procedure_v3", "nfs.status3", "nfs.procedure_v4",
		"nfs.minorversion", "nfs.ops.count", "nfs.opcode", "nfs.nfsstat4"}
	fields := make([]string, 0, len(hdr)+len(rpc))
	for _, f := range hdr {
		fields = append(fields, "rpcordma."+f)
	}
	fields = append(fields, rpc...)
	files := testcap.Glob(t, "pcaps/real/*.pcap")
	total, values := 0, 0
	for _, file := range files {
		// Only the NFS captures carry RPC-over-RDMA (tshark finds none in
		// the others); for those, decoding none is the expectation.
		want := map[int][]string{}
		if strings.Contains(filepath.Base(file), "nfs") {
			want = testcap.TsharkByFrame(t, file, "rpcordma", fields...)
		}
		d := New(Options{})
		got := 0
		for _, f := range testcap.Frames(t, file) {
			r := d.Dissect(&f)
			c := testcap.TsharkValues{}
			for _, l := range r.Layers {
				switch l.Proto().Name {
				case "rpcrdma", "rpc", "nfs":
					l.VisitFields(c)
				}
			}
			cols, ok := want[r.Frame]
			if !ok {
				if len(c) > 0 {
					t.Errorf("%s frame %d: we decode RPC-over-RDMA, tshark does not", file, r.Frame)
				}
				continue
			}
			got++
			for i, name := range hdr {
				if g := c.Get("rpcrdma." + name); g != cols[i] {
					t.Errorf("%s frame %d: rpcrdma.%s = %q, tshark %q", file, r.Frame, name, g, cols[i])
				}
				values++
			}
			// RDMA_MSG, and RDMA_NOMSG whose reply came by RDMA Write
			// into the reply chunk (reassembled), compared on what
			// tshark shows.
			if cols[3] != "0" && cols[3] != "1" || cols[len(hdr)] == "" {
				continue
			}
			k := strings.Count(cols[len(hdr)], ",") + 1
			for i, name := range rpc {
				w := cols[len(hdr)+i]
				if name == "rpc.programversion" {
					w = testcap.Undouble(w, 2*k)
				} else {
					w = testcap.Undouble(w, k)
				}
				g := c.Get(name)
				if name == "nfs.nfsstat4" && cols[3] == "1" && strings.HasPrefix(w, g+",") {
					// tshark lists the rdattr_error of each READDIR entry
					// after the operations' statuses; we do not decode the
					// entries.
					w = g
				}
				if g != w {
					t.Errorf("%s frame %d: %s = %q, tshark %q", file, r.Frame, name, g, w)
				}
				values++
			}
		}
		if got != len(want) {
			t.Errorf("%s: %d messages, tshark %d", file, got, len(want))
		}
		total += got
	}
	t.Logf("%d real captures, %d RPC-over-RDMA messages, %d field values equal to tshark's", len(files), total, values)
}
