package main

// Synthetic captures of the ULPs other than RPC-over-RDMA (built with
// layers/ulp's SerializeTo from [MS-SMBD] §2.2, RFC 7145 §9.2, NVMe-oF 1.1
// §7.3, RFC 4391 §6): each connection set up by REQ/REP/RTU naming its
// service, then Sends both ways. The lab's Debian guests could not give
// these in the time the capture was made; the layouts are the specs'.

import (
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ulp"
)

func init() {
	register("synth-ulp-rocev2.pcap",
		"RoCEv2/IPv4 connections of ULPs other than RPC-over-RDMA, each set up by REQ/REP/RTU naming its service: SMB Direct (port 445: negotiate request, response, a data transfer with an SMB2 header, a 20-octet keep-alive), NVMe-oF (4420: Fabrics Connect command capsule, response capsule, a Write command with 8 octets in-capsule data), iSER (3260: SCSI Command with write STag, SCSI Response), IPoIB-CM (service ID 0x1000000000000000|QPN: an IPv4/UDP datagram), an rdma_cm TCP port 7174 service (rping: a 4-octet Send and a 64-octet one); then a 4-octet Send and a 100-octet Send of zeros on a QP whose setup is not in the capture. No frame holds RPC-over-RDMA.",
		connIBWrite(ulpTraffic))
	register("synth-ulp-iwarp.pcap",
		"iWARP (MPA v1, no markers, no CRC) SMB Direct connection on port 5445 (negotiate request and response, one data transfer) and a plain Send/Receive test connection on port 7174 whose Sends are 4 and 64 octets. No frame holds RPC-over-RDMA.",
		iwWrite(ulpIWARP))
}

func ser(ls ...gopacket.SerializableLayer) []byte {
	b, err := serialize(ls...)
	if err != nil {
		panic(err) // the layers above serialize fixed values
	}
	return b
}

// smbd2 is an SMB2 header (NEGOTIATE request) as an SMB Direct data
// transfer carries it.
var smbd2 = append([]byte{0xfe, 'S', 'M', 'B', 64, 0}, make([]byte, 58)...)

