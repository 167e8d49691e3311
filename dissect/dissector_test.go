package dissect

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

func layerNames(r *Record) string {
	var s []string
	for _, l := range r.Layers {
		s = append(s, l.Proto().Name)
	}
	return strings.Join(s, ":")
}

func TestRealCapturesTransport(t *testing.T) {
	for _, tc := range []struct {
		file, prefix string
		l4off        int
	}{
		{testcap.RXE, "frame:ethernet:ipv4:udp", 34},
		{testcap.SIW, "frame:ethernet:ipv4:tcp", 34},
	} {
		d := New(Options{})
		n := 0
		fs, err := source.OpenFiles([]string{tc.file}, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = d.Run(fs, func(r *Record) error {
			n++
			if !strings.HasPrefix(layerNames(r), tc.prefix) {
				t.Errorf("%s frame %d: layers %s, want prefix %s", tc.file, r.Frame, layerNames(r), tc.prefix)
			}
			if r.Offsets[0] != 0 || r.Offsets[1] != 0 || r.Offsets[2] != 14 || r.Offsets[3] != tc.l4off {
				t.Errorf("%s frame %d: offsets %v", tc.file, r.Frame, r.Offsets)
			}
			for _, f := range r.Findings {
				if f.Severity == finding.SeverityError {
					t.Errorf("%s frame %d: %v", tc.file, r.Frame, f)
				}
			}
			ip := r.Layers[2].(*IPv4)
			if !strings.HasPrefix(ip.SrcIP.String(), "192.0.2.") && !strings.HasPrefix(ip.SrcIP.String(), "198.51.100.") {
				t.Errorf("frame %d: src %v", r.Frame, ip.SrcIP)
			}
			return nil
		})
		if err != nil || n < 50 {
			t.Fatalf("%s: %d records, %v", tc.file, n, err)
		}
	}
}

func TestMalformedAndTruncated(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := New(Options{})

	// An IPv4 header length of 3 words: gopacket refuses it.
	bad := frames[3]
	bad.Data = append([]byte(nil), bad.Data...)
	bad.Data[14] = 0x43
	r := d.Dissect(&bad)
	if len(r.Findings) != 1 || r.Findings[0].Code != CodeMalformed || r.Findings[0].Layer != "ipv4" || r.Findings[0].Offset != 14 || r.Findings[0].Frame != bad.Number {
		t.Fatalf("bad IHL: findings %+v", r.Findings)
	}
	if layerNames(r) != "frame:ethernet" {
		t.Fatalf("bad IHL: layers %s", layerNames(r))
	}

	// Cut inside the IPv4 header.
	cut := frames[3]
	cut.Data = cut.Data[:20]
	r = d.Dissect(&cut)
	if len(r.Findings) == 0 || r.Findings[0].Layer != "ipv4" || r.Findings[0].Offset != 14 {
		t.Fatalf("cut: findings %+v", r.Findings)
	}

	// Unknown link type.
	odd := frames[3]
	odd.LinkType = 105
	r = d.Dissect(&odd)
	if len(r.Findings) != 1 || r.Findings[0].Code != CodeUnknownLinkType {
		t.Fatalf("link type 105: %+v", r.Findings)
	}

	// Empty frame.
	empty := frames[3]
	empty.Data = nil
	r = d.Dissect(&empty)
	if len(r.Findings) == 0 {
		t.Fatal("empty frame: no finding")
	}
}

func TestVLANAndIPv6(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	// Insert an 802.1Q tag into an IPv4 frame.
	f := frames[4]
	tagged := append([]byte(nil), f.Data[:12]...)
	tagged = append(tagged, 0x81, 0x00, 0x20, 0x64) // prio 1, VLAN 100
	tagged = append(tagged, f.Data[12:]...)
	f.Data = tagged
	d := New(Options{})
	r := d.Dissect(&f)
	if !strings.HasPrefix(layerNames(r), "frame:ethernet:vlan:ipv4:udp") {
		t.Fatalf("tagged: %s", layerNames(r))
	}
	v := r.Layers[2].(*VLAN)
	if v.VLANIdentifier != 100 || v.Priority != 1 || r.Offsets[3] != 18 {
		t.Fatalf("vlan %+v offsets %v", v.Dot1Q, r.Offsets)
	}

	// A minimal IPv6/UDP frame.
	udp := []byte{0xc0, 0x00, 0x12, 0xb7, 0x00, 0x0c, 0x00, 0x00, 1, 2, 3, 4}
	ip6 := []byte{0x60, 0, 0, 0, 0, byte(len(udp)), 17, 64}
	ip6 = append(ip6, make([]byte, 32)...)
	ip6[8+15], ip6[24+15] = 1, 2
	eth := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x86, 0xdd}
	f6 := source.Frame{Number: 1, LinkType: 1, Data: append(append(eth, ip6...), udp...)}
	r = d.Dissect(&f6)
	if !strings.HasPrefix(layerNames(r), "frame:ethernet:ipv6:udp") {
		t.Fatalf("ipv6: %s %v", layerNames(r), r.Findings)
	}
	if u := r.Layers[3].(*UDP); u.DstPort != 4791 || binary.BigEndian.Uint16(u.Contents[0:2]) != 0xc000 {
		t.Fatalf("udp %+v", u.UDP)
	}
}

