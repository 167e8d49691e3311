package dissect

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ulp"
)

// TestServicesEndWithDREP: the service a REQ named is known for both queue
// pairs once the REP came, and forgotten with the DREP, so the table
// holds the connections open, not every one a long capture had (the real
// rxe NFSv4.2 mount, replayed as connection after connection).
func TestServicesEndWithDREP(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := New(Options{})
	st := &d.sends.services
	known := 0
	for round := 0; round < 3; round++ {
		for i := range frames {
			r := d.Dissect(&frames[i])
			if r.Layer("cm") == nil && len(st.qps.cur) == 2 {
				known++
			}
		}
		if n := len(st.qps.cur) + len(st.qps.old) + len(st.ids.cur) + len(st.ids.old); n != 0 {
			t.Fatalf("round %d: %d entries left after the DREP", round, n)
		}
	}
	if known == 0 {
		t.Fatal("no traffic while both queue pairs' service was known")
	}
	// The table still names the service in the middle of a connection.
	for i := range frames {
		d.Dissect(&frames[i])
		for k, s := range st.qps.cur {
			if s.kind != ulp.KindRPCRDMA {
				t.Fatalf("QP %v: %v, want RPC-over-RDMA", k, s.kind)
			}
		}
	}
}
