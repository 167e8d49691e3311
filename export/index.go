package export

import (
	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// connIndex finds the connection a packet belongs to from what the tracker
// knows, through the tracker's public results only: the tracker's own
// index is internal to it. Keys: for IB and RoCE the destination host and
// QP (each side's QPN from REQ and REP), for iWARP the TCP ends, for CM
// messages the communication IDs. It is brought up to date on each CM or
// MPA frame (the only frames that add or complete connections): the new
// connections, and those still waiting for their reply.
type connIndex struct {
	keys    map[connKey]int
	commIDs map[uint32]int
	seen    int                // connections of the tracker indexed so far
	waiting []*conn.Connection // indexed before their reply
}

type connKey struct {
	dst  endpoint
	src  endpoint // iWARP only
	qpn  uint32
	tcp  bool
	zero bool
}

func (x *connIndex) refresh(t *conn.Tracker) {
	if x.keys == nil {
		x.keys, x.commIDs = map[connKey]int{}, map[uint32]int{}
	}
	cs := t.Connections()
	still := x.waiting[:0]
	for _, c := range x.waiting {
		if !x.add(c) {
			still = append(still, c)
		}
	}
	for _, c := range cs[x.seen:] {
		if !x.add(c) {
			still = append(still, c)
		}
	}
	if len(still) < len(x.waiting) {
		clear(x.waiting[len(still):])
	}
	x.waiting = still
	x.seen = len(cs)
}

func host(p conn.Peer) endpoint { return endpoint{addr: p.Addr, lid: p.LID} }

// add indexes c's keys; it reports whether c is complete (nothing more
// will be learnt from a later message).
func (x *connIndex) add(c *conn.Connection) bool {
	if c.ClientCommID != 0 {
		x.commIDs[c.ClientCommID] = c.ID
	}
	if c.ServerCommID != 0 {
		x.commIDs[c.ServerCommID] = c.ID
	}
	if c.Transport == conn.IWARP {
		cl, sv := c.Client, c.Server
		x.keys[connKey{dst: endpoint{cl.Addr, cl.LID, cl.Port}, src: endpoint{sv.Addr, sv.LID, sv.Port}, tcp: true}] = c.ID
		x.keys[connKey{dst: endpoint{sv.Addr, sv.LID, sv.Port}, src: endpoint{cl.Addr, cl.LID, cl.Port}, tcp: true}] = c.ID
		return true
	}
	if c.ClientQPN != 0 {
		x.keys[connKey{dst: host(c.Client), qpn: c.ClientQPN}] = c.ID
	}
	if c.ServerQPN != 0 {
		x.keys[connKey{dst: host(c.Server), qpn: c.ServerQPN}] = c.ID
	}
	return c.Replied() || c.State == conn.StateRejected
}

// lookup returns the id of the connection of the packet (0: none known).
func (x *connIndex) lookup(p *packetView) int {
	if x.keys == nil {
		return 0
	}
	if p.cm != nil {
		if id := x.cmConn(p.cm); id != 0 {
			return id
		}
	}
	if p.tcp {
		return x.keys[connKey{dst: p.dst, src: p.src, tcp: true}]
	}
	if p.bth != nil {
		d := p.dst
		d.port = 0
		return x.keys[connKey{dst: d, qpn: p.bth.DestQP}]
	}
	return 0
}

// lookupMsg is lookup for one RPC-over-RDMA message of the packet (a
// frame can complete Sends of more than one QP).
func (x *connIndex) lookupMsg(p *packetView, m *rpcMsg) int {
	if x.keys == nil {
		return 0
	}
	if p.tcp {
		return x.keys[connKey{dst: m.dst, src: m.src, tcp: true}]
	}
	d := m.dst
	d.port = 0
	return x.keys[connKey{dst: d, qpn: m.qp}]
}

// cmConn finds a CM message's connection by its communication IDs.
func (x *connIndex) cmConn(cm *ibcm.CM) int {
	var ids [2]uint32
	switch cm.AttributeID {
	case ibcm.AttrREQ:
		ids[0] = cm.REQ.LocalCommID
	case ibcm.AttrREP:
		ids = [2]uint32{cm.REP.LocalCommID, cm.REP.RemoteCommID}
	case ibcm.AttrREJ:
		ids = [2]uint32{cm.REJ.LocalCommID, cm.REJ.RemoteCommID}
	case ibcm.AttrMRA:
		ids = [2]uint32{cm.MRA.LocalCommID, cm.MRA.RemoteCommID}
	case ibcm.AttrRTU:
		ids = [2]uint32{cm.RTU.LocalCommID, cm.RTU.RemoteCommID}
	case ibcm.AttrDREQ:
		ids = [2]uint32{cm.DREQ.LocalCommID, cm.DREQ.RemoteCommID}
	case ibcm.AttrDREP:
		ids = [2]uint32{cm.DREP.LocalCommID, cm.DREP.RemoteCommID}
	case ibcm.AttrSIDRReq:
		ids[0] = cm.SIDRReq.RequestID
	case ibcm.AttrSIDRRep:
		ids[0] = cm.SIDRRep.RequestID
	}
	for _, id := range ids {
		if id == 0 {
			continue
		}
		if c, ok := x.commIDs[id]; ok {
			return c
		}
	}
	return 0
}
