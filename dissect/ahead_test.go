package dissect

import (
	"math/rand"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// sameWithoutAhead fails the test unless ahead's record of f (with what
// the hook computed and decoded) is plain's record of f without it.
func sameWithoutAhead(t *testing.T, name string, f *source.Frame, ahead, plain *Dissector) {
	t.Helper()
	a := dumpRecord(ahead.Dissect(f))
	g := *f
	g.Ahead, g.Decoded = source.Ahead{}, nil
	if b := dumpRecord(plain.Dissect(&g)); a != b {
		t.Fatalf("%s frame %d (ahead %+v, predecoded %v): with the work done ahead:\n%s\nwithout:\n%s", name, f.Number, f.Ahead, f.Decoded != nil, a, b)
	}
}

// TestAheadSameRecords: records dissected with the ICRC computed and the
// headers decoded ahead (Ahead, as source.Prefetch runs it) are the
// records dissected without, field for field, on every real and synthetic
// capture (RoCEv2 over IPv4, IPv6 and VLANs, Linux cooked, RoCEv1, link
// type 247 with and without GRH, ERF, iWARP) and on damaged copies of
// their frames, damaged before the hook ran; and the hook's result is used
// for every kind of packet, and each layer predecode takes comes
// predecoded in some frames.
func TestAheadSameRecords(t *testing.T) {
	hook := Ahead(Options{})
	ahead, plain := New(Options{}), New(Options{})
	kinds := map[uint8]int{}
	storedToEnd := map[uint8]int{}   // ICRC octets read ahead at the frame's end
	frames, predecodedFrames := 0, 0 // counted for the log
	var layerKinds [numPredecoded]int
	eachFrameDamaged(t, rand.New(rand.NewSource(2)), 6, func(name string, f *source.Frame) {
		hook(f)
		kinds[f.Ahead.Kind]++
		if f.Ahead.End == int32(len(f.Data)) {
			storedToEnd[f.Ahead.Kind]++
		}
		frames++
		if p, ok := f.Decoded.(*predecoded); ok {
			predecodedFrames++
			for _, k := range p.kinds[:p.n] {
				layerKinds[k]++
			}
		}
		sameWithoutAhead(t, name, f, ahead, plain)
	})
	for _, k := range []header{hdrEthernet, hdrSLL, hdrVLAN, hdrIPv4, hdrIPv6, hdrUDP, preBTH, preDETH, preRETH, preAETH, preIETH, preImmDt} {
		if layerKinds[k] == 0 {
			t.Errorf("layer kind %d predecoded in no frame", k)
		}
	}
	t.Logf("%d of %d frames predecoded; by layer kind: %v", predecodedFrames, frames, layerKinds)
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

// TestAheadPredecodes: on real RoCEv2 captures (Ethernet, and the Linux
// cooked headers of "tcpdump -i any") every frame but the CM's comes with
// its headers predecoded.
func TestAheadPredecodes(t *testing.T) {
	for _, file := range []string{testcap.RXE, testcap.Path("pcaps", "converted", "live-rxe4-nfs42.tcpdump-any-linux-sll2.pcap")} {
		hook := Ahead(Options{})
		d := New(Options{})
		frames := testcap.Frames(t, file)
		n := 0
		for i := range frames {
			f := &frames[i]
			hook(f)
			h := d.Dissect(f).Headers()
			if cm := h.MAD != nil; cm == (f.Decoded != nil) {
				t.Fatalf("%s frame %d: CM %v, predecoded %v", file, f.Number, cm, f.Decoded != nil)
			}
			if f.Decoded != nil {
				n++
			}
		}
		if n < len(frames)/2 {
			t.Fatalf("%s: %d of %d frames predecoded", file, n, len(frames))
		}
	}
}

// TestAheadMoreOnlyForUsedSlots: a frame predecode leaves to the Dissector
// after decoding a rare extension header (a CM MAD after its DETH) makes
// no slot's more (kept for the ring's life, one per slot: made for such
// frames, the ring grew by up to 3 MB on long captures), and a frame that
// uses one gets its DETH in it.
func TestAheadMoreOnlyForUsedSlots(t *testing.T) {
	a := newAheadHook(Options{})
	d := New(Options{})
	cms, deths := 0, 0
	for _, f := range testcap.Frames(t, testcap.RXE) {
		if d.Dissect(&f).Headers().MAD == nil {
			continue
		}
		cms++
		a.frame(&f)
		if f.Decoded != nil {
			t.Fatalf("CM frame %d predecoded", f.Number)
		}
	}
	for i := range a.ring {
		if a.ring[i].more != nil {
			t.Fatalf("%d CM frames: slot %d has more", cms, i)
		}
	}
	eachFrameDamaged(t, rand.New(rand.NewSource(3)), 0, func(name string, f *source.Frame) {
		a.frame(f)
		if p, ok := f.Decoded.(*predecoded); ok {
			for i, k := range p.kinds[:p.n] {
				if k != preDETH {
					continue
				}
				deths++
				if p.more == nil || len(p.more.deth.Contents) == 0 || &p.more.deth.Contents[0] != &f.Data[p.offs[i]] {
					t.Fatalf("%s frame %d: predecoded DETH not in the slot", name, f.Number)
				}
			}
		}
	})
	if cms == 0 || deths == 0 {
		t.Fatalf("%d CM frames, %d predecoded DETHs", cms, deths)
	}
}

// TestAheadICRCUsedOnlyWhereItFits: the Dissector takes the ICRC from the
// frame's Ahead (a wrong value there gives a bad verdict), and the ICRC
// octets the packet carries (a wrong value there is shown), only when its
// kind and offset are those of the packet it decoded, and for the octets
// only when they end where the BTH does.
func TestAheadICRCUsedOnlyWhereItFits(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	hook := Ahead(Options{})
	// A fresh Dissector for each look at a frame: one that saw the frame
	// already would dissect it again differently (time delta, RPC calls).
	dump := func(f *source.Frame) string { return dumpRecord(New(Options{}).Dissect(f)) }
	checked := 0
	for i := range frames {
		f := frames[i]
		hook(&f)
		f.Decoded = nil // the Dissector's own decoding reads the octets ahead
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

// FuzzAhead: the hook takes any bytes without panicking, and what it
// computed and decoded never changes a record.
func FuzzAhead(f *testing.F) {
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
		hook := Ahead(Options{RoCEPorts: []uint16{1234}})
		fr := source.Frame{Number: 1, LinkType: link, Data: data, CaptureLength: len(data), Length: len(data)}
		hook(&fr)
		a := dumpRecord(New(Options{RoCEPorts: []uint16{1234}}).Dissect(&fr))
		fr.Ahead, fr.Decoded = source.Ahead{}, nil
		if b := dumpRecord(New(Options{RoCEPorts: []uint16{1234}}).Dissect(&fr)); a != b {
			t.Fatalf("with the work done ahead:\n%s\nwithout:\n%s", a, b)
		}
	})
}

// TestAheadThroughPrefetch: frames read through source.Prefetch with the
// hook, as the program reads a file, over several times the frames its
// ring holds (source.InFlight), dissect to the records of the same frames
// read and dissected in turn, one by one; under -race this is the proof
// that a slot is refilled only after its frame was dissected.
func TestAheadThroughPrefetch(t *testing.T) {
	frames := len(testcap.Frames(t, testcap.RXE))
	names := make([]string, 3*source.InFlight/frames+1)
	for i := range names {
		names[i] = testcap.RXE
	}
	open := func() *source.Files {
		fs, err := source.OpenFiles(names, nil)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	pf, plain := source.NewPrefetch(open(), Ahead(Options{})), open()
	defer pf.Close()
	defer plain.Close()
	ahead, seq := New(Options{}), New(Options{})
	var f, g source.Frame
	n, predecodedFrames := 0, 0
	for {
		err := pf.Next(&f)
		if errPlain := plain.Next(&g); (err == nil) != (errPlain == nil) {
			t.Fatalf("frame %d: %v, read in turn %v", n+1, err, errPlain)
		}
		if err != nil {
			break
		}
		if f.Decoded != nil {
			predecodedFrames++
		}
		if a, b := dumpRecord(ahead.Dissect(&f)), dumpRecord(seq.Dissect(&g)); a != b {
			t.Fatalf("frame %d through Prefetch:\n%s\nread in turn:\n%s", f.Number, a, b)
		}
		n++
	}
	if n < 3*source.InFlight || predecodedFrames < n/2 {
		t.Fatalf("%d frames, %d predecoded", n, predecodedFrames)
	}
}
