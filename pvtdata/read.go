package pvtdata

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/enum"
)

// Mode selects how a receiver looks for the message in a received buffer.
type Mode uint8

const (
	// ModeRFC8797 searches the whole buffer for the Format Identifier at any
	// alignment, then checks the version and that the message does not
	// overrun the buffer (RFC 8797 §5.2). The default.
	ModeRFC8797 Mode = iota
	// ModeDraft requires the Format Identifier in the first 4 octets
	// (draft-ietf-nfsv4-rpcrdma-cm-pvt-data -04 and -05), then checks the
	// version and the length.
	ModeDraft
	// ModeLinux reads like net/sunrpc/xprtrdma and svcrdma: magic and
	// version 1 at offset 0 of the ULP data, no length check.
	ModeLinux
	numModes
)

// Modes lists every reading mode in a stable order.
var Modes = [...]Mode{ModeRFC8797, ModeDraft, ModeLinux}

var modeNames = [...]string{ModeRFC8797: "rfc8797", ModeDraft: "draft", ModeLinux: "linux"}

func (m Mode) String() string { return enum.Name("Mode", modeNames[:], m) }

// ParseMode parses "rfc8797", "draft" or "linux".
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown reading mode %q (want rfc8797, draft or linux)", s)
}

// The identifier as it appears on the wire, and byte-swapped.
var (
	identifierBytes = [4]byte{0xf6, 0xab, 0x0e, 0x18}
	swappedBytes    = [4]byte{0x18, 0x0e, 0xab, 0xf6}
)

// MaxCandidates is how many identifier offsets a Reading keeps; more are
// counted but not stored, so reading never allocates.
const MaxCandidates = 8

// problem is a bit set of the conditions a Reading found.
type problem uint16

const (
	probNotFound problem = 1 << iota
	probUnknownVersion
	probOverrun
	probReservedBits
	probNotAtOffsetZero
	probMultiple
	probByteSwapped
	probTrailing
	probNotAtZeroForMode // draft/linux: identifier elsewhere in the buffer, not at 0
)

// Reading is what one receiver, reading one buffer in one Mode, makes of it.
// The zero value is not meaningful; use Read.
type Reading struct {
	Mode Mode
	// Len is the length of the buffer read.
	Len int
	// Found reports that the mode located a Format Identifier.
	Found bool
	// Offset is where the identifier the mode acts on starts, -1 if none.
	Offset int
	// Valid reports that the message is one a receiver in this mode acts on:
	// found, version recognised, and (except ModeLinux) not overrunning.
	Valid bool
	// Message holds the octets at Offset. When the buffer ends early (an
	// overrun) the missing octets read as zero.
	Message Message
	// Overrun reports that the message runs past the end of the buffer.
	Overrun bool

	candidates  [MaxCandidates]int32
	nCandidates int
	swapped     int32 // offset of a byte-swapped identifier, or -1
	problems    problem
}

// Candidates returns every offset where the Format Identifier occurs in the
// buffer, up to MaxCandidates (NumCandidates gives the full count). The
// slice aliases r.
func (r *Reading) Candidates() []int32 {
	n := r.nCandidates
	if n > MaxCandidates {
		n = MaxCandidates
	}
	return r.candidates[:n]
}

// NumCandidates is how many times the identifier occurs in the buffer.
func (r *Reading) NumCandidates() int { return r.nCandidates }

// Effective is what a conforming receiver acts on: the message's values when
// valid, the RFC 8166 defaults (1024 octets each way, no remote
// invalidation) otherwise (RFC 8797 §5.1).
type Effective struct {
	SendSize           int  `json:"send_size"`
	ReceiveSize        int  `json:"receive_size"`
	RemoteInvalidation bool `json:"remote_invalidation"`
}

// Defaults is the Effective value when no valid message arrived.
var Defaults = Effective{SendSize: DefaultInline, ReceiveSize: DefaultInline}

// Effective returns what a receiver in r.Mode acts on.
func (r *Reading) Effective() Effective {
	if !r.Valid {
		return Defaults
	}
	return Effective{
		SendSize:           r.Message.SendBytes(),
		ReceiveSize:        r.Message.ReceiveBytes(),
		RemoteInvalidation: r.Message.RemoteInvalidation(),
	}
}

