package ibcm

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// Opcode is a BTH OpCode: the transport in the top three bits (RC 0x00,
// UC 0x20, RD 0x40, UD 0x60, CNP 0x80, XRC 0xA0), the operation in the low
// five (include/rdma/ib_pack.h).
type Opcode uint8

// Opcodes used by name in this project.
const (
	OpRCSendFirst        Opcode = 0x00
	OpRCSendMiddle       Opcode = 0x01
	OpRCSendLast         Opcode = 0x02
	OpRCSendLastImm      Opcode = 0x03
	OpRCSendOnly         Opcode = 0x04
	OpRCSendOnlyImm      Opcode = 0x05
	OpRCWriteFirst       Opcode = 0x06
	OpRCWriteMiddle      Opcode = 0x07
	OpRCWriteLast        Opcode = 0x08
	OpRCWriteLastImm     Opcode = 0x09
	OpRCWriteOnly        Opcode = 0x0a
	OpRCWriteOnlyImm     Opcode = 0x0b
	OpRCReadRequest      Opcode = 0x0c
	OpRCReadRespFirst    Opcode = 0x0d
	OpRCReadRespMiddle   Opcode = 0x0e
	OpRCReadRespLast     Opcode = 0x0f
	OpRCReadRespOnly     Opcode = 0x10
	OpRCAck              Opcode = 0x11
	OpRCAtomicAck        Opcode = 0x12
	OpRCCompareSwap      Opcode = 0x13
	OpRCFetchAdd         Opcode = 0x14
	OpRCSendLastInv      Opcode = 0x16
	OpRCSendOnlyInv      Opcode = 0x17
	OpRCFlush            Opcode = 0x1c
	OpRCAtomicWrite      Opcode = 0x1d
	OpUDSendOnly         Opcode = 0x64
	OpUDSendOnlyImm      Opcode = 0x65
	OpCNP                Opcode = 0x81
	opTransportMask      Opcode = 0xe0
	opOperationMask      Opcode = 0x1f
	transportRC          Opcode = 0x00
	transportUC          Opcode = 0x20
	transportRD          Opcode = 0x40
	transportUD          Opcode = 0x60
	transportCNP         Opcode = 0x80
	transportXRC         Opcode = 0xa0
	transportVendorFirst Opcode = 0xc0
)

var operationNames = [32]string{
	0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_WITH_IMMEDIATE",
	0x04: "SEND_ONLY", 0x05: "SEND_ONLY_WITH_IMMEDIATE", 0x06: "RDMA_WRITE_FIRST", 0x07: "RDMA_WRITE_MIDDLE",
	0x08: "RDMA_WRITE_LAST", 0x09: "RDMA_WRITE_LAST_WITH_IMMEDIATE", 0x0a: "RDMA_WRITE_ONLY",
	0x0b: "RDMA_WRITE_ONLY_WITH_IMMEDIATE", 0x0c: "RDMA_READ_REQUEST", 0x0d: "RDMA_READ_RESPONSE_FIRST",
	0x0e: "RDMA_READ_RESPONSE_MIDDLE", 0x0f: "RDMA_READ_RESPONSE_LAST", 0x10: "RDMA_READ_RESPONSE_ONLY",
	0x11: "ACKNOWLEDGE", 0x12: "ATOMIC_ACKNOWLEDGE", 0x13: "COMPARE_SWAP", 0x14: "FETCH_ADD",
	0x16: "SEND_LAST_WITH_INVALIDATE", 0x17: "SEND_ONLY_WITH_INVALIDATE", 0x1c: "FLUSH", 0x1d: "ATOMIC_WRITE",
}

var transportNames = map[Opcode]string{transportRC: "RC", transportUC: "UC", transportRD: "RD", transportUD: "UD", transportXRC: "XRC"}

// Transport returns "RC", "UC", "RD", "UD", "XRC", "CNP" or "vendor".
func (o Opcode) Transport() string {
	if o == OpCNP {
		return "CNP"
	}
	if o >= transportVendorFirst {
		return "vendor"
	}
	if s, ok := transportNames[o&opTransportMask]; ok {
		return s
	}
	return "reserved"
}

// Known reports whether IBTA defines the opcode.
func (o Opcode) Known() bool { return opcodeChain[o].names != nil }

