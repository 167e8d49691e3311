// Package rpcstat gathers ONC RPC service response times from dissected
// records, as tshark's -z rpc,srt does: per program, version and
// procedure (and per operation of an NFSv4 COMPOUND), the calls, the
// replies and the time from a call to its reply; and the calls that never
// got one.
//
// The call of a reply is the dissector's match (by connection and xid):
// rpc.reqframe of an RPC reply, or the call an RDMA_NOMSG or RDMA_ERROR
// answers (its reply went by RDMA Write into the reply chunk, or the
// transport refused the call). This package keeps no call table of its
// own beyond the calls still awaiting their reply.
package rpcstat

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// DefaultMaxPending bounds the calls kept while they await their reply
// (the dissector's own bound on outstanding calls is of the same order).
const DefaultMaxPending = 1 << 16

// maxOps caps the NFSv4 operations remembered per outstanding call.
const maxOps = 64

// Key names one row: a procedure of a program version, and for NFSv4
// COMPOUND rows of its operations, the operation (HasOp).
type Key struct {
	Program, Version, Procedure uint32
	HasOp                       bool
	Op                          uint32
}

// Row is the statistics of one Key.
type Row struct {
	Key
	// Calls counts the calls seen (a retransmitted call once); Replies the
	// replies matched to a call, each giving one response time.
	Calls, Replies int
	Min, Max, Sum  time.Duration
	// ReadChunkOctets and WriteChunkOctets are the octets the answered
	// calls' read lists gave by RDMA Read (a WRITE's data) and their write
	// chunks received by RDMA Write (a READ's data), as the capture saw
	// them move (rpcrdma.chunk_data of the replies).
	ReadChunkOctets, WriteChunkOctets uint64
}

// Avg is the mean response time (0 without replies).
func (r *Row) Avg() time.Duration {
	if r.Replies == 0 {
		return 0
	}
	return r.Sum / time.Duration(r.Replies)
}

func (r *Row) add(d time.Duration) {
	if r.Replies == 0 || d < r.Min {
		r.Min = d
	}
	if r.Replies == 0 || d > r.Max {
		r.Max = d
	}
	r.Replies++
	r.Sum += d
}

// Call is a call that has not (yet) got its reply.
type Call struct {
	Frame                       int
	Time                        time.Time
	XID                         uint32
	Program, Version, Procedure uint32
	Ops                         []uint32 // NFSv4 COMPOUND operations
}

type pendingKey struct {
	frame int
	xid   uint32
}

// Stats accumulates records. The zero value is not ready: use New.
type Stats struct {
	rows    map[Key]*Row
	pending map[pendingKey]*Call
	max     int
	// Untracked counts calls not kept for the unanswered list because
	// MaxPending calls were already waiting.
	Untracked int
}

// New returns Stats keeping at most maxPending calls awaiting their reply
// (0: DefaultMaxPending).
func New(maxPending int) *Stats {
	if maxPending <= 0 {
		maxPending = DefaultMaxPending
	}
	return &Stats{rows: map[Key]*Row{}, pending: map[pendingKey]*Call{}, max: maxPending}
}

func (s *Stats) row(k Key) *Row {
	r := s.rows[k]
	if r == nil {
		r = &Row{Key: k}
		s.rows[k] = r
	}
	return r
}

