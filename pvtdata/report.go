package pvtdata

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// PrivateData is the decode of the ULP part of one CM private data field:
// what it was recognised as, the RFC 8797 reading in the caller's mode, and
// whether the three reading modes disagree. The ibcm and mpa layers keep one
// per message and report it, as a subtree, under their private-data bytes;
// it is also a field.Layer of its own ("pvtdata").
type PrivateData struct {
	// Data is the buffer decoded; it aliases the caller's bytes.
	Data []byte
	// ULP is what the data was recognised as.
	ULP ULP
	// Reading is the RFC 8797 reading in the mode asked for.
	Reading Reading
	// Readers holds the reading of every mode, in Modes order.
	Readers [len(Modes)]Reading
	// Divergent reports that readers in different modes act differently
	// (different Effective values).
	Divergent bool
}

// Dissect decodes buf, the ULP part of CM private data (after the 36-octet
// rdma_cm header of a REQ, after the MPA v2 IRD/ORD words), reading RFC 8797
// in mode. It does not allocate; the result aliases buf.
func Dissect(buf []byte, hint Hint, mode Mode) PrivateData {
	p := PrivateData{Data: buf}
	p.Divergent, p.Readers = Diverges(buf)
	p.Rehint(hint, mode)
	return p
}

// Rehint makes p the decode of its Data with another hint and mode, as
// Dissect would: the ULP recognised again, the reading of mode taken from
// Readers (the readers depend on the octets alone, so they are not run
// again).
func (p *PrivateData) Rehint(hint Hint, mode Mode) {
	p.ULP = Identify(p.Data, hint)
	p.Reading = p.Readers[0]
	for i, m := range Modes {
		if m == mode {
			p.Reading = p.Readers[i]
		}
	}
}

// Proto returns the pvtdata protocol declaration.
func (p *PrivateData) Proto() *field.Proto { return Proto }

// VisitFields reports the length, the ULP label, the RFC 8797 reading (for
// RPC-over-RDMA data, or wherever an identifier was seen) or the other
// ULP's fields, and, for data not recognised as another ULP's, whether
// the RFC 8797 readers diverge.
func (p *PrivateData) VisitFields(v field.Visitor) {
	v.Uint(fLength, uint64(len(p.Data)))
	p.ULP.VisitFields(v)
	if p.ULP.Kind == ULPRPCRDMA || p.Reading.Found || p.Reading.NumCandidates() > 0 {
		p.Reading.VisitFields(v)
	}
	if !p.ULP.Kind.Other() {
		// Another ULP's data holds no Format Identifier (it would be
		// RPC-over-RDMA's), so the RFC 8797 readers cannot disagree on
		// it: nothing of RFC 8797 is shown with it.
		v.Bool(fDivergence, p.Divergent)
	}
}

// AppendFindings appends what the reading noticed and the reader divergence,
// offsets relative to the start of Data. For data recognised as another
// ULP (Other), "no RFC 8797 message" is not worth a finding and is left out.
func (p *PrivateData) AppendFindings(dst []finding.Finding) []finding.Finding {
	start := len(dst)
	dst = p.Reading.AppendFindings(dst)
	if p.ULP.Kind.Other() {
		out := dst[:start]
		for _, f := range dst[start:] {
			if f.Code != CodeNotFound {
				out = append(out, f)
			}
		}
		dst = out
	}
	if p.Divergent {
		dst = append(dst, divergence(p.Readers))
	}
	return dst
}

// AppendDivergence appends a pvtdata.reader-divergence finding to dst when
// receivers in the rfc8797, draft and linux modes would act differently on
// buf, saying what each would act on. It returns dst unchanged otherwise.
func AppendDivergence(dst []finding.Finding, buf []byte) []finding.Finding {
	if d, rs := Diverges(buf); d {
		dst = append(dst, divergence(rs))
	}
	return dst
}

func divergence(rs [len(Modes)]Reading) finding.Finding {
	var b strings.Builder
	b.WriteString("receivers disagree on what this private data says: ")
	for i := range rs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(rs[i].Describe())
	}
	return finding.Finding{Code: CodeReaderDivergence, Severity: finding.SeverityWarning, Section: "RFC 8797 §5.2",
		Message: b.String(), Layer: "pvtdata", Offset: -1}
}

