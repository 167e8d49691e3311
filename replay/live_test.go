package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// liveDir is where the live-traces captures and the replay engine's
// reports are: the committed ones, or a fresh run's (make test-live sets
// CMPD_LIVE_DIR).
func liveDir() string {
	if d := os.Getenv("CMPD_LIVE_DIR"); d != "" {
		return d
	}
	return testcap.Path("pcaps", "real")
}

func readReports(t *testing.T, path string) []Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Report
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r Report
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if r.Event == EventEstablished || r.Event == EventRejected {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// padded reports whether wire is sent followed by zero octets only (IB CM
// private data is fixed-length and zero-padded).
func padded(wire, sent []byte) bool {
	return bytes.HasPrefix(wire, sent) && allZero(wire[len(sent):])
}

// TestLiveReportsMatchCaptures checks, for every replay capture, that what
// each side's librdmacm sent and handed up is what the capture holds: the
// client's bytes in the REQ / MPA Request (zero-padded to 56 octets on
// RoCE), the server's in the REP, REJ or MPA Reply, and the received
// private data exactly the captured bytes.
func TestLiveReportsMatchCaptures(t *testing.T) {
	dir := liveDir()
	reports, _ := filepath.Glob(filepath.Join(dir, "live-*.client.jsonl"))
	if len(reports) == 0 {
		t.Skipf("no live-*.client.jsonl in %s (make live-traces makes them)", dir)
	}
	for _, cr := range reports {
		name := strings.TrimSuffix(filepath.Base(cr), ".client.jsonl")
		t.Run(name, func(t *testing.T) {
			conns := capturedConns(t, filepath.Join(dir, name+".pcap"))
			client := readReports(t, cr)
			server := readReports(t, filepath.Join(dir, name+".server.jsonl"))
			if len(client) != len(conns) || len(server) != len(conns) {
				t.Fatalf("%d connections in the capture, %d client and %d server reports", len(conns), len(client), len(server))
			}
			for i, c := range conns {
				cl, sv := client[i], server[i]
				where := fmt.Sprintf("connection %d (frames %d/%d)", c.N, c.RequestFrame, c.ReplyFrame)
				if c.ReplyFrame == 0 {
					t.Errorf("%s: no reply in the capture", where)
				}
				wantTransport := map[string]string{"rocev2": "ib", "iwarp": "iwarp"}[c.Transport]
				if cl.Transport != wantTransport || sv.Transport != wantTransport {
					t.Errorf("%s: capture is %s, librdmacm reported %s/%s", where, c.Transport, cl.Transport, sv.Transport)
				}
				if c.Rejected != (cl.Event == EventRejected) || c.Rejected != (sv.Event == EventRejected) {
					t.Errorf("%s: rejected in capture %v, client %s, server %s", where, c.Rejected, cl.Event, sv.Event)
				}
				exactLen := c.Transport == "iwarp"
				if !padded(c.ClientPrivateData, cl.SentPrivateData) || exactLen && len(c.ClientPrivateData) != len(cl.SentPrivateData) {
					t.Errorf("%s: client sent %x, the request carries %x", where, cl.SentPrivateData, c.ClientPrivateData)
				}
				if !padded(c.ServerPrivateData, sv.SentPrivateData) || exactLen && len(c.ServerPrivateData) != len(sv.SentPrivateData) {
					t.Errorf("%s: server sent %x, the reply carries %x", where, sv.SentPrivateData, c.ServerPrivateData)
				}
				if sv.ReceivedPrivateDataLen != len(sv.ReceivedPrivateData) || !bytes.Equal(sv.ReceivedPrivateData, c.ClientPrivateData) {
					t.Errorf("%s: server's librdmacm handed up %d octets %x, the request carries %x",
						where, sv.ReceivedPrivateDataLen, sv.ReceivedPrivateData, c.ClientPrivateData)
				}
				if cl.ReceivedPrivateDataLen != len(cl.ReceivedPrivateData) || !bytes.Equal(cl.ReceivedPrivateData, c.ServerPrivateData) {
					t.Errorf("%s: client's librdmacm handed up %d octets %x, the reply carries %x",
						where, cl.ReceivedPrivateDataLen, cl.ReceivedPrivateData, c.ServerPrivateData)
				}
			}
		})
	}
}

// TestLiveRedriveMatchesSource checks that the captures re-driven from a
// committed kernel capture (replay --from rxe-nfs42-rdma.pcap --conn 1)
// carry the same private data as the original.
func TestLiveRedriveMatchesSource(t *testing.T) {
	dir := liveDir()
	redrives, _ := filepath.Glob(filepath.Join(dir, "live-*-redrive.pcap"))
	if len(redrives) == 0 {
		t.Skipf("no live-*-redrive.pcap in %s (make live-traces makes them)", dir)
	}
	src := firstConn(t, testcap.Real("rxe-nfs42-rdma.pcap"))
	for _, p := range redrives {
		t.Run(filepath.Base(p), func(t *testing.T) {
			c := firstConn(t, p)
			if !bytes.Equal(c.ClientPrivateData, src.ClientPrivateData) {
				t.Errorf("client private data %x, the source capture's %x", c.ClientPrivateData, src.ClientPrivateData)
			}
			if !bytes.Equal(c.ServerPrivateData, src.ServerPrivateData) {
				t.Errorf("server private data %x, the source capture's %x", c.ServerPrivateData, src.ServerPrivateData)
			}
			if c.Port != src.Port || c.Rejected != src.Rejected {
				t.Errorf("port %d rejected %v, the source's %d %v", c.Port, c.Rejected, src.Port, src.Rejected)
			}
		})
	}
}
