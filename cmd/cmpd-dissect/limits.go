package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
)

// limits are the resource limits that keep a hostile or damaged capture
// from exhausting memory (issue 9), each an option setting a field of
// dissect.Options: the option, the field, the help (which names the
// finding raised when the limit is hit). A limit not given on the command
// line keeps dissect's default. The connection table's limit is
// --max-connections of conns and check.
var limits = [...]struct {
	name  string
	field func(*dissect.Options) *int
	help  string
}{
	{"max-tcp-stream-bytes", func(o *dissect.Options) *int { return &o.MaxPDUBytes }, "iWARP: octets of TCP data buffered for one stream direction, for an unfinished PDU; beyond it the data is dropped (finding iwarp.buffer-limit)"},
	{"max-tcp-total-bytes", func(o *dissect.Options) *int { return &o.MaxTCPBufferedBytes }, "iWARP: octets of TCP data buffered for all streams together: unfinished PDUs and the octets kept around holes for late segments (finding iwarp.buffer-limit)"},
	{"max-tcp-streams", func(o *dissect.Options) *int { return &o.MaxStreams }, "iWARP: TCP streams (one per direction) followed at once; beyond it the least recently seen are flushed (finding iwarp.stream-limit)"},
	{"max-send-bytes", func(o *dissect.Options) *int { return &o.MaxSendBytes }, "octets of one multi-packet Send (RC SEND FIRST…LAST, iWARP untagged DDP segments) reassembled before it is given up (finding ib.send-limit, iwarp.send-limit)"},
	{"max-send-buffer-bytes", func(o *dissect.Options) *int { return &o.MaxSendBufferBytes }, "octets held for all partial RC Sends together; beyond it the oldest are given up (finding ib.send-limit)"},
	{"max-private-data", func(o *dissect.Options) *int { return &o.MaxPrivateData }, "iWARP: MPA PD_Length above which a request, reply or reject is reported (finding mpa.pd-length-over-512; RFC 5044 allows 512)"},
	{"max-chunk-segments", func(o *dissect.Options) *int { return &o.MaxChunkSegments }, "RPC-over-RDMA: segments decoded in one chunk list; decoding stops there (finding rpcrdma.segment-cap)"},
	{"max-chunk-bytes-per-conn", func(o *dissect.Options) *int { return &o.MaxChunkBytesPerConn }, "RPC-over-RDMA: octets of reply chunks held per connection while RDMA Writes fill them; beyond it a reply is not reassembled (finding rpcrdma.chunk-limit)"},
	{"max-chunk-bytes", func(o *dissect.Options) *int { return &o.MaxChunkBytes }, "RPC-over-RDMA: octets of reply chunks held in all (finding rpcrdma.chunk-limit)"},
}

// limitFlags are the values of the limits' options, in limits' order.
type limitFlags [len(limits)]positiveInt

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

// register adds the limits' options to cmd, each with dissect's default.
func (l *limitFlags) register(cmd *cobra.Command) {
	d := dissect.DefaultOptions()
	for i, lim := range limits {
		l[i].v = *lim.field(&d)
		cmd.Flags().Var(&l[i], lim.name, lim.help)
	}
}

// apply sets the limits given on the command line in dissect options (the
// others keep dissect's defaults).
func (l *limitFlags) apply(o dissect.Options) dissect.Options {
	for i, lim := range limits {
		if l[i].set {
			*lim.field(&o) = l[i].v
		}
	}
	return o
}
