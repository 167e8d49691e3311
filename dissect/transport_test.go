package dissect

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// TestAppendIPv4: every octet value in every position is written as
// netip writes it; other lengths go through netip.
func TestAppendIPv4(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 4; pos++ {
			ip := net.IP{192, 0, 2, 1}
			ip[pos] = byte(c)
			want := netip.AddrFrom4([4]byte(ip)).String()
			if got := string(appendIPv4([]byte("x"), ip)); got != "x"+want {
				t.Fatalf("%v: %q, want %q", []byte(ip), got, "x"+want)
			}
		}
	}
	for _, ip := range []net.IP{nil, net.ParseIP("192.0.2.1"), net.ParseIP("2001:db8::1"), {1, 2, 3}} {
		if got, want := string(appendIPv4(nil, ip)), string(addrOf(ip).AppendTo(nil)); got != want {
			t.Errorf("%v: %q, want %q", ip, got, want)
		}
	}
}

// TestEtherNext: the adapters' NextLayerType of Ethernet and VLAN is
// gopacket's for every EtherType (and 802.3 length).
func TestEtherNext(t *testing.T) {
	var e Ethernet
	var q VLAN
	for v := 0; v < 1<<16; v++ {
		et := layers.EthernetType(v)
		e.EthernetType = et
		if g, w := e.NextLayerType(), e.Ethernet.NextLayerType(); g != w {
			t.Fatalf("Ethernet type 0x%04x: %v, want %v", v, g, w)
		}
		q.Type = et
		if g, w := q.NextLayerType(), q.Dot1Q.NextLayerType(); g != w {
			t.Fatalf("VLAN type 0x%04x: %v, want %v", v, g, w)
		}
	}
}

// TestIPNext: the adapters' NextLayerType of IPv4 and IPv6 is gopacket's
// for every protocol, fragment state and HopByHop presence.
func TestIPNext(t *testing.T) {
	var ip4 IPv4
	var ip6 IPv6
	for p := 0; p < 256; p++ {
		for _, flags := range []layers.IPv4Flag{0, layers.IPv4DontFragment, layers.IPv4MoreFragments, layers.IPv4EvilBit | layers.IPv4DontFragment} {
			for _, off := range []uint16{0, 1, 0x1fff} {
				ip4.Protocol, ip4.Flags, ip4.FragOffset = layers.IPProtocol(p), flags, off
				if g, w := ip4.NextLayerType(), ip4.IPv4.NextLayerType(); g != w {
					t.Fatalf("IPv4 protocol %d flags %v offset %d: %v, want %v", p, flags, off, g, w)
				}
			}
		}
		for _, hbh := range []*layers.IPv6HopByHop{nil, {}} {
			ip6.NextHeader, ip6.HopByHop = layers.IPProtocol(p), hbh
			if hbh != nil {
				hbh.NextHeader = layers.IPProtocol(255 - p)
			}
			if g, w := ip6.NextLayerType(), ip6.IPv6.NextLayerType(); g != w {
				t.Fatalf("IPv6 next header %d HopByHop %v: %v, want %v", p, hbh != nil, g, w)
			}
		}
	}
}

// eachRandomPrefix hands check 100,000 random-length prefixes of buf, each
// filled with random octets (check may set some before decoding).
func eachRandomPrefix(rng *rand.Rand, buf []byte, check func([]byte)) {
	for range 100000 {
		n := rng.IntN(len(buf) + 1)
		for i := range buf[:n] {
			buf[i] = byte(rng.Uint32())
		}
		check(buf[:n])
	}
}

// compareDecode decodes data with the adapter (got) and with gopacket's
// own layer (want), each reused across calls as the Dissector reuses its
// layers, and compares the error and the truncation feedback; when both
// decoded, the slices fields returns (same bytes of one array), then every
// field (g and w, and ok for what DeepEqual does not see), then the next
// layer type.
func compareDecode(t *testing.T, data []byte, got, want gopacket.DecodingLayer,
	fields func() (g, w any, slices [][2][]byte, ok bool)) {
	t.Helper()
	var tg, tw testcap.TruncFlag
	eg, ew := got.DecodeFromBytes(data, &tg), want.DecodeFromBytes(data, &tw)
	if !testcap.SameOutcome(t, data, eg, ew, tg, tw) {
		return
	}
	g, w, slices, ok := fields()
	for _, s := range slices {
		if !testcap.SameBytes(s[0], s[1]) {
			t.Fatalf("% x: slices differ:\n got %+v\nwant %+v", data, g, w)
		}
	}
	if !ok || !reflect.DeepEqual(g, w) {
		t.Fatalf("% x:\n got %+v\nwant %+v", data, g, w)
	}
	if g, w := got.NextLayerType(), want.NextLayerType(); g != w {
		t.Fatalf("% x: NextLayerType %v, want %v", data, g, w)
	}
}

