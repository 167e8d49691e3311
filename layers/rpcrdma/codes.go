package rpcrdma

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Catalog describes every code this package raises. Its sections are the
// ones the findings carry (sectionFor).
var Catalog finding.Catalog

// Finding codes raised by the RPC-over-RDMA, ONC RPC and NFS decoders. They
// are stable: expectation files and users key on them.
var (
	CodeTruncated             = Catalog.Add("rpcrdma.truncated", finding.SeverityError, "RFC 8166 §4.2", "The RPC-over-RDMA transport header ends inside a fixed field.", finding.RemedyTruncated)
	CodeChunkListUnterminated = Catalog.Add("rpcrdma.chunk-list-unterminated", finding.SeverityError, "RFC 8166 §4.3", "A read or write list runs to the end of the header without its terminating zero discriminator.", "")
	CodeSegmentCountOverrun   = Catalog.Add("rpcrdma.segment-count-overrun", finding.SeverityError, "RFC 8166 §4.3", "A write or reply chunk claims more segments than the remaining octets can hold.", "")
	CodeSegmentCap            = Catalog.Add("rpcrdma.segment-cap", finding.SeverityWarning, "", "A header holds more chunk segments than this program decodes (--max-chunk-segments); decoding stops there.", "Raise --max-chunk-segments.")
	CodeBadDiscriminator      = Catalog.Add("rpcrdma.bad-discriminator", finding.SeverityError, "RFC 8166 §4.3", "An XDR optional-data discriminator in the chunk lists is neither 0 nor 1.", "")
	CodeUnknownVersion        = Catalog.Add("rpcrdma.unknown-version", finding.SeverityWarning, "RFC 8166 §4.2", "rdma_vers is neither 1 nor 2; the body is shown as octets.", "")
	CodeUnknownProc           = Catalog.Add("rpcrdma.unknown-proc", finding.SeverityError, "RFC 8166 §4.2", "rdma_proc is not defined for the header's version.", "")
	CodeUnknownError          = Catalog.Add("rpcrdma.unknown-errcode", finding.SeverityError, "RFC 8166 §5", "An RDMA_ERROR carries an error code not defined for the header's version.", "")
	CodeDeprecatedProc        = Catalog.Add("rpcrdma.deprecated-proc", finding.SeverityWarning, "RFC 8166 §4.2", "RDMA_MSGP or RDMA_DONE, which RFC 8166 §4.5 says are not to be used (reserved in version 2).", "")
	CodeUnexpectedPayload     = Catalog.Add("rpcrdma.unexpected-payload", finding.SeverityWarning, "RFC 8166 §4.2", "Octets follow a header whose procedure carries no RPC message (RDMA_NOMSG, RDMA_DONE, RDMA_ERROR).", "")
	CodeMissingRPC            = Catalog.Add("rpcrdma.msg-without-rpc", finding.SeverityWarning, "RFC 8166 §4.2", "An RDMA_MSG whose Send ends with the transport header: the RPC message that must follow is missing.", "")
	CodeNonZeroPadding        = Catalog.Add("rpcrdma.nonzero-padding", finding.SeverityWarning, "", "XDR padding octets in the transport header are not zero (XDR, RFC 4506, requires zero).", "")
	CodeXIDMismatch           = Catalog.Add("rpcrdma.xid-mismatch", finding.SeverityError, "RFC 8166 §4.2.1", "The RPC message's xid differs from the transport header's rdma_xid; they must be equal.", "")
	CodeRPCTruncated          = Catalog.Add("rpc.truncated", finding.SeverityError, "RFC 5531 §9", "The RPC message ends inside its header.", finding.RemedyTruncated)
	CodeRPCBadVersion         = Catalog.Add("rpc.bad-rpcvers", finding.SeverityError, "RFC 5531 §9", "An RPC call whose rpcvers is not 2.", "")
	CodeRPCBadMsgType         = Catalog.Add("rpc.bad-msg-type", finding.SeverityError, "RFC 5531 §9", "msg_type is neither CALL nor REPLY, or a reply's reply_stat or reject_stat is not defined.", "")
	CodeNFSTruncated          = Catalog.Add("nfs.truncated", finding.SeverityError, "RFC 8881 §16.2", "An NFS body ends inside what is being read.", finding.RemedyTruncated)
	CodeNFSOpsUndecoded       = Catalog.Add("nfs.ops-undecoded", finding.SeverityInfo, "RFC 8881 §16.2", "COMPOUND operations after one whose arguments or results this decoder cannot skip are counted but not named.", "")
	CodeNFSTooManyOps         = Catalog.Add("nfs.too-many-ops", finding.SeverityError, "RFC 8881 §16.2", "A COMPOUND claims more operations than its octets could hold.", "")
	CodeNFSOpsCap             = Catalog.Add("nfs.ops-cap", finding.SeverityWarning, "", "A COMPOUND holds more operations than this program lists; the rest are counted, not named.", "")
)

// sectionFor is the specification section findings of code carry.
func sectionFor(code string) string { return Catalog.Section(code) }
