package ibcm_test

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// fieldValues collects the values visited, by field name (first value).
type fieldValues map[string]any

func (f fieldValues) set(fl *field.Field, v any) {
	if _, ok := f[fl.Name]; !ok {
		f[fl.Name] = v
	}
}
func (f fieldValues) Uint(fl *field.Field, v uint64)     { f.set(fl, v) }
func (f fieldValues) Int(fl *field.Field, v int64)       { f.set(fl, v) }
func (f fieldValues) Bool(fl *field.Field, v bool)       { f.set(fl, v) }
func (f fieldValues) String(fl *field.Field, v string)   { f.set(fl, v) }
func (f fieldValues) Bytes(fl *field.Field, v []byte)    { f.set(fl, bytes.Clone(v)) }
func (f fieldValues) Addr(fl *field.Field, v netip.Addr) { f.set(fl, v) }
func (f fieldValues) Begin(*field.Field)                 {}
func (f fieldValues) End()                               {}

func decode(t *testing.T, enc ibcmtest.Encoding, p ibcmtest.Packet) gopacket.Packet {
	t.Helper()
	pkt := gopacket.NewPacket(p.Frame, enc.LinkType(), gopacket.Default)
	if el := pkt.ErrorLayer(); el != nil {
		t.Fatalf("%s %s: %v", enc, p.Name, el.Error())
	}
	return pkt
}

func findings(pkt gopacket.Packet) []finding.Finding {
	var out []finding.Finding
	for _, l := range pkt.Layers() {
		if a, ok := l.(interface {
			AppendFindings([]finding.Finding) []finding.Finding
		}); ok {
			out = a.AppendFindings(out)
		}
	}
	return out
}

func TestEveryCMMessageInEveryEncoding(t *testing.T) {
	wantNames := []string{"ClassPortInfo", "ClassPortInfo", "REQ", "MRA", "REP", "RTU", "LAP", "MRA", "APR", "DREQ", "DREP", "REQ", "REJ", "SIDR_REQ", "SIDR_REP"}
	for _, enc := range ibcmtest.Encodings {
		t.Run(enc.String(), func(t *testing.T) {
			pkts, err := ibcmtest.CMExchange(enc)
			if err != nil {
				t.Fatal(err)
			}
			if len(pkts) != len(wantNames) {
				t.Fatalf("%d packets", len(pkts))
			}
			for i, p := range pkts {
				pkt := decode(t, enc, p)
				cm, ok := pkt.Layer(ibcm.LayerTypeCM).(*ibcm.CM)
				if !ok {
					t.Fatalf("%s: no CM layer in %v", p.Name, pkt.Layers())
				}
				if cm.Name() != wantNames[i] {
					t.Errorf("%s decoded as %s", p.Name, cm.Name())
				}
				bth := pkt.Layer(ibcm.LayerTypeBTH).(*ibcm.BTH)
				if bth.ICRCStatus != ibcm.CRCGood {
					t.Errorf("%s: ICRC %s (0x%08x, computed 0x%08x)", p.Name, bth.ICRCStatus, bth.ICRC, bth.ICRCComputed)
				}
				if lrh, ok := pkt.Layer(ibcm.LayerTypeLRH).(*ibcm.LRH); ok && lrh.VCRCStatus != ibcm.CRCGood {
					t.Errorf("%s: VCRC %s", p.Name, lrh.VCRCStatus)
				}
				for _, f := range findings(pkt) {
					if f.Severity >= finding.SeverityWarning {
						t.Errorf("%s: unexpected finding %s", p.Name, f)
					}
				}
				switch cm.AttributeID {
				case ibcm.AttrREQ:
					if !cm.HasIPCM || !bytes.Equal(cm.ULPData[:8], ibcmtest.ClientPrivateData) || !cm.PD.Reading.Valid {
						t.Errorf("REQ: ipcm=%v ulp=% x valid=%v", cm.HasIPCM, cm.ULPData[:8], cm.PD.Reading.Valid)
					}
					want := ibcmtest.REQ(enc)
					if p.Name == "REQ (rejected)" {
						want.REQ.LocalCommID++
					}
					if cm.REQ != want.REQ {
						t.Errorf("REQ round trip:\n got %+v\nwant %+v", cm.REQ, want.REQ)
					}
				case ibcm.AttrREP:
					if !bytes.Equal(cm.PrivateData[:8], ibcmtest.ServerPrivateData) || cm.REP.VendorID != 0x0002c9 {
						t.Errorf("REP: % x vendor 0x%x", cm.PrivateData[:8], cm.REP.VendorID)
					}
				case ibcm.AttrSIDRReq:
					if !cm.HasIPCM || string(cm.ULPData[:8]) != "ud-hello" {
						t.Errorf("SIDR_REQ: ipcm=%v ulp=%q", cm.HasIPCM, cm.ULPData[:8])
					}
				case ibcm.AttrLAP:
					if cm.LAP.Alternate.FlowLabel != 0x12345 || cm.LAP.Alternate.SL != 3 || cm.LAP.Alternate.TrafficClass != 0x20 {
						t.Errorf("LAP path %+v", cm.LAP.Alternate)
					}
				case ibcm.AttrClassPortInfo:
					if i == 1 && (cm.ClassPortInfo.RespTimeValue != 18 || cm.ClassPortInfo.TrapQKey != ibcm.GSIQKey) {
						t.Errorf("ClassPortInfo %+v", cm.ClassPortInfo)
					}
				}
				if s := string(cm.AppendSummary(nil)); !strings.HasPrefix(s, "CM "+cm.Name()) {
					t.Errorf("summary %q", s)
				}
			}
		})
	}
}

