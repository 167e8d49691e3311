package dissect

import (
	"fmt"
	"math/rand"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// dumpVisitor renders every field of a record, for comparing records.
type dumpVisitor struct{ b *strings.Builder }

func (v dumpVisitor) Uint(f *field.Field, x uint64)     { fmt.Fprintf(v.b, " %s=%d", f.Name, x) }
func (v dumpVisitor) Int(f *field.Field, x int64)       { fmt.Fprintf(v.b, " %s=%d", f.Name, x) }
func (v dumpVisitor) Bool(f *field.Field, x bool)       { fmt.Fprintf(v.b, " %s=%t", f.Name, x) }
func (v dumpVisitor) String(f *field.Field, x string)   { fmt.Fprintf(v.b, " %s=%q", f.Name, x) }
func (v dumpVisitor) Bytes(f *field.Field, x []byte)    { fmt.Fprintf(v.b, " %s=%x", f.Name, x) }
func (v dumpVisitor) Addr(f *field.Field, x netip.Addr) { fmt.Fprintf(v.b, " %s=%s", f.Name, x) }
func (v dumpVisitor) Begin(f *field.Field)              { fmt.Fprintf(v.b, " %s{", f.Name) }
func (v dumpVisitor) End()                              { v.b.WriteString(" }") }

// dumpRecord renders everything a consumer can see of r.
func dumpRecord(r *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "frame %d src=%s len=%d/%d lt=%d end=%t\n", r.Frame, r.Source, r.CaptureLength, r.Length, r.LinkType, r.EndOfInput())
	for i, l := range r.Layers {
		fmt.Fprintf(&b, "  %s@%d:", l.Proto().Name, r.Offsets[i])
		l.VisitFields(dumpVisitor{&b})
		if s, ok := l.(field.Summarizer); ok {
			fmt.Fprintf(&b, " | %s", s.AppendSummary(nil))
		}
		b.WriteByte('\n')
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  finding %+v\n", f)
	}
	// The Headers, as the indexes of the layers they point to.
	h := r.Headers()
	fmt.Fprintf(&b, "  headers ip4=%d ip6=%d grh=%d inner=%t tcp=%d lrh=%d bth=%d at %d aeth=%d reth=%d ieth=%d mad=%d cm=%d\n",
		layerAt(r, h.IPv4), layerAt(r, h.IPv6), layerAt(r, h.GRH), h.GRHInner, layerAt(r, h.TCP), layerAt(r, h.LRH),
		layerAt(r, h.BTH), h.BTHAt, layerAt(r, h.AETH), layerAt(r, h.RETH), layerAt(r, h.IETH), layerAt(r, h.MAD), layerAt(r, h.CM))
	return b.String()
}

// layerAt is the index in r's layers of the layer l points to, -1 when l
// is nil, -2 when it is none of them.
func layerAt[T any, P interface {
	*T
	field.Layer
}](r *Record, l P) int {
	if l == nil {
		return -1
	}
	for i, x := range r.Layers {
		if x == field.Layer(l) {
			return i
		}
	}
	return -2
}

