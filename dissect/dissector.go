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

// Dissector decodes frames into Records. It is not safe for concurrent use;
// run one per goroutine. It reuses one Record and its layer values: the
// Record returned by Dissect is valid until the next call.
type Dissector struct {
	rec   Record
	frame Frame

	hdr   commonHeaders // Ethernet … UDP, TCP
	walk  headerWalk    // over hdr
	ib    *ibcm.Stack   // the InfiniBand layers
	roce  portSet       // the UDP ports of RoCEv2
	hosts hostNames     // the IP layers' names (Options.HostNames)

	// truncated is set (gopacket.DecodeFeedback) by a layer that found the
	// frame cut short by the snap length.
	truncated bool
	// icrcAbsentNoted: CodeICRCNotCaptured was reported (once a run).
	icrcAbsentNoted bool

	// The capture times of the run's first frame and of the frame
	// before (started: there was one).
	first, prev stamp
	started     bool

	icrc ibcm.ICRCChecker
	// ahead is the frame's source.Ahead while Dissect runs (Ahead).
	ahead source.Ahead

	// The reassemblers and the decoder of the Sends they complete.
	iwarp *IWARP
	rc    *RCSends
	sends *ulpSends

	// layerTab caches each layer type's entry by its layerSlots number
	// (entry); finders are the layers the current chain added that report
	// findings (the common headers report none).
	layerTab []layerEntry
	finders  []finder

	// The entries of the common headers and the BTH, which decodeLayers
	// decodes by direct calls, and of the IB extension headers: those of
	// the layers a predecoded frame holds, by kind.
	preEnts [numKinds]*layerEntry

	// laid: the record holds the first layers of the common RoCEv2 frame
	// and its Headers (layPlain). preHdr are the Headers of another
	// predecoded frame (IPv4; the BTH's index and the extension headers
	// are the frame's).
	laid   bool
	preHdr Headers
}

// New makes a Dissector configured by opts.
func New(opts Options) *Dissector {
	d := &Dissector{ib: ibcm.NewStack()}
	d.frame.rec = &d.rec
	d.hdr.udp.roce = &d.roce
	if opts.ResolveNames || opts.HostFields {
		d.hosts = hostNames{names: opts.HostNames, resolve: opts.ResolveNames, fields: opts.HostFields}
		d.hdr.ip4.hosts, d.hdr.ip6.hosts = &d.hosts, &d.hosts
	}
	d.walk.h, d.walk.df = &d.hdr, d
	d.roce = rocePorts(opts)
	d.rec.Layers = make([]field.Layer, 0, 24)
	d.rec.Offsets = make([]int, 0, 24)
	d.rec.Findings = make([]finding.Finding, 0, 8)
	d.finders = make([]finder, 0, 24)
	d.layerTab = make([]layerEntry, len(layerSlots)+1)
	d.sends = newULPSends(opts)
	d.rc = newRCSends(opts, d.sends)
	d.iwarp = newIWARP(opts, d.sends)
	for _, k := range walkedKinds {
		// Each header its own entry: the stacked VLAN tags are layers of
		// one layer type.
		l := d.hdr.layer(k)
		d.preEnts[k] = &layerEntry{l: l.(field.Layer), dl: l, kind: kindOther}
	}
	for k := preBTH; k < numPredecoded; k++ {
		d.preEnts[k] = d.entry(predecodedTypes[k])
	}
	d.preHdr = Headers{IPv4: &d.hdr.ip4, BTH: &d.ib.BTH, BTHAt: -1}
	return d
}

// portSet is a set of UDP ports.
type portSet [65536 / 64]uint64

func (s *portSet) add(p uint16)      { s[p/64] |= 1 << (p % 64) }
func (s *portSet) has(p uint16) bool { return s[p/64]&(1<<(p%64)) != 0 }

// rocePorts is the set of the RoCEv2 ports: 4791 and opts.RoCEPorts.
func rocePorts(opts Options) portSet {
	var s portSet
	s.add(RoCEv2Port)
	for _, p := range opts.RoCEPorts {
		s.add(p)
	}
	return s
}

// IsRoCEPort reports whether UDP port p is decoded as RoCEv2.
func (d *Dissector) IsRoCEPort(p uint16) bool { return d.roce.has(p) }

