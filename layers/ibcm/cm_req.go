package ibcm

import (
	"encoding/binary"
	"net/netip"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

var (
	transportServiceNames = map[uint64]string{0: "RC", 1: "UC", 2: "RD", 3: "XRC (see extended transport type)"}
	extTransportNames     = map[uint64]string{0: "none", 1: "XRC"}
	mtuNames              = map[uint64]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
	rateNames             = map[uint64]string{2: "2.5 Gb/s", 3: "10 Gb/s", 4: "30 Gb/s", 5: "5 Gb/s", 6: "20 Gb/s",
		7: "40 Gb/s", 8: "60 Gb/s", 9: "80 Gb/s", 10: "120 Gb/s", 11: "14 Gb/s", 12: "56 Gb/s", 13: "112 Gb/s",
		14: "168 Gb/s", 15: "25 Gb/s", 16: "100 Gb/s", 17: "200 Gb/s", 18: "300 Gb/s", 19: "28 Gb/s",
		20: "50 Gb/s", 21: "400 Gb/s", 22: "600 Gb/s"}
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

// decodeREQPath reads the 44-octet REQ path layout at b[0:44].
func (p *Path) decodeREQPath(b []byte) {
	p.LocalLID = binary.BigEndian.Uint16(b[0:])
	p.RemoteLID = binary.BigEndian.Uint16(b[2:])
	copy(p.LocalGID[:], b[4:20])
	copy(p.RemoteGID[:], b[20:36])
	w := binary.BigEndian.Uint32(b[36:])
	p.FlowLabel = w >> 12
	p.PacketRate = uint8(w & 0x3f)
	p.TrafficClass = b[40]
	p.HopLimit = b[41]
	p.SL = b[42] >> 4
	p.SubnetLocal = b[42]&0x08 != 0
	p.LocalAckTimeout = b[43] >> 3
}

func (p *Path) encodeREQPath(b []byte) {
	binary.BigEndian.PutUint16(b[0:], p.LocalLID)
	binary.BigEndian.PutUint16(b[2:], p.RemoteLID)
	copy(b[4:20], p.LocalGID[:])
	copy(b[20:36], p.RemoteGID[:])
	binary.BigEndian.PutUint32(b[36:], p.FlowLabel<<12|uint32(p.PacketRate&0x3f))
	b[40], b[41] = p.TrafficClass, p.HopLimit
	b[42] = p.SL<<4 | boolBit(p.SubnetLocal, 0x08)
	b[43] = b[43]&0x07 | p.LocalAckTimeout<<3
}

// reqPathReserved reports non-zero reserved bits of a REQ path.
func reqPathReserved(b []byte, alternate bool) bool {
	last := b[43] & 0x07
	if alternate {
		last &= 0x03 // bit 2 is SAP Supported
	}
	return binary.BigEndian.Uint32(b[36:])&0xfc0 != 0 || b[42]&0x07 != 0 || last != 0
}

// decodeLAPPath reads the 44-octet LAP alternate path layout at b[0:44]
// (LAP octets 20–63: traffic class after the flow label, rate after the hop
// limit).
func (p *Path) decodeLAPPath(b []byte) {
	p.LocalLID = binary.BigEndian.Uint16(b[0:])
	p.RemoteLID = binary.BigEndian.Uint16(b[2:])
	copy(p.LocalGID[:], b[4:20])
	copy(p.RemoteGID[:], b[20:36])
	w := binary.BigEndian.Uint32(b[36:])
	p.FlowLabel = w >> 12
	p.TrafficClass = uint8(w)
	p.HopLimit = b[40]
	p.PacketRate = b[41] & 0x3f
	p.SL = b[42] >> 4
	p.SubnetLocal = b[42]&0x08 != 0
	p.LocalAckTimeout = b[43] >> 3
}

func (p *Path) encodeLAPPath(b []byte) {
	binary.BigEndian.PutUint16(b[0:], p.LocalLID)
	binary.BigEndian.PutUint16(b[2:], p.RemoteLID)
	copy(b[4:20], p.LocalGID[:])
	copy(b[20:36], p.RemoteGID[:])
	binary.BigEndian.PutUint32(b[36:], p.FlowLabel<<12|uint32(p.TrafficClass))
	b[40], b[41] = p.HopLimit, p.PacketRate&0x3f
	b[42] = p.SL<<4 | boolBit(p.SubnetLocal, 0x08)
	b[43] = p.LocalAckTimeout << 3
}

func lapPathReserved(b []byte) bool {
	return binary.BigEndian.Uint32(b[36:])&0xf00 != 0 || b[41]&0xc0 != 0 || b[42]&0x07 != 0 || b[43]&0x07 != 0
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

// visit reports the path; lap selects the LAP field order.
func (f *pathFields) visit(v field.Visitor, p *Path, lap bool) {
	v.Begin(f.group)
	v.Uint(f.localLID, uint64(p.LocalLID))
	v.Uint(f.remoteLID, uint64(p.RemoteLID))
	v.Addr(f.localGID, netip.AddrFrom16(p.LocalGID))
	v.Addr(f.remoteGID, netip.AddrFrom16(p.RemoteGID))
	v.Uint(f.flowLabel, uint64(p.FlowLabel))
	if lap {
		v.Uint(f.tclass, uint64(p.TrafficClass))
		v.Uint(f.hopLimit, uint64(p.HopLimit))
		v.Uint(f.rate, uint64(p.PacketRate))
	} else {
		v.Uint(f.rate, uint64(p.PacketRate))
		v.Uint(f.tclass, uint64(p.TrafficClass))
		v.Uint(f.hopLimit, uint64(p.HopLimit))
	}
	v.Uint(f.sl, uint64(p.SL))
	v.Bool(f.subnetLocal, p.SubnetLocal)
	v.Uint(f.ackTimeout, uint64(p.LocalAckTimeout))
	v.End()
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

var (
	fREQLocalCommID = ProtoCM.Hex("cm.req.localcommid", 32, "Local Communication ID")
	fREQVendorID    = ProtoCM.Hex("cm.req.vendorid", 24, "Vendor ID")
	fREQService     = newServiceIDFields("cm.req")
	fREQCAGUID      = ProtoCM.EUI64("cm.req.localcaguid", "Local CA GUID")
	fREQQKey        = ProtoCM.Hex("cm.req.localqkey", 32, "Local Q_Key")
	fREQQPN         = ProtoCM.Hex("cm.req.localqpn", 24, "Local QPN")
	fREQRespRes     = ProtoCM.Uint("cm.req.responderres", 8, "Responder Resources")
	fREQLocalEECN   = ProtoCM.Hex("cm.req.localeecn", 24, "Local EECN")
	fREQInitDepth   = ProtoCM.Uint("cm.req.initdepth", 8, "Initiator Depth")
	fREQRemoteEECN  = ProtoCM.Hex("cm.req.remoteeecn", 24, "Remote EECN")
	fREQRemoteTO    = ProtoCM.Uint("cm.req.remoteresptout", 5, "Remote CM Response Timeout (4.096 µs · 2^n)")
	fREQTransport   = ProtoCM.Uint("cm.req.transpsvctype", 2, "Transport Service Type").WithNames(transportServiceNames)
	fREQE2E         = ProtoCM.Bool("cm.req.e2eflowctrl", "End-to-End Flow Control")
	fREQPSN         = ProtoCM.Uint("cm.req.startpsn", 24, "Starting PSN")
	fREQLocalTO     = ProtoCM.Uint("cm.req.localresptout", 5, "Local CM Response Timeout (4.096 µs · 2^n)")
	fREQRetry       = ProtoCM.Uint("cm.req.retrcount", 3, "Retry Count")
	fREQPKey        = ProtoCM.Hex("cm.req.pkey", 16, "Partition Key")
	fREQMTU         = ProtoCM.Uint("cm.req.pppmtu", 4, "Path Packet Payload MTU").WithNames(mtuNames)
	fREQRDC         = ProtoCM.Bool("cm.req.rdcexist", "RDC Exists")
	fREQRNR         = ProtoCM.Uint("cm.req.rnrretrcount", 3, "RNR Retry Count")
	fREQMaxCMRetr   = ProtoCM.Uint("cm.req.maxcmretr", 4, "Max CM Retries")
	fREQSRQ         = ProtoCM.Bool("cm.req.srq", "SRQ")
	fREQExtTrans    = ProtoCM.Uint("cm.req.ext_transport", 3, "Extended Transport Type").WithNames(extTransportNames)
	fREQPrimary     = newPathFields("cm.req.prim_", "Primary Path")
	fREQAlternate   = newPathFields("cm.req.alt_", "Alternate Path")
	fREQSAP         = ProtoCM.Bool("cm.req.sap_supported", "SAP Supported")
)

func (r *REQ) decode(b []byte) {
	*r = REQ{
		LocalCommID:         binary.BigEndian.Uint32(b[0:]),
		VendorID:            binary.BigEndian.Uint32(b[4:]) & 0xffffff,
		ServiceID:           ServiceID(binary.BigEndian.Uint64(b[8:])),
		LocalCAGUID:         binary.BigEndian.Uint64(b[16:]),
		LocalQKey:           binary.BigEndian.Uint32(b[28:]),
		LocalQPN:            binary.BigEndian.Uint32(b[32:]) >> 8,
		ResponderResources:  b[35],
		LocalEECN:           binary.BigEndian.Uint32(b[36:]) >> 8,
		InitiatorDepth:      b[39],
		RemoteEECN:          binary.BigEndian.Uint32(b[40:]) >> 8,
		RemoteCMRespTimeout: b[43] >> 3,
		TransportService:    b[43] >> 1 & 0x03,
		E2EFlowControl:      b[43]&0x01 != 0,
		StartingPSN:         binary.BigEndian.Uint32(b[44:]) >> 8,
		LocalCMRespTimeout:  b[47] >> 3,
		RetryCount:          b[47] & 0x07,
		PKey:                binary.BigEndian.Uint16(b[48:]),
		PathMTU:             b[50] >> 4,
		RDCExists:           b[50]&0x08 != 0,
		RNRRetryCount:       b[50] & 0x07,
		MaxCMRetries:        b[51] >> 4,
		SRQ:                 b[51]&0x08 != 0,
		ExtTransportType:    b[51] & 0x07,
		SAPSupported:        b[139]&0x04 != 0,
	}
	r.Primary.decodeREQPath(b[52:96])
	r.Alternate.decodeREQPath(b[96:140])
}

func (r *REQ) encode(b []byte) {
	binary.BigEndian.PutUint32(b[0:], r.LocalCommID)
	binary.BigEndian.PutUint32(b[4:], r.VendorID&0xffffff)
	binary.BigEndian.PutUint64(b[8:], uint64(r.ServiceID))
	binary.BigEndian.PutUint64(b[16:], r.LocalCAGUID)
	binary.BigEndian.PutUint32(b[28:], r.LocalQKey)
	binary.BigEndian.PutUint32(b[32:], r.LocalQPN<<8|uint32(r.ResponderResources))
	binary.BigEndian.PutUint32(b[36:], r.LocalEECN<<8|uint32(r.InitiatorDepth))
	binary.BigEndian.PutUint32(b[40:], r.RemoteEECN<<8)
	b[43] = r.RemoteCMRespTimeout<<3 | r.TransportService&0x03<<1 | boolBit(r.E2EFlowControl, 1)
	binary.BigEndian.PutUint32(b[44:], r.StartingPSN<<8)
	b[47] = r.LocalCMRespTimeout<<3 | r.RetryCount&0x07
	binary.BigEndian.PutUint16(b[48:], r.PKey)
	b[50] = r.PathMTU<<4 | boolBit(r.RDCExists, 0x08) | r.RNRRetryCount&0x07
	b[51] = r.MaxCMRetries<<4 | boolBit(r.SRQ, 0x08) | r.ExtTransportType&0x07
	r.Primary.encodeREQPath(b[52:96])
	r.Alternate.encodeREQPath(b[96:140])
	b[139] |= boolBit(r.SAPSupported, 0x04)
}

func (r *REQ) visit(v field.Visitor) {
	v.Uint(fREQLocalCommID, uint64(r.LocalCommID))
	v.Uint(fREQVendorID, uint64(r.VendorID))
	fREQService.visit(v, r.ServiceID)
	v.Uint(fREQCAGUID, r.LocalCAGUID)
	v.Uint(fREQQKey, uint64(r.LocalQKey))
	v.Uint(fREQQPN, uint64(r.LocalQPN))
	v.Uint(fREQRespRes, uint64(r.ResponderResources))
	v.Uint(fREQLocalEECN, uint64(r.LocalEECN))
	v.Uint(fREQInitDepth, uint64(r.InitiatorDepth))
	v.Uint(fREQRemoteEECN, uint64(r.RemoteEECN))
	v.Uint(fREQRemoteTO, uint64(r.RemoteCMRespTimeout))
	v.Uint(fREQTransport, uint64(r.TransportService))
	v.Bool(fREQE2E, r.E2EFlowControl)
	v.Uint(fREQPSN, uint64(r.StartingPSN))
	v.Uint(fREQLocalTO, uint64(r.LocalCMRespTimeout))
	v.Uint(fREQRetry, uint64(r.RetryCount))
	v.Uint(fREQPKey, uint64(r.PKey))
	v.Uint(fREQMTU, uint64(r.PathMTU))
	v.Bool(fREQRDC, r.RDCExists)
	v.Uint(fREQRNR, uint64(r.RNRRetryCount))
	v.Uint(fREQMaxCMRetr, uint64(r.MaxCMRetries))
	v.Bool(fREQSRQ, r.SRQ)
	v.Uint(fREQExtTrans, uint64(r.ExtTransportType))
	fREQPrimary.visit(v, &r.Primary, false)
	fREQAlternate.visit(v, &r.Alternate, false)
	v.Bool(fREQSAP, r.SAPSupported)
}

func reqReserved(b []byte) bool {
	return b[4] != 0 || binary.BigEndian.Uint32(b[24:]) != 0 ||
		reqPathReserved(b[52:96], false) || reqPathReserved(b[96:140], true)
}
