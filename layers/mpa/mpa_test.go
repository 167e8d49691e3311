package mpa

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// TCP payloads of the real capture testdata/pcaps/real/siw-nfs42-rdma.pcap
// (Linux 6.1 siw, NFSv4.2), frame numbers as tshark shows them.
const (
	siwFrame4MPARequest = "4d504120494420526571204672616d651002000c00800000f6ab0e1801010303"
	siwFrame6MPAReply   = "4d504120494420526570204672616d651002000c00000080f6ab0e1801000303"
	siwFrame8SendFPDU   = "00564143000000000000000000000001000000008961ad740000000100000080000000000000000000000000000000008961ad740000000000000002000186a300000004000000000000000000000000000000000000000000000000"
	siwFrame11WriteFPDU = "0072c140da9fe0018a61ad74c57f00008a61ad7400000001000000000000000000000000000000000000000000000000000000010000002a00000000290f026baa80524400000001000200010000000000000000000000000000000673657276657200000000000673657276657200000000000000000000"
	siwFrame69WriteFPDU = "0022c1403e310f019b61ad74c5c7500068656c6c6f206f766572206e66732f72646d610a00000000"
)

func TestFrameReal(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		hex                   string
		kind                  FrameKind
		ird, ord              uint16
		p2p, zrtr, wrtr, rrtr bool
		ulp                   string
		r                     bool
		summary               string
	}{
		{"request", siwFrame4MPARequest, FrameRequest, 128, 0, false, false, false, false, "f6ab0e1801010303", true,
			"MPA Request rev=2 M=0 C=0 ird=128 ord=0 pd=RFC8797 v1 R=1 send=4096 recv=4096"},
		{"reply", siwFrame6MPAReply, FrameReply, 0, 128, false, false, false, false, "f6ab0e1801000303", false,
			"MPA Reply rev=2 M=0 C=0 ird=0 ord=128 pd=RFC8797 v1 R=0 send=4096 recv=4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f Frame
			if err := f.DecodeFromBytes(testcap.Hex(t, tc.hex), gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			if f.Kind != tc.kind || f.Revision != 2 || f.PDLength != 12 || f.Flags != 0x10 || !f.Enhanced() ||
				f.Markers() || f.CRC() || f.Rejected() || f.SiwGSO() || f.Reserved() != 0 || f.Overrun {
				t.Fatalf("header: %+v", f)
			}
			if f.IRDORD != IRDORDv2 || f.IRDValue() != tc.ird || f.ORDValue() != tc.ord || f.PeerToPeer() != tc.p2p ||
				f.ZeroLengthRTR() != tc.zrtr || f.WriteRTR() != tc.wrtr || f.ReadRTR() != tc.rrtr {
				t.Fatalf("IRD/ORD: %v %#x %#x", f.IRDORD, f.IRD, f.ORD)
			}
			if f.ULPOffset != 4 || hex.EncodeToString(f.ULPData) != tc.ulp {
				t.Fatalf("ULP data at %d: %x", f.ULPOffset, f.ULPData)
			}
			r := f.PD.Reading
			if !r.Valid || r.Offset != 0 || r.Message.RemoteInvalidation() != tc.r || r.Message.SendBytes() != 4096 || r.Message.ReceiveBytes() != 4096 {
				t.Fatalf("RFC 8797 reading: %+v", r)
			}
			if f.PD.ULP.Kind != pvtdata.ULPRPCRDMA {
				t.Fatalf("ULP %v", f.PD.ULP.Kind)
			}
			if got := string(f.AppendSummary(nil)); got != tc.summary {
				t.Fatalf("summary %q, want %q", got, tc.summary)
			}
			for _, fd := range f.AppendFindings(nil) {
				if fd.Severity != finding.SeverityInfo {
					t.Errorf("unexpected finding %v", fd)
				}
			}
			// Round trip.
			buf := gopacket.NewSerializeBuffer()
			if err := f.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), testcap.Hex(t, tc.hex)) {
				t.Fatalf("serialized\n%x\nwant\n%x", buf.Bytes(), testcap.Hex(t, tc.hex))
			}
			// The tree has the pvtdata decode under the private data.
			rec := &recorder{}
			f.VisitFields(rec)
			for _, want := range []string{"mpa.ird=" + itoa(int(tc.ird)), "mpa.ulp_data=" + tc.ulp, "[mpa.pvtdata", "pvtdata.ulp=rpcrdma-v1",
				"pvtdata.format_identifier=4138405400", "pvtdata.send_size=4096"} {
				if !strings.Contains(rec.text(), want) {
					t.Errorf("fields lack %q:\n%s", want, rec.text())
				}
			}
		})
	}
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Replace(hex.EncodeToString(nil), "", "", 0)) + fmtInt(i)
}

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// recorder is a field.Visitor that writes name=value lines.
type recorder struct{ b strings.Builder }

