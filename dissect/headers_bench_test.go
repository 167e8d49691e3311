package dissect

import (
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/field/fieldtest"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// headerBenchFrames are the first frames of CMPD_BENCH_PCAP (the bench
// capture of make bench), or of the real rxe capture.
func headerBenchFrames(b *testing.B) []source.Frame {
	frames := testcap.Frames(b, testcap.BenchCapture(b))
	if len(frames) > 20000 {
		frames = frames[:20000]
	}
	// One buffer, the frames in order behind 16-octet record headers, as
	// in the memory-mapped pcap file the commands read.
	n := 0
	for _, f := range frames {
		n += 16 + len(f.Data)
	}
	buf := make([]byte, 0, n)
	for i := range frames {
		buf = append(buf, make([]byte, 16)...)
		at := len(buf)
		buf = append(buf, frames[i].Data...)
		frames[i].Data = buf[at:len(buf):len(buf)]
	}
	return frames
}

// BenchmarkHeaders times the per-packet header decoding alone: the
// record's reset, the layers from Ethernet to the BTH's extension headers
// (decodeLayers) and the collection of their findings; not the ICRC, the
// Send reassembly or the ULP decoding. ns/op is per packet.
func BenchmarkHeaders(b *testing.B) {
	frames := headerBenchFrames(b)
	d := New(Options{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f := &frames[i]
		if i++; i == len(frames) {
			i = 0
		}
		r := &d.rec
		r.Reset()
		r.Frame, r.Data = f.Number, f.Data
		r.Add(&d.frame, 0)
		icrc := icrcAt{ip: -1, grh: -1, lrh: -1}
		d.finders = d.finders[:0]
		if _, err := d.decodeLayers(layers.LayerTypeEthernet, f.Data, &icrc); err != nil {
			b.Fatal(err)
		}
		d.collectFindings()
	}
}

// BenchmarkVisitHeaders times VisitFields of the header layers (Ethernet …
// BTH and extension headers; not the frame and ULP layers) with a visitor
// that only counts. Each of 512 frames is decoded by a Dissector of its
// own beforehand, so that its record stays valid and nothing but visiting
// is timed. ns/op is per packet.
func BenchmarkVisitHeaders(b *testing.B) {
	frames := headerBenchFrames(b)
	if len(frames) > 512 {
		frames = frames[len(frames)/2 : len(frames)/2+512]
	}
	var hdrs [][]field.Layer
	for i := range frames {
		var ls []field.Layer
		for _, l := range New(Options{}).Dissect(&frames[i]).Layers[1:] {
			switch l.Proto().Name {
			case "mad", "cm", "rpcrdma", "rpc", "nfs":
				continue
			}
			ls = append(ls, l)
		}
		hdrs = append(hdrs, ls)
	}
	var v fieldtest.Counter
	i := 0
	for b.Loop() {
		for _, l := range hdrs[i] {
			l.VisitFields(&v)
		}
		if i++; i == len(hdrs) {
			i = 0
		}
	}
}
