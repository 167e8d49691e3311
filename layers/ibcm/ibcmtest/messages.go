package ibcmtest

import (
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

// Packet is one synthetic frame and what it is.
type Packet struct {
	Name  string // "REQ", "REJ reason 12" …
	Frame []byte
}

// RFC 8797 messages as the Linux client and server send them
// (wire-formats.md §1).
var (
	ClientPrivateData = []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03}
	ServerPrivateData = []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03}
)

// NFSServiceID is the rdma_cm service ID of NFS/RDMA (TCP port space,
// port 20049).
const NFSServiceID = ibcm.ServiceID(ibcm.PortSpaceTCP<<16 | 20049)

// MAD wraps a CM message in BTH (UD SEND_ONLY to QP1), DETH (GSI Q_Key,
// source QP1) and the MAD header, ready for Frame.
func MAD(psn uint32, tid uint64, method uint8, cm *ibcm.CM) []gopacket.SerializableLayer {
	return []gopacket.SerializableLayer{
		&ibcm.BTH{OpCode: ibcm.OpUDSendOnly, PKey: 0xffff, DestQP: 1, PSN: psn},
		&ibcm.DETH{QKey: ibcm.GSIQKey, SrcQP: 1},
		&ibcm.MAD{BaseVersion: 1, MgmtClass: ibcm.MgmtClassCM, ClassVersion: ibcm.CMClassVersion, Method: method,
			TransactionID: tid, AttributeID: cm.AttributeID},
		cm,
	}
}

// ipcm returns the rdma_cm IP CM header of the client's REQ in enc.
func ipcm(enc Encoding) ibcm.IPCMHeader {
	if enc == RoCEv2IPv6 || enc == IBGlobal {
		return ibcm.IPCMHeader{IPVersion: 6, SrcPort: 0xaff6, Src: Client.IPv6, Dst: Server.IPv6}
	}
	return ibcm.IPCMHeader{IPVersion: 4, SrcPort: 0xaff6, Src: Client.IPv4, Dst: Server.IPv4}
}

func path(enc Encoding, src, dst *Endpoint) ibcm.Path {
	p := ibcm.Path{LocalLID: 0xffff, RemoteLID: 0xffff, FlowLabel: 0x59d1b, HopLimit: 64, LocalAckTimeout: 19, PacketRate: 16}
	switch enc {
	case RoCEv2IPv6:
		p.LocalGID, p.RemoteGID = src.IPv6.As16(), dst.IPv6.As16()
	case IBLocal, IBGlobal, ERF:
		p.LocalLID, p.RemoteLID = src.LID, dst.LID
		p.LocalGID, p.RemoteGID = src.GID.As16(), dst.GID.As16()
		p.SubnetLocal = true
		p.HopLimit = 0xff
	default:
		p.LocalGID, p.RemoteGID = netip.AddrFrom4(src.IPv4.As4()).As16(), netip.AddrFrom4(dst.IPv4.As4()).As16()
	}
	return p
}

// REQ is the client's connection request to NFS/RDMA with the RFC 8797
// message after the IP CM header.
func REQ(enc Encoding) *ibcm.CM {
	h := ipcm(enc)
	pd := h.AppendTo(nil)
	pd = append(pd, ClientPrivateData...)
	return &ibcm.CM{AttributeID: ibcm.AttrREQ, PrivateData: pd, REQ: ibcm.REQ{
		LocalCommID: Client.CommI, ServiceID: NFSServiceID, LocalCAGUID: Client.GUID,
		LocalQPN: Client.QPN, ResponderResources: 16, InitiatorDepth: 16, RemoteCMRespTimeout: 20,
		StartingPSN: 0x26d018, LocalCMRespTimeout: 20, RetryCount: 6, PKey: 0xffff, PathMTU: 3,
		RNRRetryCount: 7, MaxCMRetries: 15, Primary: path(enc, &Client, &Server)}}
}

