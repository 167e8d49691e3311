package conn

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Finding codes raised by this package. They are stable: expectation files
// and users key on them. Catalog says what each means.
const (
	CodeSendExceedsInline              = "conn.send-exceeds-inline"
	CodeSendInvNotNegotiated           = "conn.send-inv-not-negotiated"
	CodeSendInvFromRequester           = "conn.send-inv-from-requester"
	CodeInvalidatedSTagNotOffered      = "conn.invalidated-stag-not-offered"
	CodeServerSendExceedsClientReceive = "conn.server-send-exceeds-client-receive"
	CodeAdvertisedValuesChanged        = "conn.advertised-values-changed"
	CodeREPWithoutREQ                  = "conn.rep-without-req"
	CodeRTUWithoutREP                  = "conn.rtu-without-rep"
	CodeDREQUnknown                    = "conn.dreq-unknown-connection"
	CodeUnknownConnection              = "conn.unknown-connection"
	CodeRejected                       = "conn.rejected"
	CodeTimedOut                       = "conn.timed-out"
	CodeTableFull                      = "conn.table-full"
	CodeFindingsSuppressed             = "conn.findings-suppressed"
	CodeCreditsExceeded                = "conn.credits-exceeded"
)

// startCaptureEarlier is the remedy for a connection whose start the
// capture missed.
const startCaptureEarlier = "Start the capture before the connections are set up (or ignore it for connections older than the capture)."

// Catalog describes every code this package raises.
var Catalog = finding.Catalog{
	{Code: CodeSendExceedsInline, Severity: finding.SeverityError, Section: "RFC 8797 §4.2, RFC 8166 §3.3.2",
		Summary: "An RPC-over-RDMA Send larger than the receiver's negotiated inline threshold: the receiver's Receive buffer cannot hold it.",
		Remedy:  "The sender must move larger messages to chunks; conns shows the thresholds each side advertised and the result."},
	{Code: CodeSendInvNotNegotiated, Severity: finding.SeverityError, Section: "RFC 8797 §4.1",
		Summary: "A Send with Invalidate although remote invalidation was not negotiated by both peers (a warning when the receiver said it can take it).",
		Remedy:  "The sender must use Send with Invalidate only when both peers set R."},
	{Code: CodeSendInvFromRequester, Severity: finding.SeverityWarning, Section: "RFC 8797 §3.2",
		Summary: "The client (requester) sent Send with Invalidate; RFC 8797 provides remote invalidation for the responder's replies only."},
	{Code: CodeInvalidatedSTagNotOffered, Severity: finding.SeverityError, Section: "RFC 8797 §3.2",
		Summary: "The server's reply invalidates an STag the client did not offer in that call's chunks."},
	{Code: CodeServerSendExceedsClientReceive, Severity: finding.SeverityWarning, Section: "RFC 8797 §4.2",
		Summary: "The server advertises a Send Size above the client's Receive Size; the Linux server ignores the client's sizes and may send what the client cannot receive."},
	{Code: CodeAdvertisedValuesChanged, Severity: finding.SeverityInfo, Section: "RFC 8797 §4",
		Summary: "A reconnection between the same peers advertised different values than the previous connection."},
	{Code: CodeREPWithoutREQ, Severity: finding.SeverityWarning, Section: "IBTA vol 1 §12.6.8",
		Summary: "A REP for a connection whose REQ was not seen.",
		Remedy:  startCaptureEarlier},
	{Code: CodeRTUWithoutREP, Severity: finding.SeverityWarning, Section: "IBTA vol 1 §12.6.9",
		Summary: "An RTU for a connection whose REP was not seen.",
		Remedy:  startCaptureEarlier},
	{Code: CodeDREQUnknown, Severity: finding.SeverityWarning, Section: "IBTA vol 1 §12.6.10",
		Summary: "A DREQ for a connection whose setup was not seen.",
		Remedy:  startCaptureEarlier},
	{Code: CodeUnknownConnection, Severity: finding.SeverityInfo,
		Summary: "Another CM message (MRA, REJ, DREP, SIDR_REP, MPA Reply) that matches no connection.",
		Remedy:  startCaptureEarlier},
	{Code: CodeRejected, Severity: finding.SeverityInfo, Section: "IBTA vol 1 §12.6.7; RFC 5044 §7.1.1",
		Summary: "The server rejected the connection (CM REJ, MPA Reject); the reason is in the message."},
	{Code: CodeTimedOut, Severity: finding.SeverityWarning, Section: "IBTA vol 1 §12.9",
		Summary: "Connection setup or teardown did not finish within --conn-timeout of capture time.",
		Remedy:  "Raise --conn-timeout for slow peers; otherwise the peer did not answer, or the capture missed the answer."},
	{Code: CodeTableFull, Severity: finding.SeverityWarning,
		Summary: "The connection table was full (--max-connections): the oldest connection is no longer followed.",
		Remedy:  "Raise --max-connections."},
	{Code: CodeFindingsSuppressed, Severity: finding.SeverityInfo,
		Summary: "More frame findings were raised than are kept; the rest are counted, not listed."},
	{Code: CodeCreditsExceeded, Severity: finding.SeverityError, Section: "RFC 8166 §3.3.1",
		Summary: "The client had more RPC calls outstanding than the credits the server granted in its last reply.",
		Remedy:  "The client must wait for replies before sending more calls than granted; a reply missing from the capture also counts as outstanding, so check the capture for loss first."},
}
