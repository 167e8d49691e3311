package conn

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// A capture's snap length (tcpdump -s 100 … 200) can cut a REQ's or a
// REP's fixed fields: the frame's MAD header says which CM message it was
// and its transaction ID, and the CM layer holds the fields wholly
// captured (ibcm.CM.Holds; CMEvent.Captured), or none when the cut is at
// the MAD header. Such a message is still a step of its connection: the
// REQ opens it (client and server by the frame's addresses) with the comm
// ID, service and QPN captured, a REP with no REQ seen reveals one as an
// uncut REP does, and the messages of the same exchange that follow find
// it by their comm IDs or, where those were not captured, by the
// transaction ID: Linux's ib_cm sends a REQ's REP, RTU and REJ with the
// REQ's transaction ID (cm_id_priv->tid, taken from the REQ), as the real
// captures show. Nothing is claimed that was not captured: no "REQ not
// seen" finding for a REQ seen cut, no service, comm ID or QPN but those
// captured, and private data "not captured".

// cutKey finds a connection whose REQ was cut: its client's and server's
// hosts and the REQ's transaction ID.
type cutKey struct {
	client, server Peer
	tid            uint64
}

// cutMAD follows a CM message whose fixed fields the snap length cut (a
// frame with a CM MAD header and no whole CM message): by the fields
// captured when its CM layer holds some, else as its MAD header names it
// (CMEvent.FixedCut); v holds the packet's addresses. SIDR, LAP and APR
// messages and ClassPortInfo are left out unless they name their
// connection: it is not found by a REQ's transaction ID (followCut).
//
//go:noinline
func (t *Tracker) cutMAD(rec *dissect.Record, v *frameView, h *dissect.Headers) {
	if h.CM != nil || h.MAD.MgmtClass != ibcm.MgmtClassCM || rec.CaptureLength >= rec.Length {
		return
	}
	t.stepped = nil
	if cm, ok := rec.Layers[len(rec.Layers)-1].(*ibcm.CM); ok && cm.FixedCut() {
		// The fields the snap length left of it (dissect's snapFixedCut).
		v.mad = h.MAD
		t.recordCM(rec, v, cm, -1)
		t.attachFindings(rec)
		return
	}
	ev := CMEvent{Frame: rec.Frame, Time: rec.Time, Transport: v.transport(), Type: h.MAD.AttributeID,
		TID: h.MAD.TransactionID, Uncaptured: true, FixedCut: true}
	ev.Src, ev.Dst = v.ends()
	switch ev.Type {
	case ibcm.AttrREQ, ibcm.AttrREP, ibcm.AttrREJ, ibcm.AttrMRA, ibcm.AttrRTU, ibcm.AttrDREQ, ibcm.AttrDREP:
		t.CM(&ev)
	}
	t.attachFindings(rec)
}

// followCut reports whether ev, a message cut in its fixed fields, says
// something true of a connection: a REQ or SIDR_REQ opens one, a REP
// reveals one (no REQ seen: as an uncut REP does), the other messages of
// a connection's exchange belong to it when their comm IDs were captured
// (an uncut one's findings when they name none seen) or a cut REQ's
// transaction ID finds it. A cut SIDR_REP, LAP or APR is left out: its
// status or QPN may be what was not captured, and its connection is not
// found by a transaction ID.
func (t *Tracker) followCut(ev *CMEvent) bool {
	switch ev.Type {
	case ibcm.AttrREQ, ibcm.AttrREP:
		return true
	case ibcm.AttrSIDRReq:
		return ev.has(CapturedLocalCommID)
	case ibcm.AttrREJ, ibcm.AttrMRA, ibcm.AttrRTU, ibcm.AttrDREQ, ibcm.AttrDREP:
		return ev.has(CapturedLocalCommID) || t.cutConn(ev) != nil
	}
	return false
}

