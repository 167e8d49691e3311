package ibcm

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
		if _, named := portSpaceNames[uint64(ps)]; ok != named || (ok && (gotPS != uint16(ps) || port != 20049)) {
			t.Errorf("RDMACMPort(%#x) = %#x %d %t, named %t", sid, gotPS, port, ok, named)
		}
	}
	if _, _, ok := RDMACMPort(1<<32 | uint64(PortSpaceTCP)<<16); ok {
		t.Error("a service ID above 32 bits taken for rdma_cm")
	}
}

func TestDescribe(t *testing.T) {
	for sid, want := range map[uint64]string{
		0x0000000001064e51: "NFS/RDMA (rdma_cm TCP port 20049)",
		0x0000000001061144: "NVMe-oF (rdma_cm TCP port 4420)",
		0x0000000001060cbc: "iSER (rdma_cm TCP port 3260)",
		0x00000000010603db: "Lustre o2iblnd (rdma_cm TCP port 987)",
		0x00000000010648ca: "RDS (rdma_cm TCP port 18634)",
		0x0000000001060801: "NFS (rdma_cm TCP port 2049)",
		0x0000000001111d2f: "rdma_cm UDP port 7471",
		0x00000000013f4e51: "rdma_cm IB port 20049",
		0x1000000000000001: "IPoIB-CM (QPN 0x000001)",
		0x2000000000000001: "0x2000000000000001",
	} {
		if got := Describe(sid); got != want {
			t.Errorf("Describe(%#x) = %q, want %q", sid, got, want)
		}
	}
}

// TestServiceText: both renderings of a service ID, appended without fmt,
// read as the fmt renderings they replaced, and name the same ULP.
func TestServiceText(t *testing.T) {
	desc := func(sid uint64) string {
		ps, port, ok := RDMACMPort(sid)
		if !ok {
			return fmt.Sprintf("0x%016x", sid)
		}
		s := fmt.Sprintf("rdma_cm %s port %d", portSpaceNames[uint64(ps)], port)
		if name, ok := servicePortNames[port]; ok && ps != PortSpaceIB {
			return name + " (" + s + ")"
		}
		return s
	}
	short := func(sid uint64) string {
		ps, port, ok := RDMACMPort(sid)
		if !ok {
			return fmt.Sprintf("0x%016x", sid)
		}
		if name, ok := servicePortNames[port]; ok && ps != PortSpaceIB {
			return fmt.Sprintf("%s(%d)", name, port)
		}
		return fmt.Sprintf("%s port %d", portSpaceNames[uint64(ps)], port)
	}
	sids := []uint64{0, 1, 0x1064e51, 0xffffffffffffffff, 0x0000000100000000, 0x013f4e51, 0x01114e51, 0x00021234, 0x01060801}
	for ps := range portSpaceNames {
		for port := range servicePortNames {
			sids = append(sids, uint64(ServiceIDFor(uint16(ps), port)))
		}
	}
	for _, sid := range sids {
		if got, want := Describe(sid), desc(sid); got != want {
			t.Errorf("Describe(%#x) = %q, want %q", sid, got, want)
		}
		if got, want := ServiceID(sid).String(), short(sid); got != want {
			t.Errorf("ServiceID(%#x).String() = %q, want %q", sid, got, want)
		}
	}
}
