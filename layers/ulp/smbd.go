package ulp

import (
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// SMB Direct ([MS-SMBD] §2.2): every message is one Send; the first from
// each peer is the negotiate request or response, every later one a data
// transfer message. All integers are little-endian.

// SMBDMessage says which [MS-SMBD] §2.2 message an SMBD layer holds.
type SMBDMessage uint8

const (
	SMBDDataTransfer      SMBDMessage = iota // §2.2.3
	SMBDNegotiateRequest                     // §2.2.1
	SMBDNegotiateResponse                    // §2.2.2
)

// SMBDVersion is the only protocol version [MS-SMBD] defines (0x0100).
const SMBDVersion = 0x0100

// Lengths of the fixed parts of the three messages.
const (
	SMBDNegotiateRequestLen  = 20
	SMBDNegotiateResponseLen = 32
	SMBDDataTransferLen      = 20 // up to DataLength; Padding and Buffer follow
)

// SMBDFlagResponseRequested is SMB_DIRECT_RESPONSE_REQUESTED (§2.2.3).
const SMBDFlagResponseRequested = 0x0001

// SMBD is an SMB Direct message.
type SMBD struct {
	layers.BaseLayer
	Message SMBDMessage

	// Negotiate request and response.
	MinVersion, MaxVersion, NegotiatedVersion uint16
	Reserved                                  uint16
	CreditsRequested, CreditsGranted          uint16
	Status                                    uint32 // NTSTATUS (response)
	MaxReadWriteSize                          uint32 // response
	PreferredSendSize                         uint32
	MaxReceiveSize                            uint32
	MaxFragmentedSize                         uint32

	// Data transfer.
	Flags               uint16
	RemainingDataLength uint32
	DataOffset          uint32
	DataLength          uint32
	// Data is the Buffer's DataLength octets at DataOffset (nil when the
	// offset and length do not lie inside the message).
	Data []byte
}

// smbdInt is one little-endian integer of a message's fixed part: its
// field and where SMBD keeps it (u16 for a 2-octet one, u32 for a 4-octet
// one).
type smbdInt struct {
	f    *field.Field
	u16  func(*SMBD) *uint16
	u32  func(*SMBD) *uint32
	flag *field.Field // shown after it: its SMBDFlagResponseRequested bit
}

func u16(f *field.Field, p func(*SMBD) *uint16) smbdInt { return smbdInt{f: f, u16: p} }
func u32(f *field.Field, p func(*SMBD) *uint32) smbdInt { return smbdInt{f: f, u32: p} }

// Each field is declared once; a message's fixed part is its fields back
// to back from octet 0 (smbdFixed), which the decode, the encode and the
// visit walk.
var (
	ProtoSMBD      = field.NewProto("smbd", "SMB Direct")
	fSMBDMessage   = ProtoSMBD.Uint("smbd.message", 8, "Message").WithNames(map[uint64]string{0: "Data Transfer", 1: "Negotiate Request", 2: "Negotiate Response"})
	smbdMinVersion = u16(ProtoSMBD.Hex("smbd.min_version", 16, "MinVersion"), func(s *SMBD) *uint16 { return &s.MinVersion })
	smbdMaxVersion = u16(ProtoSMBD.Hex("smbd.max_version", 16, "MaxVersion"), func(s *SMBD) *uint16 { return &s.MaxVersion })
	smbdNegVersion = u16(ProtoSMBD.Hex("smbd.negotiated_version", 16, "NegotiatedVersion"), func(s *SMBD) *uint16 { return &s.NegotiatedVersion })
	smbdReserved   = u16(ProtoSMBD.Hex("smbd.reserved", 16, "Reserved"), func(s *SMBD) *uint16 { return &s.Reserved })
	smbdCreditsReq = u16(ProtoSMBD.Uint("smbd.credits_requested", 16, "CreditsRequested"), func(s *SMBD) *uint16 { return &s.CreditsRequested })
	smbdCreditsGr  = u16(ProtoSMBD.Uint("smbd.credits_granted", 16, "CreditsGranted"), func(s *SMBD) *uint16 { return &s.CreditsGranted })
	smbdStatus     = u32(ProtoSMBD.Hex("smbd.status", 32, "Status"), func(s *SMBD) *uint32 { return &s.Status })
	smbdMaxRW      = u32(ProtoSMBD.Uint("smbd.max_read_write_size", 32, "MaxReadWriteSize").WithUnit("bytes"), func(s *SMBD) *uint32 { return &s.MaxReadWriteSize })
	smbdPrefSend   = u32(ProtoSMBD.Uint("smbd.preferred_send_size", 32, "PreferredSendSize").WithUnit("bytes"), func(s *SMBD) *uint32 { return &s.PreferredSendSize })
	smbdMaxRecv    = u32(ProtoSMBD.Uint("smbd.max_receive_size", 32, "MaxReceiveSize").WithUnit("bytes"), func(s *SMBD) *uint32 { return &s.MaxReceiveSize })
	smbdMaxFrag    = u32(ProtoSMBD.Uint("smbd.max_fragmented_size", 32, "MaxFragmentedSize").WithUnit("bytes"), func(s *SMBD) *uint32 { return &s.MaxFragmentedSize })
	smbdFlags      = u16(ProtoSMBD.Hex("smbd.flags", 16, "Flags"), func(s *SMBD) *uint16 { return &s.Flags })
	fSMBDRespReq   = ProtoSMBD.Bool("smbd.flags.response_requested", "SMB_DIRECT_RESPONSE_REQUESTED")
	smbdRemaining  = u32(ProtoSMBD.Uint("smbd.remaining_data_length", 32, "RemainingDataLength").WithUnit("bytes"), func(s *SMBD) *uint32 { return &s.RemainingDataLength })
	smbdDataOffset = u32(ProtoSMBD.Uint("smbd.data_offset", 32, "DataOffset"), func(s *SMBD) *uint32 { return &s.DataOffset })
	smbdDataLength = u32(ProtoSMBD.Uint("smbd.data_length", 32, "DataLength").WithUnit("bytes"), func(s *SMBD) *uint32 { return &s.DataLength })
	fSMBDData      = ProtoSMBD.Bytes("smbd.data", "Buffer (SMB2 message or fragment)")
)

// smbdFixed is the fixed part of each message ([MS-SMBD] §2.2.1–§2.2.3),
// by SMBDMessage.
var smbdFixed = [...][]smbdInt{
	SMBDDataTransfer: {smbdCreditsReq, smbdCreditsGr, withFlag(smbdFlags, fSMBDRespReq), smbdReserved,
		smbdRemaining, smbdDataOffset, smbdDataLength},
	SMBDNegotiateRequest: {smbdMinVersion, smbdMaxVersion, smbdReserved, smbdCreditsReq,
		smbdPrefSend, smbdMaxRecv, smbdMaxFrag},
	SMBDNegotiateResponse: {smbdMinVersion, smbdMaxVersion, smbdNegVersion, smbdReserved, smbdCreditsReq, smbdCreditsGr,
		smbdStatus, smbdMaxRW, smbdPrefSend, smbdMaxRecv, smbdMaxFrag},
}

func withFlag(i smbdInt, flag *field.Field) smbdInt { i.flag = flag; return i }

// fixed is the fixed part of s's message (a data transfer message's for
// a Message that names none).
func (s *SMBD) fixed() []smbdInt {
	if int(s.Message) < len(smbdFixed) {
		return smbdFixed[s.Message]
	}
	return smbdFixed[SMBDDataTransfer]
}

func (s *SMBD) Proto() *field.Proto { return ProtoSMBD }

// DecodeFromBytes decodes one SMB Direct message. The negotiate messages
// are known by their length and version fields (a negotiate request is 20
// octets with MinVersion and MaxVersion 0x0100 and a PreferredSendSize,
// where a 20-octet data transfer message — a keep-alive — has zero
// RemainingDataLength; a response is 32 octets with MinVersion and
// MaxVersion 0x0100 and either NegotiatedVersion 0x0100 or a failure
// Status, §3.1.5.3), as the messages carry no type field.
func (s *SMBD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*s = SMBD{}
	switch {
	case len(data) == SMBDNegotiateRequestLen && le.Uint16(data) == SMBDVersion && le.Uint16(data[2:]) == SMBDVersion && le.Uint32(data[8:]) != 0:
		s.Message = SMBDNegotiateRequest
	case len(data) == SMBDNegotiateResponseLen && le.Uint16(data) == SMBDVersion && le.Uint16(data[2:]) == SMBDVersion &&
		(le.Uint16(data[4:]) == SMBDVersion || le.Uint32(data[12:]) != 0):
		s.Message = SMBDNegotiateResponse
	case len(data) < SMBDDataTransferLen:
		df.SetTruncated()
		return errShort("SMB Direct data transfer header", SMBDDataTransferLen, len(data))
	}
	off := 0
	for _, x := range s.fixed() {
		if x.u16 != nil {
			*x.u16(s), off = le.Uint16(data[off:]), off+2
		} else {
			*x.u32(s), off = le.Uint32(data[off:]), off+4
		}
	}
	if s.Message == SMBDDataTransfer && s.DataLength > 0 && uint64(s.DataOffset)+uint64(s.DataLength) <= uint64(len(data)) && s.DataOffset >= SMBDDataTransferLen {
		s.Data = data[s.DataOffset : s.DataOffset+s.DataLength]
	}
	s.BaseLayer = layers.BaseLayer{Contents: data}
	return nil
}

func (s *SMBD) VisitFields(v field.Visitor) {
	v.Uint(fSMBDMessage, uint64(s.Message))
	for _, x := range s.fixed() {
		var n uint64
		if x.u16 != nil {
			n = uint64(*x.u16(s))
		} else {
			n = uint64(*x.u32(s))
		}
		v.Uint(x.f, n)
		if x.flag != nil {
			v.Bool(x.flag, n&SMBDFlagResponseRequested != 0)
		}
	}
	if s.Data != nil {
		v.Bytes(fSMBDData, s.Data)
	}
}

// AppendSummary appends "SMBD Negotiate Request credits=255 send=1364 …".
func (s *SMBD) AppendSummary(b []byte) []byte {
	u := func(b []byte, k string, v uint64) []byte { return strconv.AppendUint(append(b, k...), v, 10) }
	switch s.Message {
	case SMBDNegotiateRequest:
		b = append(b, "SMBD Negotiate Request"...)
		b = u(b, " credits=", uint64(s.CreditsRequested))
		b = u(b, " send=", uint64(s.PreferredSendSize))
		b = u(b, " recv=", uint64(s.MaxReceiveSize))
		return u(b, " frag=", uint64(s.MaxFragmentedSize))
	case SMBDNegotiateResponse:
		b = append(b, "SMBD Negotiate Response status=0x"...)
		b = strconv.AppendUint(b, uint64(s.Status), 16)
		b = u(b, " credits=", uint64(s.CreditsGranted))
		b = u(b, " rw=", uint64(s.MaxReadWriteSize))
		b = u(b, " send=", uint64(s.PreferredSendSize))
		return u(b, " recv=", uint64(s.MaxReceiveSize))
	}
	b = append(b, "SMBD Data"...)
	b = u(b, " credits=", uint64(s.CreditsGranted))
	b = u(b, " len=", uint64(s.DataLength))
	if s.RemainingDataLength > 0 {
		b = u(b, " remaining=", uint64(s.RemainingDataLength))
	}
	return b
}

func (s *SMBD) LayerType() gopacket.LayerType     { return LayerTypeSMBD }
func (s *SMBD) CanDecode() gopacket.LayerClass    { return LayerTypeSMBD }
func (s *SMBD) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// SerializeTo writes the message; a data transfer message's Data goes at
// DataOffset (zero padding before it).
func (s *SMBD) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	n, data := SMBDDataTransferLen, []byte(nil)
	switch s.Message {
	case SMBDNegotiateRequest:
		n = SMBDNegotiateRequestLen
	case SMBDNegotiateResponse:
		n = SMBDNegotiateResponseLen
	default:
		if data = s.Data; len(data) > 0 {
			n = max(int(s.DataOffset), SMBDDataTransferLen) + len(data)
		}
	}
	w, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	clear(w)
	off := 0
	for _, x := range s.fixed() {
		if x.u16 != nil {
			le.PutUint16(w[off:], *x.u16(s))
			off += 2
		} else {
			le.PutUint32(w[off:], *x.u32(s))
			off += 4
		}
	}
	copy(w[n-len(data):], data)
	return nil
}
