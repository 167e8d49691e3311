package conn

import (
	"fmt"
	"testing"
)

// TestRDMACMPortSpaces: RDMACMPort's switch knows exactly the port spaces
// portSpaceNames names.
func TestRDMACMPortSpaces(t *testing.T) {
	for ps := 0; ps <= 0xffff; ps++ {
		sid := uint64(ps)<<16 | 20049
		gotPS, port, ok := RDMACMPort(sid)
		if _, named := portSpaceNames[uint16(ps)]; ok != named || (ok && (gotPS != uint16(ps) || port != 20049)) {
			t.Errorf("RDMACMPort(%#x) = %#x %d %t, named %t", sid, gotPS, port, ok, named)
		}
	}
	if _, _, ok := RDMACMPort(1<<32 | uint64(PortSpaceTCP)<<16); ok {
		t.Error("a service ID above 32 bits taken for rdma_cm")
	}
}

// TestMsgBuilder: the per-Send messages built without fmt read as fmt
// would write them.
func TestMsgBuilder(t *testing.T) {
	var m msgBuilder
	for _, ev := range []SendEvent{{XID: 0xdeadbeef, RPCRDMA: true, InvalidateSTag: 0xcd1, Length: 5000},
		{InvalidateSTag: 0xffffffff, Length: 0}, {XID: 7, RPCRDMA: true}} {
		f := listedFinding{xid: ev.XID}
		if ev.RPCRDMA {
			f.flags = flagRPC
		}
		got := m.reset().s("a ").int(ev.Length).s(" b ").hex(ev.InvalidateSTag).xid(&f).s(".").String()
		want := fmt.Sprintf("a %d b 0x%08x%s.", ev.Length, ev.InvalidateSTag, xidNote(&ev))
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
