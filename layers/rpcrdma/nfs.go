package rpcrdma

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// DefaultMaxOps caps the COMPOUND operations listed when NFS.MaxOps is 0.
const DefaultMaxOps = 512

// Op is one NFSv4 COMPOUND operation: its code, and in a reply its status.
type Op struct {
	Opcode    uint32
	Status    uint32
	HasStatus bool
}

// NFS names an NFS-family RPC (NFS v2/v3/v4, MOUNT, NLM, NFS_ACL): the
// procedure, and for an NFSv4 COMPOUND its tag, minor version, status and
// every operation the decoder can reach.
//
// To list the operations after the first, the decoder must skip each
// operation's arguments (or results); it knows the XDR of the NFSv4.0,
// 4.1 and 4.2 operations except WRITE_SAME and GET_DIR_DELEGATION results.
// Operations after one it cannot skip are counted in Undecoded.
type NFS struct {
	layers.BaseLayer

	Program, Version, Procedure uint32
	Reply                       bool

	// HasStatus and Status: the reply's first word for NFSv2/v3 (nfsstat)
	// and the COMPOUND status for v4.
	HasStatus bool
	Status    uint32

	// NFSv4 COMPOUND (Compound is set when these were read).
	Compound     bool
	Tag          []byte
	MinorVersion uint32 // calls only
	NumOps       uint32 // as the message claims
	Ops          []Op   // the operations reached, in order
	// Undecoded counts claimed operations not listed (after one whose
	// body could not be skipped, or past MaxOps).
	Undecoded uint32
	// Callback marks an NFSv4 callback (CB_COMPOUND), which uses the CB
	// operation numbers.
	Callback bool

	// MaxOps caps the operations listed (0: DefaultMaxOps).
	MaxOps int

	notes notes
}

// LayerType is LayerTypeNFS.
func (n *NFS) LayerType() gopacket.LayerType { return LayerTypeNFS }

// CanDecode is LayerTypeNFS.
func (n *NFS) CanDecode() gopacket.LayerClass { return LayerTypeNFS }

