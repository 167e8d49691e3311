package torture

import (
	"bytes"
	"encoding/binary"
)

// Span is a named byte range of a packet: a layer's header, a chunk list
// area or a string carried by the packet.
type Span struct {
	Name       string
	Start, End int
}

// Length is a length or count field of a packet: the field a liar changes.
type Length struct {
	Name string
	// Off is the field's frame offset; Size its width in octets (big-endian).
	Off, Size int
	// Shift and Bits select the value inside the field when it shares its
	// octets with other bits (LRH PktLen is 11 bits; REJ RejInfoLen 7 bits at
	// bit 1). Bits 0 means the whole field.
	Shift, Bits int
}

// Layout is what the walker found in one packet.
type Layout struct {
	// Layers are the headers in order (Start = first octet of the header,
	// End = first octet after it).
	Layers []Span
	// Lengths are the length and count fields found.
	Lengths []Length
	// Lists are RPC-over-RDMA chunk list areas: Start is the first list
	// discriminator, End the end of the transport payload.
	Lists []Span
	// Strings are bytes a view may print as text (RPC AUTH_SYS machine
	// name, CM private data, REJ ARI).
	Strings []Span
	// TCPPayload reports a TCP segment with payload; RDMA a packet of the
	// RDMA transports (BTH, MPA or FPDU found).
	TCPPayload, RDMA bool
	// CM reports a connection-management message (CM MAD or MPA
	// request/reply).
	CM bool
}

