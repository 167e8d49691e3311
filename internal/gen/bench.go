package main

// Benchmark captures (make bench; not committed: too big). Run as
//
//	go run ./internal/gen -bench-out FILE -bench-packets N
//
// to write a classic pcap of N packets (N ≥ 33) of mixed RoCEv2 traffic.
// Connections come and go: four are open at once, each set up by an IB CM
// exchange (REQ, REP, RTU: the real rxe capture's MADs with fresh
// communication IDs, QPNs and starting PSNs), then carrying rounds of
// RPC-over-RDMA traffic on the QPNs it negotiated (Sends single and
// three-packet, calls offering reply and read chunks, RDMA WRITE into the
// reply chunk, Send with Invalidate of its handle, RDMA READ of a read
// chunk, ACKs), then torn down (DREQ, DREP) after 500 packets of its own.
// A 2M-packet capture is the 200k one's mix, ten times as long: 4000
// connections instead of 400, never more than four open. Every ICRC is
// recomputed, so the packets are valid.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"strconv"
	"syscall"
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
	if len(args) > 1 && args[0] == "-bench-measure" {
		os.Exit(benchMeasure(args[1:]))
	}
	if len(args) == 2 && args[0] == "-bench-floor" {
		os.Exit(benchFloor(args[1]))
	}
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

// benchMeasure runs one command (make bench's measurements), its stdout to
// /dev/null, and prints "wall-seconds cpu-seconds peak-rss-KiB" from the
// kernel's rusage of the child (microsecond CPU times: /usr/bin/time
// rounds to 10 ms, too coarse for runs of a few tens of milliseconds).
func benchMeasure(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		return 1
	}
	cmd.Stdout, cmd.Stderr = devnull, devnull
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "gen: -bench-measure:", err)
		return 1
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "gen: -bench-measure: no rusage on this system")
		return 1
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("%.4f %.4f %d\n", wall.Seconds(), cpu.Seconds(), ru.Maxrss)
	return 0
}

// benchFloor is the least any dissector of a classic pcap file must do
// to check every RoCE ICRC: walk the records of the mapped file (giving the
// pages back as cmpd-dissect does) and run CRC-32 over each packet. make
// bench times it as the "floor" row: the share of the budget that reading
// and the ICRC check alone take.
func benchFloor(path string) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		return 1
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < 24 {
		fmt.Fprintln(os.Stderr, "gen: -bench-floor: not a pcap file:", path)
		return 1
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		return 1
	}
	defer syscall.Munmap(b)
	var x uint32
	n, dropped := 0, 0
	for off := 24; off+16 <= len(b); n++ {
		capLen := int(binary.LittleEndian.Uint32(b[off+8:]))
		if off+16+capLen > len(b) {
			break
		}
		x += crc32.ChecksumIEEE(b[off+16 : off+16+capLen])
		off += 16 + capLen
		if off-dropped > 4<<20 {
			end := (off - 1<<20) &^ (1<<16 - 1)
			syscall.Madvise(b[dropped:end], syscall.MADV_DONTNEED)
			dropped = end
		}
	}
	fmt.Printf("%d packets, CRC-32 sum %08x\n", n, x)
	return 0
}

// benchRealCapture holds the templates taken from real traffic.
const benchRealCapture = "testdata/pcaps/real/rxe-nfs42-rdma.pcap"

// benchTemplate is one packet kind: its bytes, its direction, and where
// its RPC xids sit (patched per round so every call has its own xid).
type benchTemplate struct {
	data  []byte
	toSrv bool // client → server
	// xidAt are the offsets of the RPC-over-RDMA and RPC xids, patched
	// with the round's xid plus xidDelta (a call and its reply share one).
	xidAt    []int
	xidDelta uint32
	// readReq: an RDMA READ request; the next readResp templates are its
	// response and carry its PSNs.
	readReq  bool
	readResp bool
	// ack: an RC ACKNOWLEDGE, whose PSN is the last one the other side sent.
	ack bool
}

