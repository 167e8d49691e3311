package dissect

import (
	"math/rand"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// TestAheadICRCSameRecords: records dissected with the ICRC computed ahead
// (AheadICRC, as source.Prefetch runs it) are the records dissected
// without, field for field, on every real and synthetic capture (RoCEv2
// over IPv4, IPv6 and VLANs, RoCEv1, link type 247 with and without GRH,
// ERF, iWARP) and on damaged copies of their frames, damaged before the
// hook ran; and the hook's result is used for every kind of packet.
func TestAheadICRCSameRecords(t *testing.T) {
	hook := AheadICRC(Options{})
	ahead, plain := New(Options{}), New(Options{})
	kinds := map[uint8]int{}
	eachFrameDamaged(t, rand.New(rand.NewSource(2)), 6, func(name string, f *source.Frame) {
		hook(f)
		kinds[f.Ahead.Kind]++
		a := dumpRecord(ahead.Dissect(f))
		g := *f
		g.Ahead = source.Ahead{}
		if b := dumpRecord(plain.Dissect(&g)); a != b {
			t.Fatalf("%s frame %d (ahead %+v): with the ICRC ahead:\n%s\nwithout:\n%s", name, f.Number, f.Ahead, a, b)
		}
	})
	for _, k := range []uint8{aheadRoCEv2IPv4, aheadRoCEv2IPv6, aheadRoCEv1, aheadIB} {
		if kinds[k] < 10 {
			t.Errorf("kind %d computed ahead for only %d frames", k, kinds[k])
		}
	}
	t.Logf("frames by kind computed ahead: %v", kinds)
}

// TestAheadICRCUsedOnlyWhereItFits: the Dissector takes the ICRC from the
// frame's Ahead (a wrong value there gives a bad verdict) only when its
// kind and offset are those of the packet it decoded.
func TestAheadICRCUsedOnlyWhereItFits(t *testing.T) {
	frames := readFrames(t, realRXE)
	hook := AheadICRC(Options{})
	// A fresh Dissector for each look at a frame: one that saw the frame
	// already would dissect it again differently (time delta, RPC calls).
	dump := func(f *source.Frame) string { return dumpRecord(New(Options{}).Dissect(f)) }
	checked := 0
	for i := range frames {
		f := frames[i]
		hook(&f)
		if f.Ahead.Kind != aheadRoCEv2IPv4 || !f.Ahead.OK {
			continue
		}
		good := dump(&f)
		g := f
		g.Ahead = source.Ahead{}
		if dump(&g) != good {
			t.Fatalf("frame %d: verdict depends on the ICRC computed ahead", f.Number)
		}
		wrong := f
		wrong.Ahead.CRC ^= 0x5a5a
		if dump(&wrong) == good {
			t.Fatalf("frame %d: the ICRC computed ahead is not used", f.Number)
		}
		for _, other := range []source.Ahead{
			{Kind: aheadRoCEv2IPv4, OK: true, At: f.Ahead.At + 4, CRC: wrong.Ahead.CRC},
			{Kind: aheadRoCEv2IPv6, OK: true, At: f.Ahead.At, CRC: wrong.Ahead.CRC},
			{Kind: aheadIB, OK: true, At: 0, CRC: wrong.Ahead.CRC},
		} {
			h := f
			h.Ahead = other
			if dump(&h) != good {
				t.Fatalf("frame %d: Ahead %+v for another header was used", f.Number, other)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d frames checked", checked)
	}
}

// FuzzAheadICRC: the hook takes any bytes without panicking, and what it
// computed never changes a record.
func FuzzAheadICRC(f *testing.F) {
	frames := readFrames(f, realRXE)
	for i := 0; i < len(frames); i += 5 {
		f.Add(uint8(0), frames[i].Data)
	}
	f.Add(uint8(1), []byte{0xf0, 0x02, 0, 5, 0, 1, 0, 2})
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		link := source.LinkTypeEthernet
		if lt%2 == 1 {
			link = source.LinkTypeInfiniBand
		}
		hook := AheadICRC(Options{RoCEPorts: []uint16{1234}})
		fr := source.Frame{Number: 1, LinkType: link, Data: data, CaptureLength: len(data), Length: len(data)}
		hook(&fr)
		a := dumpRecord(New(Options{RoCEPorts: []uint16{1234}}).Dissect(&fr))
		fr.Ahead = source.Ahead{}
		if b := dumpRecord(New(Options{RoCEPorts: []uint16{1234}}).Dissect(&fr)); a != b {
			t.Fatalf("with the ICRC ahead:\n%s\nwithout:\n%s", a, b)
		}
	})
}
