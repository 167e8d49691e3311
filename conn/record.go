package conn

import (
	"net"
	"net/netip"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
)

// frameView is what Record gathers from one record's layers before turning
// it into events.
type frameView struct {
	// ip is the last IP header (its addresses are made netip.Addrs only
	// when ends asks: most packets never need them).
	ip       bool
	ipSrc    []byte
	ipDst    []byte
	tcp      bool
	sport    uint16
	dport    uint16
	fin, rst bool
	lrh      *ibcm.LRH
	grh      *ibcm.GRH
	mad      *ibcm.MAD
	// The transport packet being gathered: an IB BTH (with its IETH) or an
	// iWARP RDMAP message, and the RPC-over-RDMA header decoded after it.
	bth   *ibcm.BTH
	ieth  *ibcm.IETH
	rdmap *mpa.RDMAP
	rpc   *rpcrdma.Header
	// rpcMsg is the message type of the RPC message after rpc, plus one
	// (0: none decoded).
	rpcMsg uint8
	// destQP is the first BTH's destination QP (sawBTH), for the
	// transport analysis' findings (claimTransport).
	destQP uint32
	sawBTH bool
}

// transport says which RDMA transport carried the frame.
func (v *frameView) transport() Transport {
	switch {
	case v.lrh != nil:
		return IB
	case v.grh != nil && !v.ip:
		return RoCEv1
	case v.tcp:
		return IWARP
	case v.ip:
		return RoCEv2
	}
	return TransportUnknown
}

// ends returns the network ends of the frame: IP addresses (and TCP ports),
// or LIDs and GIDs.
func (v *frameView) ends() (src, dst Peer) {
	if v.lrh != nil {
		src.LID, dst.LID = v.lrh.SLID, v.lrh.DLID
	}
	switch {
	case v.ip:
		src.Addr, dst.Addr = ipAddr(v.ipSrc), ipAddr(v.ipDst)
	case v.grh != nil:
		src.Addr, dst.Addr = v.grh.SrcGID(), v.grh.DstGID()
	}
	if v.tcp {
		src.Port, dst.Port = v.sport, v.dport
	}
	return src, dst
}

func ipAddr(ip net.IP) netip.Addr {
	a, _ := netip.AddrFromSlice(ip)
	return a.Unmap()
}

// Record turns one dissected frame into tracker events: CM messages, MPA
// start-up frames and complete Sends with their RPC-over-RDMA header. The
// record is not kept.
//
// A Send completes at its last packet (IB SEND LAST/ONLY, iWARP DDP segment
// with L set). The RPC-over-RDMA header decoded from a Send follows the
// transport layers of the packet that completed it (or of its first
// packet) in the record.
func (t *Tracker) Record(rec *dissect.Record) {
	if t.finished {
		return
	}
	h := rec.Headers()
	ib := h.BTHAt >= 0 && h.TCP == nil && h.CM == nil // an IB packet, no CM message
	if ib && !rcSend(h.BTH.OpCode) && !trackedFinding(rec) {
		// Most packets (ACKs, RDMA Writes and Reads): no Send to account
		// (what an RDMA Read may complete is the Dissector's), no finding
		// to list on a connection.
		t.claimed = 0
		return
	}
	var v frameView
	layers, base := rec.Layers, 0
	if ib {
		// The layers before its BTH are its addressing headers, which h
		// holds.
		switch {
		case h.IPv4 != nil:
			v.ip, v.ipSrc, v.ipDst = true, h.IPv4.SrcIP, h.IPv4.DstIP
		case h.IPv6 != nil:
			v.ip, v.ipSrc, v.ipDst = true, h.IPv6.SrcIP, h.IPv6.DstIP
		}
		v.lrh, v.grh = h.LRH, h.GRH
		if !rcSend(h.BTH.OpCode) {
			// Only its transport findings to list, or a CM message cut
			// by the snap length to follow.
			v.sawBTH, v.destQP = true, h.BTH.DestQP
			t.claimTransport(rec, &v)
			if h.MAD != nil {
				t.cutMAD(rec, &v, h)
			}
			return
		}
		base = h.BTHAt
		layers = layers[base:]
	}
	for i, l := range layers {
		switch x := l.(type) {
		case *dissect.IPv4:
			v.ip, v.ipSrc, v.ipDst = true, x.SrcIP, x.DstIP
		case *dissect.IPv6:
			v.ip, v.ipSrc, v.ipDst = true, x.SrcIP, x.DstIP
		case *dissect.TCP:
			v.tcp, v.sport, v.dport = true, uint16(x.SrcPort), uint16(x.DstPort)
			v.fin, v.rst = x.FIN, x.RST
		case *ibcm.LRH:
			v.lrh = x
		case *ibcm.GRH:
			v.grh = x
		case *ibcm.MAD:
			v.mad = x
		case *ibcm.CM:
			t.stepped = nil
			t.recordCM(rec, &v, x, rec.Offsets[base+i])
			t.attachFindings(rec)
		case *mpa.Frame:
			t.stepped = nil
			t.recordMPA(rec, &v, x, rec.Offsets[base+i])
			t.attachFindings(rec)
		case *ibcm.BTH:
			t.packetDone(rec, &v)
			v.bth = x
			if !v.sawBTH {
				v.sawBTH, v.destQP = true, x.DestQP
			}
		case *ibcm.IETH:
			v.ieth = x
		case *mpa.RDMAP:
			t.packetDone(rec, &v)
			v.rdmap = x
		case *rpcrdma.Header:
			if v.rpc == nil {
				v.rpc = x
			}
		case *rpcrdma.RPC:
			if v.rpc != nil && v.rpcMsg == 0 && x.MsgType <= rpcrdma.MsgReply {
				v.rpcMsg = uint8(x.MsgType) + 1
			}
		}
	}
	t.packetDone(rec, &v)
	t.claimTransport(rec, &v)
	if v.fin || v.rst {
		src, dst := v.ends()
		t.TCPClose(rec.Frame, rec.Time, src, dst, v.rst)
	}
}

