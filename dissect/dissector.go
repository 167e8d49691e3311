package dissect

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// RoCEv2Port is the IANA UDP destination port of RoCEv2.
const RoCEv2Port = 4791

// Options configure a Dissector.
type Options struct {
	// RoCEPorts are UDP ports decoded as RoCEv2 in addition to 4791.
	RoCEPorts []uint16
	// IWARP bounds iWARP TCP reassembly (zero fields: defaults).
	IWARP IWARPConfig
}

// Dissector decodes frames into Records. It is not safe for concurrent use;
// run one per goroutine. It reuses one Record and its layer values: the
// Record returned by Dissect is valid until the next call.
type Dissector struct {
	opts  Options
	rec   Record
	frame Frame

	eth  Ethernet
	vlan VLAN
	ip4  IPv4
	ip6  IPv6
	udp  UDP
	tcp  TCP

	// truncated is set (gopacket.DecodeFeedback) by a layer that found the
	// frame cut short by the snap length.
	truncated bool

	roce [65536 / 64]uint64 // bit set of RoCEv2 UDP ports

	first, prev time.Time
	started     bool

	ext extensions

	// layerTab caches each layer type's entry by its layerSlots number
	// (entry); ents are the entries of the layers the current chain added.
	layerTab []layerEntry
	ents     []*layerEntry

	// The entries of the layers decodeLayers' fastPrefix decodes by
	// direct calls.
	fastEth, fastIP4, fastIP6, fastUDP, fastBTH *layerEntry
}

// New makes a Dissector.
func New(opts Options) *Dissector {
	d := &Dissector{opts: opts}
	d.frame.rec = &d.rec
	d.udp.roce = &d.roce
	d.rec.Layers = make([]field.Layer, 0, 24)
	d.rec.Offsets = make([]int, 0, 24)
	d.rec.Findings = make([]finding.Finding, 0, 8)
	d.ents = make([]*layerEntry, 0, 24)
	d.ext.init(d)
	d.setRoCEPort(RoCEv2Port)
	d.fastEth, d.fastIP4, d.fastIP6, d.fastUDP, d.fastBTH = d.entry(layers.LayerTypeEthernet), d.entry(layers.LayerTypeIPv4), d.entry(layers.LayerTypeIPv6), d.entry(layers.LayerTypeUDP), d.entry(ibcm.LayerTypeBTH)
	for _, p := range opts.RoCEPorts {
		d.setRoCEPort(p)
	}
	return d
}

func (d *Dissector) setRoCEPort(p uint16) { d.roce[p/64] |= 1 << (p % 64) }

// IsRoCEPort reports whether UDP port p is decoded as RoCEv2.
func (d *Dissector) IsRoCEPort(p uint16) bool { return d.roce[p/64]&(1<<(p%64)) != 0 }

// Dissect decodes one frame. The returned Record (and every layer in it)
// is reused by the next call.
func (d *Dissector) Dissect(f *source.Frame) *Record {
	r := &d.rec
	r.Reset()
	r.Source = f.Source
	r.Frame = f.Number
	r.Time = f.Time
	r.CaptureLength = f.CaptureLength
	r.Length = f.Length
	r.LinkType = f.LinkType
	r.Data = f.Data
	r.Comments = f.Comments
	d.ext.aheadICRC = f.Ahead
	if !d.started {
		d.first, d.prev, d.started = f.Time, f.Time, true
	}
	d.frame.Relative = since(f.Time, d.first)
	d.frame.Delta = since(f.Time, d.prev)
	d.frame.NoTime = false
	d.prev = f.Time
	r.Add(&d.frame, 0)

	switch f.LinkType {
	case source.LinkTypeEthernet:
		d.dissectEthernet(f.Data)
	default:
		if !d.ext.dissectLink(f.LinkType, f.Data) {
			d.addFinding(CodeUnknownLinkType, finding.SeverityWarning, "frame", 0,
				fmt.Sprintf("link type %d is not dissected (Ethernet 1, ERF 197 and InfiniBand 247 are)", f.LinkType))
		}
	}
	d.ext.aheadICRC = source.Ahead{}
	return r
}