// CMExchange returns every CM message type in enc: ClassPortInfo Get and
// GetResp, REQ, MRA, REP, RTU, LAP, MRA of the LAP, APR, DREQ, DREP, a
// second REQ answered by REJ (consumer reject), SIDR_REQ and SIDR_REP.
func CMExchange(enc Encoding) ([]Packet, error) {
	c, s := &Client, &Server
	type msg struct {
		name     string
		src, dst *Endpoint
		method   uint8
		cm       *ibcm.CM
	}
	alt := path(enc, c, s)
	alt.FlowLabel, alt.SL, alt.TrafficClass = 0x12345, 3, 0x20
	msgs := []msg{
		{"ClassPortInfo Get", c, s, ibcm.MethodGet, &ibcm.CM{AttributeID: ibcm.AttrClassPortInfo}},
		{"ClassPortInfo GetResp", s, c, ibcm.MethodGetResp, &ibcm.CM{AttributeID: ibcm.AttrClassPortInfo,
			ClassPortInfo: ibcm.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: 0x0100, RespTimeValue: 18,
				RedirectLID: 0, TrapHL: 0xff, TrapQP: 1, TrapQKey: ibcm.GSIQKey}}},
		{"REQ", c, s, ibcm.MethodSend, REQ(enc)},
		{"MRA", s, c, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrMRA, MRA: ibcm.MRA{
			MessageMRAed: 0, ServiceTimeout: 22}}},
		{"REP", s, c, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrREP, PrivateData: ServerPrivateData, REP: ibcm.REP{
			RemoteCommID: c.CommI, LocalQPN: s.QPN, StartingPSN: 0xa685ce, RespResources: 16, InitiatorDepth: 16,
			TargetAckDelay: 15, RNRRetryCount: 7, LocalCAGUID: s.GUID, VendorID: 0x0002c9}}},
		{"RTU", c, s, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrRTU}},
		{"LAP", c, s, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrLAP, LAP: ibcm.LAP{RemoteQPN: s.QPN,
			RemoteCMRespTimeout: 20, Alternate: alt}}},
		{"MRA of LAP", s, c, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrMRA, MRA: ibcm.MRA{MessageMRAed: 2, ServiceTimeout: 18}}},
		{"APR", s, c, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrAPR, APR: ibcm.APR{Status: 0}}},
		{"DREQ", c, s, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrDREQ, DREQ: ibcm.DREQ{RemoteQPN: s.QPN}}},
		{"DREP", s, c, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrDREP}},
		{"REQ (rejected)", c, s, ibcm.MethodSend, REQ(enc)},
		{"REJ", s, c, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrREJ, PrivateData: ServerPrivateData,
			REJ: ibcm.REJ{MessageRejected: 0, Reason: 28}}},
		{"SIDR_REQ", c, s, ibcm.MethodSend, sidrREQ(enc)},
		{"SIDR_REP", s, c, ibcm.MethodSend, &ibcm.CM{AttributeID: ibcm.AttrSIDRRep, SIDRRep: ibcm.SIDRRep{
			RequestID: 0x77, Status: 0, QPN: 0x2a, ServiceID: sidrServiceID, QKey: 0x11111111}}},
	}
	var out []Packet
	for i, m := range msgs {
		// Communication IDs: the initiator's and the responder's, as the
		// kernel fills them.
		switch m.cm.AttributeID {
		case ibcm.AttrMRA, ibcm.AttrREP, ibcm.AttrAPR, ibcm.AttrDREP, ibcm.AttrREJ:
			setIDs(m.cm, s.CommI, c.CommI)
		case ibcm.AttrRTU, ibcm.AttrLAP, ibcm.AttrDREQ:
			setIDs(m.cm, c.CommI, s.CommI)
		}
		if m.name == "REQ (rejected)" {
			m.cm.REQ.LocalCommID = c.CommI + 1
		}
		if m.name == "REJ" {
			m.cm.REJ.RemoteCommID = c.CommI + 1
			m.cm.REJ.LocalCommID = 0
		}
		f, err := Frame(enc, m.src, m.dst, MAD(uint32(100+i), 0x2e8bae6ad+uint64(i/2), m.method, m.cm)...)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", enc, m.name, err)
		}
		out = append(out, Packet{Name: m.name, Frame: f})
	}
	return out, nil
}

func setIDs(cm *ibcm.CM, local, remote uint32) {
	l, r := cm.CommIDs()
	*l, *r = local, remote
}

// sidrServiceID is an rdma_cm UDP port space service (port 18515).
const sidrServiceID = ibcm.ServiceID(ibcm.PortSpaceUDP<<16 | 18515)

func sidrREQ(enc Encoding) *ibcm.CM {
	h := ipcm(enc)
	pd := h.AppendTo(nil)
	pd = append(pd, "ud-hello"...)
	return &ibcm.CM{AttributeID: ibcm.AttrSIDRReq, PrivateData: pd,
		SIDRReq: ibcm.SIDRReq{RequestID: 0x77, PKey: 0xffff, ServiceID: sidrServiceID}}
}

