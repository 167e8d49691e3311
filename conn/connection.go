package conn

import (
	"bytes"
	"fmt"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
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

func (s State) String() string { return enum.Name("State", stateNames[:], s) }

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
	// Bytes is the whole private data field (a copy, shared with other
	// connections whose private data is the same: not to be modified);
	// ULPOffset is where the ULP's part starts (after the 36-byte rdma_cm
	// header on an IB/RoCE REQ, after IRD/ORD on MPA v2).
	Bytes     []byte
	ULPOffset int
	// Read is the RFC 8797 reading of the ULP part in the tracker's mode,
	// in short; Kind is the ULP it was recognised as and Divergent reports
	// readers of different modes acting differently: what the checks and
	// the summaries need. Decode recomputes the whole decode from the
	// bytes (a connection keeps only this much of it).
	Read      Reading
	Kind      pvtdata.ULPKind
	Divergent bool
	// Uncaptured: the capture's snap length cut the private data, Bytes
	// are only its first octets. What the peer advertised is not known:
	// no finding is raised on it, and the connection's negotiated values
	// are not known either (Connection.NegotiationSeen).
	Uncaptured bool
	// hint and mode are what Decode decodes with.
	hint pvtdata.Hint
	mode pvtdata.Mode
}

// Reading is the part of a pvtdata.Reading a connection keeps.
type Reading struct {
	// Found reports a Format Identifier located, Offset where (-1: none),
	// Valid a message a receiver in the mode acts on, Message its octets.
	Found   bool
	Valid   bool
	Offset  int
	Message pvtdata.Message
}

// newPrivateData keeps data (a copy: b) and decodes its ULP part (from
// ulpOffset; the whole field's end when ulpOffset is out of range) into d.
// decoded is the layer's decode of the same message (nil: none): when it
// read the same octets, its readings are taken, not read again.
func newPrivateData(frame int, msg string, b []byte, ulpOffset int, hint pvtdata.Hint, mode pvtdata.Mode, d, decoded *pvtdata.PrivateData) *PrivateData {
	pd := &PrivateData{Frame: frame, Message: msg, Bytes: b, ULPOffset: ulpOffset,
		hint: hint, mode: mode}
	if ulpOffset < 0 || ulpOffset > len(pd.Bytes) {
		pd.ULPOffset = len(pd.Bytes)
	}
	if decoded != nil && bytes.Equal(decoded.Data, pd.ULP()) {
		*d = *decoded
		d.Data = pd.ULP()
		d.Rehint(hint, mode)
	} else {
		*d = pd.Decode()
	}
	r := &d.Reading
	pd.Read = Reading{Found: r.Found, Valid: r.Valid, Offset: r.Offset, Message: r.Message}
	pd.Kind, pd.Divergent = d.ULP.Kind, d.Divergent
	return pd
}

