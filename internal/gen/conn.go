package main

// Synthetic captures for the connection checks (conn): each one makes the
// tracker raise specific findings, so tests and users can see every check
// fire. Packets are built with layers/ibcm's, layers/mpa's and
// layers/rpcrdma's SerializeTo (through ibcmtest and the iWARP helpers of
// mpa.go); nothing here is real traffic.

import (
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

func init() {
	register("synth-conn-rocev2-traffic.pcap",
		"RoCEv2/IPv4 NFS/RDMA connection (client RFC 8797 R=1 4K/4K, server R=0 4K/4K, as Linux) whose traffic breaks the negotiation: a 5000-octet call in SEND_FIRST+LAST (conn.send-exceeds-inline), a reply SEND_ONLY_WITH_INVALIDATE of an STag its call did not offer (conn.send-inv-tolerated, with the Linux context; conn.invalidated-stag-not-offered), a reply invalidating an offered STag (conn.send-inv-tolerated only), a call sent with Invalidate (conn.send-inv-from-requester, conn.send-inv-not-negotiated); DREQ, DREP",
		connIBWrite(connTraffic))
	register("synth-conn-rocev2-oddities.pcap",
		"RoCEv2/IPv4 CM messages out of place: a REP whose REQ is not in the capture (conn.rep-without-req), an RTU for unknown comm IDs (conn.rtu-without-rep), a DREQ for an unknown connection (conn.dreq-unknown-connection), a DREP and an MRA matching nothing (conn.unknown-connection)",
		connIBWrite(connOddities))
	register("synth-conn-rocev2-pvtdata.pcap",
		"RoCEv2/IPv4 setup with odd private data: the client's REQ sent twice with the same TID (retransmission), its RFC 8797 message at ULP offset 4 with reserved bits 0x02 set (pvtdata.not-at-offset-zero, pvtdata.reserved-bits-set, pvtdata.reader-divergence); an MRA; the server's REP advertising Send 16 KiB against the client's 4 KiB Receive (conn.server-send-exceeds-client-receive); RTU",
		connIBWrite(connPrivateData))
	register("synth-conn-rocev2-reconnect.pcap",
		"RoCEv2/IPv4 reconnections between the same peers: 4K/4K R=1 (established, disconnected), then 8K/8K R=1 from both (conn.advertised-values-changed; remote invalidation negotiated), then a third REQ rejected with REJ reason 28 (consumer reject)",
		connIBWrite(connReconnect))
	register("synth-conn-rocev2-timeout.pcap",
		"RoCEv2/IPv4: a REQ never answered, then 90 s of capture time later a REQ/REP/RTU of another connection: the first is timed out (conn.timed-out)",
		connIBWrite(connTimeout))
	register("synth-conn-rocev2-many.pcap",
		"RoCEv2/IPv4: 5 connections set up one after the other (REQ, REP, RTU each); with --max-connections 2 the oldest are evicted (conn.table-full)",
		connIBWrite(connMany))
	register("synth-conn-iwarp-traffic.pcap",
		"iWARP MPA v2 (IRD/ORD) with RFC 8797 R=0 from both peers: a reply Send with Invalidate (conn.send-inv-not-negotiated: the client did not set R) and a 6000-octet reply in two DDP segments (conn.send-exceeds-inline)",
		iwWrite(connIWARPTraffic))
}

// connPacket is one frame of a synthetic connection capture and its time
// offset from the start.
type connPacket struct {
	ibcmtest.Packet
	at time.Duration
}

// connCapture builds a RoCEv2/IPv4 capture packet by packet.
type connCapture struct {
	pkts []connPacket
	at   time.Duration
	psn  uint32
	tid  uint64
	// next is the next request PSN to each QP (by QPN), from the Starting
	// PSN its side named in the REQ or REP: RC traffic in sequence.
	next map[uint32]uint32
}

// endpoint returns a copy of the synthetic client or server with its own
// communication ID and QPN, for the n-th connection.
func endpoint(base ibcmtest.Endpoint, n int) *ibcmtest.Endpoint {
	e := base
	e.CommI += uint32(n) << 8
	e.QPN += uint32(n) * 2
	return &e
}

func (g *connCapture) frame(name string, src, dst *ibcmtest.Endpoint, ls ...gopacket.SerializableLayer) error {
	f, err := ibcmtest.Frame(ibcmtest.RoCEv2IPv4, src, dst, ls...)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	g.at += time.Millisecond
	g.pkts = append(g.pkts, connPacket{Packet: ibcmtest.Packet{Name: name, Frame: f}, at: g.at})
	return nil
}

// mad sends a CM message in a new transaction (tid 0: the next one).
func (g *connCapture) mad(name string, src, dst *ibcmtest.Endpoint, tid uint64, cm *ibcm.CM) error {
	if tid == 0 {
		g.tid++
		tid = 0x1000 + g.tid
	}
	g.psn++
	return g.frame(name, src, dst, ibcmtest.MAD(g.psn, tid, ibcm.MethodSend, cm)...)
}

// rc sends one RC packet to dst's QP; rkey is the IETH of the
// *_WITH_INVALIDATE opcodes.
func (g *connCapture) rc(name string, src, dst *ibcmtest.Endpoint, op ibcm.Opcode, rkey uint32, payload []byte) error {
	return g.rcAt(name, src, dst, op, g.nextPSN(dst), rkey, payload)
}

// nextPSN returns the next request PSN to dst's QP and moves past it.
func (g *connCapture) nextPSN(dst *ibcmtest.Endpoint) uint32 {
	psn, ok := g.next[dst.QPN]
	if !ok {
		g.psn++
		psn = g.psn
	}
	if g.next != nil {
		g.next[dst.QPN] = (psn + 1) & 0xffffff
	}
	return psn
}

// rcAt sends one RC request packet of PSN psn to dst's QP.
func (g *connCapture) rcAt(name string, src, dst *ibcmtest.Endpoint, op ibcm.Opcode, psn, rkey uint32, payload []byte) error {
	ls := []gopacket.SerializableLayer{&ibcm.BTH{OpCode: op, PKey: 0xffff, DestQP: dst.QPN, PSN: psn, AckReq: true}}
	if op == ibcm.OpRCSendOnlyInv || op == ibcm.OpRCSendLastInv {
		ls = append(ls, &ibcm.IETH{RKey: rkey})
	}
	ls = append(ls, gopacket.Payload(payload))
	return g.frame(name, src, dst, ls...)
}

// reqCM is the client's REQ to NFS/RDMA with ulp after the rdma_cm IP CM
// header.
func reqCM(c, s *ibcmtest.Endpoint, ulp []byte) *ibcm.CM {
	cm := ibcmtest.REQ(ibcmtest.RoCEv2IPv4)
	h := ibcm.IPCMHeader{IPVersion: 4, SrcPort: uint16(0xa000 + c.QPN), Src: c.IPv4, Dst: s.IPv4}
	cm.PrivateData = append(h.AppendTo(nil), ulp...)
	cm.REQ.LocalCommID, cm.REQ.LocalQPN = c.CommI, c.QPN
	return cm
}

func repCM(c, s *ibcmtest.Endpoint, ulp []byte) *ibcm.CM {
	return &ibcm.CM{AttributeID: ibcm.AttrREP, PrivateData: ulp, REP: ibcm.REP{
		LocalCommID: s.CommI, RemoteCommID: c.CommI, LocalQPN: s.QPN, StartingPSN: 0xa685ce,
		RespResources: 16, InitiatorDepth: 16, TargetAckDelay: 15, RNRRetryCount: 7, LocalCAGUID: s.GUID, VendorID: 0x0002c9}}
}

func idsCM(attr uint16, local, remote uint32) *ibcm.CM {
	cm := &ibcm.CM{AttributeID: attr}
	switch attr {
	case ibcm.AttrRTU:
		cm.RTU.LocalCommID, cm.RTU.RemoteCommID = local, remote
	case ibcm.AttrDREQ:
		cm.DREQ.LocalCommID, cm.DREQ.RemoteCommID = local, remote
	case ibcm.AttrDREP:
		cm.DREP.LocalCommID, cm.DREP.RemoteCommID = local, remote
	case ibcm.AttrMRA:
		cm.MRA.LocalCommID, cm.MRA.RemoteCommID, cm.MRA.ServiceTimeout = local, remote, 20
	case ibcm.AttrREJ:
		cm.REJ.LocalCommID, cm.REJ.RemoteCommID, cm.REJ.Reason = local, remote, 28
	}
	return cm
}

// setup exchanges REQ, REP and RTU.
func (g *connCapture) setup(c, s *ibcmtest.Endpoint, clientULP, serverULP []byte) error {
	return g.exchange(c, s, reqCM(c, s, clientULP), repCM(c, s, serverULP))
}

// exchange sends req, rep and the RTU.
func (g *connCapture) exchange(c, s *ibcmtest.Endpoint, req, rep *ibcm.CM) error {
	if err := g.mad("REQ", c, s, 0, req); err != nil {
		return err
	}
	if err := g.mad("REP", s, c, 0, rep); err != nil {
		return err
	}
	// Each side's Starting PSN is the one it expects to receive.
	if g.next == nil {
		g.next = map[uint32]uint32{}
	}
	g.next[c.QPN], g.next[s.QPN] = req.REQ.StartingPSN, rep.REP.StartingPSN
	return g.mad("RTU", c, s, 0, idsCM(ibcm.AttrRTU, c.CommI, s.CommI))
}

func (g *connCapture) teardown(c, s *ibcmtest.Endpoint) error {
	dreq := idsCM(ibcm.AttrDREQ, c.CommI, s.CommI)
	dreq.DREQ.RemoteQPN = s.QPN
	if err := g.mad("DREQ", c, s, 0, dreq); err != nil {
		return err
	}
	return g.mad("DREP", s, c, 0, idsCM(ibcm.AttrDREP, s.CommI, c.CommI))
}

// rfc8797 encodes a version 1 message.
func rfc8797(send, recv int, r bool) []byte {
	b := []byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, byte(send/1024 - 1), byte(recv/1024 - 1)}
	if r {
		b[5] = 1
	}
	return b
}

