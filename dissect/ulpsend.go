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

// maxServices bounds the queue pairs (and the REQs waiting for their REP)
// whose service the Dissector remembers; the oldest are forgotten first.
const maxServices = 1 << 16

// qpEnd names one side's QP: the address of its node (as netFlowOf gives
// it) and its QPN.
type qpEnd struct {
	node gopacket.Endpoint
	qpn  uint32
}

// service is what a connection's setup said about its ULP.
type service struct {
	kind ulp.Kind
	name string // the service's name as the CM layer gives it ("" when none)
}

// serviceTable remembers the service of the QPs whose CM exchange the
// Dissector saw: a REQ names the service and the requester's QPN, the REP
// (matched by the comm ID) the responder's QPN. Bounded by maxServices,
// oldest first.
type serviceTable struct {
	qps   map[qpEnd]service
	reqs  map[qpEnd]service // by the REQ sender's node and Local Comm ID
	order []fifoKey
	next  int
}

type fifoKey struct {
	k   qpEnd
	req bool
}

func (t *serviceTable) put(m map[qpEnd]service, k qpEnd, s service, req bool) {
	if _, ok := m[k]; !ok {
		if len(t.order) < maxServices {
			t.order = append(t.order, fifoKey{k, req})
		} else {
			old := t.order[t.next]
			if old.req {
				delete(t.reqs, old.k)
			} else {
				delete(t.qps, old.k)
			}
			t.order[t.next] = fifoKey{k, req}
			t.next = (t.next + 1) % maxServices
		}
	}
	m[k] = s
}

// learnCM notes what a CM REQ or REP in rec says about its connection's
// service.
func (t *serviceTable) learnCM(rec *Record, cm *ibcm.CM) {
	if t.qps == nil {
		t.qps, t.reqs = map[qpEnd]service{}, map[qpEnd]service{}
	}
	flow := netFlowOf(rec)
	switch cm.AttributeID {
	case ibcm.AttrREQ:
		sid := uint64(cm.REQ.ServiceID)
		s := service{kind: ulp.KindOther, name: cm.REQ.ServiceID.ULP()}
		if cm.REQ.ServiceID.IsIPoIBCM() {
			s.kind = ulp.KindIPoIBCM
		} else if port, ok := ibcm.ULPPort(sid); ok {
			s.kind = ulp.ByPort(port)
		}
		t.put(t.reqs, qpEnd{flow.Src(), cm.REQ.LocalCommID}, s, true)
		t.put(t.qps, qpEnd{flow.Src(), cm.REQ.LocalQPN}, s, false)
	case ibcm.AttrREP:
		if s, ok := t.reqs[qpEnd{flow.Dst(), cm.REP.RemoteCommID}]; ok {
			t.put(t.qps, qpEnd{flow.Src(), cm.REP.LocalQPN}, s, false)
		}
	}
}

// lookup returns the service of the QP a Send went to.
func (t *serviceTable) lookup(key QPKey) (service, bool) {
	if t.qps == nil {
		return service{}, false
	}
	s, ok := t.qps[qpEnd{key.Net.Dst(), key.DestQP}]
	return s, ok
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
