package pvtdata

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// The kernel's real bytes (net/sunrpc/xprtrdma verbs.c and svc_rdma_transport.c,
// Debian 6.1 kernel, captured in testdata/pcaps/real/).
var (
	kernelClient = []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03}
	kernelServer = []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03}
)

// cmPrivateData returns the CM private data of the REQ and REP in the rxe
// capture (RoCEv2/IPv4, untagged: MAD at frame offset 62; REQ private data
// at CM offset 140, REP at 36, per ../shared/reference/wire-formats.md §3, §4).
func cmPrivateData(t *testing.T) (req, rep []byte) {
	t.Helper()
	const mad = 62
	for _, f := range testcap.Data(t, testcap.RXE) {
		if len(f) < mad+256 || f[23] != 17 || binary.BigEndian.Uint16(f[36:]) != 4791 || f[42] != 0x64 {
			continue
		}
		switch binary.BigEndian.Uint16(f[mad+16:]) {
		case 0x0010:
			req = f[mad+24+140 : mad+24+140+92]
		case 0x0013:
			rep = f[mad+24+36 : mad+24+36+196]
		}
	}
	if req == nil || rep == nil {
		t.Fatal("rxe capture: no CM REQ/REP found")
	}
	return req, rep
}

// mpaPrivateData returns the private data of the MPA Request and Reply in
// the siw capture (found by their keys; PD_Length at key+18).
func mpaPrivateData(t *testing.T) (req, rep []byte) {
	t.Helper()
	for _, f := range testcap.Data(t, testcap.SIW) {
		for key, dst := range map[string]*[]byte{"MPA ID Req Frame": &req, "MPA ID Rep Frame": &rep} {
			i := bytes.Index(f, []byte(key))
			if i < 0 || i+20 > len(f) {
				continue
			}
			n := int(binary.BigEndian.Uint16(f[i+18:]))
			if i+20+n > len(f) {
				t.Fatalf("siw capture: %s PD_Length %d overruns the frame", key, n)
			}
			*dst = f[i+20 : i+20+n]
		}
	}
	if req == nil || rep == nil {
		t.Fatal("siw capture: no MPA Request/Reply found")
	}
	return req, rep
}

func TestRealCaptures(t *testing.T) {
	cmReq, cmRep := cmPrivateData(t)
	mpaReq, mpaRep := mpaPrivateData(t)
	cases := []struct {
		name     string
		pd       []byte // the whole private data field
		ulpStart int    // where the ULP data starts (rdma_cm header, IRD/ORD)
		want     []byte
	}{
		{"rxe REQ", cmReq, 36, kernelClient},
		{"rxe REP", cmRep, 0, kernelServer},
		{"siw MPA Request", mpaReq, 4, kernelClient},
		{"siw MPA Reply", mpaRep, 4, kernelServer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ulp := c.pd[c.ulpStart:]
			if !bytes.Equal(ulp[:8], c.want) {
				t.Fatalf("ULP data starts % x, want % x", ulp[:8], c.want)
			}
			for _, m := range Modes {
				r := Read(ulp, m)
				if !r.Valid || r.Offset != 0 || r.Overrun {
					t.Errorf("%s: valid=%v offset=%d overrun=%v, want a valid message at 0", m, r.Valid, r.Offset, r.Overrun)
				}
				if f := r.AppendFindings(nil); len(f) != 0 {
					t.Errorf("%s: findings on the kernel's bytes (zero padding is normal): %v", m, f)
				}
				if got := r.Message.Bytes(); !bytes.Equal(got[:], c.want) {
					t.Errorf("%s: message % x, want % x", m, got, c.want)
				}
			}
			if d, _ := Diverges(ulp); d {
				t.Error("readers diverge on the kernel's bytes")
			}
			p := Dissect(ulp, Hint{Port: PortNFSRDMA}, ModeRFC8797)
			if p.ULP.Kind != ULPRPCRDMA || p.ULP.Basis != BasisIdentifier {
				t.Errorf("ULP %v by %v, want rpcrdma-v1 by format-identifier", p.ULP.Kind, p.ULP.Basis)
			}
			// The whole private data field, transport header included:
			// an RFC 8797 search still finds the message; strict
			// readers do not when a header precedes it.
			whole := Read(c.pd, ModeRFC8797)
			if !whole.Valid || whole.Offset != c.ulpStart {
				t.Errorf("whole field: valid=%v offset=%d, want offset %d", whole.Valid, whole.Offset, c.ulpStart)
			}
			strict := Read(c.pd, ModeLinux)
			if strict.Valid != (c.ulpStart == 0) {
				t.Errorf("whole field, linux: valid=%v, want %v", strict.Valid, c.ulpStart == 0)
			}
		})
	}
	client := Read(cmReq[36:], ModeLinux)
	server := Read(cmRep, ModeLinux)
	got := Negotiate(client.Effective(), server.Effective())
	want := Negotiated{ClientToServerInline: 4096, ServerToClientInline: 4096, RemoteInvalidation: false}
	if got != want {
		t.Errorf("negotiated %+v, want %+v", got, want)
	}
	// The MPA v2 IRD/ORD words the kernel sent.
	if !bytes.Equal(mpaReq[:4], []byte{0x00, 0x80, 0x00, 0x00}) || !bytes.Equal(mpaRep[:4], []byte{0x00, 0x00, 0x00, 0x80}) {
		t.Errorf("IRD/ORD % x / % x", mpaReq[:4], mpaRep[:4])
	}
}

// TestCapturesAgainstTshark checks the private data this package's tests
// take from the real captures (by the offsets of wire-formats.md) against
// what Wireshark extracts: the ULP data after the rdma_cm header of the REQ
// (infiniband.cm.req.ip_cm.private), the REP private data, and the MPA
// private data (iwarp_mpa.privatedata, IRD/ORD included).
func TestCapturesAgainstTshark(t *testing.T) {
	// Every value tshark prints, in order.
	tshark := func(file string, fields ...string) []string {
		var vals []string
		for _, row := range testcap.TsharkFields(t, testcap.Real(file), "", fields...) {
			for _, v := range row {
				if v != "" {
					vals = append(vals, v)
				}
			}
		}
		return vals
	}
	cmReq, cmRep := cmPrivateData(t)
	mpaReq, mpaRep := mpaPrivateData(t)
	ib := tshark("rxe-nfs42-rdma.pcap", "infiniband.cm.req.ip_cm.private", "infiniband.cm.rep.private")
	iw := tshark("siw-nfs42-rdma.pcap", "iwarp_mpa.privatedata")
	want := []string{hex.EncodeToString(cmReq[36:]), hex.EncodeToString(cmRep)}
	if !reflect.DeepEqual(ib, want) {
		t.Errorf("rxe: tshark %q, ours %q", ib, want)
	}
	want = []string{hex.EncodeToString(mpaReq), hex.EncodeToString(mpaRep)}
	if !reflect.DeepEqual(iw, want) {
		t.Errorf("siw: tshark %q, ours %q", iw, want)
	}
}
