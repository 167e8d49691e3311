package conn

import (
	"fmt"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Finding codes raised by this package. They are stable: expectation files
// and users key on them.
const (
	// CodeSendExceedsInline: an RPC-over-RDMA Send larger than the
	// receiver's negotiated inline threshold.
	CodeSendExceedsInline = "conn.send-exceeds-inline"
	// CodeSendInvNotNegotiated: Send with Invalidate although R was not
	// set by both peers.
	CodeSendInvNotNegotiated = "conn.send-inv-not-negotiated"
	// CodeSendInvFromRequester: the requester (client) sent Send with
	// Invalidate; RFC 8797 lets only the responder use it.
	CodeSendInvFromRequester = "conn.send-inv-from-requester"
	// CodeInvalidatedSTagNotOffered: the STag a Send with Invalidate names
	// is not among the handles the requester offered in that xid's chunks.
	CodeInvalidatedSTagNotOffered = "conn.invalidated-stag-not-offered"
	// CodeServerSendExceedsClientReceive: the server advertises a Send Size
	// above the client's Receive Size (the Linux server deviation).
	CodeServerSendExceedsClientReceive = "conn.server-send-exceeds-client-receive"
	// CodeAdvertisedValuesChanged: a reconnection between the same peers
	// advertised different values than the previous connection.
	CodeAdvertisedValuesChanged = "conn.advertised-values-changed"
	// CodeREPWithoutREQ, CodeRTUWithoutREP, CodeDREQUnknown: CM messages
	// for a connection whose earlier steps were not seen.
	CodeREPWithoutREQ = "conn.rep-without-req"
	CodeRTUWithoutREP = "conn.rtu-without-rep"
	CodeDREQUnknown   = "conn.dreq-unknown-connection"
	// CodeUnknownConnection: another CM message (MRA, REJ, DREP, SIDR_REP,
	// MPA Reply) that matches no connection.
	CodeUnknownConnection = "conn.unknown-connection"
	// CodeRejected: the server rejected the connection (REJ, MPA Reject).
	CodeRejected = "conn.rejected"
	// CodeTimedOut: setup or teardown did not finish in time.
	CodeTimedOut = "conn.timed-out"
	// CodeTableFull: the connection table was full; the oldest was evicted.
	CodeTableFull = "conn.table-full"
	// CodeFindingsSuppressed: more findings of one code than listed.
	CodeFindingsSuppressed = "conn.findings-suppressed"
)

// Codes lists every code this package raises, with its usual severity, for
// documentation and expectation files.
var Codes = map[string]finding.Severity{
	CodeSendExceedsInline:              finding.SeverityError,
	CodeSendInvNotNegotiated:           finding.SeverityError,
	CodeSendInvFromRequester:           finding.SeverityWarning,
	CodeInvalidatedSTagNotOffered:      finding.SeverityError,
	CodeServerSendExceedsClientReceive: finding.SeverityWarning,
	CodeAdvertisedValuesChanged:        finding.SeverityInfo,
	CodeREPWithoutREQ:                  finding.SeverityWarning,
	CodeRTUWithoutREP:                  finding.SeverityWarning,
	CodeDREQUnknown:                    finding.SeverityWarning,
	CodeUnknownConnection:              finding.SeverityInfo,
	CodeRejected:                       finding.SeverityInfo,
	CodeTimedOut:                       finding.SeverityWarning,
	CodeTableFull:                      finding.SeverityWarning,
	CodeFindingsSuppressed:             finding.SeverityInfo,
}

// readPrivateData copies and decodes one side's private data. frameOffset
// is where data[0] sits in its frame, 0 when unknown; kind is the message
// kind for pvtdata's ULP recognition.
func (t *Tracker) readPrivateData(c *Connection, side, msg string, kind pvtdata.MsgKind, frame, frameOffset int, data []byte, ulpOffset int) *PrivateData {
	hint := pvtdata.Hint{Msg: kind}
	if c.HasServiceID {
		if ps, port, ok := RDMACMPort(c.ServiceID); ok && ps != PortSpaceIB {
			hint.Port = port
		}
	}
	d := &t.decoded
	pd := newPrivateData(frame, msg, t.copyBytes(data), ulpOffset, hint, t.cfg.Mode, d)

	base := -1
	if frameOffset > 0 {
		base = frameOffset + pd.ULPOffset
	}
	for _, f := range d.AppendFindings(nil) {
		if f.Code == pvtdata.CodeNotFound && kind == pvtdata.MsgReject {
			// A rejection carries no negotiation: no RFC 8797 message in it
			// is not worth a note.
			continue
		}
		f.Frame = frame
		f.Message = side + " " + msg + " private data: " + f.Message
		if f.Offset >= 0 && base >= 0 {
			f.Offset += base
		} else {
			f.Offset = -1
		}
		t.finding(c, f)
	}
	return pd
}

// maxSharedBytes bounds the private data fields the tracker shares among
// connections (Tracker.shared), and sharedBytesLen their length: an MPA
// start-up frame's private data may be 512 octets (RFC 5044 §7.1).
const (
	maxSharedBytes = 256
	sharedBytesLen = 512
)

// copyBytes returns a copy of a private data field: the one an earlier
// connection keeps when it had the same (the server's reply is often the
// same on every connection), else a new one (nil for none).
func (t *Tracker) copyBytes(data []byte) []byte {
	if len(data) == 0 {
		return nil
	}
	if b, ok := t.shared[string(data)]; ok {
		return b
	}
	b := append([]byte(nil), data...)
	if len(t.shared) < maxSharedBytes && len(data) <= sharedBytesLen {
		if t.shared == nil {
			t.shared = map[string][]byte{}
		}
		t.shared[string(data)] = b
	}
	return b
}

func describeEffective(e pvtdata.Effective, valid bool) string {
	s := fmt.Sprintf("send %d receive %d R=%d", e.SendSize, e.ReceiveSize, b2i(e.RemoteInvalidation))
	if !valid {
		s += " (defaults)"
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// negotiate computes the result once the server's answer is known and
// raises the checks that compare the two sides and the previous connection.
func (t *Tracker) negotiate(c *Connection, frame int) {
	c.Negotiated = pvtdata.Negotiate(c.ClientData.Effective(), c.ServerData.Effective())
	if c.ClientData.Valid() && c.ServerData.Valid() {
		ce, se := c.ClientData.Effective(), c.ServerData.Effective()
		if se.SendSize > ce.ReceiveSize {
			t.finding(c, finding.Finding{
				Code: CodeServerSendExceedsClientReceive, Severity: finding.SeverityWarning,
				Section: "RFC 8797 §4.2", Layer: "conn", Frame: frame, Offset: -1,
				Message: fmt.Sprintf("the server advertises a Send Size of %d octets, more than the client's Receive Size of %d: a conforming server sends at most min(%d, %d) = %d octets inline, "+
					"but the Linux server (svcrdma) ignores the client's sizes and uses only the R bit (wire-formats.md §1), so it may send Sends the client cannot receive",
					se.SendSize, ce.ReceiveSize, se.SendSize, ce.ReceiveSize, min(se.SendSize, ce.ReceiveSize)),
			})
		}
	}
	t.compareWithPrevious(c, frame)
}

// compareWithPrevious reports a change of advertised values from the
// previous connection between the same peers (RFC 8797 §4: peers must
// expect the values to change on reconnection).
func (t *Tracker) compareWithPrevious(c *Connection, frame int) {
	p := c.prev
	if p == nil || !p.Replied() {
		return
	}
	var diffs []string
	if p.ClientData != nil && c.ClientData != nil && p.ClientData.Effective() != c.ClientData.Effective() {
		diffs = append(diffs, fmt.Sprintf("client %s → %s",
			describeEffective(p.ClientData.Effective(), p.ClientData.Valid()),
			describeEffective(c.ClientData.Effective(), c.ClientData.Valid())))
	}
	if p.ServerData != nil && c.ServerData != nil && p.ServerData.Effective() != c.ServerData.Effective() {
		diffs = append(diffs, fmt.Sprintf("server %s → %s",
			describeEffective(p.ServerData.Effective(), p.ServerData.Valid()),
			describeEffective(c.ServerData.Effective(), c.ServerData.Valid())))
	}
	if len(diffs) == 0 {
		return
	}
	t.finding(c, finding.Finding{
		Code: CodeAdvertisedValuesChanged, Severity: finding.SeverityInfo, Section: "RFC 8797 §4",
		Layer: "conn", Frame: frame, Offset: -1,
		Message: fmt.Sprintf("the peers advertise different values than on connection %d (request frame %d): %s; the new values apply to this connection only",
			p.ID, p.RequestFrame, strings.Join(diffs, "; ")),
	})
}
