package ibcm

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// ariKind says what a REJ reason puts in the Additional Rejection
// Information (IBTA vol. 1 §12.6.7.2 table 109).
type ariKind uint8

const (
	ariNone ariKind = iota
	ariGID
	ariLID
	ariSL           // bits 7:4 of octet 0
	ariTrafficClass // octet 0
	ariHopLimit     // octet 0
	ariPacketRate   // bits 7:2 of octet 0
	ariClassPortInfo
	ariMTU           // bits 7:4 of octet 0
	ariRespResources // octet 0
	ariRNRRetry      // bits 7:5 of octet 0
	ariClassVersion  // octet 0
	ariFlowLabel     // bits 23:4 of octets 0–2
	ariCAGUID        // octets 0–7
	ariConsumer      // consumer-defined octets
)

type rejReason struct {
	name string
	ari  ariKind
}

// rejReasons are the IBTA REJ reasons (Linux include/rdma/ib_cm.h enum
// ib_cm_rej_reason; reason 34 is unassigned).
var rejReasons = map[uint16]rejReason{
	1:  {"No QP available", ariNone},
	2:  {"No EEC available", ariNone},
	3:  {"No resources available", ariNone},
	4:  {"Timeout", ariCAGUID},
	5:  {"Unsupported request", ariNone},
	6:  {"Invalid Communication ID", ariNone},
	7:  {"Invalid Communication Instance", ariNone},
	8:  {"Invalid Service ID", ariNone},
	9:  {"Invalid Transport Service Type", ariNone},
	10: {"Stale connection", ariNone},
	11: {"RDC does not exist", ariNone},
	12: {"Primary Remote Port GID rejected", ariGID},
	13: {"Primary Remote Port LID rejected", ariLID},
	14: {"Invalid Primary SL", ariSL},
	15: {"Invalid Primary Traffic Class", ariTrafficClass},
	16: {"Invalid Primary Hop Limit", ariHopLimit},
	17: {"Invalid Primary Packet Rate", ariPacketRate},
	18: {"Alternate Remote Port GID rejected", ariGID},
	19: {"Alternate Remote Port LID rejected", ariLID},
	20: {"Invalid Alternate SL", ariSL},
	21: {"Invalid Alternate Traffic Class", ariTrafficClass},
	22: {"Invalid Alternate Hop Limit", ariHopLimit},
	23: {"Invalid Alternate Packet Rate", ariPacketRate},
	24: {"Port and CM Redirection", ariClassPortInfo},
	25: {"Port Redirection", ariClassPortInfo},
	26: {"Invalid Path MTU", ariMTU},
	27: {"Insufficient Responder Resources", ariRespResources},
	28: {"Consumer Reject", ariConsumer},
	29: {"RNR Retry Count Reject", ariRNRRetry},
	30: {"Duplicate Local Comm ID", ariNone},
	31: {"Unsupported class version", ariClassVersion},
	32: {"Invalid Primary Flow Label", ariFlowLabel},
	33: {"Invalid Alternate Flow Label", ariFlowLabel},
	35: {"Vendor option not supported", ariNone},
}

var rejReasonNames = func() map[uint64]string {
	m := map[uint64]string{}
	for k, r := range rejReasons {
		m[uint64(k)] = r.name
	}
	return m
}()

// RejectReasonName names a REJ reason ("Consumer Reject"), or "reason N".
func RejectReasonName(r uint16) string {
	if x, ok := rejReasons[r]; ok {
		return x.name
	}
	return fmt.Sprintf("reason %d", r)
}

var msgRejNames = map[uint64]string{0: "REQ", 1: "REP", 2: "No message", 3: "Reserved"}

// REJ is the Reject message (table 108); private data (148 octets) in
// CM.PrivateData.
type REJ struct {
	commIDs
	MessageRejected uint8 // 0 REQ, 1 REP, 2 other
	RejInfoLen      uint8 // octets of ARI that are meaningful
	Reason          uint16
	// ARI is the 72-octet Additional Rejection Information field (aliases
	// the packet); ARIInfo returns its meaningful part.
	ARI []byte
}

// ARIInfo returns the first RejInfoLen octets of the ARI (at most 72).
func (r *REJ) ARIInfo() []byte { return r.ARI[:min(int(r.RejInfoLen), len(r.ARI))] }

