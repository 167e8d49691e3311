package dissect

import (
	"strconv"
	"time"
	"unsafe"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// The frame pseudo-layer: capture metadata, first in every Record's Layers,
// so views and filters treat it like any layer (frame.number, frame.len …).
var (
	ProtoFrame         = field.NewProto("frame", "Frame")
	fFrameNumber       = ProtoFrame.Uint("frame.number", 32, "Frame Number")
	fFrameTime         = ProtoFrame.String("frame.time", "Arrival Time (UTC, RFC 3339)")
	fFrameTimeEpoch    = ProtoFrame.String("frame.time_epoch", "Epoch Time").WithUnit("s")
	fFrameTimeRelative = ProtoFrame.String("frame.time_relative", "Time since first frame").WithUnit("s")
	fFrameTimeDelta    = ProtoFrame.String("frame.time_delta", "Time since previous frame").WithUnit("s")
	fFrameLen          = ProtoFrame.Uint("frame.len", 32, "Frame Length").WithUnit("bytes")
	fFrameCapLen       = ProtoFrame.Uint("frame.cap_len", 32, "Capture Length").WithUnit("bytes")
	fFrameLinkType     = ProtoFrame.Uint("frame.link_type", 16, "Link Type").WithNames(linkTypeNames)
	fFrameSource       = ProtoFrame.String("frame.source", "Capture File or Interface")
	fFrameProtocols    = ProtoFrame.String("frame.protocols", "Protocols in frame")
	fFrameComment      = ProtoFrame.String("frame.comment", "Comment")
)

var linkTypeNames = map[uint64]string{
	1: "Ethernet", LinkTypeRaw: "Raw IP", LinkTypeLinuxSLL: "Linux cooked", 197: "ERF", LinkTypeIPv4: "IPv4",
	LinkTypeIPv6: "IPv6", 247: "InfiniBand", LinkTypeLinuxSLL2: "Linux cooked v2", LinkTypeIPoIB: "IP over InfiniBand",
}

// Frame is the frame pseudo-layer of a Record.
type Frame struct {
	rec *Record
	// Relative and Delta are the times since the run's first frame and
	// since the previous frame.
	Relative, Delta time.Duration
	// NoTime: the record has no time (a damaged record cut inside its
	// header): the time fields are left out.
	NoTime bool
	buf    []byte
}

func (f *Frame) Proto() *field.Proto { return ProtoFrame }

// str returns b as a string without copying: Visitors must not retain
// strings (field.Visitor's contract) and buf is rewritten only by the next
// VisitFields.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// AppendSeconds appends d as seconds with nine decimals ("1.000250000").
func AppendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	b = append(b, '.')
	ns := int64(d % time.Second)
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + ns%10)
		ns /= 10
	}
	return append(b, digits[:]...)
}

// VisitFields gives the frame's capture metadata. A damaged record's
// header may not say everything (source.RecordError): a time, length or
// link type it does not give is left out rather than shown as a zero.
func (f *Frame) VisitFields(v field.Visitor) {
	r := f.rec
	v.Uint(fFrameNumber, uint64(r.Frame))
	// Each string is built in its own region of buf so that a visitor
	// holding the previous one (within this call) still sees it intact.
	need := 160 + len(r.Source)
	for _, l := range r.Layers {
		need += len(l.Proto().Name) + 1
	}
	if cap(f.buf) < need {
		f.buf = make([]byte, 0, need*2)
	}
	b := f.buf[:0]
	if !f.NoTime {
		start := len(b)
		b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		v.String(fFrameTime, str(b[start:]))
		start = len(b)
		b = AppendSeconds(b, time.Duration(r.Time.UnixNano()))
		v.String(fFrameTimeEpoch, str(b[start:]))
		start = len(b)
		b = AppendSeconds(b, f.Relative)
		v.String(fFrameTimeRelative, str(b[start:]))
		start = len(b)
		b = AppendSeconds(b, f.Delta)
		v.String(fFrameTimeDelta, str(b[start:]))
	}
	if r.Length >= 0 {
		v.Uint(fFrameLen, uint64(r.Length))
	}
	if r.CaptureLength >= 0 {
		v.Uint(fFrameCapLen, uint64(r.CaptureLength))
	}
	if r.LinkType >= 0 {
		v.Uint(fFrameLinkType, uint64(r.LinkType))
	}
	v.String(fFrameSource, r.Source)
	start := len(b)
	for i, l := range r.Layers {
		if i == 0 {
			continue // the frame itself
		}
		if len(b) > start {
			b = append(b, ':')
		}
		b = append(b, l.Proto().Name...)
	}
	v.String(fFrameProtocols, str(b[start:]))
	for _, c := range r.Comments {
		v.String(fFrameComment, c)
	}
	f.buf = b
}