func ulpTraffic(g *connCapture) error {
	type conn struct {
		sid          ibcm.ServiceID
		cliPD, srvPD []byte
		sends        []struct {
			toServer bool
			payload  []byte
		}
	}
	type send = struct {
		toServer bool
		payload  []byte
	}
	nvmeConnect := ser(&ulp.NVMe{Opcode: ulp.NVMeFabricsOpcode, FCType: 0x01, CommandID: 0, Data: make([]byte, 1024)})
	cases := []conn{
		{sid: ibcm.ServiceIDFor(ibcm.PortSpaceTCP, 445), sends: []send{
			{true, ser(&ulp.SMBD{Message: ulp.SMBDNegotiateRequest, MinVersion: 0x100, MaxVersion: 0x100, CreditsRequested: 255,
				PreferredSendSize: 1364, MaxReceiveSize: 8192, MaxFragmentedSize: 1 << 20})},
			{false, ser(&ulp.SMBD{Message: ulp.SMBDNegotiateResponse, MinVersion: 0x100, MaxVersion: 0x100, NegotiatedVersion: 0x100,
				CreditsRequested: 255, CreditsGranted: 255, MaxReadWriteSize: 1 << 20, PreferredSendSize: 1364, MaxReceiveSize: 8192, MaxFragmentedSize: 1 << 20})},
			{true, ser(&ulp.SMBD{CreditsRequested: 255, CreditsGranted: 1, Flags: ulp.SMBDFlagResponseRequested,
				DataOffset: 24, DataLength: uint32(len(smbd2)), Data: smbd2})},
			{false, ser(&ulp.SMBD{CreditsRequested: 255, CreditsGranted: 1})},
		}},
		{sid: ibcm.ServiceIDFor(ibcm.PortSpaceTCP, 4420), sends: []send{
			{true, nvmeConnect},
			{false, ser(&ulp.NVMe{Response: true, SQHead: 1, CommandID: 0})},
			{true, ser(&ulp.NVMe{Opcode: 0x01, CommandID: 3, NSID: 1, Data: []byte("8 octets")})},
		}},
		{sid: ibcm.ServiceIDFor(ibcm.PortSpaceTCP, 3260), sends: []send{
			{true, ser(&ulp.ISER{Opcode: ulp.ISEROpControl, W: true, WriteSTag: 0x1234, WriteBaseOff: 0xffff8880_0000_1000},
				gopacket.Payload(append([]byte{0x01}, make([]byte, 47)...)))},
			{false, ser(&ulp.ISER{Opcode: ulp.ISEROpControl}, gopacket.Payload(append([]byte{0x21}, make([]byte, 47)...)))},
		}},
		{sid: ibcm.ServiceID(ibcm.IPoIBCMServiceID | 0x48), sends: []send{
			{true, ser(&ulp.IPoIB{Type: 0x0800}, &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP,
				SrcIP: net.IPv4(10, 0, 0, 2).To4(), DstIP: net.IPv4(10, 0, 0, 1).To4(), Length: 28},
				&layers.UDP{SrcPort: 5000, DstPort: 5001, Length: 8})},
		}},
		{sid: ibcm.ServiceIDFor(ibcm.PortSpaceTCP, 7174), sends: []send{
			{true, []byte{0, 0, 0, 1}},
			{false, make([]byte, 64)},
		}},
	}
	for n, k := range cases {
		c, s := endpoint(ibcmtest.Client, n+1), endpoint(ibcmtest.Server, n+1)
		req, rep := reqCM(c, s, k.cliPD), repCM(c, s, k.srvPD)
		req.REQ.ServiceID = k.sid
		if k.sid.IsIPoIBCM() {
			req.PrivateData = nil // IPoIB-CM: no rdma_cm IP CM header
		}
		if err := g.exchange(c, s, req, rep); err != nil {
			return err
		}
		for _, m := range k.sends {
			src, dst := s, c
			if m.toServer {
				src, dst = c, s
			}
			if err := g.rc("Send", src, dst, ibcm.OpRCSendOnly, 0, m.payload); err != nil {
				return err
			}
		}
	}
	// A QP whose setup the capture does not hold: the Sends fail the
	// RPC-over-RDMA test.
	c, s := endpoint(ibcmtest.Client, 9), endpoint(ibcmtest.Server, 9)
	if err := g.rc("Send", c, s, ibcm.OpRCSendOnly, 0, []byte{1, 2, 3, 4}); err != nil {
		return err
	}
	return g.rc("Send", s, c, ibcm.OpRCSendOnly, 0, make([]byte, 100))
}

func ulpIWARP(c *iwCapture) error {
	o := iwFPDUOpts{}
	k := iwNewConn(c, 11, 5445)
	k.handshake()
	k.send(true, iwFrame(mpa.FrameRequest, 0, 1, nil))
	k.send(false, iwFrame(mpa.FrameReply, 0, 1, nil))
	k.send(true, k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, ser(&ulp.SMBD{Message: ulp.SMBDNegotiateRequest,
		MinVersion: 0x100, MaxVersion: 0x100, CreditsRequested: 255, PreferredSendSize: 1364, MaxReceiveSize: 8192, MaxFragmentedSize: 1 << 20})))
	k.send(false, k.iwSend(false, o, mpa.OpSend, 1, 0, true, 0, ser(&ulp.SMBD{Message: ulp.SMBDNegotiateResponse,
		MinVersion: 0x100, MaxVersion: 0x100, NegotiatedVersion: 0x100, CreditsRequested: 255, CreditsGranted: 255,
		MaxReadWriteSize: 1 << 20, PreferredSendSize: 1364, MaxReceiveSize: 8192, MaxFragmentedSize: 1 << 20})))
	k.send(true, k.iwSend(true, o, mpa.OpSend, 2, 0, true, 0, ser(&ulp.SMBD{CreditsRequested: 255, CreditsGranted: 1,
		DataOffset: 24, DataLength: uint32(len(smbd2)), Data: smbd2})))
	k.close()

	t := iwNewConn(c, 12, 7174)
	t.handshake()
	t.send(true, iwFrame(mpa.FrameRequest, 0, 1, nil))
	t.send(false, iwFrame(mpa.FrameReply, 0, 1, nil))
	t.send(true, t.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, []byte{0, 0, 0, 1}))
	t.send(false, t.iwSend(false, o, mpa.OpSend, 1, 0, true, 0, make([]byte, 64)))
	t.close()
	return nil
}
