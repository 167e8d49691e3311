package main

// Synthetic iWARP captures: MPA request/reply/reject frames, FPDUs with and
// without CRC and markers, DDP/RDMAP messages, and the TCP-level damage the
// reassembly must survive (split frames, reordered and duplicated segments,
// captures starting mid-stream, many half-open streams). Every byte above TCP
// is built with layers/mpa's SerializeTo.

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

func init() {
	register("synth-iwarp-mpa-v1.pcap",
		"iWARP MPA revision 1 (no Enhanced flag): request and reply with the RFC 8797 message at private-data offset 0, then RPC-over-RDMA Sends both ways",
		iwWrite(iwScenarioV1))
	register("synth-iwarp-mpa-v2-p2p-rtr.pcap",
		"iWARP MPA v2: IRD peer-to-peer and zero-length-RTR bits, ORD write and read RTR bits, RFC 8797 message after IRD/ORD; reply answers with write RTR; a Send each way",
		iwWrite(iwScenarioV2RTR))
	register("synth-iwarp-markers-crc.pcap",
		"iWARP with markers (M) and CRC32c (C) negotiated both ways: Sends of 40..3000 octets crossing many 512-octet marker positions, a 3-segment Send",
		iwWrite(iwScenarioMarkers))
	register("synth-iwarp-crc-bad.pcap",
		"iWARP with CRC negotiated: a good Send, then a Send whose CRC32c is wrong (mpa.crc-bad), then a good one",
		iwWrite(iwScenarioCRCBad))
	register("synth-iwarp-reject.pcap",
		"iWARP MPA request answered by a reject (R flag) carrying private data; the connection closes",
		iwWrite(iwScenarioReject))
	register("synth-iwarp-split-reorder-dup.pcap",
		"iWARP: MPA request split over 3 segments, an FPDU split over 2, a Send in 3 DDP segments (MSN/MO), segments delivered out of order and duplicated",
		iwWrite(iwScenarioSplitReorderDup))
	register("synth-iwarp-midstream.pcap",
		"iWARP stream captured mid-way: no SYN, no MPA frames, first segment starts inside an FPDU; framing is found again",
		iwWrite(iwScenarioMidstream))
	register("synth-iwarp-rdmap-opcodes.pcap",
		"iWARP RDMAP messages: Write, Read Request, Read Response, Send, Send with Invalidate, Send with SE, Send with SE and Invalidate, Terminate (DDP untagged buffer error with the terminated header)",
		iwWrite(iwScenarioOpcodes))
	register("synth-iwarp-gap.pcap",
		"iWARP with markers and CRC: one 1400-octet segment in the middle of the client's stream was never captured; the stream resynchronises on the next FPDU using the marker grid",
		iwWrite(iwScenarioGap))
	register("synth-iwarp-half-open.pcap",
		"1000 half-open TCP streams to port 20049 (SYN, then an MPA request whose first octets were never captured) for the reassembly memory bound",
		iwWrite(iwScenarioHalfOpen))
}

// iwCapture collects frames, written at the end in the order kept.
type iwCapture struct {
	pkts []timedFrame
	t    time.Time
	// ipoib: frames are LINKTYPE_IPOIB (link), not Ethernet.
	ipoib bool
}

