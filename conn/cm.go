package conn

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// CM processes one IB CM message.
func (t *Tracker) CM(ev *CMEvent) {
	if !t.begin(ev.Time) {
		return
	}
	if ev.FixedCut && !t.followCut(ev) {
		// Cut before the fields that name its connection, and of no
		// cut REQ's exchange: nothing true to say of it but the frame's
		// own truncation warning.
		return
	}
	switch ev.Type {
	case ibcm.AttrREQ:
		t.cmREQ(ev)
	case ibcm.AttrREP:
		t.cmREP(ev)
	case ibcm.AttrREJ:
		t.cmREJ(ev)
	case ibcm.AttrMRA:
		t.cmMRA(ev)
	case ibcm.AttrRTU:
		t.cmRTU(ev)
	case ibcm.AttrDREQ:
		t.cmDREQ(ev)
	case ibcm.AttrDREP:
		t.cmDREP(ev)
	case ibcm.AttrSIDRReq:
		t.cmSIDRREQ(ev)
	case ibcm.AttrSIDRRep:
		t.cmSIDRREP(ev)
	case ibcm.AttrLAP, ibcm.AttrAPR:
		if c := t.cmPeerConn(ev); c != nil {
			t.cmStep(c, ev, t.fromClient(c, ev), false)
		}
	}
}

func commKey(host Peer, id uint32) wireKey {
	return wireKey{kind: keyComm, host: hostKey(host), id: id}
}

func qpKey(host Peer, qpn uint32) wireKey {
	return wireKey{kind: keyQP, host: hostKey(host), id: qpn}
}

// cmPeerConn finds the connection of a message sent by one side to the
// other: by the receiver's communication ID, else by the sender's.
func (t *Tracker) cmPeerConn(ev *CMEvent) *Connection {
	if ev.RemoteCommID != 0 {
		if c := t.lookup(commKey(ev.Dst, ev.RemoteCommID)); c != nil {
			return c
		}
	}
	if ev.LocalCommID != 0 {
		if c := t.lookup(commKey(ev.Src, ev.LocalCommID)); c != nil {
			return c
		}
	}
	return t.cutConn(ev)
}

// fromClient says whether ev travels client → server on c.
func (t *Tracker) fromClient(c *Connection, ev *CMEvent) bool {
	switch {
	case c.ClientCommID != 0 && ev.LocalCommID == c.ClientCommID:
		return true
	case c.ServerCommID != 0 && ev.LocalCommID == c.ServerCommID:
		return false
	case c.ClientCommID != 0 && ev.RemoteCommID == c.ClientCommID:
		return false
	}
	return hostKey(ev.Src) == hostKey(c.Client)
}

// cmStep adds ev to c's ladder and returns the step, for the caller to add
// its note (nil: the ladder is full).
func (t *Tracker) cmStep(c *Connection, ev *CMEvent, fromClient, retrans bool) *step {
	s := t.addStep(c, stepMsg(ev.Type), ev.Frame, ev.Time, fromClient, retrans)
	t.touch(c, ev.Time)
	return s
}

func peersOf(c *Connection) peersKey {
	return peersKey{transport: c.Transport, client: hostKey(c.Client), server: c.Server, service: c.ServiceID}
}

func (t *Tracker) rememberPeers(c *Connection) {
	k := peersOf(c)
	if p, ok := t.last[k]; ok && p != c {
		c.prev = p
	}
	t.last[k] = c
}

// openRequest starts a connection (or SIDR exchange) from its request: the
// client is the sender, its port the rdma_cm header's source port when there
// is one, the server's port the one the service ID names.
func (t *Tracker) openRequest(kind Kind, ev *CMEvent) *Connection {
	c := t.newConn(kind, ev.Transport, ev.Frame, ev.Time)
	c.Client, c.Server = ev.Src, ev.Dst
	c.Client.Port, c.Server.Port = 0, 0
	if ev.CMAValid {
		c.Client.Port = ev.CMAPort
	}
	if ev.has(CapturedServiceID) {
		c.ServiceID, c.HasServiceID = ev.ServiceID, true
		if _, port, ok := ibcm.RDMACMPort(ev.ServiceID); ok {
			c.Server.Port = port
		}
	}
	c.ClientCommID = ev.LocalCommID
	c.State = StateRequested
	c.RequestFrame = ev.Frame
	return c
}