// Record takes one dissected record (every RPC-over-RDMA message in it).
func (s *Stats) Record(rec *dissect.Record) {
	var call *Call             // the call whose NFS layer may follow
	var chunks *rpcrdma.Header // the reply header whose chunk data the RPC reply after it gets
	for _, l := range rec.Layers {
		switch x := l.(type) {
		case *rpcrdma.Header:
			call, chunks = nil, nil
			if x.Answers.Frame > 0 {
				s.answer(rec, x.XID, x.Answers, x)
				s.chunks(x, x.Answers)
			} else if len(x.Chunks) > 0 {
				chunks = x
			}
		case *rpcrdma.RPC:
			call = nil
			switch x.MsgType {
			case rpcrdma.MsgCall:
				// A call sent again (x.Call names the first) is counted
				// once, and answered from the first one's time.
				if len(x.Contents) >= 24 && x.Call.Frame == 0 {
					call = s.call(rec, x)
				}
			case rpcrdma.MsgReply:
				if x.Call.Frame > 0 {
					s.answer(rec, x.XID, x.Call, chunks)
					if chunks != nil {
						s.chunks(chunks, x.Call)
					}
				}
			}
			chunks = nil
		case *rpcrdma.NFS:
			if call != nil && x.Compound && !x.Reply {
				for _, op := range x.Ops {
					if len(call.Ops) == maxOps {
						break
					}
					call.Ops = append(call.Ops, op.Opcode)
					s.row(Key{Program: call.Program, Version: call.Version, Procedure: call.Procedure, HasOp: true, Op: op.Opcode}).Calls++
				}
			}
			call = nil
		}
	}
}

// call counts a call and keeps it until its reply; nil when it is a
// retransmission or cannot be kept.
func (s *Stats) call(rec *dissect.Record, r *rpcrdma.RPC) *Call {
	k := pendingKey{rec.Frame, r.XID}
	if _, ok := s.pending[k]; ok {
		return nil
	}
	s.row(Key{Program: r.Program, Version: r.ProgVersion, Procedure: r.Procedure}).Calls++
	c := &Call{Frame: rec.Frame, Time: rec.Time, XID: r.XID, Program: r.Program, Version: r.ProgVersion, Procedure: r.Procedure}
	if len(s.pending) >= s.max {
		s.Untracked++
		// The operations are still counted, through a call not kept.
		return c
	}
	s.pending[k] = c
	return c
}

// answer takes a reply (or RDMA_NOMSG / RDMA_ERROR) matched to the call
// ref by the dissector; h is the reply's header (nil: none with chunk
// data). A call whose arguments came in read chunks is timed from the
// last RDMA Read Response the capture saw for them, not from its Send:
// the responder could only start on it then, and tshark's -z rpc,srt,
// which dissects such a call in that frame, times it from there too.
func (s *Stats) answer(rec *dissect.Record, xid uint32, ref rpcrdma.CallRef, h *rpcrdma.Header) {
	start := ref.Time
	if h != nil {
		for _, c := range h.Chunks {
			if c.Kind == rpcrdma.ChunkDataRead && c.LastFrame > 0 && c.LastTime > start {
				start = c.LastTime
			}
		}
	}
	d := rec.Time.Sub(time.Unix(0, start))
	s.row(Key{Program: ref.Program, Version: ref.Version, Procedure: ref.Procedure}).add(d)
	k := pendingKey{ref.Frame, xid}
	c, ok := s.pending[k]
	if !ok {
		return
	}
	delete(s.pending, k)
	for _, op := range c.Ops {
		s.row(Key{Program: c.Program, Version: c.Version, Procedure: c.Procedure, HasOp: true, Op: op}).add(d)
	}
}

// chunks counts the chunk data of reply header h to the procedure of its
// call.
func (s *Stats) chunks(h *rpcrdma.Header, ref rpcrdma.CallRef) {
	if len(h.Chunks) == 0 {
		return
	}
	r := s.row(Key{Program: ref.Program, Version: ref.Version, Procedure: ref.Procedure})
	for _, c := range h.Chunks {
		switch c.Kind {
		case rpcrdma.ChunkDataRead:
			r.ReadChunkOctets += c.Octets
		case rpcrdma.ChunkDataWrite:
			r.WriteChunkOctets += c.Octets
		}
	}
}

