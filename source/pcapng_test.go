package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap/converted"
)

const convertedDir = "../testdata/pcaps/converted/"

// TestConverted reads the captures Wireshark's tools wrote from the real
// pcaps (testdata/pcaps/converted/PROVENANCE.md): the same frames, bytes
// and link types as the pcap they were made from, no damage.
func TestConverted(t *testing.T) {
	for _, tc := range converted.Captures {
		got := mustRead(t, convertedDir+tc.File)
		var want []Frame
		if len(tc.From) > 0 {
			var from []string
			for _, f := range tc.From {
				from = append(from, "../testdata/pcaps/"+f)
			}
			want = mustRead(t, from...)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d frames, want %d", tc.File, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if !bytes.Equal(g.Data, w.Data) || g.LinkType != w.LinkType || g.Length != w.Length || g.CaptureLength != w.CaptureLength ||
				tc.SameTime && !g.Time.Equal(w.Time) {
				t.Fatalf("%s: frame %d differs: %+v, want %+v", tc.File, i+1, g, w)
			}
		}
	}
	// editcap -a put two comments on frames 3 and 5.
	c := mustRead(t, convertedDir+"live-rxe4-reconnect.comments.pcapng")
	for i, f := range c {
		var want []string
		switch i + 1 {
		case 3:
			want = []string{"a comment on frame 3"}
		case 5:
			want = []string{"second comment"}
		}
		if len(f.Comments) != len(want) || len(want) > 0 && f.Comments[0] != want[0] {
			t.Fatalf("frame %d: comments %q, want %q", i+1, f.Comments, want)
		}
	}
}

