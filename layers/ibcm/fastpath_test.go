package ibcm

import (
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// fastParser is a DecodingLayerParser as dissect builds one for Ethernet
// captures: gopacket's Ethernet, Dot1Q, IPv4, IPv6 and UDP, then a Stack.
type fastParser struct {
	eth     layers.Ethernet
	dot1q   layers.Dot1Q
	ip4     layers.IPv4
	ip6     layers.IPv6
	udp     layers.UDP
	payload gopacket.Payload
	stack   *Stack
	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func newFastParser() *fastParser {
	f := &fastParser{stack: NewStack(), decoded: make([]gopacket.LayerType, 0, 16)}
	ls := []gopacket.DecodingLayer{&f.eth, &f.dot1q, &f.ip4, &f.ip6, &f.udp, &f.payload}
	ls = append(ls, f.stack.DecodingLayers()...)
	f.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, ls...)
	f.parser.IgnoreUnsupported = true
	return f
}

// decode decodes one frame and checks the ICRC from the IP header on, as
// dissect does.
func (f *fastParser) decode(data []byte) error {
	err := f.parser.DecodeLayers(data, &f.decoded)
	ipStart := -1
	v6 := false
	for _, t := range f.decoded {
		switch t {
		case layers.LayerTypeIPv4:
			ipStart = len(data) - len(f.ip4.Contents) - len(f.ip4.Payload)
		case layers.LayerTypeIPv6:
			ipStart, v6 = len(data)-len(f.ip6.Contents)-len(f.ip6.Payload), true
		case LayerTypeBTH:
			if ipStart >= 0 {
				if _, c, ok := CheckRoCEv2ICRC(data[ipStart:], v6); ok {
					f.stack.BTH.SetICRCComputed(c)
				}
			}
		}
	}
	return err
}

func realRCData(t testing.TB) [][]byte {
	frames := testcap.Data(t, testcap.RXE)
	var out [][]byte
	for _, fr := range frames {
		p := gopacket.NewPacket(fr, layers.LinkTypeEthernet, gopacket.Default)
		if b, ok := p.Layer(LayerTypeBTH).(*BTH); ok && b.OpCode < 0x20 {
			out = append(out, fr)
		}
	}
	return out
}

// TestFastPathNoAllocs decodes the real capture's RC data packets (SENDs,
// RDMA WRITEs, ACKs) with a DecodingLayerParser and checks that decoding
// and the ICRC check allocate nothing.
func TestFastPathNoAllocs(t *testing.T) {
	frames := realRCData(t)
	if len(frames) < 90 {
		t.Fatalf("only %d RC frames", len(frames))
	}
	f := newFastParser()
	for _, fr := range frames {
		if err := f.decode(fr); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if f.stack.BTH.ICRCStatus != CRCGood {
			t.Fatalf("ICRC %s on %v", f.stack.BTH.ICRCStatus, f.decoded)
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		_ = f.decode(frames[i%len(frames)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per RC packet, want 0", allocs)
	}
}

// TestFastPathCM decodes CM messages through the same parser: the CM layer
// takes its attribute ID from the linked MAD.
func TestFastPathCM(t *testing.T) {
	frames := testcap.Data(t, testcap.RXE)
	f := newFastParser()
	var names []string
	for _, fr := range frames {
		if err := f.decode(fr); err != nil {
			t.Fatalf("decode: %v", err)
		}
		for _, lt := range f.decoded {
			if lt == LayerTypeCM {
				names = append(names, f.stack.CM.Name())
			}
		}
	}
	if got := strings.Join(names, " "); got != "REQ REP RTU DREQ DREP" {
		t.Fatalf("CM via DecodingLayerParser: %s", got)
	}
}

// TestFastPathOtherLinkTypes decodes the synthetic native IB and ERF
// captures with DecodingLayerParsers that start at the LRH and the ERF
// header.
func TestFastPathOtherLinkTypes(t *testing.T) {
	for file, first := range map[string]gopacket.LayerType{
		"synth-ibcm-ib247-grh-cm-all.pcap": LayerTypeLRH,
		"synth-ibcm-erf-cm-all.pcap":       LayerTypeERF,
	} {
		frames := testcap.Data(t, testcap.Synthetic(file))
		s := NewStack()
		var payload gopacket.Payload
		p := gopacket.NewDecodingLayerParser(first, append(s.DecodingLayers(), &payload)...)
		var decoded []gopacket.LayerType
		cms := 0
		for _, fr := range frames {
			if err := p.DecodeLayers(fr, &decoded); err != nil {
				t.Fatalf("%s: %v (%v)", file, err, decoded)
			}
			if s.LRH.VCRCStatus != CRCGood {
				t.Errorf("%s: VCRC %s", file, s.LRH.VCRCStatus)
			}
			if decoded[len(decoded)-1] == LayerTypeCM {
				cms++
			}
		}
		if cms != len(frames) {
			t.Errorf("%s: %d of %d frames reached the CM layer", file, cms, len(frames))
		}
	}
}

// BenchmarkFastPath decodes a mix of the real capture's packets (CM MADs
// and RC data) with the DecodingLayerParser and the ICRC check.
func BenchmarkFastPath(b *testing.B) {
	frames := testcap.Data(b, testcap.RXE)
	bytes := 0
	for _, fr := range frames {
		bytes += len(fr)
	}
	b.SetBytes(int64(bytes / len(frames)))
	benchFastPath(b, frames)
}

// BenchmarkFastPathRCData is the same on RC data packets only (the bulk of
// a multi-GB capture).
func BenchmarkFastPathRCData(b *testing.B) { benchFastPath(b, realRCData(b)) }

// benchFastPath decodes frames round-robin with the DecodingLayerParser.
func benchFastPath(b *testing.B, frames [][]byte) {
	f := newFastParser()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = f.decode(frames[i%len(frames)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

// BenchmarkNewPacket is gopacket.NewPacket on the same mix, for comparison.
func BenchmarkNewPacket(b *testing.B) {
	frames := testcap.Data(b, testcap.RXE)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = gopacket.NewPacket(frames[i%len(frames)], layers.LinkTypeEthernet, gopacket.NoCopy)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}
