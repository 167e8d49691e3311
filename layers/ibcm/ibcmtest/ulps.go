package ibcmtest

import (
	"encoding/binary"
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// ULPCase is a REQ to a ULP's rdma_cm port with that ULP's private data
// after the IP CM header, and the label pvtdata should give it.
type ULPCase struct {
	Name string
	Port uint16
	Data []byte
	Want pvtdata.ULPKind
}

// ULPCases are the other ULPs that put data in CM private data
// (wire-formats.md §8), laid out as the Linux drivers send them.
func ULPCases() []ULPCase {
	le := binary.LittleEndian
	nvme := make([]byte, 32)      // struct nvme_rdma_cm_req, little-endian
	le.PutUint16(nvme[0:], 0)     // recfmt 1.0
	le.PutUint16(nvme[2:], 1)     // qid
	le.PutUint16(nvme[4:], 128)   // hrqsize
	le.PutUint16(nvme[6:], 127)   // hsqsize (0's based)
	iser := []byte{0x40, 0, 0, 0} // struct iser_cm_hdr: SEND_W_INV not supported
	lustre := make([]byte, 56)    // kib_msg header, sender's (little-endian) order
	le.PutUint32(lustre[0:], 0x0be91b91)
	le.PutUint16(lustre[4:], 0x12)
	lustre[6], lustre[7] = 0xc0, 8 // CONNREQ, credits
	srp := make([]byte, 56)        // struct srp_login_req_rdma, big-endian
	be := binary.BigEndian
	be.PutUint64(srp[0:], 0x1)    // tag
	be.PutUint16(srp[8:], 0x0006) // req_buf_fmt: direct and indirect
	srp[11] = 0                   // SRP_LOGIN_REQ
	be.PutUint32(srp[12:], 8260)  // req_it_iu_len
	copy(srp[16:32], []byte{0x00, 0x02, 0xc9, 0x03, 0, 0, 0xaa, 0x02, 0, 0, 0, 0, 0, 0, 0, 1})
	copy(srp[32:48], []byte{0x00, 0x02, 0xc9, 0x03, 0, 0, 0xaa, 0x01, 0, 0, 0, 0, 0, 0, 0, 1})
	return []ULPCase{
		{"NVMe-oF", 4420, nvme, pvtdata.ULPNVMe},
		{"iSER", 3260, iser, pvtdata.ULPISER},
		{"Lustre o2iblnd", 987, lustre, pvtdata.ULPLustre},
		{"SRP", 5555, srp, pvtdata.ULPSRP},
		{"NFS/RDMA without private data", 20049, nil, pvtdata.ULPRPCRDMA},
	}
}

// ULPRequests returns a REQ for every ULPCase in enc.
func ULPRequests(enc Encoding) ([]Packet, error) {
	var out []Packet
	for i, u := range ULPCases() {
		cm := REQ(enc)
		cm.REQ.ServiceID = ibcm.ServiceID(ibcm.PortSpaceTCP<<16 | uint64(u.Port))
		cm.REQ.LocalCommID += uint32(0x100 + i)
		h := ipcm(enc)
		cm.PrivateData = append(h.AppendTo(nil), u.Data...)
		f, err := Frame(enc, &Client, &Server, MAD(uint32(400+i), 0x5000+uint64(i), ibcm.MethodSend, cm)...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.Name, err)
		}
		out = append(out, Packet{Name: "REQ " + u.Name, Frame: f})
	}
	return out, nil
}
