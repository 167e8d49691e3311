package pvtdata

import (
	"bytes"
	"encoding/binary"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// MsgKind says which connection-setup message carried the private data; the
// layout of most ULPs' private data depends on it.
type MsgKind uint8

const (
	// MsgUnknown: the caller does not know (e.g. raw bytes on the command line).
	MsgUnknown MsgKind = iota
	// MsgRequest: IB CM REQ or SIDR_REQ, iWARP MPA Request.
	MsgRequest
	// MsgReply: IB CM REP or SIDR_REP, iWARP MPA Reply.
	MsgReply
	// MsgReject: IB CM REJ, iWARP MPA Reply with the R (reject) flag.
	MsgReject
)

var msgKindNames = [...]string{MsgUnknown: "unknown", MsgRequest: "request", MsgReply: "reply", MsgReject: "reject"}

func (k MsgKind) String() string {
	if int(k) < len(msgKindNames) {
		return msgKindNames[k]
	}
	return "unknown"
}

// Well-known ports of the ULPs that use CM private data: the rdma_cm port
// of the IB service ID (port space TCP), or the TCP port on iWARP.
const (
	PortNFSRDMA    = 20049 // NFS/RDMA, RPC-over-RDMA (RFC 5666 §8)
	PortNVMeRDMA   = 4420  // NVMe-oF RDMA (include/linux/nvme-rdma.h NVME_RDMA_IP_PORT)
	PortISER       = 3260  // iSCSI/iSER
	PortSMBDirect  = 5445  // SMB Direct over iWARP
	PortSMBDirect2 = 445   // SMB Direct over InfiniBand/RoCE
)

// Hint is what the caller knows about where the private data came from.
// The zero value means nothing is known.
type Hint struct {
	// Port is the rdma_cm port of the service ID (IB, RoCE) or the TCP
	// port of the passive side (iWARP); 0 when unknown. A REP or REJ does
	// not carry it: the connection tracker passes the REQ's.
	Port uint16
	// Msg is the message that carried the data.
	Msg MsgKind
}

// ULPKind names the Upper Layer Protocol a private-data buffer belongs to.
type ULPKind uint8

const (
	ULPUnknown   ULPKind = iota // non-empty, not recognised
	ULPEmpty                    // no octets
	ULPZero                     // every octet zero (IB CM pads with zeros)
	ULPRPCRDMA                  // RPC-over-RDMA version 1 (RFC 8797), or NFS/RDMA port without a message
	ULPNVMe                     // NVMe over Fabrics, RDMA transport
	ULPISER                     // iSER (iSCSI Extensions for RDMA)
	ULPSRP                      // SCSI RDMA Protocol login over rdma_cm
	ULPLustre                   // Lustre LNet o2iblnd
	ULPSMBDirect                // SMB Direct (MS-SMBD) IRD/ORD on iWARP
)

var ulpNames = [...]string{
	ULPUnknown: "unknown", ULPEmpty: "empty", ULPZero: "zero", ULPRPCRDMA: "rpcrdma-v1",
	ULPNVMe: "nvmeof", ULPISER: "iser", ULPSRP: "srp", ULPLustre: "lustre-o2iblnd",
	ULPSMBDirect: "smb-direct",
}

var ulpDescs = [...]string{
	ULPUnknown: "unrecognised private data", ULPEmpty: "no private data",
	ULPZero: "all-zero private data", ULPRPCRDMA: "RPC-over-RDMA version 1 (RFC 8797)",
	ULPNVMe: "NVMe over Fabrics RDMA", ULPISER: "iSER", ULPSRP: "SRP login",
	ULPLustre: "Lustre o2iblnd", ULPSMBDirect: "SMB Direct IRD/ORD",
}

// String returns the stable short name ("rpcrdma-v1", "nvmeof", …) used in
// JSON and filters.
func (k ULPKind) String() string {
	if int(k) < len(ulpNames) {
		return ulpNames[k]
	}
	return "unknown"
}

// Description returns a human name ("NVMe over Fabrics RDMA").
func (k ULPKind) Description() string {
	if int(k) < len(ulpDescs) {
		return ulpDescs[k]
	}
	return "unrecognised private data"
}

// Other reports a positively recognised ULP that is not RPC-over-RDMA.
func (k ULPKind) Other() bool { return k >= ULPNVMe && int(k) < len(ulpNames) }

// Basis says how a ULP was recognised, so a reader can weigh the label.
type Basis uint8

const (
	BasisNone       Basis = iota // nothing recognised
	BasisIdentifier              // the RFC 8797 Format Identifier
	BasisMagic                   // a magic number (Lustre)
	BasisPort                    // the service port, with a layout that fits
	BasisShape                   // the layout alone (a heuristic)
	BasisContent                 // empty or all-zero
)

var basisNames = [...]string{BasisNone: "none", BasisIdentifier: "format-identifier",
	BasisMagic: "magic", BasisPort: "port", BasisShape: "shape", BasisContent: "content"}

func (b Basis) String() string {
	if int(b) < len(basisNames) {
		return basisNames[b]
	}
	return "none"
}

// NVMe is NVMe-oF RDMA CM private data (include/linux/nvme-rdma.h; NVMe
// over Fabrics 1.1 §7.3.3). All fields are little-endian on the wire.
type NVMe struct {
	RecFmt uint16 // record format, 0 = 1.0
	// Request (struct nvme_rdma_cm_req, 32 octets).
	QID     uint16 // queue ID: 0 admin, >0 I/O
	HRQSize uint16 // host receive queue size
	HSQSize uint16 // host send queue size (0's based)
	CntlID  uint16 // controller ID (newer hosts; 0 otherwise)
	// Reply (struct nvme_rdma_cm_rep, 32 octets).
	CRQSize uint16 // controller receive queue size
	// Reject (struct nvme_rdma_cm_rej, 4 octets).
	Status uint16
}

// NVMe reject status values (enum nvme_rdma_cm_status).
var nvmeStatusNames = map[uint64]string{
	1: "invalid length", 2: "invalid record format", 3: "invalid queue ID",
	4: "invalid host SQ size", 5: "invalid host RQ size", 6: "no resources",
	7: "invalid IRD", 8: "invalid ORD", 9: "invalid controller ID",
}

// ISER is the iSER CM header (include/scsi/iser.h struct iser_cm_hdr).
type ISER struct {
	Flags uint8
}

// iSER CM header flags.
const (
	ISERZBVANotSupported            = 0x80
	ISERSendWInvNotSupported        = 0x40
	iserLen                         = 4
	srpLoginReqRDMALen              = 56
	lustreMsgConnLen                = 56 // kib_msg header (48) + connparams (8)
	lustreRejLen                    = 24 // kib_rej
	lustreMagic              uint32 = 0x0be91b91
	nvmeReqLen                      = 32
	nvmeRepLen                      = 32
	nvmeRejLen                      = 4
)

// SRP is an SRP login request over rdma_cm (include/scsi/srp.h struct
// srp_login_req_rdma, 56 octets, big-endian).
type SRP struct {
	Tag             uint64
	ReqBufFmt       uint16
	ReqFlags        uint8
	Opcode          uint8
	ReqITIULen      uint32
	InitiatorPortID [16]byte
	TargetPortID    [16]byte
	ImmDataOffset   uint16
}

// Lustre is an LNet o2iblnd connection message (lnet/klnds/o2iblnd
// o2iblnd-idl.h): a kib_msg with connparams in REQ/REP, a kib_rej in REJ,
// in the sender's byte order.
type Lustre struct {
	LittleEndian bool
	Version      uint16
	Type         uint8 // kib_msg: 0xc0 CONNREQ, 0xc1 CONNACK …
	Credits      uint8
	Nob          uint32
	Cksum        uint32
	SrcNID       uint64
	SrcStamp     uint64
	DstNID       uint64
	DstStamp     uint64
	// Reject (kib_rej) only.
	Reject      bool
	Why         uint8
	Incarnation uint64
	// Connection parameters (both forms), present when Len allows.
	HasParams  bool
	QueueDepth uint16
	MaxMsgSize uint16
	MaxFrags   uint32
}

var lustreTypeNames = map[uint64]string{
	0xc0: "CONNREQ", 0xc1: "CONNACK", 0xd0: "NOOP", 0xd1: "IMMEDIATE", 0xd2: "PUT_REQ",
	0xd3: "PUT_NAK", 0xd4: "PUT_ACK", 0xd5: "PUT_DONE", 0xd6: "GET_REQ", 0xd7: "GET_DONE",
}

var lustreWhyNames = map[uint64]string{
	1: "CONN_RACE", 2: "NO_RESOURCES", 3: "FATAL", 4: "CONN_UNCOMPAT", 5: "CONN_STALE",
	6: "RDMA_FRAGS", 7: "MSG_QUEUE_SIZE", 8: "INVALID_SRV_ID", 9: "EARLY",
}

// SMBDirect is the IRD/ORD pair SMB Direct clients send as private data on
// iWARP (Linux cifs smbdirect.c): two 32-bit words, big-endian in current
// code, little-endian in older code.
type SMBDirect struct {
	LittleEndian bool
	IRD, ORD     uint32
}

// ULP is what a private-data buffer was recognised as. Only the member for
// Kind is meaningful. It is a plain value: identifying never allocates.
type ULP struct {
	Kind  ULPKind
	Basis Basis
	Len   int
	Msg   MsgKind

	NVMe      NVMe
	ISER      ISER
	SRP       SRP
	Lustre    Lustre
	SMBDirect SMBDirect
}

// Identify labels buf, the ULP's part of CM private data. The RFC 8797
// Format Identifier anywhere in buf wins; then a Lustre magic at offset 0
// (either byte order); then the service port with a layout that fits it;
// then layouts distinctive enough to recognise without the port (NVMe-oF
// REQ, SRP login, SMB Direct's exact 8 octets); then empty and all-zero.
func Identify(buf []byte, hint Hint) ULP {
	u := ULP{Len: len(buf), Msg: hint.Msg}
	if len(buf) == 0 {
		u.Kind, u.Basis = ULPEmpty, BasisContent
		return u
	}
	if bytes.Index(buf, identifierBytes[:]) >= 0 {
		u.Kind, u.Basis = ULPRPCRDMA, BasisIdentifier
		return u
	}
	if len(buf) >= 4 {
		switch {
		case binary.BigEndian.Uint32(buf) == lustreMagic:
			u.Kind, u.Basis = ULPLustre, BasisMagic
			u.Lustre = parseLustre(buf, binary.BigEndian, hint.Msg)
			return u
		case binary.LittleEndian.Uint32(buf) == lustreMagic:
			u.Kind, u.Basis = ULPLustre, BasisMagic
			u.Lustre = parseLustre(buf, binary.LittleEndian, hint.Msg)
			u.Lustre.LittleEndian = true
			return u
		}
	}
	switch hint.Port {
	case PortNVMeRDMA:
		if n, ok := parseNVMe(buf, hint.Msg); ok {
			u.Kind, u.Basis, u.NVMe = ULPNVMe, BasisPort, n
			return u
		}
	case PortISER:
		if len(buf) >= iserLen {
			u.Kind, u.Basis, u.ISER = ULPISER, BasisPort, ISER{Flags: buf[0]}
			return u
		}
	case PortSMBDirect, PortSMBDirect2:
		if s, ok := parseSMBDirect(buf); ok {
			u.Kind, u.Basis, u.SMBDirect = ULPSMBDirect, BasisPort, s
			return u
		}
	case PortNFSRDMA:
		// NFS/RDMA without an RFC 8797 message: the peer uses the
		// RPC-over-RDMA version 1 defaults (nfs-ganesha, old kernels).
		u.Kind, u.Basis = ULPRPCRDMA, BasisPort
		return u
	}
	if hint.Msg != MsgReply && hint.Msg != MsgReject {
		if n, ok := parseNVMe(buf, MsgRequest); ok && nvmeReqLooksReal(buf, n) {
			u.Kind, u.Basis, u.NVMe, u.Msg = ULPNVMe, BasisShape, n, MsgRequest
			return u
		}
		if s, ok := parseSRP(buf); ok {
			u.Kind, u.Basis, u.SRP, u.Msg = ULPSRP, BasisShape, s, MsgRequest
			return u
		}
	}
	if len(buf) == 8 {
		if s, ok := parseSMBDirect(buf); ok {
			u.Kind, u.Basis, u.SMBDirect = ULPSMBDirect, BasisShape, s
			return u
		}
	}
	if allZero(buf) {
		u.Kind, u.Basis = ULPZero, BasisContent
		return u
	}
	u.Kind, u.Basis = ULPUnknown, BasisNone
	return u
}

// allZero reports whether every octet of b is zero, eight at a time.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// parseNVMe reads the NVMe-oF layout for msg (a request when unknown).
func parseNVMe(b []byte, msg MsgKind) (NVMe, bool) {
	le := binary.LittleEndian
	var n NVMe
	switch msg {
	case MsgReject:
		if len(b) < nvmeRejLen {
			return n, false
		}
		n.RecFmt, n.Status = le.Uint16(b), le.Uint16(b[2:])
	case MsgReply:
		if len(b) < 4 {
			return n, false
		}
		n.RecFmt, n.CRQSize = le.Uint16(b), le.Uint16(b[2:])
	default:
		if len(b) < 8 {
			return n, false
		}
		n.RecFmt, n.QID, n.HRQSize, n.HSQSize = le.Uint16(b), le.Uint16(b[2:]), le.Uint16(b[4:]), le.Uint16(b[6:])
		if len(b) >= 10 {
			n.CntlID = le.Uint16(b[8:])
		}
	}
	return n, n.RecFmt == 0
}

// nvmeReqLooksReal accepts a request without the port only when it has the
// shape Linux hosts send: hrqsize = hsqsize + 1 (hsqsize is 0's based), a
// full 32-octet record and zeros after cntlid.
func nvmeReqLooksReal(b []byte, n NVMe) bool {
	return len(b) >= nvmeReqLen && n.HRQSize != 0 && n.HRQSize == n.HSQSize+1 && allZero(b[10:nvmeReqLen])
}

// parseSRP accepts an SRP_LOGIN_REQ (opcode 0) with a buffer format of
// direct and/or indirect descriptors and a plausible IU length.
func parseSRP(b []byte) (SRP, bool) {
	var s SRP
	if len(b) < srpLoginReqRDMALen {
		return s, false
	}
	be := binary.BigEndian
	s.Tag = be.Uint64(b)
	s.ReqBufFmt = be.Uint16(b[8:])
	s.ReqFlags = b[10]
	s.Opcode = b[11]
	s.ReqITIULen = be.Uint32(b[12:])
	copy(s.InitiatorPortID[:], b[16:32])
	copy(s.TargetPortID[:], b[32:48])
	s.ImmDataOffset = be.Uint16(b[48:])
	ok := s.Opcode == 0 && s.ReqBufFmt != 0 && s.ReqBufFmt&^0x0006 == 0 &&
		s.ReqITIULen >= 64 && s.ReqITIULen <= 1<<20 && !allZero(s.InitiatorPortID[:])
	return s, ok
}

// parseSMBDirect reads two small 32-bit words, in whichever byte order makes
// both plausible IRD/ORD values (1..65535).
func parseSMBDirect(b []byte) (SMBDirect, bool) {
	if len(b) < 8 {
		return SMBDirect{}, false
	}
	plausible := func(v uint32) bool { return v >= 1 && v <= 0xffff }
	be, le := binary.BigEndian, binary.LittleEndian
	if s := (SMBDirect{IRD: be.Uint32(b), ORD: be.Uint32(b[4:])}); plausible(s.IRD) && plausible(s.ORD) {
		return s, true
	}
	if s := (SMBDirect{LittleEndian: true, IRD: le.Uint32(b), ORD: le.Uint32(b[4:])}); plausible(s.IRD) && plausible(s.ORD) {
		return s, true
	}
	return SMBDirect{}, false
}

func parseLustre(b []byte, o binary.ByteOrder, msg MsgKind) Lustre {
	var l Lustre
	if len(b) >= 6 {
		l.Version = o.Uint16(b[4:])
	}
	if msg == MsgReject {
		l.Reject = true
		if len(b) >= 7 {
			l.Why = b[6]
		}
		if len(b) >= 16 {
			l.Incarnation = o.Uint64(b[8:])
		}
		if len(b) >= lustreRejLen {
			l.HasParams = true
			l.QueueDepth, l.MaxMsgSize, l.MaxFrags = o.Uint16(b[16:]), o.Uint16(b[18:]), o.Uint32(b[20:])
		}
		return l
	}
	if len(b) >= 8 {
		l.Type, l.Credits = b[6], b[7]
	}
	if len(b) >= 48 {
		l.Nob, l.Cksum = o.Uint32(b[8:]), o.Uint32(b[12:])
		l.SrcNID, l.SrcStamp = o.Uint64(b[16:]), o.Uint64(b[24:])
		l.DstNID, l.DstStamp = o.Uint64(b[32:]), o.Uint64(b[40:])
	}
	if len(b) >= lustreMsgConnLen && (l.Type == 0xc0 || l.Type == 0xc1) {
		l.HasParams = true
		l.QueueDepth, l.MaxMsgSize, l.MaxFrags = o.Uint16(b[48:]), o.Uint16(b[50:]), o.Uint32(b[52:])
	}
	return l
}

// Fields of the other ULPs.
var (
	fNVMe        = Proto.Group("pvtdata.nvme", "NVMe-oF RDMA CM private data").WithRef("NVMe-oF 1.1 §7.3.3")
	fNVMeRecFmt  = Proto.Uint("pvtdata.nvme.recfmt", 16, "Record Format").WithNames(map[uint64]string{0: "1.0"})
	fNVMeQID     = Proto.Uint("pvtdata.nvme.qid", 16, "Queue ID")
	fNVMeHRQSize = Proto.Uint("pvtdata.nvme.hrqsize", 16, "Host Receive Queue Size")
	fNVMeHSQSize = Proto.Uint("pvtdata.nvme.hsqsize", 16, "Host Send Queue Size (0's based)")
	fNVMeCntlID  = Proto.Hex("pvtdata.nvme.cntlid", 16, "Controller ID")
	fNVMeCRQSize = Proto.Uint("pvtdata.nvme.crqsize", 16, "Controller Receive Queue Size")
	fNVMeStatus  = Proto.Uint("pvtdata.nvme.status", 16, "Reject Status").WithNames(nvmeStatusNames)

	fISER          = Proto.Group("pvtdata.iser", "iSER CM header").WithRef("IBTA Annex A12; include/scsi/iser.h")
	fISERFlags     = Proto.Hex("pvtdata.iser.flags", 8, "Flags")
	fISERZBVA      = Proto.Bool("pvtdata.iser.zbva_not_supported", "Zero-based virtual addressing not supported")
	fISERSendWInv  = Proto.Bool("pvtdata.iser.send_w_inv_not_supported", "Send with Invalidate not supported")
	fSRP           = Proto.Group("pvtdata.srp", "SRP login request (rdma_cm)").WithRef("include/scsi/srp.h")
	fSRPTag        = Proto.Hex("pvtdata.srp.tag", 64, "Tag")
	fSRPBufFmt     = Proto.Hex("pvtdata.srp.req_buf_fmt", 16, "Requested Buffer Formats")
	fSRPFlags      = Proto.Hex("pvtdata.srp.req_flags", 8, "Request Flags")
	fSRPOpcode     = Proto.Hex("pvtdata.srp.opcode", 8, "Opcode").WithNames(map[uint64]string{0: "SRP_LOGIN_REQ"})
	fSRPITIULen    = Proto.Uint("pvtdata.srp.req_it_iu_len", 32, "Requested Max Initiator to Target IU Length").WithUnit("octets")
	fSRPInitiator  = Proto.Bytes("pvtdata.srp.initiator_port_id", "Initiator Port ID")
	fSRPTarget     = Proto.Bytes("pvtdata.srp.target_port_id", "Target Port ID")
	fSRPImmOffset  = Proto.Uint("pvtdata.srp.imm_data_offset", 16, "Immediate Data Offset")
	fLustre        = Proto.Group("pvtdata.lustre", "Lustre o2iblnd connection message").WithRef("lnet/klnds/o2iblnd/o2iblnd-idl.h")
	fLustreOrder   = Proto.String("pvtdata.lustre.byte_order", "Sender byte order")
	fLustreVersion = Proto.Hex("pvtdata.lustre.version", 16, "Version").WithNames(map[uint64]string{0x11: "1", 0x12: "2"})
	fLustreType    = Proto.Hex("pvtdata.lustre.type", 8, "Message Type").WithNames(lustreTypeNames)
	fLustreCredits = Proto.Uint("pvtdata.lustre.credits", 8, "Credits")
	fLustreNob     = Proto.Uint("pvtdata.lustre.nob", 32, "Message Length").WithUnit("octets")
	fLustreCksum   = Proto.Hex("pvtdata.lustre.cksum", 32, "Checksum")
	fLustreSrcNID  = Proto.Hex("pvtdata.lustre.srcnid", 64, "Source NID")
	fLustreSrcStmp = Proto.Hex("pvtdata.lustre.srcstamp", 64, "Source Incarnation")
	fLustreDstNID  = Proto.Hex("pvtdata.lustre.dstnid", 64, "Destination NID")
	fLustreDstStmp = Proto.Hex("pvtdata.lustre.dststamp", 64, "Destination Incarnation")
	fLustreWhy     = Proto.Uint("pvtdata.lustre.why", 8, "Reject Reason").WithNames(lustreWhyNames)
	fLustreIncarn  = Proto.Hex("pvtdata.lustre.incarnation", 64, "Incarnation")
	fLustreQDepth  = Proto.Uint("pvtdata.lustre.queue_depth", 16, "Queue Depth")
	fLustreMaxMsg  = Proto.Uint("pvtdata.lustre.max_msg_size", 16, "Max Message Size").WithUnit("octets")
	fLustreFrags   = Proto.Uint("pvtdata.lustre.max_frags", 32, "Max Fragments")
	fSMBD          = Proto.Group("pvtdata.smbd", "SMB Direct IRD/ORD").WithRef("MS-SMBD; fs/smb/client/smbdirect.c")
	fSMBDOrder     = Proto.String("pvtdata.smbd.byte_order", "Byte order")
	fSMBDIRD       = Proto.Uint("pvtdata.smbd.ird", 32, "Inbound RDMA Read Depth")
	fSMBDORD       = Proto.Uint("pvtdata.smbd.ord", 32, "Outbound RDMA Read Depth")
)

func byteOrderName(little bool) string {
	if little {
		return "little-endian"
	}
	return "big-endian"
}

// VisitFields reports the ULP label and, for the ULPs other than RFC 8797
// (whose fields come from Reading.VisitFields), their decoded fields.
func (u *ULP) VisitFields(v field.Visitor) {
	v.String(fULP, u.Kind.String())
	v.String(fULPBasis, u.Basis.String())
	switch u.Kind {
	case ULPNVMe:
		n := &u.NVMe
		v.Begin(fNVMe)
		v.Uint(fNVMeRecFmt, uint64(n.RecFmt))
		switch u.Msg {
		case MsgReply:
			v.Uint(fNVMeCRQSize, uint64(n.CRQSize))
		case MsgReject:
			v.Uint(fNVMeStatus, uint64(n.Status))
		default:
			v.Uint(fNVMeQID, uint64(n.QID))
			v.Uint(fNVMeHRQSize, uint64(n.HRQSize))
			v.Uint(fNVMeHSQSize, uint64(n.HSQSize))
			v.Uint(fNVMeCntlID, uint64(n.CntlID))
		}
		v.End()
	case ULPISER:
		v.Begin(fISER)
		v.Uint(fISERFlags, uint64(u.ISER.Flags))
		v.Bool(fISERZBVA, u.ISER.Flags&ISERZBVANotSupported != 0)
		v.Bool(fISERSendWInv, u.ISER.Flags&ISERSendWInvNotSupported != 0)
		v.End()
	case ULPSRP:
		s := &u.SRP
		v.Begin(fSRP)
		v.Uint(fSRPTag, s.Tag)
		v.Uint(fSRPBufFmt, uint64(s.ReqBufFmt))
		v.Uint(fSRPFlags, uint64(s.ReqFlags))
		v.Uint(fSRPOpcode, uint64(s.Opcode))
		v.Uint(fSRPITIULen, uint64(s.ReqITIULen))
		v.Bytes(fSRPInitiator, s.InitiatorPortID[:])
		v.Bytes(fSRPTarget, s.TargetPortID[:])
		v.Uint(fSRPImmOffset, uint64(s.ImmDataOffset))
		v.End()
	case ULPLustre:
		l := &u.Lustre
		v.Begin(fLustre)
		v.String(fLustreOrder, byteOrderName(l.LittleEndian))
		if u.Len >= 6 {
			v.Uint(fLustreVersion, uint64(l.Version))
		}
		if l.Reject {
			if u.Len >= 7 {
				v.Uint(fLustreWhy, uint64(l.Why))
			}
			if u.Len >= 16 {
				v.Uint(fLustreIncarn, l.Incarnation)
			}
		} else {
			if u.Len >= 8 {
				v.Uint(fLustreType, uint64(l.Type))
				v.Uint(fLustreCredits, uint64(l.Credits))
			}
			if u.Len >= 48 {
				v.Uint(fLustreNob, uint64(l.Nob))
				v.Uint(fLustreCksum, uint64(l.Cksum))
				v.Uint(fLustreSrcNID, l.SrcNID)
				v.Uint(fLustreSrcStmp, l.SrcStamp)
				v.Uint(fLustreDstNID, l.DstNID)
				v.Uint(fLustreDstStmp, l.DstStamp)
			}
		}
		if l.HasParams {
			v.Uint(fLustreQDepth, uint64(l.QueueDepth))
			v.Uint(fLustreMaxMsg, uint64(l.MaxMsgSize))
			v.Uint(fLustreFrags, uint64(l.MaxFrags))
		}
		v.End()
	case ULPSMBDirect:
		v.Begin(fSMBD)
		v.String(fSMBDOrder, byteOrderName(u.SMBDirect.LittleEndian))
		v.Uint(fSMBDIRD, uint64(u.SMBDirect.IRD))
		v.Uint(fSMBDORD, uint64(u.SMBDirect.ORD))
		v.End()
	}
}