// RejectCase is a REJ with a reason and the ARI it defines.
type RejectCase struct {
	Reason uint16
	ARI    []byte
	PD     []byte
}

// RejectCases covers reasons without ARI and every ARI layout.
func RejectCases() []RejectCase {
	gid := netip.MustParseAddr("fe80::99").As16()
	var cpi ibcm.CM
	cpi.ClassPortInfo = ibcm.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, RedirectLID: 7, RedirectQP: 0x99,
		RedirectQKey: ibcm.GSIQKey, RedirectPKey: 0xffff, RedirectGID: gid}
	cpiBytes := classPortInfoBytes(&cpi.ClassPortInfo)
	nvmeRej := []byte{0x00, 0x00, 0x03, 0x00} // recfmt 0, status 3 (little-endian), NVMe-oF
	return []RejectCase{
		{Reason: 1},
		{Reason: 4, ARI: []byte{0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0xaa, 0x01}},
		{Reason: 8},
		{Reason: 12, ARI: gid[:]},
		{Reason: 13, ARI: []byte{0x00, 0x07}},
		{Reason: 14, ARI: []byte{0x30}},
		{Reason: 15, ARI: []byte{0x20}},
		{Reason: 16, ARI: []byte{0x01}},
		{Reason: 17, ARI: []byte{16 << 2}},
		{Reason: 24, ARI: cpiBytes},
		{Reason: 26, ARI: []byte{0x30}},
		{Reason: 27, ARI: []byte{4}},
		{Reason: 28, ARI: []byte("busy"), PD: nvmeRej},
		{Reason: 29, ARI: []byte{3 << 5}},
		{Reason: 31, ARI: []byte{2}},
		{Reason: 32, ARI: []byte{0x12, 0x34, 0x50}},
		{Reason: 35},
	}
}

func classPortInfoBytes(c *ibcm.ClassPortInfo) []byte {
	cm := &ibcm.CM{AttributeID: ibcm.AttrClassPortInfo, ClassPortInfo: *c}
	buf := gopacket.NewSerializeBuffer()
	if err := cm.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()[:72]...)
}

// Rejects returns REJ messages (RoCEv2 IPv4) for every RejectCase.
func Rejects(enc Encoding) ([]Packet, error) {
	var out []Packet
	for i, rc := range RejectCases() {
		cm := &ibcm.CM{AttributeID: ibcm.AttrREJ, PrivateData: rc.PD,
			REJ: ibcm.REJ{RejInfoLen: uint8(len(rc.ARI)), Reason: rc.Reason, ARI: rc.ARI}}
		cm.REJ.LocalCommID, cm.REJ.RemoteCommID = Server.CommI, Client.CommI+uint32(i)
		f, err := Frame(enc, &Server, &Client, MAD(uint32(200+i), 0x3000+uint64(i), ibcm.MethodSend, cm)...)
		if err != nil {
			return nil, err
		}
		out = append(out, Packet{Name: fmt.Sprintf("REJ reason %d", rc.Reason), Frame: f})
	}
	// SIDR_REP and APR redirecting with a ClassPortInfo.
	cpiBytes := RejectCases()[9].ARI
	more := []struct {
		name string
		cm   *ibcm.CM
	}{
		{"SIDR_REP redirect", &ibcm.CM{AttributeID: ibcm.AttrSIDRRep, SIDRRep: ibcm.SIDRRep{RequestID: 0x78, Status: 4,
			AddInfoLen: 72, ServiceID: sidrServiceID, AddInfo: cpiBytes}}},
		{"APR redirect", &ibcm.CM{AttributeID: ibcm.AttrAPR, APR: ibcm.APR{AddInfoLen: 72, Status: 4, AddInfo: cpiBytes}}},
	}
	for i, m := range more {
		f, err := Frame(enc, &Server, &Client, MAD(uint32(300+i), 0x4000+uint64(i), ibcm.MethodSend, m.cm)...)
		if err != nil {
			return nil, err
		}
		out = append(out, Packet{Name: m.name, Frame: f})
	}
	return out, nil
}

