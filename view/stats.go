package view

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"unsafe"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/fieldval"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// Stats counts packets by protocol, by the values of chosen enumerated
// fields (the CM message type cm.attribute_id, the BTH opcode …), and
// findings by code and severity.
type Stats struct {
	Packets int
	Bytes   int64
	// ByProto counts the frames that contain each protocol (a frame with
	// two rpcrdma layers counts once).
	ByProto map[string]int
	// ByValue counts, per breakdown field, the occurrences of each value.
	ByValue map[*field.Field]map[uint64]int
	// ByFinding counts findings by code; Severity the worst severity seen
	// per code.
	ByFinding map[string]int
	Severity  map[string]string
	// Interfaces are the captures' own counts per interface (pcapng
	// Interface Statistics Blocks): what the capture received and lost.
	Interfaces []source.InterfaceStats

	breakdown []*field.Field
	col       *fieldval.Collector
	counter   valueCounter
	one       oneCounter
	// protoCounts counts frames per protocol (a dozen in a capture).
	protoCounts []*protoCount
	// dense counts, per collector slot, the values below denseValues
	// (opcodes, message types, procedures: nearly every value); Flush
	// moves them into ByValue, larger values go there directly.
	dense [][denseValues]int
	// byType finds a layer's counter by the layer's dynamic type (an
	// open-addressed table from typeSlot on), without a call of its Proto
	// method per layer; types is how many slots are taken.
	byType [typeSlots]typeEntry
	types  int
	// seqs are the layer sequences seen (a capture has a few dozen:
	// Ethernet, IPv4, UDP, BTH, AETH …), found by their length and last
	// layer's type word (seqSlot): a record whose layers' type words are
	// those of a sequence is counted once, on the sequence, instead of a
	// hash, a lookup and a per-protocol stamp per layer; the frames per
	// protocol are summed from the sequences in Flush. Past maxLayers
	// (maxSeqLayers) layers in them all (only a capture of unusual layer
	// sequences gets there), records of a sequence not kept are counted
	// layer by layer (countEach).
	seqs      [seqSlots]*sequence
	seqList   []*sequence
	seqLayers int
	maxLayers int
}

// sequence is a sequence of layer types: the records whose layers have
// these type words.
type sequence struct {
	// tabs are the type words of its layers but the last, last the last
	// one's.
	tabs []unsafe.Pointer
	last unsafe.Pointer
	// n is the records of the sequence.
	n int
	// protos are its layers' protocols, each once.
	protos []*protoCount
	// want is the first of its layers with breakdown fields, whose values
	// are counted per record (a list: the loop over it keeps less across
	// the calls than a loop over a slice).
	want *seqWant
	// next is the next sequence of the same slot of Stats.seqs.
	next *sequence
}

// seqWant is a layer of a sequence with breakdown fields.
type seqWant struct {
	// off is the layer's offset in the record's Layers (layer), pc its
	// protocol's counter.
	off uintptr
	pc  *protoCount
	// only is pc's one breakdown field when it has one and the layer type
	// is a field.UintGetter (the usual case), counted in Print into dense,
	// its row of Stats.dense; else nil.
	only  *field.Field
	dense *[denseValues]int
	// get is the layer as a field.UintGetter (each place in a sequence
	// has its own: two layers of one type in a frame, each a layer value
	// of its own, keep their conversions).
	get  getterCache
	next *seqWant
}

// layer returns w's layer of layers, a record's layers of w's sequence
// (without a bounds check: it cannot fail).
func (w *seqWant) layer(layers []field.Layer) *field.Layer {
	return (*field.Layer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(layers)), w.off))
}

// seqSlots is the size of Stats.seqs; maxSeqLayers bounds the layers of
// all the sequences kept (their memory, whatever the capture).
const (
	seqBits      = 6
	seqSlots     = 1 << seqBits
	maxSeqLayers = 1 << 14
)

// seqSlot is the slot of Stats.seqs for a sequence of n layers whose last
// layer has type word tab.
func seqSlot(n int, tab unsafe.Pointer) uint64 {
	return (uint64(uintptr(tab)) + uint64(n)) * 0x9E3779B97F4A7C15 >> (64 - seqBits)
}