func iwWrite(build func(c *iwCapture) error) func(path string) error {
	return func(path string) error {
		c := &iwCapture{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		if err := build(c); err != nil {
			return err
		}
		return writePcap(path, layers.LinkTypeEthernet, c.pkts)
	}
}

// iwConn is a TCP connection between a client and a server.
type iwConn struct {
	c          *iwCapture
	cliIP      net.IP
	srvIP      net.IP
	cliPort    uint16
	srvPort    uint16
	cliSeq     uint32
	srvSeq     uint32
	cliFPDUOff int // FPDU stream offset of the client's next octet (markers)
	srvFPDUOff int
}

func iwNewConn(c *iwCapture, n int, srvPort uint16) *iwConn {
	return &iwConn{c: c, cliIP: net.IPv4(198, 51, 100, 2).To4(), srvIP: net.IPv4(198, 51, 100, 1).To4(),
		cliPort: uint16(40000 + n), srvPort: srvPort, cliSeq: 1000 + uint32(n)*7919, srvSeq: 500000 + uint32(n)*104729}
}

// segment builds one TCP segment (not recorded).
func (k *iwConn) segment(fromClient bool, seq uint32, flags string, payload []byte) []byte {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0x52, 0x54, 0, 0, 1, 2}, DstMAC: net.HardwareAddr{0x52, 0x54, 0, 0, 1, 1},
		EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: k.cliIP, DstIP: k.srvIP, Flags: layers.IPv4DontFragment}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(k.cliPort), DstPort: layers.TCPPort(k.srvPort), Seq: seq, Window: 502, ACK: true,
		Ack: k.srvSeq}
	if !fromClient {
		eth.SrcMAC, eth.DstMAC = eth.DstMAC, eth.SrcMAC
		ip.SrcIP, ip.DstIP = ip.DstIP, ip.SrcIP
		tcp.SrcPort, tcp.DstPort = tcp.DstPort, tcp.SrcPort
		tcp.Ack = k.cliSeq
	}
	for _, f := range flags {
		switch f {
		case 'S':
			tcp.SYN = true
		case 'F':
			tcp.FIN = true
		case 'P':
			tcp.PSH = true
		case 'A':
		}
	}
	if tcp.SYN && flags == "S" {
		tcp.ACK, tcp.Ack = false, 0
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		panic(err)
	}
	var link gopacket.SerializableLayer = eth
	if k.c.ipoib {
		link = ipoibUnicast(!fromClient, layers.EthernetTypeIPv4)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		link, ip, tcp, gopacket.Payload(payload)); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// record appends a frame 10 µs after the previous one.
func (c *iwCapture) record(b []byte) {
	c.t = c.t.Add(10 * time.Microsecond)
	c.pkts = append(c.pkts, timedFrame{t: c.t, data: b})
}

func (k *iwConn) handshake() { k.exchange("S", "SA") }

func (k *iwConn) close() { k.exchange("FA", "FA") }

// exchange records the client's segment with flags, the server's answer
// with flags answer (each takes one sequence number, as SYN and FIN do)
// and the client's ACK of it.
func (k *iwConn) exchange(flags, answer string) {
	k.c.record(k.segment(true, k.cliSeq, flags, nil))
	k.cliSeq++
	k.c.record(k.segment(false, k.srvSeq, answer, nil))
	k.srvSeq++
	k.c.record(k.segment(true, k.cliSeq, "A", nil))
}

// send records payload as one segment and advances the sequence number.
func (k *iwConn) send(fromClient bool, payload []byte) {
	k.c.record(k.build(fromClient, payload))
}

// build makes the segment for payload at the current sequence number and
// advances it, without recording it.
func (k *iwConn) build(fromClient bool, payload []byte) []byte {
	if fromClient {
		b := k.segment(true, k.cliSeq, "PA", payload)
		k.cliSeq += uint32(len(payload))
		return b
	}
	b := k.segment(false, k.srvSeq, "PA", payload)
	k.srvSeq += uint32(len(payload))
	return b
}