var (
	rejLayout = newLayout(AttrREJ, func(c *CM) *REJ { return &c.REJ },
		ids[REJ]("cm.rej"),
		num(ProtoCM.Uint("cm.rej.msgrej", 2, "Message REJected").WithNames(msgRejNames), func(r *REJ) *uint8 { return &r.MessageRejected }, at(8, 0)),
		num(ProtoCM.Uint("cm.rej.rejinfolen", 7, "Reject Info Length").WithUnit("octets"), func(r *REJ) *uint8 { return &r.RejInfoLen }, at(9, 0)),
		num(ProtoCM.Uint("cm.rej.reason", 16, "Reason").WithNames(rejReasonNames), func(r *REJ) *uint16 { return &r.Reason }, at(10, 0)),
		octets(ProtoCM.Bytes("cm.rej.ari", "Additional Rejection Information"), func(r *REJ) *[]byte { return &r.ARI }, 12, 72),
	)
	fARIGroup       = ProtoCM.Group("cm.rej.ari.decoded", "Additional Rejection Information, decoded")
	fARIGID         = ProtoCM.Addr("cm.rej.ari.gid", "Acceptable GID")
	fARILID         = ProtoCM.Uint("cm.rej.ari.lid", 16, "Acceptable LID")
	fARISL          = ProtoCM.Uint("cm.rej.ari.sl", 4, "Acceptable SL")
	fARITClass      = ProtoCM.Hex("cm.rej.ari.tclass", 8, "Acceptable Traffic Class")
	fARIHopLimit    = ProtoCM.Uint("cm.rej.ari.hoplimit", 8, "Acceptable Hop Limit")
	fARIRate        = ProtoCM.Uint("cm.rej.ari.pktrate", 6, "Acceptable Packet Rate").WithNames(rateNames)
	fARIMTU         = ProtoCM.Uint("cm.rej.ari.mtu", 4, "Acceptable Path MTU").WithNames(mtuNames)
	fARIRespRes     = ProtoCM.Uint("cm.rej.ari.respres", 8, "Maximum Responder Resources")
	fARIRNR         = ProtoCM.Uint("cm.rej.ari.rnrretry", 3, "Acceptable RNR Retry Count")
	fARIClassVer    = ProtoCM.Uint("cm.rej.ari.classversion", 8, "Highest Class Version supported")
	fARIFlowLabel   = ProtoCM.Hex("cm.rej.ari.flowlabel", 20, "Acceptable Flow Label")
	fARICAGUID      = ProtoCM.EUI64("cm.rej.ari.caguid", "CA GUID of the node that timed out")
	fARIConsumer    = ProtoCM.Bytes("cm.rej.ari.consumer", "Consumer-defined rejection information")
	fARIRedirectCPI = newClassPortInfoFields("cm.rej.ari.cpi")
)

// visitAfter reports the meaningful part of the ARI as the reason says.
func (r *REJ) visitAfter(v field.Visitor) {
	info := r.ARIInfo()
	kind := rejReasons[r.Reason].ari
	if kind == ariNone || len(info) == 0 {
		return
	}
	v.Begin(fARIGroup)
	switch kind {
	case ariGID:
		if len(info) >= 16 {
			v.Addr(fARIGID, netip.AddrFrom16([16]byte(info[:16])))
		}
	case ariLID:
		if len(info) >= 2 {
			v.Uint(fARILID, uint64(binary.BigEndian.Uint16(info)))
		}
	case ariSL:
		v.Uint(fARISL, uint64(info[0]>>4))
	case ariTrafficClass:
		v.Uint(fARITClass, uint64(info[0]))
	case ariHopLimit:
		v.Uint(fARIHopLimit, uint64(info[0]))
	case ariPacketRate:
		v.Uint(fARIRate, uint64(info[0]>>2))
	case ariMTU:
		v.Uint(fARIMTU, uint64(info[0]>>4))
	case ariRespResources:
		v.Uint(fARIRespRes, uint64(info[0]))
	case ariRNRRetry:
		v.Uint(fARIRNR, uint64(info[0]>>5))
	case ariClassVersion:
		v.Uint(fARIClassVer, uint64(info[0]))
	case ariFlowLabel:
		if len(info) >= 3 {
			v.Uint(fARIFlowLabel, uint64(uint32(info[0])<<12|uint32(info[1])<<4|uint32(info[2])>>4))
		}
	case ariCAGUID:
		if len(info) >= 8 {
			v.Uint(fARICAGUID, binary.BigEndian.Uint64(info))
		}
	case ariClassPortInfo:
		fARIRedirectCPI.visitIn(v, r.ARI)
	case ariConsumer:
		v.Bytes(fARIConsumer, info)
	}
	v.End()
}