// since is t.Sub(u) for capture timestamps (no monotonic reading): from
// the seconds and nanoseconds when both lie within 2^32 s of the epoch
// (the difference cannot overflow; every pcap timestamp does), by Sub
// otherwise. Sub checks its result for overflow with an Add and an Equal:
// two Subs per frame were ~8% of the whole per-packet cost.
func since(t, u time.Time) time.Duration {
	ts, us := t.Unix(), u.Unix()
	const lim = 1 << 32
	if ts > -lim && ts < lim && us > -lim && us < lim {
		return time.Duration(ts-us)*time.Second + time.Duration(t.Nanosecond()-u.Nanosecond())
	}
	return t.Sub(u)
}

// Finish flushes reassembly state at the end of input: PDUs completed by
// nothing more arriving, and what was left incomplete, are handed to fn in
// one end-of-input record (Frame 0, EndOfInput true; no frame layer). fn
// must not keep the Record.
func (d *Dissector) Finish(fn func(*Record)) {
	d.ext.finish(fn)
}

// finding appends a finding at frame offset off.
func (d *Dissector) addFinding(code string, sev finding.Severity, layer string, off int, msg string) {
	d.rec.Findings = append(d.rec.Findings, finding.Finding{
		Code: code, Severity: sev, Message: msg, Frame: d.rec.Frame, Layer: layer, Offset: off,
	})
}

// offsetIn is where sub starts inside data (both slices of one buffer).
func offsetIn(data, sub []byte) int {
	return cap(data) - cap(sub)
}

// layerName maps gopacket's layer types to our protocol names.
func layerName(t gopacket.LayerType) string {
	switch t {
	case layers.LayerTypeEthernet:
		return "ethernet"
	case layers.LayerTypeDot1Q:
		return "vlan"
	case layers.LayerTypeIPv4:
		return "ipv4"
	case layers.LayerTypeIPv6:
		return "ipv6"
	case layers.LayerTypeUDP:
		return "udp"
	case layers.LayerTypeTCP:
		return "tcp"
	}
	return t.String()
}

// dissectEthernet decodes from the Ethernet header on.
func (d *Dissector) dissectEthernet(data []byte) {
	d.decodeChain(layers.LayerTypeEthernet, data, 0)
}

// SetTruncated implements gopacket.DecodeFeedback: a layer found the frame
// cut short by the capture's snap length.
func (d *Dissector) SetTruncated() { d.truncated = true }

// findingsAppender is implemented by layers that report what they noticed
// (offsets relative to the layer's first byte).
type findingsAppender interface {
	AppendFindings(dst []finding.Finding) []finding.Finding
}

// collectFindings appends the findings of the layers d.ents (added from
// record index start on), their offsets made frame-relative.
func (d *Dissector) collectFindings(start int) {
	r := &d.rec
	for k, e := range d.ents {
		if e.fa == nil {
			continue
		}
		off := r.Offsets[start+k]
		first := len(r.Findings)
		r.Findings = e.fa.AppendFindings(r.Findings)
		for i := first; i < len(r.Findings); i++ {
			f := &r.Findings[i]
			f.Frame = r.Frame
			if f.Offset >= 0 && off >= 0 {
				f.Offset += off
			} else {
				f.Offset = -1
			}
		}
	}
}

// layerKind is what decodeChain needs to know of a layer beyond its
// interfaces.
type layerKind uint8

const (
	kindUnset layerKind = iota // not looked up yet
	kindNone                   // no record layer for this layer type
	kindOther
	kindIPv4
	kindIPv6
	kindGRH
	kindLRH
	kindBTH
)

// layerEntry is the record layer of one gopacket layer type and what it
// implements, looked up once per Dissector (layerFor's switch and three
// interface assertions per layer per packet were a visible share of the
// per-packet cost).
type layerEntry struct {
	l    field.Layer
	dl   decodingLayer
	fa   findingsAppender
	kind layerKind
}

// layerSlots numbers the layer types a Dissector decodes (1…, 0: none),
// the same for every Dissector: each one's entry table is then a few
// dozen entries, not one per layer type value (this program's layer types
// are numbered from 1800).
var layerSlots = func() map[gopacket.LayerType]uint8 {
	m := map[gopacket.LayerType]uint8{}
	var d Dissector
	d.ext.d, d.ext.ib = &d, ibcm.NewStack()
	for _, l := range d.ext.allLayers() {
		for _, t := range l.CanDecode().LayerTypes() {
			if m[t] == 0 {
				m[t] = uint8(len(m) + 1)
			}
		}
	}
	return m
}()