func (r *recorder) text() string { return r.b.String() }

func (r *recorder) Uint(f *field.Field, v uint64) { r.b.WriteString(f.Name + "=" + fmtUint(v) + "\n") }
func (r *recorder) Int(f *field.Field, v int64) {
	if v < 0 {
		r.b.WriteString(f.Name + "=-" + fmtUint(uint64(-v)) + "\n")
		return
	}
	r.b.WriteString(f.Name + "=" + fmtUint(uint64(v)) + "\n")
}
func (r *recorder) Bool(f *field.Field, v bool) {
	if v {
		r.b.WriteString(f.Name + "=1\n")
	} else {
		r.b.WriteString(f.Name + "=0\n")
	}
}
func (r *recorder) String(f *field.Field, v string) { r.b.WriteString(f.Name + "=" + v + "\n") }
func (r *recorder) Bytes(f *field.Field, v []byte) {
	r.b.WriteString(f.Name + "=" + hex.EncodeToString(v) + "\n")
}
func (r *recorder) Addr(f *field.Field, v netip.Addr) {
	r.b.WriteString(f.Name + "=" + v.String() + "\n")
}
func (r *recorder) Begin(f *field.Field) { r.b.WriteString("[" + f.Name + "\n") }
func (r *recorder) End()                 { r.b.WriteString("]\n") }
func fmtUint(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; v > 0; v /= 10 {
		i--
		b[i] = byte('0' + v%10)
	}
	return string(b[i:])
}

