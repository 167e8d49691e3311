package rpcstat

import (
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
	"github.com/cmpd-dissect/cmpd-dissect/layers/rpcrdma"
)

// On the NFSv3 capture every call is answered (the GETACL and READDIRPLUS
// replies by RDMA_NOMSG); with the records of one reply left out, its
// call is listed as unanswered and its procedure has one reply less.
func TestUnansweredCall(t *testing.T) {
	path := testcap.Real("live-rxe4-nfs3.pcap")
	const dropped = 44 // V3 Reply LOOKUP of xid 0x2acaa62d (call in frame 42)
	for _, drop := range []bool{false, true} {
		s := New(0)
		testconn.EachRecord(t, path, func(r *dissect.Record) {
			if drop && r.Frame == dropped {
				return
			}
			s.Record(r)
		})
		var lookup *Row
		rows := s.Rows()
		for i := range rows {
			if rows[i].Program == rpcrdma.ProgNFS && rows[i].Version == 3 && rows[i].Procedure == 3 && !rows[i].HasOp {
				lookup = &rows[i]
			}
		}
		if lookup == nil || lookup.Calls != 1 {
			t.Fatalf("drop=%v: LOOKUP row %+v, want 1 call", drop, lookup)
		}
		un := s.Unanswered()
		if !drop {
			if len(un) != 0 || lookup.Replies != 1 || lookup.Min <= 0 || lookup.Min != lookup.Max {
				t.Errorf("whole capture: unanswered %+v, LOOKUP %+v: want none and one reply", un, lookup)
			}
			continue
		}
		if len(un) != 1 || un[0].Frame != 42 || un[0].XID != 0x2acaa62d || ProcedureName(un[0].Program, un[0].Version, un[0].Procedure) != "LOOKUP" {
			t.Errorf("reply dropped: unanswered %+v, want the LOOKUP call of frame 42", un)
		}
		if lookup.Replies != 0 || lookup.Avg() != 0 {
			t.Errorf("reply dropped: LOOKUP %+v, want no reply", lookup)
		}
	}
}

// The READ of the NFSv3 and NFSv4.2 captures (rxe and siw) got its 38
// octets of file data by RDMA Write into its write chunk: counted on its
// procedure's row (the COMPOUND's for NFSv4), and on no other row.
func TestWriteChunkOctets(t *testing.T) {
	for _, c := range []struct {
		file string
		proc uint32
		vers uint32
	}{
		{"live-rxe4-nfs3.pcap", 6, 3}, {"live-siw4-nfs3.pcap", 6, 3},
		{"live-rxe4-nfs42.pcap", 1, 4}, {"live-siw4-nfs42.pcap", 1, 4},
	} {
		s := New(0)
		testconn.EachRecord(t, testcap.Real(c.file), func(r *dissect.Record) { s.Record(r) })
		var total uint64
		var row *Row
		rows := s.Rows()
		for i := range rows {
			total += rows[i].WriteChunkOctets + rows[i].ReadChunkOctets
			if rows[i].Program == rpcrdma.ProgNFS && rows[i].Version == c.vers && rows[i].Procedure == c.proc && !rows[i].HasOp {
				row = &rows[i]
			}
		}
		if row == nil || row.WriteChunkOctets != 38 || total != 38 || row.JSON().WriteChunkOctets != 38 {
			t.Errorf("%s: row %+v, %d chunk octets in all: want 38 written into the READ's write chunk", c.file, row, total)
		}
	}
}

// The bulk captures: dd wrote 262144 octets with O_DIRECT and read them
// back; rsize and wsize are 128 KiB, so two NFS WRITEs got their data by
// RDMA Read of their read chunks and two READs theirs by RDMA Write into
// their write chunks: all of it on the WRITE and READ rows (NFSv3) or the
// COMPOUND row (NFSv4.2), and no other row has chunk octets.
func TestBulkChunkOctets(t *testing.T) {
	const size = 262144
	for _, c := range []struct {
		file        string
		vers        uint32
		read, write uint32 // the procedures carrying the data
	}{
		{"live-rxe4-nfs3-bulk.pcap", 3, 6, 7}, {"live-siw4-nfs3-bulk.pcap", 3, 6, 7},
		{"live-rxe4-nfs42-bulk.pcap", 4, 1, 1}, {"live-siw4-nfs42-bulk.pcap", 4, 1, 1},
	} {
		s := New(0)
		testconn.EachRecord(t, testcap.Real(c.file), func(r *dissect.Record) { s.Record(r) })
		var readRow, writeRow *Row
		var others uint64
		rows := s.Rows()
		for i := range rows {
			r := &rows[i]
			nfs := r.Program == rpcrdma.ProgNFS && r.Version == c.vers && !r.HasOp
			switch {
			case nfs && r.Procedure == c.read && r.Procedure == c.write:
				readRow, writeRow = r, r
			case nfs && r.Procedure == c.read:
				readRow = r
			case nfs && r.Procedure == c.write:
				writeRow = r
			default:
				others += r.ReadChunkOctets + r.WriteChunkOctets
			}
		}
		if readRow == nil || writeRow == nil {
			t.Fatalf("%s: no READ or WRITE row", c.file)
		}
		if readRow.WriteChunkOctets != size || writeRow.ReadChunkOctets != size || others != 0 {
			t.Errorf("%s: READ row %+v, WRITE row %+v, %d octets on other rows: want %d each way and none elsewhere",
				c.file, readRow, writeRow, others, size)
		}
		if c.read != c.write && (readRow.ReadChunkOctets != 0 || writeRow.WriteChunkOctets != 0 || readRow.Replies != 2 || writeRow.Replies != 2) {
			t.Errorf("%s: READ row %+v, WRITE row %+v: want two replies each, data one way each", c.file, readRow, writeRow)
		}
	}
}
