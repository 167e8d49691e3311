package pvtdata

import (
	"encoding/binary"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// le16 builds little-endian 16-bit words (NVMe-oF private data).
func le16(vs ...uint16) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// Layouts built from the kernel structs (include/linux/nvme-rdma.h,
// include/scsi/iser.h, include/scsi/srp.h, lnet o2iblnd-idl.h) with the
// values their senders put in them.
var (
	// nvme_rdma_cm_req from a Linux host, I/O queue 1 of 128 entries
	// (hrqsize = queue size, hsqsize = sqsize, 0's based), zero-padded to
	// the 56 octets of REQ ULP data.
	nvmeReq = cat(le16(0, 1, 128, 127), zeros(24), zeros(24))
	nvmeRep = cat(le16(0, 128), zeros(28))
	nvmeRej = le16(0, 6)
	// srp_login_req_rdma: tag 1, direct+indirect formats, opcode
	// SRP_LOGIN_REQ, it_iu_len 8260, port IDs.
	srpLogin = func() []byte {
		b := binary.BigEndian.AppendUint64(nil, 1)
		b = append(b, 0x00, 0x06, 0x00, 0x00)
		b = binary.BigEndian.AppendUint32(b, 8260)
		b = append(b, []byte("0123456789abcdef")...)
		b = append(b, []byte("fedcba9876543210")...)
		return append(b, zeros(8)...)
	}()
	// kib_msg CONNREQ, version 2, with connparams (queue depth 8, max msg
	// 4096, max frags 256), in each byte order.
	lustreConnReq = func(o binary.AppendByteOrder) []byte {
		b := o.AppendUint32(nil, 0x0be91b91)
		b = o.AppendUint16(b, 0x12)
		b = append(b, 0xc0, 0)
		b = o.AppendUint32(b, 56)
		b = o.AppendUint32(b, 0)
		b = o.AppendUint64(b, 0x20000c0a80001) // srcnid
		b = o.AppendUint64(b, 42)
		b = o.AppendUint64(b, 0x20000c0a80002)
		b = o.AppendUint64(b, 0)
		b = o.AppendUint16(b, 8)
		b = o.AppendUint16(b, 4096)
		return o.AppendUint32(b, 256)
	}
	lustreRej = func() []byte {
		o := binary.LittleEndian
		b := o.AppendUint32(nil, 0x0be91b91)
		b = o.AppendUint16(b, 0x12)
		b = append(b, 5, 0) // CONN_STALE
		b = o.AppendUint64(b, 77)
		b = o.AppendUint16(b, 8)
		b = o.AppendUint16(b, 4096)
		return o.AppendUint32(b, 256)
	}()
)

func TestIdentify(t *testing.T) {
	tests := []struct {
		name  string
		buf   []byte
		hint  Hint
		kind  ULPKind
		basis Basis
		check func(t *testing.T, u ULP)
	}{
		{"empty", nil, Hint{}, ULPEmpty, BasisContent, nil},
		{"all zero (IB CM padding)", zeros(56), Hint{}, ULPZero, BasisContent, nil},
		{"unknown", []byte{1, 2, 3}, Hint{}, ULPUnknown, BasisNone, nil},
		{"kernel RPC-over-RDMA", kernelClient, Hint{}, ULPRPCRDMA, BasisIdentifier, nil},
		{"RFC 8797 message after other octets", cat([]byte{9, 9}, kernelClient), Hint{Port: PortNVMeRDMA}, ULPRPCRDMA, BasisIdentifier, nil},
		{"NFS/RDMA port, no message (nfs-ganesha)", zeros(56), Hint{Port: PortNFSRDMA, Msg: MsgRequest}, ULPRPCRDMA, BasisPort, nil},
		{"NVMe-oF REQ by port", nvmeReq, Hint{Port: PortNVMeRDMA, Msg: MsgRequest}, ULPNVMe, BasisPort, func(t *testing.T, u ULP) {
			if u.NVMe != (NVMe{QID: 1, HRQSize: 128, HSQSize: 127}) {
				t.Errorf("%+v", u.NVMe)
			}
		}},
		{"NVMe-oF REQ by shape", nvmeReq, Hint{}, ULPNVMe, BasisShape, func(t *testing.T, u ULP) {
			if u.Msg != MsgRequest || u.NVMe.HRQSize != 128 {
				t.Errorf("%+v", u)
			}
		}},
		{"NVMe-oF REP", nvmeRep, Hint{Port: PortNVMeRDMA, Msg: MsgReply}, ULPNVMe, BasisPort, func(t *testing.T, u ULP) {
			if u.NVMe.CRQSize != 128 {
				t.Errorf("%+v", u.NVMe)
			}
		}},
		{"NVMe-oF REJ no resources", nvmeRej, Hint{Port: PortNVMeRDMA, Msg: MsgReject}, ULPNVMe, BasisPort, func(t *testing.T, u ULP) {
			if u.NVMe.Status != 6 {
				t.Errorf("%+v", u.NVMe)
			}
		}},
		{"NVMe-oF port, unknown record format", le16(1, 1, 128, 127), Hint{Port: PortNVMeRDMA}, ULPUnknown, BasisNone, nil},
		{"NVMe-oF REP shape without port stays unknown", nvmeRep, Hint{Msg: MsgReply}, ULPUnknown, BasisNone, nil},
		{"iSER, Send with Invalidate not supported", []byte{0x40, 0, 0, 0}, Hint{Port: PortISER, Msg: MsgRequest}, ULPISER, BasisPort, func(t *testing.T, u ULP) {
			if u.ISER.Flags != ISERSendWInvNotSupported {
				t.Errorf("%+v", u.ISER)
			}
		}},
		{"iSER all zero is still iSER by port", zeros(56), Hint{Port: PortISER}, ULPISER, BasisPort, nil},
		{"SRP login", srpLogin, Hint{Msg: MsgRequest}, ULPSRP, BasisShape, func(t *testing.T, u ULP) {
			s := u.SRP
			if s.Tag != 1 || s.ReqBufFmt != 6 || s.Opcode != 0 || s.ReqITIULen != 8260 || string(s.InitiatorPortID[:]) != "0123456789abcdef" || string(s.TargetPortID[:]) != "fedcba9876543210" {
				t.Errorf("%+v", s)
			}
		}},
		{"Lustre CONNREQ big-endian", lustreConnReq(binary.BigEndian), Hint{}, ULPLustre, BasisMagic, func(t *testing.T, u ULP) {
			l := u.Lustre
			if l.LittleEndian || l.Version != 0x12 || l.Type != 0xc0 || l.SrcNID != 0x20000c0a80001 || l.SrcStamp != 42 || !l.HasParams || l.QueueDepth != 8 || l.MaxMsgSize != 4096 || l.MaxFrags != 256 || l.Nob != 56 {
				t.Errorf("%+v", l)
			}
		}},
		{"Lustre CONNREQ little-endian", lustreConnReq(binary.LittleEndian), Hint{}, ULPLustre, BasisMagic, func(t *testing.T, u ULP) {
			l := u.Lustre
			if !l.LittleEndian || l.Version != 0x12 || l.Type != 0xc0 || l.DstNID != 0x20000c0a80002 || l.QueueDepth != 8 {
				t.Errorf("%+v", l)
			}
		}},
		{"Lustre REJ", lustreRej, Hint{Msg: MsgReject}, ULPLustre, BasisMagic, func(t *testing.T, u ULP) {
			l := u.Lustre
			if !l.Reject || l.Why != 5 || l.Incarnation != 77 || !l.HasParams || l.MaxFrags != 256 {
				t.Errorf("%+v", l)
			}
		}},
		{"Lustre magic only", []byte{0x0b, 0xe9, 0x1b, 0x91}, Hint{}, ULPLustre, BasisMagic, nil},
		{"SMB Direct IRD/ORD big-endian (current cifs)", []byte{0, 0, 0, 16, 0, 0, 0, 1}, Hint{Port: PortSMBDirect}, ULPSMBDirect, BasisPort, func(t *testing.T, u ULP) {
			if u.SMBDirect != (SMBDirect{IRD: 16, ORD: 1}) {
				t.Errorf("%+v", u.SMBDirect)
			}
		}},
		{"SMB Direct IRD/ORD little-endian (older cifs), exact 8 octets", []byte{16, 0, 0, 0, 1, 0, 0, 0}, Hint{}, ULPSMBDirect, BasisShape, func(t *testing.T, u ULP) {
			if u.SMBDirect != (SMBDirect{LittleEndian: true, IRD: 16, ORD: 1}) {
				t.Errorf("%+v", u.SMBDirect)
			}
		}},
		{"SMB port with implausible words", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, Hint{Port: PortSMBDirect2}, ULPUnknown, BasisNone, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := Identify(tc.buf, tc.hint)
			if u.Kind != tc.kind || u.Basis != tc.basis || u.Len != len(tc.buf) {
				t.Fatalf("got %v by %v (len %d), want %v by %v", u.Kind, u.Basis, u.Len, tc.kind, tc.basis)
			}
			if tc.check != nil {
				tc.check(t, u)
			}
			// Every ULP reports its fields with balanced groups and
			// only fields of the pvtdata proto.
			rec := &recorder{}
			u.VisitFields(rec)
			if rec.depth != 0 || rec.values["pvtdata.ulp"] != tc.kind.String() {
				t.Errorf("fields: depth %d, ulp %v", rec.depth, rec.values["pvtdata.ulp"])
			}
		})
	}
}

