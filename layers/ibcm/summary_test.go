package ibcm

import (
	"fmt"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// The summaries were written with fmt before they were made to append
// without it; these are those fmt versions, the reference the new ones
// must match octet for octet.

func fmtBTHSummary(b *BTH) string {
	s := fmt.Sprintf("%s qp=0x%06x psn=%d", b.OpCode, b.DestQP, b.PSN)
	if b.ICRCStatus == CRCBad {
		s += " [BAD ICRC]"
	}
	return s
}

func fmtAETHSummary(a *AETH) string {
	switch a.Type() {
	case AETHNak:
		name, ok := aethNakNames[uint64(a.Value())]
		if !ok {
			name = fmt.Sprintf("code %d", a.Value())
		}
		return fmt.Sprintf("NAK %s msn=%d", name, a.MSN)
	case AETHRNRNak:
		return fmt.Sprintf("RNR NAK timer=%d msn=%d", a.Value(), a.MSN)
	}
	return fmt.Sprintf("%s msn=%d", aethTypeNames[uint64(a.Type())], a.MSN)
}

func fmtCMSummary(c *CM) string {
	b := []byte("CM " + c.Name())
	switch c.AttributeID {
	case AttrClassPortInfo:
		if n, ok := madMethodNames[uint64(c.Method)]; ok {
			b = fmt.Appendf(b, " %s", n)
		}
	case AttrREQ:
		b = fmt.Appendf(b, " svc=%s qpn=0x%06x", c.REQ.ServiceID, c.REQ.LocalQPN)
	case AttrREP:
		b = fmt.Appendf(b, " qpn=0x%06x", c.REP.LocalQPN)
	case AttrREJ:
		b = fmt.Appendf(b, " reason=%d %s", c.REJ.Reason, RejectReasonName(c.REJ.Reason))
	case AttrMRA:
		b = fmt.Appendf(b, " of=%s timeout=%d", mraNames[uint64(c.MRA.MessageMRAed)], c.MRA.ServiceTimeout)
	case AttrDREQ:
		b = fmt.Appendf(b, " qpn=0x%06x", c.DREQ.RemoteQPN)
	case AttrSIDRReq:
		b = fmt.Appendf(b, " svc=%s", c.SIDRReq.ServiceID)
	case AttrSIDRRep:
		b = fmt.Appendf(b, " status=%s qpn=0x%06x", sidrStatusNames[uint64(c.SIDRRep.Status)], c.SIDRRep.QPN)
	case AttrAPR:
		b = fmt.Appendf(b, " status=%s", aprStatusNames[uint64(c.APR.Status)])
	case AttrLAP:
		b = fmt.Appendf(b, " qpn=0x%06x", c.LAP.RemoteQPN)
	}
	if c.AttributeID != AttrClassPortInfo {
		if c.PD.Reading.Valid {
			m := c.PD.Reading.Message
			b = fmt.Appendf(b, " pd=RFC8797 v%d R=%d send=%d recv=%d", m.Version, b2u(m.RemoteInvalidation()), m.SendBytes(), m.ReceiveBytes())
		} else if c.PD.ULP.Kind.Other() {
			b = append(b, " pd="...)
			b = append(b, c.PD.ULP.Kind.String()...)
		}
	}
	return string(b)
}

func TestSummariesMatchFmt(t *testing.T) {
	for o := 0; o < 256; o++ {
		if got, want := summaryNames[o], Opcode(o).String(); got != want {
			t.Errorf("opcode 0x%02x: %q, want %q", o, got, want)
		}
		for _, qp := range []uint32{0, 1, 0x12, 0xabcdef, 0xffffff, 0x1000000, 0xffffffff} {
			for _, st := range []CRCStatus{CRCGood, CRCBad} {
				b := &BTH{OpCode: Opcode(o), DestQP: qp, PSN: qp ^ 0x5a5a5a, ICRCStatus: st}
				if got, want := string(b.AppendSummary(nil)), fmtBTHSummary(b); got != want {
					t.Fatalf("BTH %+v: %q, want %q", b, got, want)
				}
			}
		}
	}
	for syn := 0; syn < 256; syn++ {
		a := &AETH{Syndrome: uint8(syn), MSN: uint32(syn) * 65537}
		if got, want := string(a.AppendSummary([]byte{})), fmtAETHSummary(a); got != want {
			t.Errorf("AETH syndrome 0x%02x: %q, want %q", syn, got, want)
		}
	}
	svcs := []ServiceID{0x0000000001064e51, 0x0000000001060cbc, 0x0000000001061234, 0x000000000111abcd,
		0x00000000013f0001, 0x0000000001220001, 0x1000000001064e51, 0xffffffffffffffff, 0}
	attrs := []uint16{AttrClassPortInfo, AttrREQ, AttrMRA, AttrREJ, AttrREP, AttrRTU, AttrDREQ, AttrDREP,
		AttrSIDRReq, AttrSIDRRep, AttrLAP, AttrAPR, 0x0099}
	pds := []pvtdata.PrivateData{{}, pdWith(true, 1, 1, 3, 3), pdWith(true, 2, 0, 0, 255), pdWith(false, 1, 1, 3, 3)}
	for _, attr := range attrs {
		for i, svc := range svcs {
			for j, pd := range pds {
				v := uint32(i*0x123457 + j)
				c := &CM{AttributeID: attr, Method: uint8(i), PD: pd}
				c.REQ.ServiceID, c.REQ.LocalQPN = svc, v
				c.SIDRReq.ServiceID = svc
				c.REP.LocalQPN, c.DREQ.RemoteQPN, c.LAP.RemoteQPN, c.SIDRRep.QPN = v>>1, v>>2, v>>3, v
				c.REJ.Reason = uint16(i*4 + j)
				c.MRA.MessageMRAed, c.MRA.ServiceTimeout = uint8(i%5), uint8(v)
				c.SIDRRep.Status, c.APR.Status = uint8(i), uint8(j*3)
				if got, want := string(c.AppendSummary(nil)), fmtCMSummary(c); got != want {
					t.Fatalf("CM 0x%04x svc %v pd %d: %q, want %q", attr, svc, j, got, want)
				}
			}
		}
	}
}

func pdWith(valid bool, version, flags, send, recv uint8) pvtdata.PrivateData {
	var pd pvtdata.PrivateData
	pd.Reading.Valid = valid
	pd.Reading.Message = pvtdata.Message{Version: version, Flags: flags, SendSize: send, RecvSize: recv}
	return pd
}
