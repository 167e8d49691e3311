package explain

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
)

// rejReason is what a REJ reason means and what usually causes it.
type rejReason struct {
	meaning, cause, remedy string
}

// rejReasons covers the reasons seen in practice (IBTA vol 1 §12.6.7.2);
// others are named by the tracker only.
var rejReasons = map[uint16]rejReason{
	1:  {"no QP was available on the server", "the server ran out of queue pairs", "Free or raise the server's QP resources."},
	2:  {"no EE context was available on the server", "an RD-capable HCA out of EE contexts", ""},
	3:  {"the server had no resources for the connection", "memory or CM resources exhausted on the server", "Look at the server's memory and connection limits."},
	4:  {"the server's CM timed out", "the server took too long to answer (its CM gave up)", ""},
	5:  {"the request is not supported", "the server does not support a field of the REQ (e.g. an RDMA feature or transport)", ""},
	6:  {"the communication ID is invalid", "a stale or mistaken comm ID, often after a peer restarted", ""},
	7:  {"the communication instance is invalid", "a stale connection after a restart", ""},
	8:  {"no listener for that service ID", "nothing on the server listens on this service (for rdma_cm, this TCP port): the server process or module is not running, or the client uses the wrong port", "Start the service on the server, or use its port. For NFS/RDMA on Linux: echo 'rdma 20049' > /proc/fs/nfsd/portlist on the server, and mount with -o rdma,port=20049."},
	9:  {"invalid transport type", "client and server disagree on RC/UC/RD", ""},
	10: {"stale connection", "the server still holds a connection with this QP or comm ID (a peer restarted without closing)", "Wait for the server's time-wait to end, or restart the client's RDMA stack."},
	12: {"the primary path's GID was refused", "a GID (address) the server's port does not have: wrong address or RoCE GID table entry", "Check the addresses and the GID tables (show_gids)."},
	13: {"the primary path's LID was refused", "a LID the server's port does not have (InfiniBand)", ""},
	26: {"the path MTU is not supported", "the path MTU in the REQ is larger than the server supports", "Set the same MTU on both ends."},
	27: {"insufficient responder resources", "the REQ asks for more RDMA Read depth (responder resources) than the server supports", "Lower the initiator depth the client asks for."},
	28: {"the upper layer on the server refused (Consumer Reject)", "the server's application or kernel ULP called rdma_reject(); its reason, if any, is in the REJ private data", "Look at the server's log for why its ULP refused (for NFS: the nfsd / svcrdma messages in the kernel log)."},
	29: {"RNR retry count rejected", "", ""},
	30: {"duplicate local comm ID", "a REQ reused a comm ID the server still tracks (a client restarted)", ""},
	31: {"unsupported CM class version", "", ""},
}

// refused explains a rejection and an unanswered setup, and a storm of
// attempts.
func (e *explainer) refused() {
	c := e.c
	switch {
	case c.State == conn.StateRejected && c.Transport == conn.IWARP:
		e.mpaReject()
	case c.State == conn.StateRejected:
		e.rej()
	case c.State == conn.StateTimedOut || (c.State == conn.StateRequested && c.EstablishedFrame == 0):
		e.noAnswer()
	}
	e.storm()
}

