package ibcm

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// refBTHDecode is BTH.DecodeFromBytes as it was before it stored the fields
// one by one (a composite literal assigned to *b): the reference the
// current decoder must match field for field.
func refBTHDecode(b *BTH, data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < bthLen {
		return truncated(df, "BTH", "header", 0, bthLen, len(data))
	}
	*b = BTH{
		OpCode: Opcode(data[0]),
		SE:     data[1]&0x80 != 0, M: data[1]&0x40 != 0, PadCnt: data[1] >> 4 & 0x03, TVer: data[1] & 0x0f,
		PKey: binary.BigEndian.Uint16(data[2:4]),
		FECN: data[4]&0x80 != 0, BECN: data[4]&0x40 != 0, Reserved6: data[4] & 0x3f,
		DestQP: binary.BigEndian.Uint32(data[4:8]) & 0xffffff,
		AckReq: data[8]&0x80 != 0, Reserved7: data[8] & 0x7f,
		PSN:        binary.BigEndian.Uint32(data[8:12]) & 0xffffff,
		ICRCStatus: CRCUnchecked, // the zero value when CRCUnchecked was 0
	}
	end := len(data)
	if end < bthLen+icrcLen {
		df.SetTruncated()
		b.probs |= bthProbNoICRC
	} else {
		b.ICRC = binary.BigEndian.Uint32(data[end-icrcLen:])
		end -= icrcLen
	}
	if pad := int(b.PadCnt); pad > end-bthLen {
		b.probs |= bthProbPad
	} else {
		end -= pad
	}
	if b.TVer != 0 {
		b.probs |= bthProbTVer
	}
	if b.Reserved6 != 0 || b.Reserved7 != 0 {
		b.probs |= bthProbReserved
	}
	if !b.OpCode.Known() {
		b.probs |= bthProbOpcode
	} else if undecodedTransport(b.OpCode) {
		b.probs |= bthProbUndecoded
	}
	b.Contents, b.Payload = data[:bthLen], data[bthLen:end]
	b.PayloadLength = len(b.Payload)
	return nil
}

// refBTHNext and refNextAfter are NextLayerType and nextAfter as they were
// before the first header came from a table and chains were known to be at
// most two headers long.
func refBTHNext(b *BTH) gopacket.LayerType {
	c := &opcodeChain[b.OpCode]
	if c.n > 0 && !undecodedTransport(b.OpCode) {
		return c.hdrs[0]
	}
	if len(b.Payload) == 0 {
		return gopacket.LayerTypeZero
	}
	return gopacket.LayerTypePayload
}

func refNextAfter(b *BTH, t gopacket.LayerType, srcQP uint32, payload []byte) gopacket.LayerType {
	c := &opcodeChain[b.OpCode]
	for i := 0; i < c.n-1; i++ {
		if c.hdrs[i] == t {
			return c.hdrs[i+1]
		}
	}
	if len(payload) == 0 {
		return gopacket.LayerTypeZero
	}
	if b.OpCode == OpUDSendOnly && (b.DestQP <= 1 || srcQP <= 1) {
		return LayerTypeMAD
	}
	return gopacket.LayerTypePayload
}

// sameDecode compares a decode of data by the current decoder (into got:
// error eg, truncation feedback tg) with the reference's (want, ew, tw):
// the same error and feedback, and when both succeeded Contents and
// Payload the same slices of data and every other field equal (base gives
// a layer's BaseLayer). It reports whether the decodes succeeded.
func sameDecode[L any](t *testing.T, data []byte, got, want *L, base func(*L) *layers.BaseLayer, eg, ew error, tg, tw testcap.TruncFlag) bool {
	t.Helper()
	if !testcap.SameOutcome(t, data, eg, ew, tg, tw) {
		return false
	}
	if gb, wb := base(got), base(want); !testcap.SameBytes(gb.Contents, wb.Contents) || !testcap.SameBytes(gb.Payload, wb.Payload) {
		t.Fatalf("% x: contents/payload differ", data)
	}
	g, w := *got, *want
	*base(&g), *base(&w) = layers.BaseLayer{}, layers.BaseLayer{}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("% x:\n got %+v\nwant %+v", data, g, w)
	}
	return true
}