// Decode is pvtdata's decode of the ULP part in the tracker's mode: the
// ULP it was recognised as, the RFC 8797 reading, the three readers. It is
// computed on each call (it does not allocate; the result aliases Bytes).
func (pd *PrivateData) Decode() pvtdata.PrivateData {
	return pvtdata.Dissect(pd.ULP(), pd.hint, pd.mode)
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
func (pd *PrivateData) Format() string { return pd.Kind.String() }

// Valid reports an RFC 8797 message a receiver in the tracker's mode acts on.
func (pd *PrivateData) Valid() bool { return pd != nil && pd.Read.Valid }

// Effective is what a receiver in the tracker's mode acts on (the RFC 8166
// defaults for a nil PrivateData: the message was not seen), as
// pvtdata.Reading.Effective says.
func (pd *PrivateData) Effective() pvtdata.Effective {
	if pd == nil || !pd.Read.Valid {
		return pvtdata.Defaults
	}
	m := pd.Read.Message
	return pvtdata.Effective{SendSize: m.SendBytes(), ReceiveSize: m.ReceiveBytes(), RemoteInvalidation: m.RemoteInvalidation()}
}

// Report is the object "cmpd-dissect pvtdata --json" prints, for the ULP
// part, with its offset in the private data field.
func (pd *PrivateData) Report() pvtdata.Report {
	d := pd.Decode()
	r := d.Report()
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

// step is a Step as a connection keeps it: the message and its note as
// codes and numbers, the time as seconds and nanoseconds; Step renders it.
type step struct {
	frame int
	sec   int64
	nsec  int32
	// arg is the SIDR_REP's QPN, or (noteText) the note's index in
	// connRare.notes.
	arg   uint32
	msg   stepMsg
	note  noteKind
	flags uint8
	// a and b are the MPA revision and flags, or the SIDR_REP status (a).
	a, b uint8
}

// step flags.
const (
	stepFromClient = 1 << iota
	stepRetrans
)

// stepMsg is a step's message: a CM attribute ID, or one of the codes after
// them.
type stepMsg uint16

const (
	stepMPA    stepMsg = 0x100 // + MPAType
	stepTCPFIN stepMsg = 0x200
	stepTCPRST stepMsg = 0x201
)

func (m stepMsg) String() string {
	switch {
	case m == stepTCPFIN:
		return "TCP FIN"
	case m == stepTCPRST:
		return "TCP RST"
	case m > stepMPA && m < stepTCPFIN:
		return MPAType(m - stepMPA).String()
	}
	return ibcm.AttributeName(uint16(m))
}

// noteKind says how a step's note is made.
type noteKind uint8

const (
	noteNone noteKind = iota
	noteBy            // "by client", "by server": the sender (DREQ)
	noteSIDR          // "status %d qpn 0x%06x"
	noteMPA           // "rev %d flags 0x%02x"
	noteText          // notes[arg]
)

// NumSteps is the number of steps of the ladder (Steps).
func (c *Connection) NumSteps() int { return len(c.steps) }

// StepFrame is the frame of the i-th step of the ladder.
func (c *Connection) StepFrame(i int) int { return c.steps[i].frame }

// Step returns the i-th step of the ladder.
func (c *Connection) Step(i int) Step {
	s := &c.steps[i]
	out := Step{Message: s.msg.String(), Frame: s.frame,
		Time:       time.Unix(s.sec, int64(s.nsec)).In(c.FirstTime.Location()),
		FromClient: s.flags&stepFromClient != 0, Retransmission: s.flags&stepRetrans != 0}
	switch s.note {
	case noteBy:
		out.Note = "by " + sideName(out.FromClient)
	case noteSIDR:
		out.Note = fmt.Sprintf("status %d qpn 0x%06x", s.a, s.arg)
	case noteMPA:
		out.Note = fmt.Sprintf("rev %d flags 0x%02x", s.a, s.b)
	case noteText:
		out.Note = c.rare.notes[s.arg]
	}
	return out
}

// Steps returns the ladder: the connection's messages in the order seen,
// up to Config.MaxSteps (StepsDropped counts the rest). The slice is new.
func (c *Connection) Steps() []Step {
	if len(c.steps) == 0 {
		return nil
	}
	out := make([]Step, len(c.steps))
	for i := range out {
		out[i] = c.Step(i)
	}
	return out
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
	// FirstFrame and FirstLength are the first Send's frame and length
	// (0: none), for the ladders that draw it; the JSON keeps its keys.
	FirstFrame  int `json:"-"`
	FirstLength int `json:"-"`
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
	// CaptureEnded: the capture ended while the setup or teardown was
	// still under way (State requested, replied or disconnecting, not
	// timed out): the answer may have come after the capture, nothing says
	// it failed.
	CaptureEnded bool
	// RejectReason and RejectReasonName are from the REJ (MPA Reject:
	// reason 0, name "MPA Reject").
	RejectReason     uint16
	RejectReasonName string
	// SIDRStatus is the SIDR_REP status.
	SIDRStatus uint8
	// Frames of each step; 0 when not seen.
	RequestFrame, ReplyFrame, RejectFrame, EstablishedFrame int
	DisconnectRequestFrame, DisconnectReplyFrame            int
	// RequestCut and ReplyCut report a REQ and a REP (or the server's REJ)
	// whose fixed fields the capture's snap length cut (conn/snapcut.go):
	// the QPN, service and comm ID they carried are not known from them
	// (zero here, shown as unknown); RejectCut, a REJ's reason.
	RequestCut, ReplyCut, RejectCut bool
	// FirstTime and LastTime bound the connection's messages and traffic.
	FirstTime, LastTime time.Time
	// ClientData and ServerData are each side's private data; nil when the
	// message carrying it was not seen.
	ClientData, ServerData *PrivateData
	// Negotiated is the RFC 8797 result from both sides' data (defaults
	// for a side that sent none); meaningful once Replied and when
	// NegotiationSeen.
	Negotiated pvtdata.Negotiated
	// StepsDropped counts the messages beyond Config.MaxSteps, not listed
	// (Steps lists the others).
	StepsDropped int
	// FindingCounts counts every finding raised on the connection per code
	// and severity; Findings lists, in the order raised, the first
	// Config.MaxFindingsPerCode of each (a busy connection raises the same
	// warning on every Send: its memory stays bounded, the count and the
	// frames say how often and where).
	FindingCounts []FindingCount
	// ToServer and ToClient count the Sends checked in each direction.
	ToServer, ToClient SendCounts
	// Credits is the RPC-over-RDMA credit accounting (credits.go),
	// Chunks what moved for the chunks of its answered calls (chunks.go);
	// QueuePairs and Streams what the transport analysis counted on the
	// connection's queue pairs or TCP streams (AttachTransport).
	Credits    Credits
	Chunks     ChunkTotals
	QueuePairs []QueuePair
	Streams    []Stream
	// HostPairs are the congestion marks between the two hosts (all
	// their queue pairs), per direction, where there were any.
	HostPairs []HostPair
	// Evicted reports the tracker stopped following the connection when its
	// table was full.
	Evicted bool

	// tracker bookkeeping (the small fields first, in Evicted's padding)
	active bool
	handed handedState // where it is in the hand-off (Tracker.HandOff)
	// iWARP: which sides closed their TCP half.
	finClient, finServer bool
	reqTID, repTID       uint64
	lastActive           int64        // capture time of the last message or Send, in ns (capNanos)
	prev                 *Connection  // the earlier connection between the same peers
	pending              *pendingXIDs // the calls awaiting their reply (nil: none yet)

	// steps is the ladder (Steps renders it), listed the listed findings
	// (Findings renders them); rare holds what few connections have.
	steps  []step
	listed []listedFinding
	rare   *connRare
}

// connRare is the part of a connection few have: the text notes of steps
// (noteText) and the listed findings kept whole (checkFull).
type connRare struct {
	notes []string
	full  []finding.Finding
}

// Service names the service: "NFS/RDMA (rdma_cm TCP port 20049)".
func (c *Connection) Service() string {
	if !c.HasServiceID {
		return ""
	}
	return ibcm.Describe(c.ServiceID)
}

// RPCRDMA reports whether the connection carries RPC-over-RDMA, so that
// the RFC 8797 negotiation governs its traffic: an RFC 8797 message from
// either side, or the NFS/RDMA (or NFS) port, and no private data
// recognised as another ULP's (NVMe-oF, iSER … use Send with Invalidate
// by their own rules).
func (c *Connection) RPCRDMA() bool {
	cd, sd := c.ClientData, c.ServerData
	if c.OtherULP() {
		return false
	}
	if (cd != nil && cd.Read.Found) || (sd != nil && sd.Read.Found) {
		return true
	}
	if port, ok := ibcm.ULPPort(c.ServiceID); ok && c.HasServiceID {
		return port == pvtdata.PortNFSRDMA || port == ibcm.PortNFS
	}
	return false
}

// OtherULP reports a connection known to carry another ULP than
// RPC-over-RDMA: its service (an rdma_cm port other than NFS/RDMA's and
// NFS's, IPoIB connected mode), or private data recognised as another
// ULP's. RFC 8797 does not apply to it.
func (c *Connection) OtherULP() bool {
	cd, sd := c.ClientData, c.ServerData
	return (cd != nil && cd.Kind.Other()) || (sd != nil && sd.Kind.Other()) || otherService(c)
}

// attemptOver reports a connection whose setup attempt has ended for good:
// torn down (DREQ, DREP) or timed out. A REQ after it is a new connection,
// never a retransmission.
func (c *Connection) attemptOver() bool {
	switch c.State {
	case StateDisconnecting, StateDisconnected, StateTimedOut:
		return true
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
	Severity finding.Severity `json:"severity"`
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
func (c *Connection) FindingCount(code string, sev finding.Severity) *FindingCount {
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
func (c *Connection) countFinding(code string, sev finding.Severity, frame, limit int) bool {
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
	for i := range c.listed {
		if f := &c.listed[i]; f.frame == frame && c.listedCode(f) == code {
			return true
		}
	}
	return false
}

// listedFinding is a listed finding as a connection keeps it: a per-Send
// check's as the values its message names (Findings builds the message),
// any other whole in connRare.full.
type listedFinding struct {
	frame int
	// n is the Send's length (checkExceedsInline), the STag it invalidates
	// (checkInvNotNegotiated, checkInvFromRequester), or the finding's
	// index in connRare.full (checkFull).
	n int
	// limit is the receiver's inline threshold (checkExceedsInline); xid
	// the Send's RPC xid (flagRPC).
	limit int
	xid   uint32
	check checkKind
	sev   finding.Severity
	flags uint8
}

// checkKind says which per-Send check raised a listed finding.
type checkKind uint8

const (
	checkFull             checkKind = iota // kept whole in connRare.full
	checkExceedsInline                     // CodeSendExceedsInline
	checkInvNotNegotiated                  // CodeSendInvNotNegotiated, CodeSendInvTolerated (flagCopes)
	checkInvFromRequester                  // CodeSendInvFromRequester
)

// listedFinding flags: the Send's direction, whether it carried an
// RPC-over-RDMA header (its xid is named), whether the receiver copes (the
// Linux server's Send with Invalidate); whoSetR's case in the bits of
// flagRMask.
const (
	flagToServer = 1 << iota
	flagRPC
	flagCopes
	flagRShift = iota
	flagRMask  = 3 << flagRShift
)

func (c *Connection) listedCode(f *listedFinding) string {
	switch f.check {
	case checkExceedsInline:
		return CodeSendExceedsInline
	case checkInvNotNegotiated:
		if f.flags&flagCopes != 0 {
			return CodeSendInvTolerated
		}
		return CodeSendInvNotNegotiated
	case checkInvFromRequester:
		return CodeSendInvFromRequester
	}
	return c.rare.full[f.n].Code
}

// NumFindings is the number of findings Findings lists.
func (c *Connection) NumFindings() int { return len(c.listed) }

// Findings lists, in the order raised, the first Config.MaxFindingsPerCode
// findings of each code and severity (FindingCounts counts all of them).
// The slice and the messages of the per-Send checks' findings are made on
// each call; nil when there is none.
func (c *Connection) Findings() []finding.Finding {
	if len(c.listed) == 0 {
		return nil
	}
	out := make([]finding.Finding, len(c.listed))
	var m msgBuilder
	for i := range c.listed {
		out[i] = c.finding(&c.listed[i], &m)
	}
	return out
}

// finding renders f, building its message with m.
func (c *Connection) finding(f *listedFinding, m *msgBuilder) finding.Finding {
	if f.check == checkFull {
		return c.rare.full[f.n]
	}
	toServer := f.flags&flagToServer != 0
	out := finding.Finding{Code: c.listedCode(f), Severity: f.sev, Layer: "conn", Frame: f.frame, Offset: -1}
	m.reset()
	switch f.check {
	case checkExceedsInline:
		receiver := "server"
		if !toServer {
			receiver = "client"
		}
		out.Section = "RFC 8797 §4.2, RFC 8166 §3.3.2"
		m.s(directionName(toServer)).s(" Send of ").int(f.n).s(" octets").xid(f).
			s(" is larger than the ").s(receiver).s("'s negotiated inline threshold of ").int(f.limit).
			s(" octets: the receiver's Receive buffer cannot hold it")
	case checkInvNotNegotiated:
		out.Section = "RFC 8797 §4.1"
		m.s(directionName(toServer)).s(" Send with Invalidate of STag ").hex(uint32(f.n)).xid(f).
			s(", but remote invalidation was not negotiated (").s(whoSetRText[f.flags&flagRMask>>flagRShift]).s(")")
		if f.flags&flagCopes != 0 {
			m.s(copesNote)
		}
	case checkInvFromRequester:
		out.Section = "RFC 8797 §3.2"
		m.s("the client (requester) sent Send with Invalidate of STag ").hex(uint32(f.n)).xid(f).
			s(": RFC 8797 provides remote invalidation for the responder's replies only")
	}
	out.Message = m.String()
	return out
}

// NegotiationSeen reports that the capture holds the private data both
// sides sent as far as it was seen: neither was cut by the capture's snap
// length. When not, Negotiated is not what the peers agreed on and is not
// shown or checked.
func (c *Connection) NegotiationSeen() bool {
	return !(c.ClientData != nil && c.ClientData.Uncaptured || c.ServerData != nil && c.ServerData.Uncaptured)
}
