package main

// Synthetic RPC-over-RDMA captures (RoCEv2/IPv4, built with layers/ibcm's
// and layers/rpcrdma's SerializeTo), each after the CM exchange that names
// the NFS/RDMA service: version 1 errors and deprecated
// procedures, version 2 with RDMA_OPTIONAL and its errors, long chunk
// lists, Sends split over several packets (with a retransmission), an
// unknown version, and broken headers.

import (
	"github.com/gopacket/gopacket"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

func init() {
	register("synth-rpcrdma-v1-errors.pcap",
		"RPC-over-RDMA v1 over RoCEv2/IPv4 SEND_ONLY: an NFSv4.2 call answered by RDMA_ERROR ERR_VERS (1–1), a call answered by RDMA_ERROR ERR_CHUNK, RDMA_MSGP (align 4096, thresh 1024), RDMA_DONE",
		rpcrdmaWrite(v1Errors))
	register("synth-rpcrdma-v2.pcap",
		"RPC-over-RDMA version 2 (draft-cel-nfsv4-rpcrdma-version-two-00) over RoCEv2/IPv4: RDMA_MSG call, RDMA_OPTIONAL (opttype 0x1, 6-octet optinfo) followed by an RPC call, RDMA_OPTIONAL alone, RDMA_ERROR RDMA_ERR_INVAL_OPTION, RDMA_ERR_VERS (1–2), RDMA_ERR_BAD_HEADER",
		rpcrdmaWrite(v2Messages))
	register("synth-rpcrdma-long-chunks.pcap",
		"RPC-over-RDMA v1 RDMA_MSG calls with long chunk lists: 16 read segments at 4 positions, a write list of 3 chunks × 20 segments and a 8-segment reply chunk; an RDMA_NOMSG with a 64-segment reply chunk",
		rpcrdmaWrite(longChunks))
	register("synth-rpcrdma-split-send.pcap",
		"RoCEv2/IPv4 RC Sends split over several packets: a 10000-octet NFSv4.2 WRITE call as SEND_FIRST, MIDDLE, MIDDLE (retransmitted), LAST; its reply SEND_ONLY; a 6000-octet reply as SEND_FIRST, SEND_LAST_WITH_INVALIDATE (IETH R_Key 0xcd1)",
		rpcrdmaWrite(splitSends))
	register("synth-rpcrdma-unknown-version.pcap",
		"RPC-over-RDMA headers of unknown versions 7 and 0 (rdma_xid, rdma_vers, then bytes shown undecoded: rpcrdma.unknown-version)",
		rpcrdmaWrite(unknownVersions))
	register("synth-rpcrdma-broken.pcap",
		"Damaged RPC-over-RDMA headers: a read list that never terminates, a write chunk claiming 0x40000000 segments, a reply chunk cut short, an RPC xid that differs from rdma_xid, an unknown procedure",
		rpcrdmaWrite(brokenHeaders))
}

// rdmaSend is one RC packet of the synthetic captures.
type rdmaSend struct {
	name     string
	toServer bool
	op       ibcm.Opcode
	psn      uint32
	rkey     uint32 // IETH for *_WITH_INVALIDATE
	payload  []byte
}

func rpcrdmaWrite(build func() ([]rdmaSend, error)) func(string) error {
	return ibWrite(ibcmtest.RoCEv2IPv4, func() ([]ibcmtest.Packet, error) {
		sends, err := build()
		if err != nil {
			return nil, err
		}
		// The CM exchange first: it names the NFS/RDMA service, which is
		// what makes the Sends RPC-over-RDMA (broken ones included) for a
		// dissector.
		out, err := nfsSetup(sends)
		if err != nil {
			return nil, err
		}
		for _, s := range sends {
			src, dst := &ibcmtest.Server, &ibcmtest.Client
			if s.toServer {
				src, dst = &ibcmtest.Client, &ibcmtest.Server
			}
			ls := []gopacket.SerializableLayer{&ibcm.BTH{OpCode: s.op, PKey: 0xffff, DestQP: dst.QPN, PSN: s.psn, AckReq: true}}
			if s.op == ibcm.OpRCSendOnlyInv || s.op == ibcm.OpRCSendLastInv {
				ls = append(ls, &ibcm.IETH{RKey: s.rkey})
			}
			ls = append(ls, gopacket.Payload(s.payload))
			f, err := ibcmtest.Frame(ibcmtest.RoCEv2IPv4, src, dst, ls...)
			if err != nil {
				return nil, err
			}
			out = append(out, ibcmtest.Packet{Name: s.name, Frame: f})
		}
		return out, nil
	})
}

// nfsSetup is the REQ (to NFS/RDMA, port 20049), REP and RTU between the
// synthetic client and server QPs, with the Starting PSNs of the first of
// sends each way (as the generator of connection captures sets them).
func nfsSetup(sends []rdmaSend) ([]ibcmtest.Packet, error) {
	c, s := &ibcmtest.Client, &ibcmtest.Server
	req, rep := ibcmtest.REQ(ibcmtest.RoCEv2IPv4), repCM(c, s, ibcmtest.ServerPrivateData)
	var toServer, toClient bool
	for _, m := range sends {
		if m.toServer && !toServer {
			rep.REP.StartingPSN, toServer = m.psn, true
		} else if !m.toServer && !toClient {
			req.REQ.StartingPSN, toClient = m.psn, true
		}
	}
	msgs := []struct {
		name     string
		src, dst *ibcmtest.Endpoint
		cm       *ibcm.CM
	}{
		{"REQ", c, s, req},
		{"REP", s, c, rep},
		{"RTU", c, s, idsCM(ibcm.AttrRTU, c.CommI, s.CommI)},
	}
	var out []ibcmtest.Packet
	for i, m := range msgs {
		f, err := ibcmtest.Frame(ibcmtest.RoCEv2IPv4, m.src, m.dst, ibcmtest.MAD(uint32(i+1), 0x2000+uint64(i), ibcm.MethodSend, m.cm)...)
		if err != nil {
			return nil, err
		}
		out = append(out, ibcmtest.Packet{Name: m.name, Frame: f})
	}
	return out, nil
}

// serialize writes the layers, innermost last, into one buffer.
func serialize(ls ...gopacket.SerializableLayer) ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	for i := len(ls) - 1; i >= 0; i-- {
		if err := ls[i].SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			return nil, err
		}
	}
	return append([]byte(nil), buf.Bytes()...), nil
}