// Read reads buf, the ULP's part of received CM private data (after the
// rdma_cm header on IB/RoCE, after the MPA v2 IRD/ORD words on iWARP), as a
// receiver in mode does. It does not allocate.
func Read(buf []byte, mode Mode) Reading {
	r := Reading{Mode: mode, Len: len(buf), Offset: -1, swapped: -1}
	// bytes.Index is vectorised: far faster than testing every offset.
	for i := 0; i+4 <= len(buf); {
		j := bytes.Index(buf[i:], identifierBytes[:])
		if j < 0 {
			break
		}
		i += j
		if r.nCandidates < MaxCandidates {
			r.candidates[r.nCandidates] = int32(i)
		}
		r.nCandidates++
		i += 4 // the identifier cannot overlap itself
	}
	if j := bytes.Index(buf, swappedBytes[:]); j >= 0 {
		r.swapped = int32(j)
	}
	if r.swapped >= 0 {
		r.problems |= probByteSwapped
	}
	if r.nCandidates > 1 {
		r.problems |= probMultiple
	}

	switch mode {
	case ModeRFC8797:
		if r.nCandidates > 0 {
			r.Offset = int(r.candidates[0])
		}
	case ModeDraft:
		if r.nCandidates > 0 && r.candidates[0] == 0 {
			r.Offset = 0
		}
	case ModeLinux:
		// Linux needs magic and version in place; it reads the rest
		// without checking the length.
		if len(buf) >= 4 && binary.BigEndian.Uint32(buf) == FormatIdentifier {
			r.Offset = 0
		}
	}
	if r.Offset < 0 {
		r.problems |= probNotFound
		if r.nCandidates > 0 {
			r.problems |= probNotAtZeroForMode
		}
		return r
	}
	r.Found = true
	if r.Offset > 0 {
		r.problems |= probNotAtOffsetZero
	}

	var msg [MessageLen]byte
	n := copy(msg[:], buf[r.Offset:])
	r.Message, _ = ParseMessage(msg[:])
	r.Overrun = n < MessageLen
	if r.Overrun {
		r.problems |= probOverrun
	}
	// The Version octet may itself lie past the end of the buffer; then
	// only the overrun is reported (there is no version to judge).
	versionKnown := n > 4 && r.Message.Version == Version1
	if n > 4 && !versionKnown {
		r.problems |= probUnknownVersion
	}
	switch mode {
	case ModeLinux:
		r.Valid = versionKnown
	default:
		r.Valid = versionKnown && !r.Overrun
	}
	// Reserved bits and the octets after the message mean something only
	// for version 1: another version may define both (RFC 8797 §6).
	if versionKnown && n > 5 && r.Message.Reserved() != 0 {
		r.problems |= probReservedBits
	}
	if end := r.Offset + MessageLen; versionKnown && end < len(buf) && !allZero(buf[end:]) {
		r.problems |= probTrailing
	}
	return r
}

// Diverges reports whether receivers in the three modes would act
// differently on buf (different Effective values), returning the three
// readings so the caller can show them.
func Diverges(buf []byte) (bool, [len(Modes)]Reading) {
	var rs [len(Modes)]Reading
	for i, m := range Modes {
		rs[i] = Read(buf, m)
	}
	for i := 1; i < len(rs); i++ {
		if rs[i].Effective() != rs[0].Effective() {
			return true, rs
		}
	}
	return false, rs
}

// AppendFindings appends what r found to dst. It allocates only for the
// messages of the findings it appends.
func (r *Reading) AppendFindings(dst []finding.Finding) []finding.Finding {
	add := func(code string, sev finding.Severity, section, format string, args ...any) {
		dst = append(dst, finding.Finding{Code: code, Severity: sev, Section: section,
			Message: fmt.Sprintf(format, args...), Layer: "pvtdata", Offset: -1})
	}
	p := r.problems
	if p&probNotFound != 0 {
		if p&probNotAtZeroForMode != 0 {
			add(CodeIdentifierElsewhere, finding.SeverityWarning, "RFC 8797 §5.2",
				"the Format Identifier is at offset %d, not at offset 0 where a %s reader looks: it acts as if no private data was sent (1024-octet inline thresholds, no remote invalidation)",
				r.candidates[0], r.Mode)
			dst[len(dst)-1].Offset = int(r.candidates[0])
		} else {
			add(CodeNotFound, finding.SeverityInfo, "RFC 8797 §5.1",
				"no RPC-over-RDMA Format Identifier 0xf6ab0e18 in %d octets: the peer is taken to use the defaults (1024-octet inline thresholds, no remote invalidation)", r.Len)
		}
	}
	if p&probUnknownVersion != 0 {
		add(CodeUnknownVersion, finding.SeverityWarning, "RFC 8797 §5.2",
			"Format Identifier at offset %d is followed by version %d, not the recognised version 1: the message is ignored", r.Offset, r.Message.Version)
		dst[len(dst)-1].Offset = r.Offset + 4
	}
	if p&probOverrun != 0 {
		verdict := "the message is ignored"
		if r.Mode == ModeLinux {
			verdict = "a Linux receiver does not check the length and reads past the end of the private data"
		}
		add(CodeOverrun, finding.SeverityError, "RFC 8797 §5.2",
			"the 8-octet message at offset %d overruns the %d-octet buffer by %d octets: %s",
			r.Offset, r.Len, r.Offset+MessageLen-r.Len, verdict)
		dst[len(dst)-1].Offset = r.Offset
	}
	if p&probReservedBits != 0 {
		add(CodeReservedBits, finding.SeverityWarning, "RFC 8797 §4",
			"reserved bits are 0x%02x: senders MUST set them to zero (receivers ignore them)", r.Message.Reserved())
		dst[len(dst)-1].Offset = r.Offset + 5
	}
	if p&probNotAtOffsetZero != 0 {
		add(CodeNotAtOffsetZero, finding.SeverityWarning, "RFC 8797 §5.2",
			"the Format Identifier is at offset %d, not 0: RFC 8797 receivers find it, receivers built to the drafts or like Linux do not", r.Offset)
		dst[len(dst)-1].Offset = r.Offset
	}
	if p&probMultiple != 0 {
		add(CodeMultiple, finding.SeverityWarning, "RFC 8797 §5.2",
			"the Format Identifier occurs %d times (offsets %v): receivers that search may pick a different one", r.nCandidates, r.Candidates())
	}
	if p&probByteSwapped != 0 {
		add(CodeByteSwapped, finding.SeverityWarning, "RFC 8797 §4",
			"byte-swapped Format Identifier 0x180eabf6 at offset %d: a little-endian writer; the identifier must be in network byte order", r.swapped)
		dst[len(dst)-1].Offset = int(r.swapped)
	}
	if p&probTrailing != 0 {
		add(CodeTrailingData, finding.SeverityInfo, "RFC 8797 §6",
			"non-zero octets follow the 8-octet version 1 message at offset %d", r.Offset+MessageLen)
		dst[len(dst)-1].Offset = r.Offset + MessageLen
	}
	return dst
}
