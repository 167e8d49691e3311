// Package export writes what cmpd-dissect learns from captures as a dataset
// that query engines read (DuckDB, Spark, Trino, Polars …): a Hive-style
// directory of Parquet files, DIR/TABLE/capture=NAME/part-N.parquet, one
// directory per capture under each table, or the same tables as JSON lines
// in the form Elasticsearch's bulk API takes (an action line, then the
// document).
//
// Tables: connections (one row per connection, as conns --json),
// queue_pairs (the transport analysis' counters per queue pair), findings
// (every finding: the dissector's on each frame, as -T json, and the
// connection analysis's, as conns --json lists them), rpc (RPC calls with
// their reply frame and time) and, on request, packets (one row per frame
// with its key fields). The rows are written as the capture is read, in
// row groups, a new file every few, each connection once it is over
// (HandOff): memory grows neither with the packets nor with the
// connections of a capture.
package export

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/transport"
	"github.com/cmpd-dissect/cmpd-dissect/view"
)

// Format is the file format of an export.
type Format string

const (
	Parquet Format = "parquet"
	NDJSON  Format = "ndjson"
)

// ParseFormat parses "parquet" or "ndjson".
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case Parquet, NDJSON:
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown format %q (want parquet or ndjson)", s)
}

// The table names (directories under the export's root).
const (
	TableConnections = "connections"
	TableFindings    = "findings"
	TableRPC         = "rpc"
	TableQueuePairs  = "queue_pairs"
	TablePackets     = "packets"
)

// DefaultRowGroupRows is the rows per Parquet row group: large enough for
// engines to read efficiently, small enough that what is buffered before a
// group is written stays a few MB.
const DefaultRowGroupRows = 32 << 10

// pageBufferSize is the Parquet writer's page buffer per column. Its
// default, 256 KiB, made the writer of the packets table alone hold about
// 45 MB (measured with 400k rows; 64 KiB: 10 MB), and the export's peak
// RSS grow from 42 MB at 20k packets to 94 MB at 200k.
const pageBufferSize = 64 << 10

// DefaultMaxCalls is how many RPC calls awaiting their reply are kept per
// capture; beyond it the oldest is written as unanswered.
const DefaultMaxCalls = 1 << 16

// Options say what to write where.
type Options struct {
	Format Format
	// Dir is the root of the dataset; created if missing. A capture's
	// files replace those of an earlier export of a capture of the same
	// name.
	Dir string
	// Packets adds the packets table.
	Packets bool
	// RowGroupRows is the rows per Parquet row group (0: the default).
	RowGroupRows int
	// MaxCalls caps the RPC calls awaiting a reply (0: the default).
	MaxCalls int
	// Linger is how many connections may end after one before it is
	// written and the tracker forgets it (0: conn.DefaultLinger; see
	// conn.Tracker.HandOff).
	Linger int
	// IndexPrefix prefixes the table name in NDJSON's bulk action lines
	// ("cmpd-dissect-" gives the index cmpd-dissect-connections).
	IndexPrefix string
	// CreatedBy is the version written in the Parquet files' created_by.
	CreatedBy string
}

func (o *Options) rowGroupRows() int {
	if o.RowGroupRows > 0 {
		return o.RowGroupRows
	}
	return DefaultRowGroupRows
}

// CaptureName is the partition name of a capture: its file's base name,
// with every octet outside [A-Za-z0-9._+-] made "_" (the name is a
// directory name and a value engines read from the path, where "/", "=",
// "%" and spaces would be escaped differently by each). Standard input is
// "stdin".
func CaptureName(path string) string {
	if path == "-" {
		return "stdin"
	}
	base := filepath.Base(path)
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '+', r == '-':
			return r
		}
		return '_'
	}, base)
}

