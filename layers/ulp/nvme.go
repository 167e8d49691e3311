package ulp

import (
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// NVMe over Fabrics on RDMA (NVMe-oF 1.1 §7.3): the host's Sends are
// command capsules (a 64-octet submission queue entry, then in-capsule
// data), the controller's are response capsules (a 16-octet completion
// queue entry). Integers are little-endian.

// Capsule lengths.
const (
	NVMeCommandLen  = 64
	NVMeResponseLen = 16
)

// NVMeFabricsOpcode is the opcode of Fabrics commands; their type is
// FCTYPE (octet 4).
const NVMeFabricsOpcode = 0x7f

var nvmeFabricsTypes = map[uint64]string{0x00: "Property Set", 0x01: "Connect", 0x04: "Property Get",
	0x05: "Authentication Send", 0x06: "Authentication Receive", 0x08: "Disconnect"}

// nvmeIOOpcodes names the NVM command set's I/O opcodes most often seen
// (NVM Command Set 1.0 §3); an admin queue's opcodes overlap them and the
// queue is not known from the capsule alone.
var nvmeIOOpcodes = map[uint64]string{0x00: "Flush", 0x01: "Write", 0x02: "Read", 0x08: "Write Zeroes", 0x09: "Dataset Management"}

// NVMe is an NVMe-oF capsule: a command (Response false) or a response.
type NVMe struct {
	layers.BaseLayer
	Response bool

	// CommandID is either capsule's command identifier.
	CommandID uint16

	// Command capsule.
	Opcode uint8
	Flags  uint8
	NSID   uint32
	FCType uint8 // Fabrics commands
	// Data is the in-capsule data after the SQE.
	Data []byte

	// Response capsule.
	DW0, DW1     uint32
	SQHead, SQID uint16
	Status       uint16 // bits 15:1 of the last word
	Phase        bool
}

var (
	ProtoNVMe    = field.NewProto("nvmeof", "NVMe over Fabrics (RDMA)")
	fNVMeCapsule = ProtoNVMe.String("nvmeof.capsule", "Capsule")
	fNVMeOpcode  = ProtoNVMe.Hex("nvmeof.cmd.opc", 8, "Opcode")
	fNVMeFlags   = ProtoNVMe.Hex("nvmeof.cmd.flags", 8, "Flags (FUSE, PSDT)")
	fNVMeCID     = ProtoNVMe.Uint("nvmeof.cmd.cid", 16, "Command Identifier")
	fNVMeNSID    = ProtoNVMe.Hex("nvmeof.cmd.nsid", 32, "Namespace Identifier")
	fNVMeFCType  = ProtoNVMe.Hex("nvmeof.cmd.fctype", 8, "Fabrics Command Type").WithNames(nvmeFabricsTypes)
	fNVMeDataLen = ProtoNVMe.Uint("nvmeof.cmd.data_length", 32, "In-capsule data length").WithUnit("bytes")
	fNVMeDW0     = ProtoNVMe.Hex("nvmeof.cqe.dw0", 32, "Command Specific (DW0)")
	fNVMeDW1     = ProtoNVMe.Hex("nvmeof.cqe.dw1", 32, "Command Specific (DW1)")
	fNVMeSQHead  = ProtoNVMe.Uint("nvmeof.cqe.sqhd", 16, "SQ Head Pointer")
	fNVMeSQID    = ProtoNVMe.Uint("nvmeof.cqe.sqid", 16, "SQ Identifier")
	fNVMeRespCID = ProtoNVMe.Uint("nvmeof.cqe.cid", 16, "Command Identifier")
	fNVMeStatus  = ProtoNVMe.Hex("nvmeof.cqe.status", 15, "Status Field")
	fNVMePhase   = ProtoNVMe.Bool("nvmeof.cqe.phase", "Phase Tag")
)

func (n *NVMe) Proto() *field.Proto { return ProtoNVMe }

// DecodeFromBytes decodes a capsule: 16 octets are a response capsule, 64
// or more a command capsule (a Send of the host, NVMe-oF 1.1 §2.1).
func (n *NVMe) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*n = NVMe{}
	switch {
	case len(data) == NVMeResponseLen:
		n.Response = true
		n.DW0, n.DW1, n.SQHead, n.SQID = le.Uint32(data), le.Uint32(data[4:]), le.Uint16(data[8:]), le.Uint16(data[10:])
		n.CommandID = le.Uint16(data[12:])
		n.Status, n.Phase = le.Uint16(data[14:])>>1, data[14]&1 != 0
	case len(data) >= NVMeCommandLen:
		n.Opcode, n.Flags, n.CommandID = data[0], data[1], le.Uint16(data[2:])
		if n.Opcode == NVMeFabricsOpcode {
			n.FCType = data[4] // where other commands have the NSID
		} else {
			n.NSID = le.Uint32(data[4:])
		}
		n.Data = data[NVMeCommandLen:]
	default:
		df.SetTruncated()
		return errShort("NVMe-oF capsule (16-octet response or 64-octet command)", NVMeCommandLen, len(data))
	}
	n.BaseLayer = layers.BaseLayer{Contents: data}
	return nil
}

