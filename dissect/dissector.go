package dissect

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// Finding codes raised by dissect itself.
const (
	// CodeMalformed: a layer could not be decoded; the layers before it
	// are kept. Severity error.
	CodeMalformed = "dissect.malformed"
	// CodeTruncated: the frame was cut short by the capture's snap length
	// inside a layer. Severity warning.
	CodeTruncated = "dissect.truncated"
	// CodeUnknownLinkType: a frame of a link type this program does not
	// dissect. Severity warning.
	CodeUnknownLinkType = "dissect.unknown-link-type"
	// CodeRecordDamaged: the capture file's record is damaged or the file
	// ends inside it; the rest of that file is skipped. Severity error.
	CodeRecordDamaged = "source.record-damaged"
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

	// ethParser decodes Ethernet … UDP/TCP; it stops (IgnoreUnsupported)
	// at the first payload it has no decoder for.
	ethParser chain
	decoded   []gopacket.LayerType

	roce [65536 / 64]uint64 // bit set of RoCEv2 UDP ports

	first, prev time.Time
	started     bool

	ext extensions

	// layerTab caches each layer type's entry (entry); ents are the
	// entries of the layers the current chain added.
	layerTab   []layerEntry
	spareEntry layerEntry
	ents       []*layerEntry
}

// New makes a Dissector.
func New(opts Options) *Dissector {
	d := &Dissector{opts: opts}
	d.frame.rec = &d.rec
	d.udp.roce = &d.roce
	d.ethParser = newChain(layers.LayerTypeEthernet, &d.eth, &d.vlan, &d.ip4, &d.ip6, &d.udp, &d.tcp)
	d.decoded = make([]gopacket.LayerType, 0, 16)
	d.rec.Layers = make([]field.Layer, 0, 24)
	d.rec.Offsets = make([]int, 0, 24)
	d.rec.Findings = make([]pvtdata.Finding, 0, 8)
	d.ents = make([]*layerEntry, 0, 24)
	d.setRoCEPort(RoCEv2Port)
	for _, p := range opts.RoCEPorts {
		d.setRoCEPort(p)
	}
	d.ext.init(d)
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
	if !d.started {
		d.first, d.prev, d.started = f.Time, f.Time, true
	}
	d.frame.Relative = f.Time.Sub(d.first)
	d.frame.Delta = f.Time.Sub(d.prev)
	d.prev = f.Time
	r.Add(&d.frame, 0)

	switch f.LinkType {
	case source.LinkTypeEthernet:
		d.dissectEthernet(f.Data)
	default:
		if !d.ext.dissectLink(f.LinkType, f.Data) {
			d.finding(CodeUnknownLinkType, pvtdata.SeverityWarning, "frame", 0,
				fmt.Sprintf("link type %d is not dissected (Ethernet 1, ERF 197 and InfiniBand 247 are)", f.LinkType))
		}
	}
	return r
}

// Finish flushes reassembly state at the end of input: PDUs completed by
// nothing more arriving, and what was left incomplete, are handed to fn in
// one end-of-input record (Frame 0, EndOfInput true; no frame layer). fn
// must not keep the Record.
func (d *Dissector) Finish(fn func(*Record)) {
	d.ext.finish(fn)
}

