package ibcm

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// realREQ returns the real capture's first frame (the CM REQ) and the
// offsets of its IB layers.
func realREQ(t *testing.T) (frame []byte, bth, deth, mad, cm int) {
	frames := testcap.Data(t, testcap.RXE)
	return frames[0], 42, 54, 62, 86
}

// TestTruncation cuts each layer of the real REQ short and checks the error
// names the layer, the field and the offset, and that the decoder set the
// truncated flag.
func TestTruncation(t *testing.T) {
	frame, bthOff, dethOff, madOff, cmOff := realREQ(t)
	frames := testcap.Data(t, testcap.RXE)
	ack := frames[4][42:] // RC ACKNOWLEDGE: BTH, AETH, ICRC
	cases := []struct {
		name      string
		layer     decodingLayer
		data      []byte
		wantLayer string
		wantField string
		wantOff   int
	}{
		{"BTH 11 octets", &BTH{}, frame[bthOff : bthOff+11], "BTH", "header", 0},
		{"DETH 7 octets", &DETH{}, frame[dethOff : dethOff+7], "DETH", "header", 0},
		{"AETH 3 octets", &AETH{}, ack[12:15], "AETH", "header", 0},
		{"RETH 15 octets", &RETH{}, make([]byte, 15), "RETH", "header", 0},
		{"IETH 2 octets", &IETH{}, make([]byte, 2), "IETH", "R_Key", 0},
		{"ImmDt 3 octets", &ImmDt{}, make([]byte, 3), "ImmDt", "immediate data", 0},
		{"AtomicETH 27", &AtomicETH{}, make([]byte, 27), "AtomicETH", "header", 0},
		{"AtomicAckETH 7", &AtomicAckETH{}, make([]byte, 7), "AtomicAckETH", "original remote data", 0},
		{"MAD 23 octets", &MAD{}, frame[madOff : madOff+23], "MAD", "common header", 0},
		{"REQ 139 octets", NewCM(&MAD{AttributeID: AttrREQ, Method: MethodSend}), frame[cmOff : cmOff+139], "REQ", "fixed fields", 0},
		{"LRH 7 octets", &LRH{}, make([]byte, 7), "LRH", "header", 0},
		{"GRH 39 octets", &GRH{}, make([]byte, 39), "GRH", "header", 0},
		{"ERF 15 octets", &ERF{}, make([]byte, 15), "ERF", "header", 0},
		{"ERF extension cut", &ERF{}, append([]byte{7: 0, 8: 0x95, 15: 0}, 0x80, 0, 0), "ERF", "extension header", 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			df := new(testcap.TruncFlag)
			err := c.layer.DecodeFromBytes(c.data, df)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v, want a *DecodeError", err)
			}
			if de.Layer != c.wantLayer || de.Field != c.wantField || de.Offset != c.wantOff || de.Have >= de.Need {
				t.Fatalf("error %+v (%q)", de, err)
			}
			if !strings.Contains(err.Error(), c.wantLayer+": "+c.wantField) {
				t.Fatalf("message %q", err)
			}
			if !*df {
				t.Fatal("SetTruncated not called")
			}
		})
	}
}

