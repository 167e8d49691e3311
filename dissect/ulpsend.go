package dissect

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
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

// service is what a connection's setup said about its ULP.
type service struct {
	kind ulp.Kind
	name string // the service's name as the CM layer gives it ("" when none)
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
	qps genMap[qpEnd, service]
	ids genMap[qpEnd, cmConn] // by each side's node and comm ID
}

// genMap is a map of at most maxServices entries in two generations: new
// entries go to cur, and when it holds half the bound it becomes old (the
// previous old is forgotten), so the oldest entries go first.
type genMap[K comparable, V any] struct {
	cur, old map[K]V
}

func (m *genMap[K, V]) get(k K) (V, bool) {
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	return v, ok
}

func (m *genMap[K, V]) put(k K, v V) {
	if _, ok := m.cur[k]; !ok {
		delete(m.old, k)
		if m.cur == nil || len(m.cur) >= maxServices/2 {
			m.old, m.cur = m.cur, map[K]V{}
		}
	}
	m.cur[k] = v
}

func (m *genMap[K, V]) del(k K) {
	delete(m.cur, k)
	delete(m.old, k)
}

// learnCM notes what a CM REQ, REP or DREP in rec says about its
// connection's service.
func (t *serviceTable) learnCM(rec *Record, cm *ibcm.CM) {
	switch cm.AttributeID {
	case ibcm.AttrREQ:
		flow := netFlowOf(rec)
		sid := uint64(cm.REQ.ServiceID)
		s := service{kind: ulp.KindOther, name: cm.REQ.ServiceID.ULP()}
		if cm.REQ.ServiceID.IsIPoIBCM() {
			s.kind = ulp.KindIPoIBCM
		} else if port, ok := ibcm.ULPPort(sid); ok {
			s.kind = ulp.ByPort(port)
		}
		c := cmConn{s: s, clientID: qpEnd{flow.Src(), cm.REQ.LocalCommID}, clientQP: qpEnd{flow.Src(), cm.REQ.LocalQPN}}
		t.ids.put(c.clientID, c)
		t.qps.put(c.clientQP, s)
	case ibcm.AttrREP:
		flow := netFlowOf(rec)
		c, ok := t.ids.get(qpEnd{flow.Dst(), cm.REP.RemoteCommID})
		if !ok {
			return
		}
		c.serverID, c.serverQP, c.replied = qpEnd{flow.Src(), cm.REP.LocalCommID}, qpEnd{flow.Src(), cm.REP.LocalQPN}, true
		t.qps.put(c.serverQP, c.s)
		t.ids.put(c.clientID, c)
		t.ids.put(c.serverID, c)
	case ibcm.AttrDREP:
		flow := netFlowOf(rec)
		c, ok := t.ids.get(qpEnd{flow.Src(), cm.DREP.LocalCommID})
		if !ok || !c.replied {
			return
		}
		t.qps.del(c.clientQP)
		t.qps.del(c.serverQP)
		t.ids.del(c.clientID)
		t.ids.del(c.serverID)
	}
}

// lookup returns the service of the QP a Send went to.
func (t *serviceTable) lookup(key QPKey) (service, bool) {
	if t.qps.cur == nil {
		return service{}, false
	}
	return t.qps.get(qpEnd{key.Net.Dst(), key.DestQP})
}

// ulpSends is the Dissector's sendDecoder: it hands each complete Send to
// the decoder of its connection's ULP.
type ulpSends struct {
	rpc      *rpcSends
	services serviceTable
	scratch  rpcrdma.Header // for the RPC-over-RDMA test

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
	if u.frame != rec.Frame {
		u.frame = rec.Frame
		u.payloads.used, u.smbd.used, u.iser.used, u.nvme.used, u.ipoib.used = 0, 0, 0, 0, 0
	}
	s, known := info.service, info.serviceKnown
	if !known && info.hasQP {
		s, known = u.services.lookup(info.qp)
	}
	if !known {
		if u.scratch.Plausible(payload) {
			u.rpc.decodeSend(rec, payload, info)
			return
		}
		u.addPayload(rec, payload, info, "")
		return
	}
	var l ulpLayer
	switch s.kind {
	case ulp.KindRPCRDMA:
		u.rpc.decodeSend(rec, payload, info)
		return
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
		return
	}
	rec.Add(l, sendBase(rec, payload, info))
}

// ulpLayer is a layer of layers/ulp.
type ulpLayer interface {
	field.Layer
	DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error
}

func (u *ulpSends) addPayload(rec *Record, payload []byte, info SendInfo, name string) {
	p := u.payloads.get()
	p.DecodeFromBytes(payload, gopacket.NilDecodeFeedback)
	p.Service = name
	rec.Add(p, sendBase(rec, payload, info))
}

// sendBase is the frame offset of a Send's payload, -1 when it was
// reassembled or does not lie in the frame.
func sendBase(rec *Record, payload []byte, info SendInfo) int {
	if info.FirstFrame != info.LastFrame {
		return -1
	}
	return frameOffset(rec.Data, payload)
}