// typeEntry is a slot of Stats.byType: the counter of the layers whose
// interface type word is tab (an itab, one per layer type).
type typeEntry struct {
	tab unsafe.Pointer
	pc  *protoCount
	// get is the type's conversion for countEach.
	get getterCache
}

// getterCache holds a layer value as a field.UintGetter: get is the layer
// whose interface data word is data (nil: its type is not one). The
// Dissector reuses its layer values, so the same one comes back frame
// after frame and its conversion, a type assertion per layer, is a
// comparison.
type getterCache struct {
	data unsafe.Pointer
	get  field.UintGetter
}

// getter returns *l, a layer of the type the cache is for, as a
// field.UintGetter; ok is false when its type is not one.
func (c *getterCache) getter(l *field.Layer) (g field.UintGetter, ok bool) {
	if dataWord(l) != c.data {
		c.convert(*l)
	}
	return c.get, c.get != nil
}

// convert notes l and its conversion.
//
//go:noinline
func (c *getterCache) convert(l field.Layer) {
	c.data = dataWord(&l)
	c.get, _ = l.(field.UintGetter)
}

// dataWord is the second word of the interface value *l: the pointer to
// the layer.
func dataWord(l *field.Layer) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(l))[1] }

// typeSlots is the size of Stats.byType: more than the project's layer
// types, so that the dozen of a capture are nearly all found at the first
// slot tried (the others by findType).
const (
	typeBits  = 6
	typeSlots = 1 << typeBits
)

// typeSlot is the slot of byType for an interface type word (a
// multiplicative hash: the word's high bits after multiplying by 2^64/φ).
func typeSlot(tab unsafe.Pointer) uint64 {
	return uint64(uintptr(tab)) * 0x9E3779B97F4A7C15 >> (64 - typeBits)
}

// denseValues bounds the breakdown values counted in an array rather than
// a map (one map update per value was a visible share of stats' time).
const denseValues = 256

type protoCount struct {
	p *field.Proto
	// n is the frames counted layer by layer (countEach), not by their
	// sequence; sum, the total (Flush).
	n, sum int
	// stamp is the packet number that last counted p in countEach;
	// wanted: a breakdown field is p's.
	stamp  int
	wanted bool
	// only is p's one breakdown field and its slot, when p has exactly
	// one (the usual case: bth.opcode, rpc.procedure …); nil otherwise.
	only     *field.Field
	onlySlot int
	// fields are p's breakdown fields and their slots, when few enough to
	// be asked of a field.UintGetter layer one by one (maxGot).
	fields []slotField
}

type slotField struct {
	f    *field.Field
	slot int
}

// maxGot bounds the breakdown fields of one protocol asked of a
// field.UintGetter; a protocol with more is visited.
const maxGot = 4

// protoCount returns p's counter, made on first sight.
func (s *Stats) protoCount(p *field.Proto) *protoCount {
	for _, pc := range s.protoCounts {
		if pc.p == p {
			return pc
		}
	}
	pc := &protoCount{p: p, stamp: -1, wanted: s.col.WantsProto(p)}
	for i, f := range s.col.Wanted() {
		if f.Proto == p {
			pc.fields = append(pc.fields, slotField{f, i})
		}
	}
	if len(pc.fields) == 1 {
		pc.only, pc.onlySlot = pc.fields[0].f, pc.fields[0].slot
	}
	if len(pc.fields) > maxGot {
		pc.fields = nil
	}
	s.protoCounts = append(s.protoCounts, pc)
	return pc
}

// NewStats counts values of the named fields (each must be an integer
// field; enumerated ones are shown by name).
func NewStats(breakdown []string) (*Stats, error) {
	s := &Stats{
		ByProto:   map[string]int{},
		ByValue:   map[*field.Field]map[uint64]int{},
		ByFinding: map[string]int{},
		Severity:  map[string]string{},
		col:       fieldval.New(),
	}
	// Breakdown fields are top-level fields of their own protocol's layer:
	// only those layers need visiting.
	s.col.OwnOnly = true
	for _, n := range breakdown {
		f, ok := field.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("stats --by %s: no such field (cmpd-dissect fields lists them)", n)
		}
		if f.Kind != field.KindUint && f.Kind != field.KindHex {
			return nil, fmt.Errorf("stats --by %s: not an integer field (%s)", n, f.Kind)
		}
		if f.Members != nil {
			return nil, fmt.Errorf("stats --by %s: counts one field per layer; give %s or %s", n, f.Members[0].Name, f.Members[1].Name)
		}
		s.breakdown = append(s.breakdown, f)
		s.ByValue[f] = map[uint64]int{}
		s.col.Want(f)
	}
	s.dense = make([][denseValues]int, len(s.col.Wanted()))
	s.counter = valueCounter{s: s}
	s.maxLayers = maxSeqLayers
	return s, nil
}

