package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
)

// limitFlags are the resource limits that keep a hostile or damaged capture
// from exhausting memory (issue 9). Each has a default (dissect's), an
// option here, and a finding when it is hit. A limit not given on the
// command line keeps dissect's default. The connection table's limit is
// --max-connections of conns and check.
type limitFlags struct {
	tcpStreamBytes positiveInt // --max-tcp-stream-bytes
	tcpTotalBytes  positiveInt // --max-tcp-total-bytes
	tcpStreams     positiveInt // --max-tcp-streams
	sendBytes      positiveInt // --max-send-bytes
	sendBuffer     positiveInt // --max-send-buffer-bytes
	chunkSegments  positiveInt // --max-chunk-segments
	chunkConn      positiveInt // --max-chunk-bytes-per-conn
	chunkTotal     positiveInt // --max-chunk-bytes
	privateData    positiveInt // --max-private-data
}

// positiveInt is an int flag that refuses zero and negative values.
type positiveInt struct {
	v   int
	set bool
}

func (p *positiveInt) String() string { return strconv.Itoa(p.v) }
func (p *positiveInt) Type() string   { return "int" }
func (p *positiveInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not a whole number: %q", s)
	}
	if v <= 0 {
		return fmt.Errorf("must be positive, not %d", v)
	}
	p.v, p.set = v, true
	return nil
}

func (l *limitFlags) register(cmd *cobra.Command) {
	d := dissect.DefaultOptions()
	l.tcpStreamBytes.v = d.MaxPDUBytes
	l.tcpTotalBytes.v = d.MaxTCPBufferedBytes
	l.tcpStreams.v = d.MaxStreams
	l.sendBytes.v = d.MaxSendBytes
	l.sendBuffer.v = d.MaxSendBufferBytes
	l.chunkSegments.v = d.MaxChunkSegments
	l.chunkConn.v, l.chunkTotal.v = d.MaxChunkBytesPerConn, d.MaxChunkBytes
	l.privateData.v = d.MaxPrivateData
	f := cmd.Flags()
	f.Var(&l.tcpStreamBytes, "max-tcp-stream-bytes",
		"iWARP: octets of TCP data buffered for one stream direction, for an unfinished PDU; beyond it the data is dropped (finding iwarp.buffer-limit)")
	f.Var(&l.tcpTotalBytes, "max-tcp-total-bytes",
		"iWARP: octets of TCP data buffered for all streams together (finding iwarp.buffer-limit)")
	f.Var(&l.tcpStreams, "max-tcp-streams",
		"iWARP: TCP streams (one per direction) followed at once; beyond it the least recently seen are flushed (finding iwarp.stream-limit)")
	f.Var(&l.sendBytes, "max-send-bytes",
		"octets of one multi-packet Send (RC SEND FIRST…LAST, iWARP untagged DDP segments) reassembled before it is given up (finding ib.send-limit, iwarp.send-limit)")
	f.Var(&l.sendBuffer, "max-send-buffer-bytes",
		"octets held for all partial RC Sends together; beyond it the oldest are given up (finding ib.send-limit)")
	f.Var(&l.privateData, "max-private-data",
		"iWARP: MPA PD_Length above which a request, reply or reject is reported (finding mpa.pd-length-over-512; RFC 5044 allows 512)")
	f.Var(&l.chunkSegments, "max-chunk-segments",
		"RPC-over-RDMA: segments decoded in one chunk list; decoding stops there (finding rpcrdma.segment-cap)")
	f.Var(&l.chunkConn, "max-chunk-bytes-per-conn",
		"RPC-over-RDMA: octets of reply chunks held per connection while RDMA Writes fill them; beyond it a reply is not reassembled (finding rpcrdma.chunk-limit)")
	f.Var(&l.chunkTotal, "max-chunk-bytes",
		"RPC-over-RDMA: octets of reply chunks held in all (finding rpcrdma.chunk-limit)")
}

// apply sets the limits given on the command line in dissect options (the
// others keep dissect's defaults).
func (l *limitFlags) apply(o dissect.Options) dissect.Options {
	if l.tcpStreamBytes.set {
		o.MaxPDUBytes = l.tcpStreamBytes.v
	}
	if l.tcpTotalBytes.set {
		o.MaxTCPBufferedBytes = l.tcpTotalBytes.v
	}
	if l.tcpStreams.set {
		o.MaxStreams = l.tcpStreams.v
	}
	if l.sendBytes.set {
		o.MaxSendBytes = l.sendBytes.v
	}
	if l.sendBuffer.set {
		o.MaxSendBufferBytes = l.sendBuffer.v
	}
	if l.chunkSegments.set {
		o.MaxChunkSegments = l.chunkSegments.v
	}
	if l.chunkConn.set {
		o.MaxChunkBytesPerConn = l.chunkConn.v
	}
	if l.chunkTotal.set {
		o.MaxChunkBytes = l.chunkTotal.v
	}
	if l.privateData.set {
		o.MaxPrivateData = l.privateData.v
	}
	return o
}
