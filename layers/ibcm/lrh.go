package ibcm

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

const (
	lrhLen  = 8
	grhLen  = 40
	bthLen  = 12
	udpLen  = 8
	icrcLen = 4
	vcrcLen = 2

	lnhRaw       = 0 // raw packet
	lnhIPv6      = 1 // IP non-IBA transport (IPv6 follows)
	lnhIBALocal  = 2 // BTH follows
	lnhIBAGlobal = 3 // GRH follows

	// GRHNextHeaderIBA is the GRH NxtHdr of an IBA transport packet.
	GRHNextHeaderIBA = 0x1b
)

var lnhNames = map[uint64]string{lnhRaw: "Raw", lnhIPv6: "IP Non-IBA Transport", lnhIBALocal: "IBA Local (BTH)", lnhIBAGlobal: "IBA Global (GRH)"}

// ProtoLRH and its fields (tshark: infiniband.lrh.*).
var (
	ProtoLRH        = field.NewProto("lrh", "InfiniBand Local Route Header")
	fLRHVL          = ProtoLRH.Uint("lrh.vl", 4, "Virtual Lane")
	fLRHLVer        = ProtoLRH.Uint("lrh.lver", 4, "Link Version")
	fLRHSL          = ProtoLRH.Uint("lrh.sl", 4, "Service Level")
	fLRHReserved2   = ProtoLRH.Uint("lrh.reserved2", 2, "Reserved (2 bits)")
	fLRHLNH         = ProtoLRH.Uint("lrh.lnh", 2, "Link Next Header").WithNames(lnhNames)
	fLRHDLID        = ProtoLRH.Uint("lrh.dlid", 16, "Destination Local ID")
	fLRHReserved5   = ProtoLRH.Uint("lrh.reserved5", 5, "Reserved (5 bits)")
	fLRHPktLen      = ProtoLRH.Uint("lrh.pktlen", 11, "Packet Length").WithUnit("4-octet words")
	fLRHSLID        = ProtoLRH.Uint("lrh.slid", 16, "Source Local ID")
	fLRHVCRC        = ProtoLRH.Hex("lrh.vcrc", 16, "Variant CRC").WithRef("IBTA vol. 1 §7.8.2")
	fLRHVCRCStatus  = ProtoLRH.Uint("lrh.vcrc.status", 8, "Variant CRC status").WithNames(crcStatusNames)
	fLRHVCRCCompute = ProtoLRH.Hex("lrh.vcrc.computed", 16, "Variant CRC computed")
)

// LRH is the InfiniBand Local Route Header (8 octets), first in native IB
// frames (LINKTYPE_INFINIBAND, ERF type 21). Decoding it also checks the
// VCRC that follows the packet (PktLen·4 octets after the LRH's start).
//
// Payload is the packet after the LRH up to and including the ICRC (the
// VCRC is excluded), so a BTH decodes from it like from a UDP payload.
type LRH struct {
	layers.BaseLayer
	VL        uint8
	LVer      uint8
	SL        uint8
	Reserved2 uint8
	LNH       uint8
	DLID      uint16
	Reserved5 uint8
	PktLen    uint16 // in 4-octet words, LRH through ICRC

	SLID uint16

	// VCRC is the stored Variant CRC, VCRCComputed the one computed,
	// VCRCStatus the verdict (CRCUnchecked when the VCRC is missing).
	VCRC         uint16
	VCRCComputed uint16
	VCRCStatus   CRCStatus

	probs problems
}

// AppendSrc and AppendDst append the LIDs as "LID 5" (the summary view's
// address columns for native InfiniBand without a GRH).
func (l *LRH) AppendSrc(b []byte) []byte {
	return strconv.AppendUint(append(b, "LID "...), uint64(l.SLID), 10)
}
func (l *LRH) AppendDst(b []byte) []byte {
	return strconv.AppendUint(append(b, "LID "...), uint64(l.DLID), 10)
}

const (
	lrhProbLength problems = 1 << iota
	lrhProbReserved
	lrhProbNoVCRC
)

