package conn

import (
	"fmt"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// State is where a connection's setup or teardown stands.
type State uint8

const (
	// StateRequested: REQ (MPA Request, SIDR_REQ) seen, no answer yet.
	StateRequested State = iota + 1
	// StateReplied: REP seen, no RTU yet (SIDR: SIDR_REP seen).
	StateReplied
	// StateEstablished: RTU seen (iWARP: MPA Reply accepted).
	StateEstablished
	// StateRejected: REJ or MPA Reject.
	StateRejected
	// StateDisconnecting: DREQ seen, no DREP yet.
	StateDisconnecting
	// StateDisconnected: DREP seen.
	StateDisconnected
	// StateTimedOut: setup or teardown did not finish within the timeout
	// of capture time.
	StateTimedOut
)

var stateNames = [...]string{
	StateRequested: "requested", StateReplied: "replied", StateEstablished: "established",
	StateRejected: "rejected", StateDisconnecting: "disconnecting",
	StateDisconnected: "disconnected", StateTimedOut: "timed out",
}

func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText renders the state as its name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseState parses a name String returns.
func ParseState(name string) (State, error) {
	for i, n := range stateNames {
		if n != "" && n == name {
			return State(i), nil
		}
	}
	return 0, fmt.Errorf("unknown connection state %q", name)
}

// Kind distinguishes connected (RC) setup from SIDR service resolution.
type Kind uint8

const (
	KindConnection Kind = iota
	KindSIDR
)

func (k Kind) String() string {
	if k == KindSIDR {
		return "sidr"
	}
	return "connection"
}

// PrivateData is what one side sent in its connection request or reply.
type PrivateData struct {
	// Frame carried it; Message names the message ("REQ", "MPA Reply" …).
	Frame   int
	Message string
	// Bytes is the whole private data field (a copy); ULPOffset is where
	// the ULP's part starts (after the 36-byte rdma_cm header on an IB/RoCE
	// REQ, after IRD/ORD on MPA v2).
	Bytes     []byte
	ULPOffset int
	// Decode is pvtdata's decode of the ULP part in the tracker's mode: the
	// ULP it was recognised as, the RFC 8797 reading, the three readers.
	Decode pvtdata.PrivateData
}

// ULP returns the ULP's part of the private data.
func (pd *PrivateData) ULP() []byte {
	if pd.ULPOffset > len(pd.Bytes) {
		return nil
	}
	return pd.Bytes[pd.ULPOffset:]
}

// Format names what the ULP part holds, as pvtdata labels it: "rpcrdma-v1",
// "zero", "empty", "nvmeof", "unknown" …
func (pd *PrivateData) Format() string { return pd.Decode.ULP.Kind.String() }

// Valid reports an RFC 8797 message a receiver in the tracker's mode acts on.
func (pd *PrivateData) Valid() bool { return pd != nil && pd.Decode.Reading.Valid }

// Effective is what a receiver in the tracker's mode acts on (the RFC 8166
// defaults for a nil PrivateData: the message was not seen).
func (pd *PrivateData) Effective() pvtdata.Effective {
	if pd == nil {
		return pvtdata.Defaults
	}
	return pd.Decode.Reading.Effective()
}

// Report is the object "cmpd-dissect pvtdata --json" prints, for the ULP
// part, with its offset in the private data field.
func (pd *PrivateData) Report() pvtdata.Report {
	r := pd.Decode.Report()
	r.ULPOffset = pd.ULPOffset
	return r
}

// Step is one message of a connection's ladder.
type Step struct {
	// Message is "REQ", "MRA", "REP", "MPA Request" …
	Message string
	Frame   int
	Time    time.Time
	// FromClient gives the direction: client → server when true.
	FromClient bool
	// Retransmission marks a repeated MAD (same transaction ID).
	Retransmission bool
	// Note is a short detail ("reason 28 Consumer reject", "status 0").
	Note string
}

// Direction renders the step's direction as an arrow.
func (s Step) Direction() string {
	if s.FromClient {
		return "client → server"
	}
	return "server → client"
}

// SendCounts summarises the traffic checked in one direction.
type SendCounts struct {
	// Sends is how many Sends were matched to the connection, RPCRDMA how
	// many of them carried an RPC-over-RDMA header, Invalidate how many
	// were Send with Invalidate, InvalidateChecked how many of those were
	// checked against the STags their call offered (the call was seen);
	// MaxLength is the largest Send.
	Sends             int `json:"sends"`
	RPCRDMA           int `json:"rpcrdma"`
	Invalidate        int `json:"invalidate"`
	InvalidateChecked int `json:"invalidate_checked"`
	MaxLength         int `json:"max_length"`
}

// Connection is everything known about one connection (or one SIDR
// exchange).
type Connection struct {
	// ID numbers connections from 1 in the order their first message was
	// seen.
	ID        int
	Kind      Kind
	Transport Transport
	// Client initiated (REQ, MPA Request); Server answered.
	Client, Server Peer
	// ServiceID is the IB service ID (for iWARP, the rdma_cm TCP-port-space
	// equivalent of the server port); HasServiceID when known.
	ServiceID    uint64
	HasServiceID bool
	// ClientQPN and ServerQPN are the QPs from REQ and REP (SIDR: the
	// granted QP in ServerQPN).
	ClientQPN, ServerQPN uint32
	// ClientCommID and ServerCommID are the CM communication IDs (SIDR:
	// the request ID in ClientCommID).
	ClientCommID, ServerCommID uint32
	State                      State
	// RejectReason and RejectReasonName are from the REJ (MPA Reject:
	// reason 0, name "MPA Reject").
	RejectReason     uint16
	RejectReasonName string
	// SIDRStatus is the SIDR_REP status.
	SIDRStatus uint8
	// Frames of each step; 0 when not seen.
	RequestFrame, ReplyFrame, RejectFrame, EstablishedFrame int
	DisconnectRequestFrame, DisconnectReplyFrame            int
	// FirstTime and LastTime bound the connection's messages and traffic.
	FirstTime, LastTime time.Time
	// ClientData and ServerData are each side's private data; nil when the
	// message carrying it was not seen.
	ClientData, ServerData *PrivateData
	// Negotiated is the RFC 8797 result from both sides' data (defaults
	// for a side that sent none); meaningful once Replied.
	Negotiated pvtdata.Negotiated
	Steps      []Step
	// StepsDropped counts the messages beyond Config.MaxSteps, not listed.
	StepsDropped int
	// Findings lists, in the order raised, the first Config.MaxFindingsPerCode
	// findings of each code and severity; FindingCounts counts all of them
	// (a busy connection raises the same warning on every Send: its memory
	// stays bounded, the count and the frames say how often and where).
	Findings      []pvtdata.Finding
	FindingCounts []FindingCount
	// ToServer and ToClient count the Sends checked in each direction.
	ToServer, ToClient SendCounts
	// Evicted reports the tracker stopped following the connection when its
	// table was full.
	Evicted bool

	// tracker bookkeeping
	reqTID, repTID uint64
	lastActive     int64 // capture time of the last message or Send, in ns (capNanos)
	active         bool
	prev           *Connection // the earlier connection between the same peers
	pending        pendingXIDs
	keys           []connKey
	// iWARP: which sides closed their TCP half.
	finClient, finServer bool
}

// Service names the service: "NFS/RDMA (rdma_cm TCP port 20049)".
func (c *Connection) Service() string {
	if !c.HasServiceID {
		return ""
	}
	return ServiceName(c.ServiceID)
}

// RPCRDMA reports whether the connection carries RPC-over-RDMA, so that
// the RFC 8797 negotiation governs its traffic: an RFC 8797 message from
// either side, or the NFS/RDMA (or NFS) port, and no private data
// recognised as another ULP's (NVMe-oF, iSER … use Send with Invalidate
// by their own rules).
func (c *Connection) RPCRDMA() bool {
	for _, pd := range []*PrivateData{c.ClientData, c.ServerData} {
		if pd != nil && pd.Decode.ULP.Kind.Other() {
			return false
		}
	}
	for _, pd := range []*PrivateData{c.ClientData, c.ServerData} {
		if pd != nil && pd.Decode.Reading.Found {
			return true
		}
	}
	if _, port, ok := RDMACMPort(c.ServiceID); ok && c.HasServiceID {
		return port == NFSRDMAPort || port == 2049
	}
	return false
}

// Replied reports that the server's answer (REP, REJ, MPA Reply or Reject)
// was seen, so Negotiated holds what both sides agreed.
func (c *Connection) Replied() bool { return c.ReplyFrame != 0 }

// FindingCount sums up a connection's findings of one code and severity:
// how many were raised, how many of them Connection.Findings lists, and the
// frames they were raised at.
type FindingCount struct {
	Code     string           `json:"code"`
	Severity pvtdata.Severity `json:"severity"`
	// Count is how many were raised; Listed how many of them are in
	// Connection.Findings (the first ones).
	Count  int `json:"count"`
	Listed int `json:"listed"`
	// FirstFrame and LastFrame are the lowest and highest frame among all
	// of them, FirstUnlistedFrame the lowest among those not listed (0:
	// none, or not tied to a frame).
	FirstFrame         int `json:"first_frame,omitempty"`
	LastFrame          int `json:"last_frame,omitempty"`
	FirstUnlistedFrame int `json:"first_unlisted_frame,omitempty"`
}

// Unlisted is how many of the findings Connection.Findings does not list.
func (n *FindingCount) Unlisted() int { return n.Count - n.Listed }

// FindingCount returns the count of c's findings of code and severity, nil
// when there is none.
func (c *Connection) FindingCount(code string, sev pvtdata.Severity) *FindingCount {
	for i := range c.FindingCounts {
		if n := &c.FindingCounts[i]; n.Code == code && n.Severity == sev {
			return n
		}
	}
	return nil
}

// countFinding counts a finding of code and sev raised at frame on c and
// reports whether it is to be listed in full: the first limit of each code
// and severity are. It allocates only for the first finding of a code.
func (c *Connection) countFinding(code string, sev pvtdata.Severity, frame, limit int) bool {
	n := c.FindingCount(code, sev)
	if n == nil {
		c.FindingCounts = append(c.FindingCounts, FindingCount{Code: code, Severity: sev})
		n = &c.FindingCounts[len(c.FindingCounts)-1]
	}
	n.Count++
	if frame != 0 {
		if n.FirstFrame == 0 || frame < n.FirstFrame {
			n.FirstFrame = frame
		}
		n.LastFrame = max(n.LastFrame, frame)
	}
	if n.Listed < limit {
		n.Listed++
		return true
	}
	if frame != 0 && (n.FirstUnlistedFrame == 0 || frame < n.FirstUnlistedFrame) {
		n.FirstUnlistedFrame = frame
	}
	return false
}

// HasFinding reports whether the connection carries a finding with code.
func (c *Connection) HasFinding(code string) bool {
	for i := range c.FindingCounts {
		if c.FindingCounts[i].Code == code {
			return true
		}
	}
	return false
}

// hasFindingAt reports a finding with code at frame (listed, or counted
// last at that frame).
func (c *Connection) hasFindingAt(code string, frame int) bool {
	for i := range c.FindingCounts {
		if n := &c.FindingCounts[i]; n.Code == code && n.LastFrame == frame {
			return true
		}
	}
	for i := range c.Findings {
		if c.Findings[i].Code == code && c.Findings[i].Frame == frame {
			return true
		}
	}
	return false
}
