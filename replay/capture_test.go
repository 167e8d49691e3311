package replay

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

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
			conns, err := Connections(testcap.Real(tc.file))
			if err != nil {
				t.Fatal(err)
			}
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
