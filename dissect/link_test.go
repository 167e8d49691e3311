package dissect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// TestLinkTypes: frames of the link types beyond Ethernet, built from a
// real RoCEv2 frame (its IPv4 packet, and its Ethernet header with tags
// inserted), decode to the same IP, UDP and IB layers, with the link
// layer's fields as tshark names them.
func TestLinkTypes(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	eth := frames[4].Data
	ip := eth[14:]
	cat := func(b ...[]byte) []byte {
		var out []byte
		for _, x := range b {
			out = append(out, x...)
		}
		return out
	}
	sll := func(halen byte) []byte {
		// Packet type 0, ARPHRD_INFINIBAND, the given address length,
		// 8 address octets, IPv4.
		return []byte{0, 0, 0, 32, 0, halen, 1, 2, 3, 4, 5, 6, 7, 8, 0x08, 0x00}
	}
	sll2 := []byte{0x08, 0x00, 0, 0, 0, 0, 0, 7, 0, 1, 4, 6, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0, 0}
	// LINKTYPE_IPOIB: a unicast pseudo-header (20 zero octets, flags and
	// QPN 0x000048, GID fe80::1), or a GRH (version 6, traffic class
	// 0x12, flow label 0x34567, source QPN 0x000049, GIDs fe80::2 and
	// fe80::1); then the type and reserved octets.
	gid := func(last byte) []byte { return []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last} }
	ipoibUni := func(typ uint16) []byte {
		return cat(make([]byte, 20), []byte{0, 0, 0, 0x48}, gid(1), []byte{byte(typ >> 8), byte(typ), 0, 0})
	}
	ipoibGRH := cat([]byte{0x61, 0x23, 0x45, 0x67, 0, 0, 0, 0x49}, gid(2), gid(1), []byte{0x08, 0x00, 0, 0})
	rest := ":ipv4:udp:bth"
	for _, tc := range []struct {
		name   string
		link   int
		data   []byte
		layers string
		fields map[string]string
		code   string // a finding expected
	}{
		{name: "ethernet", link: 1, data: eth, layers: "frame:ethernet" + rest},
		{name: "raw ipv4", link: LinkTypeRaw, data: ip, layers: "frame" + rest},
		{name: "ipv4", link: LinkTypeIPv4, data: ip, layers: "frame" + rest},
		{name: "sll ipoib (20-octet address, 8 kept)", link: LinkTypeLinuxSLL, data: cat(sll(20), ip), layers: "frame:sll" + rest,
			fields: map[string]string{"sll.hatype": "32", "sll.halen": "20", "sll.src.other": "0102030405060708", "sll.etype": "0x0800"}},
		{name: "sll2", link: LinkTypeLinuxSLL2, data: cat(sll2, ip), layers: "frame:sll" + rest,
			fields: map[string]string{"sll.ifindex": "7", "sll.pkttype": "4", "sll.src.eth": "11042563100175", "sll.etype": "0x0800"}},
		{name: "sll with a VLAN tag put back", link: LinkTypeLinuxSLL2,
			data:   cat([]byte{0x81, 0x00}, sll2[2:], []byte{0x00, 0x64, 0x08, 0x00}, ip),
			layers: "frame:sll:vlan" + rest, fields: map[string]string{"vlan.id": "100"}},
		{name: "802.1ad and 802.1Q", link: 1, data: cat(eth[:12], []byte{0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x00, 0x14}, eth[12:]),
			layers: "frame:ethernet:vlan:vlan" + rest, fields: map[string]string{"vlan.id": "10,20", "ethernet.type": "0x88a8", "vlan.etype": "0x8100,0x0800"}},
		{name: "five tags", link: 1, data: cat(eth[:12], []byte{0x81, 0, 0, 1, 0x81, 0, 0, 2, 0x81, 0, 0, 3, 0x81, 0, 0, 4, 0x81, 0, 0, 5}, eth[12:]),
			layers: "frame:ethernet:vlan:vlan:vlan:vlan", code: CodeMalformed},
		{name: "short sll", link: LinkTypeLinuxSLL, data: sll(6)[:10], layers: "frame", code: CodeMalformed},
		{name: "short sll2", link: LinkTypeLinuxSLL2, data: sll2[:19], layers: "frame", code: CodeMalformed},
		{name: "sll netlink", link: LinkTypeLinuxSLL, data: []byte{0, 4, 3, 0x38, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2}, layers: "frame:sll"},
		{name: "ipoib unicast", link: LinkTypeIPoIB, data: cat(ipoibUni(0x0800), ip), layers: "frame:ipoib" + rest,
			fields: map[string]string{"ipoib.daddr.qpn": "0x000048", "ipoib.dgid": "fe80::1", "ipoib.type": "0x0800", "ipoib.reserved": "0x0000",
				"ipoib.grh.sgid": ""}},
		{name: "ipoib grh", link: LinkTypeIPoIB, data: cat(ipoibGRH, ip), layers: "frame:ipoib" + rest,
			fields: map[string]string{"ipoib.grh.ipver": "6", "ipoib.grh.tclass": "18", "ipoib.grh.flowlabel": "214375",
				"ipoib.grh.sqpn": "0x000049", "ipoib.grh.sgid": "fe80::2", "ipoib.dgid": "fe80::1", "ipoib.daddr.qpn": ""}},
		{name: "ipoib arp", link: LinkTypeIPoIB, data: cat(ipoibUni(0x0806), make([]byte, 28)), layers: "frame:ipoib",
			fields: map[string]string{"ipoib.type": "0x0806"}},
		{name: "ipoib unknown type", link: LinkTypeIPoIB, data: cat(ipoibUni(0x8915), ip), layers: "frame:ipoib",
			fields: map[string]string{"ipoib.type": "0x8915"}},
		{name: "ipoib header only", link: LinkTypeIPoIB, data: ipoibUni(0x0800), layers: "frame:ipoib"},
		{name: "short ipoib", link: LinkTypeIPoIB, data: ipoibUni(0x0800)[:43], layers: "frame", code: CodeMalformed},
		{name: "unknown link type", link: 999, data: ip, layers: "frame", code: CodeUnknownLinkType},
	} {
		d := New(Options{})
		f := source.Frame{Number: 1, LinkType: tc.link, Data: tc.data, CaptureLength: len(tc.data), Length: len(tc.data)}
		r := d.Dissect(&f)
		if got := layerNames(r); !strings.HasPrefix(got, tc.layers) || (tc.code == "" && strings.Count(got, ":") > strings.Count(tc.layers, ":")+2) {
			t.Errorf("%s: layers %s, want %s…", tc.name, got, tc.layers)
		}
		var codes []string
		for _, fi := range r.Findings {
			codes = append(codes, fi.Code)
		}
		if tc.code == "" && len(codes) > 0 || tc.code != "" && (len(codes) != 1 || codes[0] != tc.code) {
			t.Errorf("%s: findings %v, want %q", tc.name, codes, tc.code)
		}
		vals := testcap.TsharkValues{}
		for _, l := range r.Layers {
			l.VisitFields(vals)
		}
		for k, want := range tc.fields {
			if got := vals.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, got, want)
			}
		}
		if b := r.Layer("bth"); b != nil && tc.name != "ethernet" {
			// The same IB packet, at its new offset: the ICRC verdict too.
			d2 := New(Options{})
			r2 := d2.Dissect(&frames[4])
			if want, got := fieldsOf(r2.Layer("bth")), fieldsOf(b); got != want {
				t.Errorf("%s: bth %s, want %s", tc.name, got, want)
			}
		}
	}
}