// Print adds a record (Stats is a Printer so the command treats it like a
// view).
func (s *Stats) Print(r *dissect.Record) error {
	s.Packets++
	if r.Length > 0 {
		// (-1: a damaged record whose header is cut.)
		s.Bytes += int64(r.Length)
	}
	// The record's sequence of layer types: every value of a layer type
	// reports the same Proto (field.Layer), so a layer's is known by the
	// interface's type word, the first of its two, instead of a call of
	// Proto.
	if n := len(r.Layers); n > 0 {
		layers := r.Layers
		last := *(*unsafe.Pointer)(unsafe.Pointer(&layers[n-1]))
		q := s.seqs[seqSlot(n, last)]
	find:
		for ; q != nil; q = q.next {
			if q.last != last || len(q.tabs) != n-1 {
				continue
			}
			// (A pointer stepped along layers: an index costs a shift
			// and a move per layer.)
			p := unsafe.Pointer(unsafe.SliceData(layers))
			for _, t := range q.tabs {
				if *(*unsafe.Pointer)(p) != t {
					continue find
				}
				p = unsafe.Add(p, unsafe.Sizeof(layers[0]))
			}
			break
		}
		if q == nil {
			q = s.newSequence(layers, last)
		}
		if q == nil {
			s.countEach(layers)
		} else {
			q.n++
			for w := q.want; w != nil; w = w.next {
				if w.only != nil {
					// The usual case, counted here: one breakdown
					// field of a field.UintGetter layer (g is not nil).
					g, _ := w.get.getter(w.layer(layers))
					if v, has, known := g.GetUint(w.only); known {
						if has {
							if v < denseValues {
								w.dense[v]++
							} else {
								s.countLarge(w.only, v)
							}
						}
						continue
					}
				}
				s.countValues(&w.get, w.layer(layers), w.pc)
			}
		}
	}
	if len(r.Findings) > 0 {
		s.countFindings(r.Findings)
	}
	return nil
}

// countValues counts the breakdown fields of *l, a layer of pc's protocol
// (c: the cache of its conversion). Breakdown fields are integer fields
// reported by their own protocol's layer: only those layers are looked at.
// A layer that can give the fields' values (UintGetter) is asked for them:
// visiting all of a BTH's or RPC header's fields for one or two of them
// was two fifths of stats' per-packet time.
//
//go:noinline
func (s *Stats) countValues(c *getterCache, l *field.Layer, pc *protoCount) {
	if g, ok := c.getter(l); ok && len(pc.fields) > 0 && s.countGot(g, pc) {
		return
	}
	s.visitValues(*l, pc)
}

// countLarge counts value v of f, too large for Stats.dense.
//
//go:noinline
func (s *Stats) countLarge(f *field.Field, v uint64) { s.ByValue[f][v]++ }

// newSequence makes the sequence of layers (the last one's type word
// last); nil once the sequences kept hold maxLayers layers.
//
//go:noinline
func (s *Stats) newSequence(layers []field.Layer, last unsafe.Pointer) *sequence {
	if s.seqLayers+len(layers) > s.maxLayers {
		return nil
	}
	s.seqLayers += len(layers)
	q := &sequence{tabs: make([]unsafe.Pointer, len(layers)-1), last: last}
	want := &q.want
	for i, l := range layers {
		tab := *(*unsafe.Pointer)(unsafe.Pointer(&l))
		if i < len(q.tabs) {
			q.tabs[i] = tab
		}
		e := s.entry(l, tab)
		pc := e.pc
		if !slices.Contains(q.protos, pc) {
			q.protos = append(q.protos, pc)
		}
		if !pc.wanted {
			continue
		}
		w := &seqWant{off: uintptr(i) * unsafe.Sizeof(l), pc: pc}
		if _, ok := l.(field.UintGetter); ok && pc.only != nil {
			w.only, w.dense = pc.only, &s.dense[pc.onlySlot]
		}
		*want = w
		want = &w.next
	}
	// Last in its slot: the sequences seen first, nearly always the
	// common ones, are found first.
	link := &s.seqs[seqSlot(len(layers), last)]
	for *link != nil {
		link = &(*link).next
	}
	*link = q
	s.seqList = append(s.seqList, q)
	return q
}

