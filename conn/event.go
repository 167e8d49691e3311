// Package conn follows RDMA connections through a capture: it pairs the IB
// CM messages (REQ, MRA, REP or REJ, RTU, DREQ, DREP; SIDR_REQ and SIDR_REP)
// and the iWARP MPA Request and Reply or Reject into connections, reads each
// side's private data with pvtdata, negotiates what RFC 8797 says the peers
// agreed, and checks the RPC-over-RDMA Sends that follow against it.
//
// The tracker works on a small event model (CMEvent, MPAEvent, SendEvent)
// so the state machines and checks are independent of how the layers are
// decoded; Tracker.Record turns a dissect.Record into those events. It is
// the only place besides reassembly with memory across packets, and its
// memory is bounded (Config).
package conn

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Transport is the RDMA transport a connection runs over.
type Transport uint8

const (
	TransportUnknown Transport = iota
	// RoCEv2 is IB transport over UDP/IP (port 4791).
	RoCEv2
	// RoCEv1 is IB transport with a GRH directly over Ethernet (0x8915).
	RoCEv1
	// IB is native InfiniBand (LRH first).
	IB
	// IWARP is MPA/DDP/RDMAP over TCP.
	IWARP
)

var transportNames = [...]string{TransportUnknown: "unknown", RoCEv2: "rocev2", RoCEv1: "rocev1", IB: "ib", IWARP: "iwarp"}

func (t Transport) String() string { return enum.Name("Transport", transportNames[:], t) }

// MarshalText renders the transport as its lower-case name.
func (t Transport) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// ParseTransport parses a name String returns.
func ParseTransport(s string) (Transport, error) {
	for i, n := range transportNames {
		if n == s {
			return Transport(i), nil
		}
	}
	return 0, fmt.Errorf("unknown transport %q (want rocev2, rocev1, ib or iwarp)", s)
}

// Peer is one end of a connection as the network shows it.
type Peer struct {
	// Addr is the IP address (RoCEv2, iWARP) or the GID (RoCEv1, IB with a
	// GRH); the zero Addr when the packet carried none.
	Addr netip.Addr
	// LID is the InfiniBand local identifier (native IB; 0 otherwise).
	LID uint16
	// Port is the TCP port (iWARP) or the rdma_cm port (IB/RoCE: the
	// client's port from the rdma_cm header, the server's from the service
	// ID); 0 when unknown.
	Port uint16
}

// IsZero reports that nothing is known of the peer.
func (p Peer) IsZero() bool { return !p.Addr.IsValid() && p.LID == 0 && p.Port == 0 }

// host is p without its port: the key that identifies a node.
func (p Peer) host() Peer { p.Port = 0; return p }

// String renders "192.0.2.1:20049", "[fe80::1]:20049", "lid 0x0005" or
// "lid 0x0005 gid fe80::1".
func (p Peer) String() string { return string(p.AppendTo(nil)) }

// AppendTo appends String's text to b.
func (p Peer) AppendTo(b []byte) []byte {
	switch {
	case p.Addr.IsValid() && p.LID != 0:
		b = appendHex(append(b, "lid 0x"...), uint64(p.LID), 4)
		b = p.Addr.AppendTo(append(b, " gid "...))
	case p.Addr.IsValid():
		if p.Port != 0 {
			return netip.AddrPortFrom(p.Addr, p.Port).AppendTo(b)
		}
		return p.Addr.AppendTo(b)
	case p.LID != 0:
		b = appendHex(append(b, "lid 0x"...), uint64(p.LID), 4)
	default:
		b = append(b, '?')
	}
	if p.Port != 0 {
		b = strconv.AppendUint(append(b, " port "...), uint64(p.Port), 10)
	}
	return b
}

// appendHex appends v in lower-case hex, at least digits long (as %0*x).
func appendHex(b []byte, v uint64, digits int) []byte {
	const hex = "0123456789abcdef"
	n := 1
	for x := v >> 4; x != 0; x >>= 4 {
		n++
	}
	for ; digits > n; digits-- {
		b = append(b, '0')
	}
	for shift := 4 * (n - 1); shift >= 0; shift -= 4 {
		b = append(b, hex[v>>shift&0xf])
	}
	return b
}

