package ibcm

import (
	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// Path is a REQ primary or alternate path, or a LAP alternate path.
type Path struct {
	LocalLID, RemoteLID uint16
	LocalGID, RemoteGID [16]byte
	FlowLabel           uint32
	PacketRate          uint8
	TrafficClass        uint8
	HopLimit            uint8
	SL                  uint8
	SubnetLocal         bool
	LocalAckTimeout     uint8
}

// pathFields are one path's fields (tshark: infiniband.cm.req.prim_*).
type pathFields struct {
	group, localLID, remoteLID, localGID, remoteGID, flowLabel, rate, tclass, hopLimit, sl, subnetLocal, ackTimeout *field.Field
}

func newPathFields(prefix, desc string) pathFields {
	return pathFields{
		group:       ProtoCM.Group(prefix+"path", desc),
		localLID:    ProtoCM.Uint(prefix+"locallid", 16, "Local Port LID"),
		remoteLID:   ProtoCM.Uint(prefix+"remotelid", 16, "Remote Port LID"),
		localGID:    ProtoCM.Addr(prefix+"localgid", "Local Port GID"),
		remoteGID:   ProtoCM.Addr(prefix+"remotegid", "Remote Port GID"),
		flowLabel:   ProtoCM.Hex(prefix+"flowlabel", 20, "Flow Label"),
		rate:        ProtoCM.Uint(prefix+"pktrate", 6, "Packet Rate").WithNames(rateNames),
		tclass:      ProtoCM.Hex(prefix+"tfcclass", 8, "Traffic Class"),
		hopLimit:    ProtoCM.Uint(prefix+"hoplim", 8, "Hop Limit"),
		sl:          ProtoCM.Uint(prefix+"sl", 4, "Service Level"),
		subnetLocal: ProtoCM.Bool(prefix+"subnetlocal", "Subnet Local"),
		ackTimeout:  ProtoCM.Uint(prefix+"localacktout", 5, "Local ACK Timeout (4.096 µs · 2^n)"),
	}
}

// path is the layout of a path (44 octets at octet of the message): the
// REQ and the LAP differ only in where the packet rate, the traffic class
// and the hop limit are (octets 39–41), given by rateTCHop.
func path[M any](f pathFields, p func(*M) *Path, octet int, rateTCHop ...wire[Path]) wire[M] {
	return part(f.group, p, octet, append(wires[Path]{
		num(f.localLID, func(p *Path) *uint16 { return &p.LocalLID }, at(0, 0)),
		num(f.remoteLID, func(p *Path) *uint16 { return &p.RemoteLID }, at(2, 0)),
		gid(f.localGID, func(p *Path) *[16]byte { return &p.LocalGID }, 4),
		gid(f.remoteGID, func(p *Path) *[16]byte { return &p.RemoteGID }, 20),
		num(f.flowLabel, func(p *Path) *uint32 { return &p.FlowLabel }, at(36, 0)),
	}, append(rateTCHop,
		num(f.sl, func(p *Path) *uint8 { return &p.SL }, at(42, 0)),
		flag(f.subnetLocal, func(p *Path) *bool { return &p.SubnetLocal }, at(42, 4)),
		num(f.ackTimeout, func(p *Path) *uint8 { return &p.LocalAckTimeout }, at(43, 0)),
	)...))
}

// reqPath is a REQ path: rate, traffic class, hop limit.
func reqPath(prefix, desc string, p func(*REQ) *Path, octet int) wire[REQ] {
	f := newPathFields(prefix, desc)
	return path(f, p, octet,
		num(f.rate, func(p *Path) *uint8 { return &p.PacketRate }, at(39, 2)),
		num(f.tclass, func(p *Path) *uint8 { return &p.TrafficClass }, at(40, 0)),
		num(f.hopLimit, func(p *Path) *uint8 { return &p.HopLimit }, at(41, 0)))
}

// lapPath is a LAP path: traffic class, hop limit, rate.
func lapPath(prefix, desc string, p func(*LAP) *Path, octet int) wire[LAP] {
	f := newPathFields(prefix, desc)
	return path(f, p, octet,
		num(f.tclass, func(p *Path) *uint8 { return &p.TrafficClass }, at(39, 0)),
		num(f.hopLimit, func(p *Path) *uint8 { return &p.HopLimit }, at(40, 0)),
		num(f.rate, func(p *Path) *uint8 { return &p.PacketRate }, at(41, 2)))
}

// REQ is the Connection Request (IBTA vol. 1 §12.6.5 table 106). Private
// data (92 octets) is in CM.PrivateData.
type REQ struct {
	LocalCommID         uint32
	VendorID            uint32 // 24 bits
	ServiceID           ServiceID
	LocalCAGUID         uint64
	LocalQKey           uint32
	LocalQPN            uint32
	ResponderResources  uint8
	LocalEECN           uint32
	InitiatorDepth      uint8
	RemoteEECN          uint32
	RemoteCMRespTimeout uint8
	TransportService    uint8
	E2EFlowControl      bool
	StartingPSN         uint32
	LocalCMRespTimeout  uint8
	RetryCount          uint8
	PKey                uint16
	PathMTU             uint8
	RDCExists           bool
	RNRRetryCount       uint8
	MaxCMRetries        uint8
	SRQ                 bool
	ExtTransportType    uint8
	Primary             Path
	Alternate           Path
	SAPSupported        bool
}

var reqLayout = newLayout(AttrREQ, func(c *CM) *REQ { return &c.REQ },
	num(ProtoCM.Hex("cm.req.localcommid", 32, "Local Communication ID"), func(r *REQ) *uint32 { return &r.LocalCommID }, at(0, 0)),
	num(ProtoCM.Hex("cm.req.vendorid", 24, "Vendor ID"), func(r *REQ) *uint32 { return &r.VendorID }, at(5, 0)),
	serviceID(newServiceIDFields("cm.req"), func(r *REQ) *ServiceID { return &r.ServiceID }, 8),
	num(ProtoCM.EUI64("cm.req.localcaguid", "Local CA GUID"), func(r *REQ) *uint64 { return &r.LocalCAGUID }, at(16, 0)),
	num(ProtoCM.Hex("cm.req.localqkey", 32, "Local Q_Key"), func(r *REQ) *uint32 { return &r.LocalQKey }, at(28, 0)),
	num(ProtoCM.Hex("cm.req.localqpn", 24, "Local QPN"), func(r *REQ) *uint32 { return &r.LocalQPN }, at(32, 0)),
	num(ProtoCM.Uint("cm.req.responderres", 8, "Responder Resources"), func(r *REQ) *uint8 { return &r.ResponderResources }, at(35, 0)),
	num(ProtoCM.Hex("cm.req.localeecn", 24, "Local EECN"), func(r *REQ) *uint32 { return &r.LocalEECN }, at(36, 0)),
	num(ProtoCM.Uint("cm.req.initdepth", 8, "Initiator Depth"), func(r *REQ) *uint8 { return &r.InitiatorDepth }, at(39, 0)),
	num(ProtoCM.Hex("cm.req.remoteeecn", 24, "Remote EECN"), func(r *REQ) *uint32 { return &r.RemoteEECN }, at(40, 0)),
	num(ProtoCM.Uint("cm.req.remoteresptout", 5, "Remote CM Response Timeout (4.096 µs · 2^n)"), func(r *REQ) *uint8 { return &r.RemoteCMRespTimeout }, at(43, 0)),
	num(ProtoCM.Uint("cm.req.transpsvctype", 2, "Transport Service Type").WithNames(transportServiceNames), func(r *REQ) *uint8 { return &r.TransportService }, at(43, 5)),
	flag(ProtoCM.Bool("cm.req.e2eflowctrl", "End-to-End Flow Control"), func(r *REQ) *bool { return &r.E2EFlowControl }, at(43, 7)),
	num(ProtoCM.Uint("cm.req.startpsn", 24, "Starting PSN"), func(r *REQ) *uint32 { return &r.StartingPSN }, at(44, 0)),
	num(ProtoCM.Uint("cm.req.localresptout", 5, "Local CM Response Timeout (4.096 µs · 2^n)"), func(r *REQ) *uint8 { return &r.LocalCMRespTimeout }, at(47, 0)),
	num(ProtoCM.Uint("cm.req.retrcount", 3, "Retry Count"), func(r *REQ) *uint8 { return &r.RetryCount }, at(47, 5)),
	num(ProtoCM.Hex("cm.req.pkey", 16, "Partition Key"), func(r *REQ) *uint16 { return &r.PKey }, at(48, 0)),
	num(ProtoCM.Uint("cm.req.pppmtu", 4, "Path Packet Payload MTU").WithNames(mtuNames), func(r *REQ) *uint8 { return &r.PathMTU }, at(50, 0)),
	flag(ProtoCM.Bool("cm.req.rdcexist", "RDC Exists"), func(r *REQ) *bool { return &r.RDCExists }, at(50, 4)),
	num(ProtoCM.Uint("cm.req.rnrretrcount", 3, "RNR Retry Count"), func(r *REQ) *uint8 { return &r.RNRRetryCount }, at(50, 5)),
	num(ProtoCM.Uint("cm.req.maxcmretr", 4, "Max CM Retries"), func(r *REQ) *uint8 { return &r.MaxCMRetries }, at(51, 0)),
	flag(ProtoCM.Bool("cm.req.srq", "SRQ"), func(r *REQ) *bool { return &r.SRQ }, at(51, 4)),
	num(ProtoCM.Uint("cm.req.ext_transport", 3, "Extended Transport Type").WithNames(extTransportNames), func(r *REQ) *uint8 { return &r.ExtTransportType }, at(51, 5)),
	reqPath("cm.req.prim_", "Primary Path", func(r *REQ) *Path { return &r.Primary }, 52),
	reqPath("cm.req.alt_", "Alternate Path", func(r *REQ) *Path { return &r.Alternate }, 96),
	flag(ProtoCM.Bool("cm.req.sap_supported", "SAP Supported"), func(r *REQ) *bool { return &r.SAPSupported }, at(139, 5)),
)
