package replay

import (
	"bytes"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
)

// tsharkMsg is a connection request or reply as tshark shows it.
type tsharkMsg struct {
	frame    int
	src, dst string
	port     int // the request's rdma_cm port or TCP destination port
	data     []byte
	rejected bool
}

// tsharkExchanges runs tshark once on path and returns each request and
// each reply, in frame order (one tshark run per file: tshark takes a
// second or more to start).
func tsharkExchanges(t *testing.T, path string) (requests, replies []tsharkMsg) {
	t.Helper()
	cols := []string{"frame.number", "ip.src", "ipv6.src", "ip.dst", "ipv6.dst",
		"infiniband.cm.req.ip_cm.private", "infiniband.cm.rep.private", "infiniband.cm.rej.private",
		"iwarp_mpa.key.req", "iwarp_mpa.privatedata", "infiniband.cm.req.serviceid.dport", "tcp.dstport",
		"iwarp_mpa.rej_flag"}
	rows := testcap.TsharkFields(t, path,
		"infiniband.cm.req || infiniband.cm.rep.private || infiniband.cm.rej.private || "+
			"(iwarp_mpa.privatedata && !tcp.analysis.retransmission)", cols...)
	dec := func(s string) []byte {
		b, err := hex.DecodeString(strings.ReplaceAll(s, ":", ""))
		if err != nil {
			t.Fatalf("tshark value %q: %v", s, err)
		}
		return b
	}
	port := func(s string) int { // tshark prints the service ID's port in hex, TCP's in decimal
		v, err := strconv.ParseUint(s, 0, 16)
		if err != nil {
			t.Fatalf("tshark port %q: %v", s, err)
		}
		return int(v)
	}
	for _, col := range rows {
		if len(col) != len(cols) {
			continue
		}
		m := tsharkMsg{src: col[1] + col[2], dst: col[3] + col[4]}
		m.frame, _ = strconv.Atoi(col[0])
		switch {
		case col[5] != "":
			m.data = dec(col[5])
			m.port = port(col[10])
			requests = append(requests, m)
		case col[6] != "" || col[7] != "":
			m.data, m.rejected = dec(col[6]+col[7]), col[7] != ""
			replies = append(replies, m)
		case col[9] != "" && col[8] != "":
			m.data = dec(col[9])
			m.port = port(col[11])
			requests = append(requests, m)
		case col[9] != "":
			m.data, m.rejected = dec(col[9]), col[12] == "1" || col[12] == "True"
			replies = append(replies, m)
		}
	}
	return requests, replies
}

// TestConnectionsAgreeWithTshark: what replay takes from every real
// capture (through the dissector and the connection tracker) is what tshark
// shows: the frames, addresses and port of each request and reply, whether
// it was rejected, and the private data bytes (tshark 4.0 shows the IP CM
// consumer private data of a REQ after the rdma_cm header, and MPA private
// data with the IRD/ORD words in front).
func TestConnectionsAgreeWithTshark(t *testing.T) {
	caps := testcap.Glob(t, "pcaps/real/*.pcap")
	for _, p := range caps {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			conns := capturedConns(t, p)
			if len(conns) == 0 {
				t.Fatal("no connections")
			}
			requests, replies := tsharkExchanges(t, p)
			if len(requests) != len(conns) {
				t.Fatalf("tshark shows %d requests, the tracker %d connections", len(requests), len(conns))
			}
			j := 0
			for i, c := range conns {
				req := requests[i]
				// tshark shows MPA private data with the IRD/ORD words in
				// front when there are any (revision 2, Enhanced); replay
				// takes the ULP's part. A revision 1 reply without private
				// data has no tshark field at all.
				irdOrd := 0
				if c.Transport == "iwarp" && len(req.data) == len(c.ClientPrivateData)+mpa.IRDORDLen {
					irdOrd = mpa.IRDORDLen
				}
				if c.RequestFrame != req.frame || c.Client != req.src || c.Server != req.dst || c.Port != req.port {
					t.Errorf("connection %d: request frame %d %s → %s port %d, tshark frame %d %s → %s port %d",
						c.N, c.RequestFrame, c.Client, c.Server, c.Port, req.frame, req.src, req.dst, req.port)
				}
				if !bytes.Equal(c.ClientPrivateData, skip(req.data, irdOrd)) {
					t.Errorf("connection %d: client %x, tshark %x", c.N, c.ClientPrivateData, req.data)
				}
				if c.ReplyFrame == 0 || (c.Transport == "iwarp" && irdOrd == 0 && len(c.ServerPrivateData) == 0) {
					continue
				}
				if j >= len(replies) {
					t.Fatalf("connection %d: tshark shows no reply", c.N)
				}
				rep := replies[j]
				if c.ReplyFrame != rep.frame || c.Rejected != rep.rejected {
					t.Errorf("connection %d: reply frame %d rejected %v, tshark frame %d rejected %v",
						c.N, c.ReplyFrame, c.Rejected, rep.frame, rep.rejected)
				}
				if !bytes.Equal(c.ServerPrivateData, skip(rep.data, irdOrd)) {
					t.Errorf("connection %d: server %x, tshark %x", c.N, c.ServerPrivateData, rep.data)
				}
				j++
			}
			if j != len(replies) {
				t.Errorf("tshark shows %d replies, the tracker %d", len(replies), j)
			}
		})
	}
}

func skip(b []byte, n int) []byte {
	if len(b) < n {
		return nil
	}
	return b[n:]
}