// String returns e.g. "RC SEND_ONLY", "UD SEND_ONLY", "CNP" or "0x3f".
func (o Opcode) String() string {
	if o == OpCNP {
		return "CNP"
	}
	if !o.Known() {
		return fmt.Sprintf("0x%02x", uint8(o))
	}
	return o.Transport() + " " + operationNames[o&opOperationMask]
}

// appendName appends what String returns, without allocating.
func (o Opcode) appendName(b []byte) []byte {
	switch {
	case o == OpCNP:
		return append(b, "CNP"...)
	case !o.Known():
		return appendHexDigits(append(b, "0x"...), uint64(o), 2)
	}
	b = append(b, o.Transport()...)
	b = append(b, ' ')
	return append(b, operationNames[o&opOperationMask]...)
}

// appendHexDigits appends v in lower-case hex, zero-padded to digits.
func appendHexDigits(b []byte, v uint64, digits int) []byte {
	const hexd = "0123456789abcdef"
	for n := 16; n > digits; n-- {
		if v>>(4*uint(n-1)) != 0 {
			digits = n
			break
		}
	}
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hexd[v>>(4*uint(i))&15])
	}
	return b
}

// Operation returns the operation name without the transport: "SEND_ONLY".
func (o Opcode) Operation() string {
	if o == OpCNP {
		return "CNP"
	}
	if !o.Known() {
		return ""
	}
	return operationNames[o&opOperationMask]
}

// IsSendFirstOrOnly reports a SEND FIRST or SEND ONLY of RC, UC or UD (with
// or without immediate data or invalidate): the packets whose payload starts
// a Send message (an RPC-over-RDMA header on NFS/RDMA).
func (o Opcode) IsSendFirstOrOnly() bool {
	if !o.Known() {
		return false
	}
	switch o & opOperationMask {
	case 0x00, 0x04, 0x05, 0x17:
		return true
	}
	return false
}

// IsSend reports any SEND opcode (first, middle, last, only, with
// immediate data or invalidate).
func (o Opcode) IsSend() bool {
	if !o.Known() {
		return false
	}
	switch o & opOperationMask {
	case 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x16, 0x17:
		return true
	}
	return false
}

// IsInvalidate reports SEND_LAST/ONLY_WITH_INVALIDATE (0x16, 0x17).
func (o Opcode) IsInvalidate() bool { return o == OpRCSendLastInv || o == OpRCSendOnlyInv }

// chain is the sequence of extension headers an opcode carries after the
// BTH (IBTA vol. 1 §9.2, table 38).
type chain struct {
	hdrs  [2]gopacket.LayerType
	n     int
	names []string // non-nil for defined opcodes
}

var opcodeChain [256]chain

func init() {
	none := func() chain { return chain{names: []string{}} }
	with := func(ts ...gopacket.LayerType) chain {
		c := chain{names: []string{}, n: len(ts)}
		copy(c.hdrs[:], ts)
		return c
	}
	base := map[Opcode]chain{
		0x00: none(), 0x01: none(), 0x02: none(), 0x03: with(LayerTypeImmDt), 0x04: none(), 0x05: with(LayerTypeImmDt),
		0x06: with(LayerTypeRETH), 0x07: none(), 0x08: none(), 0x09: with(LayerTypeImmDt), 0x0a: with(LayerTypeRETH),
		0x0b: with(LayerTypeRETH, LayerTypeImmDt),
	}
	for op, c := range base { // RC and UC share SEND and RDMA WRITE
		opcodeChain[transportRC|op] = c
		opcodeChain[transportUC|op] = c
	}
	rcOnly := map[Opcode]chain{
		0x0c: with(LayerTypeRETH), 0x0d: with(LayerTypeAETH), 0x0e: none(), 0x0f: with(LayerTypeAETH),
		0x10: with(LayerTypeAETH), 0x11: with(LayerTypeAETH), 0x12: with(LayerTypeAETH, LayerTypeAtomicAckETH),
		0x13: with(LayerTypeAtomicETH), 0x14: with(LayerTypeAtomicETH), 0x16: with(LayerTypeIETH),
		0x17: with(LayerTypeIETH), 0x1c: none(), 0x1d: with(LayerTypeRETH),
	}
	for op, c := range rcOnly {
		opcodeChain[transportRC|op] = c
	}
	// RD (RDETH, DETH first) and XRC (XRCETH first) are recognised but
	// their extension headers are not decoded: the payload keeps them.
	for op := Opcode(0); op <= 0x14; op++ {
		opcodeChain[transportRD|op] = none()
	}
	for op, c := range base {
		opcodeChain[transportXRC|op] = c
	}
	for op, c := range rcOnly {
		opcodeChain[transportXRC|op] = c
	}
	opcodeChain[OpUDSendOnly] = with(LayerTypeDETH)
	opcodeChain[OpUDSendOnlyImm] = with(LayerTypeDETH, LayerTypeImmDt)
	opcodeChain[OpCNP] = none()
	for op := range opcodeChain {
		if opcodeChain[op].names != nil {
			opcodeNames[uint64(op)] = Opcode(op).String()
		}
	}
}

