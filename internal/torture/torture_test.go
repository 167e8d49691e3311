package torture

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

var compressions = []source.Compression{source.Uncompressed, source.Gzip, source.Zstd, source.LZ4}

func loadReal(t testing.TB, name string) (*Capture, []byte) {
	t.Helper()
	c, b, err := ReadFile(testcap.Real(name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c, b
}

func TestParseEncodeRoundTrip(t *testing.T) {
	for _, name := range []string{"rxe-nfs42-rdma.pcap", "siw-nfs42-rdma.pcap"} {
		c, raw := loadReal(t, name)
		if c.Format != source.FormatPcap || len(c.Packets) == 0 {
			t.Fatalf("%s: format %v, %d packets", name, c.Format, len(c.Packets))
		}
		// Records re-encode to the very bytes of the file (headers differ
		// only in fields we do not keep: version, zone, sigfigs).
		enc, idx := c.Encode(source.FormatPcap)
		if !bytes.Equal(enc[24:], raw[24:]) {
			t.Errorf("%s: re-encoded records differ from the file", name)
		}
		if idx.Records[0].Start != 24 || idx.Records[len(idx.Records)-1].End != len(enc) {
			t.Errorf("%s: index %+v … does not span the file", name, idx.Records[0])
		}
		for _, f := range []source.Format{source.FormatPcap, source.FormatPcapNG} {
			b, _ := c.Encode(f)
			for _, kind := range compressions {
				in := b
				if kind != source.Uncompressed {
					in = Compress(kind, b)
				}
				d, err := Parse(name, in)
				if err != nil {
					t.Fatalf("%s as %v %v: %v", name, f, kind, err)
				}
				if d.Format != f || d.Compression != kind || len(d.Packets) != len(c.Packets) {
					t.Fatalf("%s as %v %v: got %v %v %d packets", name, f, kind, d.Format, d.Compression, len(d.Packets))
				}
				for i := range c.Packets {
					p, q := c.Packets[i], d.Packets[i]
					if !bytes.Equal(p.Data, q.Data) || p.OrigLen != q.OrigLen || !p.Time.Equal(q.Time) || p.LinkType != q.LinkType {
						t.Fatalf("%s as %v: packet %d differs", name, f, i+1)
					}
				}
			}
		}
	}
}

// A pcapng's packet comments survive re-encoding, so mutants of a commented
// capture show the same good frames (frame.comment) as the file.
func TestPcapngCommentsRoundTrip(t *testing.T) {
	path := testcap.Path("pcaps", "converted", "live-rxe4-reconnect.comments.pcapng")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(path, raw)
	if err != nil {
		t.Fatal(err)
	}
	var commented int
	for _, p := range c.Packets {
		commented += len(p.Comments)
	}
	if commented == 0 {
		t.Fatalf("%s: no packet comment read", path)
	}
	b, _ := c.Encode(source.FormatPcapNG)
	d, err := Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasComments() {
		t.Errorf("%s: HasComments false", path)
	}
	p, _ := c.Encode(source.FormatPcap)
	for _, kind := range compressions {
		ng, pc := b, p
		if kind != source.Uncompressed {
			ng, pc = Compress(kind, b), Compress(kind, p)
		}
		if !KeepsComments(ng) || KeepsComments(pc) {
			t.Errorf("%v: pcapng keeps comments %v, pcap %v", kind, KeepsComments(ng), KeepsComments(pc))
		}
	}
	for i := range c.Packets {
		if !slices.Equal(c.Packets[i].Comments, d.Packets[i].Comments) {
			t.Errorf("packet %d: comments %q re-encoded as %q", i+1, c.Packets[i].Comments, d.Packets[i].Comments)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, b := range [][]byte{nil, {1, 2, 3}, []byte("not a capture at all"), {0xd4, 0xc3, 0xb2, 0xa1, 2, 0}} {
		if _, err := Parse("x", b); err == nil {
			t.Errorf("Parse(%q) succeeded", b)
		}
	}
}

// The walker finds what the real captures' provenance says is there: the
// client's RFC 8797 message after the 36-byte rdma_cm header of the REQ
// (frame offset 262) and after the MPA v2 IRD/ORD words.
func TestWalkRealCaptures(t *testing.T) {
	rfc8797Client := []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03}
	rxe, _ := loadReal(t, "rxe-nfs42-rdma.pcap")
	l := Walk(rxe.Packets[0].LinkType, rxe.Packets[0].Data)
	names := spanNames(l.Layers)
	if names != "ethernet ipv4 udp bth deth mad cm" || !l.CM || !l.RDMA {
		t.Fatalf("rxe frame 1 layers %q CM=%v", names, l.CM)
	}
	if len(l.Strings) != 1 || l.Strings[0].Start != 226 {
		t.Fatalf("rxe frame 1 private data %+v, want at 226", l.Strings)
	}
	if pd := rxe.Packets[0].Data[262:270]; !bytes.Equal(pd, rfc8797Client) {
		t.Errorf("rxe REQ ULP data % x", pd)
	}
	// An RC SEND with RPC-over-RDMA and an AUTH_SYS call.
	l = Walk(rxe.Packets[7].LinkType, rxe.Packets[7].Data)
	if !strings.Contains(spanNames(l.Layers), "bth rpcrdma rpc") || len(l.Lists) != 1 {
		t.Fatalf("rxe frame 8: %q lists %v", spanNames(l.Layers), l.Lists)
	}
	if len(l.Strings) != 1 || l.Strings[0].Name != "rpc.auth_sys.machinename" {
		t.Fatalf("rxe frame 8 strings %+v", l.Strings)
	}

	siw, _ := loadReal(t, "siw-nfs42-rdma.pcap")
	l = Walk(siw.Packets[3].LinkType, siw.Packets[3].Data)
	if spanNames(l.Layers) != "ethernet ipv4 tcp mpa mpa.ird_ord" || !l.CM {
		t.Fatalf("siw frame 4 layers %q", spanNames(l.Layers))
	}
	if s := l.Strings[0]; !bytes.Equal(siw.Packets[3].Data[s.Start:s.End], rfc8797Client) {
		t.Errorf("siw MPA request ULP data % x", siw.Packets[3].Data[s.Start:s.End])
	}
	found := false
	for _, ln := range l.Lengths {
		if ln.Name == "mpa.pd_length" && getField(siw.Packets[3].Data, ln) == 12 {
			found = true
		}
	}
	if !found {
		t.Errorf("siw frame 4: no mpa.pd_length of 12 in %+v", l.Lengths)
	}
	l = Walk(siw.Packets[7].LinkType, siw.Packets[7].Data)
	if spanNames(l.Layers) != "ethernet ipv4 tcp fpdu ddp rpcrdma rpc" {
		t.Fatalf("siw frame 8 layers %q", spanNames(l.Layers))
	}
}

func spanNames(s []Span) string {
	var n []string
	for _, x := range s {
		n = append(n, x.Name)
	}
	return strings.Join(n, " ")
}

func TestPlanDeterministicAndCoversEveryKind(t *testing.T) {
	kinds := map[Kind]int{}
	total := 0
	for _, name := range []string{"rxe-nfs42-rdma.pcap", "siw-nfs42-rdma.pcap"} {
		c, _ := loadReal(t, name)
		a := Plan(c, Options{Seed: 7, Repeat: 10})
		b := Plan(c, Options{Seed: 7, Repeat: 10})
		o := Plan(c, Options{Seed: 8, Repeat: 10})
		if len(a) != len(b) {
			t.Fatalf("%s: plans of one seed differ in length", name)
		}
		names := map[string]bool{}
		differ := false
		for i := range a {
			// Names all compare; bytes for every tenth mutant (cheaper
			// under -race).
			if a[i].Name != b[i].Name || (i%10 == 0 && !bytes.Equal(a[i].Build(), b[i].Build())) {
				t.Fatalf("%s: mutant %d differs between runs of one seed: %s", name, i, a[i].Name)
			}
			if names[a[i].Name] {
				t.Errorf("%s: duplicate mutant name %s", name, a[i].Name)
			}
			names[a[i].Name] = true
			kinds[a[i].Kind]++
			if i < len(o) && o[i].Name != a[i].Name {
				differ = true
			}
		}
		if !differ {
			t.Errorf("%s: seeds 7 and 8 gave the same plan", name)
		}
		total += len(a)
	}
	for _, k := range Kinds {
		if kinds[k] == 0 {
			t.Errorf("no mutant of kind %s", k)
		}
	}
	if total < 2000 {
		t.Errorf("only %d mutants from the real captures, want thousands", total)
	}
	t.Logf("%d mutants: %v", total, kinds)
}

// Each mutant leaves every frame before its Frame as it was, and damages
// what its name says.
func TestMutantsKeepFramesBeforeDamage(t *testing.T) {
	for _, name := range []string{"rxe-nfs42-rdma.pcap", "siw-nfs42-rdma.pcap"} {
		c, _ := loadReal(t, name)
		plan := Plan(c, Options{Seed: 1, Repeat: 50})
		if os.Getenv("CMPD_TORTURE_N") != "0" {
			plan = Sample(plan, 1500, 1)
		}
		for _, m := range plan {
			b := m.Build()
			d, err := Parse(name, b)
			if m.HeaderDamaged {
				if err == nil && len(d.Packets) > 0 {
					t.Errorf("%s: header damaged but parsed with %d packets", m.Name, len(d.Packets))
				}
				continue
			}
			if err != nil {
				// Damaged framing: the strict parser stops, but only at or
				// after the promised frame.
				continue
			}
			for i := 0; i < m.Frame-1 && i < len(c.Packets); i++ {
				if i >= len(d.Packets) || !bytes.Equal(d.Packets[i].Data, c.Packets[i].Data) {
					if m.Kind == KindFileHeader || m.Kind == KindGzip {
						continue // link type or garbage: content kept, meaning changed
					}
					t.Errorf("%s: frame %d changed", m.Name, i+1)
					break
				}
			}
			switch m.Kind {
			case KindRepeat:
				if len(d.Packets) != len(c.Packets)+50 {
					t.Errorf("%s: %d packets", m.Name, len(d.Packets))
				}
			case KindDuplicate:
				if len(d.Packets) != len(c.Packets)+1 {
					t.Errorf("%s: %d packets", m.Name, len(d.Packets))
				}
			case KindDrop:
				if len(d.Packets) != len(c.Packets)-1 {
					t.Errorf("%s: %d packets", m.Name, len(d.Packets))
				}
			case KindTruncLayer:
				p := d.Packets[m.Frame-1]
				if len(p.Data) >= len(c.Packets[m.Frame-1].Data) || p.OrigLen != c.Packets[m.Frame-1].OrigLen {
					t.Errorf("%s: caplen %d origlen %d", m.Name, len(p.Data), p.OrigLen)
				}
			case KindFlip, KindLength, KindChunkList, KindControlChars:
				if len(d.Packets) == len(c.Packets) && bytes.Equal(d.Packets[m.Frame-1].Data, c.Packets[m.Frame-1].Data) &&
					!strings.HasSuffix(m.Name, "=0") {
					t.Errorf("%s: frame %d unchanged", m.Name, m.Frame)
				}
			}
		}
	}
}

func TestLengthLies(t *testing.T) {
	siw, _ := loadReal(t, "siw-nfs42-rdma.pcap")
	var got []byte
	for _, m := range Plan(siw, Options{Seed: 1, Repeat: 1}) {
		if m.Name == "siw-nfs42-rdma.pcap/length/f4/mpa.pd_length=513" {
			got = m.Build()
		}
	}
	if got == nil {
		t.Fatal("no mpa.pd_length=513 mutant for the MPA request")
	}
	d, err := Parse("x", got)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.BigEndian.Uint16(d.Packets[3].Data[66+18:]); v != 513 {
		t.Errorf("PD_Length %d, want 513", v)
	}
	// Bit fields keep their neighbours.
	b := []byte{0xff, 0xff}
	putField(b, Length{Off: 0, Size: 2, Bits: 11}, 0)
	if b[0] != 0xf8 || b[1] != 0 {
		t.Errorf("11-bit field cleared to % x", b)
	}
	b = []byte{0x81}
	putField(b, Length{Off: 0, Size: 1, Shift: 1, Bits: 7}, 0x7f)
	if b[0] != 0xff || getField(b, Length{Off: 0, Size: 1, Shift: 1, Bits: 7}) != 0x7f {
		t.Errorf("7-bit field at bit 1: % x", b)
	}
}

func TestSample(t *testing.T) {
	c, _ := loadReal(t, "rxe-nfs42-rdma.pcap")
	plan := Plan(c, Options{Seed: 3, Repeat: 10})
	s := Sample(plan, 40, 9)
	if len(s) != 40 {
		t.Fatalf("sampled %d", len(s))
	}
	kinds := map[Kind]bool{}
	for _, m := range s {
		kinds[m.Kind] = true
	}
	if len(kinds) != len(Kinds) {
		t.Errorf("40 samples cover %d kinds, want all %d", len(kinds), len(Kinds))
	}
	s2 := Sample(plan, 40, 9)
	for i := range s {
		if s[i] != s2[i] {
			t.Fatal("Sample is not deterministic")
		}
	}
	if len(Sample(plan, 0, 9)) != len(plan) {
		t.Error("Sample(0) is not the whole plan")
	}
}

func TestCheckTerminalSafe(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"1\t0.000000\tCM REQ svc=NFS/RDMA(20049)\n", true},
		{"name=\\x1b]0;pwned\\x07 über\n", true},
		{"a\x1b[2Jb", false},
		{"a\rb", false},
		{"a\x07", false},
		{"a\x00", false},
		{"a\x7f", false},
		{"a\u009bb", false},
		{"a\x9bb", false},
		{"a\u202eb", false},
		{"a\u2067b", false},
	} {
		err := CheckTerminalSafe([]byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("CheckTerminalSafe(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	if err := CheckJSONLines([]byte("{\"a\":1}\n\n[1,2]\n")); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"{\"a\":1}\n{\"a\":", "{\"a\":\"\xff\"}\n", "{} {}\n"} {
		if CheckJSONLines([]byte(bad)) == nil {
			t.Errorf("CheckJSONLines(%q) passed", bad)
		}
	}
	if err := CheckJSON([]byte("{\"a\":[1,\n2]}\n{\"b\":2}")); err != nil {
		t.Error(err)
	}
	if CheckJSON([]byte("{\"a\":[1,\n")) == nil || CheckJSON([]byte("\"\xff\"")) == nil {
		t.Error("CheckJSON passed bad input")
	}
}

func TestFrameLines(t *testing.T) {
	m := FrameLines([]byte("1\tx\n  2 0.1 a b\n{\"frame\":3,\"layers\":[]}\n{\"frame\":{\"number\":4}}\nFrame 5\n\n6: 322 bytes on wire\n"))
	for _, n := range []int{1, 2, 3, 4, 6} {
		if _, ok := m[n]; !ok {
			t.Errorf("frame %d not found in %v", n, m)
		}
	}
	if len(m) != 5 {
		t.Errorf("frames %v", m)
	}
}

func FuzzWalk(f *testing.F) {
	for _, name := range []string{"rxe-nfs42-rdma.pcap", "siw-nfs42-rdma.pcap"} {
		c, _ := loadReal(f, name)
		for i, p := range c.Packets {
			if i%7 == 0 {
				f.Add(LinkEthernet, p.Data)
			}
		}
	}
	f.Add(LinkInfiniBand, []byte{0, 0x02, 0, 8, 0, 0, 0, 0, 0x64, 0, 0xff, 0xff, 0, 0, 0, 1})
	f.Add(LinkERF, make([]byte, 40))
	f.Fuzz(func(t *testing.T, link int, data []byte) {
		l := Walk(link, data)
		for _, s := range append(append(l.Layers, l.Lists...), l.Strings...) {
			if s.Start < 0 || s.Start > s.End || s.End > len(data) {
				t.Fatalf("span %+v outside %d octets", s, len(data))
			}
		}
		for _, ln := range l.Lengths {
			if ln.Off < 0 || ln.Off+ln.Size > len(data) {
				t.Fatalf("length %+v outside %d octets", ln, len(data))
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"rxe-nfs42-rdma.pcap", "siw-nfs42-rdma.pcap"} {
		c, raw := loadReal(f, name)
		f.Add(raw[:min(len(raw), 600)])
		ng, _ := c.Encode(source.FormatPcapNG)
		f.Add(ng[:min(len(ng), 600)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz", b)
		if err != nil {
			return
		}
		// What parses re-encodes and parses to the same packets.
		for _, fm := range []source.Format{source.FormatPcap, source.FormatPcapNG} {
			enc, _ := c.Encode(fm)
			d, err := Parse("re", enc)
			if err != nil || len(d.Packets) != len(c.Packets) {
				t.Fatalf("re-encoded as %v: %v, %d packets", fm, err, len(d.Packets))
			}
		}
	})
}

// Offsets from a clean dissection add truncation points.
func TestPlanOffsets(t *testing.T) {
	c, _ := loadReal(t, "rxe-nfs42-rdma.pcap")
	has := func(plan []*Mutant, name string) bool {
		for _, m := range plan {
			if m.Name == name {
				return true
			}
		}
		return false
	}
	const name = "rxe-nfs42-rdma.pcap/trunc-layer/f1/caplen=101"
	if has(Plan(c, Options{Seed: 1, Repeat: 1}), name) {
		t.Fatalf("%s planned without the offset", name)
	}
	if !has(Plan(c, Options{Seed: 1, Repeat: 1, Offsets: [][]int{{100}}}), name) {
		t.Errorf("%s not planned for dissected offset 100", name)
	}
}

// compress's blocks end where it says, holding what it says: the
// libraries, given the stream cut at a block's end, give at least the
// octets of the blocks before it (zstd's holds a frame's last block back
// until the checksum after it is read: that block ends right before it,
// with Last_Block set).
func TestCompressBlocks(t *testing.T) {
	c, _ := loadReal(t, "siw-nfs42-rdma.pcap")
	plain, idx := c.Encode(source.FormatPcapNG)
	for _, kind := range compressions[1:] {
		z := compress(kind, plain, flushPoints(idx))
		if len(z.ends) != 6 || compressedKind(z.data) != kind {
			t.Fatalf("%v: %d blocks, kind %v", kind, len(z.ends), compressedKind(z.data))
		}
		for i, e := range z.ends {
			got := decompressPrefix(t, kind, z.data[:e])
			if kind == source.Zstd && i == len(z.ends)-1 {
				if h := z.data[z.blockStart(i)]; h&1 == 0 || e != len(z.data)-4 {
					t.Errorf("zstd: the last block (header %02x) does not end the frame at %d of %d", h, e, len(z.data))
				}
				got = decompressPrefix(t, kind, z.data)
			}
			if len(got) < z.plain[i] || !bytes.Equal(got, plain[:len(got)]) {
				t.Errorf("%v: cut at block %d's end (%d): %d octets, want %d of the capture", kind, i, e, len(got), z.plain[i])
			}
			if i > 0 && kind != source.Gzip {
				if got := decompressPrefix(t, kind, z.data[:e-1]); len(got) > z.plain[i-1] {
					t.Errorf("%v: block %d decompressed before its end", kind, i)
				}
			}
		}
	}
}

// decompressPrefix is what the library gives of b before its error.
func decompressPrefix(t *testing.T, kind source.Compression, b []byte) []byte {
	t.Helper()
	r, err := decompressor(kind, b)
	if err != nil {
		return nil
	}
	out, _ := io.ReadAll(r)
	return out
}
