package ibcm

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/field/fieldtest"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// exercise reports every field, finding and summary of a decoded layer.
func exercise(t *testing.T, l any) {
	if fl, ok := l.(field.Layer); ok {
		var c fieldtest.Counter
		fl.VisitFields(&c)
		if c.Unbalanced || c.Open != 0 {
			t.Fatalf("%T: End without Begin, or %d unclosed groups", l, c.Open)
		}
	}
	if a, ok := l.(interface {
		AppendFindings([]finding.Finding) []finding.Finding
	}); ok {
		for _, f := range a.AppendFindings(nil) {
			_ = f.String()
		}
	}
	if s, ok := l.(field.Summarizer); ok {
		_ = s.AppendSummary(nil)
	}
}

var linkTypes = []layers.LinkType{layers.LinkTypeEthernet, LinkTypeInfiniBand, LinkTypeERF}

// seedFrames adds the real capture's frames and every synthetic IB
// capture's frames, each under its link type selector.
func seedFrames(f *testing.F) {
	files := testcap.Glob(f, "pcaps/synthetic/synth-ibcm-*.pcap")
	files = append(files, testcap.RXE)
	for _, file := range files {
		frames, lt := testcap.DataLink(f, file)
		sel := byte(0)
		for i, l := range linkTypes {
			if l == lt {
				sel = byte(i)
			}
		}
		for _, fr := range frames {
			f.Add(sel, fr)
		}
	}
}

// FuzzNewPacket decodes arbitrary frames of the three link types with
// gopacket.NewPacket (the registered decoders, ICRC from context) and
// reports everything: nothing may panic.
func FuzzNewPacket(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, sel byte, data []byte) {
		lt := linkTypes[int(sel)%len(linkTypes)]
		p := gopacket.NewPacket(data, lt, gopacket.Default)
		for _, l := range p.Layers() {
			exercise(t, l)
		}
	})
}

// FuzzDecodingLayers decodes arbitrary frames with a linked Stack in a
// DecodingLayerParser starting at Ethernet, the LRH or the ERF header.
func FuzzDecodingLayers(f *testing.F) {
	seedFrames(f)
	eth := newFastParser()
	s := NewStack()
	var payload gopacket.Payload
	lrh := gopacket.NewDecodingLayerParser(LayerTypeLRH, append(s.DecodingLayers(), &payload)...)
	erf := gopacket.NewDecodingLayerParser(LayerTypeERF, append(s.DecodingLayers(), &payload)...)
	f.Fuzz(func(t *testing.T, sel byte, data []byte) {
		var decoded []gopacket.LayerType
		switch sel % 3 {
		case 0:
			_ = eth.decode(data)
			decoded = eth.decoded
			s := eth.stack
			for _, lt := range decoded {
				exerciseStack(t, s, lt)
			}
			return
		case 1:
			_ = lrh.DecodeLayers(data, &decoded)
		case 2:
			_ = erf.DecodeLayers(data, &decoded)
		}
		for _, lt := range decoded {
			exerciseStack(t, s, lt)
		}
		if _, c, ok := CheckIBICRC(data); ok {
			s.BTH.SetICRCComputed(c)
		}
	})
}

func exerciseStack(t *testing.T, s *Stack, lt gopacket.LayerType) {
	switch lt {
	case LayerTypeERF:
		exercise(t, &s.ERF)
	case LayerTypeLRH:
		exercise(t, &s.LRH)
	case LayerTypeGRH:
		exercise(t, &s.GRH)
	case LayerTypeBTH:
		exercise(t, &s.BTH)
	case LayerTypeDETH:
		exercise(t, &s.DETH)
	case LayerTypeRETH:
		exercise(t, &s.RETH)
	case LayerTypeAETH:
		exercise(t, &s.AETH)
	case LayerTypeIETH:
		exercise(t, &s.IETH)
	case LayerTypeImmDt:
		exercise(t, &s.ImmDt)
	case LayerTypeAtomicETH:
		exercise(t, &s.AtomicETH)
	case LayerTypeAtomicAckETH:
		exercise(t, &s.AtomicAckETH)
	case LayerTypeMAD:
		exercise(t, &s.MAD)
	case LayerTypeCM:
		exercise(t, &s.CM)
	}
}

// FuzzCM decodes arbitrary CM attribute data under an arbitrary attribute
// ID and method, then serializes what decoded and decodes it again: the
// fixed fields must survive the round trip.
func FuzzCM(f *testing.F) {
	frames := testcap.Data(f, testcap.RXE)
	for _, fr := range frames {
		p := gopacket.NewPacket(fr, layers.LinkTypeEthernet, gopacket.Default)
		if m, ok := p.Layer(LayerTypeMAD).(*MAD); ok {
			f.Add(m.AttributeID, m.Method, m.Payload)
		}
	}
	for id := range messages {
		f.Add(id, uint8(MethodSend), make([]byte, CMDataLen))
	}
	f.Fuzz(func(t *testing.T, attr uint16, method uint8, data []byte) {
		mad := &MAD{AttributeID: attr, Method: method, MgmtClass: MgmtClassCM}
		c := NewCM(mad)
		if err := c.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			if _, ok := err.(*DecodeError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		exercise(t, c)
		if _, known := messages[attr]; !known {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := c.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatalf("serialize: %v", err)
		}
		c2 := NewCM(mad)
		if err := c2.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if c.REQ != c2.REQ || c.REP != c2.REP || c.MRA != c2.MRA || c.DREQ != c2.DREQ || c.LAP != c2.LAP ||
			c.SIDRReq != c2.SIDRReq || c.ClassPortInfo != c2.ClassPortInfo || c.RTU != c2.RTU || c.DREP != c2.DREP {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", c, c2)
		}
		if c.REJ.Reason != c2.REJ.Reason || c.REJ.RejInfoLen != c2.REJ.RejInfoLen || c.SIDRRep.QPN != c2.SIDRRep.QPN ||
			c.APR.Status != c2.APR.Status {
			t.Fatalf("round trip changed REJ/SIDR_REP/APR")
		}
	})
}

// FuzzCRC runs the CRC checks on arbitrary bytes.
func FuzzCRC(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, sel byte, data []byte) {
		CheckRoCEv2ICRC(data, sel&1 == 0)
		CheckRoCEv1ICRC(data)
		CheckIBICRC(data)
		CheckIBVCRC(data)
		if len(data) > 14 {
			CheckRoCEv2ICRC(data[14:], sel&1 == 1)
		}
	})
}