// checkBTH decodes data with the current and the reference decoder (into
// BTHs holding the previous packet's values, as a reused layer does) and
// compares everything: fields, findings, the truncation feedback, the
// error and the next layer types.
func checkBTH(t *testing.T, got, want *BTH, data []byte) {
	t.Helper()
	var tg, tw testcap.TruncFlag
	// DecodeWithICRC, given the ICRC octets as a caller read them (or a
	// value the decoder must ignore when there are no ICRC octets),
	// decodes exactly what DecodeFromBytes does, into a BTH holding the
	// same previous values.
	withICRC := *got
	icrc := uint32(0xdeadbeef)
	if len(data) >= bthLen+icrcLen {
		icrc = binary.BigEndian.Uint32(data[len(data)-icrcLen:])
	}
	var ti testcap.TruncFlag
	ei := withICRC.DecodeWithICRC(data, &ti, icrc)
	eg, ew := got.DecodeFromBytes(data, &tg), refBTHDecode(want, data, &tw)
	bthBase := func(b *BTH) *layers.BaseLayer { return &b.BaseLayer }
	sameDecode(t, data, &withICRC, want, bthBase, ei, ew, ti, tw)
	if !sameDecode(t, data, got, want, bthBase, eg, ew, tg, tw) {
		return
	}
	if g, w := got.NextLayerType(), refBTHNext(want); g != w {
		t.Fatalf("% x: NextLayerType %v, want %v", data, g, w)
	}
	for _, lt := range []gopacket.LayerType{LayerTypeDETH, LayerTypeRETH, LayerTypeAETH, LayerTypeIETH,
		LayerTypeImmDt, LayerTypeAtomicETH, LayerTypeAtomicAckETH} {
		for _, qp := range []uint32{0, 1, 2, 1 << 24} {
			for _, p := range [][]byte{nil, data} {
				if g, w := got.nextAfter(lt, qp, p), refNextAfter(want, lt, qp, p); g != w {
					t.Fatalf("% x: nextAfter(%v, %d, %d octets) %v, want %v", data, lt, qp, len(p), g, w)
				}
			}
		}
	}
	// AppendFindings's early return drops nothing that appendProblems
	// reports for the reference decode.
	if g, w := got.AppendFindings(nil), want.appendProblems(nil); !reflect.DeepEqual(g, w) {
		t.Fatalf("% x: findings\n got %v\nwant %v", data, g, w)
	}
	for _, c := range []uint32{0, want.ICRC} {
		got.SetICRCComputed(c)
		want.SetICRCComputed(c)
		if g, w := got.AppendFindings(nil), want.appendProblems(nil); !reflect.DeepEqual(g, w) {
			t.Fatalf("% x: findings with ICRC 0x%08x computed\n got %v\nwant %v", data, c, g, w)
		}
	}
}

// TestBTHDecodeReference: every opcode with every flag octet, at lengths
// from empty to past the ICRC, and random headers of random lengths,
// decode as the reference decoder does.
func TestBTHDecodeReference(t *testing.T) {
	got, want := &BTH{}, &BTH{}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 64)
	for op := 0; op < 256; op++ {
		for f := 0; f < 256; f++ {
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			buf[0], buf[1] = byte(op), byte(f)
			for _, n := range []int{0, 11, 12, 15, 16, 17, 19, 40} {
				checkBTH(t, got, want, buf[:n])
			}
		}
	}
	for range 50000 {
		n := rng.IntN(len(buf) + 1)
		for i := range buf[:n] {
			buf[i] = byte(rng.Uint32())
		}
		checkBTH(t, got, want, buf[:n:n+rng.IntN(len(buf)-n+1)])
	}
	frames := testcap.Data(t, testcap.RXE)
	n := 0
	for _, fr := range frames {
		p := gopacket.NewPacket(fr, layers.LinkTypeEthernet, gopacket.Default)
		if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok && p.Layer(LayerTypeBTH) != nil {
			checkBTH(t, got, want, u.Payload)
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d BTHs in %s", n, testcap.RXE)
	}
}

