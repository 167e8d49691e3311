package rpcrdma

import (
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// callMap is a test CallMatcher.
type callMap map[uint32][3]uint32

func (c callMap) MatchCall(r *RPC) {
	if r.MsgType == MsgCall {
		c[r.XID] = [3]uint32{r.Program, r.ProgVersion, r.Procedure}
		return
	}
	if v, ok := c[r.XID]; ok {
		r.SetCall(v[0], v[1], v[2])
	}
}

func decodeSends(t *testing.T, sends []send) map[int]testcap.TsharkValues {
	t.Helper()
	out := map[int]testcap.TsharkValues{}
	calls := callMap{}
	var m Message
	for _, s := range sends {
		if err := m.Decode(s.payload, calls); err != nil {
			t.Fatalf("frame %d: %v", s.frame, err)
		}
		if f := m.AppendFindings(nil); len(f) > 0 {
			t.Errorf("frame %d: unexpected findings %v", s.frame, f)
		}
		c := testcap.TsharkValues{}
		m.Header.VisitFields(c)
		if m.HasRPC {
			m.RPC.VisitFields(c)
		}
		if m.HasNFS {
			m.NFS.VisitFields(c)
		}
		out[s.frame] = c
	}
	return out
}

func TestRealCapturesSendCount(t *testing.T) {
	if n := len(roceSends(t)); n != 46 {
		t.Errorf("rxe: %d RC SEND_ONLY/SEND_ONLY_INV packets, want 46", n)
	}
	if n := len(iwarpSends(t)); n != 46 {
		t.Errorf("siw: %d Send FPDUs, want 46", n)
	}
}

// tsharkFields are compared one for one; ours[i] is our field name for
// tshark's field i.
var tsharkFields = [][2]string{
	{"rpcordma.xid", "rpcrdma.xid"},
	{"rpcordma.version", "rpcrdma.version"},
	{"rpcordma.flow_control", "rpcrdma.flow_control"},
	{"rpcordma.msg_type", "rpcrdma.msg_type"},
	{"rpcordma.reads_count", "rpcrdma.reads_count"},
	{"rpcordma.writes_count", "rpcrdma.writes_count"},
	{"rpcordma.reply_count", "rpcrdma.reply_count"},
	{"rpcordma.segment_count", "rpcrdma.segment_count"},
	{"rpcordma.position", "rpcrdma.position"},
	{"rpcordma.rdma_handle", "rpcrdma.rdma_handle"},
	{"rpcordma.rdma_length", "rpcrdma.rdma_length"},
	{"rpcordma.rdma_offset", "rpcrdma.rdma_offset"},
	{"rpcordma.errcode", "rpcrdma.errcode"},
	// The RPC and NFS fields: tshark also decodes RPC messages it
	// reassembles from RDMA Writes into reply chunks (RDMA_NOMSG); those
	// are not in the Send, so they are compared for RDMA_MSG only.
	{"rpc.xid", "rpc.xid"},
	{"rpc.msgtyp", "rpc.msgtyp"},
	{"rpc.version", "rpc.version"},
	{"rpc.program", "rpc.program"},
	{"rpc.programversion", "rpc.programversion"},
	{"rpc.procedure", "rpc.procedure"},
	{"rpc.replystat", "rpc.replystat"},
	{"rpc.state_accept", "rpc.state_accept"},
	{"rpc.auth.flavor", "rpc.auth.flavor"},
	{"rpc.auth.machinename", "rpc.auth.machinename"},
	{"rpc.auth.uid", "rpc.auth.uid"},
	{"rpc.auth.gid", "rpc.auth.gid"},
	{"rpc.auth.stamp", "rpc.auth.stamp"},
	{"rpc.auth.length", "rpc.auth.length"},
	{"nfs.tag", "nfs.tag"},
	{"nfs.procedure_v4", "nfs.procedure_v4"},
	{"nfs.minorversion", "nfs.minorversion"},
	{"nfs.ops.count", "nfs.ops.count"},
	{"nfs.opcode", "nfs.opcode"},
	{"nfs.nfsstat4", "nfs.nfsstat4"},
}

const firstRPCField = 13

func tshark(t *testing.T, pcap string) map[int][]string {
	t.Helper()
	names := make([]string, len(tsharkFields))
	for i, f := range tsharkFields {
		names[i] = f[0]
	}
	res := testcap.TsharkByFrame(t, pcap, "rpcordma", names...)
	for n, cols := range res {
		if len(cols) != len(tsharkFields) {
			t.Fatalf("tshark frame %d: %d columns, want %d", n, len(cols), len(tsharkFields))
		}
	}
	return res
}

func compareWithTshark(t *testing.T, pcap string, sends []send) {
	want := tshark(t, pcap)
	got := decodeSends(t, sends)
	if len(want) != len(got) {
		t.Errorf("tshark decodes %d RPC-over-RDMA messages, we %d", len(want), len(got))
	}
	compared := 0
	for frame, cols := range want {
		c, ok := got[frame]
		if !ok {
			t.Errorf("frame %d: tshark decodes RPC-over-RDMA, we found no Send", frame)
			continue
		}
		msgType := cols[3]
		k := strings.Count(cols[firstRPCField], ",") + 1
		for i, f := range tsharkFields {
			w := cols[i]
			if i >= firstRPCField {
				if msgType != "0" {
					continue
				}
				if f[0] == "rpc.programversion" {
					// tshark adds this field twice per RPC message.
					w = testcap.Undouble(w, 2*k)
				} else {
					w = testcap.Undouble(w, k)
				}
			}
			if g := c.Get(f[1]); g != w {
				t.Errorf("frame %d: %s = %q, tshark %s = %q", frame, f[1], g, f[0], w)
			}
			compared++
		}
	}
	t.Logf("%s: %d messages, %d field values equal to tshark's", pcap, len(want), compared)
}

func TestRealRoCEMatchesTshark(t *testing.T)  { compareWithTshark(t, testcap.RXE, roceSends(t)) }
func TestRealIWARPMatchesTshark(t *testing.T) { compareWithTshark(t, testcap.SIW, iwarpSends(t)) }