// Capture writes the tables of one capture. Feed it every record in order
// with Record, after the transport analysis and the connection tracker
// have seen it, then call Finish once the tracker has finished. It is not
// safe for concurrent use.
type Capture struct {
	name     string
	conns    *table[Connection]
	findings *table[Finding]
	rpc      *table[RPC]
	qps      *table[QueuePair]
	packets  *table[Packet]
	index    connIndex
	calls    callMatcher
	// stepFindings holds the frame and code of the dissector's findings on
	// CM and MPA frames: the tracker attaches those to the connection too,
	// and they are written once (origin "frame").
	stepFindings map[stepFinding]bool
	// analysis is the transport analysis of the capture when the
	// connections are written as they end (HandOff).
	analysis *transport.Analyzer
	linger   int
	budget   budget
	err      error
}

type stepFinding struct {
	frame int
	code  string
}

// NewCapture opens the tables of the capture called name (CaptureName)
// under o.Dir.
func NewCapture(o Options, name string) (*Capture, error) {
	if _, err := ParseFormat(string(o.Format)); err != nil {
		return nil, err
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
		return nil, fmt.Errorf("export: bad capture name %q", name)
	}
	c := &Capture{name: name, stepFindings: map[stepFinding]bool{}, linger: o.Linger}
	c.calls.init(o.MaxCalls)
	var err error
	if c.conns, err = openTable[Connection](&o, &c.budget, TableConnections, name); err != nil {
		return nil, err
	}
	if c.findings, err = openTable[Finding](&o, &c.budget, TableFindings, name); err != nil {
		c.abort()
		return nil, err
	}
	if c.rpc, err = openTable[RPC](&o, &c.budget, TableRPC, name); err != nil {
		c.abort()
		return nil, err
	}
	if c.qps, err = openTable[QueuePair](&o, &c.budget, TableQueuePairs, name); err != nil {
		c.abort()
		return nil, err
	}
	if o.Packets {
		if c.packets, err = openTable[Packet](&o, &c.budget, TablePackets, name); err != nil {
			c.abort()
			return nil, err
		}
	}
	return c, nil
}

// Record writes what rec adds: its findings, the RPC calls it answers, its
// packet row, and the connections over after it (HandOff) with their calls
// never answered. t is the tracker that has just seen rec (for the
// connection each row belongs to).
func (c *Capture) Record(rec *dissect.Record, t *conn.Tracker) error {
	if c.err != nil {
		return c.err
	}
	var p packetView
	p.read(rec)
	if p.cm != nil || p.mpa {
		c.index.refresh(t)
	}
	connID := c.index.lookup(&p)
	for i := range rec.Findings {
		f := rec.Findings[i]
		if f.Frame == 0 && !rec.EndOfInput() {
			f.Frame = rec.Frame
		}
		if p.cm != nil || p.mpa {
			c.stepFindings[stepFinding{f.Frame, f.Code}] = true
		}
		if err := c.findings.write(findingRow(c.name, &f, connID, "frame")); err != nil {
			return c.fail(err)
		}
	}
	for i := range p.msgs {
		if pc, rp, ok := c.calls.message(rec, &p.msgs[i], c.index.lookupMsg(&p, &p.msgs[i])); ok {
			if err := c.rpc.write(c.calls.row(c.name, &pc, &rp)); err != nil {
				return c.fail(err)
			}
		}
		if err := c.givenUp(); err != nil {
			return c.fail(err)
		}
	}
	if c.packets != nil && !rec.EndOfInput() {
		if err := c.packets.write(p.row(c.name, rec, connID)); err != nil {
			return c.fail(err)
		}
	}
	if c.analysis != nil {
		for _, cn := range t.Done() {
			cn.AttachTransport(c.analysis)
			if err := c.connection(cn); err != nil {
				return c.fail(err)
			}
			for _, q := range cn.QueuePairs {
				c.analysis.Release(q.Host, q.QPN, q.Frame)
			}
			c.index.forget(cn)
			c.calls.ofConnection(cn.ID)
			if err := c.givenUp(); err != nil {
				return c.fail(err)
			}
		}
	}
	return nil
}

// givenUp writes the calls the call matcher gave up (calls.evicted) as
// unanswered.
func (c *Capture) givenUp() error {
	for j := range c.calls.evicted {
		if err := c.rpc.write(c.calls.row(c.name, &c.calls.evicted[j], &reply{})); err != nil {
			return err
		}
	}
	c.calls.evicted = c.calls.evicted[:0]
	return nil
}

