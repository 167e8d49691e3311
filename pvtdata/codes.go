package pvtdata

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Catalog describes the codes declared below, in their order.
var Catalog finding.Catalog

// Finding codes raised by the reading of the RFC 8797 private data of
// connection setup. They are stable: expectation files and users key on them.
var (
	CodeNotFound            = Catalog.Add("pvtdata.not-found", finding.SeverityInfo, "RFC 8797 §5.1", "No RPC-over-RDMA Format Identifier (0xf6ab0e18) in the private data: the peer is taken to use the defaults (1024-octet inline thresholds, no remote invalidation).", "Expected from peers that predate RFC 8797; larger inline thresholds or remote invalidation need the RFC 8797 message from both peers.")
	CodeUnknownVersion      = Catalog.Add("pvtdata.unknown-version", finding.SeverityWarning, "RFC 8797 §5.2", "The Format Identifier is followed by a version other than 1: receivers ignore the message.", "")
	CodeOverrun             = Catalog.Add("pvtdata.overrun", finding.SeverityError, "RFC 8797 §5.2", "The 8-octet message runs past the end of the private data: RFC 8797 receivers ignore it, a Linux receiver reads past the end.", "Fix the sender: the private data must hold the whole 8-octet message.")
	CodeReservedBits        = Catalog.Add("pvtdata.reserved-bits-set", finding.SeverityWarning, "RFC 8797 §4", "Reserved bits of the message are set: senders must send zero (receivers ignore them).", "")
	CodeNotAtOffsetZero     = Catalog.Add("pvtdata.not-at-offset-zero", finding.SeverityWarning, "RFC 8797 §5.2", "The Format Identifier is not at offset 0: RFC 8797 receivers find it, receivers built to the drafts or like Linux do not.", remedyOffsetZero)
	CodeMultiple            = Catalog.Add("pvtdata.multiple-identifiers", finding.SeverityWarning, "RFC 8797 §5.2", "The Format Identifier occurs more than once: receivers that search may pick a different one.", "Send one message, at offset 0.")
	CodeByteSwapped         = Catalog.Add("pvtdata.byte-swapped-identifier", finding.SeverityWarning, "RFC 8797 §4", "A byte-swapped Format Identifier (0x180eabf6): the sender wrote it little-endian.", "Fix the sender to write the message in network byte order.")
	CodeTrailingData        = Catalog.Add("pvtdata.trailing-data", finding.SeverityInfo, "RFC 8797 §6", "Non-zero octets follow the 8-octet version 1 message.", "")
	CodeSizeOutOfRange      = Catalog.Add("pvtdata.size-out-of-range", finding.SeverityError, "RFC 8797 §4.2", "A size to be advertised (given to pvtdata encode, an expectation file or a threshold) that the 8-bit Send Size and Receive Size fields cannot express.", "Use a multiple of 1024 octets from 1024 to 262144.")
	CodeReaderDivergence    = Catalog.Add("pvtdata.reader-divergence", finding.SeverityWarning, "RFC 8797 §5.2", "Receivers that read private data differently (RFC 8797, the drafts, Linux) would act on different values.", "Send one valid message at offset 0 so every receiver reads the same; conns --mode shows how each kind of receiver reads it.")
	CodeIdentifierElsewhere = Catalog.Add("pvtdata.identifier-not-at-start", finding.SeverityWarning, "RFC 8797 §5.2", "The Format Identifier is not at offset 0, where a draft or Linux receiver looks: that receiver acts as if no private data was sent.", remedyOffsetZero)
)

// remedyOffsetZero is the remedy for an identifier a receiver may not
// find.
const remedyOffsetZero = "Put the message at offset 0 of the ULP's private data, where every receiver looks."
