package dissect

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/posindex"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ulp"
)

// This file picks the decoder of a complete Send by what its connection
// is: the service its CM REQ (InfiniBand, RoCE) or MPA request (iWARP)
// named. RPC-over-RDMA is decoded on NFS/RDMA connections, and on
// connections whose setup was not captured only when the Send passes
// rpcrdma's strict test (Header.Plausible); SMB Direct, NVMe-oF, iSER and
// IPoIB-CM have their layers (layers/ulp); anything else is a Send
// payload.

// maxServices bounds the queue pairs (and the connections, by comm ID)
// whose service the Dissector remembers; the oldest are forgotten first.
const maxServices = 1 << 16

// qpEnd names one side's QP: the address of its node (as netFlowOf gives
// it) and its QPN (or, as a key of serviceTable.ids, its comm ID).
type qpEnd struct {
	node gopacket.Endpoint
	qpn  uint32
}

func (k qpEnd) Hash() uint32 {
	h := uint32(k.node.FastHash()) ^ k.qpn*0x9e3779b1
	return h ^ h>>16
}

// service is what a connection's setup said about its ULP.
type service struct {
	kind ulp.Kind
	name string // the service's name as the CM layer gives it ("" when none)
	// peer is the QPN of the other side of the connection (the REQ's
	// Local QPN for the responder's QP; the REP's for the requester's),
	// 0 until known; inline is the requester's Receive size (RFC 8797;
	// RFC 8166's default when its REQ carried none), 0 when unknown.
	peer   uint32
	inline int
	port   uint16 // the rdma_cm port in an IP port space (ibcm.ULPPort), 0 when none
	// id numbers the connection (from 1, by its REQ, or an iWARP
	// stream's MPA frame; the number of one ended is given again): what
	// its calls are kept under until it ends (callTable.end); 0 when
	// none.
	id uint32
}

// cmConn is a connection as serviceTable knows it: its service, each
// side's comm ID (as an ids key) and QP; server is set by the REP.
type cmConn struct {
	s                  service
	clientID, serverID qpEnd
	clientQP, serverQP qpEnd
	replied            bool
}

// serviceTable remembers the service of the QPs whose CM exchange the
// Dissector saw: a REQ names the service and the requester's QPN, the REP
// (matched by the comm ID) the responder's QPN, and the DREP ends both
// (memory follows the connections open, not those a capture held).
// Bounded by maxServices, oldest first.
type serviceTable struct {
	qps keyTable[service]
	ids keyTable[cmConn] // by each side's node and comm ID
	// recent remembers lookups by the QPN's low bits (cleared whenever
	// qps changes): a Send's QP is mostly one of a few, and comparing a
	// key is cheaper than hashing it.
	recent [8]recentService
	// conns numbers the connections (the RPC decoder's, which keeps
	// their calls apart and takes a number back when the Dissector ends
	// the connection).
	conns *connIDs
}

type recentService struct {
	k     qpEnd
	s     service
	found bool
	valid bool
}

// keyTable holds at most maxServices values by qpEnd; when it is full,
// the key put first is forgotten. It allocates only to grow past what it
// held before, so a capture of connection after connection allocates
// nothing per connection (a Go map remade its groups as keys came and
// went).
type keyTable[V any] struct {
	idx  posindex.Index[qpEnd]
	ents []keyEntry[V]
	free []int32
	// order holds the entries' positions in the order their keys were
	// put, oldest at head; one whose entry was deleted (or reused: its
	// seq differs) is skipped.
	order []keyAge
	head  int
	seq   uint64
}

type keyEntry[V any] struct {
	k   qpEnd
	v   V
	seq uint64 // 0: a free entry
}

type keyAge struct {
	pos int32
	seq uint64
}

func (t *keyTable[V]) get(k qpEnd) (V, bool) {
	if i, ok := t.idx.Get(k); ok {
		return t.ents[i].v, true
	}
	var zero V
	return zero, false
}

func (t *keyTable[V]) put(k qpEnd, v V) {
	if i, ok := t.idx.Get(k); ok {
		t.ents[i].v = v
		return
	}
	if t.idx.Len() >= maxServices {
		t.evictOldest()
	}
	var pos int32
	if n := len(t.free); n > 0 {
		pos, t.free = t.free[n-1], t.free[:n-1]
	} else {
		pos = int32(len(t.ents))
		t.ents = append(t.ents, keyEntry[V]{})
	}
	t.seq++
	t.ents[pos] = keyEntry[V]{k: k, v: v, seq: t.seq}
	t.idx.Set(k, int(pos))
	t.order = append(t.order, keyAge{pos, t.seq})
	if len(t.order)-t.head > 2*t.idx.Len()+64 {
		// Drop the positions of deleted entries (in place: the order
		// stays within twice the entries held).
		n := 0
		for _, a := range t.order[t.head:] {
			if t.ents[a.pos].seq == a.seq {
				t.order[n] = a
				n++
			}
		}
		t.order, t.head = t.order[:n], 0
	}
}

