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

var (
	ProtoSMBD         = field.NewProto("smbd", "SMB Direct")
	fSMBDMessage      = ProtoSMBD.Uint("smbd.message", 8, "Message").WithNames(map[uint64]string{0: "Data Transfer", 1: "Negotiate Request", 2: "Negotiate Response"})
	fSMBDMinVersion   = ProtoSMBD.Hex("smbd.min_version", 16, "MinVersion")
	fSMBDMaxVersion   = ProtoSMBD.Hex("smbd.max_version", 16, "MaxVersion")
	fSMBDNegVersion   = ProtoSMBD.Hex("smbd.negotiated_version", 16, "NegotiatedVersion")
	fSMBDReserved     = ProtoSMBD.Hex("smbd.reserved", 16, "Reserved")
	fSMBDCreditsReq   = ProtoSMBD.Uint("smbd.credits_requested", 16, "CreditsRequested")
	fSMBDCreditsGrant = ProtoSMBD.Uint("smbd.credits_granted", 16, "CreditsGranted")
	fSMBDStatus       = ProtoSMBD.Hex("smbd.status", 32, "Status")
	fSMBDMaxRW        = ProtoSMBD.Uint("smbd.max_read_write_size", 32, "MaxReadWriteSize").WithUnit("bytes")
	fSMBDPrefSend     = ProtoSMBD.Uint("smbd.preferred_send_size", 32, "PreferredSendSize").WithUnit("bytes")
	fSMBDMaxRecv      = ProtoSMBD.Uint("smbd.max_receive_size", 32, "MaxReceiveSize").WithUnit("bytes")
	fSMBDMaxFrag      = ProtoSMBD.Uint("smbd.max_fragmented_size", 32, "MaxFragmentedSize").WithUnit("bytes")
	fSMBDFlags        = ProtoSMBD.Hex("smbd.flags", 16, "Flags")
	fSMBDRespReq      = ProtoSMBD.Bool("smbd.flags.response_requested", "SMB_DIRECT_RESPONSE_REQUESTED")
	fSMBDRemaining    = ProtoSMBD.Uint("smbd.remaining_data_length", 32, "RemainingDataLength").WithUnit("bytes")
	fSMBDDataOffset   = ProtoSMBD.Uint("smbd.data_offset", 32, "DataOffset")
	fSMBDDataLength   = ProtoSMBD.Uint("smbd.data_length", 32, "DataLength").WithUnit("bytes")
	fSMBDData         = ProtoSMBD.Bytes("smbd.data", "Buffer (SMB2 message or fragment)")
)

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
		s.MinVersion, s.MaxVersion, s.Reserved, s.CreditsRequested = le.Uint16(data), le.Uint16(data[2:]), le.Uint16(data[4:]), le.Uint16(data[6:])
		s.PreferredSendSize, s.MaxReceiveSize, s.MaxFragmentedSize = le.Uint32(data[8:]), le.Uint32(data[12:]), le.Uint32(data[16:])
	case len(data) == SMBDNegotiateResponseLen && le.Uint16(data) == SMBDVersion && le.Uint16(data[2:]) == SMBDVersion &&
		(le.Uint16(data[4:]) == SMBDVersion || le.Uint32(data[12:]) != 0):
		s.Message = SMBDNegotiateResponse
		s.MinVersion, s.MaxVersion, s.NegotiatedVersion, s.Reserved = le.Uint16(data), le.Uint16(data[2:]), le.Uint16(data[4:]), le.Uint16(data[6:])
		s.CreditsRequested, s.CreditsGranted, s.Status = le.Uint16(data[8:]), le.Uint16(data[10:]), le.Uint32(data[12:])
		s.MaxReadWriteSize, s.PreferredSendSize = le.Uint32(data[16:]), le.Uint32(data[20:])
		s.MaxReceiveSize, s.MaxFragmentedSize = le.Uint32(data[24:]), le.Uint32(data[28:])
	default:
		if len(data) < SMBDDataTransferLen {
			df.SetTruncated()
			return errShort("SMB Direct data transfer header", SMBDDataTransferLen, len(data))
		}
		s.Message = SMBDDataTransfer
		s.CreditsRequested, s.CreditsGranted, s.Flags, s.Reserved = le.Uint16(data), le.Uint16(data[2:]), le.Uint16(data[4:]), le.Uint16(data[6:])
		s.RemainingDataLength, s.DataOffset, s.DataLength = le.Uint32(data[8:]), le.Uint32(data[12:]), le.Uint32(data[16:])
		if s.DataLength > 0 && uint64(s.DataOffset)+uint64(s.DataLength) <= uint64(len(data)) && s.DataOffset >= SMBDDataTransferLen {
			s.Data = data[s.DataOffset : s.DataOffset+s.DataLength]
		}
	}
	s.BaseLayer = layers.BaseLayer{Contents: data}
	return nil
}