// layerSlotTab is layerSlots as a table for layer types below
// maxCachedLayerType.
var layerSlotTab = func() *[maxCachedLayerType]uint8 {
	var t [maxCachedLayerType]uint8
	for lt, i := range layerSlots {
		if int(lt) >= 0 && int(lt) < maxCachedLayerType {
			t[lt] = i
		}
	}
	return &t
}()

// maxCachedLayerType bounds the layer types found through layerSlotTab
// (gopacket's and this project's are all below it).
const maxCachedLayerType = 2048

// entry returns the layer entry of t, nil when no record layer decodes t.
func (d *Dissector) entry(t gopacket.LayerType) *layerEntry {
	var i uint8
	if int(t) >= 0 && int(t) < maxCachedLayerType {
		i = layerSlotTab[t]
	}
	if i == 0 {
		return nil
	}
	if d.layerTab == nil {
		d.layerTab = make([]layerEntry, len(layerSlots)+1)
	}
	e := &d.layerTab[i]
	switch e.kind {
	case kindUnset:
		d.fillEntry(e, t)
	case kindNone:
		return nil
	}
	if e.kind == kindNone {
		return nil
	}
	return e
}

// fillEntry looks up the record layer of t and what it implements.
func (d *Dissector) fillEntry(e *layerEntry, t gopacket.LayerType) {
	*e = layerEntry{kind: kindNone}
	l := d.layerFor(t)
	if l == nil {
		return
	}
	dl, ok := l.(decodingLayer)
	if !ok {
		return
	}
	e.l, e.dl, e.kind = l, dl, kindOther
	e.fa, _ = l.(findingsAppender)
	switch l.(type) {
	case *IPv4:
		e.kind = kindIPv4
	case *IPv6:
		e.kind = kindIPv6
	case *ibcm.GRH:
		e.kind = kindGRH
	case *ibcm.LRH:
		e.kind = kindLRH
	case *ibcm.BTH:
		e.kind = kindBTH
	}
}

// decodeLayers decodes data from layer type first on, as gopacket's
// DecodingLayerParser does with IgnoreUnsupported (it stops quietly at the
// first payload it has no decoder for), adding each layer to the record;
// last is the last layer decoded. A panic in a decoder is an error.
func (d *Dissector) decodeLayers(first gopacket.LayerType, data []byte, icrc *icrcAt) (last *layerEntry, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	r := &d.rec
	frameData := r.Data
	t := first
	if t == layers.LayerTypeEthernet && d.fastEth != nil {
		var done bool
		t, data, last, done, err = d.fastPrefix(data, icrc)
		if done || err != nil {
			return last, err
		}
	}
	for {
		e := d.entry(t)
		if e == nil {
			return last, nil
		}
		if err := e.dl.DecodeFromBytes(data, d); err != nil {
			return last, err
		}
		off := offsetIn(frameData, e.dl.LayerContents())
		switch e.kind {
		case kindIPv4:
			icrc.ip, icrc.v6 = off, false
		case kindIPv6:
			icrc.ip, icrc.v6 = off, true
		case kindGRH:
			icrc.grh = off
		case kindLRH:
			icrc.lrh = off
		case kindBTH:
			icrc.bth = e.l.(*ibcm.BTH)
		}
		r.Add(e.l, off)
		d.ents = append(d.ents, e)
		last = e
		t = e.dl.NextLayerType()
		if data = e.dl.LayerPayload(); len(data) == 0 {
			return last, nil
		}
	}
}

