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

// RPC message types and reply states (RFC 5531 §9).
const (
	MsgCall  = 0
	MsgReply = 1

	ReplyAccepted = 0 // MSG_ACCEPTED
	ReplyDenied   = 1 // MSG_DENIED

	AcceptSuccess      = 0
	AcceptProgUnavail  = 1
	AcceptProgMismatch = 2
	AcceptProcUnavail  = 3
	AcceptGarbageArgs  = 4
	AcceptSystemErr    = 5

	RejectRPCMismatch = 0
	RejectAuthError   = 1
)

// Auth flavors (RFC 5531 §8.2, RFC 2203).
const (
	AuthNone  = 0
	AuthSys   = 1
	AuthShort = 2
	AuthDH    = 3
	RPCSecGSS = 6
)

// Well-known program numbers.
const (
	ProgPortmap = 100000
	ProgNFS     = 100003
	ProgMount   = 100005
	ProgNLM     = 100021
	ProgNSM     = 100024
	ProgNFSACL  = 100227
)

var msgTypeNames = map[uint64]string{0: "Call", 1: "Reply"}
var replyStatNames = map[uint64]string{0: "accepted", 1: "denied"}
var acceptNames = map[uint64]string{0: "SUCCESS", 1: "PROG_UNAVAIL", 2: "PROG_MISMATCH", 3: "PROC_UNAVAIL", 4: "GARBAGE_ARGS", 5: "SYSTEM_ERR"}
var rejectNames = map[uint64]string{0: "RPC_MISMATCH", 1: "AUTH_ERROR"}
var authStatNames = map[uint64]string{
	0: "AUTH_OK", 1: "AUTH_BADCRED", 2: "AUTH_REJECTEDCRED", 3: "AUTH_BADVERF", 4: "AUTH_REJECTEDVERF",
	5: "AUTH_TOOWEAK", 6: "AUTH_INVALIDRESP", 7: "AUTH_FAILED", 8: "AUTH_KERB_GENERIC", 9: "AUTH_TIMEEXPIRE",
	10: "AUTH_TKT_FILE", 11: "AUTH_DECODE", 12: "AUTH_NET_ADDR", 13: "RPCSEC_GSS_CREDPROBLEM", 14: "RPCSEC_GSS_CTXPROBLEM",
}
var flavorNames = map[uint64]string{0: "AUTH_NONE", 1: "AUTH_SYS", 2: "AUTH_SHORT", 3: "AUTH_DH", 6: "RPCSEC_GSS", 390003: "RPCSEC_GSS_KRB5", 390004: "RPCSEC_GSS_KRB5I", 390005: "RPCSEC_GSS_KRB5P"}
var programNames = map[uint64]string{
	100000: "Portmap", 100003: "NFS", 100005: "MOUNT", 100021: "NLM", 100024: "STATUS (NSM)", 100227: "NFS_ACL",
	0x40000000: "NFSv4 callback (Linux cb_program)",
}

// ProgramName returns the name of a well-known RPC program, or "".
func ProgramName(prog uint32) string { return programNames[uint64(prog)] }

// Auth is an opaque_auth: a flavor and its body (at most 400 octets).
type Auth struct {
	Flavor uint32
	Body   []byte
}

// GSSCred is an RPCSEC_GSS credential body (rpc_gss_cred_vers_1_t).
type GSSCred struct {
	Version, Proc, Seq, Service uint32
	Handle                      []byte
}

// RPCSEC_GSS procedures and services (RFC 2203 §5).
const (
	GSSProcData     = 0
	GSSServiceNone  = 1
	GSSServiceInteg = 2
	GSSServicePriv  = 3
)

var gssProcNames = map[uint64]string{0: "RPCSEC_GSS_DATA", 1: "RPCSEC_GSS_INIT", 2: "RPCSEC_GSS_CONTINUE_INIT", 3: "RPCSEC_GSS_DESTROY"}
var gssServiceNames = map[uint64]string{1: "rpc_gss_svc_none", 2: "rpc_gss_svc_integrity", 3: "rpc_gss_svc_privacy"}

