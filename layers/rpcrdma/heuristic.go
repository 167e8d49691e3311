package rpcrdma

import (
	"encoding/binary"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// MaxPlausibleCredits bounds the credit value Plausible accepts. Linux's
// client asks for at most RPCRDMA_MAX_SLOT_TABLE (65536) and its server
// grants fewer; a larger value is not a credit count an implementation
// writes.
const MaxPlausibleCredits = 65536

// Plausible reports whether payload, a complete Send whose connection's
// service is not known (its CM or MPA setup was not captured), passes a
// strict test for an RPC-over-RDMA message: version 1 or 2, plausible
// credits, a procedure of that version, chunk lists that parse, and a
// header that ends exactly where the RPC message starts (an RPC call or
// reply with the header's xid, RFC 8166 §4.2.1) or, for the procedures
// that carry none, at the end of the Send. It is the counterpart of
// Wireshark's packet_is_rpcordma, stricter on what follows the header.
// h is scratch: its fields are those of payload's header afterwards.
func (h *Header) Plausible(payload []byte) bool {
	if len(payload) < 16 {
		return false
	}
	if err := h.DecodeFromBytes(payload, NilDecodeFeedback); err != nil || !h.Known() {
		return false
	}
	if h.Credits > MaxPlausibleCredits {
		return false
	}
	for i := 0; i < h.notes.n; i++ {
		if h.notes.buf[i].sev == finding.SeverityError {
			return false // an unknown procedure or error code
		}
	}
	rpcFollows := func() bool {
		b := h.Payload
		return len(b) >= 8 && binary.BigEndian.Uint32(b) == h.XID && binary.BigEndian.Uint32(b[4:]) <= MsgReply
	}
	switch h.Proc {
	case ProcMsg:
		return rpcFollows()
	case ProcMsgP:
		return h.Version == 1 && rpcFollows()
	case ProcOptional:
		return len(h.Payload) == 0 || rpcFollows()
	case ProcDone:
		return h.Version == 1 && len(h.Payload) == 0
	default: // RDMA_NOMSG, RDMA_ERROR
		return len(h.Payload) == 0
	}
}