// eachFrameDamaged calls fn with every frame of every real and synthetic
// capture, then with copies of it damaged (cut short, or up to three of
// its first 80 octets flipped, in turn: the decoders' error paths) drawn
// from rng, and returns the numbers of captures, frames and damaged copies.
// fn gets the capture's name, with " (damaged)" for a copy.
func eachFrameDamaged(t *testing.T, rng *rand.Rand, copies int, fn func(name string, f *source.Frame)) (files, frames, damaged int) {
	t.Helper()
	var names []string
	for _, g := range []string{testcap.Path("pcaps/real/*.pcap*"), testcap.Path("pcaps/synthetic/*.pcap*")} {
		m, _ := filepath.Glob(g)
		names = append(names, m...)
	}
	if len(names) < 40 {
		t.Fatalf("found only %d captures", len(names))
	}
	for _, name := range names {
		src, err := source.OpenFiles([]string{name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var f source.Frame
		for src.Next(&f) == nil {
			orig := append([]byte(nil), f.Data...)
			fn(name, &f)
			frames++
			for k := 0; k < copies; k++ {
				d := append([]byte(nil), orig...)
				if k%2 == 0 && len(d) > 0 {
					d = d[:rng.Intn(len(d))]
				} else if len(d) > 0 {
					for n := 0; n < 1+rng.Intn(3); n++ {
						d[rng.Intn(min(len(d), 80))] ^= byte(1 + rng.Intn(255))
					}
				}
				g := f
				g.Data, g.CaptureLength = d, len(d)
				fn(name+" (damaged)", &g)
				damaged++
			}
		}
		src.Close()
	}
	return len(names), frames, damaged
}

// TestHeaderWalkMatchesGopacket: headerWalk (the Dissector's and
// Ahead's walk over Ethernet, VLAN, IP, UDP and TCP, GRE, ERSPAN type II
// and VXLAN) decodes the layers
// gopacket's DecodingLayerParser decodes with gopacket's own layers, in the
// same order, with the same error and truncation verdicts, on every frame
// of every real and synthetic capture and on damaged copies of them
// (flipped bytes, cut frames: the error paths).
func TestHeaderWalkMatchesGopacket(t *testing.T) {
	var (
		eth   layers.Ethernet
		vlan  layers.Dot1Q
		ip4   layers.IPv4
		ip6   layers.IPv6
		udp   layers.UDP
		tcp   layers.TCP
		gre   layers.GRE
		span  layers.ERSPANII
		vxlan layers.VXLAN
		types []gopacket.LayerType
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &vlan, &ip4, &ip6, &udp, &tcp, &gre, &span, &vxlan)
	parser.IgnoreUnsupported = true
	var h commonHeaders
	roce := rocePorts(Options{})
	h.udp.roce = &roce
	walked := 0
	files, frames, damaged := eachFrameDamaged(t, rand.New(rand.NewSource(1)), 8, func(name string, f *source.Frame) {
		if f.LinkType != source.LinkTypeEthernet {
			return
		}
		var fb testcap.TruncFlag
		w := headerWalk{h: &h, df: &fb}
		rec := Record{Data: f.Data}
		_, _, werr := w.walk(&rec, layers.LayerTypeEthernet, f.Data)
		var got []gopacket.LayerType
		for i, l := range rec.Layers {
			lt := l.(gopacket.Layer).LayerType()
			got = append(got, lt)
			if werr != nil || slices.Contains(rec.Layers[i+1:], l) {
				continue // decoded again (IP in IP, VLAN tags), or failed: its bytes are the later one's
			}
			if want := offsetIn(f.Data, l.(gopacket.Layer).LayerContents()); rec.Offsets[i] != want || (i == 0 && want != 0) {
				t.Fatalf("%s frame %d: %s at offset %d, want %d", name, f.Number, lt, rec.Offsets[i], want)
			}
		}
		if w.n != len(got) || w.n > 0 && headerTypes[w.last] != got[w.n-1] {
			t.Fatalf("%s frame %d: walked %d headers, the last %s; added %v", name, f.Number, w.n, headerTypes[w.last], got)
		}
		walked++
		err := parser.DecodeLayers(f.Data, &types)
		if (werr != nil) != (err != nil) || bool(fb) != parser.Truncated || fmt.Sprint(got) != fmt.Sprint(types) {
			t.Fatalf("%s frame %d: walked %v (error %v, truncated %t); gopacket %v (error %v, truncated %t)",
				name, f.Number, got, werr, fb, types, err, parser.Truncated)
		}
	})
	if walked == 0 {
		t.Fatal("no Ethernet frames")
	}
	t.Logf("%d captures: %d frames and %d damaged copies, %d Ethernet frames walked", files, frames, damaged, walked)
}
