package ibcm

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Finding codes raised by this package. They are stable: expectation files
// and users key on them. Catalog says what each means.
const (
	CodeICRCBad             = "ibcm.icrc-bad"
	CodeVCRCBad             = "ibcm.vcrc-bad"
	CodeICRCMissing         = "ibcm.icrc-missing"
	CodeReservedBits        = "ibcm.reserved-bits"
	CodeLengthMismatch      = "ibcm.length-mismatch"
	CodeBadTVer             = "ibcm.bth-tver"
	CodeUnknownOpcode       = "ibcm.unknown-opcode"
	CodeNotDecoded          = "ibcm.transport-not-decoded"
	CodeMADBaseVersion      = "ibcm.mad-base-version"
	CodeMADClassVersion     = "ibcm.mad-class-version"
	CodeMADLength           = "ibcm.mad-length"
	CodeUnknownAttribute    = "ibcm.unknown-attribute"
	CodeUnknownMethod       = "ibcm.unexpected-method"
	CodeTruncated           = "ibcm.truncated"
	CodeIPCMInvalid         = "ibcm.ipcm-invalid"
	CodeUnknownRejectReason = "ibcm.unknown-reject-reason"
)

// Catalog describes every code this package raises. The sections are those
// of the layer that raises the code; a code raised by several layers lists
// theirs.
var Catalog = finding.Catalog{
	{Code: CodeICRCBad, Severity: finding.SeverityError, Section: "IBTA vol. 1 §7.8.1",
		Summary: "The Invariant CRC does not match the packet: a receiver drops it.",
		Remedy:  "When every packet has it, the capture point altered the packets (a mirror port or tool that rewrites headers); otherwise look for damage on the path or a sender computing the ICRC wrongly."},
	{Code: CodeVCRCBad, Severity: finding.SeverityError, Section: "IBTA vol. 1 §7.8.2",
		Summary: "The Variant CRC of a native InfiniBand packet does not match: the packet was damaged on the link, or the capture altered it.",
		Remedy:  "Check the link's error counters (perfquery) and cabling."},
	{Code: CodeICRCMissing, Severity: finding.SeverityError, Section: "IBTA vol. 1 §7.8.1",
		Summary: "The packet ends before its 4-octet ICRC.",
		Remedy:  "Capture whole packets (no snap length); some capture paths strip the ICRC."},
	{Code: CodeReservedBits, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §7.7, §9.2, §12.6, §13.4.2",
		Summary: "A reserved field of the LRH, BTH, MAD or CM message is not zero.",
		Remedy:  "Senders must send zero: report it to the sender's implementers."},
	{Code: CodeLengthMismatch, Severity: finding.SeverityError, Section: "IBTA vol. 1 §7.7.8, §8.3, §9.2.3; ERF types reference",
		Summary: "A length field (LRH PktLen, GRH PayLen, BTH PadCnt, ERF rlen) disagrees with the octets present.",
		Remedy:  "When dissect.truncated is raised too, capture whole packets; otherwise the sender or the capture tool wrote a wrong length."},
	{Code: CodeBadTVer, Severity: finding.SeverityError, Section: "IBTA vol. 1 §9.2.5",
		Summary: "The BTH transport header version is not 0: receivers drop the packet.",
		Remedy:  "If the UDP port carries something other than RoCEv2, do not decode it as RoCEv2 (--roce-port)."},
	{Code: CodeUnknownOpcode, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §9.2.1",
		Summary: "A BTH opcode that IBTA reserves or leaves to vendors.",
		Remedy:  "If the UDP port carries something other than RoCEv2, do not decode it as RoCEv2 (--roce-port)."},
	{Code: CodeNotDecoded, Severity: finding.SeverityInfo, Section: "IBTA vol. 1 §9.2",
		Summary: "An RD or XRC packet: its extension headers (RDETH, XRCETH) are not decoded and stay in the payload."},
	{Code: CodeMADBaseVersion, Severity: finding.SeverityError, Section: "IBTA vol. 1 §13.4.2",
		Summary: "A MAD whose BaseVersion is not 1."},
	{Code: CodeMADClassVersion, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §12.6",
		Summary: "A CM MAD whose ClassVersion is not 2."},
	{Code: CodeMADLength, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §13.4.1",
		Summary: "A MAD that is not 256 octets long.",
		Remedy:  "When dissect.truncated is raised too, capture whole packets."},
	{Code: CodeUnknownAttribute, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §12.6",
		Summary: "A CM attribute ID that IBTA does not define."},
	{Code: CodeUnknownMethod, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §12.6",
		Summary: "A CM MAD with a method CM does not use for its attribute."},
	{Code: CodeTruncated, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §12.6",
		Summary: "A CM message shorter than IBTA's fixed size: its private data is cut short.",
		Remedy:  "When dissect.truncated is raised too, capture whole packets; otherwise the sender sent a short MAD."},
	{Code: CodeIPCMInvalid, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 annex A11",
		Summary: "The service ID is in the rdma_cm IP range but the private data does not start with a valid 36-octet IP CM header.",
		Remedy:  "rdma_cm servers reject such a REQ: check how the client builds its private data."},
	{Code: CodeUnknownRejectReason, Severity: finding.SeverityWarning, Section: "IBTA vol. 1 §12.6.7",
		Summary: "A REJ reason that IBTA does not define."},
}
