package rpcrdma

import (
	"testing"

	"github.com/gopacket/gopacket"
)

// xb builds XDR for the operation tables below.
type xb []byte

func (b xb) u(vs ...uint32) xb {
	for _, v := range vs {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return b
}
func (b xb) z(n int) xb { return append(b, make([]byte, n)...) }
func (b xb) o(s string) xb {
	b = b.u(uint32(len(s)))
	b = append(b, s...)
	return b.z(pad4(len(s)) - len(s))
}
func (b xb) bm(words ...uint32) xb { return b.u(uint32(len(words))).u(words...) }
func (b xb) fattr() xb             { return b.bm(0x18, 0x2).o("attrvals") } // bitmap + attrlist
func (b xb) owner() xb             { return b.z(8).o("owner") }

// Every operation's arguments are walked to reach the next operation.
func TestNFSv4ArgsWalked(t *testing.T) {
	args := map[uint32]xb{
		3: xb{}.u(0x3f), 4: xb{}.z(20), 5: xb{}.z(12), 6: xb{}.u(5).o("target").o("link").fattr(),
		7: xb{}.z(8), 8: xb{}.z(16), 9: xb{}.bm(1, 2), 10: {}, 11: xb{}.o("new"),
		12: xb{}.z(24).u(1).z(24).owner(), 13: xb{}.z(20).owner(), 14: xb{}.z(40), 15: xb{}.o("dir"), 16: {},
		17: xb{}.fattr(), 18: xb{}.z(12).owner().u(1, 1).fattr().u(0).o("file"), 19: xb{}.u(0), 20: xb{}.z(20),
		21: xb{}.z(28), 22: xb{}.o("fh-bytes"), 23: {}, 24: {}, 25: xb{}.z(28), 26: xb{}.z(24).bm(0x18),
		27: {}, 28: xb{}.o("gone"), 29: xb{}.o("a").o("b"), 30: xb{}.z(8), 31: {}, 32: {}, 33: xb{}.o("name"),
		34: xb{}.z(16).fattr(), 35: xb{}.z(8).o("id").u(0x40000000).o("tcp").o("1.2.3.4.8.1").u(1), 36: xb{}.z(16),
		37: xb{}.fattr(), 38: xb{}.z(28).o("data"), 39: xb{}.owner(),
		40: xb{}.u(0x40000000, 2, AuthNone, AuthSys).u(0).o("m").u(0, 0).u(1, 5),
		41: xb{}.z(24), 42: xb{}.z(8).o("owner").u(0x1, 1).bm(1).bm(2).u(1).o("kernel.org").o("Linux").z(12),
		43: xb{}.z(16).z(24).u(0).z(24).u(1, 0).u(0x40000000).u(1, RPCSecGSS, 1).o("s").o("c"),
		44: xb{}.z(16), 45: xb{}.z(16), 46: xb{}.u(0).bm(1).z(24).bm().bm(3), 47: xb{}.z(24).bm(1), 48: xb{}.z(24),
		49: xb{}.z(36).u(1).z(8).u(1).z(12).u(1).o("upd"), 50: xb{}.z(56), 51: xb{}.z(12).u(1).z(32).o("body"),
		52: xb{}.u(0), 53: xb{}.z(32), 54: xb{}.o("ssv").o("digest"), 55: xb{}.u(2).z(32), 56: xb{}.u(1, 1).u(0),
		57: xb{}.z(8), 58: xb{}.u(0), 59: xb{}.z(32), 60: xb{}.z(64).u(2).u(1).o("host").u(3).o("tcp").o("addr"),
		61: xb{}.z(16).u(2).o("url"), 62: xb{}.z(32), 63: xb{}.z(32).bm(1), 64: xb{}.z(32).u(1).z(24),
		65: xb{}.z(80).u(1).o("stats"), 66: xb{}.z(16), 67: xb{}.z(16), 68: xb{}.z(28), 69: xb{}.z(28), 71: xb{}.z(56),
		72: xb{}.o("user.a"), 73: xb{}.u(0).o("user.a").o("v"), 74: xb{}.z(12), 75: xb{}.o("user.a"),
	}
	for op, a := range args {
		body := xb{}.u(0, 2, 2, op)
		body = append(body, a...)
		body = body.u(24)
		var n NFS
		if err := n.DecodeBody(ProgNFS, 4, 1, false, body, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%s: %v", OpName(op), err)
		}
		if len(n.Ops) != 2 || n.Ops[1].Opcode != 24 || n.Undecoded != 0 {
			t.Errorf("%s: arguments not walked: ops %+v, %d undecoded", OpName(op), n.Ops, n.Undecoded)
		}
	}
}

// Every operation's results (status OK, and the error results that carry
// data) are walked to reach the next operation.
func TestNFSv4ResultsWalked(t *testing.T) {
	type res struct {
		op, status uint32
		b          xb
	}
	cinfo := xb{}.z(20)
	results := []res{
		{3, 0, xb{}.z(8)}, {4, 0, xb{}.z(16)}, {5, 0, xb{}.z(8)}, {6, 0, cinfo.bm(1)}, {7, 0, nil}, {8, 0, nil},
		{9, 0, xb{}.fattr()}, {10, 0, xb{}.o("fh")}, {11, 0, cinfo}, {12, 0, xb{}.z(16)}, {12, 10010, xb{}.z(20).owner()},
		{13, 10010, xb{}.z(20).owner()}, {14, 0, xb{}.z(16)}, {15, 0, nil}, {18, 0, xb{}.z(40).bm(1).u(1).z(20).u(0, 0, 0).o("OWNER@")},
		{18, 0, xb{}.z(40).bm().u(2).z(20).u(1).z(8).u(0, 0, 0).o("OWNER@")}, {18, 0, xb{}.z(40).bm().u(3, 7, 1)},
		{18, 0, xb{}.z(40).bm().u(0)}, {20, 0, xb{}.z(16)}, {21, 0, xb{}.z(16)}, {22, 0, nil}, {25, 0, xb{}.u(1).o("data")},
		{26, 0, xb{}.z(8).u(1).z(8).o("a").fattr().u(1).z(8).o("b").fattr().u(0, 1)}, {27, 0, xb{}.o("/target")},
		{28, 0, cinfo}, {29, 0, cinfo.z(20)}, {33, 0, xb{}.u(2, AuthSys, RPCSecGSS).o("oid").u(0, 1)},
		{34, 0, xb{}.bm(1)}, {34, 13, xb{}.bm()}, {35, 0, xb{}.z(16)}, {35, 10017, xb{}.o("tcp").o("addr")},
		{38, 0, xb{}.z(16)}, {41, 0, xb{}.z(24)},
		{42, 0, xb{}.z(16).u(2).bm(1).bm(2).z(16).u(1).o("h").z(8).o("major").o("scope").u(1).o("d").o("n").z(12)},
		{43, 0, xb{}.z(24).z(24).u(0).z(24).u(1, 0)}, {44, 0, nil}, {45, 0, nil}, {47, 0, xb{}.u(1).o("addr").bm()},
		{47, 10005, xb{}.u(4096)}, {48, 0, xb{}.z(16).u(1).z(16).u(1)}, {49, 0, xb{}.u(1).z(8)},
		{50, 0, xb{}.z(20).u(1).z(24).o("layout")}, {50, 10058, xb{}.u(1)}, {51, 0, xb{}.u(1).z(16)}, {52, 0, xb{}.u(1, AuthSys)},
		{53, 0, xb{}.z(36)}, {54, 0, xb{}.o("d")}, {55, 0, xb{}.u(2, 0, 0)}, {56, 0, xb{}.u(0)}, {57, 0, nil}, {58, 0, nil},
		{60, 0, xb{}.u(1).z(16).z(20).z(8)}, {60, 10094, xb{}.z(8)}, {61, 0, xb{}.z(28).u(1, 1).o("h")}, {63, 0, xb{}.bm(1)},
		{67, 0, xb{}.z(8).u(1, 0)}, {68, 0, xb{}.u(1, 2, 0).z(8).o("d").u(1).z(16)}, {69, 0, xb{}.z(12)},
		{72, 0, xb{}.o("v")}, {73, 0, cinfo}, {74, 0, xb{}.z(8).u(2).o("user.a").o("user.b").u(1)}, {75, 0, cinfo},
		{22, 70, nil}, // an error status: no result body
	}
	for _, r := range results {
		body := xb{}.u(0, 0, 2, r.op, r.status)
		body = append(body, r.b...)
		body = body.u(24, 0)
		var n NFS
		if err := n.DecodeBody(ProgNFS, 4, 1, true, body, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%s: %v", OpName(r.op), err)
		}
		if len(n.Ops) != 2 || n.Ops[1].Opcode != 24 || n.Undecoded != 0 {
			t.Errorf("%s status %d: result not walked: ops %+v, %d undecoded", OpName(r.op), r.status, n.Ops, n.Undecoded)
		}
	}
}
