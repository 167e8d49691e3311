package dissect

import (
	"fmt"
	"unsafe"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// This file decodes complete RDMA Send payloads (from RC Send packets,
// reassembled RC Sends and iWARP Sends) as RPC-over-RDMA.

// frameOffset is where payload starts in the frame's bytes, or -1 when it
// is not inside them (reassembled).
func frameOffset(data, payload []byte) int {
	if len(payload) == 0 || len(data) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(payload)))
	if p < d || p+uintptr(len(payload)) > d+uintptr(len(data)) {
		return -1
	}
	return int(p - d)
}

// SendInfo describes one complete RDMA Send message (reassembled when it
// spanned several packets or FPDUs), as handed to the ULP decoder.
type SendInfo struct {
	// Transport is "ib" (native InfiniBand, RoCEv1, RoCEv2) or "iwarp".
	Transport string
	// FirstFrame and LastFrame are the frames that carried the first and
	// last piece (equal for a single-packet Send).
	FirstFrame, LastFrame int
	// Invalidate reports Send with Invalidate (IB 0x16/0x17, iWARP
	// SendInv/SendSEInv); InvalidateSTag is the STag/R_Key it invalidates.
	Invalidate     bool
	InvalidateSTag uint32
	// Length is the Send's payload length in octets (the size the receiver's
	// Receive buffer must hold).
	Length int

	// What the connection's setup said, for the chunks: path is where
	// RDMA Writes and Reads for a call's chunks travel (IB: the
	// requester's QPN, when the CM exchange paired it with the QP the
	// call went to; iWARP: the TCP port pair; 0: unknown); setup reports
	// that the setup was captured; inline is the requester's Receive
	// size (RFC 8797, or RFC 8166's default when its setup carried none):
	// the longest reply Send it takes (0: unknown).
	path   uint32
	setup  bool
	inline int

	// The connection, for picking the ULP decoder (ulpSends): an IB QP
	// as the service table keys it (qp), or what an iWARP stream's MPA
	// request said (service); nil when not known. Pointers to where the
	// reassembly keeps them, not copies: a SendInfo is handed on by value,
	// per Send. The ULP's decoder is told the IB QP's service too (its
	// id: the connection the Send's calls belong to).
	qp      *qpEnd
	service *service
}

// destQP is the QPN of the IB QP the Send went to, 0 when none (iWARP).
func (info *SendInfo) destQP() uint32 {
	if info.qp == nil {
		return 0
	}
	return info.qp.qpn
}

// sendDecoder decodes complete Send payloads into layers appended to rec.
// The reassemblers (RCSends, IWARP) hand their complete Sends to one; the
// Dissector's is its rpcSends (tests give them their own).
type sendDecoder interface {
	decodeSend(rec *Record, payload []byte, info SendInfo)
}

// rpcSends decodes the Sends of one Dissector as RPC-over-RDMA. The
// decoded messages are pooled per frame (the Record and its layers are
// reused by the next frame) and the outstanding calls kept to name the
// replies.
type rpcSends struct {
	maxSegments int // Options.MaxChunkSegments
	calls       callTable
	chunks      *chunkTable
	frame       int
	msgs        []*rpcrdma.Message
	used        int
}

// newRPCSends makes the decoder, bounded by opts (zero fields: defaults).
func newRPCSends(opts Options) *rpcSends {
	opts = opts.withDefaults()
	chunks := newChunkTable(opts)
	st := &rpcSends{maxSegments: opts.MaxChunkSegments, calls: callTable{max: opts.MaxCalls, chunks: chunks}, chunks: chunks, frame: -1}
	chunks.call = st.chunkCall
	return st
}

// message returns a pooled Message for rec's frame.
func (st *rpcSends) message(rec *Record) *rpcrdma.Message {
	if st.frame != rec.Frame || (st.used > 0 && !holds(rec, st.msgs[st.used-1])) {
		// A new frame (or the Record was reset): the pooled layers are
		// free again.
		st.frame, st.used = rec.Frame, 0
	}
	if st.used == len(st.msgs) {
		st.msgs = append(st.msgs, &rpcrdma.Message{})
	}
	m := st.msgs[st.used]
	st.used++
	m.Header.MaxSegments = st.maxSegments
	return m
}

// decodeSend decodes a complete Send payload as RPC-over-RDMA, appends the
// rpcrdma, rpc and nfs layers to rec and the findings of those layers
// (Frame set; Offset from the start of the frame, or -1 when the Send was
// reassembled). The Dissector must not collect these layers' findings
// again. What only some Sends need (chunks, RDMA_NOMSG and RDMA_ERROR, an
// error) is done by functions of its own: the code every Send runs stays
// short.
func (st *rpcSends) decodeSend(rec *Record, payload []byte, info SendInfo) {
	st.decode(rec, payload, &info)
}

