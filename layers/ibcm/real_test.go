package ibcm

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

func decodePacket(data []byte, lt layers.LinkType) gopacket.Packet {
	return gopacket.NewPacket(data, lt, gopacket.Default)
}

func TestRealRXECaptureDecodes(t *testing.T) {
	frames, lt := testcap.DataLink(t, testcap.RXE)
	if len(frames) != 109 {
		t.Fatalf("frames = %d, want 109", len(frames))
	}
	var cms []*CM
	for i, data := range frames {
		p := decodePacket(data, lt)
		if el := p.ErrorLayer(); el != nil {
			t.Fatalf("frame %d: %v", i+1, el.Error())
		}
		b, ok := p.Layer(LayerTypeBTH).(*BTH)
		if !ok {
			t.Fatalf("frame %d: no BTH", i+1)
		}
		if b.ICRCStatus != CRCGood {
			t.Errorf("frame %d: ICRC %s (stored %08x computed %08x)", i+1, b.ICRCStatus, b.ICRC, b.ICRCComputed)
		}
		if c, ok := p.Layer(LayerTypeCM).(*CM); ok {
			cms = append(cms, c)
		}
	}
	var names []string
	for _, c := range cms {
		names = append(names, c.Name())
	}
	want := []string{"REQ", "REP", "RTU", "DREQ", "DREP"}
	if len(names) != len(want) {
		t.Fatalf("CM messages %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("CM messages %v, want %v", names, want)
		}
	}
	req, rep := cms[0], cms[1]
	if !req.HasIPCM || req.IPCM.IPVersion != 4 || req.ULPOffset != 36 {
		t.Fatalf("REQ IP CM header: has=%v %+v", req.HasIPCM, req.IPCM)
	}
	if got, want := req.ULPData[:8], []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03}; !bytes.Equal(got, want) {
		t.Errorf("REQ ULP data % x, want % x", got, want)
	}
	if svc := req.REQ.ServiceID; svc != 0x0000000001064e51 || svc.Port() != 20049 || svc.ULP() != "NFS/RDMA" {
		t.Errorf("REQ service ID %v", svc)
	}
	if req.IPCM.Src.String() != "192.0.2.2" || req.IPCM.Dst.String() != "192.0.2.1" {
		t.Errorf("IP CM addresses %v → %v", req.IPCM.Src, req.IPCM.Dst)
	}
	if !req.PD.Reading.Valid || req.PD.Reading.Offset != 0 || !req.PD.Reading.Message.RemoteInvalidation() ||
		req.PD.Reading.Message.SendBytes() != 4096 || req.PD.ULP.Kind != pvtdata.ULPRPCRDMA {
		t.Errorf("REQ pvtdata %+v", req.PD.Reading)
	}
	if got, want := rep.PrivateData[:8], []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03}; !bytes.Equal(got, want) || rep.ULPOffset != 0 {
		t.Errorf("REP private data % x (ULP offset %d), want % x", got, rep.ULPOffset, want)
	}
	if req.PrivateDataOffset() != 140 || rep.PrivateDataOffset() != 36 || cms[2].PrivateDataOffset() != 8 {
		t.Errorf("private data offsets %d %d %d", req.PrivateDataOffset(), rep.PrivateDataOffset(), cms[2].PrivateDataOffset())
	}
	if len(req.PrivateData) != 92 || len(rep.PrivateData) != 196 {
		t.Errorf("private data lengths REQ %d REP %d", len(req.PrivateData), len(rep.PrivateData))
	}
	if rep.PD.Reading.Message.RemoteInvalidation() || !rep.PD.Reading.Valid {
		t.Errorf("REP reading %+v", rep.PD.Reading)
	}
	if rep.REP.RemoteCommID != req.REQ.LocalCommID {
		t.Errorf("REP remote comm ID 0x%x, REQ local 0x%x", rep.REP.RemoteCommID, req.REQ.LocalCommID)
	}
	if got, want := string(req.AppendSummary(nil)), "CM REQ svc=NFS/RDMA(20049) qpn=0x000013 pd=RFC8797 v1 R=1 send=4096 recv=4096"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