// iwFrame builds an MPA frame.
func iwFrame(kind mpa.FrameKind, flags, rev uint8, pd []byte) []byte {
	f := mpa.Frame{Kind: kind, Flags: flags, Revision: rev, PrivateData: pd}
	buf := gopacket.NewSerializeBuffer()
	if err := f.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// iwRFC8797 is the private data the Linux NFS client (R=1) or server sends.
func iwRFC8797(r bool) []byte {
	m, err := pvtdata.Encode(4096, 4096, r)
	if err != nil {
		panic(err)
	}
	b := m.Bytes()
	return b[:]
}

// iwFPDUOpts is what one direction negotiated.
type iwFPDUOpts struct {
	crc, markers bool
}

// fpdu builds one FPDU carrying a DDP segment (header from d, RDMAP control
// from r, then payload) at the direction's FPDU stream offset, and
// advances that offset.
func (k *iwConn) fpdu(fromClient bool, o iwFPDUOpts, d mpa.DDP, r mpa.RDMAP, payload []byte) []byte {
	off := &k.srvFPDUOff
	if fromClient {
		off = &k.cliFPDUOff
	}
	buf := gopacket.NewSerializeBuffer()
	pl, err := buf.PrependBytes(len(payload))
	if err != nil {
		panic(err)
	}
	copy(pl, payload)
	d.Version, r.Version = mpa.DDPVersion1, mpa.RDMAPVersion1
	r.Tagged, r.MO = d.Tagged, d.MO
	d.RsvdULP = r.AppendRsvdULP(nil, d.Tagged)
	opts := mpa.FPDUOptions{Markers: o.markers, StreamOffset: *off}
	if o.crc {
		opts.CRC = mpa.CRCNegotiated
	}
	f := mpa.FPDU{Options: opts}
	for _, l := range []gopacket.SerializableLayer{&r, &d, &f} {
		if err := l.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			panic(err)
		}
	}
	*off += len(buf.Bytes())
	return append([]byte(nil), buf.Bytes()...)
}

// iwSend builds the FPDU of an untagged Send segment.
func (k *iwConn) iwSend(fromClient bool, o iwFPDUOpts, op mpa.Opcode, msn, mo uint32, last bool, inv uint32, payload []byte) []byte {
	return k.fpdu(fromClient, o, mpa.DDP{Last: last, QN: mpa.QueueSend, MSN: msn, MO: mo},
		mpa.RDMAP{Opcode: op, InvalidateSTag: inv}, payload)
}

// iwRPCRDMA builds an RPC-over-RDMA version 1 RDMA_MSG carrying an ONC RPC
// NFSv4 NULL call (or a reply), padded with pad octets of opaque data.
func iwRPCRDMA(xid uint32, call bool, pad int) []byte {
	var b []byte
	be := binary.BigEndian
	b = be.AppendUint32(b, xid)
	b = be.AppendUint32(b, 1)   // version
	b = be.AppendUint32(b, 128) // credits
	b = be.AppendUint32(b, 0)   // RDMA_MSG
	b = be.AppendUint32(b, 0)   // read list
	b = be.AppendUint32(b, 0)   // write list
	b = be.AppendUint32(b, 0)   // reply chunk
	b = be.AppendUint32(b, xid)
	if call {
		b = be.AppendUint32(b, 0)      // CALL
		b = be.AppendUint32(b, 2)      // RPC version
		b = be.AppendUint32(b, 100003) // NFS
		b = be.AppendUint32(b, 4)
		b = be.AppendUint32(b, 0) // NULL
		b = append(b, make([]byte, 16)...)
	} else {
		b = be.AppendUint32(b, 1) // REPLY
		b = be.AppendUint32(b, 0) // MSG_ACCEPTED
		b = append(b, make([]byte, 8)...)
		b = be.AppendUint32(b, 0) // SUCCESS
	}
	for i := 0; i < pad; i++ {
		b = append(b, byte(i))
	}
	return b
}

// iwSetup opens a connection and exchanges the MPA frames.
func iwSetup(c *iwCapture, n int, reqFlags, repFlags, rev uint8, reqPD, repPD []byte) *iwConn {
	k := iwNewConn(c, n, 20049)
	k.handshake()
	k.send(true, iwFrame(mpa.FrameRequest, reqFlags, rev, reqPD))
	k.send(false, iwFrame(mpa.FrameReply, repFlags, rev, repPD))
	return k
}

func iwScenarioV1(c *iwCapture) error {
	k := iwSetup(c, 1, 0, 0, 1, iwRFC8797(true), iwRFC8797(false))
	o := iwFPDUOpts{}
	k.send(true, k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x1001, true, 0)))
	k.send(false, k.iwSend(false, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x1001, false, 0)))
	k.close()
	return nil
}

