package rpcrdma

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// CallMatcher pairs RPC replies with their calls. Message.Decode calls
// MatchCall for every RPC it decodes: a matcher remembers calls (by xid)
// and, for a reply, calls r.SetCall with what the call asked for so the
// reply's results can be named. Matching needs memory across packets, so
// it lives with the caller (dissect), not in this package.
type CallMatcher interface {
	MatchCall(r *RPC)
}

// Message decodes one complete Send payload into its layers: the
// transport Header, the RPC message when one follows, and the NFS-family
// body when the RPC program is NFS, MOUNT, NLM or NFS_ACL. A Message is
// reusable; decoding allocates nothing once its slices have grown.
type Message struct {
	Header Header
	RPC    RPC
	NFS    NFS

	// HasHeader, HasRPC and HasNFS say which layers hold decoded values
	// (a layer whose decode failed part-way is present when it decoded at
	// least its first fixed fields).
	HasHeader, HasRPC, HasNFS bool

	// RPCOffset is the offset of the RPC message in the payload (the
	// header's length).
	RPCOffset int

	xidMismatch bool
	nfsOffset   int
}

// DecodeFeedback that ignores truncation (the error says it).
type nilFeedback struct{}

func (nilFeedback) SetTruncated() {}

// NilDecodeFeedback ignores SetTruncated; the decode errors carry the
// same information.
var NilDecodeFeedback gopacket.DecodeFeedback = nilFeedback{}

// Decode decodes payload. The returned error is the first decode error
// (a *DecodeError); layers decoded before it stay available. m may be nil.
func (m *Message) Decode(payload []byte, match CallMatcher) error {
	m.HasHeader, m.HasRPC, m.HasNFS, m.xidMismatch, m.RPCOffset, m.nfsOffset = false, false, false, false, 0, 0
	err := m.Header.DecodeFromBytes(payload, NilDecodeFeedback)
	m.HasHeader = len(payload) >= 8
	if err != nil {
		return err
	}
	h := &m.Header
	if !h.CarriesRPC() {
		return nil
	}
	body := h.Payload
	if h.Proc == ProcOptional {
		// An RPC message MAY follow RDMA_OPTIONAL: decode it only when it
		// looks like one of this xid.
		if len(body) < 8 || binary.BigEndian.Uint32(body) != h.XID || binary.BigEndian.Uint32(body[4:]) > MsgReply {
			h.OpaquePayload = true
			return nil
		}
	}
	m.RPCOffset = len(h.Contents)
	return m.decodeRPC(body, match)
}

// DecodeChunk decodes body, an RPC message that came in a chunk rather
// than in the Send (an RDMA_NOMSG's reply chunk, reassembled from the RDMA
// Writes that filled it), after m.Header was decoded from the Send. The
// RPC and NFS layers' offsets are then relative to body.
func (m *Message) DecodeChunk(body []byte, match CallMatcher) error {
	m.HasRPC, m.HasNFS, m.xidMismatch, m.RPCOffset, m.nfsOffset = false, false, false, 0, 0
	return m.decodeRPC(body, match)
}

// decodeRPC decodes the RPC message body (and its NFS layer) of the
// header's xid, at m.RPCOffset.
func (m *Message) decodeRPC(body []byte, match CallMatcher) error {
	h := &m.Header
	err := m.RPC.DecodeFromBytes(body, NilDecodeFeedback)
	m.HasRPC = len(body) >= 8
	if m.HasRPC && m.RPC.XID != h.XID {
		m.xidMismatch = true
	}
	if err != nil {
		return shift(err, m.RPCOffset)
	}
	if match != nil {
		match.MatchCall(&m.RPC)
	}
	if !m.RPC.HasBody() || !hasNFSLayer(m.RPC.Program, m.RPC.ProgVersion) {
		return nil
	}
	nb := m.RPC.Body()
	err = m.NFS.DecodeBody(m.RPC.Program, m.RPC.ProgVersion, m.RPC.Procedure, m.RPC.MsgType == MsgReply, nb, NilDecodeFeedback)
	m.HasNFS = true
	m.nfsOffset = m.RPCOffset + len(m.RPC.Contents)
	if nb != nil {
		m.nfsOffset += cap(m.RPC.Payload) - cap(nb)
	}
	return shift(err, m.nfsOffset)
}

// shift makes a *DecodeError's offset relative to the Send payload.
func shift(err error, by int) error {
	if e, ok := err.(*DecodeError); ok {
		e.Offset += by
	}
	return err
}

// Layers appends the decoded layers, outermost first.
func (m *Message) Layers(dst []field.Layer) []field.Layer {
	if m.HasHeader {
		dst = append(dst, &m.Header)
	}
	if m.HasRPC {
		dst = append(dst, &m.RPC)
	}
	if m.HasNFS {
		dst = append(dst, &m.NFS)
	}
	return dst
}

// HasFindings reports whether AppendFindings appends any.
func (m *Message) HasFindings() bool {
	return m.HasHeader && m.Header.notes.n > 0 || m.xidMismatch || m.HasRPC && m.RPC.notes.n > 0 || m.HasNFS && m.NFS.notes.n > 0
}

// AppendFindings appends the findings of every decoded layer and the
// xid check, Offsets relative to the start of the payload.
func (m *Message) AppendFindings(dst []finding.Finding) []finding.Finding {
	// The layers' notes are checked here: most Sends have none, and the
	// calls cost more than the checks.
	if m.HasHeader && m.Header.notes.n > 0 {
		dst = m.Header.AppendFindings(dst)
	}
	if m.xidMismatch {
		dst = append(dst, finding.Finding{Code: CodeXIDMismatch, Severity: finding.SeverityError,
			Message: fmt.Sprintf("RPC xid 0x%08x differs from rdma_xid 0x%08x", m.RPC.XID, m.Header.XID),
			Section: sectionFor(CodeXIDMismatch), Layer: "rpcrdma", Offset: m.RPCOffset})
	}
	if m.HasRPC && m.RPC.notes.n > 0 {
		n := len(dst)
		dst = m.RPC.AppendFindings(dst)
		for i := n; i < len(dst); i++ {
			dst[i].Offset += m.RPCOffset
		}
	}
	if m.HasNFS && m.NFS.notes.n > 0 {
		n := len(dst)
		dst = m.NFS.AppendFindings(dst)
		base := m.nfsOffset
		for i := n; i < len(dst); i++ {
			dst[i].Offset += base
		}
	}
	return dst
}

// NFSOffset is the offset of the NFS body in the payload.
func (m *Message) NFSOffset() int { return m.nfsOffset }

// XIDMismatch reports whether the RPC xid differs from rdma_xid.
func (m *Message) XIDMismatch() bool { return m.xidMismatch }