// parseGSS decodes b into *g, zero (RPC.reset cleared it): fields it
// reached stay set when it fails.
func parseGSS(b []byte, g *GSSCred) bool {
	if len(b) < 20 {
		return false
	}
	g.Version, g.Proc, g.Seq, g.Service = binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])
	n := binary.BigEndian.Uint32(b[16:])
	if uint64(n) > uint64(len(b)-20) {
		return false
	}
	g.Handle = b[20 : 20+n]
	return true
}

// AuthSysParms is the decoded body of an AUTH_SYS credential (RFC 5531 §A.2).
type AuthSysParms struct {
	Stamp       uint32
	MachineName []byte
	UID, GID    uint32
	GIDs        [16]uint32
	NGIDs       int
}

// RPC is an ONC RPC message header (RFC 5531): a call up to its verifier,
// or a reply up to its status. Payload holds the procedure's arguments or
// results.
type RPC struct {
	layers.BaseLayer

	XID     uint32
	MsgType uint32 // MsgCall or MsgReply

	// Call: rpcvers, prog, vers, proc. Replies carry them only when the
	// caller matched the call (SetCall); CallKnown says so.
	RPCVersion  uint32
	Program     uint32
	ProgVersion uint32
	Procedure   uint32
	CallKnown   bool
	// Call is the matched call of a reply (its frame and time) when the
	// matcher knows them (SetCallRef); for a call sent again with the xid
	// of one still outstanding, that first call. Call.Frame 0 otherwise.
	Call CallRef

	Cred    Auth         // call credential
	AuthSys AuthSysParms // Cred decoded when Cred.Flavor is AUTH_SYS and it parsed
	HasSys  bool
	Verf    Auth // call or accepted-reply verifier

	// GSS is the RPCSEC_GSS credential (RFC 2203 §5) when Cred.Flavor
	// is RPCSEC_GSS and it parsed; for a reply, the call's GSS procedure
	// and service as recorded by SetCallGSS.
	GSS    GSSCred
	HasGSS bool

	ReplyStat  uint32 // ReplyAccepted / ReplyDenied
	AcceptStat uint32
	RejectStat uint32
	AuthStat   uint32
	// Low and High are the version range of PROG_MISMATCH or RPC_MISMATCH.
	Low, High uint32

	notes notes
}

// LayerType is LayerTypeRPC.
func (r *RPC) LayerType() gopacket.LayerType { return LayerTypeRPC }

// CanDecode is LayerTypeRPC.
func (r *RPC) CanDecode() gopacket.LayerClass { return LayerTypeRPC }

// NextLayerType is LayerTypeNFS for calls (and matched successful replies)
// of NFS, MOUNT, NLM and NFS_ACL.
func (r *RPC) NextLayerType() gopacket.LayerType {
	if r.HasBody() && hasNFSLayer(r.Program, r.ProgVersion) {
		return LayerTypeNFS
	}
	return gopacket.LayerTypePayload
}

// HasBody reports whether Payload holds procedure arguments (a call) or
// results (an accepted, successful reply whose call is known).
//
// Under RPCSEC_GSS only RPCSEC_GSS_DATA messages carry the procedure's
// body, and not readably with the privacy service.
func (r *RPC) HasBody() bool {
	if r.HasGSS && (r.GSS.Proc != GSSProcData || r.GSS.Service == GSSServicePriv) {
		return false
	}
	if r.MsgType == MsgCall {
		return true
	}
	return r.MsgType == MsgReply && r.CallKnown && r.ReplyStat == ReplyAccepted && r.AcceptStat == AcceptSuccess
}

// Body returns the procedure's arguments or results: Payload, without
// the rpc_gss_integ_data wrapper (length, sequence number) under the
// RPCSEC_GSS integrity service.
func (r *RPC) Body() []byte {
	b := r.Payload
	if r.HasGSS && r.GSS.Service == GSSServiceInteg {
		if len(b) < 8 {
			return nil
		}
		n := binary.BigEndian.Uint32(b)
		b = b[8:]
		if n >= 4 && uint64(n-4) < uint64(len(b)) {
			b = b[:n-4]
		}
	}
	return b
}

// SetCallGSS records the RPCSEC_GSS procedure and service of this reply's
// call, so that Body and HasBody treat the reply like the call.
func (r *RPC) SetCallGSS(proc, service uint32) {
	r.GSS.Proc, r.GSS.Service, r.HasGSS = proc, service, true
}