// rpcCall is an RPC-over-RDMA RDMA_MSG with an NFSv4.2 call, offering
// handles as read-list segments, padded to size octets when size is
// larger.
func rpcCall(xid uint32, handles []uint32, size int) ([]byte, error) {
	h := hdr(xid, 1, rpcrdma.ProcMsg)
	for i, hd := range handles {
		h.Reads = append(h.Reads, rpcrdma.ReadSegment{Position: 0, Segment: rpcrdma.Segment{Handle: hd, Length: 4096, Offset: 0xffff888000000000 + uint64(i)<<12}})
	}
	b, err := serialize(h, nfsCall(xid), compound(false, 0, 24, 10))
	if err != nil {
		return nil, err
	}
	for len(b) < size {
		b = append(b, 0)
	}
	return b, nil
}

func rpcReply(xid uint32) ([]byte, error) {
	return serialize(hdr(xid, 1, rpcrdma.ProcMsg), nfsReply(xid), compound(true, 0, 24, 10))
}

func connTraffic(g *connCapture) error {
	c, s := endpoint(ibcmtest.Client, 0), endpoint(ibcmtest.Server, 0)
	if err := g.setup(c, s, rfc8797(4096, 4096, true), rfc8797(4096, 4096, false)); err != nil {
		return err
	}
	// A 5000-octet call: larger than the server's 4096-octet threshold.
	big, err := rpcCall(0x501, nil, 5000)
	if err != nil {
		return err
	}
	if err := g.rc("call 0x501 SEND_FIRST", c, s, ibcm.OpRCSendFirst, 0, big[:4096]); err != nil {
		return err
	}
	if err := g.rc("call 0x501 SEND_LAST", c, s, ibcm.OpRCSendLast, 0, big[4096:]); err != nil {
		return err
	}
	// A call offering STag 0xabc; its reply invalidates 0x999.
	call, err := rpcCall(0x502, []uint32{0xabc}, 0)
	if err != nil {
		return err
	}
	reply, err := rpcReply(0x502)
	if err != nil {
		return err
	}
	if err := g.rc("call 0x502", c, s, ibcm.OpRCSendOnly, 0, call); err != nil {
		return err
	}
	if err := g.rc("reply 0x502 invalidating 0x999", s, c, ibcm.OpRCSendOnlyInv, 0x999, reply); err != nil {
		return err
	}
	// A call offering 0xdef, whose reply invalidates it: only the
	// negotiation is broken.
	call, err = rpcCall(0x503, []uint32{0xdef}, 0)
	if err != nil {
		return err
	}
	if reply, err = rpcReply(0x503); err != nil {
		return err
	}
	if err := g.rc("call 0x503", c, s, ibcm.OpRCSendOnly, 0, call); err != nil {
		return err
	}
	if err := g.rc("reply 0x503 invalidating 0xdef", s, c, ibcm.OpRCSendOnlyInv, 0xdef, reply); err != nil {
		return err
	}
	// The client sends with Invalidate.
	if call, err = rpcCall(0x504, nil, 0); err != nil {
		return err
	}
	if err := g.rc("call 0x504 with invalidate", c, s, ibcm.OpRCSendOnlyInv, 0x42, call); err != nil {
		return err
	}
	return g.teardown(c, s)
}