func iwScenarioV2RTR(c *iwCapture) error {
	req := mpa.AppendIRDORD(nil, 16|mpa.IRDPeerToPeer|mpa.IRDZeroRTR, 16|mpa.ORDWriteRTR|mpa.ORDReadRTR, false)
	req = append(req, iwRFC8797(true)...)
	rep := mpa.AppendIRDORD(nil, 16|mpa.IRDPeerToPeer, 16|mpa.ORDWriteRTR, false)
	rep = append(rep, iwRFC8797(false)...)
	k := iwSetup(c, 2, mpa.FlagEnhanced, mpa.FlagEnhanced, 2, req, rep)
	o := iwFPDUOpts{}
	// The zero-length RDMA Write RTR the client sends first.
	k.send(true, k.fpdu(true, o, mpa.DDP{Tagged: true, Last: true, STag: 0, TO: 0}, mpa.RDMAP{Opcode: mpa.OpWrite}, nil))
	k.send(true, k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x2001, true, 0)))
	k.send(false, k.iwSend(false, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x2001, false, 0)))
	k.close()
	return nil
}

func iwScenarioMarkers(c *iwCapture) error {
	k := iwSetup(c, 3, mpa.FlagMarkers|mpa.FlagCRC, mpa.FlagMarkers|mpa.FlagCRC, 1, iwRFC8797(true), iwRFC8797(false))
	o := iwFPDUOpts{crc: true, markers: true}
	msn := uint32(1)
	for _, n := range []int{40, 500, 1000, 1400, 3000, 7, 511} {
		fpdu := k.iwSend(true, o, mpa.OpSend, msn, 0, true, 0, iwRPCRDMA(0x3000+msn, true, n))
		// Large FPDUs go in 1400-octet segments.
		for len(fpdu) > 0 {
			m := min(len(fpdu), 1400)
			k.send(true, fpdu[:m])
			fpdu = fpdu[m:]
		}
		k.send(false, k.iwSend(false, o, mpa.OpSend, msn, 0, true, 0, iwRPCRDMA(0x3000+msn, false, n/2)))
		msn++
	}
	// A Send in three DDP segments.
	body := iwRPCRDMA(0x3100, true, 2500)
	var seg []byte
	for i, mo := 0, 0; mo < len(body); i++ {
		n := min(1000, len(body)-mo)
		seg = append(seg, k.iwSend(true, o, mpa.OpSend, msn, uint32(mo), mo+n == len(body), 0, body[mo:mo+n])...)
		mo += n
	}
	for len(seg) > 0 {
		m := min(len(seg), 1448)
		k.send(true, seg[:m])
		seg = seg[m:]
	}
	k.close()
	return nil
}

func iwScenarioCRCBad(c *iwCapture) error {
	k := iwSetup(c, 4, mpa.FlagCRC, mpa.FlagCRC, 1, iwRFC8797(true), iwRFC8797(false))
	o := iwFPDUOpts{crc: true}
	k.send(true, k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x4001, true, 0)))
	bad := k.iwSend(true, o, mpa.OpSend, 2, 0, true, 0, iwRPCRDMA(0x4002, true, 0))
	bad[len(bad)-1] ^= 0x5a
	k.send(true, bad)
	k.send(true, k.iwSend(true, o, mpa.OpSend, 3, 0, true, 0, iwRPCRDMA(0x4003, true, 0)))
	k.close()
	return nil
}

func iwScenarioReject(c *iwCapture) error {
	k := iwNewConn(c, 5, 20049)
	k.handshake()
	req := append(mpa.AppendIRDORD(nil, 8|mpa.IRDPeerToPeer, 8|mpa.ORDReadRTR, false), iwRFC8797(true)...)
	k.send(true, iwFrame(mpa.FrameRequest, mpa.FlagEnhanced, 2, req))
	k.send(false, iwFrame(mpa.FrameReply, mpa.FlagReject|mpa.FlagEnhanced, 2, append(mpa.AppendIRDORD(nil, 0, 0, false), []byte("no resources")...)))
	k.close()
	return nil
}