func (t *Tracker) cmREQ(ev *CMEvent) {
	if ev.FixedCut {
		t.cutREQ(ev)
		return
	}
	if c := t.lookup(commKey(ev.Src, ev.LocalCommID)); c != nil && c.ClientCommID == ev.LocalCommID {
		if (c.reqTID == ev.TID && !c.attemptOver()) || c.State == StateRequested {
			// The same REQ again: a MAD retransmission (same TID) or a
			// retry of a request not yet answered. Once the connection was
			// torn down (DREQ, DREP) or timed out, a REQ with its comm ID
			// and TID begins a new connection: the comm ID was reused, or
			// the capture holds the same session twice (merged files).
			t.cmStep(c, ev, true, true)
			return
		}
	}
	c := t.openRequest(KindConnection, ev)
	c.ClientQPN = ev.QPN
	c.reqTID = ev.TID
	t.bind(c, commKey(ev.Src, ev.LocalCommID))
	t.bind(c, qpKey(ev.Src, ev.QPN))
	t.cmStep(c, ev, true, false)
	c.ClientData = t.readPrivateData(c, "client", "REQ", pvtdata.MsgRequest, ev.Frame, ev.PrivateDataAt, ev.PrivateData, ev.ULPOffset, ev.Decoded, ev.Uncaptured)
	t.rememberPeers(c)
}

func (t *Tracker) cmREP(ev *CMEvent) {
	var c *Connection
	if ev.has(CapturedRemoteCommID) {
		c = t.lookup(commKey(ev.Dst, ev.RemoteCommID))
	}
	if c == nil && ev.has(CapturedLocalCommID) {
		c = t.lookup(commKey(ev.Src, ev.LocalCommID))
	}
	if c == nil {
		c = t.cutConn(ev)
	}
	if c != nil && (c.ServerCommID == ev.LocalCommID || ev.FixedCut) && c.ReplyFrame != 0 {
		t.cmStep(c, ev, false, c.repTID == ev.TID)
		return
	}
	if c == nil {
		c = t.newConn(KindConnection, ev.Transport, ev.Frame, ev.Time)
		c.Client, c.Server = ev.Dst, ev.Src
		c.Client.Port, c.Server.Port = 0, 0
		c.ClientCommID = ev.RemoteCommID
		c.State = StateReplied
		if ev.has(CapturedRemoteCommID) {
			t.bind(c, commKey(ev.Dst, ev.RemoteCommID))
		}
		if ev.FixedCut {
			t.cutREP(c, ev)
		}
		t.finding(c, finding.Finding{
			Code: CodeREPWithoutREQ, Severity: finding.SeverityWarning, Section: "IBTA vol 1 §12.6.8",
			Layer: "conn", Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("REP (local comm ID %s) answers comm ID %s, for which no REQ was seen (capture started late, or a stray REP): the client's private data is unknown%s",
				commIDText(ev, CapturedLocalCommID, ev.LocalCommID), commIDText(ev, CapturedRemoteCommID, ev.RemoteCommID), repWithoutREQNegotiation(ev)),
		})
	}
	if ev.has(CapturedLocalCommID) {
		c.ServerCommID = ev.LocalCommID
		t.bind(c, commKey(ev.Src, ev.LocalCommID))
	}
	if ev.has(CapturedQPN) {
		c.ServerQPN = ev.QPN
		t.bind(c, qpKey(ev.Src, ev.QPN))
	}
	if ev.FixedCut {
		c.ReplyCut = true
	}
	c.repTID = ev.TID
	if c.State == StateRequested || c.State == StateTimedOut {
		c.State = StateReplied
	}
	c.ReplyFrame = ev.Frame
	t.cmStep(c, ev, false, false)
	c.ServerData = t.readPrivateData(c, "server", "REP", pvtdata.MsgReply, ev.Frame, ev.PrivateDataAt, ev.PrivateData, ev.ULPOffset, ev.Decoded, ev.Uncaptured)
	t.negotiate(c, ev.Frame)
}

