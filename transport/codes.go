package transport

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Finding codes raised by the per-queue-pair analysis.
const (
	// CodePSNGap: request PSNs were skipped on an RC queue pair.
	CodePSNGap = "transport.psn-gap"
	// CodeCaptureLoss: an ACK acknowledges PSNs the capture did not show.
	CodeCaptureLoss = "transport.capture-loss"
	// CodeRetransmission: a request packet was sent again.
	CodeRetransmission = "transport.retransmission"
	// CodeNAK: a NAK came back (AETH syndrome 011).
	CodeNAK = "transport.nak"
	// CodeRNRNAK: a Receiver Not Ready NAK came back (AETH syndrome 001).
	CodeRNRNAK = "transport.rnr-nak"
	// CodeMSNRegress: an ACK acknowledging more PSNs carries a smaller MSN.
	CodeMSNRegress = "transport.msn-regress"
	// CodeECNCE: the IP header of a RoCEv2 packet is marked Congestion
	// Experienced.
	CodeECNCE = "transport.ecn-ce"
	// CodeCNP: a RoCEv2 Congestion Notification Packet (BTH opcode 0x81).
	CodeCNP = "transport.cnp"
	// CodeFECN and CodeBECN: the BTH's congestion notification bits.
	CodeFECN = "transport.fecn"
	CodeBECN = "transport.becn"
	// CodeTCPRetransmission: an iWARP TCP segment repeats octets already
	// seen on its stream.
	CodeTCPRetransmission = "transport.tcp-retransmission"
	// CodeTableFull: the queue-pair table was full; the least recently
	// used queue pair was forgotten.
	CodeTableFull = "transport.table-full"
)

// Catalog lists the codes of this package.
var Catalog = finding.Catalog{
	{Code: CodePSNGap, Severity: finding.SeverityWarning, Section: "IBTA Vol 1 §9.7.1",
		Summary: "Request PSNs on an RC queue pair were skipped: the packets were lost on the network or by the capture.",
		Remedy:  "A later transport.capture-loss on the ACK covering them means the capture dropped them (capture with a larger buffer, -B/snaplen); a NAK PSN Sequence Error or retransmission means the network did."},
	{Code: CodeCaptureLoss, Severity: finding.SeverityInfo, Section: "IBTA Vol 1 §9.7.5.1",
		Summary: "An ACK acknowledges request PSNs that the capture did not show: the responder received them, the capture missed them.",
		Remedy:  "Not a network problem; capture with a larger buffer or on a less loaded host."},
	{Code: CodeRetransmission, Severity: finding.SeverityWarning, Section: "IBTA Vol 1 §9.7.5.1",
		Summary: "A request packet of an RC queue pair was sent again (after a NAK or a transport timeout).",
		Remedy:  "Look for the NAK or the loss before it; repeated retransmissions point at packet loss (check PFC/ECN configuration, link errors) or a too-short local ACK timeout."},
	{Code: CodeNAK, Severity: finding.SeverityError, Section: "IBTA Vol 1 §9.7.5.2",
		Summary: "The responder returned a NAK: PSN Sequence Error (warning: it asks for a retransmission), or Invalid Request, Remote Access Error, Remote Operational Error, Invalid RD Request (errors: the queue pair goes to the error state).",
		Remedy:  "PSN Sequence Error: packets were lost, see the gap before it. Remote Access Error: the rkey, address or length of the RDMA operation does not match a registered region with the right rights."},
	{Code: CodeRNRNAK, Severity: finding.SeverityWarning, Section: "IBTA Vol 1 §9.7.5.2.8",
		Summary: "The responder had no receive buffer posted for a Send (Receiver Not Ready); the requester waits the RNR timer and retries.",
		Remedy:  "Post receive buffers earlier or more of them (ULP credits, SRQ size); a small RNR timer with many retries hides the stall."},
	{Code: CodeMSNRegress, Severity: finding.SeverityWarning, Section: "IBTA Vol 1 §9.7.5.1.2",
		Summary: "An ACK acknowledging a later PSN carries a smaller Message Sequence Number than an earlier ACK.",
		Remedy:  "A responder bug or ACKs of two queue pairs mixed up; compare with the responder's counters."},
	{Code: CodeECNCE, Severity: finding.SeverityInfo, Section: "RFC 3168 §5; IBTA Vol 1 Annex A17.9",
		Summary: "A RoCEv2 packet arrived marked ECN Congestion Experienced: a switch queue was filling.",
		Remedy:  "Expected under DCQCN; many marks mean sustained congestion on the path (see the CNPs that answer them)."},
	{Code: CodeCNP, Severity: finding.SeverityInfo, Section: "IBTA Vol 1 Annex A17.9.2",
		Summary: "A RoCEv2 Congestion Notification Packet: the receiver asks the sender of a CE-marked flow to slow down.",
		Remedy:  "Expected under DCQCN; many CNPs mean the sender's rate is being cut, look for the congested link."},
	{Code: CodeFECN, Severity: finding.SeverityInfo, Section: "IBTA Vol 1 §9.2.1, Annex A10",
		Summary: "The BTH Forward Explicit Congestion Notification bit is set: a switch saw congestion on the way to this receiver.",
		Remedy:  "Congestion control is active on the fabric; many marks mean a congested link."},
	{Code: CodeBECN, Severity: finding.SeverityInfo, Section: "IBTA Vol 1 §9.2.1, Annex A10",
		Summary: "The BTH Backward Explicit Congestion Notification bit is set: the receiver tells the sender its packets met congestion.",
		Remedy:  "The sender should be reducing its rate; many marks mean a congested link."},
	{Code: CodeTCPRetransmission, Severity: finding.SeverityWarning, Section: "RFC 9293 §3.10.7.4",
		Summary: "A TCP segment of an iWARP stream repeats octets already sent: TCP retransmitted after a loss or a timeout.",
		Remedy:  "Look for loss on the path (interface drops, a lossy link); many retransmissions slow the RDMA traffic on that stream."},
	{Code: CodeTableFull, Severity: finding.SeverityInfo, Section: "",
		Summary: "More queue pairs were active than the analysis follows at once; the least recently used one was forgotten.",
		Remedy:  "Its later packets start a new sequence; raise the queue-pair limit for captures with this many queue pairs."},
}
