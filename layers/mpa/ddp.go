package mpa

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// DDP header sizes (RFC 5041 §4).
const (
	DDPTaggedHeaderLen   = 14
	DDPUntaggedHeaderLen = 18
)

// DDP control octet bits.
const (
	DDPFlagTagged   uint8 = 0x80
	DDPFlagLast     uint8 = 0x40
	DDPReservedMask uint8 = 0x3c
	DDPVersionMask  uint8 = 0x03
	// DDPVersion1 is the DDP version of RFC 5041.
	DDPVersion1 = 1
)

// Untagged queue numbers used by RDMAP (RFC 5040 §5).
const (
	QueueSend        = 0
	QueueReadRequest = 1
	QueueTerminate   = 2
)

var (
	fDDPTagged = ProtoDDP.Bool("ddp.tagged_flag", "Tagged flag").WithRef(refDDP)
	fDDPLast   = ProtoDDP.Bool("ddp.last_flag", "Last flag").WithRef(refDDP)
	fDDPRsvd   = ProtoDDP.Hex("ddp.rsvd", 4, "Reserved").WithRef(refDDP)
	fDDPDV     = ProtoDDP.Uint("ddp.dv", 2, "DDP protocol version").WithRef(refDDP)
	fDDPULP    = ProtoDDP.Bytes("ddp.rsvdulp", "Reserved for use by the ULP").WithRef(refDDP)
	fDDPSTag   = ProtoDDP.Hex("ddp.stag", 32, "(Data Sink) Steering Tag").WithRef("RFC 5041 §4.2")
	fDDPTO     = ProtoDDP.Hex("ddp.tagged_offset", 64, "(Data Sink) Tagged offset").WithRef("RFC 5041 §4.2")
	fDDPQN     = ProtoDDP.Uint("ddp.qn", 32, "Queue number").WithRef("RFC 5041 §4.3").
			WithNames(map[uint64]string{QueueSend: "Send", QueueReadRequest: "RDMA Read Request", QueueTerminate: "Terminate"})
	fDDPMSN = ProtoDDP.Uint("ddp.msn", 32, "Message sequence number").WithRef("RFC 5041 §4.3")
	fDDPMO  = ProtoDDP.Uint("ddp.mo", 32, "Message offset").WithRef("RFC 5041 §4.3")
	fDDPLen = ProtoDDP.Uint("ddp.payload_length", 16, "Payload length").WithUnit("bytes")
)

// DDP is a DDP segment header (RFC 5041 §4): tagged (STag, TO) or untagged
// (QN, MSN, MO). RsvdULP belongs to RDMAP, which decodes it (RDMAP).
type DDP struct {
	layers.BaseLayer
	Tagged, Last bool
	Reserved     uint8 // the 4 reserved control bits
	Version      uint8
	// RsvdULP is the octet (tagged) or five octets (untagged) reserved
	// for the ULP: RDMAP's control octet and, untagged, the Invalidate
	// STag or reserved word.
	RsvdULP []byte
	STag    uint32 // tagged
	TO      uint64 // tagged
	QN      uint32 // untagged
	MSN     uint32 // untagged
	MO      uint32 // untagged
}

// LayerType returns LayerTypeDDP.
func (d *DDP) LayerType() gopacket.LayerType { return LayerTypeDDP }

// CanDecode returns LayerTypeDDP.
func (d *DDP) CanDecode() gopacket.LayerClass { return LayerTypeDDP }