// decodeChain decodes data (which starts at frame offset base) from layer
// type first on (decodeLayers), adds what it decoded to the record, checks the ICRC of an
// IB packet, collects the layers' findings and turns a failure into one,
// then dispatches the payload of the last layer (extra RoCE port, iWARP
// reassembly, RC Sends).
func (d *Dissector) decodeChain(first gopacket.LayerType, data []byte, base int) {
	r := &d.rec
	frameData := r.Data
	start := len(r.Layers)
	icrc := icrcAt{ip: -1, grh: -1, lrh: -1}
	d.ents = d.ents[:0]
	d.truncated = false
	lastEntry, err := d.decodeLayers(first, data, &icrc)
	var last decodingLayer
	var ip4 *IPv4
	var ip6 *IPv6
	if lastEntry != nil {
		last = lastEntry.dl
	}
	if icrc.ip >= 0 {
		if icrc.v6 {
			ip6 = &d.ip6
		} else {
			ip4 = &d.ip4
		}
	}
	bth := d.ext.checkICRC(&icrc)
	d.collectFindings(start)
	if err != nil {
		off, name := base, first
		if last != nil {
			off = offsetIn(frameData, last.LayerPayload())
			name = last.NextLayerType()
		}
		var ule gopacket.UnsupportedLayerType
		if !errors.As(err, &ule) {
			lname := layerName(name)
			if l := d.layerFor(name); l != nil {
				lname = l.Proto().Name // "bth", not gopacket's "BTH"
			}
			d.addFinding(CodeMalformed, finding.SeverityError, lname, off,
				fmt.Sprintf("%s at frame offset %d: %v", lname, off, err))
		}
	} else if d.truncated {
		off := base
		if last != nil {
			off = offsetIn(frameData, last.LayerContents())
		}
		d.addFinding(CodeTruncated, finding.SeverityWarning, r.Layers[len(r.Layers)-1].Proto().Name, off,
			fmt.Sprintf("frame cut at %d of %d bytes by the capture's snap length", r.CaptureLength, r.Length))
	}
	if last == nil || err != nil {
		return
	}
	switch l := last.(type) {
	case *TCP:
		var netFlow gopacket.Flow
		if ip4 != nil {
			netFlow = ip4.NetworkFlow()
		} else if ip6 != nil {
			netFlow = ip6.NetworkFlow()
		}
		d.ext.dissectTCP(l, netFlow)
	default:
		if bth != nil && decodeSend != nil && bth.OpCode.IsSend() {
			// The Send payload is what follows the last extension header.
			sendOn(&d.rec, bth, d.ext.ib.IETH.RKey, last.LayerPayload())
		}
	}
}

// decodingLayer is a gopacket.DecodingLayer that also reports its bytes
// (every gopacket layer with a BaseLayer does).
type decodingLayer interface {
	gopacket.DecodingLayer
	LayerContents() []byte
}

// layerFor returns the record layer that decoded layer type t.
func (d *Dissector) layerFor(t gopacket.LayerType) field.Layer {
	switch t {
	case layers.LayerTypeEthernet:
		return &d.eth
	case layers.LayerTypeDot1Q:
		return &d.vlan
	case layers.LayerTypeIPv4:
		return &d.ip4
	case layers.LayerTypeIPv6:
		return &d.ip6
	case layers.LayerTypeUDP:
		return &d.udp
	case layers.LayerTypeTCP:
		return &d.tcp
	}
	return d.ext.layerFor(t)
}

