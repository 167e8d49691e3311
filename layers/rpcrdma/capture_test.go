package rpcrdma

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// This file finds RPC-over-RDMA Send payloads in the real captures with a
// minimal transport parse of its own (BTH on RoCEv2; MPA/DDP on iWARP), so
// these tests do not depend on the transport layers being written in
// parallel.

// send is one single-packet Send found in a capture.
type send struct {
	frame   int
	payload []byte
	inv     bool
}

// roceSends returns the RPC-over-RDMA payloads of RC SEND_ONLY (0x04),
// SEND_ONLY_IMM (0x05) and SEND_ONLY_INV (0x17) packets.
func roceSends(t testing.TB) []send {
	var out []send
	for i, data := range testcap.Data(t, testcap.RXE) {
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
		udp, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if !ok || udp.DstPort != 4791 {
			continue
		}
		b := udp.Payload
		if len(b) < 16 {
			continue
		}
		op := b[0]
		pad := int(b[1]>>4) & 3
		hdr := 12
		switch op {
		case 0x04:
		case 0x05, 0x17:
			hdr += 4
		default:
			continue
		}
		end := len(b) - 4 - pad
		if end < hdr {
			t.Fatalf("frame %d: short SEND", i+1)
		}
		out = append(out, send{frame: i + 1, payload: b[hdr:end], inv: op == 0x17})
	}
	return out
}

// iwarpSends returns the payloads of untagged Send FPDUs (QN 0, MO 0, L
// set), each TCP segment holding whole FPDUs as in the siw capture;
// retransmitted segments are skipped.
func iwarpSends(t testing.TB) []send {
	var out []send
	seen := map[string]bool{}
	mpaDone := map[string]bool{}
	for i, data := range testcap.Data(t, testcap.SIW) {
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
		tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if !ok || len(tcp.Payload) == 0 {
			continue
		}
		ip := p.NetworkLayer().NetworkFlow()
		dir := fmt.Sprintf("%v:%d>%v:%d", ip.Src(), tcp.SrcPort, ip.Dst(), tcp.DstPort)
		key := fmt.Sprintf("%s/%d", dir, tcp.Seq)
		if seen[key] {
			continue
		}
		seen[key] = true
		b := tcp.Payload
		if strings.HasPrefix(string(b), "MPA ID R") {
			mpaDone[dir] = true
			continue
		}
		if !mpaDone[dir] {
			continue
		}
		for len(b) >= 2 {
			ulpdu := int(binary.BigEndian.Uint16(b))
			total := 2 + ulpdu
			total = (total+3)&^3 + 4 // pad and CRC
			if ulpdu < 18 || total > len(b) {
				break
			}
			ctrl := binary.BigEndian.Uint16(b[2:])
			tagged := ctrl&0x8000 != 0
			last := ctrl&0x4000 != 0
			op := ctrl & 0xf
			if !tagged && last && (op == 3 || op == 4 || op == 5 || op == 6) {
				qn := binary.BigEndian.Uint32(b[8:])
				mo := binary.BigEndian.Uint32(b[16:])
				if qn == 0 && mo == 0 {
					out = append(out, send{frame: i + 1, payload: b[20 : 2+ulpdu], inv: op == 4 || op == 6})
				}
			}
			b = b[total:]
		}
	}
	return out
}
