package main

// Synthetic InfiniBand captures: every CM message in every encoding layers/
// ibcm decodes (RoCEv2 over IPv4, IPv6 and 802.1Q, RoCEv1, LINKTYPE_INFINIBAND
// with and without GRH, ERF), REJ reasons with their ARI, RC/UD data with
// every extension header chain, and deliberately broken ICRC/VCRC. Every
// byte is built by layers/ibcm's SerializeTo (through ibcmtest).

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
)

func init() {
	for _, enc := range ibcmtest.Encodings {
		enc := enc
		register(fmt.Sprintf("synth-ibcm-%s-cm-all.pcap", enc),
			fmt.Sprintf("IB CM over %s: ClassPortInfo Get/GetResp, REQ (rdma_cm IP CM header + RFC 8797 v1 R=1 4K/4K), MRA, REP (RFC 8797 R=0), RTU, LAP, MRA of LAP, APR, DREQ, DREP, a REQ answered by REJ (consumer reject), SIDR_REQ, SIDR_REP; ICRC (and VCRC) correct", enc.Description()),
			ibWrite(enc, func() ([]ibcmtest.Packet, error) { return ibcmtest.CMExchange(enc) }))
	}
	register("synth-ibcm-rocev2-ipv4-rej-reasons.pcap",
		"IB CM REJ over RoCEv2/IPv4 with reasons 1, 4, 8, 12–17, 24, 26–29, 31, 32, 35 and the ARI each defines (GID, LID, SL, traffic class, hop limit, rate, ClassPortInfo redirect, MTU, responder resources, consumer bytes with NVMe-oF REJ private data, RNR retry, class version, flow label, CA GUID); SIDR_REP and APR redirecting with a ClassPortInfo",
		ibWrite(ibcmtest.RoCEv2IPv4, func() ([]ibcmtest.Packet, error) { return ibcmtest.Rejects(ibcmtest.RoCEv2IPv4) }))
	register("synth-ibcm-rocev2-ipv4-ulps.pcap",
		"IB CM REQs over RoCEv2/IPv4 to other ULPs' rdma_cm ports with their private data after the IP CM header: NVMe-oF (4420, nvme_rdma_cm_req), iSER (3260, iser_cm_hdr), Lustre o2iblnd (987, kib_msg CONNREQ little-endian), SRP (5555, srp_login_req_rdma), NFS/RDMA (20049) with no ULP data",
		ibWrite(ibcmtest.RoCEv2IPv4, func() ([]ibcmtest.Packet, error) { return ibcmtest.ULPRequests(ibcmtest.RoCEv2IPv4) }))
	register("synth-ibcm-rocev2-ipv4-rc-data.pcap",
		"RoCEv2/IPv4 data packets for every extension header chain: RC SEND_ONLY (also padded), SEND_ONLY_WITH_INVALIDATE (IETH), RDMA WRITE ONLY with immediate (RETH, ImmDt), READ REQUEST, READ RESPONSE ONLY, ACK, NAK, COMPARE_SWAP, ATOMIC ACK, UD SEND_ONLY_WITH_IMMEDIATE (DETH, ImmDt), CNP",
		ibWrite(ibcmtest.RoCEv2IPv4, func() ([]ibcmtest.Packet, error) { return ibcmtest.RCTraffic(ibcmtest.RoCEv2IPv4) }))
	for _, enc := range ibcmtest.Encodings {
		enc := enc
		what := "a good REQ, the same REQ with its ICRC flipped (other checksums kept right: ibcm.icrc-bad)"
		native := enc == ibcmtest.IBLocal || enc == ibcmtest.IBGlobal || enc == ibcmtest.ERF
		if native {
			what += ", the same REQ with its VCRC flipped (ibcm.vcrc-bad, ICRC good)"
		}
		register(fmt.Sprintf("synth-ibcm-%s-bad-crc.pcap", enc),
			fmt.Sprintf("%s: %s", enc.Description(), what),
			ibWrite(enc, func() ([]ibcmtest.Packet, error) {
				pkts, err := ibcmtest.CMExchange(enc)
				if err != nil {
					return nil, err
				}
				req := pkts[2]
				out := []ibcmtest.Packet{req, {Name: "REQ bad ICRC", Frame: ibcmtest.CorruptICRC(enc, req.Frame)}}
				if native {
					out = append(out, ibcmtest.Packet{Name: "REQ bad VCRC", Frame: ibcmtest.CorruptVCRC(req.Frame)})
				}
				return out, nil
			}))
	}
}

// ibWrite writes the packets build returns as a classic pcap of enc's link
// type, one millisecond apart from a fixed start (reproducible bytes).
func ibWrite(enc ibcmtest.Encoding, build func() ([]ibcmtest.Packet, error)) func(string) error {
	return func(path string) error {
		pkts, err := build()
		if err != nil {
			return err
		}
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		frames := make([]timedFrame, len(pkts))
		for i, p := range pkts {
			ts := t0.Add(time.Duration(i) * time.Millisecond)
			if enc == ibcmtest.ERF && len(p.Frame) >= 8 {
				// ERF timestamp: seconds in the upper 32 bits, binary
				// fraction in the lower, little-endian.
				frac := uint64(ts.Nanosecond()) << 32 / 1e9
				binary.LittleEndian.PutUint64(p.Frame, uint64(ts.Unix())<<32|frac)
			}
			frames[i] = timedFrame{ts, p.Frame}
		}
		return writePcap(path, layers.LinkType(enc.LinkType()), frames)
	}
}

// timedFrame is one frame of a generated capture and its timestamp.
type timedFrame struct {
	t    time.Time
	data []byte
}

// writePcap writes frames as a classic pcap (microsecond timestamps,
// snap length 65535) of link type lt.
func writePcap(path string, lt layers.LinkType, frames []timedFrame) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, lt); err != nil {
		f.Close()
		return err
	}
	for _, p := range frames {
		ci := gopacket.CaptureInfo{Timestamp: p.t, CaptureLength: len(p.data), Length: len(p.data)}
		if err := w.WritePacket(ci, p.data); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