// Describe says in one phrase what a receiver in r.Mode acts on:
// "rfc8797 reader: message at offset 4, send 4096 receive 4096 R=1".
func (r *Reading) Describe() string {
	e := r.Effective()
	var why string
	switch {
	case !r.Found && r.Mode == ModeRFC8797:
		why = "no Format Identifier"
	case !r.Found:
		why = "no Format Identifier at offset 0"
	case !r.Valid && r.Overrun && r.Len-r.Offset <= 4:
		why = fmt.Sprintf("identifier at offset %d, message overruns the buffer", r.Offset)
	case !r.Valid && r.Message.Version != Version1:
		why = fmt.Sprintf("identifier at offset %d, version %d not recognised", r.Offset, r.Message.Version)
	case !r.Valid:
		why = fmt.Sprintf("identifier at offset %d, message overruns the buffer", r.Offset)
	}
	if why != "" {
		return fmt.Sprintf("%s reader: %s, so the defaults send %d receive %d R=0", r.Mode, why, e.SendSize, e.ReceiveSize)
	}
	past := ""
	if r.Overrun {
		past = ", reading past the end of the buffer"
	}
	return fmt.Sprintf("%s reader: message at offset %d%s, send %d receive %d R=%d",
		r.Mode, r.Offset, past, e.SendSize, e.ReceiveSize, b2i(e.RemoteInvalidation))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Report is the JSON object "cmpd-dissect pvtdata --json" prints for one
// buffer, and that "conns --json" embeds for each side of a connection. The
// keys are stable.
type Report struct {
	// Mode is the reading mode of the top-level fields.
	Mode string `json:"mode"`
	// ULP names what the data was recognised as ("rpcrdma-v1", "nvmeof" …).
	ULP string `json:"ulp"`
	// ULPOffset is where the ULP data starts inside the CM private data
	// field (36 after the rdma_cm header of a REQ, 4 after the MPA v2
	// IRD/ORD words, 0 otherwise); set by the caller, 0 by NewReport.
	ULPOffset int `json:"ulp_offset"`
	// Length and Hex are the ULP data read.
	Length int    `json:"length"`
	Hex    string `json:"hex"`
	// Found, Offset (-1 when not found), Candidates (every offset of the
	// identifier, at most MaxCandidates) and Valid come from the reading.
	Found      bool  `json:"found"`
	Offset     int   `json:"offset"`
	Candidates []int `json:"candidates"`
	Valid      bool  `json:"valid"`
	// The message's fields as sent (0/false when not found); sizes decoded
	// to octets.
	Version            int  `json:"version"`
	RemoteInvalidation bool `json:"remote_invalidation"`
	SendSize           int  `json:"send_size"`
	ReceiveSize        int  `json:"receive_size"`
	Reserved           int  `json:"reserved"`
	// Findings of the reading and the reader divergence, offsets relative
	// to the ULP data.
	Findings []finding.Finding `json:"findings"`
	// Effective is what a conforming receiver in Mode acts on.
	Effective Effective `json:"effective"`
	// Readers is what a receiver in each mode acts on.
	Readers []ReaderResult `json:"readers"`
}

// ReaderResult is one mode's reading in a Report.
type ReaderResult struct {
	Mode      string    `json:"mode"`
	Found     bool      `json:"found"`
	Offset    int       `json:"offset"`
	Valid     bool      `json:"valid"`
	Effective Effective `json:"effective"`
}

// NewReport reads buf in mode and builds its Report (with no hint about
// the carrying message; see PrivateData.Report).
func NewReport(buf []byte, mode Mode) Report {
	p := Dissect(buf, Hint{}, mode)
	return p.Report()
}

// Report builds the JSON report of p.
func (p *PrivateData) Report() Report {
	r := &p.Reading
	rep := Report{
		Mode:       r.Mode.String(),
		ULP:        p.ULP.Kind.String(),
		Length:     len(p.Data),
		Hex:        hex.EncodeToString(p.Data),
		Found:      r.Found,
		Offset:     r.Offset,
		Candidates: make([]int, 0, r.NumCandidates()),
		Valid:      r.Valid,
		Findings:   p.AppendFindings([]finding.Finding{}),
		Effective:  r.Effective(),
		Readers:    make([]ReaderResult, 0, len(p.Readers)),
	}
	for _, c := range r.Candidates() {
		rep.Candidates = append(rep.Candidates, int(c))
	}
	if r.Found {
		m := r.Message
		have := r.Len - r.Offset
		if have > 4 {
			rep.Version = int(m.Version)
		}
		if have > 5 {
			rep.RemoteInvalidation = m.RemoteInvalidation()
			rep.Reserved = int(m.Reserved())
		}
		if have > 6 {
			rep.SendSize = m.SendBytes()
		}
		if have > 7 {
			rep.ReceiveSize = m.ReceiveBytes()
		}
	}
	for i := range p.Readers {
		x := &p.Readers[i]
		rep.Readers = append(rep.Readers, ReaderResult{Mode: x.Mode.String(), Found: x.Found,
			Offset: x.Offset, Valid: x.Valid, Effective: x.Effective()})
	}
	return rep
}

// SizeFinding checks a size in octets that is to be advertised (Encode's
// input, an expectation, a configured threshold): it returns a
// pvtdata.size-out-of-range finding, and true, when the 8-bit Send Size and
// Receive Size fields cannot express it (RFC 8797 §4.2).
func SizeFinding(name string, bytes int) (finding.Finding, bool) {
	if _, err := EncodeSize(bytes); err != nil {
		return finding.Finding{Code: CodeSizeOutOfRange, Severity: finding.SeverityError, Section: "RFC 8797 §4.2",
			Message: name + ": " + strings.TrimPrefix(err.Error(), ErrSizeOutOfRange.Error()+": "),
			Layer:   "pvtdata", Offset: -1}, true
	}
	return finding.Finding{}, false
}

// AppendSummary appends a short label for summary lines, without a leading
// space: "pd=RFC8797 v1 R=1 send=4096 recv=4096" for a valid message,
// "pd=RFC8797 v2 ignored" or "pd=RFC8797 overrun" for one a conforming
// receiver ignores, "pd=nvmeof" (etc.) for other ULPs, "pd=none" for
// RPC-over-RDMA without a message; " readers-diverge" is added when the
// reading modes disagree. It appends nothing for empty or all-zero data.
// It does not allocate beyond growing b.
func (p *PrivateData) AppendSummary(b []byte) []byte {
	r := &p.Reading
	switch {
	case r.Valid:
		m := r.Message
		b = append(b, "pd=RFC8797 v"...)
		b = strconv.AppendUint(b, uint64(m.Version), 10)
		b = append(b, " R="...)
		b = strconv.AppendInt(b, int64(b2i(m.RemoteInvalidation())), 10)
		b = append(b, " send="...)
		b = strconv.AppendInt(b, int64(m.SendBytes()), 10)
		b = append(b, " recv="...)
		b = strconv.AppendInt(b, int64(m.ReceiveBytes()), 10)
	case r.Found && r.Len-r.Offset > 4 && r.Message.Version != Version1:
		b = append(b, "pd=RFC8797 v"...)
		b = strconv.AppendUint(b, uint64(r.Message.Version), 10)
		b = append(b, " ignored"...)
	case r.Found:
		b = append(b, "pd=RFC8797 overrun"...)
	case p.ULP.Kind == ULPRPCRDMA && r.NumCandidates() == 0:
		b = append(b, "pd=none"...)
	case p.ULP.Kind == ULPRPCRDMA:
		b = append(b, "pd=RFC8797 not-at-offset-0"...)
	case p.ULP.Kind == ULPEmpty || p.ULP.Kind == ULPZero:
		return b
	default:
		b = append(b, "pd="...)
		b = append(b, p.ULP.Kind.String()...)
	}
	if p.Divergent {
		b = append(b, " readers-diverge"...)
	}
	return b
}
