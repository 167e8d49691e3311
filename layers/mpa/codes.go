package mpa

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Catalog describes the codes declared below, in their order.
var Catalog finding.Catalog

// Finding codes raised by the iWARP decoders: MPA, FPDU, DDP and RDMAP. They
// are stable: expectation files and users key on them.
var (
	CodePDLengthOver512    = Catalog.Add("mpa.pd-length-over-512", finding.SeverityError, refMPA, "An MPA Request, Reply or Reject whose PD_Length is above the 512 octets RFC 5044 allows (or above --max-private-data).", "Senders must keep the private data within 512 octets; --max-private-data sets the limit checked.")
	CodePDLengthOverrun    = Catalog.Add("mpa.pd-length-overrun", finding.SeverityError, refMPA, "PD_Length runs past the octets of the MPA frame.", "When dissect.truncated or iwarp.stream-gap is raised too, the capture lost the octets; otherwise the sender wrote a wrong length.")
	CodeReservedFlags      = Catalog.Add("mpa.reserved-flags", finding.SeverityWarning, refMPA, "Reserved bits of the MPA flags octet are set.", finding.RemedyReservedZero)
	CodeGSOFlag            = Catalog.Add("mpa.siw-gso-flag", finding.SeverityInfo, "Linux drivers/infiniband/sw/siw/iwarp.h", "The MPA flag 0x08 is siw's non-standard GSO_EXP flag, a bit RFC 5044 reserves.", "")
	CodeRevision           = Catalog.Add("mpa.unknown-revision", finding.SeverityWarning, refMPAv2, "An MPA revision other than 1 (RFC 5044) or 2 (RFC 6581).", "")
	CodeEnhancedShort      = Catalog.Add("mpa.irdord-missing", finding.SeverityError, refMPAv2, "The Enhanced flag is set but fewer than 4 octets of private data carry IRD/ORD.", "")
	CodeIRDORDLittleEndian = Catalog.Add("mpa.irdord-little-endian", finding.SeverityWarning, refMPAv2, "IRD/ORD written in little-endian byte order.", "Fix the sender to write IRD/ORD in network byte order.")
	CodeRejected           = Catalog.Add("mpa.rejected", finding.SeverityInfo, refMPA, "The responder rejected the connection (R flag of the MPA Reply).", "")
	CodeCRCBad             = Catalog.Add("mpa.crc-bad", finding.SeverityError, "RFC 5044 §4.4", "The FPDU CRC32c (CRC negotiated) does not match: a receiver drops the stream.", "")
	CodePadNonZero         = Catalog.Add("mpa.pad-non-zero", finding.SeverityWarning, "RFC 5044 §4.1", "FPDU pad octets are not zero.", "")
	CodeMarkerBad          = Catalog.Add("mpa.marker-bad", finding.SeverityError, "RFC 5044 §4.3", "A marker's reserved half is not zero, or its FPDU pointer does not point at the FPDU it sits in.", "")
	CodeDDPVersion         = Catalog.Add("ddp.version", finding.SeverityError, refDDP, "The DDP version is not 1.", "")
	CodeDDPReserved        = Catalog.Add("ddp.reserved-bits", finding.SeverityWarning, refDDP, "Reserved DDP control bits are set.", "")
	CodeRDMAPVersion       = Catalog.Add("rdmap.version", finding.SeverityError, refRDMAP, "The RDMAP version is not 1.", "")
	CodeRDMAPReserved      = Catalog.Add("rdmap.reserved-bits", finding.SeverityWarning, refRDMAP, "Reserved RDMAP control bits are set.", "")
	CodeRDMAPOpcode        = Catalog.Add("rdmap.bad-opcode", finding.SeverityError, refRDMAP, "An RDMAP opcode RFC 5040 does not define, or one used with the wrong buffer model or queue.", "")
	CodeTerminate          = Catalog.Add("rdmap.terminate", finding.SeverityError, refRDMAP, "A Terminate message: the peer tore the stream down.", "The message names the layer and the error that made the peer terminate.")
)