// SetCall records what the call of this reply asked for (matched by xid by
// the caller), so the reply's body can be decoded.
func (r *RPC) SetCall(program, version, procedure uint32) {
	r.Program, r.ProgVersion, r.Procedure, r.CallKnown = program, version, procedure, true
}

// CallRef is what a call matcher knew of the call a message answers:
// where it was captured (Frame, 1-based; 0 when unknown) and when (Time,
// Unix nanoseconds), and what it asked for.
type CallRef struct {
	Frame                       int
	Time                        int64
	Program, Version, Procedure uint32
}

// SetCallRef records the frame and time of this reply's call (and what it
// asked for, as SetCall), shown as rpc.reqframe.
func (r *RPC) SetCallRef(c CallRef) {
	r.Call = c
	r.SetCall(c.Program, c.Version, c.Procedure)
}

func rerr(code, what string, off int, format string, args ...any) *DecodeError {
	return &DecodeError{Code: code, Layer: "rpc", Field: what, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// need checks that n octets are left at off (small enough to be inlined:
// the error is built out of line).
func need(data []byte, off, n int, what string, df gopacket.DecodeFeedback) error {
	if len(data)-off >= n {
		return nil
	}
	return truncated(data, off, n, what, df)
}

// word reads the 4-octet field what at *off and moves *off past it.
func word(data []byte, off *int, what string, df gopacket.DecodeFeedback) (uint32, error) {
	if err := need(data, *off, 4, what, df); err != nil {
		return 0, err
	}
	*off += 4
	return binary.BigEndian.Uint32(data[*off-4:]), nil
}

// mismatchInfo reads the lowest and highest versions of a mismatch_info at
// *off and moves *off past them.
func mismatchInfo(data []byte, off *int, df gopacket.DecodeFeedback) (low, high uint32, err error) {
	if err := need(data, *off, 8, "mismatch_info", df); err != nil {
		return 0, 0, err
	}
	*off += 8
	return binary.BigEndian.Uint32(data[*off-8:]), binary.BigEndian.Uint32(data[*off-4:]), nil
}

func truncated(data []byte, off, n int, what string, df gopacket.DecodeFeedback) error {
	df.SetTruncated()
	return short(CodeRPCTruncated, "rpc", what, off, n, len(data)-off)
}

// authFields names the parts of an opaque_auth in errors, without
// building strings on the success path.
type authFields struct{ head, length, body string }

var (
	credFields = authFields{"credential flavor/length", "credential length", "credential body"}
	verfFields = authFields{"verifier flavor/length", "verifier length", "verifier body"}
)

func readAuth(data []byte, off int, what *authFields, a *Auth, df gopacket.DecodeFeedback) (int, error) {
	if err := need(data, off, 8, what.head, df); err != nil {
		return off, err
	}
	a.Flavor = binary.BigEndian.Uint32(data[off:])
	n := binary.BigEndian.Uint32(data[off+4:])
	off += 8
	if n > 400 {
		return off - 4, authTooLong(what, off-4, n)
	}
	if err := need(data, off, pad4(int(n)), what.body, df); err != nil {
		return off, err
	}
	a.Body = data[off : off+int(n)]
	return off + pad4(int(n)), nil
}

// authTooLong is the error of an opaque_auth at off whose length n
// exceeds what RFC 5531 allows.
func authTooLong(what *authFields, off int, n uint32) error {
	return rerr(CodeRPCTruncated, what.length, off, "%d exceeds the 400 octets RFC 5531 allows", n)
}

// reset zeroes r for the next decode, field by field (see Header.reset).
func (r *RPC) reset() {
	r.Contents, r.Payload = nil, nil
	r.XID, r.MsgType = 0, 0
	r.RPCVersion, r.Program, r.ProgVersion, r.Procedure, r.CallKnown = 0, 0, 0, 0, false
	r.Call = CallRef{}
	r.Cred, r.Verf = Auth{}, Auth{}
	r.AuthSys, r.HasSys = AuthSysParms{}, false
	r.GSS, r.HasGSS = GSSCred{}, false
	r.ReplyStat, r.AcceptStat, r.RejectStat, r.AuthStat, r.Low, r.High = 0, 0, 0, 0, 0, 0
	r.notes.reset()
}

// DecodeFromBytes decodes an RPC call or reply header. A call and a reply
// are decoded by functions of their own, and the errors made out of line:
// the code a message runs stays short.
func (r *RPC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	r.reset()
	if err := need(data, 0, 8, "xid/msg_type", df); err != nil {
		return err
	}
	r.XID, r.MsgType = binary.BigEndian.Uint32(data), binary.BigEndian.Uint32(data[4:])
	var off int
	var err error
	switch r.MsgType {
	case MsgCall:
		off, err = r.decodeCall(data, df)
	case MsgReply:
		off, err = r.decodeReply(data, df)
	default:
		off, err = 8, badValue("msg_type", 4, "%d is not CALL (0) or REPLY (1)", r.MsgType)
	}
	if off > len(data) {
		off = len(data)
	}
	r.Contents, r.Payload = data[:off], data[off:]
	if err != nil {
		r.Payload = nil
	}
	return err
}

// decodeCall decodes a call's header after the xid and msg_type: the
// offset where it ends (or the error is) and the error.
func (r *RPC) decodeCall(data []byte, df gopacket.DecodeFeedback) (int, error) {
	off := 8
	if err := need(data, off, 16, "rpcvers/prog/vers/proc", df); err != nil {
		return off, err
	}
	r.RPCVersion, r.Program, r.ProgVersion, r.Procedure = binary.BigEndian.Uint32(data[8:]), binary.BigEndian.Uint32(data[12:]), binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:])
	r.CallKnown = true
	if r.RPCVersion != 2 {
		r.notes.add(CodeRPCBadVersion, finding.SeverityError, 8, r.RPCVersion, 0)
	}
	off, err := readAuth(data, 24, &credFields, &r.Cred, df)
	if err != nil {
		return off, err
	}
	switch r.Cred.Flavor {
	case AuthSys:
		r.HasSys = parseAuthSys(r.Cred.Body, &r.AuthSys)
	case RPCSecGSS:
		r.HasGSS = parseGSS(r.Cred.Body, &r.GSS)
	}
	return readAuth(data, off, &verfFields, &r.Verf, df)
}