func (t *Tracker) cmREJ(ev *CMEvent) {
	c := t.cmPeerConn(ev)
	note := fmt.Sprintf("reason %d", ev.RejectReason)
	if !ev.has(CapturedReason) {
		// A REJ ends the attempt whatever it rejects; its reason is in
		// the octets the snap length cut.
		note = "reason not captured"
	} else if ev.RejectReasonName != "" {
		note += " " + ev.RejectReasonName
	}
	if c == nil {
		t.orphan(finding.Finding{Code: CodeUnknownConnection, Severity: finding.SeverityInfo, Layer: "conn",
			Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("REJ (%s) for comm ID 0x%08x matches no connection seen", note, ev.RemoteCommID)})
		return
	}
	from := t.fromClient(c, ev)
	if c.State == StateRejected {
		c.noteText(t.cmStep(c, ev, from, true), note)
		return
	}
	c.noteText(t.cmStep(c, ev, from, false), note)
	c.State = StateRejected
	c.RejectReason, c.RejectReasonName = ev.RejectReason, ev.RejectReasonName
	c.RejectCut = !ev.has(CapturedReason)
	c.RejectFrame = ev.Frame
	if !from && c.ReplyFrame == 0 {
		c.ReplyFrame = ev.Frame
		c.ReplyCut = ev.FixedCut
		if ev.LocalCommID != 0 {
			c.ServerCommID = ev.LocalCommID
		}
		c.ServerData = t.readPrivateData(c, "server", "REJ", pvtdata.MsgReject, ev.Frame, ev.PrivateDataAt, ev.PrivateData, ev.ULPOffset, ev.Decoded, ev.Uncaptured)
	}
	t.finding(c, finding.Finding{Code: CodeRejected, Severity: finding.SeverityInfo, Section: "IBTA vol 1 §12.6.7",
		Layer: "conn", Frame: ev.Frame, Offset: -1,
		Message: fmt.Sprintf("the %s rejected the connection: %s", sideName(from), note)})
	t.ended(c)
}

func sideName(fromClient bool) string {
	if fromClient {
		return "client"
	}
	return "server"
}

func (t *Tracker) cmMRA(ev *CMEvent) {
	c := t.cmPeerConn(ev)
	if c == nil {
		t.orphan(finding.Finding{Code: CodeUnknownConnection, Severity: finding.SeverityInfo, Layer: "conn",
			Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("MRA for comm ID 0x%08x matches no connection seen", ev.RemoteCommID)})
		return
	}
	from := t.fromClient(c, ev)
	if !from && c.ServerCommID == 0 && ev.LocalCommID != 0 {
		c.ServerCommID = ev.LocalCommID
		t.bind(c, commKey(ev.Src, ev.LocalCommID))
	}
	t.cmStep(c, ev, from, false)
}

// openMidway starts a connection from a message between both peers (RTU,
// DREQ) whose setup was not seen: which side is the client is unknown, so
// the sender is shown as client; both communication IDs lead to it.
func (t *Tracker) openMidway(ev *CMEvent) *Connection {
	c := t.newConn(KindConnection, ev.Transport, ev.Frame, ev.Time)
	c.Client, c.Server = ev.Src, ev.Dst
	c.Client.Port, c.Server.Port = 0, 0
	c.ClientCommID, c.ServerCommID = ev.LocalCommID, ev.RemoteCommID
	t.bind(c, commKey(ev.Src, ev.LocalCommID))
	t.bind(c, commKey(ev.Dst, ev.RemoteCommID))
	return c
}

func (t *Tracker) cmRTU(ev *CMEvent) {
	c := t.cmPeerConn(ev)
	if c == nil {
		c = t.openMidway(ev)
		t.finding(c, finding.Finding{Code: CodeRTUWithoutREP, Severity: finding.SeverityWarning,
			Section: "IBTA vol 1 §12.6.9", Layer: "conn", Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("RTU (comm IDs 0x%08x → 0x%08x) for a connection whose REQ and REP were not seen", ev.LocalCommID, ev.RemoteCommID)})
	} else if c.ReplyFrame == 0 {
		t.finding(c, finding.Finding{Code: CodeRTUWithoutREP, Severity: finding.SeverityWarning,
			Section: "IBTA vol 1 §12.6.9", Layer: "conn", Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("RTU for the REQ of frame %d, but no REP was seen", c.RequestFrame)})
	}
	if c.EstablishedFrame != 0 {
		t.cmStep(c, ev, true, true)
		return
	}
	c.EstablishedFrame = ev.Frame
	switch c.State {
	case 0, StateRequested, StateReplied, StateTimedOut:
		c.State = StateEstablished
	}
	t.cmStep(c, ev, true, false)
}

func (t *Tracker) cmDREQ(ev *CMEvent) {
	c := t.cmPeerConn(ev)
	if c == nil {
		c = t.openMidway(ev)
		c.ServerQPN = ev.QPN
		t.finding(c, finding.Finding{Code: CodeDREQUnknown, Severity: finding.SeverityWarning,
			Section: "IBTA vol 1 §12.6.10", Layer: "conn", Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("DREQ (comm IDs 0x%08x → 0x%08x) for a connection never seen set up (which peer was the client is unknown)", ev.LocalCommID, ev.RemoteCommID)})
	}
	from := t.fromClient(c, ev)
	if c.DisconnectRequestFrame != 0 {
		t.cmStep(c, ev, from, true)
		return
	}
	c.DisconnectRequestFrame = ev.Frame
	if c.State != StateRejected && c.State != StateDisconnected {
		c.State = StateDisconnecting
	}
	if s := t.cmStep(c, ev, from, false); s != nil {
		s.note = noteBy
	}
}

