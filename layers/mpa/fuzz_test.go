package mpa

import (
	"encoding/hex"
	"testing"

	"github.com/gopacket/gopacket"
)

func seed(f *testing.F, hexes ...string) {
	for _, h := range hexes {
		b, err := hex.DecodeString(h)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzFrame(f *testing.F) {
	seed(f, siwFrame4MPARequest, siwFrame6MPAReply, "4d504120494420526570204672616d6520010000")
	f.Fuzz(func(t *testing.T, data []byte) {
		var fr Frame
		if err := fr.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		if len(fr.Contents)+len(fr.Payload) != len(data) || len(fr.PrivateData) > int(fr.PDLength) {
			t.Fatalf("contents %d payload %d of %d", len(fr.Contents), len(fr.Payload), len(data))
		}
		fr.VisitFields(&recorder{})
		_ = fr.AppendSummary(nil)
		_ = fr.AppendFindings(nil)
		buf := gopacket.NewSerializeBuffer()
		if err := fr.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		if !fr.Overrun && string(buf.Bytes()) != string(fr.Contents) {
			t.Fatalf("round trip\n%x\n%x", buf.Bytes(), fr.Contents)
		}
	})
}

func FuzzFPDU(f *testing.F) {
	seed(f, siwFrame8SendFPDU, siwFrame11WriteFPDU, siwFrame69WriteFPDU)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []FPDUOptions{{}, {CRC: CRCNegotiated}, {CRC: CRCUnknown, Markers: true, StreamOffset: 0},
			{Markers: true, StreamOffset: 4}, {Markers: true, StreamOffset: 500}} {
			var fp FPDU
			fp.Options = opts
			if err := fp.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				continue
			}
			if len(fp.Contents) != WireLen(int(fp.ULPDULength), opts.StreamOffset, opts.Markers) || len(fp.ULPDU) != int(fp.ULPDULength) {
				t.Fatalf("lengths: contents %d ulpdu %d", len(fp.Contents), len(fp.ULPDU))
			}
			fp.VisitFields(&recorder{})
			_ = fp.AppendFindings(nil)
			_ = fp.AppendSummary(nil)
			decodeSegment(t, fp.ULPDU)
		}
	})
}

func FuzzRDMAP(f *testing.F) {
	seed(f, siwFrame8SendFPDU[4:], siwFrame11WriteFPDU[4:],
		"4147000000000000000200000000000000001000e0000000006841430000000000000000000000010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000")
	f.Fuzz(func(t *testing.T, data []byte) { decodeSegment(t, data) })
}

func decodeSegment(t *testing.T, data []byte) {
	var d DDP
	if err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		return
	}
	d.VisitFields(&recorder{})
	_ = d.AppendFindings(nil)
	var r RDMAP
	if err := r.DecodeFromDDP(&d, gopacket.NilDecodeFeedback); err != nil {
		return
	}
	if len(d.Contents)+len(r.Contents)+len(r.Payload) != len(data) {
		t.Fatalf("ddp %d rdmap %d payload %d of %d", len(d.Contents), len(r.Contents), len(r.Payload), len(data))
	}
	r.VisitFields(&recorder{})
	_ = r.AppendFindings(nil)
	_ = r.AppendSummary(nil)
}
