package conn

import (
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
)

// CMTiming is how long the connection's setup and teardown took, from its
// ladder: REQ→REP→RTU (iWARP: MPA Request→Reply), DREQ→DREP, with the MRAs
// and the repeated REQs and REPs (the same MAD again: the CM retried
// because no answer came in time).
type CMTiming struct {
	// RequestToReply is from the first REQ (MPA Request, SIDR_REQ) to the
	// first REP (MPA Reply, REJ, SIDR_REP); ReplyToReady from that REP to
	// the first RTU; the Has flags say which were seen.
	RequestToReply, ReplyToReady time.Duration
	HasReply, HasReady           bool
	// Request and Reply name the two messages timed ("REQ", "REJ", "MPA
	// Reply" …).
	Request, Reply string
	// DisconnectToReply is from the first DREQ to the first DREP.
	DisconnectToReply time.Duration
	HasDisconnect     bool
	// MRAs counts the MRAs (a peer asking for more time); RequestRetries
	// and ReplyRetries the REQs and REPs sent again.
	MRAs                         int
	RequestRetries, ReplyRetries int
}

// Any reports whether anything was timed or counted.
func (t CMTiming) Any() bool {
	return t.HasReply || t.HasDisconnect || t.MRAs > 0 || t.RequestRetries > 0 || t.ReplyRetries > 0
}

// CMTiming computes the setup and teardown timing from the ladder (the
// first Config.MaxSteps messages).
func (c *Connection) CMTiming() CMTiming {
	var t CMTiming
	var req, rep, dreq time.Time
	var haveReq, haveRep, haveDREQ, haveRTU, haveDREP bool
	for i := range c.steps {
		s := &c.steps[i]
		at := time.Unix(s.sec, int64(s.nsec))
		retrans := s.flags&stepRetrans != 0
		switch s.msg {
		case stepMsg(ibcm.AttrREQ), stepMsg(ibcm.AttrSIDRReq), stepMPA + stepMsg(MPARequest):
			if retrans {
				t.RequestRetries++
			} else if !haveReq {
				req, haveReq = at, true
				t.Request = s.msg.String()
			}
		case stepMsg(ibcm.AttrREP), stepMsg(ibcm.AttrREJ), stepMsg(ibcm.AttrSIDRRep), stepMPA + stepMsg(MPAReply), stepMPA + stepMsg(MPAReject):
			if retrans && s.msg == stepMsg(ibcm.AttrREP) {
				t.ReplyRetries++
			} else if !haveRep && !retrans {
				rep, haveRep = at, true
				t.Reply = s.msg.String()
				if haveReq {
					t.RequestToReply, t.HasReply = at.Sub(req), true
				}
			}
		case stepMsg(ibcm.AttrRTU):
			if !haveRTU && haveRep && !retrans {
				haveRTU = true
				t.ReplyToReady, t.HasReady = at.Sub(rep), true
			}
		case stepMsg(ibcm.AttrMRA):
			t.MRAs++
		case stepMsg(ibcm.AttrDREQ):
			if !haveDREQ && !retrans {
				dreq, haveDREQ = at, true
			}
		case stepMsg(ibcm.AttrDREP):
			if !haveDREP && haveDREQ && !retrans {
				haveDREP = true
				t.DisconnectToReply, t.HasDisconnect = at.Sub(dreq), true
			}
		}
	}
	return t
}
