// Package rpcrdma decodes what an RDMA Send carries for NFS over RDMA: the
// RPC-over-RDMA transport header, version 1 (RFC 8166) and the version 2
// draft (draft-cel-nfsv4-rpcrdma-version-two-00), the ONC RPC message that
// follows it (RFC 5531), and the names of the NFS, MOUNT, NLM and NFS_ACL
// procedures and NFSv4 COMPOUND operations inside.
//
// Three gopacket layers, one per protocol name: Header ("rpcrdma"),
// RPC ("rpc") and NFS ("nfs"). Message decodes a whole Send payload into
// the three without allocating. The layers keep no state across packets:
// matching a reply to its call (to know that a reply body is an NFSv4
// COMPOUND result) is the caller's job, through a CallMatcher that calls
// RPC.SetCall (dissect/sends.go keeps that table).
//
// Not decoded: RPC messages moved by RDMA Read or Write (position-zero
// read chunks, reply chunks of RDMA_NOMSG replies), which are not in the
// Send; NFSv2/v3, MOUNT, NLM and NFS_ACL arguments beyond the procedure
// name (and the v2/v3 reply status).
//
// Decoders never panic and never loop on a length or list the packet lies
// about: every list is bounded by the bytes present and by a configurable
// cap on segments. Errors are *DecodeError values carrying a stable finding code,
// the field being read and its byte offset.
package rpcrdma

import (
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// DecodeError is a decode error: which field was being read, where, and
// the finding code that describes it. A field that runs past the data has
// Need and Have (octets needed and left at Offset); any other error says
// what is wrong in Msg.
type DecodeError struct {
	Code   string // finding code, e.g. CodeChunkListUnterminated
	Layer  string // "rpcrdma", "rpc" or "nfs"
	Field  string // what was being read: "read list", "write chunk 2 segment count"
	Offset int    // byte offset from the start of the layer
	Need   int    // octets the field needs at Offset (when Msg is empty)
	Have   int    // octets available at Offset (when Msg is empty)
	Msg    string // what was expected, for errors other than running short
}

func (e *DecodeError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("%s: %s: need %d octets, have %d at offset %d", e.Layer, e.Field, e.Need, e.Have, e.Offset)
	}
	return fmt.Sprintf("%s: %s: %s at offset %d", e.Layer, e.Field, e.Msg, e.Offset)
}

// short builds the DecodeError for a field of need octets at off when only
// have octets are left there (a negative have counts as none).
func short(code, layer, field string, off, need, have int) *DecodeError {
	return &DecodeError{Code: code, Layer: layer, Field: field, Offset: off, Need: need, Have: max(have, 0)}
}

// Finding turns the error into the project's finding: the severity and
// section its code's catalogue entry gives (an error for a code not
// catalogued), Offset relative to the layer's first byte. A broken rule is
// an error; this program's own limit (CodeSegmentCap) a warning.
func (e *DecodeError) Finding() finding.Finding {
	sev, section := finding.SeverityError, ""
	if c, ok := Catalog.Lookup(e.Code); ok {
		sev, section = c.Severity, c.Section
	}
	return finding.Finding{Code: e.Code, Severity: sev, Message: e.Error(),
		Section: section, Layer: e.Layer, Offset: e.Offset}
}

// note is a non-fatal condition recorded during decoding without
// allocating; AppendFindings turns notes into findings.
type note struct {
	code   string
	sev    finding.Severity
	offset int
	a, b   uint32
}

// maxNotes bounds the non-fatal conditions one layer records.
const maxNotes = 4

type notes struct {
	n   int
	buf [maxNotes]note
}

func (ns *notes) add(code string, sev finding.Severity, off int, a, b uint32) {
	if ns.n < maxNotes {
		ns.buf[ns.n] = note{code: code, sev: sev, offset: off, a: a, b: b}
		ns.n++
	}
}

func (ns *notes) reset() { ns.n = 0 }

// appendTo appends a finding of layer for each note; describe writes its
// message (and a section other than the code's, where it differs).
func (ns *notes) appendTo(dst []finding.Finding, layer string, describe func(n note, f *finding.Finding)) []finding.Finding {
	for _, n := range ns.buf[:ns.n] {
		f := finding.Finding{Code: n.code, Severity: n.sev, Section: sectionFor(n.code), Layer: layer, Offset: n.offset}
		describe(n, &f)
		dst = append(dst, f)
	}
	return dst
}

// pad4 rounds n up to a multiple of 4 (XDR padding).
func pad4(n int) int { return (n + 3) &^ 3 }
