package conn

import (
	"fmt"
	"strconv"
)

// AppendStateText appends c's state as the views and the check word it:
// the state's name, with the reason of a rejection ("rejected (Consumer
// reject)", "rejected (reason 28)"), and "(capture ended)" after a setup
// or teardown the capture ended in the middle of ("requested (capture
// ended)").
func (c *Connection) AppendStateText(b []byte) []byte {
	b = append(b, c.State.String()...)
	if c.CaptureEnded {
		b = append(b, " (capture ended)"...)
	}
	if c.State == StateRejected {
		if c.RejectCut {
			b = append(b, " (reason not captured)"...)
		} else if c.RejectReasonName != "" {
			b = append(append(append(b, " ("...), c.RejectReasonName...), ')')
		} else {
			b = append(strconv.AppendUint(append(b, " (reason "...), uint64(c.RejectReason), 10), ')')
		}
	}
	return b
}

// StateText is AppendStateText as a string.
func (c *Connection) StateText() string { return string(c.AppendStateText(nil)) }

// UnlistedSpan renders the frames of the findings Connection.Findings does
// not list: " (frames 405–1965)", " (frame 405)", or "" when they are not
// tied to frames.
func (n *FindingCount) UnlistedSpan() string {
	first, last := n.FirstUnlistedFrame, n.LastFrame
	switch {
	case first == 0:
		return ""
	case first == last:
		return fmt.Sprintf(" (frame %d)", first)
	}
	return fmt.Sprintf(" (frames %d–%d)", first, last)
}
