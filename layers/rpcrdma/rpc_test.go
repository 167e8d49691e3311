package rpcrdma

import (
	"errors"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/gopacket/gopacket"
)

// The NFSv4.2 EXCHANGE_ID call of frame 8 of the rxe capture (RPC header
// through the first operation code), after its 48-octet transport header.
const realCallHex = "c04e396a 00000000 00000002 000186a3 00000004 00000001 00000001 0000001c 00000000 00000006 636c6965 6e740000 00000000 00000000 00000000 00000000 00000000" +
	" 00000000 00000002 00000001 0000002a"

func TestRPCRealCall(t *testing.T) {
	var r RPC
	if err := r.DecodeFromBytes(testcap.Hex(t, realCallHex), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if r.XID != 0xc04e396a || r.MsgType != MsgCall || r.RPCVersion != 2 || r.Program != ProgNFS || r.ProgVersion != 4 || r.Procedure != 1 {
		t.Errorf("decoded %+v", r)
	}
	if r.Cred.Flavor != AuthSys || !r.HasSys || string(r.AuthSys.MachineName) != "client" || r.AuthSys.UID != 0 || r.Verf.Flavor != AuthNone {
		t.Errorf("credential %+v %+v", r.Cred, r.AuthSys)
	}
	if len(r.Payload) != 16 || r.NextLayerType() != LayerTypeNFS {
		t.Errorf("payload %x next %v", r.Payload, r.NextLayerType())
	}
	var n NFS
	if err := n.DecodeBody(r.Program, r.ProgVersion, r.Procedure, false, r.Payload, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if !n.Compound || n.MinorVersion != 2 || n.NumOps != 1 || len(n.Ops) != 1 || n.Ops[0].Opcode != 42 {
		t.Errorf("nfs %+v", n)
	}
	if s := string(n.AppendSummary(nil)); s != "V4 Call COMPOUND EXCHANGE_ID" {
		t.Errorf("summary %q", s)
	}
	if s := string(r.AppendSummary(nil)); s != "RPC Call xid=0xc04e396a" {
		t.Errorf("rpc summary %q", s)
	}
}

func TestRPCReplies(t *testing.T) {
	cases := []struct {
		name string
		r    RPC
		want string
		sum  string
	}{
		{"success", RPC{XID: 1, MsgType: MsgReply, ReplyStat: ReplyAccepted, AcceptStat: AcceptSuccess},
			"rpc.replystat=0 rpc.state_accept=0", "RPC Reply xid=0x00000001 SUCCESS"},
		{"prog mismatch", RPC{XID: 2, MsgType: MsgReply, ReplyStat: ReplyAccepted, AcceptStat: AcceptProgMismatch, Low: 3, High: 4},
			"rpc.replystat=0 rpc.state_accept=2 rpc.programversion.min=3 rpc.programversion.max=4", "RPC Reply xid=0x00000002 PROG_MISMATCH"},
		{"rpc mismatch", RPC{XID: 3, MsgType: MsgReply, ReplyStat: ReplyDenied, RejectStat: RejectRPCMismatch, Low: 2, High: 2},
			"rpc.replystat=1 rpc.state_reject=0 rpc.version.min=2 rpc.version.max=2", "RPC Reply xid=0x00000003 denied RPC_MISMATCH"},
		{"auth error", RPC{XID: 4, MsgType: MsgReply, ReplyStat: ReplyDenied, RejectStat: RejectAuthError, AuthStat: 5},
			"rpc.replystat=1 rpc.state_reject=1 rpc.state_auth=5", "RPC Reply xid=0x00000004 denied AUTH_ERROR"},
	}
	for _, tc := range cases {
		var r RPC
		if err := r.DecodeFromBytes(build(t, &tc.r, nil), gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		c := testcap.TsharkValues{}
		r.VisitFields(c)
		var got []string
		for _, f := range []string{"rpc.replystat", "rpc.state_accept", "rpc.state_reject", "rpc.state_auth", "rpc.programversion.min", "rpc.programversion.max", "rpc.version.min", "rpc.version.max"} {
			if v := c.Get(f); v != "" {
				got = append(got, f+"="+v)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, g, tc.want)
		}
		if s := string(r.AppendSummary(nil)); s != tc.sum {
			t.Errorf("%s: summary %q, want %q", tc.name, s, tc.sum)
		}
	}
}

func TestRPCErrors(t *testing.T) {
	cases := []struct{ name, hex, code, field string }{
		{"short", "00000001", CodeRPCTruncated, "xid/msg_type"},
		{"bad msg type", "00000001 00000002", CodeRPCBadMsgType, "msg_type"},
		{"call cut", "00000001 00000000 00000002 000186a3", CodeRPCTruncated, "rpcvers/prog/vers/proc"},
		{"huge credential", "00000001 00000000 00000002 000186a3 00000003 00000000 00000001 00000400", CodeRPCTruncated, "credential length"},
		{"credential cut", "00000001 00000000 00000002 000186a3 00000003 00000000 00000001 00000010 0000", CodeRPCTruncated, "credential body"},
		{"bad reply stat", "00000001 00000001 00000007", CodeRPCBadMsgType, "reply_stat"},
	}
	for _, tc := range cases {
		var r RPC
		err := r.DecodeFromBytes(testcap.Hex(t, tc.hex), gopacket.NilDecodeFeedback)
		var e *DecodeError
		if !errors.As(err, &e) || e.Code != tc.code || e.Field != tc.field {
			t.Errorf("%s: %v, want %s in %q", tc.name, err, tc.code, tc.field)
		}
	}
	var r RPC
	if err := r.DecodeFromBytes(testcap.Hex(t, "00000001 00000000 00000003 000186a5 00000003 00000001 00000000 00000000 00000000 00000000"), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if f := r.AppendFindings(nil); len(f) != 1 || f[0].Code != CodeRPCBadVersion {
		t.Errorf("rpcvers 3: findings %v", f)
	}
}

func TestNFSProcedureNames(t *testing.T) {
	cases := []struct {
		prog, vers, proc uint32
		reply            bool
		body             string
		sum              string
	}{
		{ProgNFS, 3, 6, false, "", "V3 Call READ"},
		{ProgNFS, 3, 7, true, "00000046", "V3 Reply WRITE NFS3ERR_STALE"},
		{ProgNFS, 2, 17, false, "", "V2 Call STATFS"},
		{ProgNFS, 4, 0, false, "", "V4 Call NULL"},
		{ProgMount, 3, 1, false, "", "MOUNT V3 Call MNT"},
		{ProgNLM, 4, 2, false, "", "NLM V4 Call LOCK"},
		{ProgNFSACL, 3, 1, false, "", "NFS_ACL V3 Call GETACL"},
		{ProgNFSACL, 2, 3, false, "", "NFS_ACL V2 Call GETATTR"},
	}
	for _, tc := range cases {
		var n NFS
		if err := n.DecodeBody(tc.prog, tc.vers, tc.proc, tc.reply, testcap.Hex(t, tc.body), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if s := string(n.AppendSummary(nil)); s != tc.sum {
			t.Errorf("summary %q, want %q", s, tc.sum)
		}
		c := testcap.TsharkValues{}
		n.VisitFields(c)
		if len(c) == 0 {
			t.Errorf("%s: no fields", tc.sum)
		}
	}
}

func TestNFSCompoundWalk(t *testing.T) {
	// SEQUENCE, PUTFH, LOOKUP "dir", GETFH, GETATTR, then an op with
	// unknown arguments (WRITE_SAME) and two more.
	call := "00000004 74616731 00000002 00000008" + // tag "tag1", minor 2, 8 ops
		" 00000035" + strings.Repeat("00", 32) +
		" 00000016 00000004 01020304" +
		" 0000000f 00000003 64697200" +
		" 0000000a" +
		" 00000009 00000002 00000010 00000020" +
		" 00000046 00000000" +
		" 00000009 00000000 0000000a"
	var n NFS
	if err := n.DecodeBody(ProgNFS, 4, 1, false, testcap.Hex(t, call), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if s := string(n.AppendSummary(nil)); s != "V4 Call COMPOUND SEQUENCE PUTFH LOOKUP GETFH GETATTR WRITE_SAME +2" {
		t.Errorf("summary %q", s)
	}
	if string(n.Tag) != "tag1" || n.Undecoded != 2 {
		t.Errorf("tag %q undecoded %d", n.Tag, n.Undecoded)
	}
	if f := n.AppendFindings(nil); len(f) != 1 || f[0].Code != CodeNFSOpsUndecoded || !strings.Contains(f[0].Message, "WRITE_SAME") {
		t.Errorf("findings %v", f)
	}
	// A reply: SEQUENCE ok, PUTFH ok, LOOKUP NOENT (the compound stops).
	reply := "00000002 00000000 00000003" +
		" 00000035 00000000" + strings.Repeat("00", 36) +
		" 00000016 00000000" +
		" 0000000f 00000002"
	if err := n.DecodeBody(ProgNFS, 4, 1, true, testcap.Hex(t, reply), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if s := string(n.AppendSummary(nil)); s != "V4 Reply COMPOUND NFS4ERR_NOENT SEQUENCE PUTFH LOOKUP" {
		t.Errorf("summary %q", s)
	}
	// More operations claimed than bytes: counted, a finding, no loop.
	if err := n.DecodeBody(ProgNFS, 4, 1, false, testcap.Hex(t, "00000000 00000001 7fffffff 00000018"), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if len(n.Ops) != 1 || n.Undecoded != 0x7fffffff-1 {
		t.Errorf("ops %d undecoded %d", len(n.Ops), n.Undecoded)
	}
	if f := n.AppendFindings(nil); len(f) == 0 || f[0].Code != CodeNFSTooManyOps || f[0].Severity != finding.SeverityError {
		t.Errorf("findings %v", f)
	}
	// More operations than the decoder lists, all present: the decoder's
	// cap, not a broken rule.
	n.MaxOps = 2
	if err := n.DecodeBody(ProgNFS, 4, 1, false, testcap.Hex(t, "00000000 00000001 00000003 00000018 00000018 00000018"), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if f := n.AppendFindings(nil); len(f) != 1 || f[0].Code != CodeNFSOpsCap || f[0].Severity != finding.SeverityWarning || len(n.Ops) != 2 {
		t.Errorf("ops %d findings %v", len(n.Ops), f)
	}
}

func TestMessageXIDMismatch(t *testing.T) {
	h := Header{XID: 0x11111111, Version: 1, Credits: 1, Proc: ProcMsg}
	rpc := build(t, &RPC{XID: 0x22222222, MsgType: MsgCall, RPCVersion: 2, Program: ProgNFS, ProgVersion: 3, Procedure: 0}, nil)
	var m Message
	if err := m.Decode(build(t, &h, rpc), nil); err != nil {
		t.Fatal(err)
	}
	f := m.AppendFindings(nil)
	if len(f) != 1 || f[0].Code != CodeXIDMismatch || f[0].Offset != 28 {
		t.Errorf("findings %v", f)
	}
	if len(m.Layers(nil)) != 3 {
		t.Errorf("layers %d", len(m.Layers(nil)))
	}
}

func TestMessageOptionalWithRPC(t *testing.T) {
	h := Header{XID: 5, Version: 2, Credits: 1, Proc: ProcOptional, OptType: 7, OptInfo: []byte{1, 2, 3}}
	rpc := build(t, &RPC{XID: 5, MsgType: MsgCall, RPCVersion: 2, Program: ProgNFS, ProgVersion: 4, Procedure: 0}, nil)
	var m Message
	if err := m.Decode(build(t, &h, rpc), nil); err != nil {
		t.Fatal(err)
	}
	if !m.HasRPC || !m.HasNFS || m.RPC.XID != 5 || m.RPCOffset != 16+8+4 {
		t.Errorf("rpc %v nfs %v off %d", m.HasRPC, m.HasNFS, m.RPCOffset)
	}
	// Opaque bytes after RDMA_OPTIONAL that are not an RPC stay payload.
	if err := m.Decode(build(t, &h, []byte{9, 9, 9, 9, 9, 9, 9, 9}), nil); err != nil || m.HasRPC {
		t.Errorf("err %v rpc %v", err, m.HasRPC)
	}
	c := testcap.TsharkValues{}
	m.Header.VisitFields(c)
	if c.Get("rpcrdma.payload") != "0909090909090909" {
		t.Errorf("opaque payload not shown: %v", c)
	}
}

func gssCred(proc, svc uint32) Auth {
	b := []byte{0, 0, 0, 1}
	for _, v := range []uint32{proc, 77, svc, 4} {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return Auth{Flavor: RPCSecGSS, Body: append(b, 0xc0, 0x11, 0xe0, 0x7e)}
}

func TestMessageRPCSECGSS(t *testing.T) {
	compound := testcap.Hex(t, "00000000 00000002 00000001 00000018") // PUTROOTFH
	integ := append(testcap.Hex(t, "00000014 0000004d"), compound...) // databody_integ: length 20, seq 77
	cases := []struct {
		name     string
		proc     uint32
		svc      uint32
		body     []byte
		nfs      bool
		nfsOff   int
		firstOp  uint32
		checksum bool
	}{
		{"none", GSSProcData, GSSServiceNone, compound, true, 0, 24, false},
		{"integrity", GSSProcData, GSSServiceInteg, append(integ, 0, 0, 0, 4, 1, 2, 3, 4), true, 8, 24, true},
		{"privacy", GSSProcData, GSSServicePriv, []byte{0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}, false, 0, 0, false},
		{"context init", 1, GSSServiceNone, []byte{0, 0, 0, 4, 1, 2, 3, 4}, false, 0, 0, false},
	}
	for _, tc := range cases {
		h := Header{XID: 9, Version: 1, Credits: 1, Proc: ProcMsg}
		rpc := build(t, &RPC{XID: 9, MsgType: MsgCall, RPCVersion: 2, Program: ProgNFS, ProgVersion: 4, Procedure: 1,
			Cred: gssCred(tc.proc, tc.svc), Verf: Auth{Flavor: RPCSecGSS, Body: []byte{1, 2, 3, 4}}}, tc.body)
		var m Message
		if err := m.Decode(build(t, &h, rpc), nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !m.RPC.HasGSS || m.RPC.GSS.Seq != 77 || m.RPC.GSS.Service != tc.svc || string(m.RPC.GSS.Handle) != "\xc0\x11\xe0\x7e" {
			t.Errorf("%s: gss %+v", tc.name, m.RPC.GSS)
		}
		if m.HasNFS != tc.nfs {
			t.Errorf("%s: nfs layer %v, want %v", tc.name, m.HasNFS, tc.nfs)
			continue
		}
		if tc.nfs {
			if len(m.NFS.Ops) != 1 || m.NFS.Ops[0].Opcode != tc.firstOp {
				t.Errorf("%s: ops %+v", tc.name, m.NFS.Ops)
			}
			if want := m.RPCOffset + len(m.RPC.Contents) + tc.nfsOff; m.NFSOffset() != want {
				t.Errorf("%s: nfs at %d, want %d", tc.name, m.NFSOffset(), want)
			}
		}
		c := testcap.TsharkValues{}
		m.RPC.VisitFields(c)
		if c.Get("rpc.authgss.seqnum") != "77" {
			t.Errorf("%s: fields %v", tc.name, c)
		}
	}
}

func TestNFSCallback(t *testing.T) {
	// CB_COMPOUND: tag "", minor 1, callback_ident 0, 2 ops: CB_SEQUENCE
	// (no referring calls), CB_RECALL.
	call := "00000000 00000001 00000000 00000002 0000000b" + strings.Repeat("00", 32) + "00000000" +
		" 00000004" + strings.Repeat("00", 20) + "00000004 01020304"
	var n NFS
	if err := n.DecodeBody(0x40000000, 1, 1, false, testcap.Hex(t, call), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if s := string(n.AppendSummary(nil)); s != "NFSv4 callback V1 Call CB_COMPOUND CB_SEQUENCE CB_RECALL" {
		t.Errorf("summary %q", s)
	}
	reply := "00000000 00000000 00000002 0000000b 00000000" + strings.Repeat("00", 32) + "00000004 00000000"
	if err := n.DecodeBody(0x40000000, 1, 1, true, testcap.Hex(t, reply), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if s := string(n.AppendSummary(nil)); s != "NFSv4 callback V1 Reply CB_COMPOUND NFS4_OK CB_SEQUENCE CB_RECALL" {
		t.Errorf("summary %q", s)
	}
	c := testcap.TsharkValues{}
	n.VisitFields(c)
	if c.Get("nfs.cb.opcode") != "11,4" || c.Get("nfs.cb.procedure") != "1" {
		t.Errorf("fields %v", c)
	}
}
