package dissect

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ulp"
)

// TestServicesEndWithDREP: the service a REQ named is known for both queue
// pairs once the REP came, and forgotten with the DREP (their Send
// reassembly too), so the tables hold the connections open, not every one a long capture had (the real
// rxe NFSv4.2 mount, replayed as connection after connection).
func TestServicesEndWithDREP(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	d := New(Options{})
	st := &d.sends.services
	known := 0
	for round := 0; round < 3; round++ {
		for i := range frames {
			r := d.Dissect(&frames[i])
			if r.Layer("cm") == nil && st.qps.idx.Len() == 2 {
				known++
			}
		}
		if n := st.qps.idx.Len() + st.ids.idx.Len(); n != 0 {
			t.Fatalf("round %d: %d entries left after the DREP", round, n)
		}
		for k := range d.rc.qps {
			if k.DestQP != 1 { // (QP1 is the CM's own, per pair of hosts)
				t.Fatalf("round %d: the Send reassembly of QP %d left after the DREP", round, k.DestQP)
			}
		}
	}
	if known == 0 {
		t.Fatal("no traffic while both queue pairs' service was known")
	}
	// The table still names the service in the middle of a connection.
	for i := range frames {
		d.Dissect(&frames[i])
		for _, e := range st.qps.ents {
			if e.seq != 0 && e.v.kind != ulp.KindRPCRDMA {
				t.Fatalf("QP %v: %v, want RPC-over-RDMA", e.k, e.v.kind)
			}
		}
	}
}

// TestKeyTable: past maxServices keys the one put first is forgotten (a
// deleted key is not counted), and keys that come and go, as connections
// do, allocate nothing once the table has held as many.
func TestKeyTable(t *testing.T) {
	var tab keyTable[int]
	key := func(i int) qpEnd { return qpEnd{qpn: uint32(i)} }
	tab.put(key(-1), -1)
	tab.del(key(-1))
	for i := range maxServices {
		tab.put(key(i), i)
	}
	tab.put(key(3), 33) // already held: keeps its age
	tab.put(key(maxServices), maxServices)
	if _, ok := tab.get(key(0)); ok || tab.idx.Len() != maxServices {
		t.Fatalf("oldest key kept, %d held", tab.idx.Len())
	}
	if v, ok := tab.get(key(3)); !ok || v != 33 {
		t.Fatalf("key 3: %d %v", v, ok)
	}
	var small keyTable[int]
	cycle := func() {
		for i := range 8 {
			small.put(key(i), i)
		}
		for i := range 8 {
			small.del(key(i))
		}
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Errorf("%v allocations per cycle", n)
	}
	if len(small.order) > 2*8+64 {
		t.Errorf("order holds %d positions", len(small.order))
	}
}
