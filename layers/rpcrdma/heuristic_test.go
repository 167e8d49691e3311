package rpcrdma

import (
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// The strict test for Sends of connections whose setup was not captured:
// real RPC-over-RDMA headers pass, other ULPs' Sends and damaged headers
// do not.
func TestPlausible(t *testing.T) {
	rpcCall := "00000601 00000000" // xid, CALL
	for _, tc := range []struct {
		name string
		hex  string
		want bool
	}{
		{"RDMA_MSG with a call of its xid", "00000601 00000001 00000080 00000000 00000000 00000000 00000000" + rpcCall, true},
		{"RDMA_MSG whose RPC xid differs", "00000601 00000001 00000080 00000000 00000000 00000000 00000000 00000602 00000000", false},
		{"RDMA_MSG without an RPC message", "00000601 00000001 00000080 00000000 00000000 00000000 00000000", false},
		{"RDMA_NOMSG ending at the Send's end", "00000601 00000001 00000080 00000001 00000000 00000000 00000000", true},
		{"RDMA_NOMSG with octets after it", "00000601 00000001 00000080 00000001 00000000 00000000 00000000 00000000", false},
		{"RDMA_ERROR ERR_VERS", "00000601 00000001 00000080 00000004 00000001 00000001 00000001", true},
		{"RDMA_ERROR unknown code", "00000601 00000001 00000080 00000004 00000009", false},
		{"version 2 RDMA_MSG", "00000601 00000002 00000080 00000000 00000000 00000000 00000000" + rpcCall, true},
		{"version 7", "00000601 00000007 00000080 00000000", false},
		{"credits beyond any implementation", "00000601 00000001 00100000 00000001 00000000 00000000 00000000", false},
		{"unknown procedure", "00000601 00000001 00000080 00000009", false},
		{"unterminated read list", "00000601 00000001 00000080 00000000 00000001", false},
		{"4-octet Send", "00000001", false},
		{"SMB Direct negotiate request", "00010001 00000a00 00040000 00040000 00000200", false},
		{"zeros", strings.Repeat("00", 100), false},
	} {
		var h Header
		if got := h.Plausible(testcap.Hex(t, tc.hex)); got != tc.want {
			t.Errorf("%s: Plausible = %v, want %v", tc.name, got, tc.want)
		}
	}
}