func (t *keyTable[V]) del(k qpEnd) {
	i, ok := t.idx.Get(k)
	if !ok {
		return
	}
	t.idx.Delete(k)
	t.ents[i] = keyEntry[V]{}
	t.free = append(t.free, int32(i))
}

func (t *keyTable[V]) evictOldest() {
	for t.head < len(t.order) {
		a := t.order[t.head]
		t.head++
		if e := &t.ents[a.pos]; e.seq == a.seq {
			t.del(e.k)
			return
		}
	}
}

// learnCM notes what a CM REQ, REP or DREP in rec says about its
// connection's service; a DREP returns the connection it ended, whose
// number the caller gives back with its calls (rpcSends.end).
func (t *serviceTable) learnCM(rec *Record, cm *ibcm.CM) (ended cmConn, ok bool) {
	switch cm.AttributeID {
	case ibcm.AttrREQ, ibcm.AttrREP, ibcm.AttrDREP:
		t.recent = [len(t.recent)]recentService{}
	}
	switch cm.AttributeID {
	case ibcm.AttrREQ:
		flow := netFlowOf(rec)
		sid := uint64(cm.REQ.ServiceID)
		s := service{kind: ulp.KindOther, name: cm.REQ.ServiceID.ULP()}
		if cm.REQ.ServiceID.IsIPoIBCM() {
			s.kind = ulp.KindIPoIBCM
		} else if port, ok := ibcm.ULPPort(sid); ok {
			s.kind, s.port = ulp.ByPort(port), port
		}
		s.inline = defaultInline
		if rd := &cm.PD.Reading; rd.Valid {
			s.inline = rd.Message.ReceiveBytes()
		}
		s.id = t.newID(qpEnd{flow.Src(), cm.REQ.LocalCommID})
		c := cmConn{s: s, clientID: qpEnd{flow.Src(), cm.REQ.LocalCommID}, clientQP: qpEnd{flow.Src(), cm.REQ.LocalQPN}}
		t.ids.put(c.clientID, c)
		t.qps.put(c.clientQP, s)
	case ibcm.AttrREP:
		flow := netFlowOf(rec)
		c, found := t.ids.get(qpEnd{flow.Dst(), cm.REP.RemoteCommID})
		if !found {
			return
		}
		c.serverID, c.serverQP, c.replied = qpEnd{flow.Src(), cm.REP.LocalCommID}, qpEnd{flow.Src(), cm.REP.LocalQPN}, true
		// Each QP's peer: a call's chunks are moved on the QP paired with
		// the one it went to.
		srv, cli := c.s, c.s
		srv.peer, cli.peer = c.clientQP.qpn, c.serverQP.qpn
		t.qps.put(c.serverQP, srv)
		t.qps.put(c.clientQP, cli)
		t.ids.put(c.clientID, c)
		t.ids.put(c.serverID, c)
	case ibcm.AttrDREP:
		flow := netFlowOf(rec)
		c, found := t.ids.get(qpEnd{flow.Src(), cm.DREP.LocalCommID})
		if !found || !c.replied {
			return
		}
		t.qps.del(c.clientQP)
		t.qps.del(c.serverQP)
		t.ids.del(c.clientID)
		t.ids.del(c.serverID)
		return c, true
	}
	return
}

// newID returns the id of the connection a REQ from clientID sets up:
// that of its REQ before when this one is sent again, else one free.
func (t *serviceTable) newID(clientID qpEnd) uint32 {
	if c, ok := t.ids.get(clientID); ok && !c.replied {
		return c.s.id
	}
	return t.conns.take()
}

// hintCM decodes the private data of a REP or REJ in rec again with the
// port of the REQ it answers (ibcm.CM.SetServicePort), when that REQ was
// seen: the message itself names no service.
func (t *serviceTable) hintCM(rec *Record, cm *ibcm.CM) {
	id, ok := cm.AnswersREQ()
	if !ok {
		return
	}
	if c, ok := t.ids.get(qpEnd{netFlowOf(rec).Dst(), id}); ok && c.s.port != 0 {
		cm.SetServicePort(c.s.port)
	}
}

// lookup returns the service of the QP a Send went to (valid until the
// table changes or the next lookup): a pointer into the recent lookups,
// not a copy of the service for each Send.
func (t *serviceTable) lookup(k *qpEnd) (*service, bool) {
	if t.qps.idx.Len() == 0 {
		return nil, false
	}
	r := &t.recent[k.qpn%uint32(len(t.recent))]
	if !r.valid || r.k.qpn != k.qpn || r.k.node != k.node {
		s, found := t.qps.get(*k)
		*r = recentService{k: *k, s: s, found: found, valid: true}
	}
	return &r.s, r.found
}

// ulpSends is the Dissector's sendDecoder: it hands each complete Send to
// the decoder of its connection's ULP.
type ulpSends struct {
	rpc      *rpcSends
	services serviceTable
	scratch  rpcrdma.Header // for the RPC-over-RDMA test
	qp       qpEnd          // qpOf's

	// Layers handed out for the current frame (the Record keeps them
	// until the next one).
	frame    int
	payloads pool[ulp.Payload]
	smbd     pool[ulp.SMBD]
	iser     pool[ulp.ISER]
	nvme     pool[ulp.NVMe]
	ipoib    pool[ulp.IPoIB]
}

