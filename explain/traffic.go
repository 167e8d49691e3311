package explain

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// trafficRemedies say what to do about a check of the traffic; by
// direction where it matters (the key's suffix " to server" / " to client").
var trafficRemedies = map[string]string{
	conn.CodeSendExceedsInline + " to server": "The client must keep its Sends within the server's Receive Size: on a Linux client lower sunrpc.rdma_max_inline_write (sysctl), or raise the server's /proc/sys/sunrpc/svc_rdma/max_req_size (RFC 8797 §4.2, RFC 8166 §3.3.2).",
	conn.CodeSendExceedsInline + " to client": "The server must keep its replies within the client's Receive Size: raise the client's sunrpc.rdma_max_inline_read (sysctl), or lower the server's /proc/sys/sunrpc/svc_rdma/max_req_size — the Linux server ignores the client's sizes (RFC 8797 §4.2).",
	conn.CodeSendInvNotNegotiated:             remedyInvNotNegotiated,
	conn.CodeSendInvTolerated:                 remedyInvNotNegotiated,
	conn.CodeServerSendExceedsClientReceive:   "Raise the client's sunrpc.rdma_max_inline_read to the server's Send Size, or lower the server's max_req_size: svcrdma does not take the client's Receive Size into account (RFC 8797 §4.2).",
	conn.CodeSendInvFromRequester:             "Only the responder (server) may use Send with Invalidate (RFC 8797 §3.2).",
	conn.CodeInvalidatedSTagNotOffered:        "The server invalidated a handle the client did not offer for that call: look for a server bug in its handle bookkeeping (RFC 8797 §4.1).",
}

// remedyInvNotNegotiated is what to do about a Send with Invalidate that
// both peers did not negotiate, whether the receiver copes or not.
const remedyInvNotNegotiated = "With a Linux client that set R nothing breaks (it copes); a client that did not set R must not receive Send with Invalidate (RFC 8797 §4.1)."

// trafficCodes are the per-Send checks, explained as what the traffic broke.
var trafficCodes = map[string]bool{
	conn.CodeSendExceedsInline: true, conn.CodeSendInvNotNegotiated: true, conn.CodeSendInvTolerated: true, conn.CodeSendInvFromRequester: true,
	conn.CodeInvalidatedSTagNotOffered: true, conn.CodeServerSendExceedsClientReceive: true,
}

// traffic explains the checks of the Sends after the handshake: how many,
// where, the first in full (with its Linux context), what to do.
func (e *explainer) traffic() {
	c := e.c
	listed := c.Findings()
	for _, n := range c.FindingCounts {
		if !trafficCodes[n.Code] {
			continue
		}
		// Per direction, for the checks whose remedy depends on it.
		for _, dir := range []string{"client → server", "server → client", ""} {
			var first *finding.Finding
			var fs []int
			for i := range listed {
				f := &listed[i]
				if f.Code != n.Code || f.Severity != n.Severity || !strings.HasPrefix(f.Message, dir) {
					continue
				}
				if dir == "" && (strings.HasPrefix(f.Message, "client → server") || strings.HasPrefix(f.Message, "server → client")) {
					continue
				}
				if first == nil {
					first = f
				}
				fs = append(fs, f.Frame)
			}
			if first == nil {
				continue
			}
			count := len(fs)
			if dir == "" || n.Listed == len(fs) {
				// All of this code are in this direction: the count holds
				// every one, listed or not.
				count = n.Count
			}
			var b strings.Builder
			what := plural(count, "Send", "Sends")
			if dir != "" {
				what = fmt.Sprintf("%d %s %s", count, dir, what[len(fmt.Sprint(count))+1:])
			}
			switch n.Code {
			case conn.CodeSendExceedsInline:
				fmt.Fprintf(&b, "%s larger than the agreed inline threshold", what)
			case conn.CodeSendInvNotNegotiated, conn.CodeSendInvTolerated:
				fmt.Fprintf(&b, "%s with Invalidate although remote invalidation was not negotiated", what)
			case conn.CodeSendInvFromRequester:
				fmt.Fprintf(&b, "%s with Invalidate from the client", what)
			case conn.CodeInvalidatedSTagNotOffered:
				fmt.Fprintf(&b, "%s with Invalidate of a handle the call did not offer", what)
			}
			if n.Code == conn.CodeServerSendExceedsClientReceive {
				fmt.Fprintf(&b, "%s (frame %d).", capitalize(strings.TrimSuffix(first.Message, ".")), first.Frame)
			} else {
				fmt.Fprintf(&b, " (%s). The first: frame %d, %s.", frameList(fs, n), first.Frame, strings.TrimSuffix(first.Message, "."))
			}
			key := n.Code
			switch {
			case n.Code == conn.CodeSendExceedsInline && dir == "client → server":
				key += " to server"
			case n.Code == conn.CodeSendExceedsInline:
				key += " to client"
			}
			code := CodeTraffic
			if n.Code == conn.CodeServerSendExceedsClientReceive {
				code = CodeInlineThreshold
			}
			head := strings.SplitN(b.String(), " (", 2)[0]
			if n.Code == conn.CodeServerSendExceedsClientReceive {
				head = "the server's Send Size is above the client's Receive Size and Linux servers ignore it"
			}
			e.add(Item{Code: code, Severity: n.Severity, Section: first.Section, Frames: fs, Text: b.String(),
				Remedy: trafficRemedies[key], Finding: n.Code, head: head})
			if dir == "" {
				break
			}
		}
	}
}

// frameList renders the frames of a check: "frame 405", "frames 405, 410"
// and how far the unlisted ones go.
func frameList(fs []int, n conn.FindingCount) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprint(f))
	}
	s := "frame " + strings.Join(parts, ", ")
	if len(fs) > 1 {
		s = "frames " + strings.Join(parts, ", ")
	}
	if n.Unlisted() > 0 {
		s += fmt.Sprintf(", and %d more up to frame %d", n.Unlisted(), n.LastFrame)
	}
	return s
}

// rest lists the connection's findings no statement explained, so that
// nothing the tracker found is left out.
func (e *explainer) rest() {
	c := e.c
	listed := c.Findings()
	sort.SliceStable(listed, func(i, j int) bool { return listed[i].Frame < listed[j].Frame })
	for _, n := range c.FindingCounts {
		if e.covered[n.Code] || trafficCodes[n.Code] {
			continue
		}
		var first *finding.Finding
		var fs []int
		for i := range listed {
			if listed[i].Code == n.Code && listed[i].Severity == n.Severity {
				if first == nil {
					first = &listed[i]
				}
				fs = append(fs, listed[i].Frame)
			}
		}
		if first == nil {
			continue
		}
		text := fmt.Sprintf("%s at frame %d: %s", n.Code, first.Frame, strings.TrimSuffix(first.Message, "."))
		if n.Count > 1 {
			text += fmt.Sprintf(" (%d times, frames %d–%d)", n.Count, n.FirstFrame, n.LastFrame)
		}
		e.add(Item{Code: n.Code, Severity: n.Severity, Section: first.Section, Frames: fs, Text: text + ".", Finding: n.Code})
	}
}