var opcodeNames = map[uint64]string{}

// undecodedTransport reports RD and XRC, whose own extension headers
// (RDETH, XRCETH) this package leaves in the payload.
func undecodedTransport(o Opcode) bool {
	t := o & opTransportMask
	return t == transportRD || t == transportXRC
}

// ProtoBTH and its fields (tshark: infiniband.bth.*).
var (
	ProtoBTH          = field.NewProto("bth", "InfiniBand Base Transport Header")
	fBTHOpcode        = ProtoBTH.Hex("bth.opcode", 8, "Opcode").WithNames(opcodeNames)
	fBTHSE            = ProtoBTH.Bool("bth.se", "Solicited Event")
	fBTHM             = ProtoBTH.Bool("bth.m", "MigReq")
	fBTHPadCnt        = ProtoBTH.Uint("bth.padcnt", 2, "Pad Count").WithUnit("octets")
	fBTHTVer          = ProtoBTH.Uint("bth.tver", 4, "Header Version")
	fBTHPKey          = ProtoBTH.Hex("bth.p_key", 16, "Partition Key")
	fBTHFECN          = ProtoBTH.Bool("bth.fecn", "Forward Explicit Congestion Notification")
	fBTHBECN          = ProtoBTH.Bool("bth.becn", "Backward Explicit Congestion Notification")
	fBTHReserved      = ProtoBTH.Hex("bth.reserved", 6, "Reserved (6 bits)")
	fBTHDestQP        = ProtoBTH.Hex("bth.destqp", 24, "Destination Queue Pair")
	fBTHA             = ProtoBTH.Bool("bth.a", "Acknowledge Request")
	fBTHReserved7     = ProtoBTH.Hex("bth.reserved7", 7, "Reserved (7 bits)")
	fBTHPSN           = ProtoBTH.Uint("bth.psn", 24, "Packet Sequence Number")
	fBTHICRC          = ProtoBTH.Hex("bth.icrc", 32, "Invariant CRC").WithRef("IBTA vol. 1 §7.8.1")
	fBTHICRCComputed  = ProtoBTH.Hex("bth.icrc.computed", 32, "Invariant CRC computed")
	fBTHICRCStatus    = ProtoBTH.Uint("bth.icrc.status", 8, "Invariant CRC status").WithNames(crcStatusNames)
	fBTHPayloadLength = ProtoBTH.Uint("bth.payload_length", 32, "Payload length (after extension headers, without pad and ICRC)").WithUnit("octets")
)

// BTH is the InfiniBand Base Transport Header (12 octets). DecodeFromBytes
// takes the packet from the BTH to its end, ICRC included (a RoCEv2 UDP
// payload, or an LRH/GRH payload): Payload is what follows the BTH up to
// the pad octets, so extension headers and data decode from it. ICRC holds
// the stored ICRC; the verdict needs the headers before the BTH, so it is
// CRCUnchecked until SetICRCComputed (or gopacket.NewPacket, which does it).
type BTH struct {
	layers.BaseLayer
	OpCode    Opcode
	SE        bool
	M         bool
	PadCnt    uint8
	TVer      uint8
	PKey      uint16
	FECN      bool
	BECN      bool
	Reserved6 uint8
	DestQP    uint32
	AckReq    bool
	Reserved7 uint8
	PSN       uint32

	ICRC         uint32 // the four ICRC octets read big-endian
	ICRCComputed uint32
	ICRCStatus   CRCStatus
	// PayloadLength is the Send/Write/Read payload length: the octets after
	// the extension headers, without pad and ICRC. Set by the extension
	// headers as they decode; equal to len(Payload) when the opcode has none.
	PayloadLength int

	probs problems
}