// checkIPv4 decodes data with the adapter and with gopacket's IPv4 (each
// reused across calls, as the Dissector reuses its layers) and compares
// every field, the error and the truncation feedback.
func checkIPv4(t *testing.T, got *IPv4, want *layers.IPv4, data []byte) {
	t.Helper()
	compareDecode(t, data, got, want, func() (any, any, [][2][]byte, bool) {
		g := &got.IPv4
		return g, want, [][2][]byte{{g.Contents, want.Contents}, {g.Payload, want.Payload}, {g.SrcIP, want.SrcIP},
			{g.DstIP, want.DstIP}, {g.Padding, want.Padding}}, cap(g.Options) == cap(want.Options)
	})
}

// TestIPv4Decode: the adapter's IPv4 decoding is gopacket's on every IPv4
// header of the test captures, on mutations of their IHL, total length
// and captured length, and on random headers.
func TestIPv4Decode(t *testing.T) {
	got, want := &IPv4{}, &layers.IPv4{}
	rng := rand.New(rand.NewPCG(3, 4))
	for i, h := range captureHeaders(t, layers.LayerTypeIPv4, 1000) {
		checkIPv4(t, got, want, h)
		if i%10 != 0 {
			continue
		}
		buf := make([]byte, len(h)+8)
		for ihl := 0; ihl < 16; ihl++ {
			for _, l := range []int{0, 19, 20, 4 * ihl, len(h) - 1, len(h), len(h) + 1, 0xffff} {
				copy(buf, h)
				buf[0] = buf[0]&0xf0 | byte(ihl)
				binary.BigEndian.PutUint16(buf[2:], uint16(l))
				if ihl > 5 && rng.IntN(2) == 0 {
					buf[20] = byte(rng.IntN(3)) // end of options, no-op or a short option
				}
				for _, n := range []int{0, 19, 20, 21, 4 * ihl, len(h) - 1, len(h), len(h) + 8} {
					if n <= len(buf) {
						checkIPv4(t, got, want, buf[:n])
					}
				}
			}
		}
	}
	eachRandomPrefix(rng, make([]byte, 80), func(buf []byte) {
		if rng.IntN(2) == 0 && len(buf) > 0 {
			buf[0] = 0x45 // the common header, with a random length
		}
		checkIPv4(t, got, want, buf)
	})
}

// TestRecordReset: Reset clears every field but the reused slices'
// capacity and the Send state (a field added to Record without clearing in
// Reset fails here).
func TestRecordReset(t *testing.T) {
	var r Record
	v := reflect.ValueOf(&r).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int:
			f.SetInt(7)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 2, 5))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Uint64:
			f.SetUint(7)
		case reflect.Struct:
			switch f.Type() {
			case reflect.TypeOf(time.Time{}):
				f.Set(reflect.ValueOf(time.Unix(5, 6)))
			case reflect.TypeOf(Headers{}):
				f.Set(reflect.ValueOf(Headers{BTH: &ibcm.BTH{}, BTHAt: 3}))
			case reflect.TypeOf(gopacket.Flow{}):
				f.Set(reflect.ValueOf(gopacket.NewFlow(layers.EndpointIPv4, []byte{1, 2, 3, 4}, []byte{5, 6, 7, 8})))
			default:
				t.Fatalf("field %s: %s not handled", v.Type().Field(i).Name, f.Type())
			}
		default:
			t.Fatalf("field %s: %s not handled", v.Type().Field(i).Name, f.Kind())
		}
	}
	layersAt, offsetsAt, findingsAt := &r.Layers[:1][0], &r.Offsets[:1][0], &r.Findings[:1][0]
	r.Reset()
	if len(r.Layers) != 0 || len(r.Offsets) != 0 || len(r.Findings) != 0 ||
		&r.Layers[:1][0] != layersAt || &r.Offsets[:1][0] != offsetsAt || &r.Findings[:1][0] != findingsAt {
		t.Error("Reset did not keep the slices' arrays, emptied")
	}
	want := Record{Layers: r.Layers, Offsets: r.Offsets, Findings: r.Findings}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("after Reset: %+v", r)
	}
}

