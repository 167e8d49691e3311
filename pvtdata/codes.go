package pvtdata

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Finding codes raised by this package. They are stable: expectation files
// and users key on them. Catalog says what each means.
const (
	CodeNotFound            = "pvtdata.not-found"
	CodeUnknownVersion      = "pvtdata.unknown-version"
	CodeOverrun             = "pvtdata.overrun"
	CodeReservedBits        = "pvtdata.reserved-bits-set"
	CodeNotAtOffsetZero     = "pvtdata.not-at-offset-zero"
	CodeMultiple            = "pvtdata.multiple-identifiers"
	CodeByteSwapped         = "pvtdata.byte-swapped-identifier"
	CodeTrailingData        = "pvtdata.trailing-data"
	CodeSizeOutOfRange      = "pvtdata.size-out-of-range"
	CodeReaderDivergence    = "pvtdata.reader-divergence"
	CodeIdentifierElsewhere = "pvtdata.identifier-not-at-start"
)

// Catalog describes every code this package raises.
var Catalog = finding.Catalog{
	{Code: CodeNotFound, Severity: finding.SeverityInfo, Section: "RFC 8797 §5.1",
		Summary: "No RPC-over-RDMA Format Identifier (0xf6ab0e18) in the private data: the peer is taken to use the defaults (1024-octet inline thresholds, no remote invalidation).",
		Remedy:  "Expected from peers that predate RFC 8797; larger inline thresholds or remote invalidation need the RFC 8797 message from both peers."},
	{Code: CodeUnknownVersion, Severity: finding.SeverityWarning, Section: "RFC 8797 §5.2",
		Summary: "The Format Identifier is followed by a version other than 1: receivers ignore the message."},
	{Code: CodeOverrun, Severity: finding.SeverityError, Section: "RFC 8797 §5.2",
		Summary: "The 8-octet message runs past the end of the private data: RFC 8797 receivers ignore it, a Linux receiver reads past the end.",
		Remedy:  "Fix the sender: the private data must hold the whole 8-octet message."},
	{Code: CodeReservedBits, Severity: finding.SeverityWarning, Section: "RFC 8797 §4",
		Summary: "Reserved bits of the message are set: senders must send zero (receivers ignore them)."},
	{Code: CodeNotAtOffsetZero, Severity: finding.SeverityWarning, Section: "RFC 8797 §5.2",
		Summary: "The Format Identifier is not at offset 0: RFC 8797 receivers find it, receivers built to the drafts or like Linux do not.",
		Remedy:  "Put the message at offset 0 of the ULP's private data, where every receiver looks."},
	{Code: CodeMultiple, Severity: finding.SeverityWarning, Section: "RFC 8797 §5.2",
		Summary: "The Format Identifier occurs more than once: receivers that search may pick a different one.",
		Remedy:  "Send one message, at offset 0."},
	{Code: CodeByteSwapped, Severity: finding.SeverityWarning, Section: "RFC 8797 §4",
		Summary: "A byte-swapped Format Identifier (0x180eabf6): the sender wrote it little-endian.",
		Remedy:  "Fix the sender to write the message in network byte order."},
	{Code: CodeTrailingData, Severity: finding.SeverityInfo, Section: "RFC 8797 §6",
		Summary: "Non-zero octets follow the 8-octet version 1 message."},
	{Code: CodeSizeOutOfRange, Severity: finding.SeverityError, Section: "RFC 8797 §4.2",
		Summary: "A size to be advertised (given to pvtdata encode, an expectation file or a threshold) that the 8-bit Send Size and Receive Size fields cannot express.",
		Remedy:  "Use a multiple of 1024 octets from 1024 to 262144."},
	{Code: CodeReaderDivergence, Severity: finding.SeverityWarning, Section: "RFC 8797 §5.2",
		Summary: "Receivers that read private data differently (RFC 8797, the drafts, Linux) would act on different values.",
		Remedy:  "Send one valid message at offset 0 so every receiver reads the same; conns --mode shows how each kind of receiver reads it."},
	{Code: CodeIdentifierElsewhere, Severity: finding.SeverityWarning, Section: "RFC 8797 §5.2",
		Summary: "The Format Identifier is not at offset 0, where a draft or Linux receiver looks: that receiver acts as if no private data was sent.",
		Remedy:  "Put the message at offset 0 of the ULP's private data, where every receiver looks."},
}