// decodeReply decodes a reply's header after the xid and msg_type: the
// offset where it ends (or the error is) and the error.
func (r *RPC) decodeReply(data []byte, df gopacket.DecodeFeedback) (int, error) {
	if len(data) >= 24 && binary.BigEndian.Uint32(data[8:]) == ReplyAccepted && binary.BigEndian.Uint32(data[16:]) == 0 {
		// Accepted, with an empty verifier (AUTH_NONE, AUTH_SYS), as
		// nearly every reply: its accept_stat at a fixed place.
		r.Verf = Auth{Flavor: binary.BigEndian.Uint32(data[12:]), Body: data[20:20]}
		if r.AcceptStat = binary.BigEndian.Uint32(data[20:]); r.AcceptStat != AcceptProgMismatch {
			return 24, nil
		}
	}
	off := 8
	var err error
	if r.ReplyStat, err = word(data, &off, "reply_stat", df); err != nil {
		return off, err
	}
	switch r.ReplyStat {
	case ReplyAccepted:
		if off, err = readAuth(data, off, &verfFields, &r.Verf, df); err != nil {
			return off, err
		}
		if r.AcceptStat, err = word(data, &off, "accept_stat", df); err == nil && r.AcceptStat == AcceptProgMismatch {
			r.Low, r.High, err = mismatchInfo(data, &off, df)
		}
		return off, err
	case ReplyDenied:
		return r.decodeDenied(data, off, df)
	}
	return off, badValue("reply_stat", off-4, "%d is not MSG_ACCEPTED or MSG_DENIED", r.ReplyStat)
}

// decodeDenied decodes a denied reply's reject_stat and what follows it,
// at off.
func (r *RPC) decodeDenied(data []byte, off int, df gopacket.DecodeFeedback) (int, error) {
	var err error
	if r.RejectStat, err = word(data, &off, "reject_stat", df); err != nil {
		return off, err
	}
	switch r.RejectStat {
	case RejectRPCMismatch:
		r.Low, r.High, err = mismatchInfo(data, &off, df)
	case RejectAuthError:
		r.AuthStat, err = word(data, &off, "auth_stat", df)
	default:
		err = badValue("reject_stat", off-4, "%d is not RPC_MISMATCH or AUTH_ERROR", r.RejectStat)
	}
	return off, err
}