func TestRejectReasonsAndARI(t *testing.T) {
	pkts, err := ibcmtest.Rejects(ibcmtest.RoCEv2IPv4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"REJ reason 12": "cm.rej.ari.gid", "REJ reason 13": "cm.rej.ari.lid", "REJ reason 14": "cm.rej.ari.sl",
		"REJ reason 15": "cm.rej.ari.tclass", "REJ reason 16": "cm.rej.ari.hoplimit", "REJ reason 17": "cm.rej.ari.pktrate",
		"REJ reason 24": "cm.rej.ari.cpi.redirectqp", "REJ reason 26": "cm.rej.ari.mtu", "REJ reason 27": "cm.rej.ari.respres",
		"REJ reason 28": "cm.rej.ari.consumer", "REJ reason 29": "cm.rej.ari.rnrretry", "REJ reason 31": "cm.rej.ari.classversion",
		"REJ reason 32": "cm.rej.ari.flowlabel", "REJ reason 4": "cm.rej.ari.caguid",
		"SIDR_REP redirect": "cm.sidr_rep.cpi.redirectqp", "APR redirect": "cm.apr.cpi.redirectqp",
	}
	values := map[string]uint64{"cm.rej.ari.lid": 7, "cm.rej.ari.sl": 3, "cm.rej.ari.pktrate": 16, "cm.rej.ari.mtu": 3,
		"cm.rej.ari.rnrretry": 3, "cm.rej.ari.flowlabel": 0x12345, "cm.rej.ari.cpi.redirectqp": 0x99,
		"cm.rej.ari.caguid": 0x0002c9030000aa01}
	for _, p := range pkts {
		pkt := decode(t, ibcmtest.RoCEv2IPv4, p)
		cm := pkt.Layer(ibcm.LayerTypeCM).(*ibcm.CM)
		fv := fieldValues{}
		cm.VisitFields(fv)
		if cm.AttributeID == ibcm.AttrREJ {
			if ibcm.RejectReasonName(cm.REJ.Reason) == "" || strings.HasPrefix(ibcm.RejectReasonName(cm.REJ.Reason), "reason ") {
				t.Errorf("%s: no name", p.Name)
			}
			if fv["cm.rej.reason"] != uint64(cm.REJ.Reason) {
				t.Errorf("%s: reason field %v", p.Name, fv["cm.rej.reason"])
			}
		}
		if f, ok := want[p.Name]; ok {
			v, present := fv[f]
			if !present {
				t.Errorf("%s: no %s", p.Name, f)
			} else if w, ok := values[f]; ok && v != w {
				t.Errorf("%s: %s = %v, want %v", p.Name, f, v, w)
			}
		}
		if p.Name == "REJ reason 28" && cm.PD.ULP.Kind == pvtdata.ULPRPCRDMA {
			t.Errorf("REJ 28 NVMe-oF private data labelled %s", cm.PD.ULP.Kind)
		}
	}
}