func TestULPNames(t *testing.T) {
	seen := map[string]bool{}
	for k := ULPUnknown; k <= ULPSMBDirect; k++ {
		if seen[k.String()] || k.Description() == "" {
			t.Errorf("%d: %q duplicate or undescribed", k, k)
		}
		seen[k.String()] = true
		if k.Other() != (k >= ULPNVMe) {
			t.Errorf("%v.Other() = %v", k, k.Other())
		}
	}
	if ULPKind(200).String() != "unknown" || Basis(200).String() != "none" || MsgKind(9).String() != "unknown" {
		t.Error("out-of-range names")
	}
}

// recorder is a field.Visitor that keeps the last value of each field and
// the order of names, and checks Begin/End nesting.
type recorder struct {
	names  []string
	values map[string]any
	depth  int
	bad    []string
}

func (r *recorder) put(f *field.Field, v any, kinds ...field.Kind) {
	if r.values == nil {
		r.values = map[string]any{}
	}
	if f.Proto != Proto || !strings.HasPrefix(f.Name, "pvtdata.") {
		r.bad = append(r.bad, f.Name+": not a pvtdata field")
	}
	ok := false
	for _, k := range kinds {
		ok = ok || f.Kind == k
	}
	if !ok {
		r.bad = append(r.bad, f.Name+": visited as the wrong kind "+f.Kind.String())
	}
	r.names = append(r.names, f.Name)
	r.values[f.Name] = v
}
func (r *recorder) Uint(f *field.Field, v uint64) {
	r.put(f, v, field.KindUint, field.KindHex, field.KindMAC, field.KindEUI64)
}
func (r *recorder) Int(f *field.Field, v int64)       { r.put(f, v, field.KindInt) }
func (r *recorder) Bool(f *field.Field, v bool)       { r.put(f, v, field.KindBool) }
func (r *recorder) String(f *field.Field, v string)   { r.put(f, v, field.KindString) }
func (r *recorder) Bytes(f *field.Field, v []byte)    { r.put(f, string(v), field.KindBytes) }
func (r *recorder) Addr(f *field.Field, v netip.Addr) { r.put(f, v, field.KindAddr) }
func (r *recorder) Begin(f *field.Field)              { r.put(f, nil, field.KindGroup); r.depth++ }
func (r *recorder) End() {
	r.depth--
	if r.depth < 0 {
		r.bad = append(r.bad, "End without Begin")
	}
}