// badValue is the error of a field what at off whose value v is none the
// RPC protocol defines (format says so, with v).
func badValue(what string, off int, format string, v uint32) error {
	return rerr(CodeRPCBadMsgType, what, off, format, v)
}

// parseAuthSys decodes b into *p, zero (RPC.reset cleared it): fields it
// reached stay set when it fails.
func parseAuthSys(b []byte, p *AuthSysParms) bool {
	if len(b) < 8 {
		return false
	}
	p.Stamp = binary.BigEndian.Uint32(b)
	n := binary.BigEndian.Uint32(b[4:])
	if n > 255 || uint64(len(b)-8) < uint64(pad4(int(n))) {
		return false
	}
	p.MachineName = b[8 : 8+n]
	off := 8 + pad4(int(n))
	if len(b)-off < 12 {
		return false
	}
	p.UID, p.GID = binary.BigEndian.Uint32(b[off:]), binary.BigEndian.Uint32(b[off+4:])
	ng := binary.BigEndian.Uint32(b[off+8:])
	off += 12
	if ng > 16 || uint64(len(b)-off) < uint64(ng)*4 {
		return false
	}
	for i := 0; i < int(ng); i++ {
		p.GIDs[i] = binary.BigEndian.Uint32(b[off+4*i:])
	}
	p.NGIDs = int(ng)
	return true
}

// SerializeTo writes the call or reply header in front of b's contents
// (the procedure's arguments or results).
func (r *RPC) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	n := 8
	switch r.MsgType {
	case MsgCall:
		n += 16 + 8 + pad4(len(r.Cred.Body)) + 8 + pad4(len(r.Verf.Body))
	case MsgReply:
		n += 4
		if r.ReplyStat == ReplyAccepted {
			n += 8 + pad4(len(r.Verf.Body)) + 4
			if r.AcceptStat == AcceptProgMismatch {
				n += 8
			}
		} else {
			n += 4
			if r.RejectStat == RejectRPCMismatch {
				n += 8
			} else {
				n += 4
			}
		}
	}
	w, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	clear(w)
	binary.BigEndian.PutUint32(w, r.XID)
	binary.BigEndian.PutUint32(w[4:], r.MsgType)
	w = w[8:]
	putAuth := func(a Auth) {
		binary.BigEndian.PutUint32(w, a.Flavor)
		binary.BigEndian.PutUint32(w[4:], uint32(len(a.Body)))
		copy(w[8:], a.Body)
		w = w[8+pad4(len(a.Body)):]
	}
	switch r.MsgType {
	case MsgCall:
		binary.BigEndian.PutUint32(w, r.RPCVersion)
		binary.BigEndian.PutUint32(w[4:], r.Program)
		binary.BigEndian.PutUint32(w[8:], r.ProgVersion)
		binary.BigEndian.PutUint32(w[12:], r.Procedure)
		w = w[16:]
		putAuth(r.Cred)
		putAuth(r.Verf)
	case MsgReply:
		binary.BigEndian.PutUint32(w, r.ReplyStat)
		w = w[4:]
		if r.ReplyStat == ReplyAccepted {
			putAuth(r.Verf)
			binary.BigEndian.PutUint32(w, r.AcceptStat)
			if r.AcceptStat == AcceptProgMismatch {
				binary.BigEndian.PutUint32(w[4:], r.Low)
				binary.BigEndian.PutUint32(w[8:], r.High)
			}
		} else {
			binary.BigEndian.PutUint32(w, r.RejectStat)
			if r.RejectStat == RejectRPCMismatch {
				binary.BigEndian.PutUint32(w[4:], r.Low)
				binary.BigEndian.PutUint32(w[8:], r.High)
			} else {
				binary.BigEndian.PutUint32(w[4:], r.AuthStat)
			}
		}
	}
	return nil
}