// finding appends a finding at frame offset off.
func (d *Dissector) finding(code string, sev pvtdata.Severity, layer string, off int, msg string) {
	d.rec.Findings = append(d.rec.Findings, pvtdata.Finding{
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

// dissectEthernet runs the Ethernet parser and hands the payload on.
func (d *Dissector) dissectEthernet(data []byte) {
	d.decodeChain(d.ethParser, data, 0)
}

// findingsAppender is implemented by layers that report what they noticed
// (offsets relative to the layer's first byte).
type findingsAppender interface {
	AppendFindings(dst []pvtdata.Finding) []pvtdata.Finding
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

// maxCachedLayerType bounds the layer types cached in Dissector.layerTab
// (gopacket's and this project's are all below it).
const maxCachedLayerType = 2048

// entry returns the layer entry of t, nil when no record layer decodes t.
func (d *Dissector) entry(t gopacket.LayerType) *layerEntry {
	var e *layerEntry
	if int(t) >= 0 && int(t) < maxCachedLayerType {
		if d.layerTab == nil {
			d.layerTab = make([]layerEntry, maxCachedLayerType)
		}
		e = &d.layerTab[t]
		if e.kind != kindUnset {
			if e.kind == kindNone {
				return nil
			}
			return e
		}
	} else {
		e = &d.spareEntry
	}
	*e = layerEntry{kind: kindNone}
	l := d.layerFor(t)
	if l == nil {
		return nil
	}
	dl, ok := l.(decodingLayer)
	if !ok {
		return nil
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
	return e
}

// decodeChain runs a DecodingLayerParser over data (which starts at frame
// offset base), adds what it decoded to the record, checks the ICRC of an
// IB packet, collects the layers' findings and turns a failure into one,
// then dispatches the payload of the last layer (extra RoCE port, iWARP
// reassembly, RC Sends).
func (d *Dissector) decodeChain(c chain, data []byte, base int) {
	d.decoded = d.decoded[:0]
	p := c.p
	err := p.DecodeLayers(data, &d.decoded)
	r := &d.rec
	frameData := r.Data
	first := len(r.Layers)
	var last decodingLayer
	var ip4 *IPv4
	var ip6 *IPv6
	icrc := icrcAt{ip: -1, grh: -1, lrh: -1}
	d.ents = d.ents[:0]
	for _, t := range d.decoded {
		e := d.entry(t)
		if e == nil {
			continue
		}
		off := offsetIn(frameData, e.dl.LayerContents())
		switch e.kind {
		case kindIPv4:
			ip4, ip6 = &d.ip4, nil
			icrc.ip, icrc.v6 = off, false
		case kindIPv6:
			ip4, ip6 = nil, &d.ip6
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
		last = e.dl
	}
	bth := d.ext.checkICRC(&icrc)
	d.collectFindings(first)
	if err != nil {
		off, name := base, c.first
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
			d.finding(CodeMalformed, pvtdata.SeverityError, lname, off,
				fmt.Sprintf("%s at frame offset %d: %v", lname, off, err))
		}
	} else if p.Truncated {
		off := base
		if last != nil {
			off = offsetIn(frameData, last.LayerContents())
		}
		d.finding(CodeTruncated, pvtdata.SeverityWarning, r.Layers[len(r.Layers)-1].Proto().Name, off,
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
			d.send(bth, last.LayerPayload())
		}
	}
}

// decodingLayer is a gopacket.DecodingLayer that also reports its bytes
// (every gopacket layer with a BaseLayer does).
type decodingLayer interface {
	gopacket.DecodingLayer
	LayerContents() []byte
}

// chain is a DecodingLayerParser and the layer type it starts with.
type chain struct {
	p     *gopacket.DecodingLayerParser
	first gopacket.LayerType
}

func newChain(first gopacket.LayerType, ls ...gopacket.DecodingLayer) chain {
	p := gopacket.NewDecodingLayerParser(first)
	// A slice indexed by layer type instead of gopacket's default map:
	// one map lookup per layer is a visible share of the per-packet cost.
	dlc := gopacket.DecodingLayerContainer(gopacket.DecodingLayerSparse(nil))
	for _, l := range ls {
		dlc = dlc.Put(l)
	}
	p.SetDecodingLayerContainer(dlc)
	p.IgnoreUnsupported = true
	return chain{p: p, first: first}
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
// only the frame pseudo-layer and a CodeRecordDamaged finding. It reuses
// the Dissector's Record like Dissect.
func (d *Dissector) DamagedRecord(re *source.RecordError) *Record {
	r := &d.rec
	r.Reset()
	r.Source, r.Frame, r.LinkType = re.File, re.Frame, -1
	d.frame.Relative, d.frame.Delta = 0, 0
	r.Add(&d.frame, 0)
	r.Findings = append(r.Findings, RecordFinding(re))
	return r
}

// RecordFinding turns a damaged capture record into a Finding.
func RecordFinding(re *source.RecordError) pvtdata.Finding {
	return pvtdata.Finding{
		Code:     CodeRecordDamaged,
		Severity: pvtdata.SeverityError,
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