// MarshalText renders the peer as String does.
func (p Peer) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// CMEvent is one IB CM MAD seen on the wire (IB, RoCEv1 or RoCEv2).
//
// Slices alias the caller's buffers: the tracker copies what it keeps.
type CMEvent struct {
	Frame     int
	Time      time.Time
	Transport Transport
	// Src and Dst are the network ends the MAD travelled between (IP
	// addresses on RoCEv2, GIDs on RoCEv1, LIDs and GIDs on IB); ports 0.
	Src, Dst Peer
	// Type is the message's CM attribute ID (ibcm.AttrREQ …).
	Type uint16
	// TID is the MAD transaction ID: a retransmitted MAD repeats it.
	TID uint64
	// LocalCommID is the sender's communication ID, RemoteCommID the
	// receiver's (0 where the message has none, as in a REQ). For SIDR the
	// RequestID is in LocalCommID.
	LocalCommID, RemoteCommID uint32
	// ServiceID is set on REQ, SIDR_REQ and SIDR_REP.
	ServiceID uint64
	// QPN is the sender's QP on REQ and REP, the granted QP on SIDR_REP
	// and the receiver's QP on DREQ.
	QPN uint32
	// Reject holds REJ's reason code and its name; SIDRStatus the
	// SIDR_REP status.
	RejectReason     uint16
	RejectReasonName string
	SIDRStatus       uint8
	// PrivateData is the message's whole private data field and ULPOffset
	// where the ULP's part starts in it (36 after the rdma_cm header in
	// REQ and SIDR_REQ; 0 otherwise).
	PrivateData []byte
	ULPOffset   int
	// PrivateDataAt is the frame offset of PrivateData[0]; 0 when unknown.
	PrivateDataAt int
	// Decoded is the CM layer's decode of the ULP part (ibcm.CM.PD; nil:
	// none): the tracker takes its readings when it read the same octets,
	// rather than reading them again.
	Decoded *pvtdata.PrivateData
	// Uncaptured reports private data cut by the capture's snap length:
	// PrivateData holds only the octets captured (PrivateData.Uncaptured).
	Uncaptured bool
	// FixedCut reports a message whose fixed fields the capture's snap
	// length cut (Uncaptured too): of the message only Type, TID, the ends
	// and the fields Captured names are known; the other comm IDs, QPN,
	// service ID and reject reason are zero because they were not
	// captured, not because they were sent so.
	FixedCut bool
	Captured CMFields
	// CMAValid reports an rdma_cm IP header in the private data; CMASrc,
	// CMADst and CMAPort are its addresses and the initiator's port.
	CMAValid       bool
	CMASrc, CMADst netip.Addr
	CMAPort        uint16
}

// CMFields names the fields of a CMEvent that a message cut in its fixed
// fields may hold (CMEvent.Captured).
type CMFields uint8

const (
	CapturedLocalCommID CMFields = 1 << iota
	CapturedRemoteCommID
	CapturedServiceID
	CapturedQPN
	CapturedReason
)

// has reports whether ev's field f is known: each of a message whose fixed
// fields were captured, those Captured names of one they were not.
func (ev *CMEvent) has(f CMFields) bool { return !ev.FixedCut || ev.Captured&f != 0 }

// MPAType is the kind of MPA start-up frame.
type MPAType uint8

const (
	MPARequest MPAType = iota + 1
	MPAReply
	MPAReject
)

func (t MPAType) String() string {
	switch t {
	case MPARequest:
		return "MPA Request"
	case MPAReply:
		return "MPA Reply"
	case MPAReject:
		return "MPA Reject"
	}
	return fmt.Sprintf("MPAType(%d)", uint8(t))
}

// MPAEvent is one MPA Request, Reply or Reject frame on a TCP stream.
type MPAEvent struct {
	Frame int
	Time  time.Time
	// Src and Dst are the TCP ends (address and port).
	Src, Dst Peer
	Type     MPAType
	Revision uint8
	// Flags is the raw flags octet (M 0x80, C 0x40, R 0x20, Enhanced 0x10).
	Flags uint8
	// PrivateData is the whole MPA private data, ULPOffset where the ULP
	// part starts (4 after the MPA v2 IRD/ORD words).
	PrivateData []byte
	ULPOffset   int
	// PrivateDataAt is the frame offset of PrivateData[0]; 0 when unknown
	// (reassembled from several segments).
	PrivateDataAt int
	// Decoded is the MPA layer's decode of the ULP part (mpa.Frame.PD; nil:
	// none), taken as CMEvent.Decoded is.
	Decoded *pvtdata.PrivateData
	// Uncaptured is CMEvent.Uncaptured.
	Uncaptured bool
}

// SendEvent is one complete RDMA Send (reassembled if it spanned packets),
// with what the RPC-over-RDMA decoder found in it.
type SendEvent struct {
	FirstFrame, LastFrame int
	Time                  time.Time
	Transport             Transport
	// Src and Dst are the network ends; on iWARP with TCP ports.
	Src, Dst Peer
	// DestQP is the BTH destination QP (IB/RoCE; 0 on iWARP).
	DestQP uint32
	// Length is the Send's payload length in octets.
	Length int
	// Invalidate marks Send with Invalidate; InvalidateSTag is the STag.
	Invalidate     bool
	InvalidateSTag uint32
	// RPCRDMA reports the payload decoded as an RPC-over-RDMA header; XID
	// and Proc are from it, Handles every chunk-segment handle (STag) it
	// offers in its read list, write list and reply chunk.
	RPCRDMA bool
	XID     uint32
	Proc    uint32
	Handles []uint32
	// Credits is the header's credit field (RFC 8166 §3.3: requested in
	// calls, granted in replies); Call and Reply give the type of the RPC
	// message carried inline (both false: none, as in RDMA_NOMSG).
	Credits     uint32
	Call, Reply bool
	// Chunks is what moved for the chunks of the call a reply answers
	// (the rpcrdma.chunk_data of its header).
	Chunks ChunkTotals
}
