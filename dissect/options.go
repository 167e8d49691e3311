package dissect

import (
	"net/netip"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/internal/defaults"
	"github.com/cmpd-dissect/cmpd-dissect/layers/mpa"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// Options configure a Dissector: the UDP ports of RoCEv2 and the limits
// that keep a hostile or damaged capture from exhausting memory (each
// limit has a finding raised when it is hit). Zero fields take the
// defaults of DefaultOptions.
type Options struct {
	// RoCEPorts are UDP ports decoded as RoCEv2 in addition to 4791.
	RoCEPorts []uint16

	// MaxSendBytes caps one Send reassembled from several packets (RC
	// SEND_FIRST … SEND_LAST) or DDP segments (iWARP).
	MaxSendBytes int

	// RC Send reassembly and RPC-over-RDMA decoding.
	//
	// MaxSendBufferBytes caps the octets held for all partial RC Sends.
	MaxSendBufferBytes int
	// MaxQPs caps the QPs tracked at once (least recently used evicted).
	MaxQPs int
	// MaxChunkSegments caps the segments of one RPC-over-RDMA chunk list.
	MaxChunkSegments int
	// MaxCalls caps the outstanding RPC calls remembered to name replies.
	MaxCalls int
	// MaxChunkBytesPerConn and MaxChunkBytes cap the octets held for
	// reply chunks being written (RDMA_NOMSG replies reassembled), per
	// connection and in all (finding rpcrdma.chunk-limit).
	MaxChunkBytesPerConn, MaxChunkBytes int

	// iWARP TCP reassembly. Data after a hole in a stream is decoded at
	// once, as tshark does, never held for the missing octets.
	//
	// MaxStreams caps the TCP connections tracked at once; beyond it the
	// least recently seen quarter is flushed and forgotten.
	MaxStreams int
	// IdleTimeout closes a connection that saw no packet for this long in
	// capture time (never wall-clock time).
	IdleTimeout time.Duration
	// MaxPendingSends caps the partial multi-segment Sends kept per
	// direction.
	MaxPendingSends int
	// MaxPDUBytes caps the octets held for one unfinished PDU of one
	// direction; MaxTCPBufferedBytes those held for all streams (their
	// unfinished PDUs, and the octets kept around holes for late
	// segments).
	MaxPDUBytes         int
	MaxTCPBufferedBytes int
	// ResyncWindow is how many octets of a stream that did not start
	// with an MPA frame are searched for FPDU framing before the stream
	// is taken as not iWARP.
	ResyncWindow int
	// MaxPrivateData is the MPA PD_Length above which a request, reply
	// or reject is reported (mpa.pd-length-over-512); default
	// mpa.MaxPrivateData, RFC 5044's 512.
	MaxPrivateData int

	// Host names (tshark's network name resolution, -N n).
	//
	// HostNames are names of IP addresses (pcapng Name Resolution
	// Blocks); ResolveNames shows them in place of the addresses in the
	// summary and in ipv4/ipv6 src_host and dst_host.
	HostNames    map[netip.Addr][]string
	ResolveNames bool
	// HostFields makes the IP layers report src_host and dst_host (the
	// name when ResolveNames has one, else the address, as tshark).
	HostFields bool
}

// DefaultOptions returns the default limits: 1 MiB Sends; RC: 16 MiB
// buffered for partial Sends, 4096 QPs, 1024 segments per chunk list,
// 65536 outstanding calls, 4 MiB of reply chunks per connection and
// 64 MiB in all; iWARP: 8192 streams, 2 minutes idle, 64 partial Sends
// per direction, 70000 octets for one
// unfinished PDU (the largest FPDU with markers fits), 64 MiB of
// unfinished PDUs in all, 256 KiB resync window.
func DefaultOptions() Options {
	return Options{
		MaxSendBytes:       1 << 20,
		MaxSendBufferBytes: 16 << 20, MaxQPs: 4096, MaxChunkSegments: rpcrdma.DefaultMaxSegments, MaxCalls: 1 << 16,
		MaxChunkBytesPerConn: 4 << 20, MaxChunkBytes: 64 << 20,
		MaxStreams: 8192, IdleTimeout: 2 * time.Minute,
		MaxPendingSends: 64, MaxPDUBytes: 70000, MaxTCPBufferedBytes: 64 << 20, ResyncWindow: 256 << 10,
		MaxPrivateData: mpa.MaxPrivateData,
	}
}

// withDefaults returns o with every zero or negative limit (every integer
// or duration field) set to its default.
func (o Options) withDefaults() Options { return defaults.Fill(o, DefaultOptions()) }