// countEach counts a record whose layer sequence is not kept (Stats.seqs
// is full) layer by layer.
//
//go:noinline
func (s *Stats) countEach(layers []field.Layer) {
	n := s.Packets
	for _, l := range layers {
		e := s.entry(l, *(*unsafe.Pointer)(unsafe.Pointer(&l)))
		pc := e.pc
		if pc.stamp != n {
			// A frame with two layers of one protocol counts once.
			pc.stamp = n
			pc.n++
		}
		if pc.wanted {
			s.countValues(&e.get, &l, pc)
		}
	}
}

// entry returns the entry of byType for the layer type of l (type word
// tab).
func (s *Stats) entry(l field.Layer, tab unsafe.Pointer) *typeEntry {
	e := &s.byType[typeSlot(tab)]
	if e.tab != tab {
		e = s.findType(l, tab)
	}
	return e
}

// findType returns the entry of byType for the layer type of l (type word
// tab): searched from typeSlot on, made on first sight of the type while
// more than one slot is free (so that every search ends).
//
//go:noinline
func (s *Stats) findType(l field.Layer, tab unsafe.Pointer) *typeEntry {
	for j := typeSlot(tab); ; j = (j + 1) % typeSlots {
		e := &s.byType[j]
		if e.tab == tab {
			return e
		}
		if e.tab == nil {
			pc := s.protoCount(l.Proto())
			if s.types == typeSlots-1 {
				return &typeEntry{tab: tab, pc: pc}
			}
			s.types++
			e.tab, e.pc = tab, pc
			return e
		}
	}
}

// visitValues counts the breakdown fields of l, a layer of pc's protocol
// that does not give their values (UintGetter), by a visit: by a visitor
// that counts the values as they come; for one breakdown field, by a
// visitor that compares each field with it.
//
//go:noinline
func (s *Stats) visitValues(l field.Layer, pc *protoCount) {
	if pc.only != nil {
		s.one = oneCounter{s: s, f: pc.only, slot: pc.onlySlot}
		l.VisitFields(&s.one)
	} else {
		l.VisitFields(&s.counter)
	}
}

// countFindings counts a record's findings by code and notes the worst
// severity of each code (out of Print: most records have none).
//
//go:noinline
func (s *Stats) countFindings(fs []finding.Finding) {
	for i := range fs {
		f := &fs[i]
		s.ByFinding[f.Code]++
		if sv := f.Severity.String(); severityRank(sv) > severityRank(s.Severity[f.Code]) {
			s.Severity[f.Code] = sv
		}
	}
}

// countGot counts pc's breakdown fields as g gives them and reports whether
// g knew them all (else nothing is counted and the layer is visited).
func (s *Stats) countGot(g field.UintGetter, pc *protoCount) bool {
	if f := pc.only; f != nil {
		// The usual case, one field: no values to hold until all are known.
		v, has, known := g.GetUint(f)
		if !known {
			return false
		}
		if has {
			if v < denseValues {
				s.dense[pc.onlySlot][v]++
			} else {
				s.ByValue[f][v]++
			}
		}
		return true
	}
	var vals [maxGot]uint64
	var haves [maxGot]bool
	for i, w := range pc.fields {
		v, has, known := g.GetUint(w.f)
		if !known {
			return false
		}
		vals[i], haves[i] = v, has
	}
	for i, w := range pc.fields {
		if !haves[i] {
			continue
		}
		if v := vals[i]; v < denseValues {
			s.dense[w.slot][v]++
		} else {
			s.ByValue[w.f][v]++
		}
	}
	return true
}