// attachFindings gives the connection a CM or MPA message belongs to what
// the layers noticed in that frame (reserved bits, a bad ICRC …), so its
// ladder shows them at the step. The private-data findings are left out:
// the tracker raises its own from the same bytes.
func (t *Tracker) attachFindings(rec *dissect.Record) {
	c := t.stepped
	if c == nil {
		return
	}
	for _, f := range rec.Findings {
		if strings.HasPrefix(f.Code, "pvtdata.") || c.hasFindingAt(f.Code, rec.Frame) {
			continue
		}
		if f.Frame == 0 {
			f.Frame = rec.Frame
		}
		t.finding(c, f)
	}
}

// packetDone accounts the transport packet gathered in v to its Send and
// hands the Send to the checks when the packet completes it.
func (t *Tracker) packetDone(rec *dissect.Record, v *frameView) {
	switch {
	case v.bth != nil:
		t.recordIBSend(rec, v)
	case v.rdmap != nil:
		t.recordIWARPSend(rec, v)
	}
	v.bth, v.ieth, v.rdmap, v.rpc, v.rpcMsg = nil, nil, nil, nil, 0
}

// mpaHeaderLen is the MPA start-up frame header before the private data:
// key (16), flags, revision, PD_Length (2).
const mpaHeaderLen = 20

func (t *Tracker) recordMPA(rec *dissect.Record, v *frameView, f *mpa.Frame, off int) {
	ev := MPAEvent{Frame: rec.Frame, Time: rec.Time, Revision: f.Revision, Flags: f.Flags,
		PrivateData: f.PrivateData, ULPOffset: f.ULPOffset, Decoded: &f.PD, Uncaptured: f.Uncaptured}
	ev.Src, ev.Dst = v.ends()
	switch {
	case f.Kind == mpa.FrameRequest:
		ev.Type = MPARequest
	case f.Rejected():
		ev.Type = MPAReject
	default:
		ev.Type = MPAReply
	}
	if off >= 0 {
		ev.PrivateDataAt = off + mpaHeaderLen
	}
	t.MPA(&ev)
}

// rcSend reports an RC SEND opcode (FIRST, MIDDLE, LAST, ONLY, with
// immediate or invalidate): op.Transport() == "RC" && op.IsSend(), without
// the map and string of Transport.
func rcSend(op ibcm.Opcode) bool {
	return op <= 0x05 || op == ibcm.OpRCSendLastInv || op == ibcm.OpRCSendOnlyInv
}

func (t *Tracker) recordIBSend(rec *dissect.Record, v *frameView) {
	op := v.bth.OpCode
	if !rcSend(op) {
		return
	}
	src, dst := v.ends()
	k := sendKey{host: hostKey(dst), qp: v.bth.DestQP}
	last, first := false, false
	switch op {
	case 0x02, 0x03, 0x16: // LAST
		last = true
	case 0x04, 0x05, 0x17: // ONLY
		last, first = true, true
	case 0x00:
		first = true
	}
	acc := t.sendAcc(k, v.bth.DestQP, first, rec.Frame)
	if acc == nil {
		return // the first packet of this Send was not captured
	}
	acc.length += v.bth.PayloadLength
	if v.rpc != nil && !acc.rpc {
		acc.takeRPC(v)
	}
	if !last {
		return
	}
	if resent(rec) {
		// The requester sent the Send's last packet again (after a lost
		// ACK, a NAK or its timeout): the Send completed before; this is
		// no new message. The transport finding stays on the frame.
		acc.open = false
		return
	}
	ev := SendEvent{Transport: v.transport(), Src: src, Dst: dst, DestQP: v.bth.DestQP, Invalidate: op.IsInvalidate()}
	if ev.Invalidate && v.ieth != nil {
		ev.InvalidateSTag = v.ieth.RKey
	}
	t.sendComplete(rec, k, acc, &ev)
}