// fieldsOf is a layer's fields as text.
func fieldsOf(l field.Layer) string {
	vals := testcap.TsharkValues{}
	l.VisitFields(vals)
	return fmt.Sprint(map[string][]string(vals))
}

// TestAheadCooked: on "tcpdump -i any" captures the hook computes the
// ICRC ahead for the RoCEv2 packets after the cooked header, and what it
// computed changes no record.
func TestAheadCooked(t *testing.T) {
	for _, file := range testcap.Glob(t, "pcaps/converted/*.tcpdump-any-*.pcap") {
		hook := Ahead(Options{})
		ahead, plain := New(Options{}), New(Options{})
		kinds := map[uint8]int{}
		frames := testcap.Frames(t, file)
		for i := range frames {
			f := &frames[i]
			hook(f)
			kinds[f.Ahead.Kind]++
			sameWithoutAhead(t, file, f, ahead, plain)
		}
		if strings.Contains(file, "rxe") && kinds[aheadRoCEv2IPv4] != len(frames) {
			t.Errorf("%s: ICRC computed ahead for %d of %d frames", file, kinds[aheadRoCEv2IPv4], len(frames))
		}
	}
}

// FuzzIPoIBLink: any 44 octets or more decode as a LINKTYPE_IPOIB header
// that SerializeTo writes back to bytes decoding to the same header and
// payload (the octets the pseudo-header leaves unread may differ).
func FuzzIPoIBLink(f *testing.F) {
	for _, fr := range testcap.Frames(f, testcap.Synthetic("synth-ipoib-iwarp.pcap")) {
		f.Add(fr.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p IPoIBLink
		if err := p.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			if len(data) >= IPoIBPseudoLen+4 {
				t.Fatalf("%d octets: %v", len(data), err)
			}
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &p, gopacket.Payload(p.Payload)); err != nil {
			t.Fatal(err)
		}
		var q IPoIBLink
		if err := q.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		if fieldsOf(&p) != fieldsOf(&q) || string(p.Payload) != string(q.Payload) || p.NextLayerType() != q.NextLayerType() {
			t.Fatalf("decoded %s, again after SerializeTo %s", fieldsOf(&p), fieldsOf(&q))
		}
	})
}
