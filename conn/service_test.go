package conn

import "testing"

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
