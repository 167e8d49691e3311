package dissect

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// recordFacts is what a test compares of a record: its layers' names and
// its findings' codes and severities.
type recordFacts struct {
	layers   []string
	findings []string
	bth      *ibcm.BTH
}

func factsOf(r *Record) recordFacts {
	var f recordFacts
	for _, l := range r.Layers {
		f.layers = append(f.layers, l.Proto().Name)
	}
	for _, x := range r.Findings {
		f.findings = append(f.findings, x.Code+" "+x.Severity.String())
	}
	if b := r.Headers().BTH; b != nil {
		c := *b
		f.bth = &c
	}
	return f
}

// TestSnapCutRoCE: each frame of a real RoCEv2 capture cut by a snap length
// decodes as the whole frame does as far as its captured octets go: the
// same layers up to where the octets end, the BTH's fields and payload
// length (the wire's) the same, no ICRC shown for a packet whose ICRC was
// not captured, and no finding the whole frame has not but the one
// dissect.truncated (running out of captured octets is not a broken rule).
func TestSnapCutRoCE(t *testing.T) {
	path := testcap.Real("live-rxe4-nfs42.pcap")
	var whole []recordFacts
	d := New(Options{})
	for _, f := range testcap.Frames(t, path) {
		whole = append(whole, factsOf(d.Dissect(&f)))
	}
	cut := 0
	for _, snap := range testcap.SnapLengths {
		d := New(Options{})
		frames := testcap.SnapCut(t, path, snap)
		for i, f := range frames {
			r := d.Dissect(&f)
			got, want := factsOf(r), whole[i]
			layers := got.layers
			if n := len(layers); n > 0 && layers[n-1] == "send" && f.CaptureLength < f.Length {
				// A Send whose ULP is known by its connection's setup,
				// when the setup's REQ was cut, or by octets not captured.
				layers = layers[:n-1]
			}
			if !slices.Equal(layers, want.layers[:min(len(layers), len(want.layers))]) {
				t.Errorf("-s %d frame %d: layers %v, not a prefix of the whole frame's %v", snap, f.Number, got.layers, want.layers)
			}
			for _, c := range got.findings {
				if c != "dissect.truncated warning" && !slices.Contains(want.findings, c) {
					t.Errorf("-s %d frame %d: %s, which the whole frame has not", snap, f.Number, c)
				}
			}
			if f.CaptureLength == f.Length {
				continue
			}
			cut++
			if !slices.Contains(got.findings, "dissect.truncated warning") {
				t.Errorf("-s %d frame %d: cut, without dissect.truncated: %v", snap, f.Number, got.findings)
			}
			if b, w := got.bth, want.bth; b != nil {
				if b.OpCode != w.OpCode || b.PSN != w.PSN || b.PayloadLength != w.PayloadLength {
					t.Errorf("-s %d frame %d: BTH %v payload %d, whole %v payload %d", snap, f.Number, b, b.PayloadLength, w, w.PayloadLength)
				}
				if !b.Uncaptured() || b.ICRC != 0 || b.ICRCStatus != ibcm.CRCUnchecked {
					t.Errorf("-s %d frame %d: ICRC 0x%08x status %d of a packet whose ICRC was not captured", snap, f.Number, b.ICRC, b.ICRCStatus)
				}
			}
		}
	}
	if cut < 100 {
		t.Errorf("%d frames cut", cut)
	}
}

// TestSnapCutWireShort: a CM message short on the wire (the IP and UDP
// lengths end it 10 octets into its fixed fields) stays malformed when the
// snap length also cuts the frame: what it needs is more than the wire
// had, not only more than was captured.
func TestSnapCutWireShort(t *testing.T) {
	req := testcap.Frames(t, testcap.Real("live-rxe4-nfs42.pcap"))[0].Data
	// Ethernet 14, IPv4 20, UDP 8, BTH 12, DETH 8, MAD 24: the CM at 86.
	const wire = 86 + 10 + 4 // 10 octets of the REQ, the ICRC
	data := slices.Clone(req[:wire])
	binary.BigEndian.PutUint16(data[16:], wire-14)
	binary.BigEndian.PutUint16(data[38:], wire-34)
	for _, capLen := range []int{wire, wire - 6} {
		f := source.Frame{Number: 1, LinkType: 1, Data: data[:capLen], CaptureLength: capLen, Length: wire}
		r := New(Options{}).Dissect(&f)
		if !finding.Has(r.Findings, CodeMalformed) {
			t.Errorf("captured %d of %d: %v, want %s", capLen, wire, r.Findings, CodeMalformed)
		}
	}
	// The same frame whole on the wire, cut by the capture: not malformed.
	f := source.Frame{Number: 1, LinkType: 1, Data: req[:wire-6], CaptureLength: wire - 6, Length: len(req)}
	r := New(Options{}).Dissect(&f)
	if finding.Has(r.Findings, CodeMalformed) || !finding.Has(r.Findings, CodeTruncated) {
		t.Errorf("captured %d of %d: %v, want only %s", wire-6, len(req), r.Findings, CodeTruncated)
	}
}

// TestWireLength: a TCP segment's payload length on the wire, from its IP
// packet's length, when the snap length cut it; the captured length when
// it was not.
func TestWireLength(t *testing.T) {
	frames := testcap.Frames(t, testcap.Real("live-siw4-nfs42.pcap"))
	n := 0
	for _, f := range frames {
		whole := New(Options{}).Dissect(&f).Headers().TCP
		if whole == nil || len(whole.Payload) == 0 {
			continue
		}
		want := len(whole.Payload)
		for _, snap := range testcap.SnapLengths {
			if snap >= len(f.Data) || snap < 66+1 {
				continue
			}
			c := f
			c.Data, c.CaptureLength = f.Data[:snap], snap
			r := New(Options{}).Dissect(&c)
			tcp := r.Headers().TCP
			if tcp == nil {
				t.Fatalf("frame %d -s %d: no TCP", f.Number, snap)
			}
			if got := r.WireLength(tcp.Payload); got != want || len(tcp.Payload) >= want {
				t.Errorf("frame %d -s %d: WireLength %d (captured %d), want %d", f.Number, snap, got, len(tcp.Payload), want)
			}
			n++
		}
		if got := New(Options{}).Dissect(&f); got.WireLength(got.Headers().TCP.Payload) != want {
			t.Errorf("frame %d whole: WireLength %d, want %d", f.Number, got.WireLength(got.Headers().TCP.Payload), want)
		}
	}
	if n == 0 {
		t.Fatal("no segment cut")
	}
}
