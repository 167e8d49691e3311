package rpcrdma

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Finding codes raised by this package. They are stable: expectation files
// and users key on them. Catalog says what each means.
const (
	CodeTruncated             = "rpcrdma.truncated"
	CodeChunkListUnterminated = "rpcrdma.chunk-list-unterminated"
	CodeSegmentCountOverrun   = "rpcrdma.segment-count-overrun"
	CodeSegmentCap            = "rpcrdma.segment-cap"
	CodeBadDiscriminator      = "rpcrdma.bad-discriminator"
	CodeUnknownVersion        = "rpcrdma.unknown-version"
	CodeUnknownProc           = "rpcrdma.unknown-proc"
	CodeUnknownError          = "rpcrdma.unknown-errcode"
	CodeDeprecatedProc        = "rpcrdma.deprecated-proc"
	CodeUnexpectedPayload     = "rpcrdma.unexpected-payload"
	CodeMissingRPC            = "rpcrdma.msg-without-rpc"
	CodeNonZeroPadding        = "rpcrdma.nonzero-padding"
	CodeXIDMismatch           = "rpcrdma.xid-mismatch"
	CodeRPCTruncated          = "rpc.truncated"
	CodeRPCBadVersion         = "rpc.bad-rpcvers"
	CodeRPCBadMsgType         = "rpc.bad-msg-type"
	CodeNFSTruncated          = "nfs.truncated"
	CodeNFSOpsUndecoded       = "nfs.ops-undecoded"
	CodeNFSTooManyOps         = "nfs.too-many-ops"
)

// Catalog describes every code this package raises. Its sections are the
// ones the findings carry (sectionFor).
var Catalog = finding.Catalog{
	{Code: CodeTruncated, Severity: finding.SeverityError, Section: "RFC 8166 §4.2",
		Summary: "The RPC-over-RDMA transport header ends inside a fixed field.",
		Remedy:  "When dissect.truncated is raised too, capture whole packets."},
	{Code: CodeChunkListUnterminated, Severity: finding.SeverityError, Section: "RFC 8166 §4.3",
		Summary: "A read or write list runs to the end of the header without its terminating zero discriminator."},
	{Code: CodeSegmentCountOverrun, Severity: finding.SeverityError, Section: "RFC 8166 §4.3",
		Summary: "A write or reply chunk claims more segments than the remaining octets can hold."},
	{Code: CodeSegmentCap, Severity: finding.SeverityError,
		Summary: "A header holds more chunk segments than this program decodes (--max-chunk-segments); decoding stops there.",
		Remedy:  "Raise --max-chunk-segments."},
	{Code: CodeBadDiscriminator, Severity: finding.SeverityError, Section: "RFC 8166 §4.3",
		Summary: "An XDR optional-data discriminator in the chunk lists is neither 0 nor 1."},
	{Code: CodeUnknownVersion, Severity: finding.SeverityWarning, Section: "RFC 8166 §4.2",
		Summary: "rdma_vers is neither 1 nor 2; the body is shown as octets."},
	{Code: CodeUnknownProc, Severity: finding.SeverityError, Section: "RFC 8166 §4.2",
		Summary: "rdma_proc is not defined for the header's version."},
	{Code: CodeUnknownError, Severity: finding.SeverityError, Section: "RFC 8166 §5",
		Summary: "An RDMA_ERROR carries an error code not defined for the header's version."},
	{Code: CodeDeprecatedProc, Severity: finding.SeverityWarning, Section: "RFC 8166 §4.2",
		Summary: "RDMA_MSGP or RDMA_DONE, which RFC 8166 §4.5 says are not to be used (reserved in version 2)."},
	{Code: CodeUnexpectedPayload, Severity: finding.SeverityWarning, Section: "RFC 8166 §4.2",
		Summary: "Octets follow a header whose procedure carries no RPC message (RDMA_NOMSG, RDMA_DONE, RDMA_ERROR)."},
	{Code: CodeMissingRPC, Severity: finding.SeverityWarning, Section: "RFC 8166 §4.2",
		Summary: "An RDMA_MSG whose Send ends with the transport header: the RPC message that must follow is missing."},
	{Code: CodeNonZeroPadding, Severity: finding.SeverityWarning,
		Summary: "XDR padding octets in the transport header are not zero (XDR, RFC 4506, requires zero)."},
	{Code: CodeXIDMismatch, Severity: finding.SeverityError, Section: "RFC 8166 §4.2.1",
		Summary: "The RPC message's xid differs from the transport header's rdma_xid; they must be equal."},
	{Code: CodeRPCTruncated, Severity: finding.SeverityError, Section: "RFC 5531 §9",
		Summary: "The RPC message ends inside its header.",
		Remedy:  "When dissect.truncated is raised too, capture whole packets."},
	{Code: CodeRPCBadVersion, Severity: finding.SeverityError, Section: "RFC 5531 §9",
		Summary: "An RPC call whose rpcvers is not 2."},
	{Code: CodeRPCBadMsgType, Severity: finding.SeverityError, Section: "RFC 5531 §9",
		Summary: "msg_type is neither CALL nor REPLY, or a reply's reply_stat or reject_stat is not defined."},
	{Code: CodeNFSTruncated, Severity: finding.SeverityError, Section: "RFC 8881 §16.2",
		Summary: "An NFS body ends inside what is being read.",
		Remedy:  "When dissect.truncated is raised too, capture whole packets."},
	{Code: CodeNFSOpsUndecoded, Severity: finding.SeverityInfo, Section: "RFC 8881 §16.2",
		Summary: "COMPOUND operations after one whose arguments or results this decoder cannot skip are counted but not named."},
	{Code: CodeNFSTooManyOps, Severity: finding.SeverityError, Section: "RFC 8881 §16.2",
		Summary: "A COMPOUND claims more operations than its octets could hold (error) or than this decoder lists (warning)."},
}

// sectionFor is the specification section findings of code carry.
func sectionFor(code string) string { return Catalog.Section(code) }