// RCTraffic returns RoCEv2 IPv4 RC and UD data packets covering every
// extension header chain: SEND_ONLY (with pad), SEND_ONLY_WITH_INVALIDATE
// (IETH), RDMA WRITE ONLY with immediate (RETH, ImmDt), READ REQUEST (RETH),
// READ RESPONSE ONLY (AETH), ACK (AETH), NAK, COMPARE_SWAP (AtomicETH),
// ATOMIC ACK (AETH, AtomicAckETH), UD SEND_ONLY_WITH_IMMEDIATE (DETH,
// ImmDt) and a CNP.
func RCTraffic(enc Encoding) ([]Packet, error) {
	c, s := &Client, &Server
	rpc := []byte{0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00}
	bth := func(op ibcm.Opcode, qp, psn uint32) *ibcm.BTH {
		return &ibcm.BTH{OpCode: op, PKey: 0xffff, DestQP: qp, PSN: psn, AckReq: true}
	}
	type pkt struct {
		name     string
		src, dst *Endpoint
		ls       []gopacket.SerializableLayer
	}
	pkts := []pkt{
		{"RC SEND_ONLY", c, s, []gopacket.SerializableLayer{bth(ibcm.OpRCSendOnly, s.QPN, 1), gopacket.Payload(rpc)}},
		{"RC SEND_ONLY padded", c, s, []gopacket.SerializableLayer{bth(ibcm.OpRCSendOnly, s.QPN, 2), gopacket.Payload("hello")}},
		{"RC SEND_ONLY_WITH_INVALIDATE", s, c, []gopacket.SerializableLayer{bth(ibcm.OpRCSendOnlyInv, c.QPN, 7),
			&ibcm.IETH{RKey: 0xcd1}, gopacket.Payload(rpc)}},
		{"RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", s, c, []gopacket.SerializableLayer{bth(ibcm.OpRCWriteOnlyImm, c.QPN, 8),
			&ibcm.RETH{VA: 0xffff888003a1c000, RKey: 0xcd1, DMALen: 8}, &ibcm.ImmDt{Data: 0xdeadbeef}, gopacket.Payload("8 octets")}},
		{"RC RDMA_READ_REQUEST", s, c, []gopacket.SerializableLayer{bth(ibcm.OpRCReadRequest, c.QPN, 9),
			&ibcm.RETH{VA: 0xffff888003a1d000, RKey: 0xb56, DMALen: 4096}}},
		{"RC RDMA_READ_RESPONSE_ONLY", c, s, []gopacket.SerializableLayer{bth(ibcm.OpRCReadRespOnly, s.QPN, 9),
			&ibcm.AETH{Syndrome: 0x1f, MSN: 3}, gopacket.Payload("read data")}},
		{"RC ACK", s, c, []gopacket.SerializableLayer{bth(ibcm.OpRCAck, c.QPN, 2), &ibcm.AETH{Syndrome: 0x1f, MSN: 2}}},
		{"RC NAK", s, c, []gopacket.SerializableLayer{bth(ibcm.OpRCAck, c.QPN, 3), &ibcm.AETH{Syndrome: 0x61, MSN: 2}}},
		{"RC COMPARE_SWAP", c, s, []gopacket.SerializableLayer{bth(ibcm.OpRCCompareSwap, s.QPN, 10),
			&ibcm.AtomicETH{VA: 0x1000, RKey: 0x42, SwapData: 2, CmpData: 1}}},
		{"RC ATOMIC_ACKNOWLEDGE", s, c, []gopacket.SerializableLayer{bth(ibcm.OpRCAtomicAck, c.QPN, 10),
			&ibcm.AETH{Syndrome: 0x1f, MSN: 4}, &ibcm.AtomicAckETH{OrigRemData: 1}}},
		{"UD SEND_ONLY_WITH_IMMEDIATE", c, s, []gopacket.SerializableLayer{bth(ibcm.OpUDSendOnlyImm, 0x2a, 1),
			&ibcm.DETH{QKey: 0x11111111, SrcQP: 0x30}, &ibcm.ImmDt{Data: 7}, gopacket.Payload("datagram")}},
		{"CNP", s, c, []gopacket.SerializableLayer{&ibcm.BTH{OpCode: ibcm.OpCNP, PKey: 0xffff, DestQP: c.QPN}, gopacket.Payload(make([]byte, 16))}},
	}
	var out []Packet
	for _, p := range pkts {
		f, err := Frame(enc, p.src, p.dst, p.ls...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		out = append(out, Packet{Name: p.name, Frame: f})
	}
	return out, nil
}

// PrivateDataReading is what pvtdata makes of the client's REQ data; tests
// compare against it.
func PrivateDataReading() pvtdata.Reading {
	return pvtdata.Read(ClientPrivateData, pvtdata.ModeRFC8797)
}
