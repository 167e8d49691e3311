package ibcm

var failoverNames = map[uint64]string{0: "Failover accepted", 1: "Failover not supported", 2: "Alternate path rejected", 3: "Reserved"}

// REP is the Connection Reply (IBTA vol. 1 §12.6.8 table 110). Private
// data (196 octets) is in CM.PrivateData.
type REP struct {
	LocalCommID      uint32
	RemoteCommID     uint32
	LocalQKey        uint32
	LocalQPN         uint32
	LocalEECN        uint32
	StartingPSN      uint32
	VendorID         uint32 // 24 bits, in octets 15, 19 and 23 (IBA comment 9434)
	RespResources    uint8
	InitiatorDepth   uint8
	TargetAckDelay   uint8
	FailoverAccepted uint8
	E2EFlowControl   bool
	RNRRetryCount    uint8
	SRQ              bool
	Reserved         uint8 // octet 27 bits 3:0
	LocalCAGUID      uint64
}

var repLayout = newLayout(AttrREP, func(c *CM) *REP { return &c.REP },
	num(ProtoCM.Hex("cm.rep.localcommid", 32, "Local Communication ID"), func(r *REP) *uint32 { return &r.LocalCommID }, at(0, 0)),
	num(ProtoCM.Hex("cm.rep.remotecommid", 32, "Remote Communication ID"), func(r *REP) *uint32 { return &r.RemoteCommID }, at(4, 0)),
	num(ProtoCM.Hex("cm.rep.localqkey", 32, "Local Q_Key"), func(r *REP) *uint32 { return &r.LocalQKey }, at(8, 0)),
	num(ProtoCM.Hex("cm.rep.localqpn", 24, "Local QPN"), func(r *REP) *uint32 { return &r.LocalQPN }, at(12, 0)),
	num(ProtoCM.Hex("cm.rep.localeecn", 24, "Local EE Context Number"), func(r *REP) *uint32 { return &r.LocalEECN }, at(16, 0)),
	num(ProtoCM.Uint("cm.rep.startpsn", 24, "Starting PSN"), func(r *REP) *uint32 { return &r.StartingPSN }, at(20, 0)),
	num(ProtoCM.Hex("cm.rep.vendorid", 24, "Vendor ID"), func(r *REP) *uint32 { return &r.VendorID }, piece(15, 0, 8), piece(19, 0, 8), piece(23, 0, 8)),
	num(ProtoCM.Uint("cm.rep.respres", 8, "Responder Resources"), func(r *REP) *uint8 { return &r.RespResources }, at(24, 0)),
	num(ProtoCM.Uint("cm.rep.initdepth", 8, "Initiator Depth"), func(r *REP) *uint8 { return &r.InitiatorDepth }, at(25, 0)),
	num(ProtoCM.Uint("cm.rep.tgtackdelay", 5, "Target ACK Delay (4.096 µs · 2^n)"), func(r *REP) *uint8 { return &r.TargetAckDelay }, at(26, 0)),
	num(ProtoCM.Uint("cm.rep.failoveracc", 2, "Failover Accepted").WithNames(failoverNames), func(r *REP) *uint8 { return &r.FailoverAccepted }, at(26, 5)),
	flag(ProtoCM.Bool("cm.rep.e2eflowctrl", "End-to-End Flow Control"), func(r *REP) *bool { return &r.E2EFlowControl }, at(26, 7)),
	num(ProtoCM.Uint("cm.rep.rnrretrcount", 3, "RNR Retry Count"), func(r *REP) *uint8 { return &r.RNRRetryCount }, at(27, 0)),
	flag(ProtoCM.Bool("cm.rep.srq", "SRQ"), func(r *REP) *bool { return &r.SRQ }, at(27, 3)),
	reserved(num(ProtoCM.Hex("cm.rep.reserved", 4, "Reserved"), func(r *REP) *uint8 { return &r.Reserved }, at(27, 4))),
	num(ProtoCM.EUI64("cm.rep.localcaguid", "Local CA GUID"), func(r *REP) *uint64 { return &r.LocalCAGUID }, at(28, 0)),
)

