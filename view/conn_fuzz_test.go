package view

import (
	"encoding/binary"
	"io"
	"os"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/expect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// packFrames encodes frames as the fuzz input: each a 2-octet length then
// its bytes.
func packFrames(frames [][]byte) []byte {
	var b []byte
	for _, f := range frames {
		b = binary.BigEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, f...)
	}
	return b
}

// eachPackedFrame hands the frames of a fuzz input (packFrames' encoding;
// a length beyond the input's end takes what is left) to fn as Ethernet
// frames numbered from 1, a second apart.
func eachPackedFrame(data []byte, fn func(*source.Frame)) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 1; len(data) >= 2; n++ {
		l := int(binary.BigEndian.Uint16(data))
		data = data[2:]
		if l > len(data) {
			l = len(data)
		}
		fr := source.Frame{Number: n, Time: t0.Add(time.Duration(n) * time.Second), LinkType: source.LinkTypeEthernet,
			Data: data[:l], CaptureLength: l, Length: l}
		data = data[l:]
		fn(&fr)
	}
}

// addFrameSeed adds the first max frames of a capture as a fuzz seed.
func addFrameSeed(f *testing.F, path string, max int) {
	frames := testcap.Data(f, path)
	if len(frames) > max {
		frames = frames[:max]
	}
	f.Add(packFrames(frames))
}

// FuzzConnsPipeline runs Ethernet frames through the dissector, the
// connection tracker and every connection view (table, JSON, ladder,
// check, expectations): nothing may panic, whatever the bytes. Seeds are
// the real captures and the synthetic connection captures.
func FuzzConnsPipeline(f *testing.F) {
	for _, p := range []string{
		testcap.RXE, testcap.SIW,
		testcap.Synthetic("synth-conn-rocev2-traffic.pcap"), testcap.Synthetic("synth-conn-rocev2-oddities.pcap"),
		testcap.Synthetic("synth-conn-rocev2-pvtdata.pcap"), testcap.Synthetic("synth-conn-iwarp-traffic.pcap"),
	} {
		if _, err := os.Stat(p); err == nil {
			addFrameSeed(f, p, 12)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := dissect.New(dissect.Options{})
		tr := conn.New(conn.Config{MaxConnections: 4, Timeout: 5 * time.Second})
		eachPackedFrame(data, func(fr *source.Frame) { tr.Record(d.Dissect(fr)) })
		d.Finish(tr.Record)
		tr.Finish()
		cs := tr.Connections()
		for _, w := range []func(io.Writer, []*conn.Connection) error{WriteConnsTable, WriteConnsJSON, WriteConnsLadder} {
			if err := w(io.Discard, cs); err != nil {
				t.Fatal(err)
			}
		}
		res := expect.Check(cs, tr.Findings(), expect.From(cs, tr.Findings()))
		if !res.Pass {
			t.Fatalf("a capture fails the expectations written from it: %+v", res.Differences)
		}
		if err := expect.WriteJUnit(io.Discard, res, "fuzz"); err != nil {
			t.Fatal(err)
		}
	})
}
