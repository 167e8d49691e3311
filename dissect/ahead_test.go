package dissect

import (
	"math/rand"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// sameWithoutAhead fails the test unless ahead's record of f (with what
// the hook computed) is plain's record of f without it.
func sameWithoutAhead(t *testing.T, name string, f *source.Frame, ahead, plain *Dissector) {
	t.Helper()
	a := dumpRecord(ahead.Dissect(f))
	g := *f
	g.Ahead = source.Ahead{}
	if b := dumpRecord(plain.Dissect(&g)); a != b {
		t.Fatalf("%s frame %d (ahead %+v): with the ICRC ahead:\n%s\nwithout:\n%s", name, f.Number, f.Ahead, a, b)
	}
}

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
	storedToEnd := map[uint8]int{} // ICRC octets read ahead at the frame's end
	eachFrameDamaged(t, rand.New(rand.NewSource(2)), 6, func(name string, f *source.Frame) {
		hook(f)
		kinds[f.Ahead.Kind]++
		if f.Ahead.End == int32(len(f.Data)) {
			storedToEnd[f.Ahead.Kind]++
		}
		sameWithoutAhead(t, name, f, ahead, plain)
	})
	for _, k := range []uint8{aheadRoCEv2IPv4, aheadRoCEv2IPv6, aheadRoCEv1, aheadIB} {
		if kinds[k] < 10 {
			t.Errorf("kind %d computed ahead for only %d frames", k, kinds[k])
		}
	}
	for _, k := range []uint8{aheadRoCEv2IPv4, aheadRoCEv2IPv6} {
		if storedToEnd[k] < 10 {
			t.Errorf("kind %d: ICRC octets read ahead for only %d frames", k, storedToEnd[k])
		}
	}
	t.Logf("frames by kind computed ahead: %v; with the ICRC octets read: %v", kinds, storedToEnd)
}

// TestAheadICRCUsedOnlyWhereItFits: the Dissector takes the ICRC from the
// frame's Ahead (a wrong value there gives a bad verdict), and the ICRC
// octets the packet carries (a wrong value there is shown), only when its
// kind and offset are those of the packet it decoded, and for the octets
// only when they end where the BTH does.
func TestAheadICRCUsedOnlyWhereItFits(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
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
		if f.Ahead.End != int32(len(f.Data)) {
			t.Fatalf("frame %d: ICRC octets read ahead end at %d, the frame at %d", f.Number, f.Ahead.End, len(f.Data))
		}
		wrongStored := f
		wrongStored.Ahead.Stored ^= 0x5a5a
		if dump(&wrongStored) == good {
			t.Fatalf("frame %d: the ICRC octets read ahead are not used", f.Number)
		}
		// The octets read ahead are used only where the BTH ends.
		for _, end := range []int32{0, f.Ahead.End - 1, f.Ahead.End + 4} {
			h := wrongStored
			h.Ahead.End = end
			if dump(&h) != good {
				t.Fatalf("frame %d: ICRC octets read ahead up to %d were used", f.Number, end)
			}
		}
		for _, other := range []source.Ahead{
			{Kind: aheadRoCEv2IPv4, OK: true, At: f.Ahead.At + 4, CRC: wrong.Ahead.CRC, Stored: wrongStored.Ahead.Stored, End: f.Ahead.End},
			{Kind: aheadRoCEv2IPv6, OK: true, At: f.Ahead.At, CRC: wrong.Ahead.CRC, Stored: wrongStored.Ahead.Stored, End: f.Ahead.End},
			{Kind: aheadIB, OK: true, At: 0, CRC: wrong.Ahead.CRC, Stored: wrongStored.Ahead.Stored, End: f.Ahead.End},
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
	frames := testcap.Frames(f, testcap.RXE)
	for i := 0; i < len(frames); i += 5 {
		f.Add(uint8(0), frames[i].Data)
	}
	f.Add(uint8(1), []byte{0xf0, 0x02, 0, 5, 0, 1, 0, 2})
	for _, fr := range testcap.Frames(f, testcap.Path("pcaps", "converted", "live-rxe4-nfs42.tcpdump-any-linux-sll2.pcap"))[:20] {
		f.Add(uint8(3), fr.Data)
	}
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		link := []int{source.LinkTypeEthernet, source.LinkTypeInfiniBand, LinkTypeLinuxSLL, LinkTypeLinuxSLL2, LinkTypeRaw}[lt%5]
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
