package conn

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Catalog describes the codes declared below, in their order.
var Catalog finding.Catalog

// Finding codes raised by the connection tracker: setup, negotiation and the
// Sends that follow. They are stable: expectation files and users key on
// them.
var (
	CodeSendExceedsInline              = Catalog.Add("conn.send-exceeds-inline", finding.SeverityError, "RFC 8797 §4.2, RFC 8166 §3.3.2", "An RPC-over-RDMA Send larger than the receiver's negotiated inline threshold: the receiver's Receive buffer cannot hold it.", "The sender must move larger messages to chunks; conns shows the thresholds each side advertised and the result.")
	CodeSendInvNotNegotiated           = Catalog.Add("conn.send-inv-not-negotiated", finding.SeverityError, "RFC 8797 §4.1", "A Send with Invalidate to a receiver that did not set R: remote invalidation was not negotiated, and the receiver did not say it can take it.", "The sender must use Send with Invalidate only when both peers set R.")
	CodeSendInvTolerated               = Catalog.Add("conn.send-inv-tolerated", finding.SeverityWarning, "RFC 8797 §4.1", "A Send with Invalidate to a receiver that set R although the sender did not: remote invalidation was not negotiated by both peers, but the receiver said it can take it (what the Linux server does).", "The sender should use Send with Invalidate only when both peers set R.")
	CodeSendInvFromRequester           = Catalog.Add("conn.send-inv-from-requester", finding.SeverityWarning, "RFC 8797 §3.2", "The client (requester) sent Send with Invalidate; RFC 8797 provides remote invalidation for the responder's replies only.", "")
	CodeInvalidatedSTagNotOffered      = Catalog.Add("conn.invalidated-stag-not-offered", finding.SeverityError, "RFC 8797 §3.2", "The server's reply invalidates an STag the client did not offer in that call's chunks.", "")
	CodeServerSendExceedsClientReceive = Catalog.Add("conn.server-send-exceeds-client-receive", finding.SeverityWarning, "RFC 8797 §4.2", "The server advertises a Send Size above the client's Receive Size; the Linux server ignores the client's sizes and may send what the client cannot receive.", "")
	CodeAdvertisedValuesChanged        = Catalog.Add("conn.advertised-values-changed", finding.SeverityInfo, "RFC 8797 §4", "A reconnection between the same peers advertised different values than the previous connection.", "")
	CodeREPWithoutREQ                  = Catalog.Add("conn.rep-without-req", finding.SeverityWarning, "IBTA vol 1 §12.6.8", "A REP for a connection whose REQ was not seen.", startCaptureEarlier)
	CodeRTUWithoutREP                  = Catalog.Add("conn.rtu-without-rep", finding.SeverityWarning, "IBTA vol 1 §12.6.9", "An RTU for a connection whose REP was not seen.", startCaptureEarlier)
	CodeDREQUnknown                    = Catalog.Add("conn.dreq-unknown-connection", finding.SeverityWarning, "IBTA vol 1 §12.6.10", "A DREQ for a connection whose setup was not seen.", startCaptureEarlier)
	CodeUnknownConnection              = Catalog.Add("conn.unknown-connection", finding.SeverityInfo, "", "Another CM message (MRA, REJ, DREP, SIDR_REP, MPA Reply) that matches no connection.", startCaptureEarlier)
	CodeRejected                       = Catalog.Add("conn.rejected", finding.SeverityInfo, "IBTA vol 1 §12.6.7; RFC 5044 §7.1.1", "The server rejected the connection (CM REJ, MPA Reject); the reason is in the message.", "")
	CodeTimedOut                       = Catalog.Add("conn.timed-out", finding.SeverityWarning, "IBTA vol 1 §12.9", "Connection setup or teardown did not finish within --conn-timeout of capture time.", "Raise --conn-timeout for slow peers; otherwise the peer did not answer, or the capture missed the answer.")
	CodeTableFull                      = Catalog.Add("conn.table-full", finding.SeverityWarning, "", "The connection table was full (--max-connections): the oldest connection is no longer followed.", "Raise --max-connections.")
	CodeFindingsSuppressed             = Catalog.Add("conn.findings-suppressed", finding.SeverityInfo, "", "More frame findings were raised than are kept; the rest are counted, not listed.", "")
	CodeCreditsExceeded                = Catalog.Add("conn.credits-exceeded", finding.SeverityError, "RFC 8166 §3.3.1", "The client had more RPC calls outstanding than the credits the server granted in its last reply.", "The client must wait for replies before sending more calls than granted; a reply missing from the capture also counts as outstanding, so check the capture for loss first.")
)

// startCaptureEarlier is the remedy for a connection whose start the
// capture missed.
const startCaptureEarlier = "Start the capture before the connections are set up (or ignore it for connections older than the capture)."
