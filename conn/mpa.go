package conn

import (
	"fmt"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// MPA processes one MPA Request, Reply or Reject frame.
func (t *Tracker) MPA(ev *MPAEvent) {
	if !t.begin(ev.Time) {
		return
	}
	k := streamKey(ev.Src, ev.Dst)
	c := t.lookup(k)
	switch ev.Type {
	case MPARequest:
		if c != nil && c.RequestFrame != 0 && c.ReplyFrame == 0 && c.Client == ev.Src {
			t.mpaStep(c, ev, true, true)
			return
		}
		c = t.newConn(KindConnection, IWARP, ev.Frame, ev.Time)
		c.Client, c.Server = ev.Src, ev.Dst
		c.ServiceID, c.HasServiceID = uint64(ibcm.ServiceIDFor(ibcm.PortSpaceTCP, ev.Dst.Port)), true
		c.State = StateRequested
		c.RequestFrame = ev.Frame
		// A new MPA Request on a stream replaces whatever it carried before.
		ck, _ := t.key(k, true)
		t.index[ck] = c
		t.epoch++
		t.mpaStep(c, ev, true, false)
		c.ClientData = t.readPrivateData(c, "client", "MPA Request", pvtdata.MsgRequest, ev.Frame, ev.PrivateDataAt, ev.PrivateData, ev.ULPOffset, ev.Decoded, ev.Uncaptured)
		t.rememberPeers(c)
	case MPAReply, MPAReject:
		if c == nil {
			t.orphan(finding.Finding{Code: CodeUnknownConnection, Severity: finding.SeverityInfo, Layer: "conn",
				Frame: ev.Frame, Offset: -1,
				Message: fmt.Sprintf("%s from %s to %s on a TCP stream where no MPA Request was seen", ev.Type, ev.Src, ev.Dst)})
			return
		}
		if c.ReplyFrame != 0 {
			t.mpaStep(c, ev, false, true)
			return
		}
		c.ReplyFrame = ev.Frame
		t.mpaStep(c, ev, false, false)
		name, kind := mpaKind(ev.Type)
		c.ServerData = t.readPrivateData(c, "server", name, kind, ev.Frame, ev.PrivateDataAt, ev.PrivateData, ev.ULPOffset, ev.Decoded, ev.Uncaptured)
		if ev.Type == MPAReject {
			c.State = StateRejected
			c.RejectFrame = ev.Frame
			c.RejectReasonName = "MPA Reject"
			t.finding(c, finding.Finding{Code: CodeRejected, Severity: finding.SeverityInfo, Section: "RFC 5044 §7.1.1",
				Layer: "conn", Frame: ev.Frame, Offset: -1, Message: "the server rejected the connection with an MPA Reject (Reject flag set)"})
			t.ended(c)
			return
		}
		c.State = StateEstablished
		c.EstablishedFrame = ev.Frame
		t.negotiate(c, ev.Frame)
	}
}

func (t *Tracker) mpaStep(c *Connection, ev *MPAEvent, fromClient, retrans bool) {
	// The note: "rev %d flags 0x%02x".
	if s := t.addStep(c, stepMPA+stepMsg(ev.Type), ev.Frame, ev.Time, fromClient, retrans); s != nil {
		s.note, s.a, s.b = noteMPA, ev.Revision, ev.Flags
	}
	t.touch(c, ev.Time)
}

func mpaKind(t MPAType) (string, pvtdata.MsgKind) {
	if t == MPAReject {
		return t.String(), pvtdata.MsgReject
	}
	return t.String(), pvtdata.MsgReply
}

// TCPClose processes a TCP FIN (rst false) or RST from src to dst: it ends
// the iWARP connection on that stream. The first FIN makes it
// disconnecting, the other side's FIN (or any RST) disconnected.
func (t *Tracker) TCPClose(frame int, at time.Time, src, dst Peer, rst bool) {
	if !t.begin(at) {
		return
	}
	c := t.lookup(streamKey(src, dst))
	if c == nil || c.Transport != IWARP {
		return
	}
	fromClient := src == c.Client
	msg := stepTCPFIN
	if rst {
		msg = stepTCPRST
	}
	done := &c.finServer
	if fromClient {
		done = &c.finClient
	}
	retrans := *done && !rst
	t.addStep(c, msg, frame, at, fromClient, retrans)
	t.touch(c, at)
	if retrans {
		return
	}
	*done = true
	if c.DisconnectRequestFrame == 0 {
		c.DisconnectRequestFrame = frame
	} else if c.DisconnectReplyFrame == 0 && (rst || (c.finClient && c.finServer)) {
		c.DisconnectReplyFrame = frame
	}
	if c.State == StateRejected || c.State == StateDisconnected {
		return
	}
	if rst || (c.finClient && c.finServer) {
		c.State = StateDisconnected
		if c.DisconnectReplyFrame == 0 {
			c.DisconnectReplyFrame = frame
		}
		// The stream is closed: no Send can follow.
		t.closed(c)
		t.ended(c)
	} else {
		c.State = StateDisconnecting
	}
}

// StepMPA returns the MPA revision and flags octet of the i-th step of the
// ladder when it is an MPA Request, Reply or Reject (ok false otherwise).
func (c *Connection) StepMPA(i int) (revision, flags uint8, ok bool) {
	s := &c.steps[i]
	if s.note != noteMPA {
		return 0, 0, false
	}
	return s.a, s.b, true
}