// TestInterfaceStats reads the Interface Statistics Block dumpcap writes at
// the end of a capture: counts kept, and not taken for a cut packet.
func TestInterfaceStats(t *testing.T) {
	for _, name := range []string{"empty.dumpcap-lo.pcapng", "live-rxe4-rfc8797.dumpcap-lo.pcapng"} {
		fs, err := OpenFiles([]string{convertedDir + name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		frames, errs := readAll(t, fs)
		st := fs.InterfaceStats()
		fs.Close()
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		if len(st) != 1 || st[0].Name != "lo" || st[0].Interface != 0 || st[0].LinkType != LinkTypeEthernet || st[0].File != convertedDir+name {
			t.Fatalf("%s: stats %+v", name, st)
		}
		if n, ok := st[0].Lost(); !ok || n != 0 || st[0].Received != int64(len(frames)) {
			t.Fatalf("%s: lost %d %v, received %d of %d", name, n, ok, st[0].Received, len(frames))
		}
	}
}

// ngBuilder writes pcapng blocks in either byte order, from the draft's
// layouts, for what no tool at hand writes (big-endian files, several
// sections, Simple and obsolete Packet Blocks, odd resolutions).
type ngBuilder struct {
	o interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	b []byte
}

func (w *ngBuilder) u16(v uint16) []byte { return w.o.AppendUint16(nil, v) }
func (w *ngBuilder) u32(v uint32) []byte { return w.o.AppendUint32(nil, v) }
func (w *ngBuilder) u64(v uint64) []byte { return w.o.AppendUint64(nil, v) }

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func (w *ngBuilder) opt(code uint16, v []byte) []byte {
	return pad4(append(append(w.u16(code), w.u16(uint16(len(v)))...), v...))
}

func (w *ngBuilder) block(typ uint32, body ...[]byte) {
	var b []byte
	for _, p := range body {
		b = append(b, p...)
	}
	b = pad4(b)
	n := uint32(len(b) + 12)
	w.b = append(append(append(append(w.b, w.u32(typ)...), w.u32(n)...), b...), w.u32(n)...)
}

func (w *ngBuilder) shb() {
	w.block(blockSHB, w.u32(byteOrderMagic), w.u16(1), w.u16(0), w.u64(^uint64(0)))
}

func (w *ngBuilder) idb(lt uint16, opts ...[]byte) {
	body := [][]byte{w.u16(lt), w.u16(0), w.u32(0)}
	body = append(body, opts...)
	if len(opts) > 0 {
		body = append(body, w.u32(0))
	}
	w.block(blockIDB, body...)
}

func (w *ngBuilder) epb(iface uint32, ts uint64, data []byte, opts ...[]byte) {
	body := [][]byte{w.u32(iface), w.u32(uint32(ts >> 32)), w.u32(uint32(ts)), w.u32(uint32(len(data))), w.u32(uint32(len(data))), pad4(append([]byte(nil), data...))}
	body = append(body, opts...)
	if len(opts) > 0 {
		body = append(body, w.u32(0))
	}
	w.block(blockEPB, body...)
}

// TestPcapNGSynthetic reads a file built from the draft's block layouts:
// two sections, the second big-endian; interfaces of several link types,
// nanosecond and power-of-two resolutions and a time offset; Enhanced,
// Simple and obsolete Packet Blocks; Name Resolution, Decryption Secrets,
// custom and unknown blocks between them; statistics with drops.
func TestPcapNGSynthetic(t *testing.T) {
	pkt := func(n byte) []byte { return bytes.Repeat([]byte{n}, int(n)) }
	le := &ngBuilder{o: binary.LittleEndian}
	le.shb()
	le.idb(1, le.opt(optIfName, []byte("eth0")), le.opt(optIfTsresol, []byte{9}))
	le.idb(247, le.opt(optIfTsresol, []byte{0x80 | 10}), le.opt(optIfTsoffset, le.u64(1000)))
	le.block(blockNRB, le.u16(nrbIPv4), le.u16(14), []byte{192, 0, 2, 1, 'h', 'o', 's', 't', 'a', 0, 'b', 0, 0, 0}, le.u32(0))
	le.epb(0, 1_500_000_000_123_456_789, pkt(5), le.opt(optComment, []byte("hello")), le.opt(optComment, []byte("again")))
	le.block(blockDSB, le.u32(0x544c534b), le.u32(4), []byte("keys"))
	le.block(blockCustom, le.u32(32473), []byte("custom"))
	le.block(0x12345, []byte("unknown block"))
	le.epb(1, 3<<10|512, pkt(6)) // 3.5 s after the offset of 1000 s
	le.block(blockISB, le.u32(0), le.u32(0), le.u32(0), le.opt(optIsbIfRecv, le.u64(10)), le.opt(optIsbIfDrop, le.u64(3)), le.opt(optIsbOSDrop, le.u64(4)), le.u32(0))
	be := &ngBuilder{o: binary.BigEndian}
	be.shb()
	be.idb(197, be.opt(optIfName, []byte("erf0")))
	be.epb(0, 2_000_000, pkt(7))
	be.block(blockSPB, be.u32(9), pad4(pkt(9)))
	be.block(blockPB, be.u16(0), be.u16(0), be.u32(0), be.u32(3_000_000), be.u32(4), be.u32(4), pkt(4))
	be.block(blockISB, be.u32(0), be.u32(0), be.u32(0), be.opt(optIsbIfDrop, be.u64(2)), be.u32(0))
	data := append(le.b, be.b...)

	for _, name := range []string{"file", "-"} {
		var fs *Files
		var err error
		if name == "file" {
			path := filepath.Join(t.TempDir(), "x.pcapng")
			os.WriteFile(path, data, 0o644)
			fs, err = OpenFiles([]string{path}, nil)
		} else {
			fs, err = OpenFiles([]string{"-"}, bytes.NewReader(data))
		}
		if err != nil {
			t.Fatal(err)
		}
		frames, errs := readAll(t, fs)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		want := []struct {
			lt  int
			n   byte
			ts  time.Time
			com int
		}{
			{1, 5, time.Unix(1_500_000_000, 123_456_789), 2},
			{247, 6, time.Unix(1003, 500_000_000), 0},
			{197, 7, time.Unix(2, 0), 0},
			{197, 9, time.Unix(2, 0), 0}, // a Simple Packet Block has no time: its predecessor's
			{197, 4, time.Unix(3, 0), 0},
		}
		if len(frames) != len(want) {
			t.Fatalf("%d frames, want %d", len(frames), len(want))
		}
		for i, w := range want {
			f := frames[i]
			if f.LinkType != w.lt || !bytes.Equal(f.Data, pkt(w.n)) || !f.Time.Equal(w.ts) || len(f.Comments) != w.com || f.Number != i+1 {
				t.Fatalf("frame %d: %+v", i+1, f)
			}
			if typ := data[f.Offset : f.Offset+4]; !bytes.Equal(typ, []byte{6, 0, 0, 0}) && !bytes.Contains([]byte{0, 0, 0, 6, 0, 0, 0, 3, 0, 0, 0, 2}, typ) {
				t.Fatalf("frame %d: offset %d is at no packet block (% x)", i+1, f.Offset, typ)
			}
		}
		if frames[0].Comments[0] != "hello" || frames[0].Comments[1] != "again" {
			t.Fatalf("comments %q", frames[0].Comments)
		}
		st := fs.InterfaceStats()
		if len(st) != 2 || st[0].Name != "eth0" || st[0].Received != 10 || st[1].Section != 1 || st[1].Name != "erf0" || st[1].Dropped != 2 || st[1].OSDropped != -1 {
			t.Fatalf("stats %+v", st)
		}
		if n, _ := st[0].Lost(); n != 7 || st[0].Label() != "eth0" || st[1].Label() != "erf0 (section 2)" {
			t.Fatalf("lost %d, labels %q %q", n, st[0].Label(), st[1].Label())
		}
		if names := fs.Current(); names != nil {
			t.Fatal("file still current after its end")
		}
		fs.Close()
	}

	// Every cut of the file: the frames before the cut, then one
	// RecordError at the block the cut falls in (none at a block
	// boundary), never a panic.
	bounds := map[int]bool{}
	for off := 0; off < len(data); {
		bounds[off] = true
		o := binary.ByteOrder(binary.LittleEndian)
		if off >= len(le.b) {
			o = binary.BigEndian
		}
		off += int(o.Uint32(data[off+4:]))
	}
	for cut := 29; cut < len(data); cut++ {
		fs, err := OpenFiles([]string{"-"}, bytes.NewReader(data[:cut]))
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		_, errs := readAll(t, fs)
		var re *RecordError
		switch {
		case bounds[cut] && len(errs) != 0:
			t.Fatalf("cut at block boundary %d: %v", cut, errs)
		case !bounds[cut] && (len(errs) != 1 || !errors.As(errs[0], &re) || !errors.Is(re, ErrTruncated)):
			t.Fatalf("cut at %d: %v", cut, errs)
		}
	}
}

// TestPcapNGInconsistent: a block whose trailing length differs, or whose
// packet runs past it, is damaged; the frames before are delivered.
func TestPcapNGInconsistent(t *testing.T) {
	w := &ngBuilder{o: binary.LittleEndian}
	w.shb()
	w.idb(1)
	w.epb(0, 1, []byte{1, 2, 3, 4})
	good := len(w.b)
	w.epb(0, 2, []byte{5, 6, 7, 8})
	for name, mod := range map[string]func(b []byte){
		"trailing length": func(b []byte) { b[len(b)-4]++ },
		"capture length":  func(b []byte) { binary.LittleEndian.PutUint32(b[good+20:], 100) },
		"interface":       func(b []byte) { binary.LittleEndian.PutUint32(b[good+8:], 3) },
		"block length":    func(b []byte) { binary.LittleEndian.PutUint32(b[good+4:], 13) },
	} {
		b := append([]byte(nil), w.b...)
		mod(b)
		fs, _ := OpenFiles([]string{"-"}, bytes.NewReader(b))
		frames, errs := readAll(t, fs)
		var re *RecordError
		if len(frames) != 1 || len(errs) != 1 || !errors.As(errs[0], &re) || re.Frame != 2 || re.Offset != int64(good) || errors.Is(re, ErrTruncated) {
			t.Fatalf("%s: %d frames, %v", name, len(frames), errs)
		}
		if name == "capture length" && (re.Length != 4 || re.CaptureLength != 100 || re.LinkType != 1 || re.Time.IsZero()) {
			t.Fatalf("%s: facts %+v", name, re)
		}
	}
	var f Frame
	fs, _ := OpenFiles([]string{"-"}, bytes.NewReader(w.b))
	for fs.Next(&f) == nil {
	}
	if err := fs.Next(&f); err != io.EOF {
		t.Fatal(err)
	}
}

// FuzzPcapNG reads arbitrary bytes after a valid Section Header: frames or
// RecordErrors, never a panic, a frame's data within its block, and after
// a RecordError nothing more from the file.
func FuzzPcapNG(f *testing.F) {
	for _, name := range []string{"live-rxe4-rfc8797.dumpcap-lo.pcapng", "live-rxe4-reconnect.comments.pcapng", "rxe-plus-erf.mergecap.pcapng"} {
		b, err := os.ReadFile(convertedDir + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	w := &ngBuilder{o: binary.BigEndian}
	w.shb()
	w.idb(1, w.opt(optIfTsresol, []byte{0x83}))
	w.block(blockSPB, w.u32(3), []byte{1, 2, 3, 0})
	w.block(blockNRB, w.u16(nrbIPv6), w.u16(18), make([]byte, 16), []byte{'x', 0, 0, 0})
	f.Add(w.b)
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := openFuzzInput(t, data)
		if fs == nil {
			return
		}
		defer fs.Close()
		var fr Frame
		damaged := false
		for i := 0; i < 100000; i++ {
			err := fs.Next(&fr)
			if err == io.EOF {
				return
			}
			if damaged {
				t.Fatalf("read on after a damaged record: %v", err)
			}
			if err != nil {
				var re *RecordError
				if !errors.As(err, &re) || re.Offset < 0 || re.Offset > int64(len(data)) {
					t.Fatalf("error %T %v", err, err)
				}
				damaged = true
				continue
			}
			if len(fr.Data) != fr.CaptureLength || fr.Offset < 0 || fr.Offset+int64(len(fr.Data)) > int64(len(data)) {
				t.Fatalf("frame %d: %d bytes, caplen %d, offset %d", fr.Number, len(fr.Data), fr.CaptureLength, fr.Offset)
			}
		}
	})
}

// TestStopPipe: Stop wakes a Next waiting on a pipe in the middle of a
// record, which then ends the input (io.EOF), not a damaged record.
func TestStopPipe(t *testing.T) {
	raw, err := os.ReadFile(realRXE)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	first := 24 + 16 + int(binary.LittleEndian.Uint32(raw[24+8:]))
	pw.Write(raw[:first+10]) // one record and a bit of the next
	fs, err := OpenFiles([]string{"-"}, pr)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	var f Frame
	if err := fs.Next(&f); err != nil || f.Number != 1 {
		t.Fatalf("first frame: %v", err)
	}
	if fs.Ready() {
		t.Fatal("Ready with half a record buffered")
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		fs.Stop()
	}()
	if err := fs.Next(&f); err != io.EOF {
		t.Fatalf("after Stop: %v, want io.EOF", err)
	}
}

// TestLargeRecords: records larger than the read buffer (262144-octet
// packets, a large custom block) are read through the copy path, in pcap
// and pcapng, from a stream and cut.
func TestLargeRecords(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 262144)
	w := &ngBuilder{o: binary.LittleEndian}
	w.shb()
	w.idb(1)
	w.epb(0, 1, []byte{1, 2, 3})
	w.block(blockCustom, w.u32(1), make([]byte, 300000))
	w.epb(0, 2, big)
	w.epb(0, 3, []byte{4, 5})
	le := binary.LittleEndian
	pc := le.AppendUint32(nil, 0xa1b2c3d4)
	pc = le.AppendUint16(pc, 2)
	pc = le.AppendUint16(pc, 4)
	pc = append(pc, make([]byte, 8)...)
	pc = le.AppendUint32(pc, 262144)
	pc = le.AppendUint32(pc, 1)
	for i, d := range [][]byte{{1, 2, 3}, big, {4, 5}} {
		pc = le.AppendUint32(pc, uint32(i))
		pc = le.AppendUint32(pc, 0)
		pc = le.AppendUint32(pc, uint32(len(d)))
		pc = le.AppendUint32(pc, uint32(len(d)))
		pc = append(pc, d...)
	}
	for name, data := range map[string][]byte{"pcapng": w.b, "pcap": pc} {
		fs, _ := OpenFiles([]string{"-"}, bytes.NewReader(data))
		frames, errs := readAll(t, fs)
		if len(errs) > 0 || len(frames) != 3 || !bytes.Equal(frames[1].Data, big) || !bytes.Equal(frames[2].Data, []byte{4, 5}) {
			t.Fatalf("%s: %d frames, %v", name, len(frames), errs)
		}
		// Cut inside the big record.
		cut := int(frames[1].Offset) + 100000
		fs, _ = OpenFiles([]string{"-"}, bytes.NewReader(data[:cut]))
		frames2, errs := readAll(t, fs)
		var re *RecordError
		if len(frames2) != 1 || len(errs) != 1 || !errors.As(errs[0], &re) || !errors.Is(re, ErrTruncated) || re.Offset != frames[1].Offset || re.CaptureLength != len(big) {
			t.Fatalf("%s cut: %d frames, %v", name, len(frames2), errs)
		}
	}
}

// TestPcapNGLinkType: a pcapng file's link type is its first interface's.
func TestPcapNGLinkType(t *testing.T) {
	f, err := Open(convertedDir+"rxe-plus-erf.mergecap.pcapng", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.LinkType() != LinkTypeEthernet || f.Format() != FormatPcapNG {
		t.Fatalf("link type %d, format %v", f.LinkType(), f.Format())
	}
}

// TestReadNames: the names of the Name Resolution Block tshark wrote after
// the packets, from a first pass; files without one, and standard input,
// add none.
func TestReadNames(t *testing.T) {
	names, err := ReadNames([]string{"-", "../testdata/pcaps/real/live-rxe4-rfc8797.pcap", convertedDir + "live-rxe4-rfc8797.tshark-nrb.pcapng",
		convertedDir + "live-siw4-rfc8797.tshark-nrb.pcapng"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[netip.Addr][]string{
		netip.MustParseAddr("192.0.2.1"): {"nfs-client.lab"}, netip.MustParseAddr("192.0.2.2"): {"nfs-server.lab"},
		netip.MustParseAddr("198.51.100.1"): {"siw-client.lab"}, netip.MustParseAddr("198.51.100.2"): {"siw-server.lab"},
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("names %v, want %v", names, want)
	}
	if names, err := ReadNames([]string{"../testdata/pcaps/real/live-rxe4-rfc8797.pcap"}); names != nil || err != nil {
		t.Errorf("pcap: %v, %v", names, err)
	}
	if _, err := ReadNames([]string{convertedDir + "no-such-file.pcapng"}); err != nil {
		t.Errorf("a missing file is the run's to report: %v", err)
	}
}