// resent reports whether the transport analysis found the frame's request
// packet sent again, its original captured before (a retransmission
// of a packet the capture lost is the first copy seen).
func resent(rec *dissect.Record) bool {
	for i := range rec.Findings {
		if f := &rec.Findings[i]; (f.Frame == rec.Frame || f.Frame == 0) && transport.SentBefore(f) {
			return true
		}
	}
	return false
}

func (t *Tracker) recordIWARPSend(rec *dissect.Record, v *frameView) {
	r := v.rdmap
	if r.Tagged || r.QN != 0 || !r.Opcode.IsSend() {
		return
	}
	src, dst := v.ends()
	// One Send at a time per direction on QN 0; the MSN tells a segment
	// of the Send in progress from one whose first segment was missed.
	k := sendKey{host: src, peer: dst}
	acc := t.sendAcc(k, uint32(src.Port^dst.Port), r.MO == 0, rec.Frame)
	if acc == nil {
		return
	}
	if r.MO == 0 {
		acc.msn = r.MSN
	} else if acc.msn != r.MSN {
		acc.open = false
		return
	}
	acc.length = max(acc.length, int(r.MO)+len(r.LayerPayload()))
	if v.rpc != nil && !acc.rpc {
		acc.takeRPC(v)
	}
	if !r.Last {
		return
	}
	ev := SendEvent{Transport: IWARP, Src: src, Dst: dst}
	if r.Opcode == mpa.OpSendInvalidate || r.Opcode == mpa.OpSendSEInval {
		ev.Invalidate, ev.InvalidateSTag = true, r.InvalidateSTag
	}
	t.sendComplete(rec, k, acc, &ev)
}

// sendAcc returns the accumulator of the Send k, starting a new one at the
// first packet of a Send; nil when the Send's first packet was not seen.
// hint spreads the keys over accCache (the QP, or the ports).
func (t *Tracker) sendAcc(k sendKey, hint uint32, first bool, frame int) *sendAcc {
	e := &t.accCache[accSlot(hint)]
	var acc *sendAcc
	if e.acc != nil && e.k == k {
		acc = e.acc
	} else {
		if t.sends == nil {
			t.sends = map[sendKey]*sendAcc{}
		}
		acc = t.sends[k]
		if acc == nil && first {
			if len(t.sends) >= maxSendAccs {
				clear(t.sends)
				clear(t.accCache[:])
			}
			if n := len(t.freeAccs); n > 0 {
				acc, t.freeAccs = t.freeAccs[n-1], t.freeAccs[:n-1]
			} else {
				acc = &sendAcc{}
			}
			t.sends[k] = acc
		}
		if acc != nil {
			e.k, e.acc = k, acc
		}
	}
	if !first {
		if acc != nil && !acc.open {
			return nil
		}
		return acc
	}
	acc.open, acc.msn, acc.first, acc.length = true, 0, frame, 0
	acc.rpc, acc.xid, acc.proc, acc.hs = false, 0, 0, acc.hs[:0]
	acc.credits, acc.rpcMsg, acc.chunks = 0, 0, ChunkTotals{}
	return acc
}

// takeRPC keeps what the Send's checks need of its RPC-over-RDMA header.
func (acc *sendAcc) takeRPC(v *frameView) {
	acc.rpc, acc.xid, acc.proc = true, v.rpc.XID, uint32(v.rpc.Proc)
	acc.credits, acc.rpcMsg = v.rpc.Credits, v.rpcMsg
	acc.hs = appendHandles(acc.hs[:0], v.rpc)
	acc.chunks.add(v.rpc.Chunks)
}

