package ibcm_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
)

// TestCommittedSyntheticCaptures decodes every committed synth-ibcm capture
// (no decode error, CRC verdicts as the file name says) and checks the
// cm-all files hold exactly what ibcmtest builds today (run `make testdata`
// after changing a builder).
func TestCommittedSyntheticCaptures(t *testing.T) {
	files := testcap.Glob(t, "pcaps/synthetic/synth-ibcm-*.pcap")
	if len(files) < 17 {
		t.Fatalf("%d synthetic IB captures, want 17 (go run ./internal/gen -only synth-ibcm)", len(files))
	}
	byName := map[string]ibcmtest.Encoding{}
	for _, e := range ibcmtest.Encodings {
		byName[e.String()] = e
	}
	for _, file := range files {
		base := filepath.Base(file)
		frames := testcap.Frames(t, file)
		if len(frames) == 0 {
			t.Fatalf("%s: empty", base)
		}
		for i, fr := range frames {
			p := gopacket.NewPacket(fr.Data, layers.LinkType(fr.LinkType), gopacket.Default)
			if el := p.ErrorLayer(); el != nil {
				t.Fatalf("%s frame %d: %v", base, i+1, el.Error())
			}
			bth, ok := p.Layer(ibcm.LayerTypeBTH).(*ibcm.BTH)
			if !ok {
				t.Fatalf("%s frame %d: no BTH", base, i+1)
			}
			wantICRC, wantVCRC := ibcm.CRCGood, ibcm.CRCGood
			if strings.HasSuffix(base, "-bad-crc.pcap") {
				switch i {
				case 1:
					wantICRC = ibcm.CRCBad
				case 2:
					wantVCRC = ibcm.CRCBad
				}
			}
			if bth.ICRCStatus != wantICRC {
				t.Errorf("%s frame %d: ICRC %s, want %s", base, i+1, bth.ICRCStatus, wantICRC)
			}
			if lrh, ok := p.Layer(ibcm.LayerTypeLRH).(*ibcm.LRH); ok && lrh.VCRCStatus != wantVCRC {
				t.Errorf("%s frame %d: VCRC %s, want %s", base, i+1, lrh.VCRCStatus, wantVCRC)
			}
		}
		if enc, ok := byName[strings.TrimSuffix(strings.TrimPrefix(base, "synth-ibcm-"), "-cm-all.pcap")]; ok {
			pkts, err := ibcmtest.CMExchange(enc)
			if err != nil {
				t.Fatal(err)
			}
			if len(pkts) != len(frames) {
				t.Fatalf("%s: %d frames, builder makes %d", base, len(frames), len(pkts))
			}
			for i := range pkts {
				got, want := frames[i].Data, pkts[i].Frame
				if enc == ibcmtest.ERF { // the generator stamps the ERF timestamp
					got, want = got[8:], want[8:]
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s frame %d (%s) differs from what ibcmtest builds: regenerate with make testdata", base, i+1, pkts[i].Name)
				}
			}
		}
	}
}