// refLRHDecode is LRH.DecodeFromBytes as it was before it stored the fields
// one by one (a literal assigned to *l); both check the packet with
// checkPacket.
func refLRHDecode(l *LRH, data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < lrhLen {
		return truncated(df, "LRH", "header", 0, lrhLen, len(data))
	}
	*l = LRH{
		VL: data[0] >> 4, LVer: data[0] & 0x0f,
		SL: data[1] >> 4, Reserved2: data[1] >> 2 & 0x03, LNH: data[1] & 0x03,
		DLID:       binary.BigEndian.Uint16(data[2:4]),
		Reserved5:  data[4] >> 3,
		PktLen:     binary.BigEndian.Uint16(data[4:6]) & 0x07ff,
		SLID:       binary.BigEndian.Uint16(data[6:8]),
		VCRCStatus: CRCUnchecked, // the zero value when CRCUnchecked was 0
	}
	l.checkPacket(data, df)
	return nil
}

// checkLRH compares the current LRH decoder with the reference as checkBTH
// does the BTH's.
func checkLRH(t *testing.T, got, want *LRH, data []byte) {
	t.Helper()
	var tg, tw testcap.TruncFlag
	eg, ew := got.DecodeFromBytes(data, &tg), refLRHDecode(want, data, &tw)
	if !sameDecode(t, data, got, want, func(l *LRH) *layers.BaseLayer { return &l.BaseLayer }, eg, ew, tg, tw) {
		return
	}
	if g, w := got.AppendFindings(nil), want.appendProblems(nil); !reflect.DeepEqual(g, w) {
		t.Fatalf("% x: findings\n got %v\nwant %v", data, g, w)
	}
}

// TestLRHDecodeReference: the native IB captures' packets, with every
// first and second octet, PktLen values around the packet's and shorter
// captures, and random packets decode as the reference decoder does.
func TestLRHDecodeReference(t *testing.T) {
	files := testcap.Glob(t, "pcaps/synthetic/synth-ibcm-*.pcap")
	got, want := &LRH{}, &LRH{}
	n := 0
	for _, file := range files {
		frames, lt := testcap.DataLink(t, file)
		if lt != LinkTypeInfiniBand {
			continue
		}
		for _, fr := range frames {
			n++
			checkLRH(t, got, want, fr)
			buf := append([]byte(nil), fr...)
			for b := 0; b < 256; b++ {
				buf[0], buf[1] = byte(b), byte(255-b)
				for _, words := range []int{0, 1, 2, len(fr)/4 - 1, len(fr) / 4, len(fr)/4 + 1, 0x7ff} {
					binary.BigEndian.PutUint16(buf[4:], uint16(b&0xf8)<<8|uint16(words))
					for _, c := range []int{0, 7, 8, 9, len(fr) - 2, len(fr)} {
						checkLRH(t, got, want, buf[:c])
					}
					// The same with a valid VCRC: findings from the
					// header's fields alone.
					if _, vcrc, ok := CheckIBVCRC(buf); ok {
						binary.BigEndian.PutUint16(buf[words*4:], vcrc)
						checkLRH(t, got, want, buf)
						copy(buf[words*4:words*4+2], fr[words*4:])
					}
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d native IB packets", n)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 80)
	for range 50000 {
		c := rng.IntN(len(buf) + 1)
		for i := range buf[:c] {
			buf[i] = byte(rng.Uint32())
		}
		if c >= 8 && rng.IntN(2) == 0 {
			binary.BigEndian.PutUint16(buf[4:], uint16(c/4+rng.IntN(3)-1))
		}
		checkLRH(t, got, want, buf[:c])
	}
}