// SendStats returns the RC Send reassembly's counters.
func (d *Dissector) SendStats() RCSendStats { return d.rc.Stats() }

// Dissect decodes one frame. The returned Record (and every layer in it)
// is reused by the next call.
func (d *Dissector) Dissect(f *source.Frame) *Record {
	r := &d.rec
	r.clear() // (the rest of it is the frame's, set here)
	r.Source, r.Frame, r.Time = f.Source, f.Number, f.Time
	r.CaptureLength, r.Length, r.LinkType = f.CaptureLength, f.Length, f.LinkType
	r.Data, r.Comments = f.Data, f.Comments
	now := stampOf(f.Time)
	if !d.started {
		d.first, d.prev, d.started = now, now, true
	}
	rel, near := now.sinceNear(d.first)
	delta, nearPrev := now.sinceNear(d.prev)
	if !near || !nearPrev {
		rel, delta = now.since(d.first), now.since(d.prev)
	}
	d.frame.Relative, d.frame.Delta, d.frame.NoTime = rel, delta, false
	d.prev = now
	if p, _ := f.Decoded.(*predecoded); p != nil && p.frame == f.Number {
		d.predecodedFrame(p)
		return r
	}
	d.laid = false
	r.Add(&d.frame, 0)
	d.ahead = f.Ahead
	if t, ok := linkStart(f.LinkType, f.Data); ok {
		d.decodeChain(t, f.Data, 0)
		d.ahead = source.Ahead{}
		return r
	}
	switch f.LinkType {
	case source.LinkTypeInfiniBand:
		d.decodeChain(ibcm.LayerTypeLRH, f.Data, 0)
	case source.LinkTypeERF:
		d.decodeChain(ibcm.LayerTypeERF, f.Data, 0)
	default:
		d.unknownLinkType(f.LinkType)
	}
	d.ahead = source.Ahead{}
	return r
}

// unknownLinkType reports a frame of a link type that is not dissected
// (apart from Dissect, like decodeChain's other rare paths, so that the
// per-packet code stays dense in the instruction cache).
//
//go:noinline
func (d *Dissector) unknownLinkType(lt int) {
	d.rec.addFinding(CodeUnknownLinkType, finding.SeverityWarning, "", "frame", 0,
		fmt.Sprintf("link type %d is not dissected (Ethernet 1, raw IP 101, 228 and 229, Linux cooked 113 and 276, ERF 197 and InfiniBand 247 are)", lt))
}

// stamp is a capture timestamp as its Unix seconds and nanoseconds
// (time.Time.Unix, Nanosecond).
type stamp struct{ sec, nsec int64 }

func stampOf(t time.Time) stamp { return stamp{t.Unix(), int64(t.Nanosecond())} }

// since is t.Sub(u) for capture timestamps (no monotonic reading): from
// the seconds and nanoseconds when both lie within 2^32 s of the epoch
// (sinceNear; every pcap timestamp does), by Sub otherwise.
func (t stamp) since(u stamp) time.Duration {
	if d, ok := t.sinceNear(u); ok {
		return d
	}
	return time.Unix(t.sec, t.nsec).Sub(time.Unix(u.sec, u.nsec))
}

// sinceNear is since from the seconds and nanoseconds, false unless both
// lie within 2^32 s of the epoch (the difference then cannot overflow).
// Sub checks its result for overflow with an Add and an Equal: two Subs
// per frame were ~8% of the whole per-packet cost. (It inlines, since with
// its call of Sub does not.)
func (t stamp) sinceNear(u stamp) (time.Duration, bool) {
	const lim = 1 << 32
	if uint64(t.sec+lim)|uint64(u.sec+lim) >= 2*lim {
		return 0, false
	}
	return time.Duration(t.sec-u.sec)*time.Second + time.Duration(t.nsec-u.nsec), true
}