func connOddities(g *connCapture) error {
	c, s := endpoint(ibcmtest.Client, 1), endpoint(ibcmtest.Server, 1)
	if err := g.mad("REP without REQ", s, c, 0, repCM(c, s, rfc8797(4096, 4096, false))); err != nil {
		return err
	}
	if err := g.mad("RTU for unknown IDs", c, s, 0, idsCM(ibcm.AttrRTU, 0x11110001, 0x22220001)); err != nil {
		return err
	}
	if err := g.mad("DREQ for unknown IDs", c, s, 0, idsCM(ibcm.AttrDREQ, 0x11110002, 0x22220002)); err != nil {
		return err
	}
	if err := g.mad("DREP for unknown IDs", s, c, 0, idsCM(ibcm.AttrDREP, 0x22220003, 0x11110003)); err != nil {
		return err
	}
	return g.mad("MRA for unknown IDs", s, c, 0, idsCM(ibcm.AttrMRA, 0x22220004, 0x11110004))
}

func connPrivateData(g *connCapture) error {
	c, s := endpoint(ibcmtest.Client, 2), endpoint(ibcmtest.Server, 2)
	ulp := append([]byte{0, 0, 0, 0}, rfc8797(4096, 4096, true)...)
	ulp[4+5] |= 0x04 // a reserved bit (0x02 after the R bit)
	req := reqCM(c, s, ulp)
	if err := g.mad("REQ", c, s, 0x7001, req); err != nil {
		return err
	}
	if err := g.mad("REQ retransmitted", c, s, 0x7001, req); err != nil {
		return err
	}
	if err := g.mad("MRA", s, c, 0, idsCM(ibcm.AttrMRA, s.CommI, c.CommI)); err != nil {
		return err
	}
	if err := g.mad("REP", s, c, 0, repCM(c, s, rfc8797(16384, 4096, false))); err != nil {
		return err
	}
	return g.mad("RTU", c, s, 0, idsCM(ibcm.AttrRTU, c.CommI, s.CommI))
}