// valueCounter is the field.Visitor that counts the breakdown fields'
// values: integers only (NewStats takes no other kind), straight into the
// counts, nothing kept per packet.
type valueCounter struct {
	field.NopVisitor
	s *Stats
}

func (c *valueCounter) Uint(f *field.Field, v uint64) {
	s := c.s
	slot := s.col.Slot(f)
	if slot < 0 {
		return
	}
	if v < denseValues {
		s.dense[slot][v]++
		return
	}
	s.ByValue[f][v]++
}

// oneCounter is valueCounter for a layer with one breakdown field f (its
// slot): the other fields cost a pointer comparison.
type oneCounter struct {
	field.NopVisitor
	s    *Stats
	f    *field.Field
	slot int
}

func (c *oneCounter) Uint(f *field.Field, v uint64) {
	if f != c.f {
		return
	}
	if v < denseValues {
		c.s.dense[c.slot][v]++
		return
	}
	c.s.ByValue[f][v]++
}

func severityRank(s string) int {
	switch s {
	case "info":
		return 1
	case "warning":
		return 2
	case "error":
		return 3
	}
	return 0
}

// Flush brings ByProto and ByValue up to date; Stats prints with Render.
func (s *Stats) Flush() error {
	for _, pc := range s.protoCounts {
		pc.sum = pc.n
	}
	for _, q := range s.seqList {
		for _, pc := range q.protos {
			pc.sum += q.n
		}
	}
	for _, pc := range s.protoCounts {
		s.ByProto[pc.p.Name] = pc.sum
	}
	for slot := range s.dense {
		m := s.ByValue[s.col.Wanted()[slot]]
		for v, n := range s.dense[slot] {
			if n > 0 {
				m[uint64(v)] = n
			}
		}
	}
	return nil
}

type kv struct {
	k string
	n int
}

func sortedCounts(m map[string]int) []kv {
	out := make([]kv, 0, len(m))
	for k, n := range m {
		out = append(out, kv{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].k < out[j].k
	})
	return out
}

