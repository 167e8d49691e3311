package main

// Synthetic captures for the per-queue-pair transport analysis (package
// transport) and the RPC-over-RDMA credit check (conn): PSN gaps the
// capture lost and the network lost, retransmissions, every NAK code, an
// RNR NAK and its retry, congestion marks, a client over its credits.
// Packets are built with layers/ibcm's and layers/rpcrdma's SerializeTo
// through the connCapture of conn.go.

import (
	"encoding/binary"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

func init() {
	register("synth-transport-rocev2-loss.pcap",
		"RoCEv2/IPv4 NFS/RDMA connection whose RC requests lose packets: an ACK for a PSN the capture never showed (transport.capture-loss: the capture lost it), a skipped PSN later covered by an ACK (transport.psn-gap warning, then transport.capture-loss), a skipped PSN the responder NAKs with PSN Sequence Error (transport.nak-sequence) and the requester resends go-back-N (transport.retransmission: the lost packet, then the one seen 3 ms before), an ACK whose MSN goes back (transport.msn-regress); ACK latency 1 ms",
		connIBWrite(transportLoss))
	register("synth-transport-rocev2-naks.pcap",
		"RoCEv2/IPv4: five NFS/RDMA connections, each with one RDMA Write or Send answered by a NAK: Invalid Request, Remote Access Error, Remote Operational Error, Invalid RD Request (transport.nak, error), and an RNR NAK with timer 14 = 1.28 ms (transport.rnr-nak) followed by the Send's retry 1.28 ms later (transport.retransmission) and its ACK",
		connIBWrite(transportNAKs))
	register("synth-transport-rocev2-congestion.pcap",
		"RoCEv2/IPv4 NFS/RDMA connection with congestion marks: an RDMA Write marked ECN CE in its IP header (transport.ecn-ce), the CNP the receiver sends back to the writer's QP (BTH opcode 0x81, transport.cnp), a Write with BTH FECN set (transport.fecn) and its ACK with BECN set (transport.becn)",
		connIBWrite(transportCongestion))
	register("synth-conn-rocev2-credits.pcap",
		"RoCEv2/IPv4 NFS/RDMA connection: the server's first reply grants 2 credits, then the client sends three calls without waiting for their replies (conn.credits-exceeded on the third, RFC 8166 §3.3.1), then the replies",
		connIBWrite(connCredits))
}

// ack sends an ACK, NAK or RNR NAK (AETH syndrome) of PSN psn to dst,
// the requester.
func (g *connCapture) ack(name string, src, dst *ibcmtest.Endpoint, psn uint32, syndrome uint8, msn uint32) error {
	return g.frame(name, src, dst, &ibcm.BTH{OpCode: ibcm.OpRCAck, PKey: 0xffff, DestQP: dst.QPN, PSN: psn},
		&ibcm.AETH{Syndrome: syndrome, MSN: msn})
}

// AETH syndromes: an ACK with credit count 31 (no flow control), NAK
// codes, RNR NAK timers.
const (
	synACK = 0x1f
	synNAK = 0x60
	synRNR = 0x20
)

// nfsSetup sets up an NFS/RDMA connection between the n-th synthetic
// client and server.
func (g *connCapture) nfsSetup(n int) (c, s *ibcmtest.Endpoint, err error) {
	c, s = endpoint(ibcmtest.Client, n), endpoint(ibcmtest.Server, n)
	return c, s, g.setup(c, s, rfc8797(4096, 4096, true), rfc8797(4096, 4096, false))
}

func transportLoss(g *connCapture) error {
	c, s, err := g.nfsSetup(0)
	if err != nil {
		return err
	}
	call := func(xid uint32) []byte {
		b, e := rpcCall(xid, nil, 0)
		if err == nil {
			err = e
		}
		return b
	}
	send := func(name string, psn uint32, xid uint32) error {
		return g.rcAt(name, c, s, ibcm.OpRCSendOnly, psn, 0, call(xid))
	}
	// In order, ACKed 1 ms later.
	p := g.nextPSN(s)
	if err := send("call 0x601", p, 0x601); err != nil {
		return err
	}
	if err := g.ack("ACK", s, c, p, synACK, 1); err != nil {
		return err
	}
	// A call the capture missed, then its ACK.
	p = g.nextPSN(s)
	g.at += time.Millisecond
	if err := g.ack("ACK of a call not captured", s, c, p, synACK, 2); err != nil {
		return err
	}
	// A call the capture missed, the next one, then the ACK of both.
	g.nextPSN(s)
	g.at += time.Millisecond
	p = g.nextPSN(s)
	if err := send("call 0x604 after a call not captured", p, 0x604); err != nil {
		return err
	}
	if err := g.ack("ACK covering both", s, c, p, synACK, 4); err != nil {
		return err
	}
	// A call the network lost: the next one draws a NAK PSN Sequence
	// Error; the requester resends from the lost one (go-back-N).
	lost := g.nextPSN(s)
	g.at += time.Millisecond
	p = g.nextPSN(s)
	if err := send("call 0x606 after a call lost", p, 0x606); err != nil {
		return err
	}
	if err := g.ack("NAK PSN Sequence Error", s, c, lost, synNAK|0, 4); err != nil {
		return err
	}
	if err := send("call 0x605 resent", lost, 0x605); err != nil {
		return err
	}
	if err := send("call 0x606 resent", p, 0x606); err != nil {
		return err
	}
	if err := g.ack("ACK", s, c, p, synACK, 6); err != nil {
		return err
	}
	// An ACK of a later PSN with a smaller MSN.
	p = g.nextPSN(s)
	if err := send("call 0x607", p, 0x607); err != nil {
		return err
	}
	if err := g.ack("ACK with MSN going back", s, c, p, synACK, 3); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	return g.teardown(c, s)
}

func transportNAKs(g *connCapture) error {
	for code := uint8(1); code <= 5; code++ {
		c, s, err := g.nfsSetup(int(code))
		if err != nil {
			return err
		}
		p := g.nextPSN(s)
		if code == 5 {
			// A Send to a server with no receive buffer posted: RNR NAK
			// timer 14 (1.28 ms), the retry after it, the ACK.
			b, err := rpcCall(0x700, nil, 0)
			if err != nil {
				return err
			}
			if err := g.rcAt("call", c, s, ibcm.OpRCSendOnly, p, 0, b); err != nil {
				return err
			}
			if err := g.ack("RNR NAK timer 14", s, c, p, synRNR|14, 0); err != nil {
				return err
			}
			g.at += 1280*time.Microsecond - time.Millisecond
			if err := g.rcAt("call after the RNR timer", c, s, ibcm.OpRCSendOnly, p, 0, b); err != nil {
				return err
			}
			if err := g.ack("ACK", s, c, p, synACK, 1); err != nil {
				return err
			}
		} else {
			if err := g.frame("RDMA WRITE_ONLY", c, s, &ibcm.BTH{OpCode: ibcm.OpRCWriteOnly, PKey: 0xffff, DestQP: s.QPN, PSN: p, AckReq: true},
				&ibcm.RETH{VA: 0xffff888000010000, RKey: 0x1234, DMALen: 64}, payload64()); err != nil {
				return err
			}
			if err := g.ack("NAK", s, c, p, synNAK|code, 0); err != nil {
				return err
			}
		}
		if err := g.teardown(c, s); err != nil {
			return err
		}
	}
	return nil
}

func transportCongestion(g *connCapture) error {
	c, s, err := g.nfsSetup(0)
	if err != nil {
		return err
	}
	write := func(name string, fecn bool) (uint32, error) {
		p := g.nextPSN(s)
		return p, g.frame(name, c, s, &ibcm.BTH{OpCode: ibcm.OpRCWriteOnly, PKey: 0xffff, DestQP: s.QPN, PSN: p, AckReq: true, FECN: fecn},
			&ibcm.RETH{VA: 0xffff888000010000, RKey: 0x1234, DMALen: 64}, payload64())
	}
	p, err := write("RDMA WRITE_ONLY marked CE", false)
	if err != nil {
		return err
	}
	markCE(g.pkts[len(g.pkts)-1].Frame)
	if err := g.ack("ACK", s, c, p, synACK, 1); err != nil {
		return err
	}
	// The CNP goes to the QP whose packets were marked: the writer's.
	if err := g.frame("CNP", s, c, &ibcm.BTH{OpCode: ibcm.OpCNP, PKey: 0xffff, DestQP: c.QPN}, payload16()); err != nil {
		return err
	}
	if p, err = write("RDMA WRITE_ONLY with FECN", true); err != nil {
		return err
	}
	if err := g.frame("ACK with BECN", s, c, &ibcm.BTH{OpCode: ibcm.OpRCAck, PKey: 0xffff, DestQP: c.QPN, PSN: p, BECN: true},
		&ibcm.AETH{Syndrome: synACK, MSN: 2}); err != nil {
		return err
	}
	return g.teardown(c, s)
}

// markCE sets the ECN field of a RoCEv2/IPv4 frame to Congestion
// Experienced and fixes the IP header checksum (the ICRC leaves the
// field out).
func markCE(frame []byte) {
	ip := frame[14:34]
	ip[1] |= 0x03
	ip[10], ip[11] = 0, 0
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
}

func connCredits(g *connCapture) error {
	c, s, err := g.nfsSetup(0)
	if err != nil {
		return err
	}
	reply := func(xid uint32) error {
		b, err := serialize(&rpcrdma.Header{XID: xid, Version: 1, Credits: 2, Proc: rpcrdma.ProcMsg}, nfsReply(xid), compound(true, 0, 24, 10))
		if err != nil {
			return err
		}
		return g.rc("reply", s, c, ibcm.OpRCSendOnly, 0, b)
	}
	call := func(xid uint32) error {
		b, err := rpcCall(xid, nil, 0)
		if err != nil {
			return err
		}
		return g.rc("call", c, s, ibcm.OpRCSendOnly, 0, b)
	}
	if err := call(0x801); err != nil {
		return err
	}
	if err := reply(0x801); err != nil {
		return err
	}
	for xid := uint32(0x802); xid <= 0x804; xid++ {
		if err := call(xid); err != nil {
			return err
		}
	}
	for xid := uint32(0x802); xid <= 0x804; xid++ {
		if err := reply(xid); err != nil {
			return err
		}
	}
	return g.teardown(c, s)
}

func payload64() gopacket.Payload { return gopacket.Payload(make([]byte, 64)) }

// payload16 is a CNP's 16 reserved octets.
func payload16() gopacket.Payload { return gopacket.Payload(make([]byte, 16)) }