// Boundaries returns every layer start and end, deduplicated and sorted.
func (l *Layout) Boundaries() []int {
	var out []int
	seen := map[int]bool{}
	for _, s := range l.Layers {
		for _, x := range [2]int{s.Start, s.End} {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sortInts(out)
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// Walk finds the layers, length fields, chunk lists and strings of a frame
// of the given link type. It never panics and stops at the first thing it
// does not recognise.
func Walk(linkType int, data []byte) Layout {
	w := walker{b: data}
	switch linkType {
	case LinkEthernet:
		w.ethernet(0)
	case LinkInfiniBand:
		w.lrh(0, len(data))
	case LinkERF:
		w.erf(0)
	}
	return w.l
}

type walker struct {
	b []byte
	l Layout
}

var be = binary.BigEndian

func (w *walker) layer(name string, start, end int) {
	w.l.Layers = append(w.l.Layers, Span{name, start, end})
}

func (w *walker) length(name string, off, size int) {
	w.l.Lengths = append(w.l.Lengths, Length{Name: name, Off: off, Size: size})
}

func (w *walker) has(off, n int) bool { return off >= 0 && n >= 0 && off <= len(w.b)-n }

func (w *walker) ethernet(off int) {
	if !w.has(off, 14) {
		return
	}
	w.layer("ethernet", off, off+14)
	typ := be.Uint16(w.b[off+12:])
	off += 14
	for (typ == 0x8100 || typ == 0x88a8) && w.has(off, 4) {
		w.layer("vlan", off, off+4)
		typ = be.Uint16(w.b[off+2:])
		off += 4
	}
	switch typ {
	case 0x0800:
		w.ipv4(off)
	case 0x86dd:
		w.ipv6(off)
	case 0x8915: // RoCEv1: GRH, BTH … ICRC
		w.grh(off, len(w.b)-4)
	}
}

func (w *walker) ipv4(off int) {
	if !w.has(off, 20) || w.b[off]>>4 != 4 {
		return
	}
	ihl := int(w.b[off]&0x0f) * 4
	if ihl < 20 || !w.has(off, ihl) {
		return
	}
	w.layer("ipv4", off, off+ihl)
	w.length("ipv4.len", off+2, 2)
	w.length("ipv4.hdr_len", off, 1)
	end := min(off+int(be.Uint16(w.b[off+2:])), len(w.b))
	if be.Uint16(w.b[off+6:])&0x1fff != 0 {
		return // a later fragment
	}
	w.transport(w.b[off+9], off+ihl, end)
}

func (w *walker) ipv6(off int) {
	if !w.has(off, 40) || w.b[off]>>4 != 6 {
		return
	}
	w.layer("ipv6", off, off+40)
	w.length("ipv6.plen", off+4, 2)
	end := min(off+40+int(be.Uint16(w.b[off+4:])), len(w.b))
	w.transport(w.b[off+6], off+40, end)
}

func (w *walker) transport(proto byte, off, end int) {
	switch proto {
	case 17:
		w.udp(off, end)
	case 6:
		w.tcp(off, end)
	}
}

func (w *walker) udp(off, end int) {
	if !w.has(off, 8) || off+8 > end {
		return
	}
	w.layer("udp", off, off+8)
	w.length("udp.length", off+4, 2)
	if be.Uint16(w.b[off+2:]) == 4791 {
		w.bth(off+8, end-4) // ICRC at the end
	}
}

func (w *walker) tcp(off, end int) {
	if !w.has(off, 20) {
		return
	}
	hl := int(w.b[off+12]>>4) * 4
	if hl < 20 || !w.has(off, hl) || off+hl > end {
		return
	}
	w.layer("tcp", off, off+hl)
	w.length("tcp.hdr_len", off+12, 1)
	if off+hl < end {
		w.l.TCPPayload = true
		w.iwarp(off+hl, end)
	}
}

var (
	mpaReqKey = []byte("MPA ID Req Frame")
	mpaRepKey = []byte("MPA ID Rep Frame")
)

func (w *walker) iwarp(off, end int) {
	p := w.b[off:end]
	if len(p) >= 20 && (bytes.HasPrefix(p, mpaReqKey) || bytes.HasPrefix(p, mpaRepKey)) {
		w.l.RDMA, w.l.CM = true, true
		w.layer("mpa", off, off+20)
		w.length("mpa.pd_length", off+18, 2)
		pd := int(be.Uint16(p[18:]))
		pdEnd := min(off+20+pd, end)
		if p[16]&0x10 != 0 && pdEnd-(off+20) >= 4 {
			w.layer("mpa.ird_ord", off+20, off+24)
			w.l.Strings = append(w.l.Strings, Span{"mpa.private_data", off + 24, pdEnd})
		} else if pdEnd > off+20 {
			w.l.Strings = append(w.l.Strings, Span{"mpa.private_data", off + 20, pdEnd})
		}
		return
	}
	// FPDUs, one after another, as siw sends them (no markers).
	for n := 0; n < 64 && w.has(off, 4) && off < end; n++ {
		ulpdu := int(be.Uint16(w.b[off:]))
		ctrl := be.Uint16(w.b[off+2:])
		if ctrl&0x0300 != 0x0100 || ctrl&0x00c0 != 0x0040 {
			return // not DDP version 1 / RDMAP version 1
		}
		w.l.RDMA = true
		w.layer("fpdu", off, off+2)
		w.length("fpdu.ulpdu_length", off, 2)
		hdr := 18 // untagged: ctrl, inv stag, QN, MSN, MO
		tagged := ctrl&0x8000 != 0
		if tagged {
			hdr = 14 // ctrl, STag, TO
		}
		if !w.has(off+2, hdr) {
			return
		}
		w.layer("ddp", off+2, off+2+hdr)
		ulEnd := min(off+2+ulpdu, end)
		op := ctrl & 0x0f
		if !tagged && op >= 3 && op <= 6 {
			qn := be.Uint32(w.b[off+8:])
			mo := be.Uint32(w.b[off+16:])
			if qn == 0 && mo == 0 && ulEnd > off+2+hdr {
				w.rpcrdma(off+2+hdr, ulEnd)
			}
		}
		next := off + 2 + ulpdu
		next += (4 - (2+ulpdu)%4) % 4 // pad
		next += 4                     // CRC32c
		if next <= off {
			return
		}
		off = next
	}
}

func (w *walker) erf(off int) {
	if !w.has(off, 16) {
		return
	}
	w.layer("erf", off, off+16)
	w.length("erf.rlen", off+10, 2)
	w.length("erf.wlen", off+14, 2)
	if w.b[off+8]&0x7f == 21 {
		w.lrh(off+16, len(w.b))
	}
}

func (w *walker) lrh(off, end int) {
	if !w.has(off, 8) {
		return
	}
	w.layer("lrh", off, off+8)
	w.l.Lengths = append(w.l.Lengths, Length{Name: "lrh.pktlen", Off: off + 2, Size: 2, Bits: 11})
	end -= 6 // ICRC, VCRC
	switch w.b[off+1] & 3 {
	case 2:
		w.bth(off+8, end)
	case 3:
		w.grh(off+8, end)
	}
}

func (w *walker) grh(off, end int) {
	if !w.has(off, 40) {
		return
	}
	w.layer("grh", off, off+40)
	w.length("grh.paylen", off+4, 2)
	if w.b[off+6] == 0x1b {
		w.bth(off+40, end)
	}
}

// bth walks the Base Transport Header, its extension headers and the
// payload up to end (the ICRC's offset).
func (w *walker) bth(off, end int) {
	if !w.has(off, 12) || off+12 > end {
		return
	}
	w.l.RDMA = true
	w.layer("bth", off, off+12)
	op := w.b[off]
	pad := int(w.b[off+1]>>4) & 3
	destQP := be.Uint32(w.b[off+4:]) & 0xffffff
	off += 12
	ext := func(name string, n int) bool {
		if !w.has(off, n) || off+n > end {
			return false
		}
		w.layer(name, off, off+n)
		off += n
		return true
	}
	tr, code := op>>5, op&0x1f
	if tr == 3 { // UD
		if !ext("deth", 8) {
			return
		}
		if code == 0x05 && !ext("immdt", 4) {
			return
		}
		if code == 0x04 && destQP == 1 {
			w.mad(off, end-pad)
		}
		return
	}
	if tr != 0 && tr != 1 { // RC and UC only
		return
	}
	switch code {
	case 0x06, 0x0a, 0x0c:
		if !ext("reth", 16) {
			return
		}
	case 0x0b:
		if !ext("reth", 16) || !ext("immdt", 4) {
			return
		}
	case 0x0d, 0x0f, 0x10, 0x11:
		if !ext("aeth", 4) {
			return
		}
	case 0x12:
		if !ext("aeth", 4) || !ext("atomicacketh", 8) {
			return
		}
	case 0x13, 0x14:
		if !ext("atomiceth", 28) {
			return
		}
	case 0x03, 0x05, 0x09:
		if !ext("immdt", 4) {
			return
		}
	case 0x16, 0x17:
		if !ext("ieth", 4) {
			return
		}
	}
	switch code {
	case 0x00, 0x04, 0x05, 0x17: // SEND FIRST / ONLY: RPC-over-RDMA header
		if end-pad > off {
			w.rpcrdma(off, end-pad)
		}
	}
}

// CM private data offsets (from the CM payload start) by attribute ID.
var cmPrivateData = map[uint16]int{
	0x0010: 140, 0x0011: 10, 0x0012: 84, 0x0013: 36, 0x0014: 8, 0x0015: 12,
	0x0016: 8, 0x0017: 16, 0x0018: 96, 0x0019: 64, 0x001a: 84,
}

func (w *walker) mad(off, end int) {
	if !w.has(off, 24) || off+24 > end {
		return
	}
	w.layer("mad", off, off+24)
	if w.b[off+1] != 0x07 { // not CM
		return
	}
	w.l.CM = true
	attr := be.Uint16(w.b[off+16:])
	cm := off + 24
	cmEnd := min(end, cm+232)
	if cm >= cmEnd {
		return
	}
	w.layer("cm", cm, cmEnd)
	if attr == 0x0012 && w.has(cm, 84) { // REJ: RejInfoLen (7 bits at bit 1), ARI
		w.l.Lengths = append(w.l.Lengths, Length{Name: "cm.rej.ari_length", Off: cm + 9, Size: 1, Shift: 1, Bits: 7})
		w.l.Strings = append(w.l.Strings, Span{"cm.rej.ari", cm + 12, cm + 84})
	}
	if attr == 0x0018 && w.has(cm, 6) { // SIDR_REP AddInfoLen
		w.length("cm.sidr_rep.add_info_length", cm+5, 1)
	}
	if attr == 0x001a && w.has(cm, 9) { // APR AddInfoLen
		w.length("cm.apr.add_info_length", cm+8, 1)
	}
	if pd, ok := cmPrivateData[attr]; ok && cm+pd < cmEnd {
		w.l.Strings = append(w.l.Strings, Span{"cm.private_data", cm + pd, cmEnd})
	}
}

// rpcrdma walks an RPC-over-RDMA header from off to end.
func (w *walker) rpcrdma(off, end int) {
	if !w.has(off, 16) || off+16 > end {
		return
	}
	w.layer("rpcrdma", off, off+16)
	vers, proc := be.Uint32(w.b[off+4:]), be.Uint32(w.b[off+12:])
	if vers != 1 || proc > 2 {
		return
	}
	p := off + 16
	w.l.Lists = append(w.l.Lists, Span{"rpcrdma.chunks", p, end})
	word := func(at int) (uint32, bool) {
		if at+4 > end {
			return 0, false
		}
		return be.Uint32(w.b[at:]), true
	}
	// chunk steps over a chunk, {count, count × segment}, marking its
	// count; false where it runs past end.
	chunk := func(count string) bool {
		cnt, ok := word(p)
		if !ok {
			return false
		}
		w.length(count, p, 4)
		p += 4 + int(min(cnt, 1<<16))*16
		return true
	}
	// list steps over a list, {1, item} … 0; false where it runs past end
	// or is implausibly long.
	list := func(item func() bool) bool {
		for n := 0; ; n++ {
			d, ok := word(p)
			if !ok || n > 1024 {
				return false
			}
			p += 4
			if d == 0 {
				return true
			}
			if !item() {
				return false
			}
		}
	}
	// Read list: {1, position, handle, length, offset64} … 0; write list:
	// {1, chunk} … 0; reply chunk: 0 or {1, chunk}.
	readSegment := func() bool { p += 20; return true }
	writeChunk := func() bool { return chunk("rpcrdma.write_chunk.count") }
	if !list(readSegment) || !list(writeChunk) {
		return
	}
	d, ok := word(p)
	if !ok {
		return
	}
	p += 4
	if d != 0 && !chunk("rpcrdma.reply_chunk.count") {
		return
	}
	if proc == 0 && p < end {
		w.rpc(p, end)
	}
}

// rpc walks an ONC RPC call header far enough to find the AUTH_SYS
// machine name.
func (w *walker) rpc(off, end int) {
	if off+40 > end || !w.has(off, 40) {
		return
	}
	if be.Uint32(w.b[off+4:]) != 0 { // not a CALL
		w.layer("rpc", off, min(off+24, end))
		return
	}
	w.layer("rpc", off, off+32)
	flavor := be.Uint32(w.b[off+24:])
	w.length("rpc.cred.length", off+28, 4)
	if flavor != 1 || off+40 > end { // AUTH_SYS: stamp, machinename<255>
		return
	}
	w.length("rpc.auth_sys.machinename.length", off+36, 4)
	n := int(be.Uint32(w.b[off+36:]))
	if n > 0 && n <= 255 && off+40+n <= end {
		w.l.Strings = append(w.l.Strings, Span{"rpc.auth_sys.machinename", off + 40, off + 40 + n})
	}
}
