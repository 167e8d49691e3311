package conn

import (
	"fmt"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ulp"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// readPrivateData copies and decodes one side's private data. frameOffset
// is where data[0] sits in its frame, 0 when unknown; kind is the message
// kind for pvtdata's ULP recognition; decoded is the layer's decode of the
// ULP part (nil: none).
func (t *Tracker) readPrivateData(c *Connection, side, msg string, kind pvtdata.MsgKind, frame, frameOffset int, data []byte, ulpOffset int, decoded *pvtdata.PrivateData, uncaptured bool) *PrivateData {
	hint := pvtdata.Hint{Msg: kind}
	if c.HasServiceID {
		hint.Port, _ = ibcm.ULPPort(c.ServiceID)
	}
	d := &t.decoded
	pd := newPrivateData(frame, msg, t.copyBytes(data), ulpOffset, hint, t.cfg.Mode, d, decoded)
	if uncaptured {
		// What the capture did not store is not the peer's fault.
		pd.Uncaptured = true
		return pd
	}

	base := -1
	if frameOffset > 0 {
		base = frameOffset + pd.ULPOffset
	}
	for _, f := range d.AppendFindings(nil) {
		if f.Code == pvtdata.CodeNotFound && (kind == pvtdata.MsgReject || otherService(c)) {
			// A rejection carries no negotiation, and another ULP's
			// service none of RFC 8797: no RFC 8797 message in it is not
			// worth a note.
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

// otherService reports a connection whose service is known and is not
// RPC-over-RDMA: an rdma_cm port other than NFS/RDMA's and NFS's, or IPoIB
// connected mode.
func otherService(c *Connection) bool {
	if !c.HasServiceID {
		return false
	}
	if ibcm.ServiceID(c.ServiceID).IsIPoIBCM() {
		return true
	}
	port, ok := ibcm.ULPPort(c.ServiceID)
	return ok && ulp.ByPort(port) != ulp.KindRPCRDMA
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