const (
	bthProbNoICRC problems = 1 << iota
	// bthProbUncaptured: the capture did not store the packet's end
	// (MarkUncaptured); not a problem of the packet, no finding.
	bthProbUncaptured
	// bthProbICRCAbsent: the frame holds the packet without its ICRC
	// (MarkICRCNotCaptured); not a problem of the packet, no finding.
	bthProbICRCAbsent
	bthProbPad
	bthProbTVer
	bthProbReserved
	bthProbOpcode
	bthProbUndecoded
)

func (b *BTH) LayerType() gopacket.LayerType  { return LayerTypeBTH }
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }
func (b *BTH) Proto() *field.Proto            { return ProtoBTH }
func (b *BTH) String() string {
	return fmt.Sprintf("BTH %s qp=0x%06x psn=%d", b.OpCode, b.DestQP, b.PSN)
}

// AppendSummary appends "RC SEND_ONLY qp=0x000011 psn=123". It is on the
// default view's per-packet path: the opcode's text comes from a table,
// the 24-bit QPN is six hex digits and the PSN goes through
// strconv.AppendUint.
func (b *BTH) AppendSummary(dst []byte) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, summaryNames[b.OpCode]...)
	if b.DestQP <= 0xffffff {
		q := b.DestQP
		dst = append(dst, ' ', 'q', 'p', '=', '0', 'x',
			hexd[q>>20&15], hexd[q>>16&15], hexd[q>>12&15], hexd[q>>8&15], hexd[q>>4&15], hexd[q&15])
	} else {
		dst = append(dst, " qp=0x"...)
		dst = appendHexDigits(dst, uint64(b.DestQP), 6)
	}
	dst = append(dst, " psn="...)
	dst = strconv.AppendUint(dst, uint64(b.PSN), 10)
	if b.ICRCStatus == CRCBad {
		dst = append(dst, " [BAD ICRC]"...)
	}
	return dst
}

// summaryNames[o] is what o.appendName appends ("RC SEND_ONLY", "0x3f"),
// made once for every opcode after opcodeChain is filled (the init above).
var summaryNames [256]string

func init() {
	for o := range summaryNames {
		summaryNames[o] = string(Opcode(o).appendName(nil))
	}
}

// NextLayerType is the first extension header of the opcode, or the
// payload: a MAD for UD SEND_ONLY to QP0/QP1, gopacket.LayerTypePayload
// otherwise (an RC SEND FIRST/ONLY payload is handed by dissect to the
// RPC-over-RDMA decoder).
func (b *BTH) NextLayerType() gopacket.LayerType {
	if t := firstExtHeader[b.OpCode]; t != gopacket.LayerTypeZero {
		return t
	}
	if len(b.Payload) == 0 {
		return gopacket.LayerTypeZero
	}
	return gopacket.LayerTypePayload
}

// firstExtHeader[o] is the first extension header of opcode o's chain,
// gopacket.LayerTypeZero for none (or for RD and XRC, whose headers are not
// decoded): NextLayerType's answer without walking the chain. Filled after
// opcodeChain (init functions run in file order, after every package
// variable is initialised).
var firstExtHeader [256]gopacket.LayerType

// opcodeProbs[o] is what opcode o alone makes the BTH report: reserved
// or vendor-specific, or RD/XRC whose headers stay undecoded (a 1 KB table
// instead of opcodeChain's 12 KB, read for every packet).
var opcodeProbs [256]problems

func init() {
	for o := range opcodeProbs {
		if op := Opcode(o); !op.Known() {
			opcodeProbs[o] = bthProbOpcode
		} else if undecodedTransport(op) {
			opcodeProbs[o] = bthProbUndecoded
		}
	}
	for o := range firstExtHeader {
		if c := &opcodeChain[o]; c.n > 0 && !undecodedTransport(Opcode(o)) {
			firstExtHeader[o] = c.hdrs[0]
		}
	}
}

