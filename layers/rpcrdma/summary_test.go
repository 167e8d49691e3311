package rpcrdma

import (
	"strings"
	"testing"
)

// TestNameTablesMatchMaps: the summary lines' name tables name every
// value as appendName does with the map they were made from.
func TestNameTablesMatchMaps(t *testing.T) {
	for name, c := range map[string]struct {
		t *nameTable
		m map[uint64]string
	}{
		"accept": {acceptNameTable, acceptNames}, "proc": {procNameTable, procNames},
		"ops": {nfsV4OpTable, nfsV4Ops}, "cbops": {nfsV4CBOpTable, nfsV4CBOps},
		"stat3": {nfsStat3Table, nfsStat3}, "stat4": {nfsStat4Table, nfsStat4},
	} {
		vals := []uint32{200, 1 << 20, 1<<32 - 1}
		for v := uint32(0); v < 140; v++ {
			vals = append(vals, v)
		}
		for k := range c.m {
			vals = append(vals, uint32(k))
		}
		for _, v := range vals {
			if got, want := string(c.t.appendName([]byte("x"), v)), string(appendName([]byte("x"), c.m, v)); got != want {
				t.Errorf("%s %d: %q, want %q", name, v, got, want)
			}
		}
	}
	for p := Proc(0); p < 10; p++ {
		h := &Header{Version: 1, Proc: p}
		if got, want := string(h.AppendSummary(nil)), p.String()+" xid=0x00000000"; !strings.HasPrefix(got, want) {
			t.Errorf("proc %d: %q, want it to start %q", p, got, want)
		}
	}
}
