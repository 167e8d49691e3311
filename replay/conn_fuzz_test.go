package replay

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// FuzzFromConnections feeds arbitrary Ethernet frames (seeded with the first
// frames of every real capture, the requests and replies among them) through
// the path "replay --from" takes: dissector, connection tracker,
// FromConnections. It must never panic, and every connection it reports must
// be internally consistent.
func FuzzFromConnections(f *testing.F) {
	for _, c := range testcap.Glob(f, "pcaps/real/*.pcap") {
		frames := testcap.Data(f, c)
		for _, data := range frames[:min(12, len(frames))] {
			f.Add(data, data)
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d := dissect.New(dissect.Options{})
		tr := conn.New(conn.Config{})
		for i, data := range [][]byte{a, b, a} {
			fr := source.Frame{Number: i + 1, LinkType: source.LinkTypeEthernet, Data: data,
				CaptureLength: len(data), Length: len(data)}
			tr.Record(d.Dissect(&fr))
		}
		d.Finish(tr.Record)
		tr.Finish()
		for i, c := range FromConnections(tr.Connections()) {
			if c.N != i+1 || c.RequestFrame < 1 || c.RequestFrame > 3 || c.ReplyFrame < 0 || c.ReplyFrame > 3 {
				t.Fatalf("inconsistent connection %+v", c)
			}
			if c.ClientPrivateData == nil || (c.ServerPrivateData != nil && c.ReplyFrame == 0) {
				t.Fatalf("private data does not match the frames: %+v", c)
			}
			if c.Port < 0 || c.Port > 0xffff {
				t.Fatalf("port %d", c.Port)
			}
		}
	})
}