// TestNoAllocs: the decode path allocates nothing for a non-CM RoCE packet,
// decoded by the Dissector or by the reading goroutine (Ahead). (TCP
// segments go through iWARP reassembly, which is not held to it.)
func TestNoAllocs(t *testing.T) {
	files := []string{testcap.RXE, testcap.Path("pcaps", "converted", "live-rxe4-nfs42.tcpdump-any-linux-sll2.pcap")}
	for i := range files {
		testNoAllocs(t, files[i], false)
		testNoAllocs(t, files[i], true)
	}
}

// testNoAllocs is TestNoAllocs for the frames of file, with Ahead's work
// done on them when ahead.
func testNoAllocs(t *testing.T, file string, ahead bool) {
	frames := testcap.Frames(t, file)
	if ahead {
		hook := Ahead(Options{})
		for i := range frames {
			hook(&frames[i])
		}
	}
	d := New(Options{})
	for i := range frames {
		d.Dissect(&frames[i])
	}
	// Pick the frames that are not CM (UDP payload not a MAD: the CM
	// exchange is the first frames and the DREQ/DREP at the end).
	var picked []*source.Frame
	for i := range frames {
		r := d.Dissect(&frames[i])
		// CM MADs may allocate; RPC-over-RDMA decoding (rpcsend.go) is
		// held to its own allocation tests.
		if r.Layer("cm") == nil && r.Layer("mad") == nil && r.Layer("rpcrdma") == nil {
			picked = append(picked, &frames[i])
		}
	}
	if len(picked) == 0 {
		t.Fatalf("%s: no non-CM frame", file)
	}
	predecoded := 0
	for _, f := range picked {
		if f.Decoded != nil {
			predecoded++
		}
		if n := testing.AllocsPerRun(100, func() { d.Dissect(f) }); n != 0 {
			t.Errorf("%s frame %d (%s, predecoded %t): %.1f allocations per packet", file, f.Number, layerNames(d.Dissect(f)), f.Decoded != nil, n)
		}
	}
	if ahead && predecoded < len(picked)/2 {
		t.Fatalf("%s: %d of %d frames predecoded", file, predecoded, len(picked))
	}
}

func BenchmarkDissect(b *testing.B) {
	for _, file := range []string{testcap.RXE, testcap.SIW} {
		frames := testcap.Frames(b, file)
		b.Run(file[strings.LastIndex(file, "/")+1:], func(b *testing.B) {
			d := New(Options{})
			b.ReportAllocs()
			var bytes int64
			for _, f := range frames {
				bytes += int64(len(f.Data))
			}
			b.SetBytes(bytes / int64(len(frames)))
			for i := 0; b.Loop(); i++ {
				d.Dissect(&frames[i%len(frames)])
			}
		})
	}
}

func FuzzDissect(f *testing.F) {
	for _, file := range []string{testcap.RXE, testcap.SIW} {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		frames := testcap.Frames(f, file)
		for i := 0; i < len(frames); i += 7 {
			f.Add(uint8(1), frames[i].Data)
		}
		_ = raw
	}
	f.Add(uint8(247), []byte{0xf0, 0x02, 0, 5, 0, 1, 0, 2})
	f.Add(uint8(197), make([]byte, 40))
	for file, lt := range map[string]uint8{"live-rxe4-nfs42.tcpdump-any-linux-sll.pcap": 3, "live-siw4-nfs42.tcpdump-any-linux-sll2.pcap": 4} {
		frames := testcap.Frames(f, testcap.Path("pcaps", "converted", file))
		for i := 0; i < len(frames); i += 11 {
			f.Add(lt, frames[i].Data)
		}
	}
	for _, fr := range testcap.Frames(f, testcap.Synthetic("synth-ipoib-iwarp.pcap")) {
		f.Add(uint8(7), fr.Data)
	}
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		d := New(Options{RoCEPorts: []uint16{1234}})
		// The link types dissected, and others (lt itself).
		link := int(lt)
		switch lt % 10 {
		case 0:
			link = source.LinkTypeEthernet
		case 1:
			link = source.LinkTypeInfiniBand
		case 2:
			link = source.LinkTypeERF
		case 3:
			link = LinkTypeLinuxSLL
		case 4:
			link = LinkTypeLinuxSLL2
		case 5:
			link = LinkTypeRaw
		case 6:
			link = LinkTypeIPv6
		case 7:
			link = LinkTypeIPoIB
		}
		fr := source.Frame{Number: 1, LinkType: link, Data: data, CaptureLength: len(data), Length: len(data)}
		r := d.Dissect(&fr)
		if len(r.Layers) != len(r.Offsets) {
			t.Fatalf("%d layers, %d offsets", len(r.Layers), len(r.Offsets))
		}
		for i, off := range r.Offsets {
			if off < -1 || off > len(data) {
				t.Fatalf("layer %d offset %d outside %d-byte frame", i, off, len(data))
			}
		}
		for _, fi := range r.Findings {
			if fi.Frame != 1 || fi.Code == "" {
				t.Fatalf("finding %+v", fi)
			}
		}
		d.Finish(func(*Record) {})
	})
}

