package mpa

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Finding codes raised by this package. They are stable: expectation files
// and users key on them. Catalog says what each means.
const (
	CodePDLengthOver512    = "mpa.pd-length-over-512"
	CodePDLengthOverrun    = "mpa.pd-length-overrun"
	CodeReservedFlags      = "mpa.reserved-flags"
	CodeGSOFlag            = "mpa.siw-gso-flag"
	CodeRevision           = "mpa.unknown-revision"
	CodeEnhancedShort      = "mpa.irdord-missing"
	CodeIRDORDLittleEndian = "mpa.irdord-little-endian"
	CodeRejected           = "mpa.rejected"
	CodeCRCBad             = "mpa.crc-bad"
	CodePadNonZero         = "mpa.pad-non-zero"
	CodeMarkerBad          = "mpa.marker-bad"
	CodeDDPVersion         = "ddp.version"
	CodeDDPReserved        = "ddp.reserved-bits"
	CodeRDMAPVersion       = "rdmap.version"
	CodeRDMAPReserved      = "rdmap.reserved-bits"
	CodeRDMAPOpcode        = "rdmap.bad-opcode"
	CodeTerminate          = "rdmap.terminate"
)

// Catalog describes every code this package raises.
var Catalog = finding.Catalog{
	{Code: CodePDLengthOver512, Severity: finding.SeverityError, Section: refMPA,
		Summary: "An MPA Request, Reply or Reject whose PD_Length is above the 512 octets RFC 5044 allows (or above --max-private-data).",
		Remedy:  "Senders must keep the private data within 512 octets; --max-private-data sets the limit checked."},
	{Code: CodePDLengthOverrun, Severity: finding.SeverityError, Section: refMPA,
		Summary: "PD_Length runs past the octets of the MPA frame.",
		Remedy:  "When dissect.truncated or iwarp.stream-gap is raised too, the capture lost the octets; otherwise the sender wrote a wrong length."},
	{Code: CodeReservedFlags, Severity: finding.SeverityWarning, Section: refMPA,
		Summary: "Reserved bits of the MPA flags octet are set.",
		Remedy:  "Senders must send zero: report it to the sender's implementers."},
	{Code: CodeGSOFlag, Severity: finding.SeverityInfo, Section: "Linux drivers/infiniband/sw/siw/iwarp.h",
		Summary: "The MPA flag 0x08 is siw's non-standard GSO_EXP flag, a bit RFC 5044 reserves."},
	{Code: CodeRevision, Severity: finding.SeverityWarning, Section: refMPAv2,
		Summary: "An MPA revision other than 1 (RFC 5044) or 2 (RFC 6581)."},
	{Code: CodeEnhancedShort, Severity: finding.SeverityError, Section: refMPAv2,
		Summary: "The Enhanced flag is set but fewer than 4 octets of private data carry IRD/ORD."},
	{Code: CodeIRDORDLittleEndian, Severity: finding.SeverityWarning, Section: refMPAv2,
		Summary: "IRD/ORD written in little-endian byte order.",
		Remedy:  "Fix the sender to write IRD/ORD in network byte order."},
	{Code: CodeRejected, Severity: finding.SeverityInfo, Section: refMPA,
		Summary: "The responder rejected the connection (R flag of the MPA Reply)."},
	{Code: CodeCRCBad, Severity: finding.SeverityError, Section: "RFC 5044 §4.4",
		Summary: "The FPDU CRC32c (CRC negotiated) does not match: a receiver drops the stream."},
	{Code: CodePadNonZero, Severity: finding.SeverityWarning, Section: "RFC 5044 §4.1",
		Summary: "FPDU pad octets are not zero."},
	{Code: CodeMarkerBad, Severity: finding.SeverityError, Section: "RFC 5044 §4.3",
		Summary: "A marker's reserved half is not zero, or its FPDU pointer does not point at the FPDU it sits in."},
	{Code: CodeDDPVersion, Severity: finding.SeverityError, Section: refDDP,
		Summary: "The DDP version is not 1."},
	{Code: CodeDDPReserved, Severity: finding.SeverityWarning, Section: refDDP,
		Summary: "Reserved DDP control bits are set."},
	{Code: CodeRDMAPVersion, Severity: finding.SeverityError, Section: refRDMAP,
		Summary: "The RDMAP version is not 1."},
	{Code: CodeRDMAPReserved, Severity: finding.SeverityWarning, Section: refRDMAP,
		Summary: "Reserved RDMAP control bits are set."},
	{Code: CodeRDMAPOpcode, Severity: finding.SeverityError, Section: refRDMAP,
		Summary: "An RDMAP opcode RFC 5040 does not define, or one used with the wrong buffer model or queue."},
	{Code: CodeTerminate, Severity: finding.SeverityError, Section: refRDMAP,
		Summary: "A Terminate message: the peer tore the stream down.",
		Remedy:  "The message names the layer and the error that made the peer terminate."},
}