// decode is decodeSend without a copy of the SendInfo.
func (st *rpcSends) decode(rec *Record, payload []byte, info *SendInfo) {
	m := st.message(rec)
	conn := connHash(rec)
	st.calls.conn, st.calls.owner = conn, 0
	if info.service != nil {
		st.calls.owner = info.service.id
	}
	st.calls.frame, st.calls.time = rec.Frame, rec.Time.UnixNano()
	st.calls.answered, st.calls.matched = answeredCall{}, 0
	err := m.Decode(payload, &st.calls)
	h := &m.Header
	chunk := false
	if m.HasRPC {
		if err == nil && m.RPC.MsgType == rpcrdma.MsgCall && h.SegmentCount() > 0 {
			st.advertise(conn, h, info)
		}
	} else if m.HasHeader && h.Known() && (h.Proc == rpcrdma.ProcNoMsg || h.Proc == rpcrdma.ProcError) {
		chunk, err = st.noMsg(conn, m, info, err)
	}
	if st.calls.answered.ok {
		st.settle(rec, conn, m, info)
	}
	base := -1
	if info.FirstFrame == info.LastFrame {
		base = frameOffset(rec.Data, payload)
	}
	st.add(rec, m, base, chunk, err)
}

// advertise remembers the chunks of the call just decoded (m.Header h)
// with the call. A call sent again keeps its chunks when it advertises the
// same.
func (st *rpcSends) advertise(conn uint64, h *rpcrdma.Header, info *SendInfo) {
	call := st.calls.call(h.XID)
	if call != nil && call.info.chunk != 0 {
		if st.chunks.same(call.info.chunk, conn, h) {
			return
		}
		st.chunks.forget(call.info.chunk, conn, h.XID)
	}
	head := st.chunks.advertise(conn, info.path, info.setup, info.destQP(), h.XID, h, false)
	if call != nil {
		call.info.chunk = head
	}
}

// noMsg handles what an RDMA_NOMSG or RDMA_ERROR Send (known version, no
// RPC message in the Send) needs beyond decoding: a reply decoded from its
// reply chunk, the call it answers, a call in a chunk advertised. It
// returns whether the RPC message came from a chunk, and the decode error.
func (st *rpcSends) noMsg(conn uint64, m *rpcrdma.Message, info *SendInfo, err error) (chunk bool, _ error) {
	h := &m.Header
	if err == nil && h.Proc == rpcrdma.ProcNoMsg && h.HasReply {
		// The reply went by RDMA Write into the reply chunk (RFC 8166
		// §3.5.3): decoded from what the Writes put there.
		if head := st.calls.chunkOf(h.XID); head != 0 {
			if body, ok := st.chunks.reply(head, conn, h); ok {
				err = m.DecodeChunk(body, &st.calls)
				chunk = m.HasRPC
			}
		}
	}
	if !m.HasRPC {
		// RDMA_NOMSG without an RPC message in the Send: the responder's
		// reply went by RDMA Write into the reply chunk (RFC 8166 §3.5.3,
		// §4.2.4), or the requester's call is in a position-zero Read
		// chunk; RDMA_ERROR answers a call. Either way the transport
		// header's xid is the RPC's: an outstanding call with this xid on
		// the connection is answered (a requester does not send a new call
		// with the xid of one it is still waiting for), and no longer kept
		// for naming a reply.
		h.Answers = st.calls.answeredBy(h.XID)
		if h.Answers.Frame == 0 && h.Proc == rpcrdma.ProcNoMsg && len(h.Reads) > 0 && h.Reads[0].Position == 0 {
			// A requester's call in a position-zero Read chunk: decoded
			// once the responder has read it (chunkCall); its chunks await
			// the reply.
			st.chunks.advertise(conn, info.path, info.setup, info.destQP(), h.XID, h, true)
		}
	}
	return chunk, err
}

// settle checks the chunks of the call the message m answered against
// it, and a reply Send's length when the call offered no reply chunk.
func (st *rpcSends) settle(rec *Record, conn uint64, m *rpcrdma.Message, info *SendInfo) {
	a := st.calls.answered
	if (a.chunk == 0 || !st.chunks.settle(rec, a.chunk, conn, a.xid, m)) && m.Header.Proc == rpcrdma.ProcMsg {
		st.checkInline(rec, a.xid, info)
	}
}

// add appends m's layers and findings to rec: the header at frame offset
// base (-1: not in the frame), the RPC message after it unless it came in
// a chunk.
func (st *rpcSends) add(rec *Record, m *rpcrdma.Message, base int, chunk bool, err error) {
	if m.HasHeader {
		rec.Add(&m.Header, base)
	}
	at := base
	if chunk {
		// Offsets in the reassembled message are not the frame's.
		at = -1
	}
	if m.HasRPC {
		rec.Add(&m.RPC, offsetAt(at, m.RPCOffset))
	}
	if m.HasNFS {
		rec.Add(&m.NFS, offsetAt(at, m.NFSOffset()))
	}
	if err != nil || m.HasFindings() {
		st.addFindings(rec, m, at, err)
	}
}