// nextAfter returns the layer type that follows extension header t in
// this BTH's opcode chain.
func (b *BTH) nextAfter(t gopacket.LayerType, srcQP uint32, payload []byte) gopacket.LayerType {
	// Chains are at most two headers long: only the first has a successor.
	if c := &opcodeChain[b.OpCode]; c.n == 2 && c.hdrs[0] == t {
		return c.hdrs[1]
	}
	if len(payload) == 0 {
		return gopacket.LayerTypeZero
	}
	if b.OpCode == OpUDSendOnly && (b.DestQP <= 1 || srcQP <= 1) {
		return LayerTypeMAD
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the BTH from data, the packet from the BTH to the
// end of its ICRC. Every field is stored one by one (a composite literal
// assigned to *b was built and copied whole: a tenth of the per-packet
// header decoding), the header's three words read once.
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return b.decode(data, df, 0, false)
}

// DecodeWithICRC is DecodeFromBytes for a caller that has already read the
// four ICRC octets at data's end (big-endian, as icrc): the decoder does not
// load them again. (Loading each packet's last cache line only for its
// ICRC cost "stats" 2–9% of its wall time on the 2M-packet bench capture,
// in side-by-side runs, when another core had computed the ICRC ahead.)
func (b *BTH) DecodeWithICRC(data []byte, df gopacket.DecodeFeedback, icrc uint32) error {
	return b.decode(data, df, icrc, true)
}

func (b *BTH) decode(data []byte, df gopacket.DecodeFeedback, icrc uint32, haveICRC bool) error {
	if len(data) < bthLen {
		return truncated(df, "BTH", "header", 0, bthLen, len(data))
	}
	w0 := binary.BigEndian.Uint32(data[0:4])
	w1 := binary.BigEndian.Uint32(data[4:8])
	w2 := binary.BigEndian.Uint32(data[8:12])
	op, f := Opcode(w0>>24), uint8(w0>>16)
	b.OpCode = op
	b.SE, b.M, b.PadCnt, b.TVer = f&0x80 != 0, f&0x40 != 0, f>>4&0x03, f&0x0f
	b.PKey = uint16(w0)
	b.FECN, b.BECN, b.Reserved6 = w1&0x80000000 != 0, w1&0x40000000 != 0, uint8(w1>>24)&0x3f
	b.DestQP = w1 & 0xffffff
	b.AckReq, b.Reserved7 = w2&0x80000000 != 0, uint8(w2>>24)&0x7f
	b.PSN = w2 & 0xffffff
	b.ICRCComputed, b.ICRCStatus = 0, CRCUnchecked
	var probs problems
	end := len(data)
	if end < bthLen+icrcLen {
		df.SetTruncated()
		probs |= bthProbNoICRC
		b.ICRC = 0
	} else {
		if !haveICRC {
			icrc = binary.BigEndian.Uint32(data[end-icrcLen:])
		}
		b.ICRC = icrc
		end -= icrcLen
	}
	if pad := int(b.PadCnt); pad > end-bthLen {
		probs |= bthProbPad
	} else {
		end -= pad
	}
	if b.TVer != 0 {
		probs |= bthProbTVer
	}
	if w1&0x3f000000 != 0 || w2&0x7f000000 != 0 {
		probs |= bthProbReserved
	}
	b.probs = probs | opcodeProbs[op]
	b.Contents, b.Payload = data[:bthLen], data[bthLen:end]
	b.PayloadLength = end - bthLen
	return nil
}

// MarkTruncated tells the BTH that the packet was cut short by the capture
// (snap length, or a lower layer's length running past the captured
// octets): its last four octets are payload, not the ICRC, so there is no
// ICRC verdict and CodeICRCMissing is reported.
func (b *BTH) MarkTruncated() {
	if n := len(b.Payload) + int(b.PadCnt) + icrcLen; b.probs&bthProbNoICRC == 0 && n <= cap(b.Payload) {
		b.Payload = b.Payload[:n]
		b.PayloadLength = n
	}
	b.probs |= bthProbNoICRC
	b.ICRC, b.ICRCComputed, b.ICRCStatus = 0, 0, CRCUnchecked
}

// MarkUncaptured tells the BTH decoded from data (the packet from the BTH
// to the captured end) that the capture did not store the packet's last n
// octets (its snap length; the packet's own lengths are whole): the pad and
// ICRC lie in those octets as far as n reaches, so the captured octets
// before them are payload, and there is no ICRC to show or verify. Nothing
// is wrong with the packet: no finding. PayloadLength stays the captured
// payload's until WirePayload.
func (b *BTH) MarkUncaptured(data []byte, n int) {
	if len(data) < bthLen || n <= 0 {
		return
	}
	end := min(len(data), len(data)+n-int(b.PadCnt)-icrcLen)
	end = max(end, bthLen)
	b.Payload = data[bthLen:end]
	b.PayloadLength = end - bthLen
	b.probs = b.probs&^(bthProbNoICRC|bthProbPad) | bthProbUncaptured
	b.ICRC, b.ICRCComputed, b.ICRCStatus = 0, 0, CRCUnchecked
}

// MarkICRCNotCaptured tells the BTH decoded from data that data is the
// whole packet but its ICRC: the capture point delivered the packet up to
// its pad and left out the four ICRC octets, which the IP and UDP lengths
// still count (some NIC sniffers and port mirrors deliver RoCEv2 so). Its
// last four octets are payload, and there is no ICRC to show or verify
// (status not present). Nothing is wrong with the packet: no finding.
func (b *BTH) MarkICRCNotCaptured(data []byte) {
	if len(data) < bthLen {
		return
	}
	end := len(data)
	probs := b.probs &^ (bthProbNoICRC | bthProbPad)
	if pad := int(b.PadCnt); pad > end-bthLen {
		probs |= bthProbPad
	} else {
		end -= pad
	}
	b.Payload = data[bthLen:end]
	b.PayloadLength = end - bthLen
	b.probs = probs | bthProbICRCAbsent
	b.ICRC, b.ICRCComputed, b.ICRCStatus = 0, 0, field.ChecksumNotPresent
}

// WirePayload makes PayloadLength the payload's length on the wire when the
// capture did not store the packet's last n octets (MarkUncaptured): the
// octets after the BTH up to the pad, captured or not, less the opcode's
// extension headers (whether or not their octets were captured).
func (b *BTH) WirePayload(n int) {
	if b.probs&bthProbUncaptured == 0 {
		return
	}
	l := len(b.Payload) + max(n-int(b.PadCnt)-icrcLen, 0)
	c := &opcodeChain[b.OpCode]
	for _, t := range c.hdrs[:c.n] {
		l -= extLen(t)
	}
	b.PayloadLength = max(l, 0)
}

// extLen is the length of extension header t.
func extLen(t gopacket.LayerType) int {
	switch t {
	case LayerTypeDETH:
		return dethLen
	case LayerTypeRETH:
		return rethLen
	case LayerTypeAETH:
		return aethLen
	case LayerTypeAtomicETH:
		return atomicETHLen
	case LayerTypeAtomicAckETH:
		return atomicAckETHLen
	}
	return wordLen // IETH, ImmDt
}

// Uncaptured reports that the capture did not store the packet's end
// (MarkUncaptured).
func (b *BTH) Uncaptured() bool { return b.probs&bthProbUncaptured != 0 }

// SetICRCComputed records the ICRC computed for this packet (by
// CheckRoCEv2ICRC, CheckRoCEv1ICRC or CheckIBICRC) and sets the verdict.
func (b *BTH) SetICRCComputed(computed uint32) {
	if b.probs&(bthProbNoICRC|bthProbUncaptured|bthProbICRCAbsent) != 0 {
		return
	}
	b.ICRCComputed, b.ICRCStatus = computed, verdict(b.ICRC, computed)
}

// GetUint implements field.UintGetter for the opcode, destination QP and
// PSN.
func (b *BTH) GetUint(f *field.Field) (v uint64, has, known bool) {
	switch f {
	case fBTHOpcode:
		return uint64(b.OpCode), true, true
	case fBTHDestQP:
		return uint64(b.DestQP), true, true
	case fBTHPSN:
		return uint64(b.PSN), true, true
	}
	return 0, false, false
}

// VisitFields reports the BTH fields in wire order, then the ICRC verdict.
func (b *BTH) VisitFields(v field.Visitor) {
	v.Uint(fBTHOpcode, uint64(b.OpCode))
	v.Bool(fBTHSE, b.SE)
	v.Bool(fBTHM, b.M)
	v.Uint(fBTHPadCnt, uint64(b.PadCnt))
	v.Uint(fBTHTVer, uint64(b.TVer))
	v.Uint(fBTHPKey, uint64(b.PKey))
	v.Bool(fBTHFECN, b.FECN)
	v.Bool(fBTHBECN, b.BECN)
	v.Uint(fBTHReserved, uint64(b.Reserved6))
	v.Uint(fBTHDestQP, uint64(b.DestQP))
	v.Bool(fBTHA, b.AckReq)
	v.Uint(fBTHReserved7, uint64(b.Reserved7))
	v.Uint(fBTHPSN, uint64(b.PSN))
	v.Uint(fBTHPayloadLength, uint64(b.PayloadLength))
	if b.probs&(bthProbNoICRC|bthProbUncaptured|bthProbICRCAbsent) == 0 {
		v.Uint(fBTHICRC, uint64(b.ICRC))
		if b.ICRCStatus != CRCUnchecked {
			v.Uint(fBTHICRCComputed, uint64(b.ICRCComputed))
		}
	}
	v.Uint(fBTHICRCStatus, uint64(b.ICRCStatus))
}

// AppendFindings appends what the BTH noticed (offsets from its first octet).
func (b *BTH) AppendFindings(dst []finding.Finding) []finding.Finding {
	if b.probs == 0 && b.ICRCStatus != CRCBad {
		return dst // the common case: nothing to report
	}
	return b.appendProblems(dst)
}

// appendProblems appends a finding for each problem the BTH noticed.
func (b *BTH) appendProblems(dst []finding.Finding) []finding.Finding {
	icrcOff := bthLen + len(b.Payload) + int(b.PadCnt)
	if b.ICRCStatus == CRCBad {
		dst = append(dst, newFinding(CodeICRCBad, finding.SeverityError, "bth", icrcOff, "IBTA vol. 1 §7.8.1",
			"ICRC is 0x%08x, computed 0x%08x: a receiver drops this packet", b.ICRC, b.ICRCComputed))
	}
	if b.probs&bthProbNoICRC != 0 {
		dst = append(dst, newFinding(CodeICRCMissing, finding.SeverityError, "bth", bthLen, "IBTA vol. 1 §7.8.1",
			"the packet ends %d octets after the BTH, before its 4-octet ICRC", len(b.Payload)))
	}
	if b.probs&bthProbPad != 0 {
		dst = append(dst, newFinding(CodeLengthMismatch, finding.SeverityError, "bth", 1, "IBTA vol. 1 §9.2.3",
			"PadCnt %d is more than the %d payload octets", b.PadCnt, len(b.Payload)))
	}
	if b.probs&bthProbTVer != 0 {
		dst = append(dst, newFinding(CodeBadTVer, finding.SeverityError, "bth", 1, "IBTA vol. 1 §9.2.5",
			"transport header version %d: only 0 is defined, receivers drop the packet", b.TVer))
	}
	if b.probs&bthProbReserved != 0 {
		dst = append(dst, newFinding(CodeReservedBits, finding.SeverityWarning, "bth", 4, "IBTA vol. 1 §9.2",
			"reserved BTH bits are set (6-bit field 0x%02x, 7-bit field 0x%02x)", b.Reserved6, b.Reserved7))
	}
	if b.probs&bthProbOpcode != 0 {
		dst = append(dst, newFinding(CodeUnknownOpcode, finding.SeverityWarning, "bth", 0, "IBTA vol. 1 §9.2.1",
			"opcode 0x%02x is reserved or vendor-specific", uint8(b.OpCode)))
	}
	if b.probs&bthProbUndecoded != 0 {
		dst = append(dst, newFinding(CodeNotDecoded, finding.SeverityInfo, "bth", bthLen, "IBTA vol. 1 §9.2",
			"%s extension headers (RDETH/XRCETH) are not decoded; they stay in the payload", b.OpCode.Transport()))
	}
	return dst
}

// SerializeTo prepends the BTH to the extension headers and payload already
// in b, appending the pad and the ICRC field. With FixLengths PadCnt pads
// the payload to a multiple of 4. The ICRC written is b.ICRC: the layer
// that knows the headers before the BTH computes it (LRH and GRH do with
// ComputeChecksums; for RoCEv2 use SerializeRoCEv2).
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		b.PadCnt = uint8((4 - len(buf.Bytes())%4) % 4)
	}
	t, err := buf.AppendBytes(int(b.PadCnt) + icrcLen)
	if err != nil {
		return err
	}
	clear(t[:b.PadCnt])
	binary.BigEndian.PutUint32(t[b.PadCnt:], b.ICRC)
	h, err := buf.PrependBytes(bthLen)
	if err != nil {
		return err
	}
	h[0] = uint8(b.OpCode)
	h[1] = boolBit(b.SE, 0x80) | boolBit(b.M, 0x40) | b.PadCnt&0x03<<4 | b.TVer&0x0f
	binary.BigEndian.PutUint16(h[2:], b.PKey)
	binary.BigEndian.PutUint32(h[4:], b.DestQP&0xffffff)
	h[4] = boolBit(b.FECN, 0x80) | boolBit(b.BECN, 0x40) | b.Reserved6&0x3f
	binary.BigEndian.PutUint32(h[8:], b.PSN&0xffffff)
	h[8] = boolBit(b.AckReq, 0x80) | b.Reserved7&0x7f
	return nil
}