// TestShortPrivateData: a REQ cut inside its private data decodes with an
// ibcm.truncated finding; the RFC 8797 message is still found.
func TestShortPrivateData(t *testing.T) {
	frame, _, _, _, cmOff := realREQ(t)
	c := NewCM(&MAD{AttributeID: AttrREQ, Method: MethodSend})
	if err := c.DecodeFromBytes(frame[cmOff:cmOff+140+36+8], gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if len(c.PrivateData) != 44 || !c.PD.Reading.Valid {
		t.Fatalf("private data %d octets, reading %+v", len(c.PrivateData), c.PD.Reading)
	}
	fs := c.AppendFindings(nil)
	if !finding.Has(fs, CodeTruncated) {
		t.Fatalf("findings %v", fs)
	}
}

// TestFindings checks the conditions each finding code reports, starting
// from the real REQ and changing one thing.
func TestFindings(t *testing.T) {
	orig, bthOff, _, madOff, cmOff := realREQ(t)
	cases := []struct {
		name   string
		mutate func(b []byte)
		code   string
		layer  gopacket.LayerType
	}{
		{"bad ICRC", func(b []byte) { b[len(b)-1] ^= 1 }, CodeICRCBad, LayerTypeBTH},
		{"BTH TVer 1", func(b []byte) { b[bthOff+1] |= 1 }, CodeBadTVer, LayerTypeBTH},
		{"BTH reserved7", func(b []byte) { b[bthOff+8] |= 0x01 }, CodeReservedBits, LayerTypeBTH},
		{"MAD base version 2", func(b []byte) { b[madOff] = 2 }, CodeMADBaseVersion, LayerTypeMAD},
		{"CM class version 1", func(b []byte) { b[madOff+2] = 1 }, CodeMADClassVersion, LayerTypeMAD},
		{"MAD reserved", func(b []byte) { b[madOff+19] = 1 }, CodeReservedBits, LayerTypeMAD},
		{"unknown attribute", func(b []byte) { b[madOff+17] = 0x33 }, CodeUnknownAttribute, LayerTypeCM},
		{"REQ sent with Get", func(b []byte) { b[madOff+3] = MethodGet }, CodeUnknownMethod, LayerTypeCM},
		{"REQ reserved octet 4", func(b []byte) { b[cmOff+4] = 1 }, CodeReservedBits, LayerTypeCM},
		{"IP CM version 1", func(b []byte) { b[cmOff+140] = 0x10 }, CodeIPCMInvalid, LayerTypeCM},
		{"RFC 8797 reserved bits", func(b []byte) { b[cmOff+140+36+5] |= 0x80 }, pvtdata.CodeReservedBits, LayerTypeCM},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			c.mutate(b)
			p := gopacket.NewPacket(b, layers.LinkTypeEthernet, gopacket.Default)
			l := p.Layer(c.layer)
			if l == nil {
				t.Fatalf("no %v layer: %v", c.layer, p.Layers())
			}
			fs := l.(interface {
				AppendFindings([]finding.Finding) []finding.Finding
			}).AppendFindings(nil)
			if !finding.Has(fs, c.code) {
				t.Fatalf("findings %v, want %s", fs, c.code)
			}
		})
	}
	// The unmodified REQ raises nothing above info.
	p := gopacket.NewPacket(orig, layers.LinkTypeEthernet, gopacket.Default)
	for _, l := range p.Layers() {
		if a, ok := l.(interface {
			AppendFindings([]finding.Finding) []finding.Finding
		}); ok {
			for _, f := range a.AppendFindings(nil) {
				if f.Severity > finding.SeverityInfo {
					t.Errorf("real REQ: %s", f)
				}
			}
		}
	}
}

// nextTestPort gives each run of TestRegisterRoCEPort (-count=N) a port
// not yet registered.
var nextTestPort uint16 = 4792

// TestRegisterRoCEPort moves a real RoCEv2 frame to another UDP port.
func TestRegisterRoCEPort(t *testing.T) {
	frames := testcap.Data(t, testcap.RXE)
	b := append([]byte(nil), frames[0]...)
	port := nextTestPort
	nextTestPort++
	binary.BigEndian.PutUint16(b[36:], port) // UDP destination port
	_, icrc, ok := CheckRoCEv2ICRC(b[14:], false)
	if !ok {
		t.Fatal("CheckRoCEv2ICRC")
	}
	binary.BigEndian.PutUint32(b[len(b)-4:], icrc)
	if p := gopacket.NewPacket(b, layers.LinkTypeEthernet, gopacket.Default); p.Layer(LayerTypeBTH) != nil {
		t.Fatal("port decoded as RoCE before registration")
	}
	RegisterRoCEPort(port)
	p := gopacket.NewPacket(b, layers.LinkTypeEthernet, gopacket.Default)
	if bth, ok := p.Layer(LayerTypeBTH).(*BTH); !ok || bth.ICRCStatus != CRCGood {
		t.Fatalf("port %d after registration: %v", port, p.Layers())
	}
	if p := gopacket.NewPacket(frames[0], layers.LinkTypeEthernet, gopacket.Default); p.Layer(LayerTypeCM) == nil {
		t.Fatal("4791 lost")
	}
}