func TestRCTrafficChains(t *testing.T) {
	pkts, err := ibcmtest.RCTraffic(ibcmtest.RoCEv2IPv4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]gopacket.LayerType{
		"RC SEND_ONLY":                      {ibcm.LayerTypeBTH, gopacket.LayerTypePayload},
		"RC SEND_ONLY padded":               {ibcm.LayerTypeBTH, gopacket.LayerTypePayload},
		"RC SEND_ONLY_WITH_INVALIDATE":      {ibcm.LayerTypeBTH, ibcm.LayerTypeIETH, gopacket.LayerTypePayload},
		"RC RDMA_WRITE_ONLY_WITH_IMMEDIATE": {ibcm.LayerTypeBTH, ibcm.LayerTypeRETH, ibcm.LayerTypeImmDt, gopacket.LayerTypePayload},
		"RC RDMA_READ_REQUEST":              {ibcm.LayerTypeBTH, ibcm.LayerTypeRETH},
		"RC RDMA_READ_RESPONSE_ONLY":        {ibcm.LayerTypeBTH, ibcm.LayerTypeAETH, gopacket.LayerTypePayload},
		"RC ACK":                            {ibcm.LayerTypeBTH, ibcm.LayerTypeAETH},
		"RC NAK":                            {ibcm.LayerTypeBTH, ibcm.LayerTypeAETH},
		"RC COMPARE_SWAP":                   {ibcm.LayerTypeBTH, ibcm.LayerTypeAtomicETH},
		"RC ATOMIC_ACKNOWLEDGE":             {ibcm.LayerTypeBTH, ibcm.LayerTypeAETH, ibcm.LayerTypeAtomicAckETH},
		"UD SEND_ONLY_WITH_IMMEDIATE":       {ibcm.LayerTypeBTH, ibcm.LayerTypeDETH, ibcm.LayerTypeImmDt, gopacket.LayerTypePayload},
		"CNP":                               {ibcm.LayerTypeBTH, gopacket.LayerTypePayload},
	}
	for _, p := range pkts {
		pkt := decode(t, ibcmtest.RoCEv2IPv4, p)
		var got []gopacket.LayerType
		for _, l := range pkt.Layers()[3:] { // after Ethernet, IPv4, UDP
			got = append(got, l.LayerType())
		}
		w := want[p.Name]
		if len(got) != len(w) {
			t.Errorf("%s: layers %v, want %v", p.Name, got, w)
			continue
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s: layers %v, want %v", p.Name, got, w)
			}
		}
		bth := pkt.Layer(ibcm.LayerTypeBTH).(*ibcm.BTH)
		if bth.ICRCStatus != ibcm.CRCGood {
			t.Errorf("%s: ICRC %s", p.Name, bth.ICRCStatus)
		}
		if p.Name == "RC SEND_ONLY padded" {
			if bth.PadCnt != 3 || string(pkt.ApplicationLayer().Payload()) != "hello" {
				t.Errorf("padded SEND: padcnt %d payload %q", bth.PadCnt, pkt.ApplicationLayer().Payload())
			}
		}
	}
}

func TestBadCRCs(t *testing.T) {
	for _, enc := range ibcmtest.Encodings {
		pkts, err := ibcmtest.CMExchange(enc)
		if err != nil {
			t.Fatal(err)
		}
		bad := ibcmtest.Packet{Name: "REQ bad ICRC", Frame: ibcmtest.CorruptICRC(enc, pkts[2].Frame)}
		pkt := decode(t, enc, bad)
		bth := pkt.Layer(ibcm.LayerTypeBTH).(*ibcm.BTH)
		if bth.ICRCStatus != ibcm.CRCBad {
			t.Errorf("%s: corrupted ICRC judged %s", enc, bth.ICRCStatus)
		}
		if lrh, ok := pkt.Layer(ibcm.LayerTypeLRH).(*ibcm.LRH); ok && lrh.VCRCStatus != ibcm.CRCGood {
			t.Errorf("%s: VCRC %s after ICRC corruption (VCRC was recomputed)", enc, lrh.VCRCStatus)
		}
		if !finding.Has(findings(pkt), ibcm.CodeICRCBad) {
			t.Errorf("%s: no %s finding", enc, ibcm.CodeICRCBad)
		}
		if enc == ibcmtest.IBLocal || enc == ibcmtest.IBGlobal || enc == ibcmtest.ERF {
			pkt := decode(t, enc, ibcmtest.Packet{Name: "REQ bad VCRC", Frame: ibcmtest.CorruptVCRC(pkts[2].Frame)})
			lrh := pkt.Layer(ibcm.LayerTypeLRH).(*ibcm.LRH)
			if lrh.VCRCStatus != ibcm.CRCBad || !finding.Has(findings(pkt), ibcm.CodeVCRCBad) {
				t.Errorf("%s: corrupted VCRC judged %s", enc, lrh.VCRCStatus)
			}
			if pkt.Layer(ibcm.LayerTypeBTH).(*ibcm.BTH).ICRCStatus != ibcm.CRCGood {
				t.Errorf("%s: ICRC bad after VCRC corruption", enc)
			}
		}
	}
}

func TestOtherULPLabels(t *testing.T) {
	cases := ibcmtest.ULPCases()
	pkts, err := ibcmtest.ULPRequests(ibcmtest.RoCEv2IPv4)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pkts {
		cm := decode(t, ibcmtest.RoCEv2IPv4, p).Layer(ibcm.LayerTypeCM).(*ibcm.CM)
		if cm.PD.ULP.Kind != cases[i].Want {
			t.Errorf("%s: labelled %s, want %s", p.Name, cm.PD.ULP.Kind, cases[i].Want)
		}
		if !cm.HasIPCM || cm.REQ.ServiceID.Port() != cases[i].Port {
			t.Errorf("%s: ipcm %v port %d", p.Name, cm.HasIPCM, cm.REQ.ServiceID.Port())
		}
		if s := string(cm.AppendSummary(nil)); cases[i].Want.Other() && !strings.Contains(s, "pd="+cases[i].Want.String()) {
			t.Errorf("%s: summary %q", p.Name, s)
		}
	}
}