// NextLayerType returns gopacket.LayerTypePayload: RDMAP is decoded from
// the same segment (its control octet lives in RsvdULP), with
// RDMAP.DecodeFromDDP or RDMAP.DecodeFromBytes on the whole segment.
func (d *DDP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// Proto returns ProtoDDP.
func (d *DDP) Proto() *field.Proto { return ProtoDDP }

// HeaderLen is the header length for the T bit of ctrl.
func HeaderLen(ctrl uint8) int {
	if ctrl&DDPFlagTagged != 0 {
		return DDPTaggedHeaderLen
	}
	return DDPUntaggedHeaderLen
}

// DecodeFromBytes decodes the DDP header at the start of a DDP segment.
func (d *DDP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*d = DDP{}
	if len(data) < 1 {
		return truncated(df, "DDP", "control", 0, 1, len(data))
	}
	ctrl := data[0]
	hl := HeaderLen(ctrl)
	if len(data) < hl {
		what := "untagged header"
		if ctrl&DDPFlagTagged != 0 {
			what = "tagged header"
		}
		return truncated(df, "DDP", what, 0, hl, len(data))
	}
	d.Tagged = ctrl&DDPFlagTagged != 0
	d.Last = ctrl&DDPFlagLast != 0
	d.Reserved = (ctrl & DDPReservedMask) >> 2
	d.Version = ctrl & DDPVersionMask
	if d.Tagged {
		d.RsvdULP = data[1:2]
		d.STag = binary.BigEndian.Uint32(data[2:6])
		d.TO = binary.BigEndian.Uint64(data[6:14])
	} else {
		d.RsvdULP = data[1:6]
		d.QN = binary.BigEndian.Uint32(data[6:10])
		d.MSN = binary.BigEndian.Uint32(data[10:14])
		d.MO = binary.BigEndian.Uint32(data[14:18])
	}
	d.Contents = data[:hl]
	d.Payload = data[hl:]
	return nil
}

// VisitFields reports the DDP header's fields.
func (d *DDP) VisitFields(v field.Visitor) {
	v.Bool(fDDPTagged, d.Tagged)
	v.Bool(fDDPLast, d.Last)
	v.Uint(fDDPRsvd, uint64(d.Reserved))
	v.Uint(fDDPDV, uint64(d.Version))
	v.Bytes(fDDPULP, d.RsvdULP)
	if d.Tagged {
		v.Uint(fDDPSTag, uint64(d.STag))
		v.Uint(fDDPTO, d.TO)
	} else {
		v.Uint(fDDPQN, uint64(d.QN))
		v.Uint(fDDPMSN, uint64(d.MSN))
		v.Uint(fDDPMO, uint64(d.MO))
	}
	v.Uint(fDDPLen, uint64(len(d.Payload)))
}

// AppendFindings reports a DDP version other than 1 and reserved bits.
func (d *DDP) AppendFindings(dst []finding.Finding) []finding.Finding {
	if d.Version != DDPVersion1 {
		dst = append(dst, finding.Finding{Code: CodeDDPVersion, Severity: finding.SeverityError, Section: refDDP,
			Layer: "ddp", Offset: 0, Message: fmt.Sprintf("DDP version %d; RFC 5041 defines version 1", d.Version)})
	}
	if d.Reserved != 0 {
		dst = append(dst, finding.Finding{Code: CodeDDPReserved, Severity: finding.SeverityWarning, Section: refDDP,
			Layer: "ddp", Offset: 0, Message: fmt.Sprintf("DDP reserved control bits are 0x%x", d.Reserved)})
	}
	return dst
}

// SerializeTo prepends the DDP header. RsvdULP supplies the octets reserved
// for the ULP (1 tagged, 5 untagged; missing octets are zero): build them
// with RDMAP.AppendRsvdULP.
func (d *DDP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	ctrl := boolByte(d.Tagged, DDPFlagTagged) | boolByte(d.Last, DDPFlagLast) | (d.Reserved<<2)&DDPReservedMask | d.Version&DDPVersionMask
	hl := HeaderLen(ctrl)
	out, err := b.PrependBytes(hl)
	if err != nil {
		return err
	}
	clear(out)
	out[0] = ctrl
	if d.Tagged {
		copy(out[1:2], d.RsvdULP)
		binary.BigEndian.PutUint32(out[2:6], d.STag)
		binary.BigEndian.PutUint64(out[6:14], d.TO)
		return nil
	}
	copy(out[1:6], d.RsvdULP)
	binary.BigEndian.PutUint32(out[6:10], d.QN)
	binary.BigEndian.PutUint32(out[10:14], d.MSN)
	binary.BigEndian.PutUint32(out[14:18], d.MO)
	return nil
}

func decodeDDP(data []byte, p gopacket.PacketBuilder) error {
	d := &DDP{}
	if err := d.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(d)
	r := &RDMAP{}
	if err := r.DecodeFromDDP(d, p); err != nil {
		return err
	}
	p.AddLayer(r)
	return p.NextDecoder(gopacket.LayerTypePayload)
}