func connReconnect(g *connCapture) error {
	for n, sz := range []int{4096, 8192} {
		c, s := endpoint(ibcmtest.Client, 3+n), endpoint(ibcmtest.Server, 3+n)
		if err := g.setup(c, s, rfc8797(sz, sz, true), rfc8797(sz, sz, n == 1)); err != nil {
			return err
		}
		if err := g.teardown(c, s); err != nil {
			return err
		}
	}
	c, s := endpoint(ibcmtest.Client, 5), endpoint(ibcmtest.Server, 5)
	if err := g.mad("REQ", c, s, 0, reqCM(c, s, rfc8797(8192, 8192, true))); err != nil {
		return err
	}
	return g.mad("REJ", s, c, 0, idsCM(ibcm.AttrREJ, s.CommI, c.CommI))
}

func connTimeout(g *connCapture) error {
	c, s := endpoint(ibcmtest.Client, 6), endpoint(ibcmtest.Server, 6)
	if err := g.mad("REQ never answered", c, s, 0, reqCM(c, s, rfc8797(4096, 4096, true))); err != nil {
		return err
	}
	g.at += 90 * time.Second
	return g.setup(endpoint(ibcmtest.Client, 7), endpoint(ibcmtest.Server, 7), rfc8797(4096, 4096, true), rfc8797(4096, 4096, false))
}

func connMany(g *connCapture) error {
	for n := 0; n < 5; n++ {
		c, s := endpoint(ibcmtest.Client, 8+n), endpoint(ibcmtest.Server, 8+n)
		if err := g.setup(c, s, rfc8797(4096, 4096, true), rfc8797(4096, 4096, false)); err != nil {
			return err
		}
	}
	return nil
}

// connIBWrite writes what build makes as a RoCEv2 (Ethernet) pcap.
func connIBWrite(build func(g *connCapture) error) func(path string) error {
	return func(path string) error {
		g := &connCapture{}
		if err := build(g); err != nil {
			return err
		}
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		frames := make([]timedFrame, len(g.pkts))
		for i, p := range g.pkts {
			frames[i] = timedFrame{t0.Add(p.at), p.Frame}
		}
		return writePcap(path, layers.LinkTypeEthernet, frames)
	}
}

func connIWARPTraffic(c *iwCapture) error {
	k := iwSetup(c, 9, mpa.FlagEnhanced, mpa.FlagEnhanced, 2,
		append([]byte{0, 0x80, 0, 0}, rfc8797(4096, 4096, false)...),
		append([]byte{0, 0, 0, 0x80}, rfc8797(4096, 4096, false)...))
	o := iwFPDUOpts{}
	k.send(true, k.iwSend(true, o, mpa.OpSend, 1, 0, true, 0, iwRPCRDMA(0x901, true, 0)))
	k.send(false, k.iwSend(false, o, mpa.OpSendInvalidate, 1, 0, true, 0x5a5a, iwRPCRDMA(0x901, false, 0)))
	k.send(true, k.iwSend(true, o, mpa.OpSend, 2, 0, true, 0, iwRPCRDMA(0x902, true, 0)))
	big := iwRPCRDMA(0x902, false, 6000-60)
	k.send(false, k.iwSend(false, o, mpa.OpSend, 2, 0, false, 0, big[:3000]))
	k.send(false, k.iwSend(false, o, mpa.OpSend, 2, 3000, true, 0, big[3000:]))
	k.close()
	return nil
}