func iwScenarioSplitReorderDup(c *iwCapture) error {
	k := iwNewConn(c, 6, 20049)
	k.handshake()
	req := append(mpa.AppendIRDORD(nil, 128, 0, false), iwRFC8797(true)...)
	reqFrame := iwFrame(mpa.FrameRequest, mpa.FlagEnhanced, 2, req)
	// The request in three segments, the second captured twice and the
	// third before the second.
	s1 := k.build(true, reqFrame[:7])
	s2 := k.build(true, reqFrame[7:21])
	s3 := k.build(true, reqFrame[21:])
	c.record(s1)
	c.record(s3)
	c.record(s2)
	c.record(s2)
	rep := append(mpa.AppendIRDORD(nil, 0, 128, false), iwRFC8797(false)...)
	k.send(false, iwFrame(mpa.FrameReply, mpa.FlagEnhanced, 2, rep))
	o := iwFPDUOpts{}
	// An FPDU split over two segments, delivered in order; then the same
	// two segments retransmitted.
	f1 := k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x6001, true, 100))
	a := k.build(true, f1[:50])
	b := k.build(true, f1[50:])
	c.record(a)
	c.record(b)
	c.record(a)
	c.record(b)
	// A Send in three DDP segments (MSN 2), each FPDU its own segment,
	// delivered 3, 1, 2 with segment 1 duplicated.
	body := iwRPCRDMA(0x6002, true, 600)
	var segs [][]byte
	for mo := 0; mo < len(body); mo += 250 {
		n := min(250, len(body)-mo)
		segs = append(segs, k.build(true, k.iwSend(true, o, mpa.OpSend, 2, uint32(mo), mo+n == len(body), 0, body[mo:mo+n])))
	}
	c.record(segs[2])
	c.record(segs[0])
	c.record(segs[0])
	c.record(segs[1])
	// Two FPDUs in one segment from the server, then a reply.
	two := append(k.iwSend(false, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x6001, false, 0)),
		k.iwSend(false, o, mpa.OpSend, 2, 0, true, 0, iwRPCRDMA(0x6002, false, 0))...)
	k.send(false, two)
	k.close()
	return nil
}

func iwScenarioMidstream(c *iwCapture) error {
	k := iwNewConn(c, 7, 20049)
	o := iwFPDUOpts{}
	// Build a stream as if the handshake and frames had happened, and
	// capture only from the middle of the third FPDU on.
	var stream []byte
	for msn := uint32(1); msn <= 6; msn++ {
		stream = append(stream, k.iwSend(true, o, mpa.OpSend, msn, 0, true, 0, iwRPCRDMA(0x7000+msn, true, int(msn)*13))...)
	}
	f1 := len(k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x7001, true, 13)))
	f2 := len(k.iwSend(true, o, mpa.OpSend, 2, 0, true, 0, iwRPCRDMA(0x7002, true, 26)))
	start := f1 + f2 + 20
	k.cliSeq += uint32(start)
	rest := stream[start:]
	for len(rest) > 0 {
		m := min(len(rest), 90)
		k.send(true, rest[:m])
		rest = rest[m:]
	}
	k.send(false, k.iwSend(false, o, mpa.OpSend, 9, 0, true, 0, iwRPCRDMA(0x7003, false, 0)))
	return nil
}

