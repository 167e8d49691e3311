// Package testconn gives the tests above conn their connections and
// records: built event by event, as the Linux kernel's NFS/RDMA exchange
// makes them (Kernel), or dissected and tracked from a capture as the
// commands do (EachRecord, TrackFile).
package testconn

import (
	"net/netip"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

var (
	client = conn.Peer{Addr: netip.MustParseAddr("192.168.122.10")}
	server = conn.Peer{Addr: netip.MustParseAddr("192.168.122.11")}
	start  = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
)

// Kernel builds the Linux NFS/RDMA exchange on RoCEv2 (REQ, REP, RTU,
// one oversized reply Send, DREQ, DREP) with the kernel's private data.
func Kernel(t *testing.T, serverULP []byte) []*conn.Connection {
	t.Helper()
	reqPD := make([]byte, 92)
	reqPD[1] = 0x40
	reqPD[2], reqPD[3] = 0x03, 0xff
	copy(reqPD[36:], []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03})
	repPD := make([]byte, 196)
	copy(repPD, serverULP)
	at := func(n int) time.Time { return start.Add(time.Duration(n) * time.Millisecond) }
	tr := conn.New(conn.Config{})
	tr.CM(&conn.CMEvent{Frame: 1, Time: at(1), Transport: conn.RoCEv2, Src: client, Dst: server, Type: ibcm.AttrREQ,
		TID: 1, LocalCommID: 0xa, ServiceID: 0x1064e51, QPN: 0x11, PrivateData: reqPD, ULPOffset: 36,
		CMAValid: true, CMAPort: 1023})
	tr.CM(&conn.CMEvent{Frame: 2, Time: at(2), Transport: conn.RoCEv2, Src: server, Dst: client, Type: ibcm.AttrREP,
		TID: 2, LocalCommID: 0xb, RemoteCommID: 0xa, QPN: 0x12, PrivateData: repPD})
	tr.CM(&conn.CMEvent{Frame: 3, Time: at(3), Transport: conn.RoCEv2, Src: client, Dst: server, Type: ibcm.AttrRTU,
		TID: 3, LocalCommID: 0xa, RemoteCommID: 0xb})
	tr.Send(&conn.SendEvent{FirstFrame: 4, LastFrame: 4, Time: at(4), Transport: conn.RoCEv2, Src: server, Dst: client,
		DestQP: 0x11, Length: 5000, RPCRDMA: true, XID: 0x77})
	tr.CM(&conn.CMEvent{Frame: 5, Time: at(5), Transport: conn.RoCEv2, Src: client, Dst: server, Type: ibcm.AttrDREQ,
		TID: 5, LocalCommID: 0xa, RemoteCommID: 0xb, QPN: 0x12})
	tr.CM(&conn.CMEvent{Frame: 6, Time: at(6), Transport: conn.RoCEv2, Src: server, Dst: client, Type: ibcm.AttrDREP,
		TID: 5, LocalCommID: 0xb, RemoteCommID: 0xa})
	tr.Finish()
	return tr.Connections()
}

// LinuxServer is the private data the Linux NFS server sends in its REP
// (RFC 8797, from svc_rdma_transport.c).
var LinuxServer = []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03}