// Field declarations (tshark's rpc.* names).
var (
	ProtoRPC = field.NewProto("rpc", "ONC Remote Procedure Call")

	fRPCXID       = ProtoRPC.Hex("rpc.xid", 32, "XID").WithRef("RFC 5531 §9")
	fRPCMsgType   = ProtoRPC.Uint("rpc.msgtyp", 32, "Message Type").WithNames(msgTypeNames)
	fRPCVersion   = ProtoRPC.Uint("rpc.version", 32, "RPC Version")
	fRPCProgram   = ProtoRPC.Uint("rpc.program", 32, "Program").WithNames(programNames)
	fRPCProgVers  = ProtoRPC.Uint("rpc.programversion", 32, "Program Version")
	fRPCProcedure = ProtoRPC.Uint("rpc.procedure", 32, "Procedure")
	gRPCCred      = ProtoRPC.Group("rpc.cred", "Credentials")
	gRPCVerf      = ProtoRPC.Group("rpc.verf", "Verifier")
	fAuthFlavor   = ProtoRPC.Uint("rpc.auth.flavor", 32, "Flavor").WithNames(flavorNames)
	fAuthLength   = ProtoRPC.Uint("rpc.auth.length", 32, "Length").WithUnit("bytes")
	fAuthStamp    = ProtoRPC.Hex("rpc.auth.stamp", 32, "Stamp")
	fAuthMachine  = ProtoRPC.String("rpc.auth.machinename", "Machine Name")
	fAuthUID      = ProtoRPC.Uint("rpc.auth.uid", 32, "UID")
	fAuthGID      = ProtoRPC.Uint("rpc.auth.gid", 32, "GID")
	fAuthGIDs     = ProtoRPC.Uint("rpc.auth.gids", 32, "Auxiliary GID")
	fAuthBody     = ProtoRPC.Bytes("rpc.auth.body", "Authenticator body")
	fGSSVersion   = ProtoRPC.Uint("rpc.authgss.version", 32, "GSS Version")
	fGSSProc      = ProtoRPC.Uint("rpc.authgss.procedure", 32, "GSS Procedure").WithNames(gssProcNames)
	fGSSSeq       = ProtoRPC.Uint("rpc.authgss.seqnum", 32, "GSS Sequence Number")
	fGSSService   = ProtoRPC.Uint("rpc.authgss.service", 32, "GSS Service").WithNames(gssServiceNames)
	fGSSContext   = ProtoRPC.Bytes("rpc.authgss.context", "GSS Context")
	fReplyStat    = ProtoRPC.Uint("rpc.replystat", 32, "Reply State").WithNames(replyStatNames)
	fAcceptStat   = ProtoRPC.Uint("rpc.state_accept", 32, "Accept State").WithNames(acceptNames)
	fRejectStat   = ProtoRPC.Uint("rpc.state_reject", 32, "Reject State").WithNames(rejectNames)
	fAuthStat     = ProtoRPC.Uint("rpc.state_auth", 32, "Auth State").WithNames(authStatNames)
	fProgMin      = ProtoRPC.Uint("rpc.programversion.min", 32, "Program Version (Minimum)")
	fProgMax      = ProtoRPC.Uint("rpc.programversion.max", 32, "Program Version (Maximum)")
	fVersMin      = ProtoRPC.Uint("rpc.version.min", 32, "RPC Version (Minimum)")
	fVersMax      = ProtoRPC.Uint("rpc.version.max", 32, "RPC Version (Maximum)")
	fRPCReqFrame  = ProtoRPC.Uint("rpc.reqframe", 32, "Request Frame")
	fBodyLen      = ProtoRPC.Uint("rpc.body_length", 32, "Procedure arguments or results").WithUnit("bytes")
)

// Proto is ProtoRPC ("rpc").
func (r *RPC) Proto() *field.Proto { return ProtoRPC }

