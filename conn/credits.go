package conn

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// Credits is the RFC 8166 §3.3 credit accounting of an RPC-over-RDMA
// connection: the credits the server granted in its replies and the calls
// the client had outstanding (sent, reply not yet seen).
type Credits struct {
	// Granted is the last grant, Grants how many replies carried one,
	// MinGranted and MaxGranted their range.
	Granted    uint32 `json:"granted"`
	Grants     int    `json:"grants"`
	MinGranted uint32 `json:"min_granted"`
	MaxGranted uint32 `json:"max_granted"`
	// PeakOutstanding is the most calls outstanding at once, GrantedAtPeak
	// the grant in force then (0: none yet).
	PeakOutstanding int    `json:"peak_outstanding"`
	GrantedAtPeak   uint32 `json:"granted_at_peak"`
	// Exceeded counts the calls sent while the outstanding ones already
	// used every credit granted.
	Exceeded int `json:"exceeded"`
}

// rpcCall reports a client's Send that starts an RPC (a call in
// RDMA_MSG, RDMA_NOMSG or RDMA_MSGP, not a backchannel reply).
func rpcCall(ev *SendEvent) bool { return ev.RPCRDMA && !ev.Reply && ev.Proc <= 2 }

// rpcReply reports a server's Send that answers a call (not a backchannel
// call): its credit field is a grant.
func rpcReply(ev *SendEvent) bool { return ev.RPCRDMA && !ev.Call && ev.Proc <= 4 }

// grant takes the server's credit grant from a reply. A zero is not taken
// as a grant: a responder that could accept nothing more would leave the
// requester no way to send again (RFC 8166 §3.3.1 has the credit value
// at least one), so it says more about the sender than about the limit.
func (c *Connection) grant(ev *SendEvent) {
	cr := &c.Credits
	g := ev.Credits
	if g == 0 {
		return
	}
	if cr.Grants == 0 || g < cr.MinGranted {
		cr.MinGranted = g
	}
	cr.MaxGranted = max(cr.MaxGranted, g)
	cr.Granted = g
	cr.Grants++
}

// checkCredits counts the calls outstanding after the client's call ev
// (RFC 8166 §3.3.1: a requester MUST NOT send more unacknowledged requests
// than the credits the responder granted). Before the first grant only
// the peak is kept: the grant in force is not known.
func (t *Tracker) checkCredits(c *Connection, ev *SendEvent) {
	cr := &c.Credits
	out := c.pending.live
	if out > cr.PeakOutstanding {
		cr.PeakOutstanding, cr.GrantedAtPeak = out, cr.Granted
	}
	if cr.Grants == 0 || out <= int(cr.Granted) {
		return
	}
	cr.Exceeded++
	if t.listed(c, CodeCreditsExceeded, finding.SeverityError, ev.FirstFrame) {
		t.keep(c, finding.Finding{Code: CodeCreditsExceeded, Severity: finding.SeverityError,
			Section: "RFC 8166 §3.3.1", Layer: "conn", Frame: ev.FirstFrame, Offset: -1,
			Message: fmt.Sprintf("the client's call%s makes %d calls outstanding, but the server's last reply granted %d credits (a reply missing from the capture also counts as outstanding)",
				xidNote(ev), out, cr.Granted)})
	}
}
