package ibcm

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// Extension transport headers (IBTA vol. 1 §9.3). Each decodes from the
// BTH's payload (or the previous extension header's). What follows an
// extension header depends on the BTH opcode: a header linked to its BTH
// (by NewStack, or by gopacket.NewPacket) follows the opcode's chain; one
// decoded alone treats the rest as payload (a DETH from QP0/QP1 as a MAD).

const (
	dethLen         = 8
	rethLen         = 16
	aethLen         = 4
	wordLen         = 4 // IETH, ImmDt
	atomicETHLen    = 28
	atomicAckETHLen = 8
)

// ext is what every extension header embeds: gopacket's contents and
// payload, and the BTH it follows (nil when decoded alone).
type ext struct {
	layers.BaseLayer
	bth *BTH
}

// split makes the first n octets of data the header's contents and the rest
// its payload, and tells the linked BTH how long that payload is; an error
// naming layer and what when data is shorter.
func (e *ext) split(data []byte, df gopacket.DecodeFeedback, n int, layer, what string) error {
	if len(data) < n {
		return truncated(df, layer, what, 0, n, len(data))
	}
	e.Contents, e.Payload = data[:n], data[n:]
	if e.bth != nil {
		e.bth.PayloadLength = len(e.Payload)
	}
	return nil
}

// next is the NextLayerType of an extension header of type t (srcQP is the
// DETH's source QP, 1<<24 for the other headers).
func (e *ext) next(t gopacket.LayerType, srcQP uint32) gopacket.LayerType {
	if e.bth != nil {
		return e.bth.nextAfter(t, srcQP, e.Payload)
	}
	if len(e.Payload) == 0 {
		return gopacket.LayerTypeZero
	}
	if t == LayerTypeDETH && srcQP <= 1 {
		return LayerTypeMAD
	}
	return gopacket.LayerTypePayload
}

// ProtoDETH and its fields.
var (
	ProtoDETH     = field.NewProto("deth", "InfiniBand Datagram Extended Transport Header")
	fDETHQKey     = ProtoDETH.Hex("deth.q_key", 32, "Queue Key")
	fDETHReserved = ProtoDETH.Hex("deth.reserved", 8, "Reserved")
	fDETHSrcQP    = ProtoDETH.Hex("deth.srcqp", 24, "Source Queue Pair")
)

// DETH is the Datagram Extended Transport Header of UD packets.
type DETH struct {
	ext
	QKey     uint32
	Reserved uint8
	SrcQP    uint32
}

func (d *DETH) LayerType() gopacket.LayerType     { return LayerTypeDETH }
func (d *DETH) CanDecode() gopacket.LayerClass    { return LayerTypeDETH }
func (d *DETH) Proto() *field.Proto               { return ProtoDETH }
func (d *DETH) String() string                    { return fmt.Sprintf("DETH qkey=0x%08x srcqp=0x%06x", d.QKey, d.SrcQP) }
func (d *DETH) NextLayerType() gopacket.LayerType { return d.next(LayerTypeDETH, d.SrcQP) }

func (d *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := d.split(data, df, dethLen, "DETH", "header"); err != nil {
		return err
	}
	d.QKey = binary.BigEndian.Uint32(data)
	d.Reserved = data[4]
	d.SrcQP = binary.BigEndian.Uint32(data[4:8]) & 0xffffff
	return nil
}

func (d *DETH) VisitFields(v field.Visitor) {
	v.Uint(fDETHQKey, uint64(d.QKey))
	v.Uint(fDETHReserved, uint64(d.Reserved))
	v.Uint(fDETHSrcQP, uint64(d.SrcQP))
}