func newULPSends(opts Options) *ulpSends {
	u := &ulpSends{rpc: newRPCSends(opts), frame: -1}
	u.services.conns = &u.rpc.calls.ids
	u.scratch.MaxSegments = u.rpc.maxSegments
	return u
}

// rpcOf is the RPC-over-RDMA decoder behind a sendDecoder (the
// Dissector's ulpSends, or a test's rpcSends), nil when there is none.
func rpcOf(sd sendDecoder) *rpcSends {
	switch s := sd.(type) {
	case *rpcSends:
		return s
	case *ulpSends:
		return s.rpc
	}
	return nil
}

// pool hands out reusable layer values, all of them free again at the
// next frame.
type pool[T any] struct {
	items []*T
	used  int
}

func (p *pool[T]) get() *T {
	if p.used == len(p.items) {
		p.items = append(p.items, new(T))
	}
	p.used++
	return p.items[p.used-1]
}

func (u *ulpSends) decodeSend(rec *Record, payload []byte, info SendInfo) {
	u.decode(rec, payload, &info)
}

// decode is decodeSend without a copy of the SendInfo (info is changed).
func (u *ulpSends) decode(rec *Record, payload []byte, info *SendInfo) {
	s := info.service
	if s == nil && info.qp != nil {
		if qs, ok := u.services.lookup(info.qp); ok {
			// A call to this QP has its chunks moved on the peer's; a
			// reply to it is bounded by its own Receive size.
			s = qs
			info.path, info.setup, info.inline, info.service = s.peer, true, s.inline, s
		}
	}
	if s != nil && s.kind == ulp.KindRPCRDMA || s == nil && u.scratch.Plausible(payload) {
		u.rpc.decode(rec, payload, info)
		return
	}
	u.decodeOther(rec, payload, info, s)
}

// qpOf is the QP of rec's single-packet Send (SEND_ONLY), to QPN destQP,
// as the service table keys it (the destination of netFlowOf, without
// making the flow), kept in u for the SendInfo to point to until the next.
// The connection's hash (connHash), which the Send's decoding needs, is
// made from the same addresses.
func (u *ulpSends) qpOf(rec *Record, destQP uint32) *qpEnd {
	u.qp = qpEnd{qpn: destQP}
	var lids [4]byte
	if typ, src, dst, ok := flowAddrs(rec, &lids); ok {
		u.qp.node = gopacket.NewEndpoint(typ, dst)
		if !rec.hashDone {
			hashFlow(rec, typ, src, dst)
		}
	}
	return &u.qp
}

// decodeOther decodes a Send that is not RPC-over-RDMA: by the layer of
// its connection's ULP, else as a payload. Out of decodeSend, whose RPC
// path is most Sends: that path's code stays short.
func (u *ulpSends) decodeOther(rec *Record, payload []byte, info *SendInfo, s *service) {
	if u.frame != rec.Frame {
		u.frame = rec.Frame
		u.payloads.used, u.smbd.used, u.iser.used, u.nvme.used, u.ipoib.used = 0, 0, 0, 0, 0
	}
	if s == nil {
		u.addPayload(rec, payload, info, "")
		return
	}
	var l ulpLayer
	switch s.kind {
	case ulp.KindSMBDirect:
		l = u.smbd.get()
	case ulp.KindISER:
		l = u.iser.get()
	case ulp.KindNVMeoF:
		l = u.nvme.get()
	case ulp.KindIPoIBCM:
		l = u.ipoib.get()
	default:
		u.addPayload(rec, payload, info, s.name)
		return
	}
	if err := l.DecodeFromBytes(payload, gopacket.NilDecodeFeedback); err != nil {
		// Too short for its ULP's header: shown as a payload, with what
		// was expected.
		u.addPayload(rec, payload, info, s.kind.String())
		first := len(rec.Findings)
		rec.Findings = append(rec.Findings, finding.Finding{Code: CodeULPShort, Severity: finding.SeverityWarning,
			Message: s.kind.String() + ": " + err.Error(), Layer: "send", Offset: 0})
		rec.placeFindings(first, sendBase(rec, payload, info))
		rec.keepCaptured(first)
		return
	}
	rec.Add(l, sendBase(rec, payload, info))
}

// ulpLayer is a layer of layers/ulp.
type ulpLayer interface {
	field.Layer
	DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error
}

func (u *ulpSends) addPayload(rec *Record, payload []byte, info *SendInfo, name string) {
	p := u.payloads.get()
	p.DecodeFromBytes(payload, gopacket.NilDecodeFeedback)
	p.Service = name
	rec.Add(p, sendBase(rec, payload, info))
}

// sendBase is the frame offset of a Send's payload, -1 when it was
// reassembled or does not lie in the frame.
func sendBase(rec *Record, payload []byte, info *SendInfo) int {
	if info.FirstFrame != info.LastFrame {
		return -1
	}
	return frameOffset(rec.Data, payload)
}
