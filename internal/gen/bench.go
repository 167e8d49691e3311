package main

// Benchmark captures (make bench; not committed: too big). Run as
//
//	go run ./internal/gen -bench-out FILE -bench-packets N
//
// to write a classic pcap of N packets of mixed RoCEv2 traffic: per
// connection an IB CM exchange (REQ, REP, RTU, and DREQ, DREP at the end,
// the real rxe capture's MADs with fresh communication IDs), then rounds of
// RPC-over-RDMA Sends (single and three-packet), RDMA WRITEs, RDMA READ
// request and three-packet response, Send with Invalidate, and ACKs. A new
// connection (new QPNs and communication IDs) starts every 2000 packets.
// Every ICRC is recomputed, so the packets are valid.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm"
	"github.com/cmpd-dissect/cmpd-dissect/layers/ibcm/ibcmtest"
)

// The bench mode is chosen before main parses its own flags: when
// -bench-out is on the command line, init writes the capture and exits.
func init() {
	out, n := "", 0
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch a {
		case "-bench-out", "--bench-out":
			out = val()
		case "-bench-packets", "--bench-packets":
			v, err := strconv.Atoi(val())
			if err != nil || v <= 0 {
				fmt.Fprintln(os.Stderr, "gen: -bench-packets wants a positive number")
				os.Exit(2)
			}
			n = v
		}
	}
	if out == "" {
		return
	}
	if n == 0 {
		n = 200000
	}
	if err := writeBench(out, n); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// benchRealCapture holds the templates taken from real traffic.
const benchRealCapture = "testdata/pcaps/real/rxe-nfs42-rdma.pcap"

// benchTemplate is one packet kind: its bytes and where its fields sit.
type benchTemplate struct {
	data  []byte
	toSrv bool // client → server
}

// Offsets in an untagged RoCEv2/IPv4 frame.
const (
	benchBTH    = 14 + 20 + 8
	benchMAD    = benchBTH + 12 + 8 // after BTH and DETH
	benchCMData = benchMAD + 24
)

func readRealFrames(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		out = append(out, data)
	}
	return out, nil
}