// checkEthernet decodes data with the adapter and with gopacket's Ethernet
// (each reused across calls) and compares every field, the error and the
// truncation feedback.
func checkEthernet(t *testing.T, got *Ethernet, want *layers.Ethernet, data []byte) {
	t.Helper()
	compareDecode(t, data, got, want, func() (any, any, [][2][]byte, bool) {
		g := &got.Ethernet
		return g, want, [][2][]byte{{g.Contents, want.Contents}, {g.Payload, want.Payload}, {g.SrcMAC, want.SrcMAC},
			{g.DstMAC, want.DstMAC}}, true
	})
}

// TestEthernetDecode: the adapter's Ethernet decoding is gopacket's on
// every Ethernet frame of the test captures, on 802.3 lengths around the
// frame's, on short frames and on random frames.
func TestEthernetDecode(t *testing.T) {
	files := testcap.Glob(t, "pcaps/real/*.pcap")
	synth := testcap.Glob(t, "pcaps/synthetic/*.pcap")
	got, want := &Ethernet{}, &layers.Ethernet{}
	rng := rand.New(rand.NewPCG(5, 6))
	n := 0
	for _, file := range append(files, synth...) {
		for _, f := range testcap.Frames(t, file) {
			if f.LinkType != source.LinkTypeEthernet {
				continue
			}
			n++
			checkEthernet(t, got, want, f.Data)
			if n%10 != 0 {
				continue
			}
			buf := append([]byte(nil), f.Data...)
			for _, l := range []int{0, 1, len(buf) - 15, len(buf) - 14, len(buf) - 13, 0x5ff, 0x600, 0x8100, 0xffff} {
				binary.BigEndian.PutUint16(buf[12:], uint16(l))
				for _, c := range []int{0, 13, 14, 15, len(buf) - 1, len(buf)} {
					checkEthernet(t, got, want, buf[:c])
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d Ethernet frames", n)
	}
	eachRandomPrefix(rng, make([]byte, 64), func(buf []byte) {
		if len(buf) >= 14 && rng.IntN(2) == 0 {
			buf[12], buf[13] = 0, byte(rng.IntN(64)) // an 802.3 length near the frame's
		}
		checkEthernet(t, got, want, buf)
	})
}

// checkVLAN decodes data with the adapter and with gopacket's Dot1Q (each
// reused across calls) and compares every field, the error and the
// truncation feedback.
func checkVLAN(t *testing.T, got *VLAN, want *layers.Dot1Q, data []byte) {
	t.Helper()
	compareDecode(t, data, got, want, func() (any, any, [][2][]byte, bool) {
		g := &got.Dot1Q
		return g, want, [][2][]byte{{g.Contents, want.Contents}, {g.Payload, want.Payload}}, true
	})
}

// TestVLANDecode: the adapter's 802.1Q decoding is gopacket's on every
// tag of the test captures, on every TCI with EtherTypes and 802.3 lengths
// around the payload's, on short tags and on random tags.
func TestVLANDecode(t *testing.T) {
	got, want := &VLAN{}, &layers.Dot1Q{}
	tags := captureHeaders(t, layers.LayerTypeDot1Q, 0)
	for _, h := range tags {
		checkVLAN(t, got, want, h)
	}
	t.Logf("%d tags from the captures", len(tags))
	buf := make([]byte, 40)
	for tci := 0; tci < 1<<16; tci++ {
		binary.BigEndian.PutUint16(buf, uint16(tci))
		for _, et := range []int{0, 35, 36, 37, 0x5ff, 0x600, 0x0800, 0x86dd, 0x8100, 0x8915, 0xffff} {
			binary.BigEndian.PutUint16(buf[2:], uint16(et))
			for _, n := range []int{0, 3, 4, 5, 40} {
				if tci%251 == 0 || n == 40 {
					checkVLAN(t, got, want, buf[:n])
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	eachRandomPrefix(rng, buf, func(buf []byte) {
		if len(buf) >= 4 && rng.IntN(2) == 0 {
			buf[2], buf[3] = 0, byte(rng.IntN(48))
		}
		checkVLAN(t, got, want, buf)
	})
}

// captureHeaders returns, from every Ethernet frame of the test captures,
// the bytes from each header of layer type lt on (found by gopacket's own
// decoding); fewer than atLeast fails t (the test would prove little).
func captureHeaders(t *testing.T, lt gopacket.LayerType, atLeast int) [][]byte {
	t.Helper()
	files := testcap.Glob(t, "pcaps/real/*.pcap")
	synth := testcap.Glob(t, "pcaps/synthetic/*.pcap")
	var out [][]byte
	for _, file := range append(files, synth...) {
		for _, f := range testcap.Frames(t, file) {
			if f.LinkType != source.LinkTypeEthernet {
				continue
			}
			p := gopacket.NewPacket(f.Data, layers.LinkTypeEthernet, gopacket.NoCopy)
			for _, l := range p.Layers() {
				if l.LayerType() != lt || len(l.LayerContents()) == 0 {
					continue
				}
				c := l.LayerContents()
				for at := 0; at < len(f.Data); at++ {
					if &f.Data[at] == &c[0] {
						out = append(out, f.Data[at:])
						break
					}
				}
			}
		}
	}
	if len(out) < atLeast {
		t.Fatalf("only %d %v headers", len(out), lt)
	}
	return out
}

// checkIPv6 decodes data with the adapter and with gopacket's IPv6 (each
// reused across calls) and compares every field, the error and the
// truncation feedback.
func checkIPv6(t *testing.T, got *IPv6, want *layers.IPv6, data []byte) {
	t.Helper()
	compareDecode(t, data, got, want, func() (any, any, [][2][]byte, bool) {
		g := &got.IPv6
		return g, want, [][2][]byte{{g.Contents, want.Contents}, {g.Payload, want.Payload}, {g.SrcIP, want.SrcIP},
			{g.DstIP, want.DstIP}}, (g.HopByHop == nil) == (want.HopByHop == nil)
	})
}

// TestIPv6Decode: the adapter's IPv6 decoding is gopacket's on every IPv6
// header of the test captures, on mutations of their next header, payload
// length and captured length (HopByHop headers, jumbograms, truncation),
// and on random headers.
func TestIPv6Decode(t *testing.T) {
	got, want := &IPv6{}, &layers.IPv6{}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, h := range captureHeaders(t, layers.LayerTypeIPv6, 50) {
		checkIPv6(t, got, want, h)
		buf := make([]byte, len(h)+8)
		for _, nh := range []int{0, 6, 17, 43, 59} {
			for _, l := range []int{0, 1, 8, len(h) - 41, len(h) - 40, len(h) - 39, 0xffff} {
				copy(buf, h)
				buf[6] = byte(nh)
				binary.BigEndian.PutUint16(buf[4:], uint16(l))
				if nh == 0 {
					// A HopByHop header: next header, length, then a jumbo
					// payload option or padding.
					buf[40], buf[41] = byte(rng.IntN(64)), 0
					buf[42], buf[43] = []byte{0xc2, 1, 0}[rng.IntN(3)], 4
					binary.BigEndian.PutUint32(buf[44:], uint32(rng.IntN(len(h)+16)))
				}
				for _, n := range []int{0, 39, 40, 41, 48, len(h) - 1, len(h), len(h) + 8} {
					if n <= len(buf) {
						checkIPv6(t, got, want, buf[:n])
					}
				}
			}
		}
	}
	eachRandomPrefix(rng, make([]byte, 96), func(buf []byte) {
		if len(buf) >= 40 && rng.IntN(2) == 0 {
			buf[0], buf[4], buf[5] = 0x60, 0, byte(rng.IntN(64)) // a payload length near the packet's
		}
		checkIPv6(t, got, want, buf)
	})
}

// FuzzTransportDecode: on any bytes, the adapters' own Ethernet, 802.1Q,
// IPv4 and IPv6 decoding is gopacket's (fields, slices, errors, truncation,
// next layer), also when a layer is reused after decoding other bytes.
func FuzzTransportDecode(f *testing.F) {
	for _, fr := range testcap.Frames(f, testcap.RXE)[:8] {
		f.Add(fr.Data)
		f.Add(fr.Data[14:])
	}
	for _, fr := range testcap.Frames(f, testcap.Real("live-rxe6-rfc8797.pcap"))[:4] {
		f.Add(fr.Data[14:])
	}
	ge, we := &Ethernet{}, &layers.Ethernet{}
	gq, wq := &VLAN{}, &layers.Dot1Q{}
	g4, w4 := &IPv4{}, &layers.IPv4{}
	g6, w6 := &IPv6{}, &layers.IPv6{}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range [][]byte{data, data[min(len(data), 3):]} {
			checkEthernet(t, ge, we, d)
			checkVLAN(t, gq, wq, d)
			checkIPv4(t, g4, w4, d)
			checkIPv6(t, g6, w6, d)
		}
	})
}
