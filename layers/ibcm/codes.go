package ibcm

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Catalog describes every code this package raises. The sections are those
// of the layer that raises the code; a code raised by several layers lists
// theirs.
var Catalog finding.Catalog

// Finding codes raised by the decoders of InfiniBand and RoCE headers, MADs
// and CM messages. They are stable: expectation files and users key on them.
var (
	CodeICRCBad             = Catalog.Add("ibcm.icrc-bad", finding.SeverityError, "IBTA vol. 1 §7.8.1", "The Invariant CRC does not match the packet: a receiver drops it.", "When every packet has it, the capture point altered the packets (a mirror port or tool that rewrites headers); otherwise look for damage on the path or a sender computing the ICRC wrongly.")
	CodeVCRCBad             = Catalog.Add("ibcm.vcrc-bad", finding.SeverityError, "IBTA vol. 1 §7.8.2", "The Variant CRC of a native InfiniBand packet does not match: the packet was damaged on the link, or the capture altered it.", "Check the link's error counters (perfquery) and cabling.")
	CodeICRCMissing         = Catalog.Add("ibcm.icrc-missing", finding.SeverityError, "IBTA vol. 1 §7.8.1", "The packet ends before its 4-octet ICRC.", "Capture whole packets (no snap length); some capture paths strip the ICRC.")
	CodeReservedBits        = Catalog.Add("ibcm.reserved-bits", finding.SeverityWarning, "IBTA vol. 1 §7.7, §9.2, §12.6, §13.4.2", "A reserved field of the LRH, BTH, MAD or CM message is not zero.", finding.RemedyReservedZero)
	CodeLengthMismatch      = Catalog.Add("ibcm.length-mismatch", finding.SeverityError, "IBTA vol. 1 §7.7.8, §8.3, §9.2.3", "A length field (LRH PktLen, GRH PayLen, BTH PadCnt) disagrees with the octets of the packet, captured whole: a receiver drops it.", "The sender (or a device that rewrote the packet on the way) wrote a wrong length. Not raised in a packet the capture's snap length cut (dissect.truncated).")
	CodeERFRLen             = Catalog.Add("source.erf-rlen", finding.SeverityWarning, "ERF types reference", "An ERF record's rlen is shorter than the record's own headers: the capture file's record length is wrong, not the packet; the packet is decoded from the octets the record stores.", "Report it to the authors of the tool that wrote the capture.")
	CodeBadTVer             = Catalog.Add("ibcm.bth-tver", finding.SeverityError, "IBTA vol. 1 §9.2.5", "The BTH transport header version is not 0: receivers drop the packet.", remedyNotRoCE)
	CodeUnknownOpcode       = Catalog.Add("ibcm.unknown-opcode", finding.SeverityWarning, "IBTA vol. 1 §9.2.1", "A BTH opcode that IBTA reserves or leaves to vendors.", remedyNotRoCE)
	CodeNotDecoded          = Catalog.Add("ibcm.transport-not-decoded", finding.SeverityInfo, "IBTA vol. 1 §9.2", "An RD or XRC packet: its extension headers (RDETH, XRCETH) are not decoded and stay in the payload.", "")
	CodeMADBaseVersion      = Catalog.Add("ibcm.mad-base-version", finding.SeverityError, "IBTA vol. 1 §13.4.2", "A MAD whose BaseVersion is not 1.", "")
	CodeMADClassVersion     = Catalog.Add("ibcm.mad-class-version", finding.SeverityWarning, "IBTA vol. 1 §12.6", "A CM MAD whose ClassVersion is not 2.", "")
	CodeMADLength           = Catalog.Add("ibcm.mad-length", finding.SeverityWarning, "IBTA vol. 1 §13.4.1", "A MAD that is not 256 octets long.", finding.RemedyTruncated)
	CodeUnknownAttribute    = Catalog.Add("ibcm.unknown-attribute", finding.SeverityWarning, "IBTA vol. 1 §12.6", "A CM attribute ID that IBTA does not define.", "")
	CodeUnknownMethod       = Catalog.Add("ibcm.unexpected-method", finding.SeverityWarning, "IBTA vol. 1 §12.6", "A CM MAD with a method CM does not use for its attribute.", "")
	CodeTruncated           = Catalog.Add("ibcm.truncated", finding.SeverityWarning, "IBTA vol. 1 §12.6", "A CM message shorter than IBTA's fixed size: its private data is cut short.", "When dissect.truncated is raised too, capture whole packets; otherwise the sender sent a short MAD.")
	CodeIPCMInvalid         = Catalog.Add("ibcm.ipcm-invalid", finding.SeverityWarning, "IBTA vol. 1 annex A11", "The service ID is in the rdma_cm IP range but the private data does not start with a valid 36-octet IP CM header.", "rdma_cm servers reject such a REQ: check how the client builds its private data.")
	CodeUnknownRejectReason = Catalog.Add("ibcm.unknown-reject-reason", finding.SeverityWarning, "IBTA vol. 1 §12.6.7", "A REJ reason that IBTA does not define.", "")
)

// remedyNotRoCE is the remedy for a header that says the port does not
// carry RoCEv2.
const remedyNotRoCE = "If the UDP port carries something other than RoCEv2, do not decode it as RoCEv2 (--roce-port)."
