package main

// Whole-pipeline fuzz targets (issue 9): file bytes → reader → layers →
// connections → every view, in-process through run(). They complement the
// per-decoder targets in each layer package. Run one for a sustained time:
//
//	go test -run='^$' -fuzz='^FuzzPipeline$' -fuzztime=30m -timeout=0 -parallel 1 ./cmd/cmpd-dissect
//
// A failure is a panic, a run over its time bound or memory bound, text
// output that could drive a terminal, invalid UTF-8 JSON, or an exit status
// other than 0, 1 or 2. Crashers land in testdata/fuzz/<Target>/ and run
// as regression tests with every plain go test.

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/internal/torture"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// fuzzViews are the views each fuzz input runs through: between them they
// render every field as text (tree) and JSON, the summary, the filter, and
// connection tracking with its ladder and check verdict. The others
// (fields, stats …) read the same records and run in the torture harness.
var fuzzViews = sync.OnceValue(func() []tortureView {
	all, _ := discoverViews()
	var out []tortureView
	for _, v := range all {
		switch v.name {
		case "summary", "tree", "json", "filter", "conns-ladder", "check-json", "stats-json":
			out = append(out, v)
		}
	}
	return out
})

// fuzzMaxInput bounds a fuzz input: bigger ones only slow the fuzzer down
// (the torture harness runs the big captures).
const fuzzMaxInput = 64 << 10

func fuzzConfig() tortureConfig {
	cfg := loadTortureConfig()
	if os.Getenv("CMPD_TORTURE_TIMEOUT") == "" {
		cfg.timeout = 10 * time.Second
	}
	return cfg
}

// fuzzRunAll runs the reader and every view on one capture file's bytes.
func fuzzRunAll(t *testing.T, data []byte) {
	if len(data) > fuzzMaxInput {
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "in.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, p := readFrames(path); p != nil {
		t.Fatalf("reader panicked: %v", p)
	}
	cfg := fuzzConfig()
	for _, v := range fuzzViews() {
		res, why := judge(v, path, data, nil, nil, cfg)
		if why != "" {
			// A run over its time or memory bound is abandoned (its goroutine
			// cannot be stopped): failing here makes the fuzzer keep the input.
			t.Fatalf("view %s (%v): %s (%v, exit %d)", v.name, v.args(path), why, res.elapsed, res.code)
		}
	}
}

// seedCaptures adds the committed captures (and their pcapng and gzip
// encodings) and the kept regression inputs.
func seedCaptures(f *testing.F) []*torture.Capture {
	var caps []*torture.Capture
	for _, p := range captureFiles(f) {
		c, raw, err := torture.ReadFile(p)
		if raw == nil {
			f.Fatal(err)
		}
		if err != nil {
			if len(raw) <= fuzzMaxInput {
				f.Add(raw)
			}
			continue
		}
		// Big captures are seeded by their first 64 packets.
		if len(c.Packets) > 64 {
			c.Packets = c.Packets[:64]
			raw, _ = c.Encode(c.Format)
		}
		if len(raw) > fuzzMaxInput {
			continue
		}
		f.Add(raw)
		caps = append(caps, c)
		ng, _ := c.Encode(source.FormatPcapNG)
		f.Add(ng)
		pc, _ := c.Encode(source.FormatPcap)
		f.Add(torture.Gzip(pc))
	}
	for _, p := range regressionInputs() {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	return caps
}

// FuzzPipeline feeds arbitrary file bytes to the whole command.
func FuzzPipeline(f *testing.F) {
	seedCaptures(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRunAll(t, data)
	})
}