func visitAuth(v field.Visitor, g *field.Field, a Auth, sys *AuthSysParms, hasSys bool, gss *GSSCred) {
	v.Begin(g)
	v.Uint(fAuthFlavor, uint64(a.Flavor))
	v.Uint(fAuthLength, uint64(len(a.Body)))
	switch {
	case gss != nil:
		v.Uint(fGSSVersion, uint64(gss.Version))
		v.Uint(fGSSProc, uint64(gss.Proc))
		v.Uint(fGSSSeq, uint64(gss.Seq))
		v.Uint(fGSSService, uint64(gss.Service))
		v.Bytes(fGSSContext, gss.Handle)
	case hasSys:
		v.Uint(fAuthStamp, uint64(sys.Stamp))
		v.String(fAuthMachine, string(sys.MachineName))
		v.Uint(fAuthUID, uint64(sys.UID))
		v.Uint(fAuthGID, uint64(sys.GID))
		for _, g := range sys.GIDs[:sys.NGIDs] {
			v.Uint(fAuthGIDs, uint64(g))
		}
	case len(a.Body) > 0:
		v.Bytes(fAuthBody, a.Body)
	}
	v.End()
}

// GetUint implements field.UintGetter for the XID, message type, program,
// version and procedure.
func (r *RPC) GetUint(f *field.Field) (v uint64, has, known bool) {
	switch f {
	case fRPCXID:
		return uint64(r.XID), true, true
	case fRPCMsgType:
		return uint64(r.MsgType), true, true
	case fRPCProgram, fRPCProgVers, fRPCProcedure:
		// As visitHeader: a call's own, once its header is there; a
		// reply's from its matched call.
		if !(r.MsgType == MsgCall && len(r.Contents) >= 24 || r.MsgType == MsgReply && r.CallKnown) {
			return 0, false, true
		}
		switch f {
		case fRPCProgram:
			return uint64(r.Program), true, true
		case fRPCProgVers:
			return uint64(r.ProgVersion), true, true
		}
		return uint64(r.Procedure), true, true
	}
	return 0, false, false
}

// VisitFields reports the message header's fields in wire order, then
// the length of the procedure's arguments or results that follow.
func (r *RPC) VisitFields(v field.Visitor) {
	r.visitHeader(v)
	if len(r.Payload) > 0 {
		v.Uint(fBodyLen, uint64(len(r.Payload)))
	}
}

func (r *RPC) visitHeader(v field.Visitor) {
	v.Uint(fRPCXID, uint64(r.XID))
	v.Uint(fRPCMsgType, uint64(r.MsgType))
	n := len(r.Contents)
	switch r.MsgType {
	case MsgCall:
		if n < 24 {
			return
		}
		v.Uint(fRPCVersion, uint64(r.RPCVersion))
		v.Uint(fRPCProgram, uint64(r.Program))
		v.Uint(fRPCProgVers, uint64(r.ProgVersion))
		v.Uint(fRPCProcedure, uint64(r.Procedure))
		if n >= 32+len(r.Cred.Body) {
			var gss *GSSCred
			if r.HasGSS {
				gss = &r.GSS
			}
			visitAuth(v, gRPCCred, r.Cred, &r.AuthSys, r.HasSys, gss)
		}
		if n >= 40+pad4(len(r.Cred.Body))+len(r.Verf.Body) {
			visitAuth(v, gRPCVerf, r.Verf, nil, false, nil)
		}
	case MsgReply:
		if r.Call.Frame > 0 {
			v.Uint(fRPCReqFrame, uint64(r.Call.Frame))
		}
		if r.CallKnown {
			v.Uint(fRPCProgram, uint64(r.Program))
			v.Uint(fRPCProgVers, uint64(r.ProgVersion))
			v.Uint(fRPCProcedure, uint64(r.Procedure))
		}
		if n < 12 {
			return
		}
		v.Uint(fReplyStat, uint64(r.ReplyStat))
		if r.ReplyStat == ReplyAccepted {
			if n < 20+len(r.Verf.Body) {
				return
			}
			visitAuth(v, gRPCVerf, r.Verf, nil, false, nil)
			if n < 24+pad4(len(r.Verf.Body)) {
				return
			}
			v.Uint(fAcceptStat, uint64(r.AcceptStat))
			if r.AcceptStat == AcceptProgMismatch {
				v.Uint(fProgMin, uint64(r.Low))
				v.Uint(fProgMax, uint64(r.High))
			}
		} else if n >= 16 {
			v.Uint(fRejectStat, uint64(r.RejectStat))
			switch r.RejectStat {
			case RejectRPCMismatch:
				if n >= 24 {
					v.Uint(fVersMin, uint64(r.Low))
					v.Uint(fVersMax, uint64(r.High))
				}
			case RejectAuthError:
				if n >= 20 {
					v.Uint(fAuthStat, uint64(r.AuthStat))
				}
			}
		}
	}
}

