package replay

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
)

// capturedConns follows the connections of the capture at path with the
// project's dissector and connection tracker and returns what replay takes
// of them, as "replay --from" does.
func capturedConns(t *testing.T, path string) []Conn {
	t.Helper()
	return FromConnections(testconn.TrackFile(t, path).Connections())
}

// firstConn returns the first connection of the capture at path.
func firstConn(t *testing.T, path string) Conn {
	t.Helper()
	conns := capturedConns(t, path)
	if len(conns) == 0 {
		t.Fatalf("%s: no connection", path)
	}
	return conns[0]
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := ParseHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The kernel's NFSv4.2 mounts (PROVENANCE.md): client f6ab0e18 01010303,
// server f6ab0e18 01000303, zero-padded to the CM sizes on RoCE.
func TestConnectionsRealKernelCaptures(t *testing.T) {
	client := "f6ab0e1801010303"
	server := "f6ab0e1801000303"
	for _, tc := range []struct {
		file              string
		transport         string
		clientLen, srvLen int
	}{
		{"rxe-nfs42-rdma.pcap", "rocev2", 56, 196},
		{"siw-nfs42-rdma.pcap", "iwarp", 8, 8},
	} {
		t.Run(tc.file, func(t *testing.T) {
			conns := capturedConns(t, testcap.Real(tc.file))
			if len(conns) != 1 {
				t.Fatalf("got %d connections, want 1: %+v", len(conns), conns)
			}
			c := conns[0]
			if c.Transport != tc.transport || c.Port != 20049 || c.Rejected || c.ReplyFrame == 0 {
				t.Errorf("got %+v", c)
			}
			if len(c.ClientPrivateData) != tc.clientLen || !bytes.HasPrefix(c.ClientPrivateData, mustHex(t, client)) ||
				!allZero(c.ClientPrivateData[8:]) {
				t.Errorf("client private data %s", hex.EncodeToString(c.ClientPrivateData))
			}
			if len(c.ServerPrivateData) != tc.srvLen || !bytes.HasPrefix(c.ServerPrivateData, mustHex(t, server)) ||
				!allZero(c.ServerPrivateData[8:]) {
				t.Errorf("server private data %s", hex.EncodeToString(c.ServerPrivateData))
			}
		})
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestConnectionsDamagedFile: a capture cut in the middle of the REP yields
// the REQ alone, with no reply and no server private data.
func TestConnectionsDamagedFile(t *testing.T) {
	b, err := os.ReadFile(testcap.Real("live-rxe4-rfc8797.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.pcap")
	// Keep the file header, the REQ and half of the REP.
	if err := os.WriteFile(p, b[:24+16+322+100], 0o644); err != nil {
		t.Fatal(err)
	}
	conns := capturedConns(t, p)
	if len(conns) != 1 || conns[0].ReplyFrame != 0 || conns[0].ServerPrivateData != nil || len(conns[0].ClientPrivateData) != 56 {
		t.Errorf("got %+v, want the REQ alone", conns)
	}
}