func (s *SMBD) VisitFields(v field.Visitor) {
	v.Uint(fSMBDMessage, uint64(s.Message))
	switch s.Message {
	case SMBDNegotiateRequest:
		v.Uint(fSMBDMinVersion, uint64(s.MinVersion))
		v.Uint(fSMBDMaxVersion, uint64(s.MaxVersion))
		v.Uint(fSMBDReserved, uint64(s.Reserved))
		v.Uint(fSMBDCreditsReq, uint64(s.CreditsRequested))
		v.Uint(fSMBDPrefSend, uint64(s.PreferredSendSize))
		v.Uint(fSMBDMaxRecv, uint64(s.MaxReceiveSize))
		v.Uint(fSMBDMaxFrag, uint64(s.MaxFragmentedSize))
	case SMBDNegotiateResponse:
		v.Uint(fSMBDMinVersion, uint64(s.MinVersion))
		v.Uint(fSMBDMaxVersion, uint64(s.MaxVersion))
		v.Uint(fSMBDNegVersion, uint64(s.NegotiatedVersion))
		v.Uint(fSMBDReserved, uint64(s.Reserved))
		v.Uint(fSMBDCreditsReq, uint64(s.CreditsRequested))
		v.Uint(fSMBDCreditsGrant, uint64(s.CreditsGranted))
		v.Uint(fSMBDStatus, uint64(s.Status))
		v.Uint(fSMBDMaxRW, uint64(s.MaxReadWriteSize))
		v.Uint(fSMBDPrefSend, uint64(s.PreferredSendSize))
		v.Uint(fSMBDMaxRecv, uint64(s.MaxReceiveSize))
		v.Uint(fSMBDMaxFrag, uint64(s.MaxFragmentedSize))
	default:
		v.Uint(fSMBDCreditsReq, uint64(s.CreditsRequested))
		v.Uint(fSMBDCreditsGrant, uint64(s.CreditsGranted))
		v.Uint(fSMBDFlags, uint64(s.Flags))
		v.Bool(fSMBDRespReq, s.Flags&SMBDFlagResponseRequested != 0)
		v.Uint(fSMBDReserved, uint64(s.Reserved))
		v.Uint(fSMBDRemaining, uint64(s.RemainingDataLength))
		v.Uint(fSMBDDataOffset, uint64(s.DataOffset))
		v.Uint(fSMBDDataLength, uint64(s.DataLength))
		if s.Data != nil {
			v.Bytes(fSMBDData, s.Data)
		}
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
	switch s.Message {
	case SMBDNegotiateRequest:
		w, err := b.PrependBytes(SMBDNegotiateRequestLen)
		if err != nil {
			return err
		}
		le.PutUint16(w, s.MinVersion)
		le.PutUint16(w[2:], s.MaxVersion)
		le.PutUint16(w[4:], s.Reserved)
		le.PutUint16(w[6:], s.CreditsRequested)
		le.PutUint32(w[8:], s.PreferredSendSize)
		le.PutUint32(w[12:], s.MaxReceiveSize)
		le.PutUint32(w[16:], s.MaxFragmentedSize)
	case SMBDNegotiateResponse:
		w, err := b.PrependBytes(SMBDNegotiateResponseLen)
		if err != nil {
			return err
		}
		le.PutUint16(w, s.MinVersion)
		le.PutUint16(w[2:], s.MaxVersion)
		le.PutUint16(w[4:], s.NegotiatedVersion)
		le.PutUint16(w[6:], s.Reserved)
		le.PutUint16(w[8:], s.CreditsRequested)
		le.PutUint16(w[10:], s.CreditsGranted)
		le.PutUint32(w[12:], s.Status)
		le.PutUint32(w[16:], s.MaxReadWriteSize)
		le.PutUint32(w[20:], s.PreferredSendSize)
		le.PutUint32(w[24:], s.MaxReceiveSize)
		le.PutUint32(w[28:], s.MaxFragmentedSize)
	default:
		n := SMBDDataTransferLen
		if len(s.Data) > 0 {
			n = max(int(s.DataOffset), SMBDDataTransferLen) + len(s.Data)
		}
		w, err := b.PrependBytes(n)
		if err != nil {
			return err
		}
		clear(w)
		le.PutUint16(w, s.CreditsRequested)
		le.PutUint16(w[2:], s.CreditsGranted)
		le.PutUint16(w[4:], s.Flags)
		le.PutUint16(w[6:], s.Reserved)
		le.PutUint32(w[8:], s.RemainingDataLength)
		le.PutUint32(w[12:], s.DataOffset)
		le.PutUint32(w[16:], s.DataLength)
		if len(s.Data) > 0 {
			copy(w[n-len(s.Data):], s.Data)
		}
	}
	return nil
}