// NextLayerType is the payload: operation arguments are not decoded further.
func (n *NFS) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func nerr(what string, off int, format string, args ...any) *DecodeError {
	return &DecodeError{Code: CodeNFSTruncated, Layer: "nfs", Field: what, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Set fixes what DecodeFromBytes will decode: the RPC program, version and
// procedure (from the call, matched by xid for a reply) and the direction.
func (n *NFS) Set(program, version, procedure uint32, reply bool) {
	n.Program, n.Version, n.Procedure, n.Reply = program, version, procedure, reply
}

// DecodeBody is Set followed by DecodeFromBytes.
func (n *NFS) DecodeBody(program, version, procedure uint32, reply bool, body []byte, df gopacket.DecodeFeedback) error {
	n.Set(program, version, procedure, reply)
	return n.DecodeFromBytes(body, df)
}

// DecodeFromBytes decodes the procedure body (RPC call arguments or reply
// results) named by the last Set.
func (n *NFS) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	n.reset()
	max := n.MaxOps
	n.Contents = data
	if max <= 0 {
		max = DefaultMaxOps
	}
	if n.Procedure == 0 {
		return nil // NULL: no arguments, no results
	}
	compound := n.Procedure == 1 && ((n.Program == ProgNFS && n.Version == 4) || n.isCallback())
	if !compound {
		if n.Reply && n.Program == ProgNFS && (n.Version == 2 || n.Version == 3) {
			if len(data) < 4 {
				df.SetTruncated()
				return short(CodeNFSTruncated, "nfs", "status", 0, 4, len(data))
			}
			n.HasStatus, n.Status = true, binary.BigEndian.Uint32(data)
		}
		return nil
	}
	n.Compound = true
	n.Callback = n.isCallback()
	x := xdrc{b: data}
	if n.Reply {
		n.Status = x.u32()
		n.HasStatus = !x.bad
	}
	n.Tag = x.opaque()
	if x.bad {
		df.SetTruncated()
		return nerr("tag", x.off, "the COMPOUND header ends early (%d octets)", len(data))
	}
	if !n.Reply {
		n.MinorVersion = x.u32()
		if n.Callback {
			x.u32() // callback_ident
		}
	}
	n.NumOps = x.u32()
	if x.bad {
		df.SetTruncated()
		return nerr("numops", len(data), "the COMPOUND header ends early (%d octets)", len(data))
	}
	perOp := 4
	if n.Reply {
		perOp = 8
	}
	if uint64(n.NumOps)*uint64(perOp) > uint64(x.left()) {
		n.notes.add(CodeNFSTooManyOps, finding.SeverityError, x.off-4, n.NumOps, uint32(x.left()))
	}
	i := uint32(0)
	for ; i < n.NumOps; i++ {
		if int(i) >= max {
			n.notes.add(CodeNFSOpsCap, finding.SeverityWarning, x.off, n.NumOps, uint32(max))
			break
		}
		start := x.off
		op := Op{Opcode: x.u32()}
		if n.Reply {
			op.Status, op.HasStatus = x.u32(), true
		}
		if x.bad {
			x.off = start
			break
		}
		n.Ops = append(n.Ops, op)
		if i+1 == n.NumOps {
			break // the last operation's body need not be walked
		}
		var ok bool
		switch {
		case n.Callback && n.Reply:
			ok = skipCBResult(&x, op.Opcode, op.Status)
		case n.Callback:
			ok = skipCBArgs(&x, op.Opcode)
		case n.Reply:
			ok = skipResult(&x, op.Opcode, op.Status)
		default:
			ok = skipArgs(&x, op.Opcode)
		}
		if !ok || x.bad {
			n.Undecoded = n.NumOps - i - 1
			n.notes.add(CodeNFSOpsUndecoded, finding.SeverityInfo, start, op.Opcode, n.Undecoded)
			return nil
		}
	}
	if uint32(len(n.Ops)) < n.NumOps && n.Undecoded == 0 {
		n.Undecoded = n.NumOps - uint32(len(n.Ops))
	}
	return nil
}

// reset empties n for the next decode, keeping what Set fixed, MaxOps
// and the capacity of Ops, field by field (see Header.reset).
func (n *NFS) reset() {
	n.Contents, n.Payload = nil, nil
	n.HasStatus, n.Status = false, 0
	n.Compound, n.Tag, n.MinorVersion, n.NumOps = false, nil, 0, 0
	n.Ops, n.Undecoded, n.Callback = n.Ops[:0], 0, false
	n.notes.reset()
}

func (n *NFS) isCallback() bool { return isCallbackProgram(n.Program, n.Version) }

// isCallbackProgram: NFSv4 callback programs are transient numbers the
// client picks (0x40000000–0x5fffffff; Linux uses 0x40000000), version 1.
func isCallbackProgram(prog, vers uint32) bool {
	return prog >= 0x40000000 && prog <= 0x5fffffff && vers == 1
}

// hasNFSLayer reports whether the nfs layer decodes the body of program
// prog version vers.
func hasNFSLayer(prog, vers uint32) bool { return IsNFSFamily(prog) || isCallbackProgram(prog, vers) }

// skipCBArgs steps over the arguments of callback operation op.
func skipCBArgs(x *xdrc, op uint32) bool {
	switch op {
	case 3: // CB_GETATTR
		x.opaque()
		x.bitmap()
	case 4: // CB_RECALL
		x.skip(20)
		x.opaque()
	case 5: // CB_LAYOUTRECALL
		x.skip(12)
		switch x.u32() {
		case 1:
			x.opaque()
			x.skip(32)
		case 2:
			x.skip(16)
		case 3:
		default:
			return false
		}
	case 8: // CB_RECALL_ANY
		x.skip(4)
		x.bitmap()
	case 10: // CB_RECALL_SLOT
		x.skip(4)
	case 11: // CB_SEQUENCE
		x.skip(32)
		n := x.count(20)
		for i := 0; i < n && !x.bad; i++ {
			x.skip(16)
			x.array(8)
		}
	case 13: // CB_NOTIFY_LOCK
		x.opaque()
		x.lockOwner()
	case 15: // CB_OFFLOAD
		x.opaque()
		x.skip(16)
		if x.u32() == 0 {
			x.array(16)
			x.skip(20)
		} else {
			x.skip(8)
		}
	default:
		return false
	}
	return !x.bad
}

// skipCBResult steps over the result of callback operation op.
func skipCBResult(x *xdrc, op, st uint32) bool {
	if st != 0 {
		return true
	}
	switch op {
	case 3: // CB_GETATTR
		x.fattr()
	case 11: // CB_SEQUENCE
		x.skip(32)
	case 4, 5, 8, 10, 13, 15, 10044:
	default:
		return false
	}
	return !x.bad
}

func decodeNFS(data []byte, p gopacket.PacketBuilder) error {
	n := &NFS{}
	if pk, ok := p.(gopacket.Packet); ok {
		// The RPC layer found by its Go type, not pk.Layer(LayerTypeRPC):
		// LayerTypeRPC's registration refers to this decoder.
		for _, l := range pk.Layers() {
			if r, ok := l.(*RPC); ok {
				n.Set(r.Program, r.ProgVersion, r.Procedure, r.MsgType == MsgReply)
				break
			}
		}
	}
	if err := n.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(n)
	return nil
}

// skipArgs steps over the arguments of operation op; false when the
// operation's arguments are not known to this decoder.
func skipArgs(x *xdrc, op uint32) bool {
	switch op {
	case 10, 16, 23, 24, 27, 31, 32: // GETFH LOOKUPP PUTPUBFH PUTROOTFH READLINK RESTOREFH SAVEFH
	case 3, 19, 52, 58: // ACCESS OPENATTR SECINFO_NO_NAME RECLAIM_COMPLETE
		x.skip(4)
	case 4: // CLOSE
		x.skip(20)
	case 5, 74: // COMMIT LISTXATTRS
		x.skip(12)
	case 6: // CREATE
		switch x.u32() {
		case 5: // NF4LNK
			x.opaque()
		case 3, 4: // NF4BLK NF4CHR
			x.skip(8)
		}
		x.opaque()
		x.fattr()
	case 7, 30: // DELEGPURGE RENEW
		x.skip(8)
	case 8, 44, 45, 66, 67: // DELEGRETURN DESTROY_SESSION FREE_STATEID OFFLOAD_CANCEL OFFLOAD_STATUS
		x.skip(16)
	case 9: // GETATTR
		x.bitmap()
	case 11, 15, 28, 33, 72, 75: // LINK LOOKUP REMOVE SECINFO GETXATTR REMOVEXATTR
		x.opaque()
	case 12: // LOCK
		x.skip(24)
		if x.boolean() {
			x.skip(24)
			x.lockOwner()
		} else {
			x.skip(20)
		}
	case 13: // LOCKT
		x.skip(20)
		x.lockOwner()
	case 14: // LOCKU
		x.skip(40)
	case 17, 37: // NVERIFY VERIFY
		x.fattr()
	case 18: // OPEN
		x.skip(12)
		x.lockOwner()
		if x.u32() == 1 { // OPEN4_CREATE
			switch x.u32() {
			case 0, 1:
				x.fattr()
			case 2:
				x.skip(8)
			case 3:
				x.skip(8)
				x.fattr()
			default:
				return false
			}
		}
		switch x.u32() {
		case 0, 3:
			x.opaque()
		case 1:
			x.skip(4)
		case 2:
			x.skip(16)
			x.opaque()
		case 4, 6:
		case 5:
			x.skip(16)
		default:
			return false
		}
	case 20: // OPEN_CONFIRM
		x.skip(20)
	case 21: // OPEN_DOWNGRADE
		x.skip(28)
	case 22: // PUTFH
		x.opaque()
	case 25, 68, 69: // READ READ_PLUS SEEK
		x.skip(28)
	case 26: // READDIR
		x.skip(24)
		x.bitmap()
	case 29: // RENAME
		x.opaque()
		x.opaque()
	case 34: // SETATTR
		x.skip(16)
		x.fattr()
	case 35: // SETCLIENTID
		x.skip(8)
		x.opaque()
		x.skip(4)
		x.opaque()
		x.opaque()
		x.skip(4)
	case 36: // SETCLIENTID_CONFIRM
		x.skip(16)
	case 38: // WRITE
		x.skip(28)
		x.opaque()
	case 39: // RELEASE_LOCKOWNER
		x.lockOwner()
	case 40: // BACKCHANNEL_CTL
		x.skip(4)
		return skipSecParms(x)
	case 41: // BIND_CONN_TO_SESSION
		x.skip(24)
	case 42: // EXCHANGE_ID
		x.skip(8)
		x.opaque()
		x.skip(4)
		switch x.u32() {
		case 0:
		case 1:
			x.stateProtectOps()
		case 2:
			x.stateProtectOps()
			x.opaques()
			x.opaques()
			x.skip(8)
		default:
			return false
		}
		skipImplID(x)
	case 43: // CREATE_SESSION
		x.skip(16)
		skipChannelAttrs(x)
		skipChannelAttrs(x)
		x.skip(4)
		return skipSecParms(x)
	case 46: // GET_DIR_DELEGATION
		x.skip(4)
		x.bitmap()
		x.skip(24)
		x.bitmap()
		x.bitmap()
	case 47: // GETDEVICEINFO
		x.skip(24)
		x.bitmap()
	case 48: // GETDEVICELIST
		x.skip(24)
	case 49: // LAYOUTCOMMIT
		x.skip(36)
		if x.boolean() {
			x.skip(8)
		}
		if x.boolean() {
			x.skip(12)
		}
		x.layoutUpdate()
	case 50: // LAYOUTGET
		x.skip(56)
	case 51: // LAYOUTRETURN
		x.skip(12)
		if x.u32() == 1 { // LAYOUTRETURN4_FILE
			x.skip(32)
			x.opaque()
		}
	case 53: // SEQUENCE
		x.skip(32)
	case 54: // SET_SSV
		x.opaque()
		x.opaque()
	case 55: // TEST_STATEID
		x.array(16)
	case 56: // WANT_DELEGATION
		x.skip(4)
		switch x.u32() {
		case 1:
			x.skip(4)
		case 4, 6:
		default:
			return false
		}
	case 57: // DESTROY_CLIENTID
		x.skip(8)
	case 59, 62: // ALLOCATE DEALLOCATE
		x.skip(32)
	case 60: // COPY
		x.skip(64)
		if !skipNetlocs(x) {
			return false
		}
	case 61: // COPY_NOTIFY
		x.skip(16)
		return skipNetloc(x)
	case 63: // IO_ADVISE
		x.skip(32)
		x.bitmap()
	case 64: // LAYOUTERROR
		x.skip(32)
		x.array(24)
	case 65: // LAYOUTSTATS
		x.skip(80)
		x.layoutUpdate()
	case 71: // CLONE
		x.skip(56)
	case 73: // SETXATTR
		x.skip(4)
		x.opaque()
		x.opaque()
	default:
		return false
	}
	return !x.bad
}

// skipNetlocs steps over a netloc4<> (COPY's ca_source_server,
// COPY_NOTIFY's cnr_source_server).
func skipNetlocs(x *xdrc) bool {
	n := x.count(8)
	for i := 0; i < n && !x.bad; i++ {
		if !skipNetloc(x) {
			return false
		}
	}
	return true
}

func skipNetloc(x *xdrc) bool {
	switch x.u32() {
	case 1, 2:
		x.opaque()
	case 3:
		x.opaque()
		x.opaque()
	default:
		return false
	}
	return true
}

func skipImplID(x *xdrc) {
	n := x.count(24)
	for i := 0; i < n && !x.bad; i++ {
		x.opaque()
		x.opaque()
		x.skip(12)
	}
}

func skipChannelAttrs(x *xdrc) {
	x.skip(24)
	x.array(4)
}

func skipSecParms(x *xdrc) bool {
	n := x.count(4)
	for i := 0; i < n && !x.bad; i++ {
		switch x.u32() {
		case AuthNone:
		case AuthSys:
			x.skip(4)
			x.opaque()
			x.skip(8)
			x.array(4)
		case RPCSecGSS:
			x.skip(4)
			x.opaque()
			x.opaque()
		default:
			return false
		}
	}
	return !x.bad
}

func skipDelegation(x *xdrc) bool {
	switch x.u32() {
	case 0: // OPEN_DELEGATE_NONE
	case 1: // READ
		x.skip(20)
		x.skip(12)
		x.opaque()
	case 2: // WRITE
		x.skip(20)
		x.skip(12) // limitby + 8 octets (size or blocks)
		x.skip(12)
		x.opaque()
	case 3: // NONE_EXT
		if w := x.u32(); w == 7 || w == 8 {
			x.skip(4)
		}
	default:
		return false
	}
	return !x.bad
}

func skipLockDenied(x *xdrc) {
	x.skip(20)
	x.lockOwner()
}

// skipResult steps over the result of operation op with status st.
func skipResult(x *xdrc, op, st uint32) bool {
	if st != 0 {
		switch {
		case (op == 12 || op == 13) && st == 10010: // LOCK/LOCKT DENIED
			skipLockDenied(x)
		case op == 34: // SETATTR: attrsset always
			x.bitmap()
		case op == 35 && st == 10017: // SETCLIENTID CLID_INUSE
			x.opaque()
			x.opaque()
		case op == 60 && st == 10094: // COPY OFFLOAD_NO_REQS
			x.skip(8)
		case op == 47 && st == 10005: // GETDEVICEINFO TOOSMALL
			x.skip(4)
		case op == 50 && st == 10058: // LAYOUTGET LAYOUTTRYLATER
			x.skip(4)
		}
		return !x.bad
	}
	switch op {
	case 7, 8, 13, 15, 16, 17, 19, 22, 23, 24, 30, 31, 32, 36, 37, 39, 40, 44, 45, 57, 58, 59, 62, 64, 65, 66, 71, 10044:
	case 3, 5: // ACCESS COMMIT
		x.skip(8)
	case 4, 12, 14, 20, 21: // CLOSE LOCK LOCKU OPEN_CONFIRM OPEN_DOWNGRADE
		x.skip(16)
	case 6: // CREATE
		x.changeInfo()
		x.bitmap()
	case 9: // GETATTR
		x.fattr()
	case 10, 27, 72: // GETFH READLINK GETXATTR
		x.opaque()
	case 11, 28, 73, 75: // LINK REMOVE SETXATTR REMOVEXATTR
		x.changeInfo()
	case 18: // OPEN
		x.skip(40)
		x.bitmap()
		return skipDelegation(x)
	case 25: // READ
		x.skip(4)
		x.opaque()
	case 26: // READDIR
		x.skip(8)
		for !x.bad && x.boolean() {
			x.skip(8)
			x.opaque()
			x.fattr()
		}
		x.skip(4)
	case 29: // RENAME
		x.skip(40)
	case 33, 52: // SECINFO SECINFO_NO_NAME
		n := x.count(4)
		for i := 0; i < n && !x.bad; i++ {
			if x.u32() == RPCSecGSS {
				x.opaque()
				x.skip(8)
			}
		}
	case 34: // SETATTR
		x.bitmap()
	case 35: // SETCLIENTID
		x.skip(16)
	case 38: // WRITE
		x.skip(16)
	case 41: // BIND_CONN_TO_SESSION
		x.skip(24)
	case 42: // EXCHANGE_ID
		x.skip(16)
		switch x.u32() {
		case 0:
		case 1:
			x.stateProtectOps()
		case 2:
			x.stateProtectOps()
			x.skip(16)
			x.opaques()
		default:
			return false
		}
		x.skip(8)
		x.opaque()
		x.opaque()
		skipImplID(x)
	case 43: // CREATE_SESSION
		x.skip(24)
		skipChannelAttrs(x)
		skipChannelAttrs(x)
	case 47: // GETDEVICEINFO
		x.skip(4)
		x.opaque()
		x.bitmap()
	case 48: // GETDEVICELIST
		x.skip(16)
		x.array(16)
		x.skip(4)
	case 49: // LAYOUTCOMMIT
		if x.boolean() {
			x.skip(8)
		}
	case 50: // LAYOUTGET
		x.skip(20)
		n := x.count(28)
		for i := 0; i < n && !x.bad; i++ {
			x.skip(24)
			x.opaque()
		}
	case 51: // LAYOUTRETURN
		if x.boolean() {
			x.skip(16)
		}
	case 53: // SEQUENCE
		x.skip(36)
	case 54: // SET_SSV
		x.opaque()
	case 55: // TEST_STATEID
		x.array(4)
	case 56: // WANT_DELEGATION
		return skipDelegation(x)
	case 60: // COPY
		x.array(16)
		x.skip(20)
		x.skip(8)
	case 61: // COPY_NOTIFY
		x.skip(28)
		if !skipNetlocs(x) {
			return false
		}
	case 63: // IO_ADVISE
		x.bitmap()
	case 67: // OFFLOAD_STATUS
		x.skip(8)
		x.array(4)
	case 68: // READ_PLUS
		x.skip(4)
		n := x.count(12)
		for i := 0; i < n && !x.bad; i++ {
			switch x.u32() {
			case 0:
				x.skip(8)
				x.opaque()
			case 1:
				x.skip(16)
			default:
				return false
			}
		}
	case 69: // SEEK
		x.skip(12)
	case 74: // LISTXATTRS
		x.skip(8)
		x.opaques()
		x.skip(4)
	default:
		return false
	}
	return !x.bad
}

// Field declarations.
var (
	ProtoNFS = field.NewProto("nfs", "NFS family (NFS, MOUNT, NLM, NFS_ACL) procedure and operations")

	fNFSProcV2   = ProtoNFS.Uint("nfs.procedure_v2", 32, "V2 Procedure").WithNames(nfsV2Procs)
	fNFSProcV3   = ProtoNFS.Uint("nfs.procedure_v3", 32, "V3 Procedure").WithNames(nfsV3Procs).WithRef("RFC 1813 §3")
	fNFSProcV4   = ProtoNFS.Uint("nfs.procedure_v4", 32, "V4 Procedure").WithNames(nfsV4Procs).WithRef("RFC 8881 §16")
	fMountProc   = ProtoNFS.Uint("nfs.mount.procedure", 32, "MOUNT Procedure").WithNames(mountProcs)
	fNLMProc     = ProtoNFS.Uint("nfs.nlm.procedure", 32, "NLM Procedure").WithNames(nlmProcs)
	fACLProcV2   = ProtoNFS.Uint("nfs.acl.procedure_v2", 32, "NFS_ACL V2 Procedure").WithNames(nfsACLV2Procs)
	fACLProcV3   = ProtoNFS.Uint("nfs.acl.procedure_v3", 32, "NFS_ACL V3 Procedure").WithNames(nfsACLV3Procs)
	fNFSCBProc   = ProtoNFS.Uint("nfs.cb.procedure", 32, "CB Procedure").WithNames(map[uint64]string{0: "CB_NULL", 1: "CB_COMPOUND"})
	fNFSStatus3  = ProtoNFS.Uint("nfs.status3", 32, "Status").WithNames(nfsStat3)
	fNFSStatus2  = ProtoNFS.Uint("nfs.status2", 32, "Status").WithNames(nfsStat3)
	fNFSStat4    = ProtoNFS.Uint("nfs.nfsstat4", 32, "Status").WithNames(nfsStat4)
	fNFSTag      = ProtoNFS.String("nfs.tag", "Tag")
	fNFSMinor    = ProtoNFS.Uint("nfs.minorversion", 32, "minorversion")
	fNFSOpsCount = ProtoNFS.Uint("nfs.ops.count", 32, "Operations")
	gNFSOp       = ProtoNFS.Group("nfs.op", "Operation")
	fNFSOpcode   = ProtoNFS.Uint("nfs.opcode", 32, "Opcode").WithNames(nfsV4Ops)
	fNFSCBOpcode = ProtoNFS.Uint("nfs.cb.opcode", 32, "CB Opcode").WithNames(nfsV4CBOps)
	fNFSUndec    = ProtoNFS.Uint("nfs.ops.undecoded", 32, "Operations not listed (arguments or results not walked)")
)

// Proto is ProtoNFS ("nfs").
func (n *NFS) Proto() *field.Proto { return ProtoNFS }

func (n *NFS) procField() *field.Field {
	switch n.Program {
	case ProgNFS:
		switch n.Version {
		case 2:
			return fNFSProcV2
		case 3:
			return fNFSProcV3
		case 4:
			return fNFSProcV4
		}
	case ProgMount:
		return fMountProc
	case ProgNLM:
		return fNLMProc
	case ProgNFSACL:
		switch n.Version {
		case 2:
			return fACLProcV2
		case 3:
			return fACLProcV3
		}
	}
	if n.isCallback() {
		return fNFSCBProc
	}
	return nil
}

// VisitFields reports the procedure and, for COMPOUND, its operations.
func (n *NFS) VisitFields(v field.Visitor) {
	if f := n.procField(); f != nil {
		v.Uint(f, uint64(n.Procedure))
	}
	if n.HasStatus {
		switch {
		case n.Compound:
			v.Uint(fNFSStat4, uint64(n.Status))
		case n.Version == 2:
			v.Uint(fNFSStatus2, uint64(n.Status))
		default:
			v.Uint(fNFSStatus3, uint64(n.Status))
		}
	}
	if !n.Compound {
		return
	}
	v.String(fNFSTag, string(n.Tag))
	if !n.Reply {
		v.Uint(fNFSMinor, uint64(n.MinorVersion))
	}
	v.Uint(fNFSOpsCount, uint64(n.NumOps))
	opf := fNFSOpcode
	if n.Callback {
		opf = fNFSCBOpcode
	}
	for _, op := range n.Ops {
		v.Begin(gNFSOp)
		v.Uint(opf, uint64(op.Opcode))
		if op.HasStatus {
			v.Uint(fNFSStat4, uint64(op.Status))
		}
		v.End()
	}
	if n.Undecoded > 0 {
		v.Uint(fNFSUndec, uint64(n.Undecoded))
	}
}

// AppendSummary appends "V4 Call COMPOUND SEQUENCE PUTFH GETATTR",
// "V4 Reply COMPOUND NFS4_OK …", "V3 Call READ", "MOUNT V3 Call MNT".
func (n *NFS) AppendSummary(b []byte) []byte {
	if n.Program != ProgNFS {
		b = n.appendProgramName(b)
	}
	b = append(b, 'V')
	b = strconv.AppendUint(b, uint64(n.Version), 10)
	if n.Reply {
		b = append(b, " Reply "...)
	} else {
		b = append(b, " Call "...)
	}
	if f := n.procField(); f != nil {
		b = appendName(b, f.Names, n.Procedure)
	} else {
		b = append(b, "proc="...)
		b = strconv.AppendUint(b, uint64(n.Procedure), 10)
	}
	if n.HasStatus {
		b = append(b, ' ')
		if n.Compound {
			b = nfsStat4Table.appendName(b, n.Status)
		} else {
			b = nfsStat3Table.appendName(b, n.Status)
		}
	}
	names := nfsV4OpTable
	if n.Callback {
		names = nfsV4CBOpTable
	}
	for _, op := range n.Ops {
		b = append(b, ' ')
		b = names.appendName(b, op.Opcode)
	}
	if n.Undecoded > 0 {
		b = n.appendUndecoded(b)
	}
	return b
}

// The rare parts of the summary are out of line, so that the common
// one's code stays dense (it runs for every NFS packet of the default
// view).

// appendProgramName names a program other than NFS itself.
//
//go:noinline
func (n *NFS) appendProgramName(b []byte) []byte {
	switch {
	case n.Program == ProgMount:
		b = append(b, "MOUNT "...)
	case n.Program == ProgNLM:
		b = append(b, "NLM "...)
	case n.Program == ProgNFSACL:
		b = append(b, "NFS_ACL "...)
	case n.isCallback():
		b = append(b, "NFSv4 callback "...)
	}
	return b
}

// appendUndecoded counts the operations left unnamed.
//
//go:noinline
func (n *NFS) appendUndecoded(b []byte) []byte {
	b = append(b, " +"...)
	return strconv.AppendUint(b, uint64(n.Undecoded), 10)
}

// AppendFindings appends the non-fatal conditions noticed while decoding.
func (n *NFS) AppendFindings(dst []finding.Finding) []finding.Finding {
	return n.notes.appendTo(dst, "nfs", func(nt note, f *finding.Finding) {
		switch nt.code {
		case CodeNFSOpsUndecoded:
			f.Message = fmt.Sprintf("COMPOUND: the body of operation %s is not walked by this decoder; %d later operations are counted, not named",
				opLabel(nt.a), nt.b)
		case CodeNFSTooManyOps:
			f.Message = fmt.Sprintf("COMPOUND claims %d operations, more than the %d octets after numops can hold", nt.a, nt.b)
		case CodeNFSOpsCap:
			f.Message = fmt.Sprintf("COMPOUND claims %d operations; the first %d are listed, the rest counted", nt.a, nt.b)
		}
	})
}

func opLabel(op uint32) string {
	if s := OpName(op); s != "" {
		return s
	}
	return strconv.FormatUint(uint64(op), 10)
}

// SerializeTo writes a COMPOUND header (tag, minorversion or status,
// numops) and the operation codes with empty bodies: enough for tests of
// operations whose arguments are void (PUTROOTFH, GETFH, SAVEFH …).
func (n *NFS) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if !n.Compound {
		return nil
	}
	size := 4 + pad4(len(n.Tag)) + 8
	if n.Reply {
		size += 8 * len(n.Ops)
	} else {
		size += 4 * len(n.Ops)
	}
	w, err := b.PrependBytes(size)
	if err != nil {
		return err
	}
	clear(w)
	if n.Reply {
		binary.BigEndian.PutUint32(w, n.Status)
		w = w[4:]
	}
	binary.BigEndian.PutUint32(w, uint32(len(n.Tag)))
	copy(w[4:], n.Tag)
	w = w[4+pad4(len(n.Tag)):]
	if !n.Reply {
		binary.BigEndian.PutUint32(w, n.MinorVersion)
		w = w[4:]
	}
	binary.BigEndian.PutUint32(w, uint32(len(n.Ops)))
	w = w[4:]
	for _, op := range n.Ops {
		binary.BigEndian.PutUint32(w, op.Opcode)
		w = w[4:]
		if n.Reply {
			binary.BigEndian.PutUint32(w, op.Status)
			w = w[4:]
		}
	}
	return nil
}