func TestVisitFields(t *testing.T) {
	p := Dissect(cat(kernelClient, zeros(48)), Hint{Port: PortNFSRDMA, Msg: MsgRequest}, ModeRFC8797)
	var l field.Layer = &p
	if l.Proto().Name != "pvtdata" {
		t.Fatal(l.Proto().Name)
	}
	rec := &recorder{}
	l.VisitFields(rec)
	if len(rec.bad) != 0 || rec.depth != 0 {
		t.Fatalf("visit: %v depth %d", rec.bad, rec.depth)
	}
	wantOrder := []string{"pvtdata.length", "pvtdata.ulp", "pvtdata.ulp.basis", "pvtdata.mode", "pvtdata.found",
		"pvtdata.offset", "pvtdata.candidates", "pvtdata.valid", "pvtdata.message", "pvtdata.format_identifier",
		"pvtdata.version", "pvtdata.reserved", "pvtdata.remote_invalidation", "pvtdata.send_size.encoded",
		"pvtdata.send_size", "pvtdata.receive_size.encoded", "pvtdata.receive_size", "pvtdata.effective",
		"pvtdata.effective.send_size", "pvtdata.effective.receive_size", "pvtdata.effective.remote_invalidation",
		"pvtdata.reader_divergence"}
	if !reflect.DeepEqual(rec.names, wantOrder) {
		t.Errorf("order\n got %v\nwant %v", rec.names, wantOrder)
	}
	want := map[string]any{
		"pvtdata.length": uint64(56), "pvtdata.ulp": "rpcrdma-v1", "pvtdata.ulp.basis": "format-identifier",
		"pvtdata.mode": "rfc8797", "pvtdata.found": true, "pvtdata.offset": int64(0), "pvtdata.candidates": int64(0),
		"pvtdata.valid": true, "pvtdata.format_identifier": uint64(0xf6ab0e18), "pvtdata.version": uint64(1),
		"pvtdata.reserved": uint64(0), "pvtdata.remote_invalidation": true, "pvtdata.send_size.encoded": uint64(3),
		"pvtdata.send_size": uint64(4096), "pvtdata.receive_size.encoded": uint64(3), "pvtdata.receive_size": uint64(4096),
		"pvtdata.effective.send_size": uint64(4096), "pvtdata.effective.receive_size": uint64(4096),
		"pvtdata.effective.remote_invalidation": true, "pvtdata.reader_divergence": false,
	}
	for k, v := range want {
		if rec.values[k] != v {
			t.Errorf("%s = %#v, want %#v", k, rec.values[k], v)
		}
	}

	// An overrun shows only the octets present, and says so.
	p = Dissect(kernelClient[:6], Hint{}, ModeLinux)
	rec = &recorder{}
	p.VisitFields(rec)
	if _, ok := rec.values["pvtdata.send_size"]; ok || rec.values["pvtdata.overrun"] != true || rec.values["pvtdata.reader_divergence"] != true {
		t.Errorf("overrun visit %v", rec.values)
	}

	// Another ULP: its fields, not the RFC 8797 reading.
	p = Dissect(nvmeReq, Hint{Port: PortNVMeRDMA, Msg: MsgRequest}, ModeRFC8797)
	rec = &recorder{}
	p.VisitFields(rec)
	if _, ok := rec.values["pvtdata.found"]; ok || rec.values["pvtdata.nvme.hrqsize"] != uint64(128) || len(rec.bad) != 0 {
		t.Errorf("nvme visit %v %v", rec.values, rec.bad)
	}
	if fs := p.AppendFindings(nil); len(fs) != 0 {
		t.Errorf("NVMe private data raised RFC 8797 findings: %v", fs)
	}

	// Every declared field is under the proto, with a description.
	for _, f := range Proto.Fields {
		if !strings.HasPrefix(f.Name, "pvtdata.") || f.Desc == "" {
			t.Errorf("field %q (%q)", f.Name, f.Desc)
		}
		if g, ok := field.Lookup(f.Name); !ok || g != f {
			t.Errorf("field %q not registered", f.Name)
		}
	}
}

