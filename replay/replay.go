// Package replay opens real RDMA connections with chosen connection private
// data, through librdmacm, so that what the Linux stack puts on the wire can
// be captured and compared with what cmpd-dissect decodes.
//
// A server (Serve) listens on an rdma_cm port in the TCP port space
// (RDMA_PS_TCP), accepts one connection request with its private data
// (rdma_accept) or refuses it with that private data (rdma_reject) and waits
// for the client to disconnect. A client (Dial) resolves the address and
// route, creates an RC QP, connects with its private data (rdma_connect),
// then disconnects. Each side reports what its librdmacm handed up: the
// event and the private data with its length, exactly as
// rdma_cm_event.param.conn gave them.
//
// The librdmacm part is cgo and is compiled only with the build tag rdmacm
// (go build -tags rdmacm, on Linux, with librdmacm-dev installed), so the
// default build of cmpd-dissect stays pure Go and static; without the tag,
// Serve and Dial return ErrNoRDMACM.
//
// FromConnections takes the private data of the connections the connection
// tracker (package conn) followed in a capture, so a connection observed in
// the field can be re-driven.
package replay

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// ErrNoRDMACM is returned by Serve and Dial in a build without librdmacm.
var ErrNoRDMACM = errors.New("this cmpd-dissect was built without rdmacm support: " +
	"rebuild with `go build -tags rdmacm ./cmd/cmpd-dissect` on Linux with cgo and librdmacm-dev " +
	"(Debian: apt-get install librdmacm-dev libibverbs-dev)")

// DefaultPort is the rdma_cm port used when none is given: NFS/RDMA's
// 20049, the service RFC 8797 private data belongs to.
const DefaultPort = pvtdata.PortNFSRDMA

// Role names the side of a connection.
type Role string

// The two roles.
const (
	RoleClient Role = "client"
	RoleServer Role = "server"
)

// Event names what a report describes, after the rdma_cm events.
type Event string

// Events reported.
const (
	EventListening    Event = "listening"    // server: rdma_listen done
	EventEstablished  Event = "established"  // RDMA_CM_EVENT_ESTABLISHED
	EventRejected     Event = "rejected"     // client: RDMA_CM_EVENT_REJECTED; server: it called rdma_reject
	EventDisconnected Event = "disconnected" // RDMA_CM_EVENT_DISCONNECTED, connection torn down
)

// Config says what one side does.
type Config struct {
	// Role is RoleClient or RoleServer.
	Role Role
	// Addr is, for a client, the server's IPv4 or IPv6 address; for a
	// server, the local address to listen on (empty: any).
	Addr string
	// Source is the client's local address (empty: chosen by routing).
	Source string
	// Port is the rdma_cm port (service ID 0x0106<<16 | port on IB/RoCE,
	// the TCP port on iWARP).
	Port int
	// PrivateData is what this side sends: the client in rdma_connect, the
	// server in rdma_accept or rdma_reject. At most 255 octets (librdmacm's
	// private_data_len is a uint8_t); the transport may allow less (56 in
	// an IB/RoCE REQ after the rdma_cm header).
	PrivateData []byte
	// Reject makes the server refuse the connection with rdma_reject.
	Reject bool
	// Timeout bounds each wait for an rdma_cm event (0: 10 s).
	Timeout time.Duration
	// Hold is how long the client keeps the connection established
	// before it disconnects.
	Hold time.Duration
	// SendNull makes a client post, once established and before the
	// hold, one Send: an RPC-over-RDMA v1 RDMA_MSG carrying an NFSv4 NULL
	// call (NullCall). The server never posts a receive buffer, so its RC
	// transport answers with RNR NAKs and the client's retries the Send
	// until it disconnects: a capture of RNR NAKs. A server ignores it
	// (both sides are given the same flags).
	SendNull bool
}