// Rows returns the statistics, ordered by program, version, procedure,
// then the procedure's own row before its operations' (by operation).
func (s *Stats) Rows() []Row {
	out := make([]Row, 0, len(s.rows))
	for _, r := range s.rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Program, b.Program), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.Procedure, b.Procedure), cmpBool(a.HasOp, b.HasOp), cmp.Compare(a.Op, b.Op))
	})
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Unanswered returns the calls that got no reply, in frame order.
func (s *Stats) Unanswered() []Call {
	out := make([]Call, 0, len(s.pending))
	for _, c := range s.pending {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Call) int { return cmp.Or(cmp.Compare(a.Frame, b.Frame), cmp.Compare(a.XID, b.XID)) })
	return out
}

// ProgramName is the program's name ("NFS") or its number.
func ProgramName(prog uint32) string {
	if n := rpcrdma.ProgramName(prog); n != "" {
		return n
	}
	return strconv.FormatUint(uint64(prog), 10)
}

// ProcedureName is the procedure's name as tshark gives it ("GETATTR",
// "COMPOUND"), or its number.
func ProcedureName(prog, vers, proc uint32) string {
	if n := rpcrdma.ProcedureName(prog, vers, proc); n != "" {
		return n
	}
	return strconv.FormatUint(uint64(proc), 10)
}

// OpName is the NFSv4 operation's name, or its number.
func OpName(op uint32) string {
	if n := rpcrdma.OpName(op); n != "" {
		return n
	}
	return strconv.FormatUint(uint64(op), 10)
}

// JSONRow is a Row as rpc --json prints it; times in milliseconds.
type JSONRow struct {
	Program         string  `json:"program"`
	ProgramNumber   uint32  `json:"program_number"`
	Version         uint32  `json:"version"`
	Procedure       string  `json:"procedure"`
	ProcedureNumber uint32  `json:"procedure_number"`
	Operation       string  `json:"operation,omitempty"`
	OperationNumber *uint32 `json:"operation_number,omitempty"`
	Calls           int     `json:"calls"`
	Replies         int     `json:"replies"`
	MinMS           float64 `json:"min_ms"`
	AvgMS           float64 `json:"avg_ms"`
	MaxMS           float64 `json:"max_ms"`
	// Octets moved by RDMA for the procedure's chunks (rpcrdma.chunk_data):
	// read by the server from the calls' read lists, written by it into
	// their write chunks. Absent when none moved.
	ReadChunkOctets  uint64 `json:"read_chunk_octets,omitempty"`
	WriteChunkOctets uint64 `json:"write_chunk_octets,omitempty"`
}

// JSONCall is an unanswered Call as rpc --json prints it.
type JSONCall struct {
	Frame      int       `json:"frame"`
	Time       time.Time `json:"time"`
	XID        string    `json:"xid"`
	Program    string    `json:"program"`
	Version    uint32    `json:"version"`
	Procedure  string    `json:"procedure"`
	Operations []string  `json:"operations,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// JSON returns the row for rpc --json.
func (r *Row) JSON() JSONRow {
	j := JSONRow{Program: ProgramName(r.Program), ProgramNumber: r.Program, Version: r.Version,
		Procedure: ProcedureName(r.Program, r.Version, r.Procedure), ProcedureNumber: r.Procedure,
		Calls: r.Calls, Replies: r.Replies, MinMS: ms(r.Min), AvgMS: ms(r.Avg()), MaxMS: ms(r.Max),
		ReadChunkOctets: r.ReadChunkOctets, WriteChunkOctets: r.WriteChunkOctets}
	if r.HasOp {
		op := r.Op
		j.Operation, j.OperationNumber = OpName(op), &op
	}
	return j
}

// JSON returns the call for rpc --json.
func (c *Call) JSON() JSONCall {
	j := JSONCall{Frame: c.Frame, Time: c.Time.UTC(), XID: fmt.Sprintf("0x%08x", c.XID), Program: ProgramName(c.Program),
		Version: c.Version, Procedure: ProcedureName(c.Program, c.Version, c.Procedure)}
	for _, op := range c.Ops {
		j.Operations = append(j.Operations, OpName(op))
	}
	return j
}