// offsetAt is the frame offset rel octets after base (-1: none).
func offsetAt(base, rel int) int {
	if base < 0 {
		return -1
	}
	return base + rel
}

// addFindings appends the findings of m's layers and of the decode error
// err, for the message at frame offset base (-1: not in the frame).
func (st *rpcSends) addFindings(rec *Record, m *rpcrdma.Message, base int, err error) {
	first := len(rec.Findings)
	rec.Findings = m.AppendFindings(rec.Findings)
	if err != nil {
		if e, ok := err.(*rpcrdma.DecodeError); ok {
			rec.Findings = append(rec.Findings, e.Finding())
		} else {
			rec.Findings = append(rec.Findings, finding.Finding{Code: CodeMalformed, Severity: finding.SeverityError,
				Message: err.Error(), Layer: "rpcrdma", Offset: -1})
		}
	}
	rec.placeFindings(first, base)
	rec.keepCaptured(first)
}

// chunkCall decodes a call that came in a position-zero read chunk (an
// RDMA_NOMSG call, RFC 8166 §3.5.3), in the frame of the Read Response
// that completed it: its RPC and NFS layers, and the call remembered
// with its chunks (chain head) for its reply.
func (st *rpcSends) chunkCall(rec *Record, conn uint64, xid uint32, head int, body []byte) {
	m := st.message(rec)
	_ = m.Header.DecodeFromBytes(nil, rpcrdma.NilDecodeFeedback) // empty, for the xid check
	m.Header.XID = xid
	// Decoded in the frame of a Read Response, not a Send: the
	// connection's calls are not known here.
	st.calls.conn, st.calls.owner, st.calls.matched = conn, 0, 0
	st.calls.frame, st.calls.time = rec.Frame, rec.Time.UnixNano()
	err := m.DecodeChunk(body, &st.calls)
	m.HasHeader = false
	if m.HasRPC && m.RPC.MsgType == rpcrdma.MsgCall {
		st.calls.setChunk(xid, head)
		st.chunks.own(head, conn, xid)
	}
	st.add(rec, m, -1, true, err)
}

// open numbers a connection whose calls are kept apart, until it ends
// (end).
func (st *rpcSends) open() uint32 { return st.calls.ids.take() }

// end forgets the calls of connection id (0: none), which ended, with
// their chunks and the RDMA Reads pending for them; id may be given to
// another connection now.
func (st *rpcSends) end(id uint32) {
	if id != 0 {
		st.calls.end(id)
		st.calls.ids.give(id)
		st.chunks.sweep()
	}
}

// checkInline raises CodeReplyChunkMissing (CodeReplyOverDefault when
// the threshold is only the default) for a reply Send (to call
// xid, which offered no reply chunk) longer than the requester's inline
// threshold.
func (st *rpcSends) checkInline(rec *Record, xid uint32, info *SendInfo) {
	limit := info.inline
	if limit == 0 {
		limit = defaultInline
	}
	if info.Length > limit {
		replyChunkMissing(rec, xid, info, limit)
	}
}

// replyChunkMissing is checkInline's finding, for a reply longer than
// limit (out of line: rare, and long).
//
//go:noinline
func replyChunkMissing(rec *Record, xid uint32, info *SendInfo, limit int) {
	const msg = "reply Send of %d octets to call xid 0x%08x, which offered no reply chunk: longer than the requester takes inline (%s %d octets); the responder should have answered RDMA_ERROR ERR_CHUNK"
	if info.inline == 0 {
		rec.addFinding(CodeReplyOverDefault, finding.SeverityWarning, sectionInline, "rpcrdma", -1,
			fmt.Sprintf(msg, info.Length, xid, "the connection's setup was not captured; RFC 8166's default inline threshold is", limit))
		return
	}
	rec.addFinding(CodeReplyChunkMissing, finding.SeverityError, sectionInline, "rpcrdma", -1,
		fmt.Sprintf(msg, info.Length, xid, "its Receive size (RFC 8797) is", limit))
}

// defaultInline is RFC 8166's default inline threshold (§3.3.2).
const defaultInline = 1024

// holds reports whether rec still lists m's header (or m decoded nothing
// the record kept).
func holds(rec *Record, m *rpcrdma.Message) bool {
	if !m.HasHeader {
		return true
	}
	for _, l := range rec.Layers {
		if l == field.Layer(&m.Header) {
			return true
		}
	}
	return false
}