// nativeIB turns a RoCEv2 frame into a LINKTYPE_INFINIBAND frame (LRH with
// LNH 2, then the BTH onwards, ICRC and VCRC recomputed) and, with erf, into
// an ibdump ERF type 21 record around it.
func nativeIB(t testing.TB, roce []byte, erf bool) []byte {
	t.Helper()
	ib := roce[42:] // Ethernet 14 + IPv4 20 + UDP 8
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	ls := []gopacket.SerializableLayer{&ibcm.LRH{LNH: 2, DLID: 1, SLID: 2, SL: 0, VL: 0}, gopacket.Payload(ib)}
	if erf {
		ls = append([]gopacket.SerializableLayer{&ibcm.ERF{Type: 21}}, ls...)
	}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestNativeIBAndERF(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := New(Options{})
	for _, erf := range []bool{false, true} {
		for i, f := range frames[:12] {
			ib := f
			ib.Data = nativeIB(t, f.Data, erf)
			ib.LinkType = source.LinkTypeInfiniBand
			want := "frame:lrh:bth"
			if erf {
				ib.LinkType = source.LinkTypeERF
				want = "frame:erf:lrh:bth"
			}
			r := d.Dissect(&ib)
			if !strings.HasPrefix(layerNames(r), want) {
				t.Fatalf("erf=%v frame %d: layers %s, want %s… (%v)", erf, i+1, layerNames(r), want, r.Findings)
			}
			bth, _ := r.Layer("bth").(*ibcm.BTH)
			lrh, _ := r.Layer("lrh").(*ibcm.LRH)
			if bth.ICRCStatus != ibcm.CRCGood || lrh.VCRCStatus != ibcm.CRCGood {
				t.Errorf("erf=%v frame %d: ICRC %v VCRC %v", erf, i+1, bth.ICRCStatus, lrh.VCRCStatus)
			}
			if i < 3 && r.Layer("cm") == nil {
				t.Errorf("erf=%v frame %d: no CM layer: %s", erf, i+1, layerNames(r))
			}
			src, dst := AppendEndpoints(r, nil, nil)
			if string(src) != "LID 2" || string(dst) != "LID 1" {
				t.Errorf("endpoints %q → %q", src, dst)
			}
		}
	}
}

func TestRoCEv2ICRCAndExtraPort(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := New(Options{RoCEPorts: []uint16{9999}})
	for _, f := range frames {
		r := d.Dissect(&f)
		bth, ok := r.Layer("bth").(*ibcm.BTH)
		if !ok {
			t.Fatalf("frame %d: no BTH: %s", f.Number, layerNames(r))
		}
		if bth.ICRCStatus != ibcm.CRCGood {
			t.Errorf("frame %d: ICRC %v", f.Number, bth.ICRCStatus)
		}
	}
	// The same packet on UDP port 9999 decodes as RoCEv2 only when asked.
	f := frames[4]
	f.Data = append([]byte(nil), f.Data...)
	binary.BigEndian.PutUint16(f.Data[36:], 9999)
	if r := d.Dissect(&f); r.Layer("bth") == nil {
		t.Fatalf("port 9999: %s", layerNames(r))
	}
	if r := New(Options{}).Dissect(&f); r.Layer("bth") != nil {
		t.Fatalf("port 9999 without the option: %s", layerNames(r))
	}
	// A flipped payload byte makes the ICRC bad, with a finding placed in
	// the frame.
	f = frames[5]
	f.Data = append([]byte(nil), f.Data...)
	f.Data[len(f.Data)-6] ^= 0xff
	r := d.Dissect(&f)
	found := false
	for _, fi := range r.Findings {
		if fi.Code == ibcm.CodeICRCBad {
			found = fi.Offset == len(f.Data)-4 && fi.Frame == f.Number
		}
	}
	if !found {
		t.Errorf("bad ICRC: findings %+v (frame length %d)", r.Findings, len(f.Data))
	}
}

// TestSince: since is time.Time.Sub on capture timestamps, at the edges of
// its fast path and beyond them (where it falls back to Sub, which
// saturates).
func TestSince(t *testing.T) {
	secs := []int64{0, 1, -1, 1700000000, 1<<32 - 1, -(1<<32 - 1), 1 << 32, -(1 << 32), 1 << 40, -(1 << 40), 1 << 62, -(1 << 62)}
	nanos := []int64{0, 1, 999999999, 500000000}
	for _, a := range secs {
		for _, an := range nanos {
			for _, b := range secs {
				for _, bn := range nanos {
					ta, tb := time.Unix(a, an).UTC(), time.Unix(b, bn).UTC()
					if got, want := stampOf(ta).since(stampOf(tb)), ta.Sub(tb); got != want {
						t.Errorf("since(%v, %v) = %v, Sub %v", ta, tb, got, want)
					}
				}
			}
		}
	}
}