// Finish flushes reassembly state at the end of input: PDUs completed by
// nothing more arriving, and what was left incomplete, are handed to fn in
// one end-of-input record (Frame 0, EndOfInput true; no frame layer). fn
// must not keep the Record.
func (d *Dissector) Finish(fn func(*Record)) {
	r := &d.rec
	r.Reset()
	d.laid = false
	r.Frame = 0
	r.LinkType = -1
	d.iwarp.Flush(r)
	d.rc.Flush(r)
	if len(r.Layers) > 0 || len(r.Findings) > 0 {
		fn(r)
	}
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

// SetTruncated implements gopacket.DecodeFeedback: a layer found the frame
// cut short by the capture's snap length.
func (d *Dissector) SetTruncated() { d.truncated = true }

// findingsAppender is implemented by layers that report what they noticed
// (offsets relative to the layer's first byte).
type findingsAppender interface {
	AppendFindings(dst []finding.Finding) []finding.Finding
}

// finder is a layer the current chain added that reports findings, and
// its frame offset.
type finder struct {
	fa  findingsAppender
	off int
}

// collectFindings appends the findings of the layers d.finders, their
// offsets made frame-relative.
func (d *Dissector) collectFindings() {
	r := &d.rec
	for _, f := range d.finders {
		first := len(r.Findings)
		r.Findings = f.fa.AppendFindings(r.Findings)
		r.placeFindings(first, f.off)
	}
}

// layerKind is what decodeChain needs to know of a layer beyond its
// interfaces.
type layerKind uint8

const (
	kindUnset layerKind = iota // not looked up yet
	kindNone                   // no record layer for this layer type
	kindOther
	kindGRH
	kindLRH
	kindERF
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
	d := Dissector{ib: ibcm.NewStack()}
	for _, l := range d.allLayers() {
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
	e := &d.layerTab[i]
	if e.kind == kindUnset {
		d.fillEntry(e, t)
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
	case *ibcm.GRH:
		e.kind = kindGRH
	case *ibcm.LRH:
		e.kind = kindLRH
	case *ibcm.ERF:
		e.kind = kindERF
	}
}

// decodeLayers decodes data from layer type first on, as gopacket's
// DecodingLayerParser does with IgnoreUnsupported (it stops quietly at the
// first payload it has no decoder for), adding each layer to the record;
// last is the last layer decoded. The common headers (headerWalk) and the
// BTH, the headers nearly every RoCEv2 frame starts with, are decoded by
// direct calls, the others through the layer table. A panic in a decoder
// is an error.
func (d *Dissector) decodeLayers(first gopacket.LayerType, data []byte, icrc *icrcAt) (last *layerEntry, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	r := &d.rec
	frameData := r.Data
	t := first
	for {
		if isHeader(t) {
			w := &d.walk
			t, data, err = w.walk(r, t, data)
			if w.n > 0 {
				last = d.preEnts[w.last]
				if w.cur != &d.hdr {
					last = &w.cur.ents[w.last] // inside an encapsulation
				}
				if w.ip >= 0 {
					icrc.ip, icrc.v6 = w.ip, w.v6
				}
			}
			if err != nil || w.done {
				return last, err
			}
		}
		if t == ibcm.LayerTypeBTH {
			// The BTH by direct calls (its interface calls were a visible
			// share of the loop).
			b := &d.ib.BTH
			if err = d.decodeBTH(b, data, icrc); err != nil {
				return last, err
			}
			icrc.bth = b
			off := offsetIn(frameData, b.Contents)
			r.Add(b, off)
			d.finders = append(d.finders, finder{b, off})
			last = d.preEnts[preBTH]
			t = b.NextLayerType()
			if data = b.Payload; len(data) == 0 {
				return last, nil
			}
			continue
		}
		e := d.entry(t)
		if e == nil {
			return last, nil
		}
		if err := e.dl.DecodeFromBytes(data, d); err != nil {
			return last, err
		}
		off := offsetIn(frameData, e.dl.LayerContents())
		switch e.kind {
		case kindGRH:
			icrc.grh = off
		case kindLRH:
			icrc.lrh = off
		case kindERF:
			r.erfLengths(len(e.dl.LayerContents()))
		}
		r.Add(e.l, off)
		if e.fa != nil {
			d.finders = append(d.finders, finder{e.fa, off})
		}
		last = e
		t = e.dl.NextLayerType()
		if data = e.dl.LayerPayload(); len(data) == 0 {
			return last, nil
		}
	}
}

// decodeBTH decodes the BTH in data, with the ICRC octets read ahead when
// the reading goroutine found this packet where decodeLayers did.
func (d *Dissector) decodeBTH(b *ibcm.BTH, data []byte, icrc *icrcAt) error {
	if stored, ok := d.aheadStored(icrc.v6, icrc.ip, offsetIn(d.rec.Data, data), len(data)); ok {
		return b.DecodeWithICRC(data, d, stored)
	}
	err := b.DecodeFromBytes(data, d)
	if d.truncated && err == nil {
		// Before the extension headers decode from its payload.
		d.bthUncaptured(b, data, icrc)
	}
	return err
}

// decodeChain decodes data (which starts at frame offset base) from layer
// type first on (decodeLayers), adds what it decoded to the record,
// checks the ICRC of an
// IB packet, collects the layers' findings and turns a failure into one,
// then dispatches the payload of the last layer (extra RoCE port, iWARP
// reassembly, RC Sends). A frame the reading goroutine decoded goes
// through predecodedFrame instead.
func (d *Dissector) decodeChain(first gopacket.LayerType, data []byte, base int) {
	r := &d.rec
	icrc := icrcAt{ip: -1, grh: -1, lrh: -1}
	d.finders = d.finders[:0]
	d.truncated = false
	lastEntry, err := d.decodeLayers(first, data, &icrc)
	var last decodingLayer
	var ip4 *IPv4
	var ip6 *IPv6
	if lastEntry != nil {
		last = lastEntry.dl
	}
	d.noteHeaders(&icrc, last)
	if icrc.ip >= 0 {
		if icrc.v6 {
			ip6 = &d.walk.cur.ip6
		} else {
			ip4 = &d.walk.cur.ip4
		}
	}
	bth := d.checkICRC(&icrc)
	cm, isCM := last.(*ibcm.CM)
	if isCM && err == nil {
		// Before its findings are collected: they depend on the service.
		d.sends.services.hintCM(r, cm)
	}
	d.collectFindings()
	if err != nil || d.truncated {
		d.chainFailed(err, first, base, last)
	}
	if last == nil || err != nil {
		return
	}
	if isCM {
		d.learnCM(cm)
	}
	switch l := last.(type) {
	case *TCP:
		d.tcpSegment(l, ip4, ip6)
	default:
		if bth != nil && bth.OpCode.IsSend() {
			// The Send payload is what follows the last extension header.
			d.sendOn(r, bth, d.ib.IETH.RKey, last.LayerPayload())
		} else if bth != nil && movesChunkData(bth.OpCode) && d.sends.rpc.chunks.waiting() {
			d.sends.rpc.chunks.ibPacket(r, bth, &d.ib.RETH, last.LayerPayload())
		}
	}
}

// chainFailed adds decodeChain's finding for a layer that failed to
// decode (err; first and base: where the chain began; last: the last
// layer decoded), or, with no error, for a frame cut short by the snap
// length. The rare paths of decodeChain are functions of their own
// (noinline): inlined, they spread its per-packet code over more of the
// instruction cache.
//
//go:noinline
func (d *Dissector) chainFailed(err error, first gopacket.LayerType, base int, last decodingLayer) {
	r := &d.rec
	if d.truncated {
		d.cutPacket()
	}
	if err != nil {
		off, name := base, first
		if last != nil {
			off = offsetIn(r.Data, last.LayerPayload())
			name = last.NextLayerType()
		}
		var ule gopacket.UnsupportedLayerType
		if !errors.As(err, &ule) {
			lname := layerName(name)
			if l := d.layerFor(name); l != nil {
				lname = l.Proto().Name // "bth", not gopacket's "BTH"
			}
			if d.snapFailed(err, off) {
				d.snapTruncated(lname, off, err, d.snapFixedCut(d.layerFor(name), off))
				return
			}
			r.addFinding(CodeMalformed, finding.SeverityError, "", lname, off,
				fmt.Sprintf("%s at frame offset %d: %v", lname, off, err))
		}
		return
	}
	off := base
	if last != nil {
		off = offsetIn(r.Data, last.LayerContents())
	}
	lname := r.Layers[len(r.Layers)-1].Proto().Name
	if r.CaptureLength >= r.Length {
		d.shortFrame(lname, off)
		return
	}
	r.addFinding(CodeTruncated, finding.SeverityWarning, "", lname, off,
		fmt.Sprintf("frame cut at %d of %d bytes by the capture's snap length", r.CaptureLength, r.Length))
}

// learnCM follows the connection a CM message belongs to; when it ends,
// its QPs' Send reassembly goes too (keyed by the flow from the peer to
// the QP), and the calls sent on it with their chunks.
//
//go:noinline
func (d *Dissector) learnCM(cm *ibcm.CM) {
	if c, ended := d.sends.services.learnCM(&d.rec, cm); ended {
		d.sends.rpc.end(c.s.id)
		if f, err := gopacket.FlowFromEndpoints(c.serverQP.node, c.clientQP.node); err == nil {
			d.rc.end(QPKey{f, c.clientQP.qpn})
			d.rc.end(QPKey{f.Reverse(), c.serverQP.qpn})
		}
	}
}

// tcpSegment hands a TCP segment (of the IP packet ip4 or ip6) to the
// iWARP reassembly.
//
//go:noinline
func (d *Dissector) tcpSegment(l *TCP, ip4 *IPv4, ip6 *IPv6) {
	var netFlow gopacket.Flow
	if ip4 != nil {
		netFlow = ip4.NetworkFlow()
	} else if ip6 != nil {
		netFlow = ip6.NetworkFlow()
	}
	d.iwarp.Segment(&d.rec, netFlow, &l.TCP)
}

// decodingLayer is a gopacket.DecodingLayer that also reports its bytes
// (every gopacket layer with a BaseLayer does).
type decodingLayer interface {
	gopacket.DecodingLayer
	LayerContents() []byte
}

// allLayers are the layers decodeChain decodes, whatever the link type
// (a RoCE UDP port and ethertype 0x8915 lead from the Ethernet layers into
// the IB ones; ERF leads to Ethernet or the LRH).
func (d *Dissector) allLayers() []gopacket.DecodingLayer {
	h := &d.hdr
	return append([]gopacket.DecodingLayer{&h.eth, &h.sll, &h.ipoib, &h.vlan[0], &h.ip4, &h.ip6, &h.udp, &h.tcp, &h.gre, &h.erspan, &h.vxlan},
		d.ib.DecodingLayers()...)
}

// layerFor returns the record layer that decoded layer type t.
func (d *Dissector) layerFor(t gopacket.LayerType) field.Layer {
	if l := d.hdr.layerFor(t); l != nil {
		return l
	}
	s := d.ib
	switch t {
	case ibcm.LayerTypeERF:
		return &s.ERF
	case ibcm.LayerTypeLRH:
		return &s.LRH
	case ibcm.LayerTypeGRH:
		return &s.GRH
	case ibcm.LayerTypeBTH:
		return &s.BTH
	case ibcm.LayerTypeDETH:
		return &s.DETH
	case ibcm.LayerTypeRETH:
		return &s.RETH
	case ibcm.LayerTypeAETH:
		return &s.AETH
	case ibcm.LayerTypeIETH:
		return &s.IETH
	case ibcm.LayerTypeImmDt:
		return &s.ImmDt
	case ibcm.LayerTypeAtomicETH:
		return &s.AtomicETH
	case ibcm.LayerTypeAtomicAckETH:
		return &s.AtomicAckETH
	case ibcm.LayerTypeMAD:
		return &s.MAD
	case ibcm.LayerTypeCM:
		return &s.CM
	}
	return nil
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
	d.laid = false
	r.Source, r.Frame = re.File, re.Frame
	r.Time, r.CaptureLength, r.Length, r.LinkType = re.Time, re.CaptureLength, re.Length, re.LinkType
	d.frame.Relative, d.frame.Delta = 0, 0
	d.frame.NoTime = re.Time.IsZero()
	if d.started && !d.frame.NoTime {
		now := stampOf(re.Time)
		d.frame.Relative, d.frame.Delta = now.since(d.first), now.since(d.prev)
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
// Ethernet, Linux cooked capture, VLAN, IPv4, IPv6, UDP, TCP): they do not make a frame
// RDMA-relevant by themselves, and report only their own fields.
func IsTransport(p *field.Proto) bool {
	switch p {
	case ProtoFrame, ProtoEthernet, ProtoSLL, ProtoVLAN, ProtoIPv4, ProtoIPv6, ProtoUDP, ProtoTCP, ProtoGRE, ProtoERSPAN, ProtoVXLAN:
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
			// A LINKTYPE_IPOIB link layer is transport; its protocol is
			// also that of IPoIB-CM inside RC Sends, which is not.
			if _, link := l.(*IPoIBLink); !link {
				return true
			}
		}
	}
	return false
}
