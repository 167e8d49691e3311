package dissect

import (
	"errors"
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/layerdec"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// A capture's snap length (tcpdump -s, dumpcap -s, editcap -s) stores only
// a frame's first octets; the record keeps the length the frame had on the
// wire. As in tshark, running out of captured octets is not a broken
// protocol rule ("[Packet size limited during capture]", not "[Malformed
// Packet]"): the layers decode as far as the captured octets go, the one
// frame-level CodeTruncated warning says the frame was cut, and no layer
// reports an error or a warning for octets that were not captured. A
// record that is short on the wire (its own length fields need more than
// the wire length) keeps its error.
//
// This file is the home of that rule: how many octets of the packet the
// capture did not store (Dissector.uncaptured, kept in Record.uncaptured),
// what a decode that ran out of them reports (snapFailed; a CM message
// cut in its fixed fields keeps those captured, snapFixedCut), and which
// findings say no more than that octets are missing (cutCodes, left out by
// Record.keepCaptured: of the frame's layers once they are decoded
// (cutPacket, from chainFailed: only cut and failed frames go there), and
// where the Send decoders and the iWARP reassembly add theirs).

// uncaptured is how many octets of the frame's packet the capture did not
// store: 0 when the frame is whole, or when the cut lies after the end of
// its IP packet (in the link layer's padding: every octet the IP header
// counts was captured). For a frame without IP (native InfiniBand, ERF) it
// is every octet cut.
func (d *Dissector) uncaptured(at *icrcAt) int {
	end := -1
	if at.ip >= 0 {
		end = at.ip + int(d.walk.cur.ip4.Length)
		if at.v6 {
			end = at.ip + 40 + int(d.walk.cur.ip6.Length)
		}
	}
	return d.rec.uncapturedBefore(end)
}

// uncapturedBefore is how many of the octets before frame offset end (the
// end of the frame's IP packet; -1: the frame's end) the capture did not
// store.
func (r *Record) uncapturedBefore(end int) int {
	n := r.Length - r.CaptureLength
	if n > 0 && end >= 0 {
		n = min(n, end-len(r.Data))
	}
	return max(n, 0)
}

// WireLength is the length on the wire of payload, a part of the frame
// that runs to the end of its IP packet (a TCP segment's payload): its
// captured octets and those of the packet the capture did not store.
func (r *Record) WireLength(payload []byte) int {
	n := len(payload)
	if r.CaptureLength >= r.Length || n > 0 && frameOffset(r.Data, payload)+n < len(r.Data) {
		return n // whole, or ends before the captured end (an empty one is there)
	}
	return n + r.uncapturedBefore(r.ipEnd())
}

// ipEnd is the frame offset where the frame's IP packet ends by its IP
// header's length, -1 for a frame without IP.
func (r *Record) ipEnd() int {
	h := r.Headers()
	if h.IPv4 != nil {
		return frameOffset(r.Data, h.IPv4.Contents) + int(h.IPv4.Length)
	} else if h.IPv6 != nil {
		return frameOffset(r.Data, h.IPv6.Contents) + 40 + int(h.IPv6.Length)
	}
	return -1
}

// bthUncaptured makes the BTH decoded from data (to the captured end) take
// the captured octets after it as payload when the capture did not store
// the packet's end, where its pad and ICRC lie (ibcm.BTH.MarkUncaptured).
// A layer's DecodeFeedback (d.truncated) is what brings decodeLayers here:
// a cut frame's IP or LRH length runs past the captured octets.
//
//go:noinline
func (d *Dissector) bthUncaptured(b *ibcm.BTH, data []byte, at *icrcAt) {
	if d.rec.uncaptured = d.uncaptured(at); d.rec.uncaptured > 0 {
		b.MarkUncaptured(data, d.rec.uncaptured)
	} else if pad, ok := d.icrcNotCaptured(at); ok {
		b.MarkICRCNotCaptured(data[:len(data)-pad])
	}
}

// icrcNotCaptured reports whether the RoCEv2 packet whose BTH decodeLayers
// reached lacks only its ICRC, and how many octets at the frame's end are
// Ethernet padding after it: the frame is whole (the snap length cut
// nothing), the UDP length ends where the IP length does, and both count
// the 4 ICRC octets more than the frame holds, or fewer when the frame is
// of the minimum Ethernet size (a mirror padded the packet without its
// ICRC to 60 octets). Such a frame is not cut (d.truncated is cleared);
// the capture's first one carries CodeICRCNotCaptured.
func (d *Dissector) icrcNotCaptured(at *icrcAt) (pad int, ok bool) {
	const icrcLen, udpLen, minFrame = 4, 8, 64
	r, h := &d.rec, d.walk.cur
	if at.ip < 0 || r.CaptureLength < r.Length || len(r.Layers) == 0 || r.Layers[len(r.Layers)-1] != field.Layer(&h.udp) {
		return 0, false
	}
	ipEnd := at.ip + int(h.ip4.Length)
	if at.v6 {
		ipEnd = at.ip + 40 + int(h.ip6.Length)
	}
	short := ipEnd - len(r.Data)
	if short <= 0 || short > icrcLen || short < icrcLen && len(r.Data) > minFrame ||
		offsetIn(r.Data, h.udp.Contents)+int(h.udp.Length) != ipEnd ||
		offsetIn(r.Data, h.udp.Payload)+len(h.udp.Payload) != len(r.Data) {
		return 0, false
	}
	d.truncated = false
	if !d.icrcAbsentNoted {
		d.icrcAbsentNoted = true
		r.addFinding(CodeICRCNotCaptured, finding.SeverityInfo, "", "bth", offsetIn(r.Data, h.udp.Payload), fmt.Sprintf(
			"frame of %d octets, its IP and UDP lengths count %d more: the capture point did not deliver the RoCEv2 ICRC (the snap length cut nothing); the payload is decoded whole and the ICRC not verified, here and in every later frame like this one",
			r.Length, short))
	}
	return icrcLen - short, true
}

// snapFailed reports whether err, the error of the layer decoded from the
// frame offset off on, is only the capture's snap length: the frame's
// packet was cut (Record.uncaptured octets not captured), the layer's
// octets run to the captured end, and what it needed fits in the octets
// the wire had. For a
// decode error that does not say what it needed (gopacket's own layers),
// reaching the captured end of a cut packet is taken as the cause.
func (d *Dissector) snapFailed(err error, off int) bool {
	if d.rec.uncaptured <= 0 {
		return false
	}
	var de *layerdec.DecodeError
	if !errors.As(err, &de) {
		return true
	}
	return off+de.Offset+de.Have >= len(d.rec.Data) && de.Need <= de.Have+d.rec.uncaptured
}

// snapTruncated adds the frame's one CodeTruncated finding, naming the
// layer (lname, at frame offset off) whose decode ran out of captured
// octets (err; nil when the layers decoded what was captured and the frame
// is cut inside them), and whether the fields it holds were decoded
// (partial: snapFixedCut).
func (d *Dissector) snapTruncated(lname string, off int, err error, partial bool) {
	r := &d.rec
	msg := fmt.Sprintf("frame cut at %d of %d bytes by the capture's snap length", r.CaptureLength, r.Length)
	if err != nil {
		what := "not decoded"
		if partial {
			what = "decoded only in the fields captured"
		}
		msg += fmt.Sprintf(" [Packet size limited during capture]: %s at frame offset %d %s: %v", lname, off, what, err)
	}
	r.addFinding(CodeTruncated, finding.SeverityWarning, "", lname, off, msg)
}

// shortFrame adds the finding of a frame the capture stored whole that is
// shorter than a length field of its headers says (a layer's
// DecodeFeedback; lname at frame offset off is the last layer decoded):
// not the snap length's doing, and not known to be the sender's either (a
// capture point may leave octets out), so a warning that says which.
func (d *Dissector) shortFrame(lname string, off int) {
	r := &d.rec
	msg := fmt.Sprintf("the frame's %d octets were all captured, yet its headers' lengths run past them", r.Length)
	if end := r.ipEnd(); end > len(r.Data) {
		msg = fmt.Sprintf("the frame's %d octets were all captured, yet its IP header's length runs %d octets past them", r.Length, end-len(r.Data))
	}
	r.addFinding(CodeShortFrame, finding.SeverityWarning, "", lname, off,
		msg+": the capture point left octets out, or the sender wrote a wrong length; the layers decode from the octets present")
}

// snapFixedCut keeps l, the layer at frame offset off whose decode ran out
// of the octets the snap length left, when it is a CM message cut inside
// its fixed fields: the fields its octets hold are decoded
// (ibcm.CM.FixedCut) and shown, and conn follows its connection as far as
// they say. It is the record's last layer, not its Headers' CM, which
// holds a message whose fixed fields were all decoded (transport seeds
// its queue pairs from them). Its findings are on the fields captured. A
// message short on the wire is no layer: its error stands.
func (d *Dissector) snapFixedCut(l field.Layer, off int) bool {
	cm, ok := l.(*ibcm.CM)
	if !ok || !cm.FixedCut() {
		return false
	}
	r := &d.rec
	r.Add(cm, off)
	first := len(r.Findings)
	r.Findings = cm.AppendFindings(r.Findings)
	r.placeFindings(first, off)
	return true
}

// cutCodes are the findings whose rule compares a length with the octets
// present: in a packet the capture cut, the octets are missing because of
// the snap length, not because the sender left them out.
var cutCodes = map[string]bool{
	ibcm.CodeICRCMissing:              true,
	ibcm.CodeLengthMismatch:           true,
	ibcm.CodeMADLength:                true,
	ibcm.CodeTruncated:                true,
	mpa.CodePDLengthOverrun:           true,
	mpa.CodeEnhancedShort:             true,
	pvtdata.CodeOverrun:               true,
	rpcrdma.CodeTruncated:             true,
	rpcrdma.CodeChunkListUnterminated: true,
	rpcrdma.CodeSegmentCountOverrun:   true,
	rpcrdma.CodeMissingRPC:            true,
	rpcrdma.CodeRPCTruncated:          true,
	rpcrdma.CodeNFSTruncated:          true,
	rpcrdma.CodeNFSTooManyOps:         true,
	// Absent from the octets captured, not from what was sent:
	rpcrdma.CodeNFSOpsUndecoded: true,
	pvtdata.CodeNotFound:        true,
	CodeULPShort:                true,
}

// dropCut removes the findings of fs from index first on that only say
// octets are missing (cutCodes), and a reader divergence that an overrun
// there made (readers reading past the octets captured).
func dropCut(fs []finding.Finding, first int) []finding.Finding {
	overrun := false
	for _, f := range fs[first:] {
		overrun = overrun || f.Code == pvtdata.CodeOverrun
	}
	kept := fs[:first]
	for _, f := range fs[first:] {
		if !cutCodes[f.Code] && !(overrun && f.Code == pvtdata.CodeReaderDivergence) {
			kept = append(kept, f)
		}
	}
	clear(fs[len(kept):])
	return kept
}

// snapPDU tells an iWARP layer decoded from octets that end where the
// capture's snap length cut the stream that they do: an MPA frame's
// private data there is not what the peer sent whole.
func snapPDU(l field.Layer) {
	if f, ok := l.(*mpa.Frame); ok && f.Overrun {
		f.Uncaptured = true
	}
}

// cutPacket notes, for a frame a layer found cut short (once its headers
// are noted and its layers' findings collected), how many octets of its
// packet the capture did not store (Record.uncaptured), leaves out the
// findings that only say they are missing, and makes the BTH's payload
// length the wire's.
func (d *Dissector) cutPacket() {
	r := &d.rec
	if r.uncaptured = r.uncapturedBefore(r.ipEnd()); r.uncaptured == 0 {
		return
	}
	r.keepCaptured(0)
	if b := r.Headers().BTH; b != nil {
		b.WirePayload(r.uncaptured)
	}
}

// snapCut notes a segment of this direction whose payload (as captured)
// the snap length cut: the stream octets after it up to the next segment
// are not missing from the sender's stream, only from the capture.
func (h *iwarpHalf) snapCut(rec *Record, payload []byte) {
	if rec.WireLength(payload) > len(payload) {
		h.snapHoles++
	}
}

// snapFrame decodes now the MPA Request, Reply or Reject at the start of
// b (data offset p) whose header the segment being assembled holds and
// whose rest the snap length cut from it (snapCut): no later segment can
// complete it, as the octets after the cut were never captured, and when
// none follows in this direction (the streams of a connection set up and
// closed) no frame would be left to show it on. As at the hole (gap), it
// is decoded from the octets captured, its private data "not captured"
// (snapPDU). It returns the octets used.
func (h *iwarpHalf) snapFrame(b []byte, p int) int {
	w := h.s.w
	w.snapPDU, h.inGap, h.gapCut = true, true, -1
	n, _ := h.frame(b, p, true)
	w.snapPDU, h.inGap = false, false
	return n
}

// snapGap is gap's work for a hole that a segment cut by the snap length
// left (snapCut): the PDUs in it cannot be decoded, said once per stream
// direction (the frames say they were cut), not an iwarp.stream-gap; the
// stream resynchronises after it.
func (h *iwarpHalf) snapGap(skip int) {
	h.snapHoles--
	w := h.s.w
	if !h.snapNoted {
		h.snapNoted = true
		w.addFinding(CodeIWARPNotCaptured, finding.SeverityInfo, -1, fmt.Sprintf(
			"TCP %d→%d: the capture's snap length did not store %d octets of the iWARP stream before this segment; PDUs in octets not captured are not decoded (here and after every cut segment of this direction), the stream resynchronises after each",
			h.srcPort, h.dstPort, skip))
	}
	h.sends = nil
	if p := rpcOf(w.sends); p != nil {
		p.chunks.lost(connHash(w.rec), h.path())
	}
	h.afterGap, h.cutSend, h.snapResync = true, true, true
	h.toResync()
}

// keepCaptured leaves out, when the capture's snap length cut the frame's
// packet, the findings from index first on that only say octets are
// missing (dropCut). Not inlined: it is for cut frames only.
//
//go:noinline
func (r *Record) keepCaptured(first int) {
	if r.uncaptured > 0 {
		r.Findings = dropCut(r.Findings, first)
	}
}

// uncapturedPayload is how many octets of the payload of an IB packet the
// capture's snap length did not store (after the captured ones): the wire
// payload length less the captured.
func uncapturedPayload(bth *ibcm.BTH, payload []byte) int {
	if !bth.Uncaptured() {
		return 0
	}
	return max(bth.PayloadLength-len(payload), 0)
}

// dropUncaptured gives up the message a segment is kept for when a packet
// the snap length cut placed octets in it: the message cannot be decoded
// (it reports true for place, which keeps nothing more).
func (c *chunkTable) dropUncaptured(s *chunkSeg) bool {
	s.dropped = true
	if s.buf != nil {
		c.unhold(s)
	}
	return true
}
