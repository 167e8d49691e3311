package mpa

import (
	"fmt"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// The summaries were written with fmt before they were made to append
// without it; these are those fmt versions, the reference the new ones
// must match octet for octet.

func fmtRDMAPSummary(r *RDMAP) string {
	b := []byte("RDMAP " + r.Opcode.String())
	switch {
	case r.Tagged:
		b = fmt.Appendf(b, " len=%d", len(r.Payload))
	case r.Opcode == OpReadRequest && len(r.Contents) > 0:
		b = fmt.Appendf(b, " size=%d", r.ReadRequest.Size)
	case r.Opcode == OpTerminate && len(r.Contents) > 0:
		b = append(b, ' ')
		b = append(b, r.Terminate.Error()...)
	default:
		b = fmt.Appendf(b, " msn=%d mo=%d len=%d", r.MSN, r.MO, len(r.Payload))
	}
	if r.Opcode.Invalidates() {
		b = fmt.Appendf(b, " inv=0x%08x", r.InvalidateSTag)
	}
	if !r.Last {
		b = append(b, " [more]"...)
	}
	return string(b)
}

func fmtFrameSummary(f *Frame) string {
	b := []byte("MPA " + frameTypeNames[uint64(f.frameType())])
	b = fmt.Appendf(b, " rev=%d M=%d C=%d", f.Revision, boolByte(f.Markers(), 1), boolByte(f.CRC(), 1))
	if f.IRDORD != IRDORDNone {
		b = fmt.Appendf(b, " ird=%d ord=%d", f.IRDValue(), f.ORDValue())
		if f.PeerToPeer() {
			b = append(b, " p2p"...)
		}
	}
	switch {
	case f.PD.Reading.Found:
		m := f.PD.Reading.Message
		b = fmt.Appendf(b, " pd=RFC8797 v%d R=%d send=%d recv=%d", m.Version, boolByte(m.RemoteInvalidation(), 1), m.SendBytes(), m.ReceiveBytes())
	case len(f.ULPData) > 0:
		b = append(b, " pd="...)
		b = append(b, f.PD.ULP.Kind.String()...)
	}
	return string(b)
}

func TestSummariesMatchFmt(t *testing.T) {
	for op := 0; op < 20; op++ {
		for _, tagged := range []bool{false, true} {
			for _, last := range []bool{false, true} {
				for _, contents := range [][]byte{nil, make([]byte, 28)} {
					r := &RDMAP{Opcode: Opcode(op), Tagged: tagged, Last: last, MSN: uint32(op) * 77, MO: uint32(op) << 12,
						InvalidateSTag: 0x0000ab00 | uint32(op), ReadRequest: ReadRequest{Size: uint32(op) * 4096}}
					r.Contents, r.Payload = contents, make([]byte, op*3)
					if got, want := string(r.AppendSummary(nil)), fmtRDMAPSummary(r); got != want {
						t.Fatalf("RDMAP %+v: %q, want %q", r, got, want)
					}
				}
			}
		}
	}
	for _, st := range []CRCStatus{0, 1, 2, 3, 4, 9} {
		f := &FPDU{CRCStatus: st}
		want := ""
		if st != CRCStatusNotNegotiated {
			want = "FPDU crc=" + st.String()
		}
		if got := string(f.AppendSummary(nil)); got != want {
			t.Errorf("FPDU %v: %q, want %q", st, got, want)
		}
	}
	for kind := FrameKind(0); kind <= 3; kind++ {
		for _, flags := range []uint8{0, 0xff, FlagMarkers, FlagCRC} {
			for _, irdord := range []IRDORDFormat{IRDORDNone, IRDORDNone + 1} {
				for _, found := range []bool{false, true} {
					f := &Frame{Kind: kind, Flags: flags, Revision: flags & 3, IRDORD: irdord, IRD: 0xc0ff, ORD: 0x8010}
					f.PD.Reading.Found = found
					f.PD.Reading.Message = pvtdata.Message{Version: 1, Flags: flags & 1, SendSize: 3, RecvSize: 255}
					if flags != 0 {
						f.ULPData = []byte{1, 2}
					}
					if got, want := string(f.AppendSummary(nil)), fmtFrameSummary(f); got != want {
						t.Fatalf("Frame %+v: %q, want %q", f, got, want)
					}
				}
			}
		}
	}
}