func (n *NVMe) VisitFields(v field.Visitor) {
	if n.Response {
		v.String(fNVMeCapsule, "Response")
		v.Uint(fNVMeDW0, uint64(n.DW0))
		v.Uint(fNVMeDW1, uint64(n.DW1))
		v.Uint(fNVMeSQHead, uint64(n.SQHead))
		v.Uint(fNVMeSQID, uint64(n.SQID))
		v.Uint(fNVMeRespCID, uint64(n.CommandID))
		v.Uint(fNVMeStatus, uint64(n.Status))
		v.Bool(fNVMePhase, n.Phase)
		return
	}
	v.String(fNVMeCapsule, "Command")
	v.Uint(fNVMeOpcode, uint64(n.Opcode))
	v.Uint(fNVMeFlags, uint64(n.Flags))
	v.Uint(fNVMeCID, uint64(n.CommandID))
	if n.Opcode == NVMeFabricsOpcode {
		v.Uint(fNVMeFCType, uint64(n.FCType))
	} else {
		v.Uint(fNVMeNSID, uint64(n.NSID))
	}
	v.Uint(fNVMeDataLen, uint64(len(n.Data)))
}

// AppendSummary appends "NVMe-oF Fabrics Connect cid=0", "NVMe-oF Write
// cid=3 nsid=1" or "NVMe-oF Response cid=3 status=0x0".
func (n *NVMe) AppendSummary(b []byte) []byte {
	b = append(b, "NVMe-oF "...)
	if n.Response {
		b = strconv.AppendUint(append(b, "Response cid="...), uint64(n.CommandID), 10)
		return strconv.AppendUint(append(b, " status=0x"...), uint64(n.Status), 16)
	}
	switch {
	case n.Opcode == NVMeFabricsOpcode && nvmeFabricsTypes[uint64(n.FCType)] != "":
		b = append(append(b, "Fabrics "...), nvmeFabricsTypes[uint64(n.FCType)]...)
	case n.Opcode == NVMeFabricsOpcode:
		b = strconv.AppendUint(append(b, "Fabrics fctype=0x"...), uint64(n.FCType), 16)
	default:
		b = strconv.AppendUint(append(b, "Command opc=0x"...), uint64(n.Opcode), 16)
		if name := nvmeIOOpcodes[uint64(n.Opcode)]; name != "" && n.NSID != 0 {
			b = append(append(append(b, " ("...), name...), ')')
		}
	}
	b = strconv.AppendUint(append(b, " cid="...), uint64(n.CommandID), 10)
	if n.Opcode != NVMeFabricsOpcode && n.NSID != 0 {
		b = strconv.AppendUint(append(b, " nsid="...), uint64(n.NSID), 10)
	}
	return b
}

func (n *NVMe) LayerType() gopacket.LayerType     { return LayerTypeNVMe }
func (n *NVMe) CanDecode() gopacket.LayerClass    { return LayerTypeNVMe }
func (n *NVMe) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// SerializeTo writes the capsule: a 64-octet SQE (the fields above, the
// rest zero) and Data, or a 16-octet CQE.
func (n *NVMe) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if n.Response {
		w, err := b.PrependBytes(NVMeResponseLen)
		if err != nil {
			return err
		}
		le.PutUint32(w, n.DW0)
		le.PutUint32(w[4:], n.DW1)
		le.PutUint16(w[8:], n.SQHead)
		le.PutUint16(w[10:], n.SQID)
		le.PutUint16(w[12:], n.CommandID)
		st := n.Status << 1
		if n.Phase {
			st |= 1
		}
		le.PutUint16(w[14:], st)
		return nil
	}
	w, err := b.PrependBytes(NVMeCommandLen + len(n.Data))
	if err != nil {
		return err
	}
	clear(w[:NVMeCommandLen])
	w[0], w[1] = n.Opcode, n.Flags
	le.PutUint16(w[2:], n.CommandID)
	if n.Opcode == NVMeFabricsOpcode {
		w[4] = n.FCType
	} else {
		le.PutUint32(w[4:], n.NSID)
	}
	copy(w[NVMeCommandLen:], n.Data)
	return nil
}