func iwScenarioOpcodes(c *iwCapture) error {
	k := iwSetup(c, 8, mpa.FlagCRC, 0, 1, iwRFC8797(true), iwRFC8797(true))
	o := iwFPDUOpts{crc: true}
	k.send(true, k.fpdu(true, o, mpa.DDP{Tagged: true, Last: true, STag: 0x1234, TO: 0x10000}, mpa.RDMAP{Opcode: mpa.OpWrite}, []byte("written data")))
	rr := mpa.ReadRequest{SinkSTag: 0x5678, SinkTO: 0x20000, Size: 4096, SrcSTag: 0x9abc, SrcTO: 0x30000}
	k.send(true, k.fpdu(true, o, mpa.DDP{Last: true, QN: mpa.QueueReadRequest, MSN: 1}, mpa.RDMAP{Opcode: mpa.OpReadRequest, ReadRequest: rr}, nil))
	k.send(false, k.fpdu(false, o, mpa.DDP{Tagged: true, Last: true, STag: 0x5678, TO: 0x20000}, mpa.RDMAP{Opcode: mpa.OpReadResponse}, make([]byte, 64)))
	k.send(true, k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x8001, true, 0)))
	k.send(false, k.iwSend(false, o, mpa.OpSendInvalidate, 1, 0, true, 0xabcd0001, iwRPCRDMA(0x8001, false, 0)))
	k.send(true, k.iwSend(true, o, mpa.OpSendSE, 2, 0, true, 0, iwRPCRDMA(0x8002, true, 0)))
	k.send(false, k.iwSend(false, o, mpa.OpSendSEInval, 2, 0, true, 0xabcd0002, iwRPCRDMA(0x8002, false, 0)))
	// The server terminates: DDP untagged buffer error "Invalid MSN - no
	// buffer available", with the DDP header of the segment it refused.
	refused := mpa.DDP{Last: true, Version: 1, QN: 0, MSN: 3}
	rb := gopacket.NewSerializeBuffer()
	refused.RsvdULP = (&mpa.RDMAP{Version: 1, Opcode: mpa.OpSend}).AppendRsvdULP(nil, false)
	if err := refused.SerializeTo(rb, gopacket.SerializeOptions{}); err != nil {
		return err
	}
	term := mpa.Terminate{Layer: mpa.TermLayerDDP, EType: 2, ErrCode: 2, HdrM: true, HdrD: true, DDPSegLen: 70,
		DDPHeader: append([]byte(nil), rb.Bytes()...)}
	k.send(false, k.fpdu(false, o, mpa.DDP{Last: true, QN: mpa.QueueTerminate, MSN: 1}, mpa.RDMAP{Opcode: mpa.OpTerminate, Terminate: term}, nil))
	k.close()
	return nil
}

func iwScenarioHalfOpen(c *iwCapture) error {
	for n := 0; n < 1000; n++ {
		k := iwNewConn(c, 100+n, 20049)
		k.c.record(k.segment(true, k.cliSeq, "S", nil))
		k.cliSeq++
		frame := iwFrame(mpa.FrameRequest, mpa.FlagEnhanced, 2, append(mpa.AppendIRDORD(nil, 128, 0, false), iwRFC8797(true)...))
		// The first 8 octets were never captured: the rest waits for them.
		k.cliSeq += 8
		k.send(true, frame[8:])
		if n%100 == 99 {
			c.t = c.t.Add(time.Second)
		}
	}
	if len(c.pkts) != 2000 {
		return fmt.Errorf("half-open: %d packets", len(c.pkts))
	}
	return nil
}

func iwScenarioGap(c *iwCapture) error {
	k := iwSetup(c, 9, mpa.FlagMarkers|mpa.FlagCRC, mpa.FlagMarkers|mpa.FlagCRC, 1, iwRFC8797(true), iwRFC8797(false))
	o := iwFPDUOpts{crc: true, markers: true}
	var stream []byte
	for msn := uint32(1); msn <= 8; msn++ {
		stream = append(stream, k.iwSend(true, o, mpa.OpSend, msn, 0, true, 0, iwRPCRDMA(0x9000+msn, true, 300+int(msn)*50))...)
	}
	for i := 0; len(stream) > 0; i++ {
		m := min(len(stream), 1400)
		b := k.build(true, stream[:m])
		if i != 1 {
			c.record(b)
		}
		stream = stream[m:]
	}
	k.close()
	return nil
}