func (l *LRH) LayerType() gopacket.LayerType     { return LayerTypeLRH }
func (l *LRH) CanDecode() gopacket.LayerClass    { return LayerTypeLRH }
func (l *LRH) Proto() *field.Proto               { return ProtoLRH }
func (l *LRH) String() string                    { return fmt.Sprintf("LRH %d→%d LNH %d", l.SLID, l.DLID, l.LNH) }
func (l *LRH) LinkFlow() gopacket.Flow           { return gopacket.Flow{} }
func (l *LRH) NextLayerType() gopacket.LayerType { return lnhLayerType(l.LNH) }
func lnhLayerType(lnh uint8) gopacket.LayerType {
	switch lnh {
	case lnhIBALocal:
		return LayerTypeBTH
	case lnhIBAGlobal:
		return LayerTypeGRH
	case lnhIPv6:
		return layers.LayerTypeIPv6
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes an LRH and checks the VCRC after the packet.
func (l *LRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < lrhLen {
		return truncated(df, "LRH", "header", 0, lrhLen, len(data))
	}
	// Field by field, as the BTH (a literal assigned to *l is built and
	// copied whole).
	l.VL, l.LVer = data[0]>>4, data[0]&0x0f
	l.SL, l.Reserved2, l.LNH = data[1]>>4, data[1]>>2&0x03, data[1]&0x03
	l.DLID = binary.BigEndian.Uint16(data[2:4])
	l.Reserved5 = data[4] >> 3
	l.PktLen = binary.BigEndian.Uint16(data[4:6]) & 0x07ff
	l.SLID = binary.BigEndian.Uint16(data[6:8])
	l.VCRC, l.VCRCComputed, l.VCRCStatus = 0, 0, CRCUnchecked
	l.probs = 0
	l.checkPacket(data, df)
	return nil
}

// checkPacket notes what the decoded header fields and the packet around
// them show (reserved bits, PktLen against the captured octets, the VCRC)
// and sets the header's contents and payload.
func (l *LRH) checkPacket(data []byte, df gopacket.DecodeFeedback) {
	if l.Reserved2 != 0 || l.Reserved5 != 0 {
		l.probs |= lrhProbReserved
	}
	end := int(l.PktLen) * 4
	switch {
	case end < lrhLen:
		l.probs |= lrhProbLength
		end = len(data)
	case end > len(data):
		df.SetTruncated()
		l.probs |= lrhProbLength
		end = len(data)
	}
	if stored, computed, ok := CheckIBVCRC(data); ok {
		l.VCRC, l.VCRCComputed, l.VCRCStatus = stored, computed, verdict(uint32(stored), uint32(computed))
	} else {
		l.probs |= lrhProbNoVCRC
	}
	l.Contents, l.Payload = data[:lrhLen], data[lrhLen:end]
}

// VisitFields reports the LRH fields in wire order, then the VCRC verdict.
func (l *LRH) VisitFields(v field.Visitor) {
	v.Uint(fLRHVL, uint64(l.VL))
	v.Uint(fLRHLVer, uint64(l.LVer))
	v.Uint(fLRHSL, uint64(l.SL))
	v.Uint(fLRHReserved2, uint64(l.Reserved2))
	v.Uint(fLRHLNH, uint64(l.LNH))
	v.Uint(fLRHDLID, uint64(l.DLID))
	v.Uint(fLRHReserved5, uint64(l.Reserved5))
	v.Uint(fLRHPktLen, uint64(l.PktLen))
	v.Uint(fLRHSLID, uint64(l.SLID))
	if l.VCRCStatus != CRCUnchecked {
		v.Uint(fLRHVCRC, uint64(l.VCRC))
		v.Uint(fLRHVCRCCompute, uint64(l.VCRCComputed))
	}
	v.Uint(fLRHVCRCStatus, uint64(l.VCRCStatus))
}

// AppendFindings appends what the LRH noticed (offsets from its first octet).
func (l *LRH) AppendFindings(dst []finding.Finding) []finding.Finding {
	if l.probs == 0 && l.VCRCStatus != CRCBad {
		return dst // the common case: nothing to report
	}
	return l.appendProblems(dst)
}

// appendProblems appends a finding for each problem the LRH noticed.
func (l *LRH) appendProblems(dst []finding.Finding) []finding.Finding {
	if l.VCRCStatus == CRCBad {
		dst = append(dst, newFinding(CodeVCRCBad, finding.SeverityError, "lrh", int(l.PktLen)*4, "IBTA vol. 1 §7.8.2",
			"VCRC is 0x%04x, computed 0x%04x: the packet was damaged on the link (or the capture altered it)", l.VCRC, l.VCRCComputed))
	}
	if l.probs&lrhProbNoVCRC != 0 {
		dst = append(dst, newFinding(CodeLengthMismatch, finding.SeverityError, "lrh", 4, "IBTA vol. 1 §7.7.8",
			"PktLen %d (%d octets) leaves no room for the 2-octet VCRC in the %d captured octets: VCRC not checked", l.PktLen, int(l.PktLen)*4, len(l.Contents)+len(l.Payload)))
	} else if l.probs&lrhProbLength != 0 {
		dst = append(dst, newFinding(CodeLengthMismatch, finding.SeverityError, "lrh", 4, "IBTA vol. 1 §7.7.8",
			"PktLen %d (%d octets) does not fit the captured packet", l.PktLen, int(l.PktLen)*4))
	}
	if l.probs&lrhProbReserved != 0 {
		dst = append(dst, newFinding(CodeReservedBits, finding.SeverityWarning, "lrh", 1, "IBTA vol. 1 §7.7",
			"reserved LRH bits are set (2-bit field 0x%x, 5-bit field 0x%02x)", l.Reserved2, l.Reserved5))
	}
	return dst
}

// SerializeTo prepends the LRH. With FixLengths it sets PktLen from the
// bytes already in b (GRH/BTH … ICRC); with ComputeChecksums it computes
// the ICRC of an IBA packet (LNH 2 or 3) in place and appends the VCRC.
// Without ComputeChecksums the VCRC field's value is appended.
func (l *LRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	rest := len(b.Bytes())
	if opts.FixLengths {
		if (rest+lrhLen)%4 != 0 {
			return fmt.Errorf("LRH: packet of %d octets is not a multiple of 4", rest+lrhLen)
		}
		l.PktLen = uint16((rest + lrhLen) / 4)
	}
	h, err := b.PrependBytes(lrhLen)
	if err != nil {
		return err
	}
	h[0] = l.VL<<4 | l.LVer&0x0f
	h[1] = l.SL<<4 | l.Reserved2&0x03<<2 | l.LNH&0x03
	binary.BigEndian.PutUint16(h[2:], l.DLID)
	binary.BigEndian.PutUint16(h[4:], uint16(l.Reserved5)<<11|l.PktLen&0x07ff)
	binary.BigEndian.PutUint16(h[6:], l.SLID)
	pkt := b.Bytes()
	if opts.ComputeChecksums {
		if _, computed, ok := CheckIBICRC(pkt); ok {
			end := int(l.PktLen) * 4
			binary.BigEndian.PutUint32(pkt[end-icrcLen:], computed)
		}
		end := min(int(l.PktLen)*4, len(pkt))
		l.VCRC = bits.ReverseBytes16(vcrc16(pkt[:end]))
	}
	t, err := b.AppendBytes(vcrcLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(t, l.VCRC)
	return nil
}