// HandOff makes the capture write each connection, with its queue pairs
// and findings, once it is over (conn.Tracker.HandOff: it ended, and
// Options.Linger more ended after it), and t forget it, instead of all at
// Finish: the memory of the export then stays flat in the connections of
// the capture too. a is the transport analysis t's records went through
// (its summaries of the connection's queue pairs are written with it, and
// let go). Call it before the first Record.
func (c *Capture) HandOff(t *conn.Tracker, a *transport.Analyzer) {
	t.HandOff(c.linger)
	c.analysis = a
}

// Finish writes the connections t still lists (all of them without
// HandOff), their queue pairs (what the transport analysis attached to t:
// conn.Tracker.AttachTransport) and findings, the tracker's own findings
// and the calls never answered, and closes the files. Call it after
// t.Finish().
func (c *Capture) Finish(t *conn.Tracker) error {
	if c.err != nil {
		c.abort()
		return c.err
	}
	for _, cn := range t.Connections() {
		if err := c.connection(cn); err != nil {
			return c.fail(err)
		}
	}
	for _, f := range t.Findings() {
		if err := c.findings.write(findingRow(c.name, &f, 0, "connection")); err != nil {
			return c.fail(err)
		}
	}
	for _, pc := range c.calls.unanswered() {
		if err := c.rpc.write(c.calls.row(c.name, &pc, &reply{})); err != nil {
			return c.fail(err)
		}
	}
	var err error
	for _, cl := range c.closers() {
		if cerr := cl(); err == nil {
			err = cerr
		}
	}
	return err
}

// connection writes cn's row, its queue pairs' and the findings the
// connection analysis raised on it.
func (c *Capture) connection(cn *conn.Connection) error {
	j := view.NewConnJSON(cn)
	if err := c.conns.write(connectionRow(c.name, cn, &j)); err != nil {
		return err
	}
	for _, q := range queuePairRows(c.name, &j) {
		if err := c.qps.write(q); err != nil {
			return err
		}
	}
	fs := cn.Findings()
	for _, f := range fs {
		if f.Layer != "conn" && c.stepFindings[stepFinding{f.Frame, f.Code}] {
			continue // the frame's own finding, written with origin "frame"
		}
		if err := c.findings.write(findingRow(c.name, &f, cn.ID, "connection")); err != nil {
			return err
		}
	}
	// A CM or MPA frame is of one connection: its keys are of no more use.
	for _, f := range fs {
		delete(c.stepFindings, stepFinding{f.Frame, f.Code})
	}
	return nil
}

func (c *Capture) closers() []func() error {
	out := []func() error{}
	if c.conns != nil {
		out = append(out, c.conns.close)
	}
	if c.findings != nil {
		out = append(out, c.findings.close)
	}
	if c.rpc != nil {
		out = append(out, c.rpc.close)
	}
	if c.qps != nil {
		out = append(out, c.qps.close)
	}
	if c.packets != nil {
		out = append(out, c.packets.close)
	}
	return out
}

func (c *Capture) fail(err error) error {
	c.err = err
	c.abort()
	return err
}

// abort closes the files after an error (or when the capture could not be
// read): they are incomplete.
func (c *Capture) abort() {
	if c.conns != nil {
		c.conns.abort()
	}
	if c.findings != nil {
		c.findings.abort()
	}
	if c.rpc != nil {
		c.rpc.abort()
	}
	if c.qps != nil {
		c.qps.abort()
	}
	if c.packets != nil {
		c.packets.abort()
	}
}

// Abort closes the files of a capture whose reading failed.
func (c *Capture) Abort() { c.abort() }

// Rows returns how many rows each table received so far.
func (c *Capture) Rows() map[string]int64 {
	m := map[string]int64{TableConnections: c.conns.rows, TableFindings: c.findings.rows, TableRPC: c.rpc.rows,
		TableQueuePairs: c.qps.rows}
	if c.packets != nil {
		m[TablePackets] = c.packets.rows
	}
	return m
}