func TestNames(t *testing.T) {
	cases := map[string]string{
		Opcode(0x04).String():                  "RC SEND_ONLY",
		Opcode(0x64).String():                  "UD SEND_ONLY",
		Opcode(0x2b).String():                  "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		Opcode(0x81).String():                  "CNP",
		Opcode(0x3f).String():                  "0x3f",
		Opcode(0x17).String():                  "RC SEND_ONLY_WITH_INVALIDATE",
		ServiceID(0x0000000001064e51).String(): "NFS/RDMA(20049)",
		ServiceID(0x0000000001061144).String(): "NVMe-oF(4420)",
		ServiceID(0x0000000001060cbc).String(): "iSER(3260)",
		ServiceID(0x0000000001110001).String(): "UDP port 1",
		ServiceID(0x1234000001064e51).String(): "0x1234000001064e51",
		RejectReasonName(28):                   "Consumer Reject",
		RejectReasonName(33):                   "Invalid Alternate Flow Label",
		RejectReasonName(34):                   "reason 34",
		CRCBad.String():                        "bad",
		(&CM{AttributeID: AttrSIDRRep}).Name(): "SIDR_REP",
		(&CM{AttributeID: 0x77}).Name():        "attribute 0x0077",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for op := 0; op < 256; op++ {
		o := Opcode(op)
		if o.IsSendFirstOrOnly() && !o.IsSend() {
			t.Errorf("%s: first/only but not a send", o)
		}
	}
	if !Opcode(0x17).IsInvalidate() || Opcode(0x04).IsInvalidate() {
		t.Error("IsInvalidate")
	}
	for r := uint16(1); r <= 35; r++ {
		if _, ok := rejReasons[r]; !ok && r != 34 {
			t.Errorf("REJ reason %d has no name", r)
		}
	}
}

// TestERFEthernet decodes a RoCEv2 frame inside an ERF type 2 (Ethernet)
// record, as ibdump --erf writes RoCE traffic.
func TestERFEthernet(t *testing.T) {
	frames := testcap.Data(t, testcap.RXE)
	e := &ERF{Type: ERFTypeEthernet}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, e, gopacket.Payload(frames[0])); err != nil {
		t.Fatal(err)
	}
	if e.RLen != uint16(len(frames[0])+18) {
		t.Fatalf("rlen %d", e.RLen)
	}
	p := gopacket.NewPacket(buf.Bytes(), LinkTypeERF, gopacket.Default)
	if el := p.ErrorLayer(); el != nil {
		t.Fatal(el.Error())
	}
	cm, ok := p.Layer(LayerTypeCM).(*CM)
	if !ok || cm.AttributeID != AttrREQ || p.Layer(LayerTypeBTH).(*BTH).ICRCStatus != CRCGood {
		t.Fatalf("layers %v", p.Layers())
	}
}

// TestICRCCoverage pins what the native IB ICRC covers (IBTA vol. 1
// §7.8.1): in a local packet the LRH except VL; in a global packet none of
// the LRH, nor the GRH's traffic class, flow label and hop limit.
func TestICRCCoverage(t *testing.T) {
	for _, file := range []string{"synth-ibcm-ib247-cm-all.pcap", "synth-ibcm-ib247-grh-cm-all.pcap"} {
		frames := testcap.Data(t, testcap.Synthetic(file))
		orig := frames[2]
		_, base, ok := CheckIBICRC(orig)
		if !ok {
			t.Fatalf("%s: no ICRC", file)
		}
		global := orig[1]&0x03 == lnhIBAGlobal
		for _, c := range []struct {
			name    string
			off     int
			mask    byte
			covered bool
		}{
			{"LRH VL", 0, 0x70, false},
			{"LRH SL", 1, 0x30, !global},
			{"LRH DLID", 3, 0x01, !global},
			{"LRH SLID", 7, 0x01, !global},
			{"BTH FECN/BECN", 8 + map[bool]int{true: 40, false: 0}[global] + 4, 0xc0, false},
			{"BTH PSN", 8 + map[bool]int{true: 40, false: 0}[global] + 11, 0x01, true},
		} {
			b := append([]byte(nil), orig...)
			b[c.off] ^= c.mask
			_, got, _ := CheckIBICRC(b)
			if (got != base) != c.covered {
				t.Errorf("%s: changing %s changes the ICRC: %v, want %v", file, c.name, got != base, c.covered)
			}
		}
		if global {
			for _, c := range []struct {
				name string
				off  int
			}{{"GRH TClass", 8 + 1}, {"GRH flow label", 8 + 3}, {"GRH hop limit", 8 + 7}} {
				b := append([]byte(nil), orig...)
				b[c.off] ^= 0x01
				if _, got, _ := CheckIBICRC(b); got != base {
					t.Errorf("%s: %s is covered by the ICRC", file, c.name)
				}
			}
		}
	}
}

