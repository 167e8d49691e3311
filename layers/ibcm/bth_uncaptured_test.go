package ibcm

import (
	"testing"

	"github.com/gopacket/gopacket"

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