// NullCall is the Send of SendNull: RPC-over-RDMA v1 (RFC 8166) RDMA_MSG,
// xid 1, 1 credit, three empty chunk lists, then the ONC RPC call NFS
// (100003) version 4 procedure 0 (NULL), AUTH_NONE.
var NullCall = []byte{
	0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, // xid, vers 1, credits 1, RDMA_MSG
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // read list, write list, reply chunk: none
	0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, // xid, CALL, RPC version 2
	0, 1, 0x86, 0xa3, 0, 0, 0, 4, 0, 0, 0, 0, // NFS, version 4, NULL
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // cred and verf AUTH_NONE
}

// MaxPrivateData is the most private data librdmacm can carry in one call.
const MaxPrivateData = 255

// Validate checks c for mistakes that librdmacm would report less clearly.
func (c *Config) Validate() error {
	switch c.Role {
	case RoleClient:
		if c.Addr == "" {
			return errors.New("client: no server address")
		}
	case RoleServer:
	default:
		return fmt.Errorf("role %q: want client or server", c.Role)
	}
	if c.Port <= 0 || c.Port > 0xffff {
		return fmt.Errorf("port %d: want 1..65535", c.Port)
	}
	if len(c.PrivateData) > MaxPrivateData {
		return fmt.Errorf("private data: %d octets, librdmacm carries at most %d", len(c.PrivateData), MaxPrivateData)
	}
	if c.Reject && c.Role != RoleServer {
		return errors.New("reject: only the server rejects")
	}
	return nil
}

func (c *Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return 10 * time.Second
	}
	return c.Timeout
}

// Report is what one side saw, printed as one JSON object per event.
type Report struct {
	Role  Role  `json:"role"`
	Event Event `json:"event"`
	// Device is the RDMA device librdmacm bound to (rxe0, siw0 …) and
	// Transport its transport: "ib" (InfiniBand, RoCE) or "iwarp".
	Device    string `json:"device,omitempty"`
	Transport string `json:"transport,omitempty"`
	// Local and Peer are the rdma_cm addresses (host:port).
	Local string `json:"local,omitempty"`
	Peer  string `json:"peer,omitempty"`
	// SentPrivateData is what this side passed to rdma_connect,
	// rdma_accept or rdma_reject.
	SentPrivateData HexBytes `json:"sent_private_data"`
	// ReceivedPrivateDataLen and ReceivedPrivateData are
	// rdma_cm_event.param.conn.private_data_len and the bytes: the REQ's
	// (after the rdma_cm header) or MPA Request's ULP data at the server,
	// the REP's, REJ's or MPA Reply's at the client.
	ReceivedPrivateDataLen int      `json:"received_private_data_len"`
	ReceivedPrivateData    HexBytes `json:"received_private_data"`
	// RejectStatus is the rejected event's status (the IB CM reason, 28
	// consumer-defined, or a negative errno on iWARP).
	RejectStatus int `json:"reject_status,omitempty"`
}

// HexBytes marshals as a lower-case hex string.
type HexBytes []byte

// MarshalText implements encoding.TextMarshaler.
func (h HexBytes) MarshalText() ([]byte, error) {
	b := make([]byte, hex.EncodedLen(len(h)))
	hex.Encode(b, h)
	return b, nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *HexBytes) UnmarshalText(b []byte) error {
	v, err := ParseHex(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseHex reads private data written as hex, allowing spaces, colons and
// a 0x prefix ("f6ab0e18 01010303", "f6:ab:0e:18", "0xf6ab…").
func ParseHex(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	s = strings.NewReplacer(" ", "", ":", "", "\t", "", "\n", "").Replace(s)
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("hex %q: odd number of digits (%d)", abbreviate(s), len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("hex %q: %v", abbreviate(s), err)
	}
	return b, nil
}

func abbreviate(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

// hostPort formats an address for a report.
func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// String returns h in lower-case hex.
func (h HexBytes) String() string { return hex.EncodeToString(h) }