// Offsets in an untagged RoCEv2/IPv4 frame.
const (
	benchBTH    = 14 + 20 + 8
	benchMAD    = benchBTH + 12 + 8 // after BTH and DETH
	benchCMData = benchMAD + 24
	// Where the CM messages carry QPNs and starting PSNs (IBTA 12.6):
	// REQ Local QPN at 32, Starting PSN at 44; REP Local QPN at 12,
	// Starting PSN at 20; DREQ Remote QPN at 8. All 24-bit.
	benchREQQPN  = benchCMData + 32
	benchREQPSN  = benchCMData + 44
	benchREPQPN  = benchCMData + 12
	benchREPPSN  = benchCMData + 20
	benchDREQQPN = benchCMData + 8
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

// xidOffsets finds where xid sits in an RC frame's payload after the BTH
// (the RPC-over-RDMA header's first word, and the RPC message's when the
// header is RDMA_MSG).
func xidOffsets(f []byte, xid uint32) []int {
	var at []int
	for i := benchBTH + 12; i+4 <= len(f)-4; i += 4 {
		if binary.BigEndian.Uint32(f[i:]) == xid {
			at = append(at, i)
		}
	}
	return at
}

// benchTemplates builds the packet kinds in the order one round emits them:
// the start of the real rxe NFSv4.2 mount (frames 4-13: NULL call and reply,
// an EXCHANGE_ID call offering a reply chunk, the server's RDMA WRITE into
// it and its Send with Invalidate of that chunk's handle, with the ACKs),
// then an RDMA READ of a three-packet response and a three-packet Send
// whose first packet carries an RPC-over-RDMA call with a read chunk.
func benchTemplates() (cm map[string][]byte, round []benchTemplate, err error) {
	real, err := readRealFrames(benchRealCapture)
	if err != nil {
		return nil, nil, fmt.Errorf("bench templates: %w (run from the repository root)", err)
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
	// Frames 4-13 of the real capture (index 3-12), checked by opcode.
	wantOps := []byte{0x04, 0x11, 0x04, 0x11, 0x04, 0x11, 0x0a, 0x11, 0x17, 0x11}
	if len(real) < 13 {
		return nil, nil, fmt.Errorf("bench templates: %s has %d frames, want at least 13", benchRealCapture, len(real))
	}
	// Direction from the real frames' source address (192.0.2.2 is the
	// client there, as in ibcmtest).
	toSrv := func(f []byte) bool { return f[14+15] == 2 }
	for i, op := range wantOps {
		f := real[3+i]
		if len(f) <= benchBTH+12 || f[benchBTH] != op {
			return nil, nil, fmt.Errorf("bench templates: frame %d of %s is not opcode 0x%02x", 4+i, benchRealCapture, op)
		}
		tp := benchTemplate{data: f, toSrv: toSrv(f), ack: op == 0x11}
		switch op {
		case 0x04, 0x17:
			hdr := benchBTH + 12
			if op == 0x17 {
				hdr += 4 // IETH
			}
			tp.xidAt = xidOffsets(f, binary.BigEndian.Uint32(f[hdr:]))
			if i >= 4 {
				tp.xidDelta = 1 // the EXCHANGE_ID call and its reply
			}
		case 0x0a:
			// The RDMA WRITE of the EXCHANGE_ID reply into its call's
			// reply chunk: the reply's RPC xid, and the Write's VA, whose
			// upper half is the call's xid too (the Linux client puts it
			// in its MR's IOVA, so in the segment's offset, which the call
			// carries): patched like the call's, or the reply is another
			// call's and the Write falls outside the segment.
			tp.xidAt, tp.xidDelta = xidOffsets(f, binary.BigEndian.Uint32(real[3+4][benchBTH+12:])), 1
		}
		round = append(round, tp)
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
	// RPC-over-RDMA v1 RDMA_MSG (xid 0x42, credits 128) with a read list of
	// one segment (position 0, handle 0xb56, 3072 octets), empty write list
	// and reply chunk, carrying an NFSv4 NULL call, then filler up to 1024
	// octets. The server answers it like the real NULL call (frame 6).
	var rpcrdma []byte
	for _, w := range []uint32{0x42, 1, 0x80, 0, 1, 0, 0xb56, 3072, 0xffff8880, 0x03a1d000, 0, 0, 0} {
		rpcrdma = binary.BigEndian.AppendUint32(rpcrdma, w)
	}
	for _, w := range []uint32{0x42, 0, 2, 100003, 4, 0, 0, 0, 0, 0} {
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
	ackFrom := func(toServer bool) benchTemplate {
		for _, tp := range round {
			if tp.ack && tp.toSrv == toServer {
				return tp
			}
		}
		return round[1]
	}
	if err != nil {
		return nil, nil, fmt.Errorf("bench templates: %w", err)
	}
	nullReply := round[2]
	nullReply.xidDelta = 2
	round = append(round,
		benchTemplate{data: sendFirst, toSrv: true, xidAt: xidOffsets(sendFirst, 0x42), xidDelta: 2},
		benchTemplate{data: sendMiddle, toSrv: true},
		benchTemplate{data: sendLast, toSrv: true},
		ackFrom(false),
		benchTemplate{data: readReq, readReq: true},
		benchTemplate{data: readFirst, toSrv: true, readResp: true},
		benchTemplate{data: readMiddle, toSrv: true, readResp: true},
		benchTemplate{data: readLast, toSrv: true, readResp: true},
		nullReply,
		ackFrom(true),
	)
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

// benchPerConn is how many packets one connection lives for, CM exchange
// and teardown included; benchConcurrent connections are open at once,
// their rounds interleaved.
const (
	benchPerConn    = 2000
	benchConcurrent = 4
)

// benchConn is one connection of the benchmark capture.
type benchConn struct {
	client, server uint32    // communication IDs
	cqp, sqp       uint32    // the QPNs its REQ and REP carry
	psn            [2]uint32 // next PSN sent: [0] client, [1] server
	msn            [2]uint32 // MSN of the last ACK sent: [0] client, [1] server
	readPSN        uint32    // the PSN of the next RDMA Read response packet
	xid            uint32
	k, left        int // position in the round, packets left before teardown
}

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
	ids := func(local, remote uint32) func(b []byte) {
		return func(b []byte) {
			binary.BigEndian.PutUint32(b[benchCMData:], local)
			binary.BigEndian.PutUint32(b[benchCMData+4:], remote)
		}
	}
	var next uint32
	// open sets up connection number next: REQ, REP, RTU.
	open := func(left int) (*benchConn, error) {
		i := next
		next++
		c := &benchConn{
			client: 0x10000000 + i, server: 0x20000000 + i,
			cqp: 0x100 + i*2, sqp: 0x101 + i*2,
			psn: [2]uint32{(0x1000 + i*7919) & 0xffffff, (0x800000 + i*104729) & 0xffffff},
			xid: 0x10000000 + i<<16, left: left,
		}
		if err := emit(cm["REQ"], func(b []byte) {
			binary.BigEndian.PutUint32(b[benchCMData:], c.client)
			putU24(b[benchREQQPN:], c.cqp)
			// Each side's Starting PSN is the one it expects to
			// receive (IBTA Vol 1 §12.7.21; Linux's rq_psn).
			putU24(b[benchREQPSN:], c.psn[1])
		}); err != nil {
			return nil, err
		}
		if err := emit(cm["REP"], func(b []byte) {
			ids(c.server, c.client)(b)
			putU24(b[benchREPQPN:], c.sqp)
			putU24(b[benchREPPSN:], c.psn[0])
		}); err != nil {
			return nil, err
		}
		return c, emit(cm["RTU"], ids(c.client, c.server))
	}
	// close tears connection c down: DREQ from the client, DREP.
	close := func(c *benchConn) error {
		if err := emit(cm["DREQ"], func(b []byte) {
			ids(c.client, c.server)(b)
			putU24(b[benchDREQQPN:], c.sqp)
		}); err != nil {
			return err
		}
		return emit(cm["DREP"], ids(c.server, c.client))
	}
	// step emits c's next data packet.
	step := func(c *benchConn) error {
		tp := &round[c.k%len(round)]
		c.k++
		c.left--
		if c.k%len(round) == 0 {
			c.xid += 4
		}
		dir, qp := 0, c.sqp
		if !tp.toSrv {
			dir, qp = 1, c.cqp
		}
		var p, msn uint32
		switch {
		case tp.ack:
			p = (c.psn[1-dir] - 1) & 0xffffff
			// The MSN grows with the messages acknowledged: one per ACK
			// is enough for a sequence that never goes back.
			c.msn[dir] = (c.msn[dir] + 1) & 0xffffff
			msn = c.msn[dir]
		case tp.readReq:
			// The request uses one PSN per response packet.
			p, c.readPSN = c.psn[dir], c.psn[dir]
			c.psn[dir] = (c.psn[dir] + 3) & 0xffffff
		case tp.readResp:
			p = c.readPSN
			c.readPSN = (c.readPSN + 1) & 0xffffff
		default:
			p = c.psn[dir]
			c.psn[dir] = (c.psn[dir] + 1) & 0xffffff
		}
		return emit(tp.data, func(b []byte) {
			putU24(b[benchBTH+5:], qp)
			putU24(b[benchBTH+9:], p)
			if tp.ack {
				putU24(b[benchBTH+13:], msn)
			}
			for _, at := range tp.xidAt {
				binary.BigEndian.PutUint32(b[at:], c.xid+tp.xidDelta)
			}
		})
	}
	// Keep benchConcurrent connections open; each lives for benchPerConn
	// packets of the whole capture (benchPerConn/benchConcurrent of its
	// own), then is torn down and replaced.
	var live []*benchConn
	for written < n {
		for len(live) < benchConcurrent && n-written >= 5+benchConcurrent*7 {
			c, err := open(benchPerConn/benchConcurrent - 5)
			if err != nil {
				return err
			}
			live = append(live, c)
		}
		if len(live) == 0 {
			// Fewer than 33 packets asked for: no room for a connection.
			break
		}
		for i := 0; i < len(live); i++ {
			c := live[i]
			// Once the packets left are just enough to tear down the
			// open connections, every one is torn down: n exactly.
			closing := c.left <= 0 || n-written <= 2*len(live)
			if closing {
				if err := close(c); err != nil {
					return err
				}
				live = append(live[:i], live[i+1:]...)
				i--
				continue
			}
			if err := step(c); err != nil {
				return err
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: wrote %s: %d packets, %d connections\n", path, written, next)
	return nil
}