func (d *DETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(dethLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(h, d.QKey)
	binary.BigEndian.PutUint32(h[4:], d.SrcQP&0xffffff)
	h[4] = d.Reserved
	return nil
}

// ProtoRETH and its fields (tshark: infiniband.reth.*).
var (
	ProtoRETH   = field.NewProto("reth", "InfiniBand RDMA Extended Transport Header")
	fRETHVA     = ProtoRETH.Hex("reth.va", 64, "Virtual Address")
	fRETHRKey   = ProtoRETH.Hex("reth.r_key", 32, "Remote Key")
	fRETHDMALen = ProtoRETH.Uint("reth.dmalen", 32, "DMA Length").WithUnit("octets")
)

// RETH is the RDMA Extended Transport Header (RDMA WRITE FIRST/ONLY, READ
// REQUEST, ATOMIC WRITE).
type RETH struct {
	ext
	VA     uint64
	RKey   uint32
	DMALen uint32
}

func (r *RETH) LayerType() gopacket.LayerType     { return LayerTypeRETH }
func (r *RETH) CanDecode() gopacket.LayerClass    { return LayerTypeRETH }
func (r *RETH) Proto() *field.Proto               { return ProtoRETH }
func (r *RETH) NextLayerType() gopacket.LayerType { return r.next(LayerTypeRETH, 1<<24) }
func (r *RETH) String() string {
	return fmt.Sprintf("RETH va=0x%x rkey=0x%08x len=%d", r.VA, r.RKey, r.DMALen)
}

func (r *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := r.split(data, df, rethLen, "RETH", "header"); err != nil {
		return err
	}
	r.VA = binary.BigEndian.Uint64(data)
	r.RKey = binary.BigEndian.Uint32(data[8:])
	r.DMALen = binary.BigEndian.Uint32(data[12:])
	return nil
}

func (r *RETH) VisitFields(v field.Visitor) {
	v.Uint(fRETHVA, r.VA)
	v.Uint(fRETHRKey, uint64(r.RKey))
	v.Uint(fRETHDMALen, uint64(r.DMALen))
}

func (r *RETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(rethLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(h, r.VA)
	binary.BigEndian.PutUint32(h[8:], r.RKey)
	binary.BigEndian.PutUint32(h[12:], r.DMALen)
	return nil
}

// AETH syndrome types (bits 6:5).
const (
	AETHAck    = 0
	AETHRNRNak = 1
	AETHNak    = 3
)

var (
	aethTypeNames = map[uint64]string{0: "ACK", 1: "RNR NAK", 2: "Reserved", 3: "NAK"}
	aethNakNames  = map[uint64]string{0: "PSN Sequence Error", 1: "Invalid Request", 2: "Remote Access Error",
		3: "Remote Operational Error", 4: "Invalid RD Request"}
)

// ProtoAETH and its fields (tshark: infiniband.aeth.*).
var (
	ProtoAETH        = field.NewProto("aeth", "InfiniBand ACK Extended Transport Header")
	fAETHSyndrome    = ProtoAETH.Hex("aeth.syndrome", 8, "Syndrome")
	fAETHReserved    = ProtoAETH.Uint("aeth.syndrome.reserved", 1, "Reserved")
	fAETHType        = ProtoAETH.Uint("aeth.syndrome.opcode", 2, "Syndrome type").WithNames(aethTypeNames)
	fAETHCredit      = ProtoAETH.Uint("aeth.syndrome.credit_count", 5, "Credit Count (encoded)")
	fAETHTimer       = ProtoAETH.Uint("aeth.syndrome.timer", 5, "RNR NAK Timer (encoded)")
	fAETHErrorCode   = ProtoAETH.Uint("aeth.syndrome.error_code", 5, "NAK Code").WithNames(aethNakNames)
	fAETHReservedVal = ProtoAETH.Uint("aeth.syndrome.reserved_value", 5, "Reserved syndrome value")
	fAETHMSN         = ProtoAETH.Uint("aeth.msn", 24, "Message Sequence Number")
)

// AETH is the ACK Extended Transport Header (ACK, ATOMIC ACK, RDMA READ
// RESPONSE FIRST/LAST/ONLY).
type AETH struct {
	ext
	Syndrome uint8
	MSN      uint32
}

// Type is the syndrome type: AETHAck, AETHRNRNak, 2 (reserved) or AETHNak.
func (a *AETH) Type() uint8 { return a.Syndrome >> 5 & 0x03 }

// Value is the low five bits: credit count, RNR timer or NAK code.
func (a *AETH) Value() uint8 { return a.Syndrome & 0x1f }

func (a *AETH) LayerType() gopacket.LayerType     { return LayerTypeAETH }
func (a *AETH) CanDecode() gopacket.LayerClass    { return LayerTypeAETH }
func (a *AETH) Proto() *field.Proto               { return ProtoAETH }
func (a *AETH) NextLayerType() gopacket.LayerType { return a.next(LayerTypeAETH, 1<<24) }
func (a *AETH) String() string {
	return fmt.Sprintf("AETH %s msn=%d", aethTypeNames[uint64(a.Type())], a.MSN)
}

// AppendSummary appends "ACK msn=5" or "NAK Invalid Request msn=5",
// without fmt (it runs for every ACK line of the default view).
func (a *AETH) AppendSummary(b []byte) []byte {
	switch a.Type() {
	case AETHNak:
		b = append(b, "NAK "...)
		if s, ok := aethNakNames[uint64(a.Value())]; ok {
			b = append(b, s...)
		} else {
			b = strconv.AppendUint(append(b, "code "...), uint64(a.Value()), 10)
		}
	case AETHRNRNak:
		b = append(b, "RNR NAK timer="...)
		b = strconv.AppendUint(b, uint64(a.Value()), 10)
	default:
		b = append(b, aethSummaryTypes[a.Type()]...)
	}
	b = append(b, " msn="...)
	return strconv.AppendUint(b, uint64(a.MSN), 10)
}

// aethSummaryTypes is aethTypeNames as an array, for AppendSummary.
var aethSummaryTypes = func() (t [4]string) {
	for i := range t {
		t[i] = aethTypeNames[uint64(i)]
	}
	return t
}()

func (a *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := a.split(data, df, aethLen, "AETH", "header"); err != nil {
		return err
	}
	a.Syndrome = data[0]
	a.MSN = binary.BigEndian.Uint32(data) & 0xffffff
	return nil
}

func (a *AETH) VisitFields(v field.Visitor) {
	v.Uint(fAETHSyndrome, uint64(a.Syndrome))
	v.Uint(fAETHReserved, uint64(a.Syndrome>>7))
	v.Uint(fAETHType, uint64(a.Type()))
	switch a.Type() {
	case AETHAck:
		v.Uint(fAETHCredit, uint64(a.Value()))
	case AETHRNRNak:
		v.Uint(fAETHTimer, uint64(a.Value()))
	case AETHNak:
		v.Uint(fAETHErrorCode, uint64(a.Value()))
	default:
		v.Uint(fAETHReservedVal, uint64(a.Value()))
	}
	v.Uint(fAETHMSN, uint64(a.MSN))
}

func (a *AETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(aethLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(h, a.MSN&0xffffff)
	h[0] = a.Syndrome
	return nil
}

// ProtoIETH and its field (tshark: infiniband.ieth).
var (
	ProtoIETH = field.NewProto("ieth", "InfiniBand Invalidate Extended Transport Header")
	fIETHRKey = ProtoIETH.Hex("ieth", 32, "R_Key to invalidate")
)

// IETH is the Invalidate Extended Transport Header of SEND with Invalidate.
type IETH struct {
	ext
	RKey uint32
}

func (i *IETH) LayerType() gopacket.LayerType     { return LayerTypeIETH }
func (i *IETH) CanDecode() gopacket.LayerClass    { return LayerTypeIETH }
func (i *IETH) Proto() *field.Proto               { return ProtoIETH }
func (i *IETH) NextLayerType() gopacket.LayerType { return i.next(LayerTypeIETH, 1<<24) }
func (i *IETH) String() string                    { return fmt.Sprintf("IETH rkey=0x%08x", i.RKey) }
func (i *IETH) AppendSummary(b []byte) []byte {
	return appendHexDigits(append(b, "invalidate rkey=0x"...), uint64(i.RKey), 8)
}

func (i *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := i.split(data, df, wordLen, "IETH", "R_Key"); err != nil {
		return err
	}
	i.RKey = binary.BigEndian.Uint32(data)
	return nil
}

func (i *IETH) VisitFields(v field.Visitor) { v.Uint(fIETHRKey, uint64(i.RKey)) }

func (i *IETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return serializeWord(b, i.RKey)
}

// serializeWord prepends a 4-octet extension header holding v.
func serializeWord(b gopacket.SerializeBuffer, v uint32) error {
	h, err := b.PrependBytes(wordLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(h, v)
	return nil
}

// ProtoImmDt and its field (tshark: infiniband.immdt).
var (
	ProtoImmDt = field.NewProto("immdt", "InfiniBand Immediate Data")
	fImmDt     = ProtoImmDt.Hex("immdt", 32, "Immediate Data")
)

// ImmDt is the 4-octet Immediate Data of *_WITH_IMMEDIATE opcodes.
type ImmDt struct {
	ext
	Data uint32
}

func (i *ImmDt) LayerType() gopacket.LayerType     { return LayerTypeImmDt }
func (i *ImmDt) CanDecode() gopacket.LayerClass    { return LayerTypeImmDt }
func (i *ImmDt) Proto() *field.Proto               { return ProtoImmDt }
func (i *ImmDt) NextLayerType() gopacket.LayerType { return i.next(LayerTypeImmDt, 1<<24) }
func (i *ImmDt) String() string                    { return fmt.Sprintf("ImmDt 0x%08x", i.Data) }

func (i *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := i.split(data, df, wordLen, "ImmDt", "immediate data"); err != nil {
		return err
	}
	i.Data = binary.BigEndian.Uint32(data)
	return nil
}

func (i *ImmDt) VisitFields(v field.Visitor) { v.Uint(fImmDt, uint64(i.Data)) }

func (i *ImmDt) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return serializeWord(b, i.Data)
}

// ProtoAtomicETH and its fields (tshark: infiniband.atomiceth.*).
var (
	ProtoAtomicETH    = field.NewProto("atomiceth", "InfiniBand Atomic Extended Transport Header")
	fAtomicETHVA      = ProtoAtomicETH.Hex("atomiceth.va", 64, "Virtual Address")
	fAtomicETHRKey    = ProtoAtomicETH.Hex("atomiceth.r_key", 32, "Remote Key")
	fAtomicETHSwapDt  = ProtoAtomicETH.Hex("atomiceth.swapdt", 64, "Swap (or Add) Data")
	fAtomicETHCmpDt   = ProtoAtomicETH.Hex("atomiceth.cmpdt", 64, "Compare Data")
	ProtoAtomicAckETH = field.NewProto("atomicacketh", "InfiniBand Atomic Acknowledge Extended Transport Header")
	fAtomicAckOrig    = ProtoAtomicAckETH.Hex("atomicacketh.origremdt", 64, "Original Remote Data")
)

// AtomicETH is the Atomic Extended Transport Header (COMPARE_SWAP,
// FETCH_ADD).
type AtomicETH struct {
	ext
	VA       uint64
	RKey     uint32
	SwapData uint64
	CmpData  uint64
}

func (a *AtomicETH) LayerType() gopacket.LayerType     { return LayerTypeAtomicETH }
func (a *AtomicETH) CanDecode() gopacket.LayerClass    { return LayerTypeAtomicETH }
func (a *AtomicETH) Proto() *field.Proto               { return ProtoAtomicETH }
func (a *AtomicETH) NextLayerType() gopacket.LayerType { return a.next(LayerTypeAtomicETH, 1<<24) }

func (a *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := a.split(data, df, atomicETHLen, "AtomicETH", "header"); err != nil {
		return err
	}
	a.VA = binary.BigEndian.Uint64(data)
	a.RKey = binary.BigEndian.Uint32(data[8:])
	a.SwapData = binary.BigEndian.Uint64(data[12:])
	a.CmpData = binary.BigEndian.Uint64(data[20:])
	return nil
}

func (a *AtomicETH) VisitFields(v field.Visitor) {
	v.Uint(fAtomicETHVA, a.VA)
	v.Uint(fAtomicETHRKey, uint64(a.RKey))
	v.Uint(fAtomicETHSwapDt, a.SwapData)
	v.Uint(fAtomicETHCmpDt, a.CmpData)
}

func (a *AtomicETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(atomicETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(h, a.VA)
	binary.BigEndian.PutUint32(h[8:], a.RKey)
	binary.BigEndian.PutUint64(h[12:], a.SwapData)
	binary.BigEndian.PutUint64(h[20:], a.CmpData)
	return nil
}

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header.
type AtomicAckETH struct {
	ext
	OrigRemData uint64
}

func (a *AtomicAckETH) LayerType() gopacket.LayerType  { return LayerTypeAtomicAckETH }
func (a *AtomicAckETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicAckETH }
func (a *AtomicAckETH) Proto() *field.Proto            { return ProtoAtomicAckETH }
func (a *AtomicAckETH) NextLayerType() gopacket.LayerType {
	return a.next(LayerTypeAtomicAckETH, 1<<24)
}

func (a *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := a.split(data, df, atomicAckETHLen, "AtomicAckETH", "original remote data"); err != nil {
		return err
	}
	a.OrigRemData = binary.BigEndian.Uint64(data)
	return nil
}

func (a *AtomicAckETH) VisitFields(v field.Visitor) { v.Uint(fAtomicAckOrig, a.OrigRemData) }

func (a *AtomicAckETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(atomicAckETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(h, a.OrigRemData)
	return nil
}
