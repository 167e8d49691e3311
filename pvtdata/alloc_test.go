package pvtdata

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"
)

// reqULP is the 56 octets of ULP data of the kernel's REQ (after the
// rdma_cm header): the common case on a real fabric.
var reqULP = cat(kernelClient, zeros(48))

func TestReadDoesNotAllocate(t *testing.T) {
	bufs := [][]byte{reqULP, nil, cat(zeros(36), reqULP), msg(2, 0xff, 1, 1)[:5], bytes.Repeat(kernelClient, 20)}
	for _, b := range bufs {
		for _, m := range Modes {
			if n := testing.AllocsPerRun(100, func() { _ = Read(b, m) }); n != 0 {
				t.Errorf("Read(% x, %s): %v allocations", b, m, n)
			}
		}
		if n := testing.AllocsPerRun(100, func() { _ = Dissect(b, Hint{Port: PortNFSRDMA}, ModeRFC8797) }); n != 0 {
			t.Errorf("Dissect: %v allocations", n)
		}
		if n := testing.AllocsPerRun(100, func() { _ = Identify(b, Hint{}) }); n != 0 {
			t.Errorf("Identify: %v allocations", n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = AppendDivergence(nil, reqULP) }); n != 0 {
		t.Errorf("AppendDivergence without divergence: %v allocations", n)
	}
}

func BenchmarkRead(b *testing.B) {
	for _, c := range []struct {
		name string
		buf  []byte
	}{
		{"KernelREQ56", reqULP},
		{"WholeREQ92", cat(zeros(36), reqULP)},
		{"NotFound196", zeros(196)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.buf)))
			for b.Loop() {
				_ = Read(c.buf, ModeRFC8797)
			}
		})
	}
}

func BenchmarkDissect(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Dissect(reqULP, Hint{Port: PortNFSRDMA, Msg: MsgRequest}, ModeRFC8797)
	}
}

// FuzzRead checks, on any buffer, that nothing panics and that the
// invariants of a reading hold in every mode.
func FuzzRead(f *testing.F) {
	for _, s := range [][]byte{kernelClient, kernelServer, reqULP, cat(zeros(36), reqULP), nil,
		msg(2, 0xff, 0, 255), msg(1, 1, 3, 3)[:6], {0x18, 0x0e, 0xab, 0xf6}, bytes.Repeat(kernelClient, 10),
		nvmeReq, srpLogin, lustreRej, lustreConnReq(binary.BigEndian), {0, 0, 0, 16, 0, 0, 0, 1}} {
		f.Add(s, uint16(0), uint8(0))
	}
	f.Add(nvmeRep, uint16(PortNVMeRDMA), uint8(MsgReply))
	f.Add(nvmeRej, uint16(PortNVMeRDMA), uint8(MsgReject))
	f.Add([]byte{0x80, 0, 0, 0}, uint16(PortISER), uint8(MsgRequest))
	f.Fuzz(func(t *testing.T, buf []byte, port uint16, msgKind uint8) {
		hint := Hint{Port: port, Msg: MsgKind(msgKind % 4)}
		for _, m := range Modes {
			r := Read(buf, m)
			if r.Found != (r.Offset >= 0) || (r.Found && r.Offset >= len(buf)) {
				t.Fatalf("%s: found %v offset %d len %d", m, r.Found, r.Offset, len(buf))
			}
			if r.Valid && !r.Found {
				t.Fatalf("%s: valid but not found", m)
			}
			if r.Valid && m != ModeLinux && r.Offset+MessageLen > len(buf) {
				t.Fatalf("%s: valid message overruns", m)
			}
			if r.Found && !bytes.Equal(buf[r.Offset:r.Offset+4], kernelClient[:4]) {
				t.Fatalf("%s: offset %d is not the identifier", m, r.Offset)
			}
			for _, c := range r.Candidates() {
				if !bytes.Equal(buf[c:c+4], kernelClient[:4]) {
					t.Fatalf("candidate %d is not the identifier", c)
				}
			}
			e := r.Effective()
			if e.SendSize < MinSize || e.SendSize > MaxSize || e.ReceiveSize < MinSize || e.ReceiveSize > MaxSize {
				t.Fatalf("effective %+v out of range", e)
			}
			for _, fd := range r.AppendFindings(nil) {
				if fd.Code == "" || fd.Message == "" || fd.Offset >= len(buf)+MessageLen {
					t.Fatalf("finding %+v", fd)
				}
			}
			_ = r.Describe()
		}
		p := Dissect(buf, hint, ModeRFC8797)
		rec := &recorder{}
		p.VisitFields(rec)
		if rec.depth != 0 || len(rec.bad) != 0 {
			t.Fatalf("visit: depth %d %v", rec.depth, rec.bad)
		}
		if _, err := json.Marshal(p.Report()); err != nil {
			t.Fatal(err)
		}
	})
}