// AppendSummary appends "RPC Call xid=0x…", with the program, version and
// procedure when no nfs layer follows to name them, and a reply's status.
func (r *RPC) AppendSummary(b []byte) []byte {
	switch r.MsgType {
	case MsgCall:
		b = append(b, "RPC Call xid=0x"...)
	case MsgReply:
		b = append(b, "RPC Reply xid=0x"...)
	default:
		return r.appendOddSummary(b)
	}
	b = appendHex32(b, r.XID)
	// The nfs layer names NFS-family procedures itself.
	if r.CallKnown && !(r.HasBody() && hasNFSLayer(r.Program, r.ProgVersion)) {
		b = r.appendProgram(b)
	}
	if r.MsgType == MsgReply {
		if r.ReplyStat == ReplyAccepted {
			b = append(b, ' ')
			b = acceptNameTable.appendName(b, r.AcceptStat)
		} else {
			b = r.appendDenied(b)
		}
	}
	return b
}

// The rare parts of the summary are out of line, so that the common
// one's code stays dense (it runs for every RPC packet of the default
// view).

// appendOddSummary is the summary of a message neither call nor reply.
//
//go:noinline
func (r *RPC) appendOddSummary(b []byte) []byte {
	b = append(b, "RPC msg_type="...)
	return strconv.AppendUint(b, uint64(r.MsgType), 10)
}

// appendProgram names the program, version and procedure of a call no
// nfs layer names.
//
//go:noinline
func (r *RPC) appendProgram(b []byte) []byte {
	b = append(b, ' ')
	if s := ProgramName(r.Program); s != "" {
		b = append(b, s...)
	} else {
		b = append(b, "prog="...)
		b = strconv.AppendUint(b, uint64(r.Program), 10)
	}
	b = append(b, " v"...)
	b = strconv.AppendUint(b, uint64(r.ProgVersion), 10)
	b = append(b, " proc="...)
	return strconv.AppendUint(b, uint64(r.Procedure), 10)
}

// appendDenied appends a denied reply's reject status.
//
//go:noinline
func (r *RPC) appendDenied(b []byte) []byte {
	b = append(b, " denied "...)
	return appendName(b, rejectNames, r.RejectStat)
}

func appendName(b []byte, names map[uint64]string, v uint32) []byte {
	if s, ok := names[uint64(v)]; ok {
		return append(b, s...)
	}
	return strconv.AppendUint(b, uint64(v), 10)
}

// nameTable is a map of value names with the values below 128 also in
// an array, so that the summary lines name the common values (accept
// states, NFSv4 operations, status 0) without a map lookup.
type nameTable struct {
	low   [128]string
	known [128]bool
	m     map[uint64]string
}

func newNameTable(m map[uint64]string) *nameTable {
	t := &nameTable{m: m}
	for v, s := range m {
		if v < uint64(len(t.low)) {
			t.low[v], t.known[v] = s, true
		}
	}
	return t
}

// appendName is appendName(b, m, v) for the table's map m.
func (t *nameTable) appendName(b []byte, v uint32) []byte {
	if v < uint32(len(t.low)) {
		if t.known[v] {
			return append(b, t.low[v]...)
		}
		return strconv.AppendUint(b, uint64(v), 10)
	}
	return appendName(b, t.m, v)
}

// Name tables of the summary lines.
var (
	acceptNameTable = newNameTable(acceptNames)
	procNameTable   = newNameTable(procNames)
	nfsV4OpTable    = newNameTable(nfsV4Ops)
	nfsV4CBOpTable  = newNameTable(nfsV4CBOps)
	nfsStat3Table   = newNameTable(nfsStat3)
	nfsStat4Table   = newNameTable(nfsStat4)
)

// AppendFindings appends the non-fatal conditions noticed while decoding.
func (r *RPC) AppendFindings(dst []finding.Finding) []finding.Finding {
	return r.notes.appendTo(dst, "rpc", func(n note, f *finding.Finding) {
		if n.code == CodeRPCBadVersion {
			f.Message = fmt.Sprintf("RPC call with rpcvers %d; RFC 5531 §9 requires 2", n.a)
		}
	})
}