func (t *Tracker) sendComplete(rec *dissect.Record, k sendKey, acc *sendAcc, ev *SendEvent) {
	ev.FirstFrame, ev.LastFrame, ev.Time, ev.Length = acc.first, rec.Frame, rec.Time, acc.length
	ev.RPCRDMA, ev.XID, ev.Proc, ev.Handles = acc.rpc, acc.xid, acc.proc, acc.hs
	ev.Credits, ev.Call, ev.Reply = acc.credits, acc.rpcMsg == rpcrdma.MsgCall+1, acc.rpcMsg == rpcrdma.MsgReply+1
	ev.Chunks = acc.chunks
	// The accumulator stays for the next Send on k (no allocation per Send).
	acc.open = false
	t.send(ev, acc)
}

// appendHandles appends every chunk-segment handle h offers.
func appendHandles(dst []uint32, h *rpcrdma.Header) []uint32 {
	for _, r := range h.Reads {
		dst = append(dst, r.Handle)
	}
	for _, w := range h.Writes {
		for _, s := range w.Segments {
			dst = append(dst, s.Handle)
		}
	}
	if h.HasReply {
		for _, s := range h.Reply.Segments {
			dst = append(dst, s.Handle)
		}
	}
	return dst
}

func (t *Tracker) recordCM(rec *dissect.Record, v *frameView, cm *ibcm.CM, off int) {
	ev := CMEvent{Frame: rec.Frame, Time: rec.Time, Transport: v.transport(), Type: cm.AttributeID,
		PrivateData: cm.PrivateData, ULPOffset: cm.ULPOffset, Decoded: &cm.PD}
	ev.Src, ev.Dst = v.ends()
	if v.mad != nil {
		ev.TID = v.mad.TransactionID
	}
	if off >= 0 {
		ev.PrivateDataAt = off + cm.PrivateDataOffset()
	}
	ev.Uncaptured = cm.PrivateDataCut() && rec.CaptureLength < rec.Length
	if cm.FixedCut() {
		// Only a frame the snap length cut has such a layer (dissect).
		ev.FixedCut, ev.Uncaptured, ev.PrivateDataAt, ev.Decoded = true, true, 0, nil
	}
	if local, remote := cm.CommIDs(); local != nil {
		ev.LocalCommID, ev.RemoteCommID = *local, *remote
		ev.held(cm, local, CapturedLocalCommID)
		ev.held(cm, remote, CapturedRemoteCommID)
	}
	switch cm.AttributeID {
	case ibcm.AttrREQ:
		r := &cm.REQ
		ev.LocalCommID, ev.ServiceID, ev.QPN = r.LocalCommID, uint64(r.ServiceID), r.LocalQPN
		ev.held(cm, &r.LocalCommID, CapturedLocalCommID)
		ev.held(cm, &r.ServiceID, CapturedServiceID)
		ev.held(cm, &r.LocalQPN, CapturedQPN)
	case ibcm.AttrREP:
		ev.QPN = cm.REP.LocalQPN
		ev.held(cm, &cm.REP.LocalQPN, CapturedQPN)
	case ibcm.AttrREJ:
		r := &cm.REJ
		ev.RejectReason, ev.RejectReasonName = r.Reason, ibcm.RejectReasonName(r.Reason)
		ev.held(cm, &r.Reason, CapturedReason)
	case ibcm.AttrMRA, ibcm.AttrRTU, ibcm.AttrDREP, ibcm.AttrAPR:
	case ibcm.AttrDREQ:
		ev.QPN = cm.DREQ.RemoteQPN
		ev.held(cm, &cm.DREQ.RemoteQPN, CapturedQPN)
	case ibcm.AttrSIDRReq:
		r := &cm.SIDRReq
		ev.LocalCommID, ev.ServiceID = r.RequestID, uint64(r.ServiceID)
		ev.held(cm, &r.RequestID, CapturedLocalCommID)
		ev.held(cm, &r.ServiceID, CapturedServiceID)
	case ibcm.AttrSIDRRep:
		r := &cm.SIDRRep
		ev.LocalCommID, ev.ServiceID, ev.QPN, ev.SIDRStatus = r.RequestID, uint64(r.ServiceID), r.QPN, r.Status
	case ibcm.AttrLAP:
		ev.QPN = cm.LAP.RemoteQPN
	default:
		// ClassPortInfo belongs to no connection.
		return
	}
	if cm.HasIPCM {
		ev.CMAValid, ev.CMASrc, ev.CMADst, ev.CMAPort = true, cm.IPCM.Src, cm.IPCM.Dst, cm.IPCM.SrcPort
	}
	t.CM(&ev)
}

// held notes in ev.Captured that cm, a message cut in its fixed fields,
// holds the field decoded into member (f of the event).
func (ev *CMEvent) held(cm *ibcm.CM, member any, f CMFields) {
	if ev.FixedCut && cm.Holds(member) {
		ev.Captured |= f
	}
}