// TestSnapLengthCut: a RoCEv2 frame cut by the snap length has no ICRC
// verdict (its last octets are not the ICRC) and says so.
func TestSnapLengthCut(t *testing.T) {
	frames := testcap.Data(t, testcap.RXE)
	cut := frames[3][:100] // an RC SEND_ONLY cut inside its payload
	p := gopacket.NewPacket(cut, layers.LinkTypeEthernet, gopacket.Default)
	bth, ok := p.Layer(LayerTypeBTH).(*BTH)
	if !ok {
		t.Fatalf("layers %v", p.Layers())
	}
	if bth.ICRCStatus != CRCUnchecked || !finding.Has(bth.AppendFindings(nil), CodeICRCMissing) {
		t.Fatalf("ICRC %s, findings %v", bth.ICRCStatus, bth.AppendFindings(nil))
	}
	if want := len(cut) - 42 - bthLen; len(bth.Payload) != want {
		t.Fatalf("payload %d octets, want %d", len(bth.Payload), want)
	}
}

// TestERFLengths: the payload is the packet (wlen octets) whatever rlen's
// padding and whether the pcap record stores it; a record storing fewer
// than wlen octets is cut; an rlen shorter than the headers is reported;
// IP records lead to IPv4 and IPv6, other types are not dissected.
func TestERFLengths(t *testing.T) {
	hdr := func(typ byte, rlen, wlen int) []byte {
		return []byte{8: typ, 10: byte(rlen >> 8), 11: byte(rlen), 14: byte(wlen >> 8), 15: byte(wlen)}
	}
	pkt := make([]byte, 30)
	for _, tc := range []struct {
		name      string
		data      []byte
		payload   int
		truncated bool
		finding   bool
		next      gopacket.LayerType
	}{
		{"padding not stored", append(hdr(21, 48, 30), pkt...), 30, false, false, LayerTypeLRH},
		{"padding stored", append(hdr(21, 48, 30), append(pkt, 0, 0)...), 30, false, false, LayerTypeLRH},
		{"varying length", append(hdr(21, 46, 30), pkt...), 30, false, false, LayerTypeLRH},
		{"cut by the snap length", append(hdr(21, 48, 40), pkt...), 30, true, false, LayerTypeLRH},
		{"cut by the card (rlen)", append(hdr(21, 40, 30), pkt...), 24, true, false, LayerTypeLRH},
		{"rlen shorter than the header", append(hdr(21, 8, 30), pkt...), 30, false, true, LayerTypeLRH},
		{"Ethernet with pad", append(hdr(2, 48, 28), pkt...), 28, false, false, layers.LayerTypeEthernet},
		{"IPv4", append(hdr(22, 48, 30), pkt...), 30, false, false, layers.LayerTypeIPv4},
		{"IPv6", append(hdr(23, 48, 30), pkt...), 30, false, false, layers.LayerTypeIPv6},
		{"ATM: not dissected, what the record holds", append(hdr(3, 48, 20), pkt...), 30, false, false, gopacket.LayerTypePayload},
	} {
		var e ERF
		var tf testcap.TruncFlag
		if err := e.DecodeFromBytes(tc.data, &tf); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		fs := e.AppendFindings(nil)
		// A wrong rlen is the capture file's fault, not the packet's.
		found := len(fs) == 1 && fs[0].Code == CodeERFRLen && fs[0].Severity == finding.SeverityWarning
		if len(e.Payload) != tc.payload || bool(tf) != tc.truncated || (len(fs) > 0) != tc.finding || found != tc.finding || e.NextLayerType() != tc.next {
			t.Errorf("%s: payload %d truncated %t findings %v next %v; want %d %t %t %v", tc.name, len(e.Payload), tf, fs, e.NextLayerType(),
				tc.payload, tc.truncated, tc.finding, tc.next)
		}
	}
}
