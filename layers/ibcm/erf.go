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

// ERF record types (ERF types reference, Wireshark's erf.h).
const (
	ERFTypeEthernet     = 2  // Ethernet, after 2 octets (offset, pad)
	erfTypeColorEth     = 11 // Ethernet with colour, the same 2 octets
	erfTypeDSMColorEth  = 16 // Ethernet with DSM colour, the same 2 octets
	erfTypeColorHashEth = 20 // Ethernet with colour and hash, the same 2 octets
	ERFTypeInfiniBand   = 21 // InfiniBand, the LRH first (ibdump)
	ERFTypeIPv4         = 22 // an IPv4 packet
	ERFTypeIPv6         = 23 // an IPv6 packet
	erfHeaderLen        = 16
	erfTypeMask         = 0x7f
	erfExtension        = 0x80
	erfEthPadLen        = 2
)

var erfTypeNames = map[uint64]string{
	1: "HDLC POS", 2: "Ethernet", 3: "ATM", 4: "AAL5", 5: "Multichannel HDLC", 6: "Multichannel raw", 7: "Multichannel ATM",
	8: "Multichannel raw link", 9: "Multichannel AAL5", 10: "Color HDLC POS", 11: "Color Ethernet", 12: "Multichannel AAL2",
	13: "IP counter", 14: "TCP flow counter", 15: "DSM color HDLC POS", 16: "DSM color Ethernet", 17: "Color multichannel HDLC POS",
	18: "AAL2", 19: "Color hash POS", 20: "Color hash Ethernet", 21: "InfiniBand", 22: "IPv4", 23: "IPv6", 24: "Raw link",
	25: "InfiniBand link", 27: "Metadata", 48: "Padding",
}

// ProtoERF and its fields (tshark: erf.*).
var (
	ProtoERF    = field.NewProto("erf", "Extensible Record Format")
	fERFTS      = ProtoERF.Hex("erf.ts", 64, "Timestamp (32.32 fixed point seconds)")
	fERFType    = ProtoERF.Uint("erf.types.type", 7, "Record type").WithNames(erfTypeNames)
	fERFExt     = ProtoERF.Bool("erf.types.ext_header", "Extension header present")
	fERFFlags   = ProtoERF.Hex("erf.flags", 8, "Flags")
	fERFRLen    = ProtoERF.Uint("erf.rlen", 16, "Record length").WithUnit("octets")
	fERFLCtr    = ProtoERF.Uint("erf.lctr", 16, "Loss counter")
	fERFWLen    = ProtoERF.Uint("erf.wlen", 16, "Wire length").WithUnit("octets")
	fERFExtHdrs = ProtoERF.Uint("erf.ehdr.count", 8, "Extension headers")
)

// ERF is the 16-octet Endace ERF record header (and any 8-octet extension
// headers, and the 2 octets before an Ethernet frame) that LINKTYPE_ERF
// frames start with. Mellanox ibdump writes IB traffic as type 21 records
// (wire-formats.md §5): the LRH follows.
//
// rlen is the length of the whole record as the capture card wrote it,
// padded to 8 octets unless the varying-length flag is set; a pcap record
// need not store that padding, and the packet is wlen octets (the wire
// length) or fewer when the card cut it. The payload is the packet: what
// the record stores of its wlen octets.
type ERF struct {
	layers.BaseLayer
	Timestamp uint64 // little-endian on the wire
	Type      uint8  // without the extension bit
	Ext       bool
	Flags     uint8
	RLen      uint16
	LCtr      uint16
	WLen      uint16
	ExtHdrs   int

	probs problems
}

const erfProbRLen problems = 1

func (e *ERF) LayerType() gopacket.LayerType  { return LayerTypeERF }
func (e *ERF) CanDecode() gopacket.LayerClass { return LayerTypeERF }
func (e *ERF) Proto() *field.Proto            { return ProtoERF }
func (e *ERF) String() string                 { return fmt.Sprintf("ERF type %d rlen %d", e.Type, e.RLen) }
func (e *ERF) LinkFlow() gopacket.Flow        { return gopacket.Flow{} }

// ethernet reports the record types whose packet is an Ethernet frame
// after 2 octets of offset and pad.
func (e *ERF) ethernet() bool {
	switch e.Type {
	case ERFTypeEthernet, erfTypeColorEth, erfTypeDSMColorEth, erfTypeColorHashEth:
		return true
	}
	return false
}

// NextLayerType is the LRH for InfiniBand records, Ethernet for Ethernet
// records, IPv4 or IPv6 for IP records, the payload otherwise (other
// record types are not dissected: AppendInfo says so).
func (e *ERF) NextLayerType() gopacket.LayerType {
	switch {
	case e.Type == ERFTypeInfiniBand:
		return LayerTypeLRH
	case e.ethernet():
		return layers.LayerTypeEthernet
	case e.Type == ERFTypeIPv4:
		return layers.LayerTypeIPv4
	case e.Type == ERFTypeIPv6:
		return layers.LayerTypeIPv6
	}
	return gopacket.LayerTypePayload
}