var authSys = func() []byte {
	// AUTH_SYS: stamp, machinename "client", uid 0, gid 0, no gids.
	return []byte{0, 0, 0, 1, 0, 0, 0, 6, 'c', 'l', 'i', 'e', 'n', 't', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
}()

func nfsCall(xid uint32) *rpcrdma.RPC {
	return &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgCall, RPCVersion: 2, Program: rpcrdma.ProgNFS, ProgVersion: 4,
		Procedure: 1, Cred: rpcrdma.Auth{Flavor: rpcrdma.AuthSys, Body: authSys}}
}

func nfsReply(xid uint32) *rpcrdma.RPC {
	return &rpcrdma.RPC{XID: xid, MsgType: rpcrdma.MsgReply, ReplyStat: rpcrdma.ReplyAccepted, AcceptStat: rpcrdma.AcceptSuccess}
}

// compound is an NFSv4.2 COMPOUND of argument-less operations (PUTROOTFH,
// GETFH, SAVEFH …) or, with reply set, their results.
func compound(reply bool, status uint32, ops ...uint32) *rpcrdma.NFS {
	n := &rpcrdma.NFS{Compound: true, Reply: reply, MinorVersion: 2, Status: status, Tag: []byte("synth")}
	for _, op := range ops {
		n.Ops = append(n.Ops, rpcrdma.Op{Opcode: op})
	}
	return n
}

