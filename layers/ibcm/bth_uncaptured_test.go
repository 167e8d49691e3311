package ibcm

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// TestBTHUncaptured: a packet whose last octets the capture's snap length
// did not store has its captured octets after the BTH as payload (its pad
// and ICRC lie in the octets not stored as far as they reach), its wire
// payload length, no ICRC shown or verified, and no finding.
func TestBTHUncaptured(t *testing.T) {
	// RC SEND_ONLY, pad 2: 12 octets of BTH, 18 of payload, 2 of pad, the ICRC.
	pkt := make([]byte, bthLen+18+2+icrcLen)
	pkt[0], pkt[1] = byte(OpRCSendOnly), 2<<4
	pkt[len(pkt)-1] = 0x5a
	for _, tc := range []struct {
		uncaptured, payload int
	}{
		{uncaptured: 10, payload: 14}, // cut inside the payload
		{uncaptured: 6, payload: 18},  // cut in the pad
		{uncaptured: 2, payload: 18},  // cut in the ICRC: the captured pad and ICRC are no payload
	} {
		data := pkt[:len(pkt)-tc.uncaptured]
		var b BTH
		var tf testcap.TruncFlag
		if err := b.DecodeFromBytes(data, &tf); err != nil {
			t.Fatal(err)
		}
		b.MarkUncaptured(data, tc.uncaptured)
		b.WirePayload(tc.uncaptured)
		if len(b.Payload) != tc.payload || b.PayloadLength != 18 {
			t.Errorf("%d not captured: payload %d octets (length %d), want %d (18)", tc.uncaptured, len(b.Payload), b.PayloadLength, tc.payload)
		}
		b.SetICRCComputed(0x1234)
		v := testcap.TsharkValues{}
		b.VisitFields(v)
		if _, ok := v["bth.icrc"]; ok || b.ICRCStatus != CRCUnchecked || !b.Uncaptured() {
			t.Errorf("%d not captured: ICRC shown %v, status %d", tc.uncaptured, v["bth.icrc"], b.ICRCStatus)
		}
		if fs := b.AppendFindings(nil); len(fs) != 0 {
			t.Errorf("%d not captured: %v", tc.uncaptured, fs)
		}
	}
}

// TestDecodeBTHSnapCut: gopacket's decoder marks a packet of a frame the
// snap length cut (its CaptureInfo's Length above CaptureLength) as not
// captured, not as one that ends before its ICRC (CodeICRCMissing).
func TestDecodeBTHSnapCut(t *testing.T) {
	pkt := make([]byte, bthLen+40+icrcLen)
	pkt[0] = byte(OpRCSendOnly)
	data := pkt[:bthLen+2]
	p := gopacket.NewPacket(data, LayerTypeBTH, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
	p.Metadata().CaptureInfo = gopacket.CaptureInfo{CaptureLength: len(data), Length: len(pkt)}
	p.Metadata().Truncated = true
	b, ok := p.Layer(LayerTypeBTH).(*BTH)
	if !ok {
		t.Fatalf("no BTH: %v", p.ErrorLayer())
	}
	if fs := b.AppendFindings(nil); len(fs) != 0 || len(b.Payload) != 2 || !b.Uncaptured() {
		t.Errorf("payload %d octets, findings %v", len(b.Payload), fs)
	}
}

// TestBTHICRCNotCaptured: a real RoCEv2 frame (the CM REQ of
// live-rxe4-rfc8797.pcap) without its last four octets, captured whole, as
// a capture point that does not deliver the ICRC hands it: gopacket's
// decoding (the UDP length counts exactly the ICRC more than the frame
// holds) takes every octet after the BTH as the packet's, shows no ICRC
// (status not present) and reports nothing; the MAD is whole.
// MarkICRCNotCaptured keeps the pad out of the payload.
func TestBTHICRCNotCaptured(t *testing.T) {
	frame := testcap.Data(t, testcap.Real("live-rxe4-rfc8797.pcap"))[0]
	data := frame[:len(frame)-icrcLen]
	p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
	p.Metadata().CaptureInfo = gopacket.CaptureInfo{CaptureLength: len(data), Length: len(data)}
	b, ok := p.Layer(LayerTypeBTH).(*BTH)
	if !ok {
		t.Fatalf("no BTH: %v", p.ErrorLayer())
	}
	v := testcap.TsharkValues{}
	b.VisitFields(v)
	if _, shown := v["bth.icrc"]; shown || b.ICRCStatus != field.ChecksumNotPresent || len(b.Payload) != dethLen+MADLen {
		t.Errorf("ICRC shown %v, status %d, payload %d octets", v["bth.icrc"], b.ICRCStatus, len(b.Payload))
	}
	if fs := b.AppendFindings(nil); len(fs) != 0 {
		t.Error(fs)
	}
	if m, ok := p.Layer(LayerTypeMAD).(*MAD); !ok || len(m.Contents)+len(m.Payload) != MADLen {
		t.Errorf("MAD %v", p.Layer(LayerTypeMAD))
	}

	// RC SEND_ONLY, pad 2: 12 octets of BTH, 18 of payload, 2 of pad.
	pkt := make([]byte, bthLen+18+2)
	pkt[0], pkt[1] = byte(OpRCSendOnly), 2<<4
	var tf testcap.TruncFlag
	if err := b.DecodeFromBytes(pkt, &tf); err != nil {
		t.Fatal(err)
	}
	b.MarkICRCNotCaptured(pkt)
	b.SetICRCComputed(0x1234)
	if len(b.Payload) != 18 || b.PayloadLength != 18 || b.ICRCStatus != field.ChecksumNotPresent || len(b.AppendFindings(nil)) != 0 {
		t.Errorf("payload %d (length %d), status %d, findings %v", len(b.Payload), b.PayloadLength, b.ICRCStatus, b.AppendFindings(nil))
	}
}