func (t *Tracker) cmDREP(ev *CMEvent) {
	c := t.cmPeerConn(ev)
	if c == nil {
		t.orphan(finding.Finding{Code: CodeUnknownConnection, Severity: finding.SeverityInfo, Layer: "conn",
			Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("DREP (comm IDs 0x%08x → 0x%08x) matches no connection seen", ev.LocalCommID, ev.RemoteCommID)})
		return
	}
	from := t.fromClient(c, ev)
	if c.DisconnectReplyFrame != 0 {
		t.cmStep(c, ev, from, true)
		return
	}
	c.DisconnectReplyFrame = ev.Frame
	if c.State != StateRejected {
		c.State = StateDisconnected
	}
	// The QPs are gone: no reply to a remembered call can follow, so its
	// handles and its Send accumulators are let go (a capture of many
	// short connections keeps only their results).
	t.closed(c)
	t.cmStep(c, ev, from, false)
	t.ended(c)
}

func sidrKey(host Peer, reqID uint32) wireKey {
	return wireKey{kind: keySIDR, host: hostKey(host), id: reqID}
}

func (t *Tracker) cmSIDRREQ(ev *CMEvent) {
	if c := t.lookup(sidrKey(ev.Src, ev.LocalCommID)); c != nil && c.State == StateRequested {
		t.cmStep(c, ev, true, true)
		return
	}
	c := t.openRequest(KindSIDR, ev)
	t.bind(c, sidrKey(ev.Src, ev.LocalCommID))
	t.cmStep(c, ev, true, false)
	c.ClientData = t.readPrivateData(c, "client", "SIDR_REQ", pvtdata.MsgRequest, ev.Frame, ev.PrivateDataAt, ev.PrivateData, ev.ULPOffset, ev.Decoded, ev.Uncaptured)
}

func (t *Tracker) cmSIDRREP(ev *CMEvent) {
	c := t.lookup(sidrKey(ev.Dst, ev.LocalCommID))
	note := fmt.Sprintf("status %d qpn 0x%06x", ev.SIDRStatus, ev.QPN)
	if c == nil {
		t.orphan(finding.Finding{Code: CodeUnknownConnection, Severity: finding.SeverityInfo, Layer: "conn",
			Frame: ev.Frame, Offset: -1,
			Message: fmt.Sprintf("SIDR_REP (request ID 0x%08x, %s) matches no SIDR_REQ seen", ev.LocalCommID, note)})
		return
	}
	if c.ReplyFrame != 0 {
		sidrNote(t.cmStep(c, ev, false, true), ev)
		return
	}
	c.ReplyFrame = ev.Frame
	c.ServerQPN = ev.QPN
	c.SIDRStatus = ev.SIDRStatus
	c.State = StateReplied
	if ev.SIDRStatus != 0 {
		c.State = StateRejected
		c.RejectReason = uint16(ev.SIDRStatus)
		c.RejectReasonName = sidrStatusName(ev.SIDRStatus)
	}
	sidrNote(t.cmStep(c, ev, false, false), ev)
	c.ServerData = t.readPrivateData(c, "server", "SIDR_REP", pvtdata.MsgReply, ev.Frame, ev.PrivateDataAt, ev.PrivateData, ev.ULPOffset, ev.Decoded, ev.Uncaptured)
	c.Negotiated = pvtdata.Negotiate(c.ClientData.Effective(), c.ServerData.Effective())
	t.ended(c)
}

// sidrNote gives a SIDR_REP's step its note: "status %d qpn 0x%06x".
func sidrNote(s *step, ev *CMEvent) {
	if s != nil {
		s.note, s.a, s.arg = noteSIDR, ev.SIDRStatus, ev.QPN
	}
}

// SIDR_REP status values (IBTA vol 1 Table 123).
func sidrStatusName(s uint8) string {
	switch s {
	case 0:
		return "valid"
	case 1:
		return "service ID not supported"
	case 2:
		return "rejected by service provider"
	case 3:
		return "no QP available"
	case 4:
		return "redirect"
	case 5:
		return "unsupported version"
	}
	return fmt.Sprintf("status %d", s)
}
