package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// The bench capture's four connections at once between the same two hosts
// advertise the same reply chunk handle (at offsets that differ by the
// xid in their upper half, as the Linux client makes them): each RDMA
// Write is in its own call's segment, so no chunk finding is raised and
// every RDMA_NOMSG reply decodes from its reply chunk; the read chunk of
// each round is read whole.
func TestBenchChunks(t *testing.T) {
	t.Chdir("../..") // the templates are read from the repository's testdata
	path := filepath.Join(t.TempDir(), "bench.pcap")
	if err := writeBench(path, 4000); err != nil {
		t.Fatal(err)
	}
	d := dissect.New(dissect.Options{})
	nomsg, reads := 0, 0
	for _, f := range testcap.Frames(t, path) {
		r := d.Dissect(&f)
		for _, x := range r.Findings {
			if strings.HasPrefix(x.Code, "rpcrdma.") {
				t.Errorf("frame %d: %s", r.Frame, x)
			}
		}
		h, ok := r.Layer("rpcrdma").(*rpcrdma.Header)
		if !ok {
			continue
		}
		if h.Proc == rpcrdma.ProcNoMsg && r.Layer("rpc") != nil {
			nomsg++
		}
		for _, c := range h.Chunks {
			if c.Kind == rpcrdma.ChunkDataRead && c.Octets == c.Advertised && c.Octets == 3072 {
				reads++
			}
		}
	}
	// 4000 packets: a round (20 packets) per call pair, some rounds cut
	// by their connection's teardown after the reply chunk's reply and
	// before the read chunk's reply.
	if nomsg != 200 || reads != 192 {
		t.Errorf("%d RDMA_NOMSG replies decoded from their reply chunks, %d read chunks read whole: want 200 and 192", nomsg, reads)
	}
}
