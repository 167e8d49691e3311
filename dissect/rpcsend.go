package dissect

import (
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

	// The connection, for picking the ULP decoder (ulpSends): an IB QP
	// (qp, hasQP), or what an iWARP stream's MPA request said (service,
	// serviceKnown).
	qp           QPKey
	hasQP        bool
	service      service
	serviceKnown bool
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
	chunks      *replyChunks
	frame       int
	msgs        []*rpcrdma.Message
	used        int
}

// newRPCSends makes the decoder, bounded by opts (zero fields: defaults).
func newRPCSends(opts Options) *rpcSends {
	opts = opts.withDefaults()
	chunks := newReplyChunks(opts)
	return &rpcSends{maxSegments: opts.MaxChunkSegments, calls: callTable{max: opts.MaxCalls, chunks: chunks}, chunks: chunks, frame: -1}
}

// decodeSend decodes a complete Send payload as RPC-over-RDMA, appends the
// rpcrdma, rpc and nfs layers to rec and the findings of those layers
// (Frame set; Offset from the start of the frame, or -1 when the Send was
// reassembled). The Dissector must not collect these layers' findings
// again.
func (st *rpcSends) decodeSend(rec *Record, payload []byte, info SendInfo) {
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
	st.calls.conn = connHash(rec)
	st.calls.frame, st.calls.time = rec.Frame, rec.Time.UnixNano()
	err := m.Decode(payload, &st.calls)
	chunk := false
	if err == nil && m.HasRPC && m.RPC.MsgType == rpcrdma.MsgCall && m.Header.HasReply {
		st.calls.setChunk(m.Header.XID, st.chunks.advertise(st.calls.conn, m.Header.XID, &m.Header))
	}
	if err == nil && m.HasHeader && m.Header.Known() && m.Header.Proc == rpcrdma.ProcNoMsg && m.Header.HasReply {
		// The reply went by RDMA Write into the reply chunk (RFC 8166
		// §3.5.3): decoded from what the Writes put there.
		if body, ok := st.chunks.reply(st.calls.conn, &m.Header); ok {
			err = m.DecodeChunk(body, &st.calls)
			chunk = m.HasRPC
		}
	}
	if m.HasHeader && !m.HasRPC && m.Header.Known() && (m.Header.Proc == rpcrdma.ProcNoMsg || m.Header.Proc == rpcrdma.ProcError) {
		// RDMA_NOMSG without an RPC message in the Send: the responder's
		// reply went by RDMA Write into the reply chunk (RFC 8166 §3.5.3,
		// §4.2.4), or the requester's call is in a position-zero Read chunk;
		// RDMA_ERROR answers a call. Either way the transport header's xid
		// is the RPC's: an outstanding call with this xid on the connection
		// is answered (a requester does not send a new call with the xid of
		// one it is still waiting for), and no longer kept for naming a
		// reply.
		m.Header.Answers = st.calls.answered(m.Header.XID)
		if m.Header.Answers.Frame == 0 && m.Header.Proc == rpcrdma.ProcNoMsg && m.Header.HasReply &&
			len(m.Header.Reads) > 0 && m.Header.Reads[0].Position == 0 {
			// A requester's call in a position-zero Read chunk: its reply
			// chunk awaits the reply.
			st.chunks.advertise(st.calls.conn, m.Header.XID, &m.Header)
		}
	}

	base := -1
	if info.FirstFrame == info.LastFrame {
		base = frameOffset(rec.Data, payload)
	}
	at := func(rel int) int {
		if base < 0 || chunk {
			return -1
		}
		return base + rel
	}
	if m.HasHeader {
		rec.Add(&m.Header, base)
	}
	if m.HasRPC {
		rec.Add(&m.RPC, at(m.RPCOffset))
	}
	if m.HasNFS {
		rec.Add(&m.NFS, at(m.NFSOffset()))
	}
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
	if chunk {
		// Offsets in the reassembled reply are not the frame's.
		base = -1
	}
	rec.placeFindings(first, base)
}

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
