package ibcm

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// ERF record types this package decodes past.
const (
	ERFTypeEthernet   = 2  // Ethernet, after 2 octets (offset, pad)
	ERFTypeInfiniBand = 21 // InfiniBand, the LRH first (ibdump)
	erfHeaderLen      = 16
	erfTypeMask       = 0x7f
	erfExtension      = 0x80
)

var erfTypeNames = map[uint64]string{1: "HDLC POS", 2: "Ethernet", 3: "ATM", 10: "Ethernet color", 21: "InfiniBand", 22: "IPv4", 23: "IPv6", 25: "InfiniBand link"}

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
// headers) that LINKTYPE_ERF frames start with. Mellanox ibdump writes IB
// traffic as type 21 records (wire-formats.md §5): the LRH follows.
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

// NextLayerType is the LRH for InfiniBand records, Ethernet for Ethernet
// records, the payload otherwise.
func (e *ERF) NextLayerType() gopacket.LayerType {
	switch e.Type {
	case ERFTypeInfiniBand:
		return LayerTypeLRH
	case ERFTypeEthernet:
		return layers.LayerTypeEthernet
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the ERF header; the payload is bounded by rlen.
func (e *ERF) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < erfHeaderLen {
		df.SetTruncated()
		return short("ERF", "header", 0, erfHeaderLen, len(data))
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
			df.SetTruncated()
			return short("ERF", "extension header", off, 8, len(data)-off)
		}
		more = data[off]&erfExtension != 0
		off += 8
		e.ExtHdrs++
	}
	if e.Type == ERFTypeEthernet {
		if len(data) < off+2 {
			df.SetTruncated()
			return short("ERF", "Ethernet offset and pad", off, 2, len(data)-off)
		}
		off += 2
	}
	end := int(e.RLen)
	switch {
	case end > len(data):
		df.SetTruncated()
		e.probs |= erfProbRLen
		end = len(data)
	case end < off:
		e.probs |= erfProbRLen
		end = len(data)
	}
	e.Contents, e.Payload = data[:off], data[off:end]
	return nil
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

// AppendFindings reports an rlen that does not fit the record.
func (e *ERF) AppendFindings(dst []finding.Finding) []finding.Finding {
	if e.probs&erfProbRLen != 0 {
		dst = append(dst, newFinding(CodeLengthMismatch, finding.SeverityWarning, "erf", 10, "ERF types reference",
			"rlen %d does not fit the %d-octet record", e.RLen, len(e.Contents)+len(e.Payload)))
	}
	return dst
}

// SerializeTo prepends an ERF header without extension headers. With
// FixLengths rlen and wlen are set from the record (wlen without the
// header, as ibdump writes it).
func (e *ERF) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if e.Type == ERFTypeEthernet {
		if _, err := b.PrependBytes(2); err != nil {
			return err
		}
		clear(b.Bytes()[:2])
	}
	if opts.FixLengths {
		e.WLen = uint16(len(b.Bytes()))
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