// benchTemplates builds the packet kinds in the order one round emits them.
func benchTemplates() (cm map[string][]byte, round []benchTemplate, err error) {
	real, err := readRealFrames(benchRealCapture)
	if err != nil {
		return nil, nil, fmt.Errorf("bench templates: %w (run from the repository root)", err)
	}
	find := func(op byte, nth int) []byte {
		for _, f := range real {
			if len(f) > benchBTH && f[benchBTH] == op {
				if nth == 0 {
					return f
				}
				nth--
			}
		}
		return nil
	}
	cm = map[string][]byte{}
	for _, f := range real {
		if len(f) > benchCMData && f[benchBTH] == 0x64 {
			attr := binary.BigEndian.Uint16(f[benchMAD+16:])
			switch attr {
			case 0x10:
				cm["REQ"] = f
			case 0x13:
				cm["REP"] = f
			case 0x14:
				cm["RTU"] = f
			case 0x15:
				cm["DREQ"] = f
			case 0x16:
				cm["DREP"] = f
			}
		}
	}
	for _, k := range []string{"REQ", "REP", "RTU", "DREQ", "DREP"} {
		if cm[k] == nil {
			return nil, nil, fmt.Errorf("bench templates: no CM %s in %s", k, benchRealCapture)
		}
	}
	sendCall, ack, write, sendInv := find(0x04, 0), find(0x11, 0), find(0x0a, 0), find(0x17, 0)
	if sendCall == nil || ack == nil || write == nil || sendInv == nil {
		return nil, nil, fmt.Errorf("bench templates: %s lacks SEND_ONLY, ACK, WRITE_ONLY or SEND_ONLY_INV", benchRealCapture)
	}
	// Built ones: READ request and a three-packet response, a
	// three-packet Send whose first packet carries an RPC-over-RDMA header.
	c, s := &ibcmtest.Client, &ibcmtest.Server
	bth := func(op ibcm.Opcode, qp uint32) *ibcm.BTH {
		return &ibcm.BTH{OpCode: op, PKey: 0xffff, DestQP: qp, AckReq: true}
	}
	chunk := make([]byte, 1024)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	// RPC-over-RDMA v1 RDMA_MSG (xid 0x42, credits 128, empty chunk
	// lists) carrying an NFSv4 COMPOUND call with no operations, then
	// filler up to 1024 octets.
	rpcrdma := []byte{0, 0, 0, 0x42, 0, 0, 0, 1, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	for _, w := range []uint32{0x42, 0, 2, 100003, 4, 1, 0, 0, 0, 0, 0, 2, 0} {
		rpcrdma = binary.BigEndian.AppendUint32(rpcrdma, w)
	}
	rpcrdma = append(rpcrdma, chunk[:1024-len(rpcrdma)]...)
	build := func(src, dst *ibcmtest.Endpoint, ls ...gopacket.SerializableLayer) []byte {
		if err != nil {
			return nil
		}
		var f []byte
		f, err = ibcmtest.Frame(ibcmtest.RoCEv2IPv4, src, dst, ls...)
		return f
	}
	readReq := build(s, c, bth(ibcm.OpRCReadRequest, c.QPN), &ibcm.RETH{VA: 0xffff888003a1d000, RKey: 0xb56, DMALen: 3072})
	readFirst := build(c, s, bth(ibcm.OpRCReadRespFirst, s.QPN), &ibcm.AETH{Syndrome: 0x1f, MSN: 1}, gopacket.Payload(chunk))
	readMiddle := build(c, s, bth(ibcm.OpRCReadRespMiddle, s.QPN), gopacket.Payload(chunk))
	readLast := build(c, s, bth(ibcm.OpRCReadRespLast, s.QPN), &ibcm.AETH{Syndrome: 0x1f, MSN: 1}, gopacket.Payload(chunk))
	sendFirst := build(c, s, bth(ibcm.OpRCSendFirst, s.QPN), gopacket.Payload(rpcrdma))
	sendMiddle := build(c, s, bth(ibcm.OpRCSendMiddle, s.QPN), gopacket.Payload(chunk))
	sendLast := build(c, s, bth(ibcm.OpRCSendLast, s.QPN), gopacket.Payload(chunk[:200]))
	if err != nil {
		return nil, nil, fmt.Errorf("bench templates: %w", err)
	}
	// Direction from the real frames' source address (192.0.2.2 is the
	// client there, as in ibcmtest).
	toSrv := func(f []byte) bool { return f[14+15] == 2 }
	round = []benchTemplate{
		{sendCall, toSrv(sendCall)}, {ack, toSrv(ack)},
		{write, toSrv(write)}, {ack, !toSrv(write)},
		{sendInv, toSrv(sendInv)}, {ack, toSrv(ack)},
		{readReq, false}, {readFirst, true}, {readMiddle, true}, {readLast, true},
		{sendFirst, true}, {sendMiddle, true}, {sendLast, true}, {ack, false},
	}
	return cm, round, nil
}

// patchICRC recomputes the ICRC of an untagged RoCEv2/IPv4 frame.
func patchICRC(f []byte) {
	_, computed, ok := ibcm.CheckRoCEv2ICRC(f[14:], false)
	if !ok {
		return
	}
	end := 14 + int(binary.BigEndian.Uint16(f[16:18]))
	binary.BigEndian.PutUint32(f[end-4:], computed)
}

func putU24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

func writeBench(path string, n int) error {
	cm, round, err := benchTemplates()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return err
	}
	t := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	buf := make([]byte, 0, 2048)
	written := 0
	emit := func(tpl []byte, patch func(b []byte)) error {
		buf = append(buf[:0], tpl...)
		if patch != nil {
			patch(buf)
		}
		patchICRC(buf)
		t = t.Add(1500 * time.Nanosecond)
		written++
		return w.WritePacket(gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(buf), Length: len(buf)}, buf)
	}
	const perConn = 2000
	for conn := uint32(0); written < n; conn++ {
		client, server := 0x10000000+conn, 0x20000000+conn
		cqp, sqp := 0x100+conn*2, 0x101+conn*2
		ids := func(local, remote uint32) func(b []byte) {
			return func(b []byte) {
				binary.BigEndian.PutUint32(b[benchCMData:], local)
				binary.BigEndian.PutUint32(b[benchCMData+4:], remote)
			}
		}
		if err := emit(cm["REQ"], func(b []byte) { binary.BigEndian.PutUint32(b[benchCMData:], client) }); err != nil {
			return err
		}
		if err := emit(cm["REP"], ids(server, client)); err != nil {
			return err
		}
		if err := emit(cm["RTU"], ids(client, server)); err != nil {
			return err
		}
		psn := [2]uint32{1000, 5000}
		for k := 0; k < perConn-5 && written < n-2; k++ {
			tp := &round[k%len(round)]
			dir := 0
			qp := sqp
			if !tp.toSrv {
				dir, qp = 1, cqp
			}
			p := psn[dir]
			psn[dir] = (psn[dir] + 1) & 0xffffff
			if err := emit(tp.data, func(b []byte) {
				putU24(b[benchBTH+5:], qp)
				putU24(b[benchBTH+9:], p)
			}); err != nil {
				return err
			}
		}
		if err := emit(cm["DREQ"], ids(client, server)); err != nil {
			return err
		}
		if err := emit(cm["DREP"], ids(server, client)); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: wrote %s: %d packets\n", path, written)
	return nil
}