// rej explains an IB CM REJ.
func (e *explainer) rej() {
	c := e.c
	name := c.RejectReasonName
	if name == "" {
		name = fmt.Sprintf("reason %d", c.RejectReason)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The server refused the connection: REJ (frame %d) with reason %d %s", c.RejectFrame, c.RejectReason, name)
	r, known := rejReasons[c.RejectReason]
	if known {
		fmt.Fprintf(&b, ": %s", r.meaning)
		if r.cause != "" {
			fmt.Fprintf(&b, ". Usual cause: %s", r.cause)
		}
	}
	b.WriteString(".")
	if pd := c.ServerData; pd != nil && pd.Frame == c.RejectFrame {
		fmt.Fprintf(&b, " Its private data: %s.", dataText(pd))
	}
	e.add(Item{Code: CodeReject, Severity: finding.SeverityWarning, Section: "IBTA vol 1 §12.6.7", Frames: frames(c.RequestFrame, c.RejectFrame),
		Text: b.String(), Remedy: r.remedy, Finding: conn.CodeRejected,
		head: fmt.Sprintf("the server refused with REJ reason %d %s (frame %d)", c.RejectReason, name, c.RejectFrame)})
}

// dataText shows private data: its length, its non-zero octets, what it
// reads as.
func dataText(pd *conn.PrivateData) string {
	ulp := pd.ULP()
	end := len(ulp)
	for end > 0 && ulp[end-1] == 0 {
		end--
	}
	if end == 0 {
		return fmt.Sprintf("%d octets, all zero", len(pd.Bytes))
	}
	shown := min(end, 24)
	s := fmt.Sprintf("%d octets, % x", len(pd.Bytes), ulp[:shown])
	if end > shown {
		s += " …"
	}
	if pad := len(ulp) - end; pad > 0 {
		s += fmt.Sprintf(" and %d zero octets", pad)
	}
	if pd.Read.Found {
		m := pd.Read.Message
		s += fmt.Sprintf(" — an RFC 8797 message (version %d, R=%d, Send Size %d, Receive Size %d), which carries no reason",
			m.Version, b2i(m.RemoteInvalidation()), m.SendBytes(), m.ReceiveBytes())
	}
	return s
}

// mpaRequest finds the client's MPA Request step: its revision and flags,
// the step's frame.
func (e *explainer) mpaRequest() (rev, flags uint8, frame int, ok bool) {
	c := e.c
	for i := range c.NumSteps() {
		s := c.Step(i)
		if s.Message != "MPA Request" {
			continue
		}
		r, f, isMPA := c.StepMPA(i)
		if isMPA {
			return r, f, s.Frame, true
		}
	}
	return 0, 0, 0, false
}

// irdOrd reads the MPA revision 2 IRD and ORD words at the start of an
// Enhanced MPA frame's private data.
func irdOrd(pd *conn.PrivateData) (ird, ord uint16, ok bool) {
	if pd == nil || pd.ULPOffset < 4 || len(pd.Bytes) < 4 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint16(pd.Bytes[0:2]) & 0x3fff, binary.BigEndian.Uint16(pd.Bytes[2:4]) & 0x3fff, true
}

// mpaReject explains an MPA Reject with the cause the capture supports.
func (e *explainer) mpaReject() {
	c := e.c
	rev, flags, reqFrame, ok := e.mpaRequest()
	var b strings.Builder
	fmt.Fprintf(&b, "The server refused the connection: MPA Reply with the Reject flag (frame %d) to the MPA Request of frame %d", c.RejectFrame, c.RequestFrame)
	sev := finding.SeverityWarning
	section := "RFC 5044 §7.1.1"
	remedy := ""
	nfs := c.RPCRDMA()
	switch {
	case ok && rev == 1:
		fmt.Fprintf(&b, ". The MPA Request is revision 1 (frame %d): revision 1 carries no IRD/ORD — they came with revision 2 and the Enhanced flag (RFC 6581 §5)", reqFrame)
		if nfs {
			b.WriteString(", so the Linux NFS server (svcrdma) sees an initiator depth of 0 and refuses the connection" +
				" (svc_rdma_accept() returns -EINVAL when the initiator depth is 0: trace event svcrdma_initdepth_err)")
		} else {
			b.WriteString(", so a server that needs the initiator's RDMA Read depth sees 0 and may refuse")
		}
		section = "RFC 6581 §5, RFC 5044 §7.1"
		remedy = "Use MPA revision 2 (enhanced connection establishment, RFC 6581) on the client, as current Linux iWARP drivers do by default."
	case ok && flags&0x10 != 0:
		if ird, ord, have := irdOrd(c.ClientData); have {
			fmt.Fprintf(&b, ". The request was revision %d with the Enhanced flag, IRD %d and ORD %d", rev, ird, ord)
		}
		b.WriteString(". The server's upper layer refused it (rdma_reject())")
	default:
		b.WriteString(". The server's upper layer refused it (rdma_reject())")
	}
	b.WriteString(".")
	if pd := c.ServerData; pd != nil && pd.Frame == c.RejectFrame && len(pd.ULP()) > 0 {
		fmt.Fprintf(&b, " The Reject's private data: %s.", dataText(pd))
	}
	head := fmt.Sprintf("the server refused with an MPA Reject (frame %d)", c.RejectFrame)
	if ok && rev == 1 {
		head += fmt.Sprintf(": the MPA Request (frame %d) is revision 1, without IRD/ORD", reqFrame)
	}
	e.add(Item{Code: CodeReject, Severity: sev, Section: section, Frames: frames(reqFrame, c.RejectFrame),
		Text: b.String(), Remedy: remedy, Finding: conn.CodeRejected, head: head})
	e.cover(mpa.CodeRejected)
}

// noAnswer explains a setup that got no answer: the REQ's retries, MRAs.
func (e *explainer) noAnswer() {
	c := e.c
	var retries, mras, lastFrame int
	for i := range c.NumSteps() {
		s := c.Step(i)
		lastFrame = s.Frame
		if s.Retransmission {
			retries++
		}
		if s.Message == "MRA" {
			mras++
		}
	}
	var b strings.Builder
	head := ""
	switch {
	case c.ReplyFrame == 0 && c.Transport == conn.IWARP:
		fmt.Fprintf(&b, "The MPA Request (frame %d) got no MPA Reply", c.RequestFrame)
	case c.ReplyFrame == 0:
		fmt.Fprintf(&b, "The REQ (frame %d) got no REP or REJ", c.RequestFrame)
		head = fmt.Sprintf("the REQ (frame %d) got no answer", c.RequestFrame)
		if retries > 0 {
			head += fmt.Sprintf(", %s", plural(retries, "retry", "retries"))
		}
		if retries > 0 {
			fmt.Fprintf(&b, " although the client sent it %s more (same transaction ID)", plural(retries, "time", "times"))
		}
	case c.EstablishedFrame == 0:
		fmt.Fprintf(&b, "The server replied (frame %d) but the client never sent the RTU", c.ReplyFrame)
	case c.DisconnectRequestFrame != 0:
		fmt.Fprintf(&b, "The DREQ (frame %d) got no DREP", c.DisconnectRequestFrame)
	default:
		fmt.Fprintf(&b, "The connection did not finish its setup")
	}
	if head == "" {
		head = strings.ToLower(b.String()[:1]) + b.String()[1:]
	}
	if mras > 0 {
		fmt.Fprintf(&b, "; the server sent %s (Message Receipt Acknowledgement: it needs more time)", plural(mras, "MRA", "MRAs"))
	}
	if c.State == conn.StateTimedOut {
		b.WriteString(", and the wait passed the tracker's timeout (--conn-timeout)")
	} else {
		b.WriteString(" before the capture ended")
	}
	b.WriteString(". Usual causes: the server is unreachable on this path (address, GID, VLAN, firewall for RoCEv2's UDP 4791), or its CM is overloaded.")
	// A refused or unanswered setup breaks no protocol rule: a warning, as
	// error statements are kept for broken rules (the verdict still puts
	// failures first among warnings).
	sev := finding.SeverityWarning
	if c.State != conn.StateTimedOut {
		// The capture ended first: the answer may have come later.
		sev = finding.SeverityInfo
	}
	e.add(Item{Code: CodeNoAnswer, Severity: sev, Section: "IBTA vol 1 §12.6", Frames: frames(c.RequestFrame, lastFrame),
		Text: b.String(), Finding: conn.CodeTimedOut, head: head})
}

// storm reports a client that keeps trying: three or more failed
// connections of the group (the same peers, the same failure).
func (e *explainer) storm() {
	if len(e.cs) < 3 || !failed(e.c) {
		return
	}
	first, last := e.cs[0], e.cs[len(e.cs)-1]
	span := last.FirstTime.Sub(first.FirstTime)
	text := fmt.Sprintf("Reconnect storm: %d attempts from %s to %s in %s", len(e.cs), hostOf(first.Client), first.Server, roundDuration(span))
	if span > 0 {
		text += fmt.Sprintf(" (one every %s)", roundDuration(span/time.Duration(len(e.cs)-1)))
	}
	text += ", every one failing the same way: the client retries without end (the NFS client's mount keeps reconnecting) until the cause above is fixed."
	e.add(Item{Code: CodeReconnectStorm, Severity: finding.SeverityWarning, Frames: frames(firstFrame(first), firstFrame(last)), Text: text,
		head: fmt.Sprintf("%d attempts in %s", len(e.cs), roundDuration(span))})
}