// Run reads every frame of src, dissects it and calls fn with the record;
// at the end it flushes reassembly (Finish). A damaged record becomes a
// record with no layers but the frame and a CodeRecordDamaged finding, and
// reading goes on with the next file. A file that cannot be opened stops
// the run with its *source.HeaderError. fn's error stops the run too.
func (d *Dissector) Run(src source.Source, fn func(*Record) error) error {
	var f source.Frame
	for {
		err := src.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			var re *source.RecordError
			if errors.As(err, &re) {
				if err := fn(d.DamagedRecord(re)); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if err := fn(d.Dissect(&f)); err != nil {
			return err
		}
	}
	var ferr error
	d.Finish(func(r *Record) {
		if ferr == nil {
			ferr = fn(r)
		}
	})
	return ferr
}

// EndOfInput reports the record Finish hands over: not a frame, but what
// reassembly completed or found incomplete when the input ended.
func (r *Record) EndOfInput() bool { return r.Frame == 0 }

// DamagedRecord makes the record reported for a damaged capture record:
// only the frame pseudo-layer, with what the record's header says (its
// time, lengths and link type where the file holds them: -1 and the zero
// time where not, and the frame layer leaves those fields out), and a
// CodeRecordDamaged finding. It reuses the Dissector's Record like Dissect.
func (d *Dissector) DamagedRecord(re *source.RecordError) *Record {
	r := &d.rec
	r.Reset()
	r.Source, r.Frame = re.File, re.Frame
	r.Time, r.CaptureLength, r.Length, r.LinkType = re.Time, re.CaptureLength, re.Length, re.LinkType
	d.frame.Relative, d.frame.Delta = 0, 0
	d.frame.NoTime = re.Time.IsZero()
	if d.started && !d.frame.NoTime {
		d.frame.Relative, d.frame.Delta = since(re.Time, d.first), since(re.Time, d.prev)
	}
	r.Add(&d.frame, 0)
	r.Findings = append(r.Findings, RecordFinding(re))
	return r
}

// RecordFinding turns a damaged capture record into a Finding.
func RecordFinding(re *source.RecordError) finding.Finding {
	return finding.Finding{
		Code:     CodeRecordDamaged,
		Severity: finding.SeverityError,
		Message:  re.Error() + "; the rest of the file is skipped",
		Frame:    re.Frame,
		Layer:    "frame",
		Offset:   -1,
	}
}

// IsTransport reports the protocols of dissect's own adapters (frame,
// Ethernet, VLAN, IPv4, IPv6, UDP, TCP): they do not make a frame
// RDMA-relevant by themselves, and report only their own fields.
func IsTransport(p *field.Proto) bool {
	switch p {
	case ProtoFrame, ProtoEthernet, ProtoVLAN, ProtoIPv4, ProtoIPv6, ProtoUDP, ProtoTCP:
		return true
	}
	return false
}

// Relevant reports whether a record is RDMA-relevant (shown by default):
// it holds a layer beyond Ethernet/IP/UDP/TCP, or a finding.
func Relevant(r *Record) bool {
	if len(r.Findings) > 0 {
		return true
	}
	for _, l := range r.Layers {
		if !IsTransport(l.Proto()) {
			return true
		}
	}
	return false
}

// fastPrefix decodes the headers nearly every RoCEv2 frame starts with —
// Ethernet, IPv4 or IPv6, UDP, BTH — by direct calls rather than through
// the layer table and the decodingLayer interface (four interface calls
// and a table lookup per layer were most of the decode loop's cost). It
// adds the layers as the loop does and returns where the loop goes on: the
// next layer type and its bytes, the last layer decoded, done when the
// frame ends there, or the error of the layer that failed (the loop's own
// semantics; TestPrefetchSameRecords-style comparisons in
// TestFastPrefixSameRecords check them).
func (d *Dissector) fastPrefix(data []byte, icrc *icrcAt) (t gopacket.LayerType, rest []byte, last *layerEntry, done bool, err error) {
	r := &d.rec
	frameData := r.Data
	add := func(e *layerEntry, contents, payload []byte, next gopacket.LayerType) bool {
		off := offsetIn(frameData, contents)
		r.Add(e.l, off)
		d.ents = append(d.ents, e)
		last = e
		t = next
		rest = payload
		return len(payload) == 0
	}
	if err = d.eth.DecodeFromBytes(data, d); err != nil {
		return
	}
	if add(d.fastEth, d.eth.Contents, d.eth.Payload, d.eth.NextLayerType()) {
		done = true
		return
	}
	switch t {
	case layers.LayerTypeIPv4:
		if err = d.ip4.DecodeFromBytes(rest, d); err != nil {
			return
		}
		if add(d.fastIP4, d.ip4.Contents, d.ip4.Payload, d.ip4.NextLayerType()) {
			done = true
			return
		}
		icrc.ip, icrc.v6 = r.Offsets[len(r.Offsets)-1], false
	case layers.LayerTypeIPv6:
		if err = d.ip6.DecodeFromBytes(rest, d); err != nil {
			return
		}
		if add(d.fastIP6, d.ip6.Contents, d.ip6.Payload, d.ip6.NextLayerType()) {
			done = true
			return
		}
		icrc.ip, icrc.v6 = r.Offsets[len(r.Offsets)-1], true
	default:
		return
	}
	if t != layers.LayerTypeUDP {
		return
	}
	if err = d.udp.DecodeFromBytes(rest, d); err != nil {
		return
	}
	if add(d.fastUDP, d.udp.Contents, d.udp.Payload, d.udp.NextLayerType()) {
		done = true
		return
	}
	if t != ibcm.LayerTypeBTH {
		return
	}
	b := &d.ext.ib.BTH
	if stored, ok := d.ext.aheadStored(icrc.v6, icrc.ip, offsetIn(frameData, rest), len(rest)); ok {
		err = b.DecodeWithICRC(rest, d, stored)
	} else {
		err = b.DecodeFromBytes(rest, d)
	}
	if err != nil {
		return
	}
	icrc.bth = b
	if add(d.fastBTH, b.Contents, b.Payload, b.NextLayerType()) {
		done = true
	}
	return
}