func TestFrameFlagsAndQuirks(t *testing.T) {
	ulp := pvtdata.Message{Identifier: pvtdata.FormatIdentifier, Version: 1, Flags: 1, SendSize: 3, RecvSize: 3}.Bytes()
	build := func(kind FrameKind, flags, rev uint8, pd []byte) []byte {
		f := Frame{Kind: kind, Flags: flags, Revision: rev, PrivateData: pd}
		buf := gopacket.NewSerializeBuffer()
		if err := f.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	codes := func(f *Frame) string {
		var s []string
		for _, fd := range f.AppendFindings(nil) {
			s = append(s, fd.Code)
		}
		return strings.Join(s, ",")
	}
	t.Run("v1 no IRD/ORD", func(t *testing.T) {
		var f Frame
		if err := f.DecodeFromBytes(build(FrameRequest, FlagCRC|FlagMarkers, 1, ulp[:]), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if !f.CRC() || !f.Markers() || f.IRDORD != IRDORDNone || f.ULPOffset != 0 || !f.PD.Reading.Valid {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("v2 p2p and RTR bits", func(t *testing.T) {
		pd := AppendIRDORD(nil, 16|IRDPeerToPeer|IRDZeroRTR, 8|ORDWriteRTR|ORDReadRTR, false)
		pd = append(pd, ulp[:]...)
		var f Frame
		if err := f.DecodeFromBytes(build(FrameReply, FlagEnhanced, 2, pd), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if f.IRDValue() != 16 || f.ORDValue() != 8 || !f.PeerToPeer() || !f.ZeroLengthRTR() || !f.WriteRTR() || !f.ReadRTR() {
			t.Fatalf("%v %#x %#x", f.IRDORD, f.IRD, f.ORD)
		}
	})
	t.Run("v2 little-endian quirk", func(t *testing.T) {
		pd := AppendIRDORD(nil, 16|IRDPeerToPeer, 8, true)
		pd = append(pd, ulp[:]...)
		var f Frame
		if err := f.DecodeFromBytes(build(FrameRequest, FlagEnhanced, 2, pd), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if f.IRDORD != IRDORDv2LittleEndian || f.IRDValue() != 16 || f.ORDValue() != 8 || !f.PeerToPeer() {
			t.Fatalf("%v %#x %#x", f.IRDORD, f.IRD, f.ORD)
		}
		if c := codes(&f); !strings.Contains(c, CodeIRDORDLittleEndian) {
			t.Fatalf("codes %s", c)
		}
	})
	t.Run("siw GSO flag and reserved", func(t *testing.T) {
		var f Frame
		if err := f.DecodeFromBytes(build(FrameRequest, FlagEnhanced|FlagSiwGSO|0x01, 2, AppendIRDORD(nil, 1, 1, false)), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		c := codes(&f)
		if !f.SiwGSO() || f.Reserved() != 1 || !strings.Contains(c, CodeGSOFlag) || !strings.Contains(c, CodeReservedFlags) {
			t.Fatalf("codes %s", c)
		}
	})
	t.Run("reject", func(t *testing.T) {
		var f Frame
		if err := f.DecodeFromBytes(build(FrameReply, FlagReject, 1, nil), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if !f.Rejected() || f.frameType() != 3 || !strings.Contains(codes(&f), CodeRejected) ||
			!strings.HasPrefix(string(f.AppendSummary(nil)), "MPA Reject") {
			t.Fatalf("%+v %s", f, codes(&f))
		}
	})
	t.Run("pd over 512", func(t *testing.T) {
		var f Frame
		if err := f.DecodeFromBytes(build(FrameRequest, 0, 1, make([]byte, 600)), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(codes(&f), CodePDLengthOver512) || f.Overrun {
			t.Fatal(codes(&f))
		}
	})
	t.Run("pd over a configured limit", func(t *testing.T) {
		var f Frame
		if err := f.DecodeFromBytes(build(FrameRequest, 0, 1, make([]byte, 200)), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(codes(&f), CodePDLengthOver512) {
			t.Fatal("200 octets reported with the default limit")
		}
		f.PDLimit = 100
		if !strings.Contains(codes(&f), CodePDLengthOver512) {
			t.Fatal(codes(&f))
		}
	})
	t.Run("pd overrun", func(t *testing.T) {
		b := build(FrameRequest, 0, 1, ulp[:])
		b = b[:len(b)-3]
		var f Frame
		var df testcap.TruncFlag
		if err := f.DecodeFromBytes(b, &df); err != nil {
			t.Fatal(err)
		}
		if !f.Overrun || !bool(df) || len(f.PrivateData) != 5 || !strings.Contains(codes(&f), CodePDLengthOverrun) {
			t.Fatalf("%+v %s", f, codes(&f))
		}
	})
	t.Run("errors", func(t *testing.T) {
		var f Frame
		err := f.DecodeFromBytes(testcap.Hex(t, siwFrame4MPARequest)[:10], gopacket.NilDecodeFeedback)
		if err == nil || !strings.Contains(err.Error(), "header: need 20 octets at offset 0, have 10") {
			t.Fatalf("err %v", err)
		}
		b := testcap.Hex(t, siwFrame4MPARequest)
		b[10] = 'X'
		if err := f.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err == nil || !strings.Contains(err.Error(), "key at offset 0") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestFrameKindOf(t *testing.T) {
	for _, tc := range []struct {
		in       string
		kind     FrameKind
		complete bool
	}{
		{"MPA ID Req Frame", FrameRequest, true},
		{"MPA ID Rep Frame!", FrameReply, true},
		{"MPA ID Re", FrameRequest, false},
		{"MPA ID Req", FrameRequest, false},
		{"MPA ID Rep F", FrameReply, false},
		{"MPX", 0, false},
		{"", FrameRequest, false},
	} {
		k, c := FrameKindOf([]byte(tc.in))
		if k != tc.kind || c != tc.complete {
			t.Errorf("%q: %v %v", tc.in, k, c)
		}
	}
}

func TestCRC32cWireOrder(t *testing.T) {
	// RFC 3720 B.4 (the CRC32c MPA uses, RFC 5044 §4.4): 32 octets of
	// zero give the digest octets aa 36 91 8a on the wire.
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], crc32.Checksum(make([]byte, 32), castagnoli))
	if hex.EncodeToString(b[:]) != "aa36918a" {
		t.Fatalf("%x", b)
	}
}

func TestFPDUReal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hex     string
		ulpdu   int
		pad     int
		tagged  bool
		opcode  Opcode
		qn, msn uint32
		stag    uint32
		to      uint64
		payload int
	}{
		{"send", siwFrame8SendFPDU, 86, 0, false, OpSend, 0, 1, 0, 0, 68},
		{"write", siwFrame11WriteFPDU, 114, 0, true, OpWrite, 0, 0, 0xda9fe001, 0x8a61ad74c57f0000, 100},
		{"write short", siwFrame69WriteFPDU, 34, 0, true, OpWrite, 0, 0, 0x3e310f01, 0x9b61ad74c5c75000, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := testcap.Hex(t, tc.hex)
			var f FPDU
			if err := f.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			if int(f.ULPDULength) != tc.ulpdu || len(f.Pad) != tc.pad || f.CRC != 0 || f.CRCStatus != CRCStatusNotNegotiated || len(f.Contents) != len(data) {
				t.Fatalf("%+v", f)
			}
			var d DDP
			if err := d.DecodeFromBytes(f.Payload, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			var r RDMAP
			if err := r.DecodeFromDDP(&d, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			if d.Tagged != tc.tagged || !d.Last || d.Version != 1 || r.Version != 1 || r.Opcode != tc.opcode ||
				d.QN != tc.qn || d.MSN != tc.msn || d.STag != tc.stag || d.TO != tc.to || len(r.Payload) != tc.payload {
				t.Fatalf("ddp %+v rdmap %+v", d, r)
			}
			if n := len(d.AppendFindings(nil)) + len(r.AppendFindings(nil)) + len(f.AppendFindings(nil)); n != 0 {
				t.Fatalf("%d findings", n)
			}
			// Build the same bytes back.
			buf := gopacket.NewSerializeBuffer()
			must(t, buf.Clear())
			pl, _ := buf.PrependBytes(len(r.Payload))
			copy(pl, r.Payload)
			d2 := d
			d2.RsvdULP = r.AppendRsvdULP(nil, d.Tagged)
			must(t, r.SerializeTo(buf, gopacket.SerializeOptions{}))
			must(t, d2.SerializeTo(buf, gopacket.SerializeOptions{}))
			f2 := FPDU{}
			must(t, f2.SerializeTo(buf, gopacket.SerializeOptions{}))
			if !bytes.Equal(buf.Bytes(), data) {
				t.Fatalf("serialized\n%x\nwant\n%x", buf.Bytes(), data)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// buildFPDU makes an FPDU carrying a DDP segment with the given options.
func buildFPDU(t testing.TB, opts FPDUOptions, d DDP, r RDMAP, payload []byte) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	pl, _ := buf.PrependBytes(len(payload))
	copy(pl, payload)
	d.RsvdULP = r.AppendRsvdULP(nil, d.Tagged)
	r.Tagged, r.MO = d.Tagged, d.MO
	must(t, r.SerializeTo(buf, gopacket.SerializeOptions{}))
	must(t, d.SerializeTo(buf, gopacket.SerializeOptions{}))
	f := FPDU{Options: opts}
	must(t, f.SerializeTo(buf, gopacket.SerializeOptions{}))
	return append([]byte(nil), buf.Bytes()...)
}

func TestFPDUCRC(t *testing.T) {
	send := DDP{Last: true, Version: 1, MSN: 7}
	op := RDMAP{Version: 1, Opcode: OpSend}
	good := buildFPDU(t, FPDUOptions{CRC: CRCNegotiated}, send, op, []byte("hello, rpc-over-rdma"))
	var f FPDU
	f.Options = FPDUOptions{CRC: CRCNegotiated}
	must(t, f.DecodeFromBytes(good, gopacket.NilDecodeFeedback))
	if f.CRCStatus != CRCStatusGood || f.CRC != f.CRCWant || f.CRC == 0 {
		t.Fatalf("good: %v %#x %#x", f.CRCStatus, f.CRC, f.CRCWant)
	}
	if len(f.AppendFindings(nil)) != 0 || string(f.AppendSummary(nil)) != "FPDU crc=good" {
		t.Fatal("good CRC reported")
	}
	bad := append([]byte(nil), good...)
	bad[10] ^= 0x40
	must(t, f.DecodeFromBytes(bad, gopacket.NilDecodeFeedback))
	fs := f.AppendFindings(nil)
	if f.CRCStatus != CRCStatusBad || len(fs) != 1 || fs[0].Code != CodeCRCBad || fs[0].Offset != len(bad)-4 {
		t.Fatalf("bad: %v %v", f.CRCStatus, fs)
	}
	// Unknown negotiation: a matching CRC is good, zeros are unknown.
	f.Options = FPDUOptions{CRC: CRCUnknown}
	must(t, f.DecodeFromBytes(good, gopacket.NilDecodeFeedback))
	if f.CRCStatus != CRCStatusGood {
		t.Fatal(f.CRCStatus)
	}
	noCRC := buildFPDU(t, FPDUOptions{}, send, op, []byte("hello, rpc-over-rdma"))
	must(t, f.DecodeFromBytes(noCRC, gopacket.NilDecodeFeedback))
	if f.CRCStatus != CRCStatusUnknown {
		t.Fatal(f.CRCStatus)
	}
}

func TestFPDUMarkers(t *testing.T) {
	payload := make([]byte, 1500)
	for i := range payload {
		payload[i] = byte(i)
	}
	send := DDP{Last: true, Version: 1, MSN: 1}
	op := RDMAP{Version: 1, Opcode: OpSend}
	for _, off := range []int{0, 4, 8, 100, 508, 1020, 1024, 3000} {
		opts := FPDUOptions{CRC: CRCNegotiated, Markers: true, StreamOffset: off}
		wire := buildFPDU(t, opts, send, op, payload)
		ulpduLen := DDPUntaggedHeaderLen + len(payload)
		if len(wire) != WireLen(ulpduLen, off, true) {
			t.Fatalf("off %d: wire %d, WireLen %d", off, len(wire), WireLen(ulpduLen, off, true))
		}
		if n, ok := PeekULPDULength(wire, off, true); !ok || n != ulpduLen {
			t.Fatalf("off %d: peek %d %v", off, n, ok)
		}
		// Markers sit at every multiple of 512 of the stream.
		for i := 0; i < len(wire); i++ {
			if (off+i)%MarkerInterval == 0 && i+4 <= len(wire)-4 {
				if binary.BigEndian.Uint16(wire[i:]) != 0 {
					t.Fatalf("off %d: marker at %d has reserved %x", off, i, wire[i:i+2])
				}
			}
		}
		var f FPDU
		f.Options = opts
		must(t, f.DecodeFromBytes(wire, gopacket.NilDecodeFeedback))
		if f.CRCStatus != CRCStatusGood || len(f.Markers) != MarkersIn(off, len(wire)) || len(f.Markers) < 2 {
			t.Fatalf("off %d: %v, %d markers", off, f.CRCStatus, len(f.Markers))
		}
		if fs := f.AppendFindings(nil); len(fs) != 0 {
			t.Fatalf("off %d: %v", off, fs)
		}
		var r RDMAP
		must(t, r.DecodeFromBytes(f.Payload, gopacket.NilDecodeFeedback))
		if !bytes.Equal(r.Payload, payload) {
			t.Fatalf("off %d: payload differs after marker removal", off)
		}
		// A wrong pointer is reported.
		m := f.Markers[len(f.Markers)-1]
		bad := append([]byte(nil), wire...)
		bad[m.Offset+3] ^= 1
		f.Options = FPDUOptions{Markers: true, StreamOffset: off}
		must(t, f.DecodeFromBytes(bad, gopacket.NilDecodeFeedback))
		if fs := f.AppendFindings(nil); len(fs) != 1 || fs[0].Code != CodeMarkerBad || fs[0].Offset != m.Offset {
			t.Fatalf("off %d: %v", off, fs)
		}
	}
	// The leading marker points at the FPDU that follows it with 0.
	wire := buildFPDU(t, FPDUOptions{Markers: true}, send, op, payload[:10])
	if hex.EncodeToString(wire[:4]) != "00000000" || binary.BigEndian.Uint16(wire[4:]) != uint16(DDPUntaggedHeaderLen+10) {
		t.Fatalf("%x", wire[:8])
	}
}

func TestDDPRDMAPMessages(t *testing.T) {
	t.Run("read request", func(t *testing.T) {
		rr := ReadRequest{SinkSTag: 0x11223344, SinkTO: 0x1000, Size: 8192, SrcSTag: 0x55667788, SrcTO: 0x2000}
		wire := buildFPDU(t, FPDUOptions{}, DDP{Last: true, Version: 1, QN: 1, MSN: 3}, RDMAP{Version: 1, Opcode: OpReadRequest, ReadRequest: rr}, nil)
		var f FPDU
		must(t, f.DecodeFromBytes(wire, gopacket.NilDecodeFeedback))
		var r RDMAP
		must(t, r.DecodeFromBytes(f.Payload, gopacket.NilDecodeFeedback))
		if r.Opcode != OpReadRequest || r.ReadRequest != rr || len(r.Payload) != 0 || len(r.AppendFindings(nil)) != 0 {
			t.Fatalf("%+v", r)
		}
		rec := &recorder{}
		r.VisitFields(rec)
		if !strings.Contains(rec.text(), "rdmap.rdmardsz=8192") {
			t.Fatal(rec.text())
		}
	})
	t.Run("send with invalidate", func(t *testing.T) {
		for _, op := range []Opcode{OpSendInvalidate, OpSendSEInval} {
			wire := buildFPDU(t, FPDUOptions{}, DDP{Last: true, Version: 1, MSN: 9}, RDMAP{Version: 1, Opcode: op, InvalidateSTag: 0xcafe0001}, []byte("x"))
			var f FPDU
			must(t, f.DecodeFromBytes(wire, gopacket.NilDecodeFeedback))
			var r RDMAP
			must(t, r.DecodeFromBytes(f.Payload, gopacket.NilDecodeFeedback))
			if r.Opcode != op || r.InvalidateSTag != 0xcafe0001 || !r.Opcode.Invalidates() || !r.Opcode.IsSend() {
				t.Fatalf("%+v", r)
			}
		}
	})
	t.Run("terminate", func(t *testing.T) {
		term := Terminate{Layer: TermLayerDDP, EType: 2, ErrCode: 1, HdrM: true, HdrD: true,
			DDPSegLen: 104, DDPHeader: testcap.Hex(t, "414300000000000000000000000100000000")}
		wire := buildFPDU(t, FPDUOptions{}, DDP{Last: true, Version: 1, QN: 2, MSN: 1}, RDMAP{Version: 1, Opcode: OpTerminate, Terminate: term}, nil)
		var f FPDU
		must(t, f.DecodeFromBytes(wire, gopacket.NilDecodeFeedback))
		var r RDMAP
		must(t, r.DecodeFromBytes(f.Payload, gopacket.NilDecodeFeedback))
		got := r.Terminate
		if got.Layer != TermLayerDDP || got.EType != 2 || got.ErrCode != 1 || !got.HdrM || !got.HdrD || got.HdrR ||
			got.DDPSegLen != 104 || !bytes.Equal(got.DDPHeader, term.DDPHeader) {
			t.Fatalf("%+v", got)
		}
		if e := got.Error(); e != "DDP: Untagged Buffer Error: Invalid QN" {
			t.Fatal(e)
		}
		fs := r.AppendFindings(nil)
		if len(fs) != 1 || fs[0].Code != CodeTerminate {
			t.Fatal(fs)
		}
		for _, c := range []struct {
			t    Terminate
			want string
		}{
			{Terminate{Layer: 0, EType: 1, ErrCode: 2}, "RDMA: Remote Protection Error: Access rights violation"},
			{Terminate{Layer: 0, EType: 2, ErrCode: 6}, "RDMA: Remote Operation Error: Unexpected OpCode"},
			{Terminate{Layer: 1, EType: 1, ErrCode: 3}, "DDP: Tagged Buffer Error: TO wrap"},
			{Terminate{Layer: 2, EType: 0, ErrCode: 2}, "LLP (MPA): MPA: Received MPA CRC does not match"},
		} {
			if e := c.t.Error(); e != c.want {
				t.Errorf("%q, want %q", e, c.want)
			}
		}
	})
	t.Run("wrong model and queue", func(t *testing.T) {
		wire := buildFPDU(t, FPDUOptions{}, DDP{Tagged: true, Last: true, Version: 1}, RDMAP{Version: 1, Opcode: OpSend}, []byte("abcd"))
		var f FPDU
		must(t, f.DecodeFromBytes(wire, gopacket.NilDecodeFeedback))
		var r RDMAP
		must(t, r.DecodeFromBytes(f.Payload, gopacket.NilDecodeFeedback))
		if fs := r.AppendFindings(nil); len(fs) != 1 || fs[0].Code != CodeRDMAPOpcode {
			t.Fatal(fs)
		}
		wire = buildFPDU(t, FPDUOptions{}, DDP{Last: true, Version: 1, QN: 1}, RDMAP{Version: 1, Opcode: OpSend}, []byte("abcd"))
		must(t, f.DecodeFromBytes(wire, gopacket.NilDecodeFeedback))
		must(t, r.DecodeFromBytes(f.Payload, gopacket.NilDecodeFeedback))
		if fs := r.AppendFindings(nil); len(fs) != 1 || !strings.Contains(fs[0].Message, "queue 0, not 1") {
			t.Fatal(fs)
		}
	})
	t.Run("errors name field and offset", func(t *testing.T) {
		for _, tc := range []struct {
			hex  string
			want string
		}{
			{"", "DDP: control: need 1 octets at offset 0, have 0"},
			{"c140da9fe001", "DDP: tagged header: need 14 octets at offset 0, have 6"},
			{"4141000000000000000100000000000000000000", "RDMAP: Read Request header: need 28 octets at offset 18, have 2"},
			{"4147000000000000000200000000000000001000", "RDMAP: Terminate Control: need 4 octets at offset 18, have 2"},
		} {
			var r RDMAP
			err := r.DecodeFromBytes(testcap.Hex(t, tc.hex), gopacket.NilDecodeFeedback)
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s: %v, want %s", tc.hex, err, tc.want)
			}
		}
		var f FPDU
		err := f.DecodeFromBytes(testcap.Hex(t, siwFrame8SendFPDU)[:50], gopacket.NilDecodeFeedback)
		if err == nil || !strings.Contains(err.Error(), "ULPDU_Length 86 needs 92 octets on the wire at offset 0, have 50") {
			t.Fatal(err)
		}
	})
}

func TestPadAndWireLen(t *testing.T) {
	for n, want := range map[int]int{0: 2, 1: 1, 2: 0, 3: 3, 86: 0, 114: 0, 34: 0} {
		if PadLen(n) != want {
			t.Errorf("PadLen(%d)=%d want %d", n, PadLen(n), want)
		}
	}
	if WireLen(86, 0, false) != 92 || WireLen(86, 0, true) != 96 || WireLen(86, 4, true) != 92 {
		t.Fatal(WireLen(86, 0, false), WireLen(86, 0, true), WireLen(86, 4, true))
	}
	if MarkersIn(0, 512) != 1 || MarkersIn(1, 511) != 0 || MarkersIn(1, 512) != 1 || MarkersIn(0, 1025) != 3 {
		t.Fatal("MarkersIn")
	}
}

// fpduStack is an FPDU and the DDP and RDMAP headers in it.
type fpduStack struct {
	f FPDU
	d DDP
	r RDMAP
}

func (s *fpduStack) decode(data []byte) error {
	if err := s.f.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		return err
	}
	if err := s.d.DecodeFromBytes(s.f.Payload, gopacket.NilDecodeFeedback); err != nil {
		return err
	}
	return s.r.DecodeFromDDP(&s.d, gopacket.NilDecodeFeedback)
}

func TestFPDUDecodeAllocs(t *testing.T) {
	data := testcap.Hex(t, siwFrame8SendFPDU)
	var s fpduStack
	n := testing.AllocsPerRun(100, func() {
		if s.decode(data) != nil {
			t.Fatal("decode failed")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per FPDU/DDP/RDMAP decode", n)
	}
}

func BenchmarkFPDUDecode(b *testing.B) {
	data := testcap.Hex(b, siwFrame8SendFPDU)
	var s fpduStack
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.decode(data)
	}
}

func BenchmarkFPDUDecodeMarkersCRC(b *testing.B) {
	payload := make([]byte, 1400)
	opts := FPDUOptions{CRC: CRCNegotiated, Markers: true, StreamOffset: 300}
	data := buildFPDU(b, opts, DDP{Last: true, Version: 1, MSN: 1}, RDMAP{Version: 1, Opcode: OpSend}, payload)
	f := FPDU{Options: opts}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := f.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil || f.CRCStatus != CRCStatusGood {
			b.Fatal(err, f.CRCStatus)
		}
	}
}

func BenchmarkFrameDecode(b *testing.B) {
	data := testcap.Hex(b, siwFrame4MPARequest)
	var f Frame
	b.ReportAllocs()
	for b.Loop() {
		_ = f.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
	}
}