func TestAllULPFieldsVisit(t *testing.T) {
	for _, c := range []struct {
		buf  []byte
		hint Hint
	}{
		{nvmeRep, Hint{Port: PortNVMeRDMA, Msg: MsgReply}},
		{nvmeRej, Hint{Port: PortNVMeRDMA, Msg: MsgReject}},
		{[]byte{0xc0, 0, 0, 0}, Hint{Port: PortISER}},
		{srpLogin, Hint{}},
		{lustreConnReq(binary.BigEndian), Hint{}},
		{lustreRej, Hint{Msg: MsgReject}},
		{[]byte{0, 0, 0, 16, 0, 0, 0, 1}, Hint{Port: PortSMBDirect}},
	} {
		p := Dissect(c.buf, c.hint, ModeRFC8797)
		rec := &recorder{}
		p.VisitFields(rec)
		if len(rec.bad) != 0 || rec.depth != 0 || len(rec.names) < 5 {
			t.Errorf("%v: %v %v", p.ULP.Kind, rec.names, rec.bad)
		}
	}
}

func TestAppendSummary(t *testing.T) {
	tests := []struct {
		buf  []byte
		hint Hint
		mode Mode
		want string
	}{
		{kernelClient, Hint{}, ModeRFC8797, "pd=RFC8797 v1 R=1 send=4096 recv=4096"},
		{cat(kernelServer, zeros(188)), Hint{Msg: MsgReply}, ModeRFC8797, "pd=RFC8797 v1 R=0 send=4096 recv=4096"},
		{cat(zeros(4), kernelClient), Hint{}, ModeRFC8797, "pd=RFC8797 v1 R=1 send=4096 recv=4096 readers-diverge"},
		{cat(zeros(4), kernelClient), Hint{}, ModeLinux, "pd=RFC8797 not-at-offset-0 readers-diverge"},
		{msg(2, 0, 3, 3), Hint{}, ModeRFC8797, "pd=RFC8797 v2 ignored"},
		{kernelClient[:6], Hint{}, ModeRFC8797, "pd=RFC8797 overrun readers-diverge"},
		{zeros(56), Hint{Port: PortNFSRDMA}, ModeRFC8797, "pd=none"},
		{nvmeReq, Hint{Port: PortNVMeRDMA, Msg: MsgRequest}, ModeRFC8797, "pd=nvmeof"},
		{zeros(56), Hint{}, ModeRFC8797, ""},
		{nil, Hint{}, ModeRFC8797, ""},
		{[]byte{1, 2, 3}, Hint{}, ModeRFC8797, "pd=unknown"},
	}
	for _, tc := range tests {
		p := Dissect(tc.buf, tc.hint, tc.mode)
		if got := string(p.AppendSummary(nil)); got != tc.want {
			t.Errorf("% x (%s): %q, want %q", tc.buf, tc.mode, got, tc.want)
		}
	}
	p := Dissect(kernelClient, Hint{}, ModeRFC8797)
	b := make([]byte, 0, 64)
	var s field.Summarizer = &p
	if n := testing.AllocsPerRun(100, func() { b = s.AppendSummary(b[:0]) }); n != 0 {
		t.Errorf("AppendSummary: %v allocations", n)
	}
}
