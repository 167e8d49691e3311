package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// pcapWith is a classic pcap file (snap length 0xffffffff, as a hostile or
// damaged header may say) holding one 3-octet packet and then a record
// header claiming capLen octets, followed by a few octets only.
func pcapWith(o binary.AppendByteOrder, nanos bool, capLen uint32) (b []byte, badOff int64) {
	magic := uint32(0xa1b2c3d4)
	if nanos {
		magic = 0xa1b23c4d
	}
	b = o.AppendUint32(b, magic)
	b = o.AppendUint16(b, 2)
	b = o.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = o.AppendUint32(b, 0xffffffff)
	b = o.AppendUint32(b, 1)
	for i, n := range []uint32{3, capLen} {
		if i == 1 {
			badOff = int64(len(b))
		}
		b = o.AppendUint32(b, uint32(i))
		b = o.AppendUint32(b, 0)
		b = o.AppendUint32(b, n)
		b = o.AppendUint32(b, n)
		b = append(b, 1, 2, 3)
	}
	return b, badOff
}

// TestOversizedRecords: a record header claiming more than maxPacket
// octets (4 GB in pcap, in a packet block up to the block limit in pcapng)
// is a damaged record reported after the good frame before it, from every
// reader (mapped file, stream, gzip), and is never allocated for.
func TestOversizedRecords(t *testing.T) {
	type input struct {
		name   string
		data   []byte
		badOff int64
		want   string
	}
	var inputs []input
	for _, c := range []struct {
		name  string
		o     binary.AppendByteOrder
		nanos bool
	}{{"pcap LE", binary.LittleEndian, false}, {"pcap BE", binary.BigEndian, false}, {"pcap nanosecond LE", binary.LittleEndian, true}, {"pcap nanosecond BE", binary.BigEndian, true}} {
		b, off := pcapWith(c.o, c.nanos, 0xfffffff0)
		inputs = append(inputs, input{c.name, b, off, "captured length 4294967280 is over the 262144-byte limit"})
		b, off = pcapWith(c.o, c.nanos, maxPacket+1)
		inputs = append(inputs, input{c.name + " one over", b, off, "captured length 262145 is over the 262144-byte limit"})
	}
	// pcapng: the block's total length is within maxBlock, its packet data
	// over maxPacket; the block is cut soon after its header.
	for _, c := range []struct {
		name string
		typ  uint32
		o    binary.ByteOrder
	}{{"pcapng EPB LE", blockEPB, binary.LittleEndian}, {"pcapng EPB BE", blockEPB, binary.BigEndian}, {"pcapng PB", blockPB, binary.LittleEndian}, {"pcapng SPB", blockSPB, binary.LittleEndian}} {
		w := &ngBuilder{o: c.o.(interface {
			binary.ByteOrder
			binary.AppendByteOrder
		})}
		w.shb()
		w.idb(1)
		w.epb(0, 1, []byte{1, 2, 3})
		off := int64(len(w.b))
		total := uint32(maxBlock - 4)
		w.b = append(append(w.b, w.u32(c.typ)...), w.u32(total)...)
		want := "captured length 4294967280 is over the 262144-byte limit"
		if c.typ == blockSPB {
			w.b = append(w.b, w.u32(100)...)
			want = "packet data of 16777196 bytes is over the 262144-byte limit"
		} else {
			w.b = append(w.b, w.u32(0)...)          // interface (PB: and drops count)
			w.b = append(w.b, w.u32(0)...)          // timestamp
			w.b = append(w.b, w.u32(0)...)          //
			w.b = append(w.b, w.u32(0xfffffff0)...) // captured length
			w.b = append(w.b, w.u32(0xfffffff0)...) // original length
		}
		w.b = append(w.b, make([]byte, 64)...)
		inputs = append(inputs, input{c.name, w.b, off, want})
	}
	dir := t.TempDir()
	for _, in := range inputs {
		path := filepath.Join(dir, "in")
		if err := os.WriteFile(path, in.data, 0o644); err != nil {
			t.Fatal(err)
		}
		gzPath := filepath.Join(dir, "in.gz")
		if err := os.WriteFile(gzPath, gz(t, in.data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, via := range []struct {
			name  string
			file  string
			stdin []byte
		}{{"stdin", "-", in.data}, {"file", path, nil}, {"gzip stdin", "-", gz(t, in.data)}, {"gzip file", gzPath, nil}} {
			var stdin *bytes.Reader
			if via.stdin != nil {
				stdin = bytes.NewReader(via.stdin)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var fs *Files
			var err error
			if stdin != nil {
				fs, err = OpenFiles([]string{via.file}, stdin)
			} else {
				fs, err = OpenFiles([]string{via.file}, nil)
			}
			if err != nil {
				t.Fatalf("%s via %s: %v", in.name, via.name, err)
			}
			frames, errs := readAll(t, fs)
			fs.Close()
			runtime.ReadMemStats(&after)
			var re *RecordError
			if len(frames) != 1 || !bytes.Equal(frames[0].Data, []byte{1, 2, 3}) || len(errs) != 1 || !errors.As(errs[0], &re) {
				t.Fatalf("%s via %s: %d frames, errors %v", in.name, via.name, len(frames), errs)
			}
			if re.Frame != 2 || re.Offset != in.badOff || !strings.HasSuffix(re.Error(), in.want) || !strings.Contains(re.Error(), via.file) {
				t.Errorf("%s via %s: %v, want frame 2 at offset %d: %s", in.name, via.name, re, in.badOff, in.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("%s via %s: %d bytes allocated", in.name, via.name, alloc)
			}
		}
	}
}
