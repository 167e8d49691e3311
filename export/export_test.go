package export

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
)

// exported is what exportFile saw while writing, to compare the files with.
type exported struct {
	tracker       *conn.Tracker
	frameFindings int
	frames        int
	// handed is the connections written before the end of the capture.
	handed int
}

// exportFile runs one capture through a dissector, a tracker and a Capture,
// as the export command does.
func exportFile(t *testing.T, o Options, path string) exported {
	t.Helper()
	return exportFileHandOff(t, o, path, true)
}

// exportFileHandOff is exportFile, the connections written as they end
// (Capture.HandOff) or, handOff false, all at the end.
func exportFileHandOff(t *testing.T, o Options, path string, handOff bool) exported {
	t.Helper()
	return exportEach(t, o, path, handOff, nil)
}

// exportEach is exportFileHandOff, calling each (when not nil) after every
// record.
func exportEach(t testing.TB, o Options, path string, handOff bool, each func(*conn.Tracker)) exported {
	t.Helper()
	fs, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	c, err := NewCapture(o, CaptureName(path))
	if err != nil {
		t.Fatal(err)
	}
	d := dissect.New(dissect.Options{})
	ex := exported{tracker: conn.New(conn.Config{})}
	qps := transport.New(transport.Config{})
	if handOff {
		c.HandOff(ex.tracker, qps)
	}
	feed := func(rec *dissect.Record) {
		qps.Record(rec)
		ex.tracker.Record(rec)
		ex.frameFindings += len(rec.Findings)
		if err := c.Record(rec, ex.tracker); err != nil {
			t.Fatal(err)
		}
		if each != nil {
			each(ex.tracker)
		}
	}
	var f source.Frame
	for {
		err := fs.Next(&f)
		if err == io.EOF {
			break
		}
		var re *source.RecordError
		if errors.As(err, &re) {
			feed(d.DamagedRecord(re))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ex.frames++
		feed(d.Dissect(&f))
	}
	d.Finish(feed)
	ex.handed = int(c.Rows()[TableConnections])
	ex.tracker.Finish()
	ex.tracker.AttachTransport(qps)
	if err := c.Finish(ex.tracker); err != nil {
		t.Fatal(err)
	}
	return ex
}

var testCaptures = []string{"live-rxe4-nfs3.pcap", "live-siw4-nfs42.pcap", "live-rxe4-reject.pcap", "live-rxe4-overrun.pcap"}

func readNDJSON[T any](t *testing.T, path, index string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var out []T
	for n := 0; sc.Scan(); n++ {
		if n%2 == 0 {
			var action map[string]map[string]string
			if err := json.Unmarshal(sc.Bytes(), &action); err != nil || action["index"]["_index"] != index {
				t.Fatalf("%s line %d: want the bulk action for %s, got %s", path, n+1, index, sc.Text())
			}
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s line %d: %v", path, n+1, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameRows compares the Parquet rows with the NDJSON ones (the capture is
// the partition in Parquet, a field in NDJSON; times go through JSON).
func sameRows[T any](t *testing.T, table string, pq, js []T, capture string) {
	t.Helper()
	if len(pq) != len(js) {
		t.Fatalf("%s: %d Parquet rows, %d NDJSON documents", table, len(pq), len(js))
	}
	for i := range pq {
		a := reflect.ValueOf(&pq[i]).Elem()
		a.FieldByName("Capture").SetString(capture)
		b, _ := json.Marshal(pq[i])
		c, _ := json.Marshal(js[i])
		if string(b) != string(c) {
			t.Errorf("%s row %d:\nparquet %s\nndjson  %s", table, i, b, c)
		}
	}
}

func TestExportParquetAndNDJSONAgree(t *testing.T) {
	pqDir, jsDir := t.TempDir(), t.TempDir()
	for _, name := range testCaptures {
		path := testcap.Real(name)
		ex := exportFile(t, Options{Format: Parquet, Dir: pqDir, Packets: true}, path)
		exportFile(t, Options{Format: NDJSON, Dir: jsDir, Packets: true, IndexPrefix: "cd-"}, path)
		capture := CaptureName(path)
		part := func(dir, table, ext string) string {
			return filepath.Join(dir, table, "capture="+capture, "part-0."+ext)
		}

		conns, err := parquet.ReadFile[Connection](part(pqDir, TableConnections, "parquet"))
		if err != nil {
			t.Fatal(err)
		}
		cs := ex.tracker.Connections()
		if len(conns) != len(cs) {
			t.Fatalf("%s: %d connection rows, tracker has %d", name, len(conns), len(cs))
		}
		for i, c := range cs {
			r := conns[i]
			if r.ID != int64(c.ID) || r.State != c.State.String() || r.Client != c.Client.String() || r.SchemaVersion != SchemaVersion {
				t.Errorf("%s: connection row %d = %+v, tracker has id %d %s %s", name, i, r, c.ID, c.State, c.Client)
			}
		}
		sameRows(t, TableConnections, conns, readNDJSON[Connection](t, part(jsDir, TableConnections, "ndjson"), "cd-connections"), capture)

		fs, err := parquet.ReadFile[Finding](part(pqDir, TableFindings, "parquet"))
		if err != nil {
			t.Fatal(err)
		}
		frameRows := 0
		for _, f := range fs {
			if f.Origin == "frame" {
				frameRows++
			}
		}
		if frameRows != ex.frameFindings {
			t.Errorf("%s: %d findings of origin frame, the records had %d", name, frameRows, ex.frameFindings)
		}
		sameRows(t, TableFindings, fs, readNDJSON[Finding](t, part(jsDir, TableFindings, "ndjson"), "cd-findings"), capture)

		qs, err := parquet.ReadFile[QueuePair](part(pqDir, TableQueuePairs, "parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if name == "live-rxe4-nfs3.pcap" && len(qs) != 2 {
			t.Errorf("%s: %d queue pair rows, want the connection's 2", name, len(qs))
		}
		sameRows(t, TableQueuePairs, qs, readNDJSON[QueuePair](t, part(jsDir, TableQueuePairs, "ndjson"), "cd-queue_pairs"), capture)

		rpcs, err := parquet.ReadFile[RPC](part(pqDir, TableRPC, "parquet"))
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, TableRPC, rpcs, readNDJSON[RPC](t, part(jsDir, TableRPC, "ndjson"), "cd-rpc"), capture)

		pks, err := parquet.ReadFile[Packet](part(pqDir, TablePackets, "parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if len(pks) != ex.frames {
			t.Errorf("%s: %d packet rows, %d frames", name, len(pks), ex.frames)
		}
		for i, p := range pks {
			if p.Frame != int64(i+1) {
				t.Fatalf("%s: packet row %d is frame %d", name, i, p.Frame)
			}
		}
		sameRows(t, TablePackets, pks, readNDJSON[Packet](t, part(jsDir, TablePackets, "ndjson"), "cd-packets"), capture)
	}
}

// TestExportRPCMatchesReplies checks the rpc table of the NFSv3 capture:
// every call answered (RPC replies and RDMA_NOMSG replies by reply chunk),
// in call order of their replies, with the reply after the call.
func TestExportRPCMatchesReplies(t *testing.T) {
	dir := t.TempDir()
	path := testcap.Real("live-rxe4-nfs3.pcap")
	exportFile(t, Options{Format: Parquet, Dir: dir}, path)
	rows, err := parquet.ReadFile[RPC](filepath.Join(dir, TableRPC, "capture="+CaptureName(path), "part-0.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 21 {
		t.Fatalf("%d rpc rows, want the 21 calls of the capture", len(rows))
	}
	kinds := map[string]int{}
	for _, r := range rows {
		if r.CallFrame == nil || r.ReplyFrame == nil || r.ReplyMS == nil || r.Program == nil {
			t.Fatalf("unmatched row %+v", r)
		}
		// NFS (100003) and NFS_ACL (100227) version 3.
		if *r.ReplyFrame <= *r.CallFrame || *r.ReplyMS <= 0 || (*r.Program != 100003 && *r.Program != 100227) ||
			*r.Version != 3 || r.Connection == nil || *r.Connection != 1 {
			t.Errorf("xid %#x: call frame %d, reply frame %d, %.3f ms, program %d version %d, connection %v",
				r.XID, *r.CallFrame, *r.ReplyFrame, *r.ReplyMS, *r.Program, *r.Version, r.Connection)
		}
		kinds[*r.ReplyKind]++
	}
	// The READDIR/GETACL-sized replies came back by RDMA Write into the
	// reply chunk (RDMA_NOMSG), the others in the Send.
	if kinds["rpc"] == 0 || kinds["rdma_nomsg"] == 0 {
		t.Errorf("reply kinds %v: want both RPC replies and RDMA_NOMSG", kinds)
	}
}

// TestExportRowGroups checks that rows are written in row groups of the
// configured size as they come (not held to the end), zstd-compressed, a
// new part file every partColumnChunks column chunks (row groups of all
// the columns), and that exporting again
// replaces every part.
func TestExportRowGroups(t *testing.T) {
	dir := t.TempDir()
	path := testcap.Real("live-rxe4-nfs3.pcap")
	const groupRows = 4
	ex := exportFile(t, Options{Format: Parquet, Dir: dir, Packets: true, RowGroupRows: groupRows}, path)
	parts := packetParts(t, dir, path)
	perPart := partColumnChunks / len(parquet.SchemaOf(Packet{}).Columns())
	if want := (ex.frames + groupRows*perPart - 1) / (groupRows * perPart); len(parts) != want || want < 2 {
		t.Fatalf("%d parts for %d rows, want %d (at least 2)", len(parts), ex.frames, want)
	}
	rows, groups := 0, 0
	for i, name := range parts {
		if want := fmt.Sprintf("part-%d.parquet", i); name != want {
			t.Fatalf("part %d is %s, want %s", i, name, want)
		}
		f, err := os.Open(filepath.Join(dir, TablePackets, "capture="+CaptureName(path), name))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		gs := pf.Metadata().RowGroups
		if len(gs) > perPart || i < len(parts)-1 && len(gs) != perPart {
			t.Errorf("%s: %d row groups, want %d (at most, in the last)", name, len(gs), perPart)
		}
		for _, g := range gs {
			rows += int(g.NumRows)
			for _, c := range g.Columns {
				if c.MetaData.Codec != format.Zstd {
					t.Fatalf("column %v: codec %v, want ZSTD", c.MetaData.PathInSchema, c.MetaData.Codec)
				}
			}
		}
		groups += len(gs)
		f.Close()
	}
	if want := (ex.frames + groupRows - 1) / groupRows; groups != want || rows != ex.frames {
		t.Errorf("%d row groups of %d rows in all, want %d of %d", groups, rows, want, ex.frames)
	}
	// Again with large row groups: one part, the others removed.
	exportFile(t, Options{Format: Parquet, Dir: dir, Packets: true}, path)
	if parts := packetParts(t, dir, path); len(parts) != 1 || parts[0] != "part-0.parquet" {
		t.Errorf("exported again: parts %v, want only part-0.parquet", parts)
	}
}

// packetParts lists the files of the packets table of the capture path.
func packetParts(t *testing.T, dir, path string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, TablePackets, "capture="+CaptureName(path)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	// part-10 after part-9.
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(len(a), len(b))*2 + cmp.Compare(a, b) })
	return names
}

// TestExportMemoryFlat: the memory an export holds does not grow with the
// packets. The frames of the real rxe capture other than its CM MADs are
// fed again and again (as one long stream of traffic on queue pairs the
// tracker does not know: no connections pile up in the tracker) to a
// Capture writing every table, packets included; the heap it keeps after a
// few parts must not be larger after eight times as many packets.
func TestExportMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200k packet rows")
	}
	frames := testcap.Frames(t, testcap.RXE)
	c, err := NewCapture(Options{Format: Parquet, Dir: t.TempDir(), Packets: true, RowGroupRows: 256}, "flat")
	if err != nil {
		t.Fatal(err)
	}
	d := dissect.New(dissect.Options{})
	tr := conn.New(conn.Config{})
	n, packets := 0, 0
	feed := func(rounds int) {
		for range rounds {
			for i := range frames {
				f := frames[i]
				n++
				f.Number = n
				rec := d.Dissect(&f)
				if slices.ContainsFunc(rec.Layers, func(l field.Layer) bool { _, ok := l.(*ibcm.CM); return ok }) {
					continue
				}
				tr.Record(rec)
				if err := c.Record(rec, tr); err != nil {
					t.Fatal(err)
				}
				packets++
			}
		}
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC() // the second empties the pools the first moved aside
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const rounds = 250 // about 25k packets: 6 parts of the packets table
	feed(rounds)
	before, at := heap(), packets
	feed(8 * rounds)
	after := heap()
	t.Logf("heap %d kB after %d packets, %d kB after %d", before>>10, at, after>>10, packets)
	// In one file per table, the writers' metadata of the row groups
	// written made the heap grow by 20 MB here.
	if after > before+256<<10 {
		t.Errorf("heap grew from %d kB after %d packets to %d kB after %d", before>>10, at, after>>10, packets)
	}
	if err := c.Finish(tr); err != nil {
		t.Fatal(err)
	}
	if got := c.Rows()[TablePackets]; got != int64(packets) {
		t.Errorf("%d packet rows, want %d", got, packets)
	}
}

func TestCaptureName(t *testing.T) {
	for in, want := range map[string]string{
		"a/b/host1.pcapng":   "host1.pcapng",
		"-":                  "stdin",
		"dir/my cap=1%.pcap": "my_cap_1_.pcap",
		"x+y_z-1.pcap.gz":    "x+y_z-1.pcap.gz",
	} {
		if got := CaptureName(in); got != want {
			t.Errorf("CaptureName(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := NewCapture(Options{Format: "csv", Dir: t.TempDir()}, "x"); err == nil {
		t.Error("format csv accepted")
	}
	if _, err := NewCapture(Options{Format: Parquet, Dir: t.TempDir()}, ".."); err == nil {
		t.Error("capture name .. accepted")
	}
}