func boolBit(b bool, bit uint8) uint8 {
	if b {
		return bit
	}
	return 0
}

// decodeBTH is gopacket's decoder for LayerTypeBTH (UDP port 4791, GRH
// NxtHdr 0x1B, LRH LNH 2). It computes the ICRC from the layers already
// decoded (IP and UDP, GRH, LRH), then walks the opcode's extension headers
// and hands the payload on: a MAD to decodeMAD, anything else as
// gopacket.Payload.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	b := &BTH{}
	if err := b.DecodeFromBytes(data, p); err != nil {
		return err
	}
	if pkt, ok := p.(gopacket.Packet); ok && pkt.Metadata().Truncated {
		if ci := pkt.Metadata().CaptureInfo; ci.Length > ci.CaptureLength {
			// The snap length cut the packet, not its own lengths.
			b.MarkUncaptured(data, ci.Length-ci.CaptureLength)
		} else if u, ok := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP); ok && int(u.Length)-udpLen-len(data) == icrcLen {
			// The UDP length counts exactly the ICRC more than the frame
			// holds: the capture point did not deliver it.
			b.MarkICRCNotCaptured(data)
		} else {
			b.MarkTruncated()
		}
	} else if c, ok := icrcFromContext(p, data); ok {
		b.SetICRCComputed(c)
	}
	p.AddLayer(b)
	next := b.NextLayerType()
	payload := b.Payload
	var srcQP uint32 = 1 << 24
	for {
		l := newExtHeader(next, b)
		if l == nil {
			break
		}
		if err := l.DecodeFromBytes(payload, p); err != nil {
			return err
		}
		p.AddLayer(l)
		if d, ok := l.(*DETH); ok {
			srcQP = d.SrcQP
		}
		payload = l.LayerPayload()
		next = b.nextAfter(next, srcQP, payload)
	}
	if next == gopacket.LayerTypeZero {
		return nil
	}
	return p.NextDecoder(next)
}

