package ibcm

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// refBTHDecode is BTH.DecodeFromBytes as it was before it stored the fields
// one by one (a composite literal assigned to *b): the reference the
// current decoder must match field for field.
func refBTHDecode(b *BTH, data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < bthLen {
		df.SetTruncated()
		return short("BTH", "header", data, 0, bthLen)
	}
	*b = BTH{
		OpCode: Opcode(data[0]),
		SE:     data[1]&0x80 != 0, M: data[1]&0x40 != 0, PadCnt: data[1] >> 4 & 0x03, TVer: data[1] & 0x0f,
		PKey: binary.BigEndian.Uint16(data[2:4]),
		FECN: data[4]&0x80 != 0, BECN: data[4]&0x40 != 0, Reserved6: data[4] & 0x3f,
		DestQP: binary.BigEndian.Uint32(data[4:8]) & 0xffffff,
		AckReq: data[8]&0x80 != 0, Reserved7: data[8] & 0x7f,
		PSN: binary.BigEndian.Uint32(data[8:12]) & 0xffffff,
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

type truncFlag bool

func (t *truncFlag) SetTruncated() { *t = true }

// sameSlice reports whether a and b are the same bytes of one array (same
// start, length and capacity), or both nil.
func sameSlice(a, b []byte) bool {
	if len(a) != len(b) || cap(a) != cap(b) || (a == nil) != (b == nil) {
		return false
	}
	return cap(a) == 0 || &a[:1][0] == &b[:1][0]
}

// checkBTH decodes data with the current and the reference decoder (into
// BTHs holding the previous packet's values, as a reused layer does) and
// compares everything: fields, findings, the truncation feedback, the
// error and the next layer types.
func checkBTH(t *testing.T, got, want *BTH, data []byte) {
	t.Helper()
	var tg, tw truncFlag
	eg, ew := got.DecodeFromBytes(data, &tg), refBTHDecode(want, data, &tw)
	if (eg == nil) != (ew == nil) || (eg != nil && eg.Error() != ew.Error()) || tg != tw {
		t.Fatalf("% x: error %v truncated %v, want %v %v", data, eg, tg, ew, tw)
	}
	if eg != nil {
		return
	}
	if !sameSlice(got.Contents, want.Contents) || !sameSlice(got.Payload, want.Payload) {
		t.Fatalf("% x: contents/payload differ", data)
	}
	g, w := *got, *want
	g.BaseLayer, w.BaseLayer = layers.BaseLayer{}, layers.BaseLayer{}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("% x:\n got %+v\nwant %+v", data, g, w)
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
	if g, w := got.AppendFindings(nil), want.AppendFindings(nil); !reflect.DeepEqual(g, w) {
		t.Fatalf("% x: findings\n got %v\nwant %v", data, g, w)
	}
	for _, c := range []uint32{0, want.ICRC} {
		got.SetICRCComputed(c)
		want.SetICRCComputed(c)
		if g, w := got.AppendFindings(nil), want.AppendFindings(nil); !reflect.DeepEqual(g, w) {
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
	frames, _ := readFrames(t, rxeCapture)
	n := 0
	for _, fr := range frames {
		p := gopacket.NewPacket(fr, layers.LinkTypeEthernet, gopacket.Default)
		if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok && p.Layer(LayerTypeBTH) != nil {
			checkBTH(t, got, want, u.Payload)
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d BTHs in %s", n, rxeCapture)
	}
}