// Render writes the tables.
func (s *Stats) Render(w io.Writer) error {
	s.Flush()
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "Packets: %d  Bytes: %d\n\n", s.Packets, s.Bytes)
	fmt.Fprintln(w, "Packets by protocol")
	for _, e := range sortedCounts(s.ByProto) {
		desc := ""
		if p, ok := field.LookupProto(e.k); ok {
			desc = p.Desc
		}
		fmt.Fprintf(tw, "  %s\t%10d\t%s\t%s\n", e.k, e.n, pct(e.n, s.Packets), escapeString(desc))
	}
	tw.Flush()
	for _, f := range s.breakdown {
		m := s.ByValue[f]
		if len(m) == 0 {
			continue
		}
		// The values are counted per layer, not per packet (a TCP
		// segment can carry several FPDUs, each with its RDMAP opcode):
		// the shares are of the values counted, which the heading gives.
		named := map[string]int{}
		total := 0
		for v, n := range m {
			b := appendUint(nil, f, v)
			if name, ok := f.ValueName(v); ok {
				b = append(append(append(b, " ("...), name...), ')')
			}
			named[string(b)] += n
			total += n
		}
		fmt.Fprintf(w, "\n%s by %s (%d values; percent of them)\n", escapeString(f.Desc), f.Name, total)
		for _, e := range sortedCounts(named) {
			fmt.Fprintf(tw, "  %s\t%10d\t%s\n", escapeString(e.k), e.n, pct(e.n, total))
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "\nFindings by code")
	if len(s.ByFinding) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, e := range sortedCounts(s.ByFinding) {
		fmt.Fprintf(tw, "  %s\t%s\t%10d\n", escapeString(e.k), s.Severity[e.k], e.n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Interfaces) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nCapture statistics by interface (pcapng Interface Statistics Blocks)")
	fmt.Fprintf(tw, "  interface\tfile\treceived\tdropped (interface)\tdropped (OS)\n")
	count := func(n int64) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	for _, st := range s.Interfaces {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", escapeString(st.Label()), escapeString(st.File), count(st.Received), count(st.Dropped), count(st.OSDropped))
	}
	for _, st := range s.Interfaces {
		if n, _ := st.Lost(); n > 0 {
			fmt.Fprintf(tw, "  capture dropped %d packets on interface %s\n", n, escapeString(st.Label()))
		}
	}
	return tw.Flush()
}

func pct(n, total int) string {
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("%5.1f%%", 100*float64(n)/float64(total))
}

func escapeString(s string) string { return string(appendEscaped(nil, s)) }

// StatsJSON is the machine-readable form of Stats.
type StatsJSON struct {
	Packets   int                       `json:"packets"`
	Bytes     int64                     `json:"bytes"`
	ByProto   map[string]int            `json:"by_protocol"`
	ByValue   map[string]map[string]int `json:"by_value"`
	ByFinding map[string]int            `json:"findings_by_code"`
	// Interfaces: per interface of a pcapng capture, the counts its
	// Interface Statistics Blocks gave (those not given are left out).
	Interfaces []map[string]any `json:"capture_interfaces,omitempty"`
}

// JSON returns the counts for --json output.
func (s *Stats) JSON() StatsJSON {
	s.Flush()
	out := StatsJSON{Packets: s.Packets, Bytes: s.Bytes, ByProto: s.ByProto, ByFinding: s.ByFinding, ByValue: map[string]map[string]int{}}
	for _, st := range s.Interfaces {
		m := map[string]any{"file": st.File, "section": st.Section, "interface": st.Interface, "link_type": st.LinkType}
		if st.Name != "" {
			m["name"] = st.Name
		}
		for k, v := range map[string]int64{"received": st.Received, "dropped": st.Dropped, "os_dropped": st.OSDropped, "accepted": st.Accepted, "delivered": st.Delivered} {
			if v >= 0 {
				m[k] = v
			}
		}
		if n, ok := st.Lost(); ok {
			m["lost"] = n
		}
		out.Interfaces = append(out.Interfaces, m)
	}
	for _, f := range s.breakdown {
		m := map[string]int{}
		for v, n := range s.ByValue[f] {
			k := string(appendUint(nil, f, v))
			if name, ok := f.ValueName(v); ok {
				k = name
			}
			m[k] += n
		}
		out.ByValue[f.Name] = m
	}
	return out
}

// FieldList writes every declared field, like tshark -G fields: one line
// per protocol ("P", name, description) followed by its fields ("F", name,
// type, description, protocol, specification, tshark's names
// comma-separated), tab-separated; with prefix, only the protocols and
// fields whose name (or a tshark name of it) starts with it.
func FieldList(w io.Writer, prefix string) error {
	var b []byte
	for _, p := range field.Protos() {
		match := strings.HasPrefix(p.Name, prefix)
		var fb []byte
		for _, f := range p.Fields {
			if !match && !strings.HasPrefix(f.Name, prefix) && !aliasHasPrefix(f, prefix) {
				continue
			}
			fb = append(fb, "F\t"...)
			fb = append(fb, f.Name...)
			fb = append(fb, '\t')
			fb = append(fb, f.Kind.String()...)
			fb = append(fb, '\t')
			fb = appendEscaped(fb, f.Desc)
			if f.Unit != "" {
				fb = append(fb, " ("...)
				fb = append(fb, f.Unit...)
				fb = append(fb, ')')
			}
			fb = append(fb, '\t')
			fb = append(fb, p.Name...)
			fb = append(fb, '\t')
			fb = appendEscaped(fb, f.Ref)
			fb = append(fb, '\t')
			for i, a := range f.Aliases {
				if i > 0 {
					fb = append(fb, ',')
				}
				fb = append(fb, a...)
			}
			fb = append(fb, '\n')
		}
		if !match && len(fb) == 0 {
			continue
		}
		b = append(b, "P\t"...)
		b = append(b, p.Name...)
		b = append(b, '\t')
		b = appendEscaped(b, p.Desc)
		b = append(b, '\n')
		b = append(b, fb...)
	}
	_, err := w.Write(b)
	return err
}

// aliasHasPrefix reports whether one of f's tshark names starts with prefix
// ("fields ip." lists ipv4.src as ip.src's field).
func aliasHasPrefix(f *field.Field, prefix string) bool {
	for _, a := range f.Aliases {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}
