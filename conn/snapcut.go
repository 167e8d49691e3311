package conn

import (
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// A capture's snap length (tcpdump -s 100 … 200) can cut a REQ's or a
// REP's fixed fields: the frame's MAD header says which CM message it was
// and its transaction ID, but no CM layer is decoded, so the comm IDs,
// QPN and service ID are unknown. Such a message is still a step of its
// connection: the REQ opens it (client and server by the frame's
// addresses), and the messages of the same exchange that follow find it
// by the transaction ID, where their comm IDs cannot: Linux's ib_cm sends
// a REQ's REP, RTU and REJ with the REQ's transaction ID (cm_id_priv->tid,
// taken from the REQ), as the real captures show. Nothing is claimed
// that was not captured: no "REQ not seen" finding, no service, comm ID
// or QPN but those later messages carry, and private data "not captured".

// cutKey finds a connection whose REQ was cut: its client's and server's
// hosts and the REQ's transaction ID.
type cutKey struct {
	client, server Peer
	tid            uint64
}

// cutMAD follows a CM message whose fixed fields the snap length cut (a
// frame with a CM MAD header and no CM layer), as its MAD header names it
// (CMEvent.FixedCut); v holds the packet's addresses. SIDR, LAP and APR messages and ClassPortInfo are
// left out: their connections are not found by a REQ's transaction ID.
//
//go:noinline
func (t *Tracker) cutMAD(rec *dissect.Record, v *frameView, h *dissect.Headers) {
	if h.CM != nil || h.MAD.MgmtClass != ibcm.MgmtClassCM || rec.CaptureLength >= rec.Length {
		return
	}
	ev := CMEvent{Frame: rec.Frame, Time: rec.Time, Transport: v.transport(), Type: h.MAD.AttributeID,
		TID: h.MAD.TransactionID, Uncaptured: true, FixedCut: true}
	ev.Src, ev.Dst = v.ends()
	t.stepped = nil
	switch ev.Type {
	case ibcm.AttrREQ, ibcm.AttrREP, ibcm.AttrREJ, ibcm.AttrMRA, ibcm.AttrRTU, ibcm.AttrDREQ, ibcm.AttrDREP:
		t.CM(&ev)
	}
	t.attachFindings(rec)
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
	c := t.openRequest(KindConnection, ev)
	c.ServiceID, c.HasServiceID = 0, false
	c.reqTID = ev.TID
	c.RequestCut = true
	t.cutTIDs[k] = c
	t.cmStep(c, ev, true, false)
	c.ClientData = t.readPrivateData(c, "client", "REQ", pvtdata.MsgRequest, ev.Frame, 0, nil, 0, nil, true)
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
	if ev.FixedCut {
		return c
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