// decodingLayer is what every layer of this package implements.
type decodingLayer interface {
	gopacket.DecodingLayer
	gopacket.Layer
}

func newExtHeader(t gopacket.LayerType, b *BTH) decodingLayer {
	e := ext{bth: b}
	switch t {
	case LayerTypeDETH:
		return &DETH{ext: e}
	case LayerTypeRETH:
		return &RETH{ext: e}
	case LayerTypeAETH:
		return &AETH{ext: e}
	case LayerTypeIETH:
		return &IETH{ext: e}
	case LayerTypeImmDt:
		return &ImmDt{ext: e}
	case LayerTypeAtomicETH:
		return &AtomicETH{ext: e}
	case LayerTypeAtomicAckETH:
		return &AtomicAckETH{ext: e}
	}
	return nil
}

// icrcFromContext computes the ICRC of ib (BTH … ICRC) from the layers a
// non-lazy gopacket packet decoded before it.
func icrcFromContext(p gopacket.PacketBuilder, ib []byte) (uint32, bool) {
	if opts := p.DecodeOptions(); opts == nil || opts.Lazy {
		return 0, false
	}
	pkt, ok := p.(gopacket.Packet)
	if !ok || len(ib) < bthLen+icrcLen {
		return 0, false
	}
	ls := pkt.Layers()
	if len(ls) == 0 {
		return 0, false
	}
	crc := crcOnesLRH
	switch prev := ls[len(ls)-1].(type) {
	case *layers.UDP:
		if len(ls) < 2 {
			return 0, false
		}
		switch ip := ls[len(ls)-2].(type) {
		case *layers.IPv4:
			crc = crcIPv4Masked(crc, ip.Contents)
		case *layers.IPv6:
			crc = crcIPv6Masked(crc, ip.Contents)
		default:
			return 0, false
		}
		crc = crcUDPMasked(crc, prev.Contents)
	case *GRH:
		crc = crcIPv6Masked(crc, prev.Contents)
	case *LRH:
		crc = crcLRHMasked(prev.Contents)
	default:
		return 0, false
	}
	return crcBTHOn(crc, ib), true
}
