package pvtdata

import "github.com/cmpd-dissect/cmpd-dissect/field"

// Proto is the "pvtdata" layer: what a ULP put in CM private data (after the
// rdma_cm header on IB/RoCE, after the MPA v2 IRD/ORD words on iWARP), above
// all the RFC 8797 message. The ibcm and mpa layers report it as a subtree
// under their private-data bytes; dissect may also add it as a layer of its
// own (PrivateData implements field.Layer).
var Proto = field.NewProto("pvtdata", "CM Private Data (RFC 8797 and other ULPs)")

// The RFC 8797 reading.
var (
	fLength     = Proto.Uint("pvtdata.length", 16, "ULP private data length").WithUnit("octets")
	fULP        = Proto.String("pvtdata.ulp", "Upper Layer Protocol")
	fULPBasis   = Proto.String("pvtdata.ulp.basis", "Identified by")
	fMode       = Proto.String("pvtdata.mode", "Reading mode").WithRef("RFC 8797 §5.2")
	fFound      = Proto.Bool("pvtdata.found", "Format Identifier found").WithRef("RFC 8797 §5.2")
	fOffset     = Proto.Int("pvtdata.offset", 32, "Format Identifier offset").WithRef("RFC 8797 §5.2")
	fCandidates = Proto.Int("pvtdata.candidates", 32, "Format Identifier occurs at offset").WithRef("RFC 8797 §5.2")
	fValid      = Proto.Bool("pvtdata.valid", "Valid RPC-over-RDMA v1 message").WithRef("RFC 8797 §5.2")
	fOverrun    = Proto.Bool("pvtdata.overrun", "Message overruns the buffer").WithRef("RFC 8797 §5.2")

	fMessage  = Proto.Group("pvtdata.message", "RPC-over-RDMA Version 1 CM Private Data").WithRef("RFC 8797 §4")
	fFormatID = Proto.Hex("pvtdata.format_identifier", 32, "Format Identifier").
			WithRef("RFC 8797 §4").
			WithNames(map[uint64]string{uint64(FormatIdentifier): "RPC-over-RDMA version 1"})
	fVersion  = Proto.Uint("pvtdata.version", 8, "Version").WithRef("RFC 8797 §4")
	fReserved = Proto.Hex("pvtdata.reserved", 7, "Reserved").WithRef("RFC 8797 §4")
	fR        = Proto.Bool("pvtdata.remote_invalidation", "R (remote invalidation supported)").WithRef("RFC 8797 §4.1")
	fSendEnc  = Proto.Uint("pvtdata.send_size.encoded", 8, "Send Size (encoded)").WithRef("RFC 8797 §4.2")
	fSend     = Proto.Uint("pvtdata.send_size", 32, "Send Size").WithUnit("octets").WithRef("RFC 8797 §4.2")
	fRecvEnc  = Proto.Uint("pvtdata.receive_size.encoded", 8, "Receive Size (encoded)").WithRef("RFC 8797 §4.2")
	fRecv     = Proto.Uint("pvtdata.receive_size", 32, "Receive Size").WithUnit("octets").WithRef("RFC 8797 §4.2")

	fEffective = Proto.Group("pvtdata.effective", "Effective (what a receiver in this mode acts on)").WithRef("RFC 8797 §5.1")
	fEffSend   = Proto.Uint("pvtdata.effective.send_size", 32, "Effective Send Size").WithUnit("octets")
	fEffRecv   = Proto.Uint("pvtdata.effective.receive_size", 32, "Effective Receive Size").WithUnit("octets")
	fEffR      = Proto.Bool("pvtdata.effective.remote_invalidation", "Effective remote invalidation")

	fDivergence = Proto.Bool("pvtdata.reader_divergence", "rfc8797, draft and linux readers disagree").WithRef("RFC 8797 §5.2")
)

// VisitFields reports the reading in wire order: the mode and what it found,
// then the message (a subtree, when an identifier was found), then what a
// receiver acts on.
func (r *Reading) VisitFields(v field.Visitor) {
	v.String(fMode, r.Mode.String())
	v.Bool(fFound, r.Found)
	v.Int(fOffset, int64(r.Offset))
	for _, c := range r.Candidates() {
		v.Int(fCandidates, int64(c))
	}
	v.Bool(fValid, r.Valid)
	if r.Found {
		m := r.Message
		have := r.Len - r.Offset // octets of the message inside the buffer
		v.Begin(fMessage)
		v.Uint(fFormatID, uint64(m.Identifier))
		if have > 4 {
			v.Uint(fVersion, uint64(m.Version))
		}
		if have > 5 {
			v.Uint(fReserved, uint64(m.Reserved()))
			v.Bool(fR, m.RemoteInvalidation())
		}
		if have > 6 {
			v.Uint(fSendEnc, uint64(m.SendSize))
			v.Uint(fSend, uint64(m.SendBytes()))
		}
		if have > 7 {
			v.Uint(fRecvEnc, uint64(m.RecvSize))
			v.Uint(fRecv, uint64(m.ReceiveBytes()))
		}
		v.End()
		if r.Overrun {
			v.Bool(fOverrun, true)
		}
	}
	e := r.Effective()
	v.Begin(fEffective)
	v.Uint(fEffSend, uint64(e.SendSize))
	v.Uint(fEffRecv, uint64(e.ReceiveSize))
	v.Bool(fEffR, e.RemoteInvalidation)
	v.End()
}
