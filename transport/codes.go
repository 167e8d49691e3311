package transport

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Catalog describes the codes declared below, in their order.
var Catalog finding.Catalog

// Finding codes raised by the per-queue-pair analysis. They are stable:
// expectation files and users key on them.
var (
	CodePSNGap            = Catalog.Add("transport.psn-gap", finding.SeverityWarning, "IBTA Vol 1 §9.7.1", "Request PSNs on an RC queue pair were skipped: the packets were lost on the network or by the capture.", "A later transport.capture-loss on the ACK covering them means the capture dropped them (capture with a larger buffer, -B/snaplen); a NAK PSN Sequence Error or retransmission means the network did.")
	CodeCaptureLoss       = Catalog.Add("transport.capture-loss", finding.SeverityInfo, "IBTA Vol 1 §9.7.5.1", "An ACK acknowledges request PSNs that the capture did not show: the responder received them, the capture missed them.", "Not a network problem; capture with a larger buffer or on a less loaded host.")
	CodeRetransmission    = Catalog.Add("transport.retransmission", finding.SeverityWarning, "IBTA Vol 1 §9.7.5.1", "A request packet of an RC queue pair was sent again (after a NAK or a transport timeout).", "Look for the NAK or the loss before it; repeated retransmissions point at packet loss (check PFC/ECN configuration, link errors) or a too-short local ACK timeout.")
	CodeNAK               = Catalog.Add("transport.nak", finding.SeverityError, "IBTA Vol 1 §9.7.5.2", "The responder returned a NAK that sends the queue pair to the error state: Invalid Request, Remote Access Error, Remote Operational Error or Invalid RD Request.", "Remote Access Error: the rkey, address or length of the RDMA operation does not match a registered region with the right rights.")
	CodeSequenceNAK       = Catalog.Add("transport.nak-sequence", finding.SeverityWarning, "IBTA Vol 1 §9.7.5.2", "The responder returned a NAK PSN Sequence Error: a request arrived after a PSN it did not receive; the requester must resend from that PSN.", "Packets were lost on the network: see the gap before it (PFC/ECN configuration, link errors).")
	CodeRNRNAK            = Catalog.Add("transport.rnr-nak", finding.SeverityWarning, "IBTA Vol 1 §9.7.5.2.8", "The responder had no receive buffer posted for a Send (Receiver Not Ready); the requester waits the RNR timer and retries.", "Post receive buffers earlier or more of them (ULP credits, SRQ size); a small RNR timer with many retries hides the stall.")
	CodeMSNRegress        = Catalog.Add("transport.msn-regress", finding.SeverityWarning, "IBTA Vol 1 §9.7.5.1.2", "An ACK acknowledging a later PSN carries a smaller Message Sequence Number than an earlier ACK.", "A responder bug or ACKs of two queue pairs mixed up; compare with the responder's counters.")
	CodeECNCE             = Catalog.Add("transport.ecn-ce", finding.SeverityInfo, "RFC 3168 §5; IBTA Vol 1 Annex A17.9", "A RoCEv2 packet arrived marked ECN Congestion Experienced: a switch queue was filling.", "Expected under DCQCN; many marks mean sustained congestion on the path (see the CNPs that answer them).")
	CodeCNP               = Catalog.Add("transport.cnp", finding.SeverityInfo, "IBTA Vol 1 Annex A17.9.2", "A RoCEv2 Congestion Notification Packet: the receiver asks the sender of a CE-marked flow to slow down.", "Expected under DCQCN; many CNPs mean the sender's rate is being cut, look for the congested link.")
	CodeFECN              = Catalog.Add("transport.fecn", finding.SeverityInfo, "IBTA Vol 1 §9.2.1, Annex A10", "The BTH Forward Explicit Congestion Notification bit is set: a switch saw congestion on the way to this receiver.", "Congestion control is active on the fabric; many marks mean a congested link.")
	CodeBECN              = Catalog.Add("transport.becn", finding.SeverityInfo, "IBTA Vol 1 §9.2.1, Annex A10", "The BTH Backward Explicit Congestion Notification bit is set: the receiver tells the sender its packets met congestion.", "The sender should be reducing its rate; many marks mean a congested link.")
	CodeTCPRetransmission = Catalog.Add("transport.tcp-retransmission", finding.SeverityWarning, "RFC 9293 §3.10.7.4", "A TCP segment of an iWARP stream repeats octets already sent: TCP retransmitted after a loss or a timeout.", "Look for loss on the path (interface drops, a lossy link); many retransmissions slow the RDMA traffic on that stream.")
	CodeTableFull         = Catalog.Add("transport.table-full", finding.SeverityInfo, "", "More queue pairs were active than the analysis follows at once; the least recently used one was forgotten.", "Its later packets start a new sequence; raise the queue-pair limit for captures with this many queue pairs.")
)
