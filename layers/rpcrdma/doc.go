// Package rpcrdma decodes what an RDMA Send carries for NFS over RDMA: the
// RPC-over-RDMA transport header, version 1 (RFC 8166) and the version 2
// draft (draft-cel-nfsv4-rpcrdma-version-two-00), the ONC RPC message that
// follows it (RFC 5531), and the names of the NFS, MOUNT, NLM and NFS_ACL
// procedures and NFSv4 COMPOUND operations inside.
//
// Three gopacket layers, one per protocol name: Header ("rpcrdma"),
// RPC ("rpc") and NFS ("nfs"). Message decodes a whole Send payload into
// the three without allocating. The layers keep no state across packets:
// matching a reply to its call (to know that a reply body is an NFSv4
// COMPOUND result) is the caller's job, through a CallMatcher that calls
// RPC.SetCall (dissect/sends.go keeps that table).
//
// Not decoded: RPC messages moved by RDMA Read or Write (position-zero
// read chunks, reply chunks of RDMA_NOMSG replies), which are not in the
// Send; NFSv2/v3, MOUNT, NLM and NFS_ACL arguments beyond the procedure
// name (and the v2/v3 reply status).
//
// Decoders never panic and never loop on a length or list the packet lies
// about: every list is bounded by the bytes present and by a configurable
// cap on segments. Errors are *Error values carrying a stable finding code,
// the field being read and its byte offset.
package rpcrdma