func hdr(xid, vers uint32, proc rpcrdma.Proc) *rpcrdma.Header {
	return &rpcrdma.Header{XID: xid, Version: vers, Credits: 128, Proc: proc}
}

func only(name string, toServer bool, psn uint32, ls ...gopacket.SerializableLayer) (rdmaSend, error) {
	b, err := serialize(ls...)
	return rdmaSend{name: name, toServer: toServer, op: ibcm.OpRCSendOnly, psn: psn, payload: b}, err
}

func collectSends(fs ...func() (rdmaSend, error)) ([]rdmaSend, error) {
	var out []rdmaSend
	for _, f := range fs {
		s, err := f()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func v1Errors() ([]rdmaSend, error) {
	errVers := hdr(0x100, 1, rpcrdma.ProcError)
	errVers.Err, errVers.VersLow, errVers.VersHigh = rpcrdma.ErrVers, 1, 1
	errChunk := hdr(0x101, 1, rpcrdma.ProcError)
	errChunk.Err = rpcrdma.ErrChunk
	msgp := hdr(0x102, 1, rpcrdma.ProcMsgP)
	msgp.Align, msgp.Thresh = 4096, 1024
	return collectSends(
		func() (rdmaSend, error) {
			return only("call", true, 1, hdr(0x100, 1, rpcrdma.ProcMsg), nfsCall(0x100), compound(false, 0, 24, 32, 31))
		},
		func() (rdmaSend, error) { return only("RDMA_ERROR ERR_VERS", false, 1, errVers) },
		func() (rdmaSend, error) {
			return only("call", true, 2, hdr(0x101, 1, rpcrdma.ProcMsg), nfsCall(0x101), compound(false, 0, 24, 32, 31))
		},
		func() (rdmaSend, error) { return only("RDMA_ERROR ERR_CHUNK", false, 2, errChunk) },
		func() (rdmaSend, error) {
			return only("RDMA_MSGP", true, 3, msgp, nfsCall(0x102), compound(false, 0, 24, 32, 31))
		},
		func() (rdmaSend, error) { return only("RDMA_DONE", true, 4, hdr(0x103, 1, rpcrdma.ProcDone)) },
	)
}

func v2Messages() ([]rdmaSend, error) {
	opt := hdr(0x201, 2, rpcrdma.ProcOptional)
	opt.OptType, opt.OptInfo = 1, []byte{0xca, 0xfe, 0xba, 0xbe, 0x00, 0x01}
	optAlone := hdr(0x202, 2, rpcrdma.ProcOptional)
	optAlone.OptType, optAlone.OptInfo = 0x7f000001, []byte{1, 2, 3, 4}
	inval := hdr(0x202, 2, rpcrdma.ProcError)
	inval.Err = rpcrdma.ErrInvalOption
	vers := hdr(0x203, 2, rpcrdma.ProcError)
	vers.Err, vers.VersLow, vers.VersHigh = rpcrdma.ErrVers, 1, 2
	bad := hdr(0x204, 2, rpcrdma.ProcError)
	bad.Err = rpcrdma.ErrBadHeader
	return collectSends(
		func() (rdmaSend, error) {
			return only("v2 RDMA_MSG call", true, 1, hdr(0x200, 2, rpcrdma.ProcMsg), nfsCall(0x200), compound(false, 0, 24, 32, 31))
		},
		func() (rdmaSend, error) {
			return only("v2 RDMA_MSG reply", false, 1, hdr(0x200, 2, rpcrdma.ProcMsg), nfsReply(0x200), compound(true, 0, 24, 32, 31))
		},
		func() (rdmaSend, error) {
			return only("v2 RDMA_OPTIONAL + call", true, 2, opt, nfsCall(0x201), compound(false, 0, 24, 10))
		},
		func() (rdmaSend, error) { return only("v2 RDMA_OPTIONAL alone", true, 3, optAlone) },
		func() (rdmaSend, error) { return only("v2 RDMA_ERR_INVAL_OPTION", false, 2, inval) },
		func() (rdmaSend, error) { return only("v2 RDMA_ERR_VERS", false, 3, vers) },
		func() (rdmaSend, error) { return only("v2 RDMA_ERR_BAD_HEADER", false, 4, bad) },
	)
}

func segs(n int, handle uint32, length uint32) []rpcrdma.Segment {
	out := make([]rpcrdma.Segment, n)
	for i := range out {
		out[i] = rpcrdma.Segment{Handle: handle + uint32(i), Length: length, Offset: 0xffff888000000000 + uint64(i)*uint64(length)}
	}
	return out
}

func longChunks() ([]rdmaSend, error) {
	h := hdr(0x300, 1, rpcrdma.ProcMsg)
	for i := 0; i < 16; i++ {
		h.Reads = append(h.Reads, rpcrdma.ReadSegment{Position: uint32(i/4) * 4096, Segment: segs(1, 0x1000+uint32(i), 1024)[0]})
	}
	for c := 0; c < 3; c++ {
		h.Writes = append(h.Writes, rpcrdma.WriteChunk{Segments: segs(20, 0x2000+uint32(c)<<8, 4096)})
	}
	h.HasReply, h.Reply = true, rpcrdma.WriteChunk{Segments: segs(8, 0x3000, 4096)}
	nomsg := hdr(0x301, 1, rpcrdma.ProcNoMsg)
	nomsg.HasReply, nomsg.Reply = true, rpcrdma.WriteChunk{Segments: segs(64, 0x4000, 1024)}
	return collectSends(
		func() (rdmaSend, error) {
			return only("long lists", true, 1, h, nfsCall(0x300), compound(false, 0, 24, 32, 31))
		},
		func() (rdmaSend, error) { return only("64-segment reply chunk", false, 1, nomsg) },
	)
}

// bigWrite is an NFSv4.2 COMPOUND SEQUENCE, PUTFH, WRITE call with size
// octets of data inline, as RPC call arguments.
func bigWrite(xid uint32, size int) ([]byte, error) {
	body := []byte{0, 0, 0, 5, 's', 'y', 'n', 't', 'h', 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 53}
	body = append(body, make([]byte, 32)...)
	body = append(body, 0, 0, 0, 22, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 38)
	body = append(body, make([]byte, 28)...)
	body = append(body, byte(size>>24), byte(size>>16), byte(size>>8), byte(size))
	for i := 0; i < size; i++ {
		body = append(body, byte(i*7))
	}
	return serialize(hdr(xid, 1, rpcrdma.ProcMsg), nfsCall(xid), gopacket.Payload(body))
}

func splitSends() ([]rdmaSend, error) {
	call, err := bigWrite(0x400, 10000)
	if err != nil {
		return nil, err
	}
	const mtu = 4096
	cut := func(b []byte, i int) []byte { return b[min(i*mtu, len(b)):min((i+1)*mtu, len(b))] }
	// Make the call four packets: 4096 × 2, the rest split once more.
	p0, p1, rest := cut(call, 0), cut(call, 1), call[min(2*mtu, len(call)):]
	p2, p3 := rest[:len(rest)/2&^3], rest[len(rest)/2&^3:]
	// The WRITE's reply: SEQUENCE, PUTFH, WRITE results (count 10000,
	// FILE_SYNC, a verifier).
	wres := be32s(0, 5)
	wres = append(wres, 's', 'y', 'n', 't', 'h', 0, 0, 0)
	wres = append(wres, be32s(3, 53, 0)...)
	wres = append(wres, make([]byte, 36)...)
	wres = append(wres, be32s(22, 0, 38, 0, 10000, 2, 0x5eed, 0x5eed)...)
	reply, err := serialize(hdr(0x400, 1, rpcrdma.ProcMsg), nfsReply(0x400), gopacket.Payload(wres))
	if err != nil {
		return nil, err
	}
	// A READDIR call (PUTROOTFH, READDIR) and its 6000-octet reply in two
	// packets, the last one with invalidate: the directory entries are
	// opaque filler after an empty list.
	call2, err := serialize(hdr(0x401, 1, rpcrdma.ProcMsg), nfsCall(0x401),
		gopacket.Payload(append(be32s(0, 2, 2, 24, 26), make([]byte, 28)...)))
	if err != nil {
		return nil, err
	}
	dres := append(be32s(0, 0, 2, 24, 0, 26, 0), make([]byte, 8)...)
	dres = append(dres, be32s(0, 1)...)
	big, err := serialize(hdr(0x401, 1, rpcrdma.ProcMsg), nfsReply(0x401), gopacket.Payload(dres))
	if err != nil {
		return nil, err
	}
	big = append(big, make([]byte, 6000-len(big))...)
	return []rdmaSend{
		{"WRITE call SEND_FIRST", true, ibcm.OpRCSendFirst, 10, 0, p0},
		{"SEND_MIDDLE", true, ibcm.OpRCSendMiddle, 11, 0, p1},
		{"SEND_MIDDLE", true, ibcm.OpRCSendMiddle, 12, 0, p2},
		{"SEND_MIDDLE retransmitted", true, ibcm.OpRCSendMiddle, 12, 0, p2},
		{"SEND_LAST", true, ibcm.OpRCSendLast, 13, 0, p3},
		{"reply SEND_ONLY", false, ibcm.OpRCSendOnly, 20, 0, reply},
		{"READDIR call SEND_ONLY", true, ibcm.OpRCSendOnly, 14, 0, call2},
		{"reply SEND_FIRST", false, ibcm.OpRCSendFirst, 21, 0, big[:mtu]},
		{"reply SEND_LAST_WITH_INVALIDATE", false, ibcm.OpRCSendLastInv, 22, 0xcd1, big[mtu:]},
	}, nil
}

// be32s encodes XDR unsigned integers.
func be32s(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	return b
}

func unknownVersions() ([]rdmaSend, error) {
	return collectSends(
		func() (rdmaSend, error) {
			return only("version 7", true, 1, &rpcrdma.Header{XID: 0x500, Version: 7,
				Unknown: []byte{0, 0, 0, 0x80, 0, 0, 0, 9, 0xde, 0xad, 0xbe, 0xef}})
		},
		func() (rdmaSend, error) {
			return only("version 0", true, 2, &rpcrdma.Header{XID: 0x501, Version: 0, Unknown: []byte{0, 0, 0, 1}})
		},
	)
}

func brokenHeaders() ([]rdmaSend, error) {
	w := be32s
	// xid mismatch: header 0x600, RPC 0x6ff.
	mismatch, err := serialize(hdr(0x600, 1, rpcrdma.ProcMsg), nfsCall(0x6ff), compound(false, 0, 24, 10))
	if err != nil {
		return nil, err
	}
	return []rdmaSend{
		{"read list never terminates", true, ibcm.OpRCSendOnly, 1, 0,
			w(0x601, 1, 128, 0, 1, 0, 0x10, 1024, 0, 0, 1, 0, 0x11, 1024, 0, 0)},
		{"write chunk claims 0x40000000 segments", true, ibcm.OpRCSendOnly, 2, 0,
			w(0x602, 1, 128, 0, 0, 1, 0x40000000, 0x20, 4096, 0, 0)},
		{"reply chunk cut short", true, ibcm.OpRCSendOnly, 3, 0, w(0x603, 1, 128, 1, 0, 0, 1, 2, 0x30, 4096)},
		{"RPC xid differs", true, ibcm.OpRCSendOnly, 4, 0, mismatch},
		{"unknown procedure 9", true, ibcm.OpRCSendOnly, 5, 0, w(0x605, 1, 128, 9, 0xabcdef01)},
	}, nil
}
