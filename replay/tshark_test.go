package replay

import (
	"bytes"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// tsharkPrivateData runs tshark once on path and returns the private data
// of each request and of each reply, in frame order (one tshark run per
// file: tshark takes a second or more to start).
func tsharkPrivateData(t *testing.T, path string) (requests, replies [][]byte) {
	t.Helper()
	rows := testcap.TsharkFields(t, path,
		"infiniband.cm.req || infiniband.cm.rep.private || infiniband.cm.rej.private || "+
			"(iwarp_mpa.privatedata && !tcp.analysis.retransmission)",
		"infiniband.cm.req.ip_cm.private", "infiniband.cm.rep.private", "infiniband.cm.rej.private",
		"iwarp_mpa.key.req", "iwarp_mpa.privatedata")
	dec := func(s string) []byte {
		b, err := hex.DecodeString(strings.ReplaceAll(s, ":", ""))
		if err != nil {
			t.Fatalf("tshark value %q: %v", s, err)
		}
		return b
	}
	for _, col := range rows {
		if len(col) != 5 {
			continue
		}
		switch {
		case col[0] != "":
			requests = append(requests, dec(col[0]))
		case col[1] != "" || col[2] != "":
			replies = append(replies, dec(col[1]+col[2]))
		case col[4] != "" && col[3] != "":
			requests = append(requests, dec(col[4]))
		case col[4] != "":
			replies = append(replies, dec(col[4]))
		}
	}
	return requests, replies
}

// TestConnectionsAgreeWithTshark: the private data Connections reads from
// every real capture is the bytes tshark shows (tshark 4.0 shows the IP CM
// consumer private data of a REQ after the rdma_cm header, and MPA private
// data with the IRD/ORD words in front).
func TestConnectionsAgreeWithTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed: apt-get install tshark to compare with Wireshark")
	}
	caps := testcap.Glob(t, "pcaps/real/*.pcap")
	for _, p := range caps {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			conns, err := Connections(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(conns) == 0 {
				t.Fatal("no connections")
			}
			client, server := tsharkPrivateData(t, p)
			irdOrd := 0
			if conns[0].Transport == "iwarp" {
				irdOrd = mpaIRDORDLen
			}
			if len(client) != len(conns) {
				t.Fatalf("tshark shows %d requests, Connections %d", len(client), len(conns))
			}
			j := 0
			for i, c := range conns {
				if !bytes.Equal(c.ClientPrivateData, skip(client[i], irdOrd)) {
					t.Errorf("connection %d: client %x, tshark %x", c.N, c.ClientPrivateData, client[i])
				}
				if c.ReplyFrame == 0 {
					continue
				}
				if j >= len(server) {
					t.Fatalf("connection %d: tshark shows no reply", c.N)
				}
				if !bytes.Equal(c.ServerPrivateData, skip(server[j], irdOrd)) {
					t.Errorf("connection %d: server %x, tshark %x", c.N, c.ServerPrivateData, server[j])
				}
				j++
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
