package export

import (
	"slices"
	"sort"

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
	keys    map[connKey]int32
	commIDs map[uint32]int32
	ends    endpoints
	lastID  int                // the highest connection ID indexed so far
	waiting []*conn.Connection // indexed before their reply
}

// connKey is an index key, its ends by number (endpoints; 0: none) so
// that a key of the connections of a long capture takes 16 octets, not
// 80.
type connKey struct {
	dst, src uint32 // src: iWARP only
	qpn      uint32
	tcp      bool
}

// endpoints numbers endpoints from 1: the index's keys and the calls
// awaiting their reply keep an endpoint's number.
type endpoints struct {
	ids  map[endpoint]uint32
	list []endpoint // list[n-1] is endpoint n
}

// id returns e's number, numbering it if it has none.
func (x *endpoints) id(e endpoint) uint32 {
	if n, ok := x.ids[e]; ok {
		return n
	}
	if x.ids == nil {
		x.ids = map[endpoint]uint32{}
	}
	x.list = append(x.list, e)
	n := uint32(len(x.list))
	x.ids[e] = n
	return n
}

// find returns e's number; false when it has none (no key names it).
func (x *endpoints) find(e endpoint) (uint32, bool) {
	n, ok := x.ids[e]
	return n, ok
}

// get returns endpoint n.
func (x *endpoints) get(n uint32) endpoint { return x.list[n-1] }

func (x *connIndex) refresh(t *conn.Tracker) {
	if x.keys == nil {
		x.keys, x.commIDs = map[connKey]int32{}, map[uint32]int32{}
	}
	// Connections lists by ID, those handed off left out (HandOff): the
	// new ones are at its end.
	cs := t.Connections()
	newer := sort.Search(len(cs), func(i int) bool { return cs[i].ID > x.lastID })
	still := x.waiting[:0]
	for _, c := range x.waiting {
		if !x.add(c) {
			still = append(still, c)
		}
	}
	for _, c := range cs[newer:] {
		if !x.add(c) {
			still = append(still, c)
		}
	}
	if len(still) < len(x.waiting) {
		clear(x.waiting[len(still):])
	}
	x.waiting = still
	if len(cs) > 0 {
		x.lastID = max(x.lastID, cs[len(cs)-1].ID)
	}
}

// forget removes the keys of c, which was written and which the tracker
// forgot (those another connection took over since stay).
func (x *connIndex) forget(c *conn.Connection) {
	id := int32(c.ID)
	for _, k := range [2]uint32{c.ClientCommID, c.ServerCommID} {
		if k != 0 && x.commIDs[k] == id {
			delete(x.commIDs, k)
		}
	}
	drop := func(k connKey) {
		if x.keys[k] == id {
			delete(x.keys, k)
		}
	}
	if c.Transport == conn.IWARP {
		cl, ok := x.ends.find(endpoint{c.Client.Addr, c.Client.LID, c.Client.Port})
		sv, ok2 := x.ends.find(endpoint{c.Server.Addr, c.Server.LID, c.Server.Port})
		if ok && ok2 {
			drop(connKey{dst: cl, src: sv, tcp: true})
			drop(connKey{dst: sv, src: cl, tcp: true})
		}
	} else {
		if n, ok := x.ends.find(host(c.Client)); ok && c.ClientQPN != 0 {
			drop(connKey{dst: n, qpn: c.ClientQPN})
		}
		if n, ok := x.ends.find(host(c.Server)); ok && c.ServerQPN != 0 {
			drop(connKey{dst: n, qpn: c.ServerQPN})
		}
	}
	for i, w := range x.waiting {
		if w == c {
			x.waiting = slices.Delete(x.waiting, i, i+1)
			break
		}
	}
}

func host(p conn.Peer) endpoint { return endpoint{addr: p.Addr, lid: p.LID} }

// add indexes c's keys; it reports whether c is complete (nothing more
// will be learnt from a later message).
func (x *connIndex) add(c *conn.Connection) bool {
	id := int32(c.ID)
	if c.ClientCommID != 0 {
		x.commIDs[c.ClientCommID] = id
	}
	if c.ServerCommID != 0 {
		x.commIDs[c.ServerCommID] = id
	}
	if c.Transport == conn.IWARP {
		cl := x.ends.id(endpoint{c.Client.Addr, c.Client.LID, c.Client.Port})
		sv := x.ends.id(endpoint{c.Server.Addr, c.Server.LID, c.Server.Port})
		x.keys[connKey{dst: cl, src: sv, tcp: true}] = id
		x.keys[connKey{dst: sv, src: cl, tcp: true}] = id
		return true
	}
	if c.ClientQPN != 0 {
		x.keys[connKey{dst: x.ends.id(host(c.Client)), qpn: c.ClientQPN}] = id
	}
	if c.ServerQPN != 0 {
		x.keys[connKey{dst: x.ends.id(host(c.Server)), qpn: c.ServerQPN}] = id
	}
	return c.Replied() || c.State == conn.StateRejected
}

// stream returns the id of the connection of the TCP stream from src to
// dst (0: none known).
func (x *connIndex) stream(src, dst endpoint) int {
	s, ok := x.ends.find(src)
	d, ok2 := x.ends.find(dst)
	if !ok || !ok2 {
		return 0
	}
	return int(x.keys[connKey{dst: d, src: s, tcp: true}])
}

// queuePair returns the id of the connection of queue pair qpn at dst
// (its port ignored; 0: none known).
func (x *connIndex) queuePair(dst endpoint, qpn uint32) int {
	dst.port = 0
	d, ok := x.ends.find(dst)
	if !ok {
		return 0
	}
	return int(x.keys[connKey{dst: d, qpn: qpn}])
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
		return x.stream(p.src, p.dst)
	}
	if p.bth != nil {
		return x.queuePair(p.dst, p.bth.DestQP)
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
		return x.stream(m.src, m.dst)
	}
	return x.queuePair(m.dst, m.qp)
}

// cmConn finds a CM message's connection by its communication IDs.
func (x *connIndex) cmConn(cm *ibcm.CM) int {
	var ids [2]uint32
	switch cm.AttributeID {
	case ibcm.AttrREQ:
		ids[0] = cm.REQ.LocalCommID
	case ibcm.AttrREP, ibcm.AttrREJ, ibcm.AttrMRA, ibcm.AttrRTU, ibcm.AttrDREQ, ibcm.AttrDREP:
		local, remote := cm.CommIDs()
		ids = [2]uint32{*local, *remote}
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
			return int(c)
		}
	}
	return 0
}