// commIDs is the pair of communication IDs that opens RTU, DREQ, DREP, MRA,
// REJ, LAP and APR.
type commIDs struct {
	LocalCommID  uint32
	RemoteCommID uint32
}

func (c *commIDs) ids() *commIDs { return c }

// CommIDs returns the local and remote communication IDs of a REP, RTU,
// DREQ, DREP, MRA, REJ, LAP or APR, to read or set (nil for the other
// messages).
func (c *CM) CommIDs() (local, remote *uint32) {
	if c.AttributeID == AttrREP {
		return &c.REP.LocalCommID, &c.REP.RemoteCommID
	}
	if b := c.body(); b == nil {
		return nil, nil
	} else if m, ok := b.message(c).(interface{ ids() *commIDs }); ok {
		ids := m.ids()
		return &ids.LocalCommID, &ids.RemoteCommID
	}
	return nil, nil
}

// ids is the layout of the communication IDs at the start of M.
func ids[M any, PM interface {
	*M
	ids() *commIDs
}](prefix string) wire[M] {
	return part(nil, func(m *M) *commIDs { return PM(m).ids() }, 0, wires[commIDs]{
		num(ProtoCM.Hex(prefix+".localcommid", 32, "Local Communication ID"), func(c *commIDs) *uint32 { return &c.LocalCommID }, at(0, 0)),
		num(ProtoCM.Hex(prefix+".remotecommid", 32, "Remote Communication ID"), func(c *commIDs) *uint32 { return &c.RemoteCommID }, at(4, 0)),
	})
}

// RTU is Ready To Use (table 111); private data (224 octets) in
// CM.PrivateData.
type RTU struct{ commIDs }

var rtuLayout = newLayout(AttrRTU, func(c *CM) *RTU { return &c.RTU }, ids[RTU]("cm.rtu"))

// DREQ is the Disconnection Request (table 112); private data (220 octets)
// in CM.PrivateData.
type DREQ struct {
	commIDs
	RemoteQPN uint32 // QPN or EECN, 24 bits
}

// DREP is the Disconnection Reply (table 113); private data (224 octets)
// in CM.PrivateData.
type DREP struct{ commIDs }

var (
	dreqLayout = newLayout(AttrDREQ, func(c *CM) *DREQ { return &c.DREQ },
		ids[DREQ]("cm.dreq"),
		num(ProtoCM.Hex("cm.dreq.remoteqpneecn", 24, "Remote QPN/EECN"), func(r *DREQ) *uint32 { return &r.RemoteQPN }, at(8, 0)),
	)
	drepLayout = newLayout(AttrDREP, func(c *CM) *DREP { return &c.DREP }, ids[DREP]("cm.drep"))
)

var mraNames = map[uint64]string{0: "REQ", 1: "REP", 2: "LAP", 3: "Reserved"}

// MRA is Message Receipt Acknowledgement (table 107); private data (222
// octets) in CM.PrivateData.
type MRA struct {
	commIDs
	MessageMRAed   uint8 // 0 REQ, 1 REP, 2 LAP
	ServiceTimeout uint8 // 4.096 µs · 2^n
}

var mraLayout = newLayout(AttrMRA, func(c *CM) *MRA { return &c.MRA },
	ids[MRA]("cm.mra"),
	num(ProtoCM.Uint("cm.mra.msgmraed", 2, "Message MRAed").WithNames(mraNames), func(r *MRA) *uint8 { return &r.MessageMRAed }, at(8, 0)),
	num(ProtoCM.Uint("cm.mra.serviceto", 5, "Service Timeout (4.096 µs · 2^n)"), func(r *MRA) *uint8 { return &r.ServiceTimeout }, at(9, 0)),
)