import (
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// Layer type numbers (the project's range for this package is 1880–1899).
const (
	LayerTypeHeader = gopacket.LayerType(1880)
	LayerTypeRPC    = gopacket.LayerType(1881)
	LayerTypeNFS    = gopacket.LayerType(1882)
)

func init() {
	gopacket.RegisterLayerType(int(LayerTypeHeader), gopacket.LayerTypeMetadata{
		Name: "RPCoRDMA", Decoder: gopacket.DecodeFunc(decodeHeader)})
	gopacket.RegisterLayerType(int(LayerTypeRPC), gopacket.LayerTypeMetadata{
		Name: "ONCRPC", Decoder: gopacket.DecodeFunc(decodeRPC)})
	gopacket.RegisterLayerType(int(LayerTypeNFS), gopacket.LayerTypeMetadata{
		Name: "NFS", Decoder: gopacket.DecodeFunc(decodeNFS)})
}

// Finding codes raised by this package (finding.Finding.Code).
const (
	// CodeTruncated: the buffer ends inside a fixed field.
	CodeTruncated = "rpcrdma.truncated"
	// CodeChunkListUnterminated: a read or write list runs to the end of
	// the buffer without its terminating zero discriminator.
	CodeChunkListUnterminated = "rpcrdma.chunk-list-unterminated"
	// CodeSegmentCountOverrun: a write or reply chunk claims more segments
	// than the remaining bytes can hold.
	CodeSegmentCountOverrun = "rpcrdma.segment-count-overrun"
	// CodeSegmentCap: a header holds more segments than the configured
	// cap (Header.MaxSegments); decoding stops there.
	CodeSegmentCap = "rpcrdma.segment-cap"
	// CodeBadDiscriminator: an XDR optional-data discriminator is neither
	// 0 nor 1.
	CodeBadDiscriminator = "rpcrdma.bad-discriminator"
	// CodeUnknownVersion: rdma_vers is neither 1 nor 2; the body is shown
	// as bytes.
	CodeUnknownVersion = "rpcrdma.unknown-version"
	// CodeUnknownProc: rdma_proc is not defined for the header's version.
	CodeUnknownProc = "rpcrdma.unknown-proc"
	// CodeUnknownError: an RDMA_ERROR carries an error code not defined
	// for the header's version.
	CodeUnknownError = "rpcrdma.unknown-errcode"
	// CodeDeprecatedProc: RDMA_MSGP or RDMA_DONE, which RFC 8166 §4.5 says
	// are not to be used (reserved in version 2).
	CodeDeprecatedProc = "rpcrdma.deprecated-proc"
	// CodeUnexpectedPayload: bytes follow a header whose procedure carries
	// no RPC message (RDMA_NOMSG, RDMA_DONE, RDMA_ERROR).
	CodeUnexpectedPayload = "rpcrdma.unexpected-payload"
	// CodeMissingRPC: an RDMA_MSG whose Send ends with the transport
	// header (RFC 8166 §4.2.4: an RPC message follows RDMA_MSG).
	CodeMissingRPC = "rpcrdma.msg-without-rpc"
	// CodeNonZeroPadding: XDR padding octets that are not zero.
	CodeNonZeroPadding = "rpcrdma.nonzero-padding"
	// CodeXIDMismatch: the RPC message's xid differs from rdma_xid
	// (RFC 8166 §4.2.1 requires them equal).
	CodeXIDMismatch = "rpcrdma.xid-mismatch"
	// CodeRPCTruncated: the RPC message ends inside its header.
	CodeRPCTruncated = "rpc.truncated"
	// CodeRPCBadVersion: an RPC call whose rpcvers is not 2.
	CodeRPCBadVersion = "rpc.bad-rpcvers"
	// CodeRPCBadMsgType: msg_type is neither CALL nor REPLY.
	CodeRPCBadMsgType = "rpc.bad-msg-type"
	// CodeNFSTruncated: an NFS body ends inside what is being read.
	CodeNFSTruncated = "nfs.truncated"
	// CodeNFSOpsUndecoded: COMPOUND operations after one whose arguments
	// or results this decoder cannot skip are counted but not named.
	CodeNFSOpsUndecoded = "nfs.ops-undecoded"
	// CodeNFSTooManyOps: a COMPOUND claims more operations than the cap or
	// than its bytes could hold.
	CodeNFSTooManyOps = "nfs.too-many-ops"
)

// Error is a decode error: which field was being read, where, and the
// finding code that describes it.
type Error struct {
	Code   string // finding code, e.g. CodeChunkListUnterminated
	Layer  string // "rpcrdma", "rpc" or "nfs"
	Field  string // what was being read: "read list", "write chunk 2 segment count"
	Offset int    // byte offset from the start of the layer
	Msg    string // what was expected
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s: %s at offset %d", e.Layer, e.Field, e.Msg, e.Offset)
}

// Finding turns the error into the project's finding (severity error,
// Offset relative to the layer's first byte).
func (e *Error) Finding() finding.Finding {
	return finding.Finding{Code: e.Code, Severity: finding.SeverityError, Message: e.Error(),
		Section: sectionFor(e.Code), Layer: e.Layer, Offset: e.Offset}
}

func sectionFor(code string) string {
	switch code {
	case CodeChunkListUnterminated, CodeSegmentCountOverrun, CodeBadDiscriminator:
		return "RFC 8166 §4.3"
	case CodeSegmentCap:
		return "" // this program's limit, not the protocol's
	case CodeUnknownVersion, CodeUnknownProc, CodeDeprecatedProc, CodeUnexpectedPayload, CodeTruncated, CodeMissingRPC:
		return "RFC 8166 §4.2"
	case CodeUnknownError:
		return "RFC 8166 §5"
	case CodeXIDMismatch:
		return "RFC 8166 §4.2.1"
	case CodeRPCTruncated, CodeRPCBadVersion, CodeRPCBadMsgType:
		return "RFC 5531 §9"
	case CodeNFSTruncated, CodeNFSOpsUndecoded, CodeNFSTooManyOps:
		return "RFC 8881 §16.2"
	}
	return ""
}

// note is a non-fatal condition recorded during decoding without
// allocating; AppendFindings turns notes into findings.
type note struct {
	code   string
	sev    finding.Severity
	offset int
	a, b   uint32
}

// maxNotes bounds the non-fatal conditions one layer records.
const maxNotes = 4

type notes struct {
	n   int
	buf [maxNotes]note
}

func (ns *notes) add(code string, sev finding.Severity, off int, a, b uint32) {
	if ns.n < maxNotes {
		ns.buf[ns.n] = note{code: code, sev: sev, offset: off, a: a, b: b}
		ns.n++
	}
}

func (ns *notes) reset() { ns.n = 0 }

// be32 reads a big-endian uint32 at off; callers check bounds first.
func be32(b []byte, off int) uint32 {
	_ = b[off+3]
	return uint32(b[off])<<24 | uint32(b[off+1])<<16 | uint32(b[off+2])<<8 | uint32(b[off+3])
}

func be64(b []byte, off int) uint64 {
	return uint64(be32(b, off))<<32 | uint64(be32(b, off+4))
}

func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

func put64(b []byte, v uint64) {
	put32(b, uint32(v>>32))
	put32(b[4:], uint32(v))
}

// pad4 rounds n up to a multiple of 4 (XDR padding).
func pad4(n int) int { return (n + 3) &^ 3 }