// cutREQ opens a connection from a REQ whose fixed fields were cut (or
// adds a step to the one it repeats).
func (t *Tracker) cutREQ(ev *CMEvent) {
	if t.cutTIDs == nil {
		t.cutTIDs = make(map[cutKey]*Connection)
	}
	k := cutKey{client: hostKey(ev.Src), server: hostKey(ev.Dst), tid: ev.TID}
	if c := t.cutTIDs[k]; c != nil && c.State == StateRequested {
		t.cmStep(c, ev, true, true)
		return
	}
	c := t.openRequest(KindConnection, ev) // the service and comm ID if captured
	c.ClientQPN = ev.QPN                   // 0 if not captured
	c.reqTID = ev.TID
	c.RequestCut = true
	t.cutTIDs[k] = c
	if ev.has(CapturedLocalCommID) {
		t.bind(c, commKey(ev.Src, ev.LocalCommID))
	}
	if ev.has(CapturedQPN) {
		t.bind(c, qpKey(ev.Src, ev.QPN))
	}
	t.cmStep(c, ev, true, false)
	c.ClientData = t.readPrivateData(c, "client", "REQ", pvtdata.MsgRequest, ev.Frame, 0, nil, 0, nil, true)
	if c.HasServiceID {
		t.rememberPeers(c)
	}
}

// cutREP makes c, the connection a REP cut in its fixed fields reveals (no
// REQ seen), found by the transaction ID of its exchange, as a cut REQ's
// connection is: the RTU and REJ that follow it carry the same.
func (t *Tracker) cutREP(c *Connection, ev *CMEvent) {
	if t.cutTIDs == nil {
		t.cutTIDs = make(map[cutKey]*Connection)
	}
	t.cutTIDs[cutKey{client: hostKey(ev.Dst), server: hostKey(ev.Src), tid: ev.TID}] = c
}

// commIDText renders a comm ID of ev (its field f) for a finding:
// "0x772f93ef", or "not captured".
func commIDText(ev *CMEvent, f CMFields, id uint32) string {
	if !ev.has(f) {
		return "not captured"
	}
	return fmt.Sprintf("0x%08x", id)
}

// repWithoutREQNegotiation ends the finding of a REP with no REQ seen:
// the negotiation assumes the client's defaults when the REP's private
// data was captured; when it was not, nothing is negotiated.
func repWithoutREQNegotiation(ev *CMEvent) string {
	if ev.Uncaptured {
		return ""
	}
	return ", so the negotiation assumes the defaults"
}

// SetupCut reports whether a CM message whose fixed fields the capture's
// snap length cut was followed: a Send that matched no connection may be
// one of its connection's, whose QPN was not captured.
func (t *Tracker) SetupCut() bool { return t.cutTIDs != nil }

// cutConn finds the connection of ev, a CM message its comm IDs did not
// find, by the transaction ID of a cut REQ between its hosts (nil: none).
// A message whose comm IDs were captured gives the connection those it
// did not know, so that later messages (DREQ, with a transaction ID of
// its own) find it by them.
func (t *Tracker) cutConn(ev *CMEvent) *Connection {
	if t.cutTIDs == nil {
		return nil
	}
	fromClient := true
	c := t.cutTIDs[cutKey{client: hostKey(ev.Src), server: hostKey(ev.Dst), tid: ev.TID}]
	if c == nil {
		fromClient = false
		if c = t.cutTIDs[cutKey{client: hostKey(ev.Dst), server: hostKey(ev.Src), tid: ev.TID}]; c == nil {
			return nil
		}
	}
	local, remote := &c.ClientCommID, &c.ServerCommID
	if !fromClient {
		local, remote = remote, local
	}
	if *local == 0 && ev.LocalCommID != 0 {
		*local = ev.LocalCommID
		t.bind(c, commKey(ev.Src, ev.LocalCommID))
	}
	if *remote == 0 && ev.RemoteCommID != 0 {
		*remote = ev.RemoteCommID
		t.bind(c, commKey(ev.Dst, ev.RemoteCommID))
	}
	return c
}