// FuzzPipelinePacket is structure-aware: the fuzzer edits one packet, which
// is placed in a valid capture after the real captures' connection setup
// (so connection state, reassembly and Send decoding see it), or alone
// under the InfiniBand and ERF link types. ctx picks the context:
// 0 RoCEv2 after the rxe CM exchange, 1 iWARP after the siw handshake and
// MPA exchange, 2 LINKTYPE_INFINIBAND, 3 LINKTYPE_ERF.
func FuzzPipelinePacket(f *testing.F) {
	rxe, siw := loadRealCapture(f, "rxe-nfs42-rdma.pcap"), loadRealCapture(f, "siw-nfs42-rdma.pcap")
	for i, p := range rxe.Packets {
		if i < 12 || i%9 == 0 {
			f.Add(uint8(0), p.Data)
		}
	}
	for i, p := range siw.Packets {
		if i < 12 || i%9 == 0 {
			f.Add(uint8(1), p.Data)
		}
	}
	// Native IB: the rxe REQ's BTH onwards behind an LRH (LNH 2: BTH next).
	req := rxe.Packets[0].Data[42:]
	lrh := []byte{0xf0, 0x02, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(lrh[2:], uint16((8+len(req)+2)/4))
	f.Add(uint8(2), append(append(lrh, req...), 0, 0))
	erf := make([]byte, 16)
	erf[8] = 21
	binary.BigEndian.PutUint16(erf[10:], uint16(16+8+len(req)+2))
	binary.BigEndian.PutUint16(erf[14:], uint16(8+len(req)+2))
	f.Add(uint8(3), append(append(append(erf, lrh...), req...), 0, 0))

	f.Fuzz(func(t *testing.T, ctx uint8, pkt []byte) {
		var c *torture.Capture
		switch ctx % 4 {
		case 0:
			c = rxe.Clone()
			c.Packets = c.Packets[:3]
		case 1:
			c = siw.Clone()
			c.Packets = c.Packets[:7]
		case 2, 3:
			c = &torture.Capture{Name: "fuzz", Format: source.FormatPcap}
		}
		link := torture.LinkEthernet
		switch ctx % 4 {
		case 2:
			link = torture.LinkInfiniBand
		case 3:
			link = torture.LinkERF
		}
		base := time.Unix(1700000000, 0)
		if len(c.Packets) > 0 {
			base = c.Packets[len(c.Packets)-1].Time
		}
		c.Packets = append(c.Packets, torture.Packet{Time: base.Add(time.Millisecond), LinkType: link, Data: pkt, OrigLen: len(pkt)})
		// The packet twice more: a retransmission and a duplicate after it.
		c.Packets = append(c.Packets, c.Packets[len(c.Packets)-1])
		b, _ := c.Encode(source.FormatPcap)
		fuzzRunAll(t, b)
	})
}

// FuzzPvtdataView runs "cmpd-dissect pvtdata" on raw private-data bytes
// from stdin, in each reading mode, as a tree and as JSON: no panic, no
// hang, no control character in the text, valid UTF-8 JSON.
func FuzzPvtdataView(f *testing.F) {
	root := newRootCommand(nil, nil, nil)
	var pv *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "pvtdata" {
			pv = c
		}
	}
	if pv == nil {
		f.Skip("pvtdata command not built")
	}
	for _, s := range [][]byte{
		{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03},
		{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03},
		{0x00, 0x80, 0x00, 0x00, 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03},
		{0x18, 0x0e, 0xab, 0xf6, 0x01, 0x01, 0x03, 0x03},
		[]byte(torture.Escape),
		append(make([]byte, 36), 0xf6, 0xab, 0x0e, 0x18, 0x02, 0xff, 0xff, 0xff),
	} {
		f.Add(s, uint8(0))
	}
	cfg := fuzzConfig()
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if len(data) > 4096 {
			return
		}
		m := []string{"rfc8797", "draft", "linux"}[mode%3]
		for _, v := range []tortureView{
			{name: "pvtdata", args: func(string) []string { return []string{"pvtdata", "--mode", m, "-"} }, stdin: true},
			{name: "pvtdata-json", out: outJSONDoc, args: func(string) []string { return []string{"pvtdata", "--mode", m, "--json", "-"} }, stdin: true},
		} {
			res, why := judge(v, "-", data, nil, nil, cfg)
			if why != "" {
				t.Fatalf("%s %v: %s (exit %d)", v.name, v.args("-"), why, res.code)
			}
		}
	})
}