// Dissected reports whether the record's packet is decoded further.
func (e *ERF) Dissected() bool { return e.NextLayerType() != gopacket.LayerTypePayload }

// DecodeFromBytes decodes the ERF header. The payload is the packet: the
// wlen octets after the headers, or what the record stores of them (cut
// by the card's or the pcap snap length: SetTruncated). Alignment padding
// that rlen counts and the pcap record does not store is not a fault.
func (e *ERF) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < erfHeaderLen {
		return truncated(df, "ERF", "header", 0, erfHeaderLen, len(data))
	}
	*e = ERF{
		Timestamp: binary.LittleEndian.Uint64(data),
		Type:      data[8] & erfTypeMask, Ext: data[8]&erfExtension != 0,
		Flags: data[9],
		RLen:  binary.BigEndian.Uint16(data[10:]),
		LCtr:  binary.BigEndian.Uint16(data[12:]),
		WLen:  binary.BigEndian.Uint16(data[14:]),
	}
	off := erfHeaderLen
	for more := e.Ext; more; {
		if len(data) < off+8 {
			return truncated(df, "ERF", "extension header", off, 8, len(data)-off)
		}
		more = data[off]&erfExtension != 0
		off += 8
		e.ExtHdrs++
	}
	if e.ethernet() {
		if len(data) < off+erfEthPadLen {
			return truncated(df, "ERF", "Ethernet offset and pad", off, erfEthPadLen, len(data)-off)
		}
		off += erfEthPadLen
	}
	// The record ends at rlen, or where the pcap record does (padding
	// not stored, or a pcap snap length); an rlen shorter than the
	// headers is wrong.
	end := len(data)
	if int(e.RLen) < off {
		e.probs |= erfProbRLen
	} else if int(e.RLen) < end {
		end = int(e.RLen)
	}
	// The packet is wlen octets; a record storing fewer was cut. (Pad
	// records and types not dissected keep what the record holds.)
	if e.Dissected() {
		if pkt := off + int(e.WLen); pkt <= end {
			end = pkt
		} else {
			df.SetTruncated()
		}
	}
	e.Contents, e.Payload = data[:off], data[off:end]
	return nil
}

// AppendInfo names the record for frames nothing else decoded: a record
// type this program does not dissect, or a packet whose first header did
// not decode.
func (e *ERF) AppendInfo(b []byte) []byte {
	b = append(b, "ERF "...)
	if name, ok := erfTypeNames[uint64(e.Type)]; ok {
		b = append(b, name...)
	} else {
		b = append(b, "type "...)
		b = strconv.AppendUint(b, uint64(e.Type), 10)
	}
	b = append(b, " record"...)
	if !e.Dissected() {
		b = append(b, ", not dissected"...)
	}
	return b
}

// VisitFields reports the ERF header fields.
func (e *ERF) VisitFields(v field.Visitor) {
	v.Uint(fERFTS, e.Timestamp)
	v.Uint(fERFType, uint64(e.Type))
	v.Bool(fERFExt, e.Ext)
	v.Uint(fERFFlags, uint64(e.Flags))
	v.Uint(fERFRLen, uint64(e.RLen))
	v.Uint(fERFLCtr, uint64(e.LCtr))
	v.Uint(fERFWLen, uint64(e.WLen))
	if e.ExtHdrs > 0 {
		v.Uint(fERFExtHdrs, uint64(e.ExtHdrs))
	}
}

// AppendFindings reports an rlen shorter than the record's headers.
func (e *ERF) AppendFindings(dst []finding.Finding) []finding.Finding {
	if e.probs&erfProbRLen != 0 {
		dst = append(dst, newFinding(CodeERFRLen, finding.SeverityWarning, "erf", 10, "ERF types reference",
			"rlen %d is shorter than the record's %d octets of headers", e.RLen, len(e.Contents)))
	}
	return dst
}

// SerializeTo prepends an ERF header without extension headers. With
// FixLengths rlen and wlen are set from the record (wlen without the
// header, as ibdump writes it).
func (e *ERF) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	wlen := len(b.Bytes())
	if e.ethernet() {
		if _, err := b.PrependBytes(erfEthPadLen); err != nil {
			return err
		}
		clear(b.Bytes()[:erfEthPadLen])
	}
	if opts.FixLengths {
		e.WLen = uint16(wlen)
		e.RLen = uint16(len(b.Bytes()) + erfHeaderLen)
	}
	h, err := b.PrependBytes(erfHeaderLen)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(h, e.Timestamp)
	h[8] = e.Type & erfTypeMask
	h[9] = e.Flags
	binary.BigEndian.PutUint16(h[10:], e.RLen)
	binary.BigEndian.PutUint16(h[12:], e.LCtr)
	binary.BigEndian.PutUint16(h[14:], e.WLen)
	return nil
}
