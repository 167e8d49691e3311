package rpcrdma

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// Proc is rdma_proc, the transport header's procedure.
type Proc uint32

// Procedures of RFC 8166 §4.2.4 and the version 2 draft §4.2.
const (
	ProcMsg      Proc = 0 // RDMA_MSG: an RPC message follows
	ProcNoMsg    Proc = 1 // RDMA_NOMSG: the RPC message moves by RDMA Read/Write
	ProcMsgP     Proc = 2 // RDMA_MSGP: padded message (RFC 5666; not to be used)
	ProcDone     Proc = 3 // RDMA_DONE (RFC 5666; not to be used)
	ProcError    Proc = 4 // RDMA_ERROR
	ProcOptional Proc = 5 // RDMA_OPTIONAL (version 2 only)
)

var procNames = map[uint64]string{
	0: "RDMA_MSG", 1: "RDMA_NOMSG", 2: "RDMA_MSGP", 3: "RDMA_DONE", 4: "RDMA_ERROR", 5: "RDMA_OPTIONAL",
}

func (p Proc) String() string {
	if s, ok := procNames[uint64(p)]; ok {
		return s
	}
	return "RDMA_PROC_" + strconv.FormatUint(uint64(p), 10)
}

// ErrCode is rdma_err of an RDMA_ERROR message.
type ErrCode uint32

// Error codes. Version 1 (RFC 8166 §4.2.4) has ERR_VERS and ERR_CHUNK;
// version 2 keeps 1, renames 2 RDMA_ERR_BAD_HEADER and adds 3.
const (
	ErrVers        ErrCode = 1
	ErrChunk       ErrCode = 2 // version 1
	ErrBadHeader   ErrCode = 2 // version 2
	ErrInvalOption ErrCode = 3 // version 2
)

var errNamesV1 = map[uint64]string{1: "ERR_VERS", 2: "ERR_CHUNK"}
var errNamesV2 = map[uint64]string{1: "RDMA_ERR_VERS", 2: "RDMA_ERR_BAD_HEADER", 3: "RDMA_ERR_INVAL_OPTION"}

// DefaultMaxSegments is the default cap on segments in one chunk list
// (read list, write list, reply chunk) when Header.MaxSegments is 0. The
// Linux client uses at most a few dozen.
const DefaultMaxSegments = 1024

// Segment is an RDMA segment (xdr_rdma_segment): a registered memory
// region the peer reads or writes.
type Segment struct {
	Handle uint32 // rdma_handle (R_Key / STag)
	Length uint32 // rdma_length in octets
	Offset uint64 // rdma_offset (virtual address or offset)
}

// ReadSegment is one read list entry (xdr_read_chunk): the position in the
// XDR stream where the data belongs and the segment holding it.
type ReadSegment struct {
	Position uint32
	Segment
}

// WriteChunk is a write chunk or the reply chunk: a counted array of
// segments.
type WriteChunk struct {
	Segments []Segment
}

// Length returns the sum of the segments' lengths.
func (c WriteChunk) Length() uint64 {
	var n uint64
	for _, s := range c.Segments {
		n += uint64(s.Length)
	}
	return n
}

type span struct{ start, n int }

// Header is an RPC-over-RDMA transport header, version 1 or 2, or the
// first 8 octets of a header of an unknown version.
//
// A Header is reusable: DecodeFromBytes keeps the capacity of its slices,
// so decoding headers with chunk lists allocates nothing once warmed up.
// Slices alias the decoded buffer or the Header's own storage; copy what
// you keep.
type Header struct {
	layers.BaseLayer

	XID     uint32 // rdma_xid
	Version uint32 // rdma_vers: 1, 2, or unknown
	Credits uint32 // rdma_credit (tshark: flow_control)
	Proc    Proc   // rdma_proc

	// Align and Thresh are RDMA_MSGP's rdma_align and rdma_thresh (v1).
	Align, Thresh uint32

	Reads    []ReadSegment // read list, in wire order
	Writes   []WriteChunk  // write list
	HasReply bool          // reply chunk present
	Reply    WriteChunk    // reply chunk

	// RDMA_ERROR.
	Err               ErrCode
	VersLow, VersHigh uint32 // ERR_VERS range

	// RDMA_OPTIONAL (v2).
	OptType uint32
	OptInfo []byte

	// Unknown holds the bytes this decoder could not interpret: the rest
	// of a header of unknown version (after xid and vers), or the body of
	// an unknown procedure or error code.
	Unknown []byte

	// OpaquePayload is set (by Message.Decode) when the bytes after an
	// RDMA_OPTIONAL header are not an RPC message; they are then shown
	// as rpcrdma.payload.
	OpaquePayload bool

	// Answers is the call an RDMA_NOMSG or RDMA_ERROR answers (the reply
	// went into the reply chunk, or the transport refused the call), as
	// the call matcher knew it; Answers.Frame 0 when none was matched.
	Answers CallRef

	// Chunks is what moved by RDMA for the chunks of the call this reply
	// answers (set by the dissector that saw the transfers; not on the
	// wire).
	Chunks []ChunkData

	// MaxSegments caps the segments accepted in one chunk list
	// (0: DefaultMaxSegments). Hitting it stops the decode
	// with CodeSegmentCap, a warning: the limit is this program's, no rule of
	// RFC 8166.
	MaxSegments int

	segs   []Segment
	spans  []span
	reply  span
	listed bool // chunk lists were (at least partly) decoded
	notes  notes
}

// Known reports whether the version is one this package decodes (1 or 2).
func (h *Header) Known() bool { return h.Version == 1 || h.Version == 2 }

// HasChunkLists reports whether the header carries the three chunk lists
// (RDMA_MSG, RDMA_NOMSG, and version 1 RDMA_MSGP).
func (h *Header) HasChunkLists() bool {
	return h.Known() && (h.Proc == ProcMsg || h.Proc == ProcNoMsg || (h.Proc == ProcMsgP && h.Version == 1))
}

// CarriesRPC reports whether an RPC message follows the header in the Send
// (RDMA_MSG, RDMA_MSGP, and RDMA_OPTIONAL with bytes after it).
func (h *Header) CarriesRPC() bool {
	if !h.Known() || len(h.Payload) == 0 {
		return false
	}
	return h.Proc == ProcMsg || (h.Proc == ProcMsgP && h.Version == 1) || (h.Proc == ProcOptional && h.Version == 2)
}

// LayerType is LayerTypeHeader.
func (h *Header) LayerType() gopacket.LayerType { return LayerTypeHeader }

// CanDecode is LayerTypeHeader.
func (h *Header) CanDecode() gopacket.LayerClass { return LayerTypeHeader }

// NextLayerType is LayerTypeRPC when an RPC message follows.
func (h *Header) NextLayerType() gopacket.LayerType {
	if h.CarriesRPC() {
		return LayerTypeRPC
	}
	return gopacket.LayerTypePayload
}

func (h *Header) maxSegs() int {
	if h.MaxSegments > 0 {
		return h.MaxSegments
	}
	return DefaultMaxSegments
}

// reset empties h for the next decode, keeping MaxSegments and the
// capacity of its slices. Field by field: assigning a whole Header literal
// built it on the stack and copied ~500 octets (with write barriers) per
// decode, more than decoding a typical header; the notes' array need not
// be cleared (only notes.n of it is read). TestResets checks that every
// field is covered.
func (h *Header) reset() {
	h.Contents, h.Payload = nil, nil
	h.XID, h.Version, h.Credits, h.Proc = 0, 0, 0, 0
	h.Align, h.Thresh = 0, 0
	h.Reads, h.Writes = h.Reads[:0], h.Writes[:0]
	h.HasReply, h.Reply = false, WriteChunk{}
	h.Err, h.VersLow, h.VersHigh = 0, 0, 0
	h.OptType, h.OptInfo, h.Unknown = 0, nil, nil
	h.OpaquePayload = false
	h.Answers = CallRef{}
	h.Chunks = h.Chunks[:0]
	h.segs, h.spans, h.reply, h.listed = h.segs[:0], h.spans[:0], span{}, false
	h.notes.reset()
}

func herr(code, what string, off int, format string, args ...any) *DecodeError {
	return &DecodeError{Code: code, Layer: "rpcrdma", Field: what, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// DecodeFromBytes decodes a transport header from the start of data (a
// complete Send payload). Contents is the header, Payload what follows it.
// On error the fields decoded so far stay set (so a view can show them)
// and the error is a *DecodeError.
//
// RDMA_MSG and RDMA_NOMSG of a known version, nearly every header, are
// decoded here; the rest (short headers, unknown versions, the other
// procedures) by decodeRare, out of line: its code would spread this
// function's over more of the instruction cache.
func (h *Header) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.reset()
	if len(data) < 16 {
		return h.decodeRare(data, df)
	}
	h.XID = binary.BigEndian.Uint32(data)
	h.Version = binary.BigEndian.Uint32(data[4:])
	if !h.Known() {
		return h.decodeRare(data, df)
	}
	h.Credits = binary.BigEndian.Uint32(data[8:])
	h.Proc = Proc(binary.BigEndian.Uint32(data[12:]))
	if h.Proc != ProcMsg && h.Proc != ProcNoMsg {
		return h.decodeRare(data, df)
	}
	off, err := h.decodeLists(data, 16) // off is within data
	h.Contents, h.Payload = data[:off], data[off:]
	if err != nil {
		h.Payload = nil
		return err
	}
	if (len(h.Payload) == 0) == (h.Proc == ProcMsg) {
		// An RDMA_MSG without its RPC message, or octets after an
		// RDMA_NOMSG header.
		h.notePayload(off)
	}
	return nil
}

// decodeRare decodes a header DecodeFromBytes does not (it decodes any).
//
//go:noinline
func (h *Header) decodeRare(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 8 {
		df.SetTruncated()
		return short(CodeTruncated, "rpcrdma", "rdma_xid/rdma_vers", 0, 8, len(data))
	}
	h.XID = binary.BigEndian.Uint32(data)
	h.Version = binary.BigEndian.Uint32(data[4:])
	if !h.Known() {
		// RFC 8166 §4.2: only rdma_xid and rdma_vers are at fixed places
		// in every version; show the rest as it is.
		h.Unknown = data[8:]
		h.Contents, h.Payload = data, nil
		h.notes.add(CodeUnknownVersion, finding.SeverityWarning, 4, h.Version, 0)
		return nil
	}
	if len(data) < 16 {
		df.SetTruncated()
		h.Contents = data
		return short(CodeTruncated, "rpcrdma", "rdma_credit/rdma_proc", 8, 16, len(data))
	}
	h.Credits = binary.BigEndian.Uint32(data[8:])
	h.Proc = Proc(binary.BigEndian.Uint32(data[12:]))
	off := 16
	var err error
	switch h.Proc {
	case ProcMsg, ProcNoMsg:
		off, err = h.decodeLists(data, off)
	case ProcMsgP:
		h.notes.add(CodeDeprecatedProc, finding.SeverityWarning, 12, uint32(h.Proc), 0)
		if h.Version == 1 {
			if len(data) < off+8 {
				df.SetTruncated()
				err = short(CodeTruncated, "rpcrdma", "rdma_align/rdma_thresh", off, 8, len(data)-off)
				break
			}
			h.Align, h.Thresh = binary.BigEndian.Uint32(data[off:]), binary.BigEndian.Uint32(data[off+4:])
			off, err = h.decodeLists(data, off+8)
		}
	case ProcDone:
		h.notes.add(CodeDeprecatedProc, finding.SeverityWarning, 12, uint32(h.Proc), 0)
	case ProcError:
		off, err = h.decodeError(data, off, df)
	case ProcOptional:
		if h.Version != 2 {
			h.notes.add(CodeUnknownProc, finding.SeverityError, 12, uint32(h.Proc), h.Version)
			h.Unknown = data[off:]
			off = len(data)
			break
		}
		off, err = h.decodeOptional(data, off, df)
	default:
		h.notes.add(CodeUnknownProc, finding.SeverityError, 12, uint32(h.Proc), h.Version)
		h.Unknown = data[off:]
		off = len(data)
	}
	return h.finish(data, off, err)
}

// finish sets Contents and Payload for a header that ends at off (err:
// where its decoding stopped, and why).
func (h *Header) finish(data []byte, off int, err error) error {
	if off > len(data) {
		off = len(data)
	}
	h.Contents, h.Payload = data[:off], data[off:]
	if err != nil {
		h.Payload = nil
		return err
	}
	if len(h.Payload) == 0 && h.Proc == ProcMsg || len(h.Payload) > 0 && !h.CarriesRPC() {
		h.notePayload(off)
	}
	return nil
}

// notePayload notes an RDMA_MSG without an RPC message, or octets after
// a header that carries none (which ends at off).
//
//go:noinline
func (h *Header) notePayload(off int) {
	if len(h.Payload) == 0 {
		h.notes.add(CodeMissingRPC, finding.SeverityWarning, off, 0, 0)
		return
	}
	h.notes.add(CodeUnexpectedPayload, finding.SeverityWarning, off, uint32(len(h.Payload)), 0)
}

func (h *Header) decodeError(data []byte, off int, df gopacket.DecodeFeedback) (int, error) {
	if len(data) < off+4 {
		df.SetTruncated()
		return off, short(CodeTruncated, "rpcrdma", "rdma_err", off, 4, len(data)-off)
	}
	h.Err = ErrCode(binary.BigEndian.Uint32(data[off:]))
	off += 4
	switch {
	case h.Err == ErrVers:
		if len(data) < off+8 {
			df.SetTruncated()
			return off, short(CodeTruncated, "rpcrdma", "rdma_vers_low/rdma_vers_high", off, 8, len(data)-off)
		}
		h.VersLow, h.VersHigh = binary.BigEndian.Uint32(data[off:]), binary.BigEndian.Uint32(data[off+4:])
		return off + 8, nil
	case h.Err == ErrChunk, h.Version == 2 && h.Err == ErrInvalOption:
		return off, nil
	}
	h.notes.add(CodeUnknownError, finding.SeverityError, off-4, uint32(h.Err), h.Version)
	h.Unknown = data[off:]
	return len(data), nil
}

func (h *Header) decodeOptional(data []byte, off int, df gopacket.DecodeFeedback) (int, error) {
	if len(data) < off+8 {
		df.SetTruncated()
		return off, short(CodeTruncated, "rpcrdma", "rdma_opttype/rdma_optinfo length", off, 8, len(data)-off)
	}
	h.OptType = binary.BigEndian.Uint32(data[off:])
	n := binary.BigEndian.Uint32(data[off+4:])
	off += 8
	if uint64(n) > uint64(len(data)-off) {
		df.SetTruncated()
		return off, herr(CodeTruncated, "rdma_optinfo", off, "length %d exceeds the %d octets left", n, len(data)-off)
	}
	h.OptInfo = data[off : off+int(n)]
	off += int(n)
	p := pad4(int(n)) - int(n)
	if len(data)-off < p {
		df.SetTruncated()
		return off, short(CodeTruncated, "rpcrdma", "rdma_optinfo padding", off, p, len(data)-off)
	}
	for _, c := range data[off : off+p] {
		if c != 0 {
			h.notes.add(CodeNonZeroPadding, finding.SeverityWarning, off, uint32(p), 0)
			break
		}
	}
	return off + p, nil
}

// decodeLists reads the read list, write list and reply chunk starting at
// off. Every loop consumes at least 4 octets per step and stops at the
// end of data, so no input makes it spin.
func (h *Header) decodeLists(data []byte, off int) (int, error) {
	h.listed = true
	off, err := h.readLists(data, off)
	h.materialize()
	return off, err
}

func (h *Header) readLists(data []byte, off int) (int, error) {
	if len(data)-off >= 12 && binary.BigEndian.Uint64(data[off:]) == 0 && binary.BigEndian.Uint32(data[off+8:]) == 0 {
		// No chunks, as in most messages: the read list's and write
		// list's terminating 0 and no reply chunk.
		return off + 12, nil
	}
	max := h.maxSegs()
	var more bool
	var err error
	// Read list: { 1, position, handle, length, offset } … 0.
	for i := 0; ; i++ {
		if more, off, err = listItem(data, off, i, &readList); !more {
			break
		}
		p := off + 4
		if i >= max || len(data)-p < 20 {
			return off, readItemErr(data, p, i, max)
		}
		h.Reads = append(h.Reads, ReadSegment{Position: binary.BigEndian.Uint32(data[p:]),
			Segment: Segment{Handle: binary.BigEndian.Uint32(data[p+4:]), Length: binary.BigEndian.Uint32(data[p+8:]), Offset: binary.BigEndian.Uint64(data[p+12:])}})
		off = p + 20
	}
	// Write list: { 1, count, count × segment } … 0.
	total := 0
	for i := 0; err == nil; i++ {
		if more, off, err = listItem(data, off, i, &writeList); !more {
			break
		}
		off, err = h.decodeChunk(data, off+4, i, &total, max, false)
	}
	if err != nil {
		return off, err
	}
	// Reply chunk: 0, or { 1, count, segments }.
	if len(data)-off >= 4 {
		switch binary.BigEndian.Uint32(data[off:]) {
		case 0:
			return off + 4, nil
		case 1:
			total = 0
			off, err := h.decodeChunk(data, off+4, -1, &total, max, true)
			h.HasReply = err == nil
			return off, err
		}
	}
	return off, replyDiscriminatorErr(data, off)
}

// The errors of the chunk lists are made by functions of their own: the
// code that decodes a good header stays short.

// readItemErr is the error of read list entry i at p: past the cap of
// max segments, or cut short.
func readItemErr(data []byte, p, i, max int) error {
	if i >= max {
		return herr(CodeSegmentCap, "read list", p-4, "more than %d segments (the configured cap)", max)
	}
	return short(CodeChunkListUnterminated, "rpcrdma", "read list entry "+strconv.Itoa(i), p, 20, len(data)-p)
}

// replyDiscriminatorErr is the error of the reply chunk's discriminator
// at off: missing, or neither 0 nor 1.
func replyDiscriminatorErr(data []byte, off int) error {
	if len(data)-off < 4 {
		return herr(CodeChunkListUnterminated, "reply chunk", off, "need 4 octets for the discriminator, have %d", len(data)-off)
	}
	return herr(CodeBadDiscriminator, "reply chunk", off, "discriminator %d is not 0 or 1", binary.BigEndian.Uint32(data[off:]))
}

// chunkErr is the error of chunk i's segment count at off (the reply
// chunk's when i < 0), with total segments in the list before it: missing,
// more segments than the header holds, or past the cap of max.
func chunkErr(data []byte, off, i, total, max int) error {
	if len(data)-off < 4 {
		return short(CodeChunkListUnterminated, "rpcrdma", chunkName(i)+" segment count", off, 4, len(data)-off)
	}
	n := binary.BigEndian.Uint32(data[off:])
	if left := len(data) - off - 4; uint64(n) > uint64(left/16) {
		return herr(CodeSegmentCountOverrun, chunkName(i)+" segment count", off,
			"%d segments need %d octets, only %d left", n, uint64(n)*16, left)
	}
	return herr(CodeSegmentCap, chunkName(i), off, "%d segments exceed the configured cap of %d per list", total+int(n), max)
}

// listNames names a chunk list and its items in errors.
type listNames struct{ list, item, items string }

var (
	readList  = listNames{"read list", "entry", "entries"}
	writeList = listNames{"write list", "chunk", "chunks"}
)

// listItem reads the discriminator before item i of list l at off: more
// when an item follows it (off is returned unchanged), else the offset
// past the list's terminating 0, or off and the error.
func listItem(data []byte, off, i int, l *listNames) (more bool, next int, err error) {
	if len(data)-off >= 4 {
		switch binary.BigEndian.Uint32(data[off:]) {
		case 0:
			return false, off + 4, nil
		case 1:
			return true, off, nil
		}
	}
	return false, off, listItemErr(data, off, i, l)
}

// listItemErr is the error of item i's discriminator at off in list l:
// missing (no terminating 0), or neither 0 nor 1.
func listItemErr(data []byte, off, i int, l *listNames) error {
	if len(data)-off < 4 {
		return herr(CodeChunkListUnterminated, l.list, off,
			"the list has %d %s and no terminating 0 before the end of the header", i, l.items)
	}
	return herr(CodeBadDiscriminator, l.list+" "+l.item+" "+strconv.Itoa(i), off, "discriminator %d is not 0 or 1", binary.BigEndian.Uint32(data[off:]))
}

func chunkName(i int) string {
	if i < 0 {
		return "reply chunk"
	}
	return "write list chunk " + strconv.Itoa(i)
}

// decodeChunk reads a write chunk (index i of the write list) or, with
// reply set, the reply chunk.
func (h *Header) decodeChunk(data []byte, off int, i int, total *int, max int, reply bool) (int, error) {
	if len(data)-off < 4 {
		return off, chunkErr(data, off, i, *total, max)
	}
	n := binary.BigEndian.Uint32(data[off:])
	if uint64(n) > uint64((len(data)-off-4)/16) || *total+int(n) > max {
		return off, chunkErr(data, off, i, *total, max)
	}
	off += 4
	*total += int(n)
	sp := span{start: len(h.segs), n: int(n)}
	for k := 0; k < int(n); k++ {
		h.segs = append(h.segs, Segment{Handle: binary.BigEndian.Uint32(data[off:]), Length: binary.BigEndian.Uint32(data[off+4:]), Offset: binary.BigEndian.Uint64(data[off+8:])})
		off += 16
	}
	if reply {
		h.reply = sp
	} else {
		h.spans = append(h.spans, sp)
	}
	return off, nil
}

// materialize points Writes and Reply into the flat segment storage once
// it has stopped growing.
func (h *Header) materialize() {
	h.Writes = h.Writes[:0]
	if len(h.spans) == 0 && !h.HasReply {
		return
	}
	for _, s := range h.spans {
		h.Writes = append(h.Writes, WriteChunk{Segments: h.segs[s.start : s.start+s.n : s.start+s.n]})
	}
	if h.HasReply {
		h.Reply = WriteChunk{Segments: h.segs[h.reply.start : h.reply.start+h.reply.n : h.reply.start+h.reply.n]}
	}
}

// SegmentCount returns the number of segments in all three lists.
func (h *Header) SegmentCount() int { return len(h.Reads) + len(h.segs) }

// SerializeTo writes the header in front of whatever b already holds (the
// RPC message, for RDMA_MSG). It writes exactly the fields set: an unknown
// version writes xid, vers and Unknown.
func (h *Header) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	n := h.wireLen()
	buf, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(buf, h.XID)
	binary.BigEndian.PutUint32(buf[4:], h.Version)
	if !h.Known() {
		copy(buf[8:], h.Unknown)
		return nil
	}
	binary.BigEndian.PutUint32(buf[8:], h.Credits)
	binary.BigEndian.PutUint32(buf[12:], uint32(h.Proc))
	w := buf[16:]
	switch {
	case h.Proc == ProcMsgP && h.Version == 1:
		binary.BigEndian.PutUint32(w, h.Align)
		binary.BigEndian.PutUint32(w[4:], h.Thresh)
		w = h.putLists(w[8:])
	case h.Proc == ProcMsg || h.Proc == ProcNoMsg:
		w = h.putLists(w)
	case h.Proc == ProcError:
		binary.BigEndian.PutUint32(w, uint32(h.Err))
		w = w[4:]
		if h.Err == ErrVers {
			binary.BigEndian.PutUint32(w, h.VersLow)
			binary.BigEndian.PutUint32(w[4:], h.VersHigh)
			w = w[8:]
		}
	case h.Proc == ProcOptional && h.Version == 2:
		binary.BigEndian.PutUint32(w, h.OptType)
		binary.BigEndian.PutUint32(w[4:], uint32(len(h.OptInfo)))
		copy(w[8:], h.OptInfo)
		for i := 8 + len(h.OptInfo); i < 8+pad4(len(h.OptInfo)); i++ {
			w[i] = 0
		}
		w = w[8+pad4(len(h.OptInfo)):]
	}
	copy(w, h.Unknown)
	return nil
}

func (h *Header) wireLen() int {
	if !h.Known() {
		return 8 + len(h.Unknown)
	}
	n := 16
	switch {
	case h.Proc == ProcMsgP && h.Version == 1:
		n += 8 + h.listsLen()
	case h.Proc == ProcMsg || h.Proc == ProcNoMsg:
		n += h.listsLen()
	case h.Proc == ProcError:
		n += 4
		if h.Err == ErrVers {
			n += 8
		}
	case h.Proc == ProcOptional && h.Version == 2:
		n += 8 + pad4(len(h.OptInfo))
	}
	return n + len(h.Unknown)
}

func (h *Header) listsLen() int {
	n := 4 + 24*len(h.Reads) + 4 + 4
	for _, c := range h.Writes {
		n += 8 + 16*len(c.Segments)
	}
	if h.HasReply {
		n += 4 + 16*len(h.Reply.Segments)
	}
	return n
}

func putSeg(w []byte, s Segment) []byte {
	binary.BigEndian.PutUint32(w, s.Handle)
	binary.BigEndian.PutUint32(w[4:], s.Length)
	binary.BigEndian.PutUint64(w[8:], s.Offset)
	return w[16:]
}

func (h *Header) putLists(w []byte) []byte {
	for _, r := range h.Reads {
		binary.BigEndian.PutUint32(w, 1)
		binary.BigEndian.PutUint32(w[4:], r.Position)
		w = putSeg(w[8:], r.Segment)
	}
	binary.BigEndian.PutUint32(w, 0)
	w = w[4:]
	for _, c := range h.Writes {
		binary.BigEndian.PutUint32(w, 1)
		binary.BigEndian.PutUint32(w[4:], uint32(len(c.Segments)))
		w = w[8:]
		for _, s := range c.Segments {
			w = putSeg(w, s)
		}
	}
	binary.BigEndian.PutUint32(w, 0)
	w = w[4:]
	if !h.HasReply {
		binary.BigEndian.PutUint32(w, 0)
		return w[4:]
	}
	binary.BigEndian.PutUint32(w, 1)
	binary.BigEndian.PutUint32(w[4:], uint32(len(h.Reply.Segments)))
	w = w[8:]
	for _, s := range h.Reply.Segments {
		w = putSeg(w, s)
	}
	return w
}

// Field declarations (tshark's rpcordma.* leaf names where it has them).
var (
	ProtoHeader = field.NewProto("rpcrdma", "RPC-over-RDMA transport header")

	fXID        = ProtoHeader.Hex("rpcrdma.xid", 32, "XID").WithRef("RFC 8166 §4.2.1")
	fVersion    = ProtoHeader.Uint("rpcrdma.version", 32, "Version").WithRef("RFC 8166 §4.2.2")
	fCredits    = ProtoHeader.Uint("rpcrdma.flow_control", 32, "Flow Control (credits)").WithRef("RFC 8166 §4.2.3")
	fMsgType    = ProtoHeader.Uint("rpcrdma.msg_type", 32, "Message Type").WithNames(procNames).WithRef("RFC 8166 §4.2.4")
	fHdrLen     = ProtoHeader.Uint("rpcrdma.header_length", 32, "Transport header length").WithUnit("bytes")
	fAlign      = ProtoHeader.Uint("rpcrdma.rdma_align", 32, "RDMA align")
	fThresh     = ProtoHeader.Uint("rpcrdma.rdma_thresh", 32, "RDMA threshold")
	fReadsCount = ProtoHeader.Uint("rpcrdma.reads_count", 32, "Read list (segments)").WithRef("RFC 8166 §4.3.1")
	gReadChunk  = ProtoHeader.Group("rpcrdma.read_chunk", "Read segment")
	fPosition   = ProtoHeader.Uint("rpcrdma.position", 32, "Position in XDR")
	fHandle     = ProtoHeader.Hex("rpcrdma.rdma_handle", 32, "RDMA handle")
	fLength     = ProtoHeader.Uint("rpcrdma.rdma_length", 32, "RDMA length").WithUnit("bytes")
	fOffset     = ProtoHeader.Hex("rpcrdma.rdma_offset", 64, "RDMA offset")
	fWrites     = ProtoHeader.Uint("rpcrdma.writes_count", 32, "Write list (chunks)").WithRef("RFC 8166 §4.3.2")
	gWriteChunk = ProtoHeader.Group("rpcrdma.write_chunk", "Write chunk")
	fSegCount   = ProtoHeader.Uint("rpcrdma.segment_count", 32, "Segment count")
	gSegment    = ProtoHeader.Group("rpcrdma.segment", "RDMA segment")
	fReplyCount = ProtoHeader.Uint("rpcrdma.reply_count", 32, "Reply chunk (0 or 1)").WithRef("RFC 8166 §4.3.3")
	gReplyChunk = ProtoHeader.Group("rpcrdma.reply_chunk", "Reply chunk")
	fErrCode    = ProtoHeader.Uint("rpcrdma.errcode", 32, "Error code").WithNames(errNamesV1).WithRef("RFC 8166 §4.2.4")
	fErrCode2   = ProtoHeader.Uint("rpcrdma.errcode_v2", 32, "Error code (version 2)").WithNames(errNamesV2).WithRef("draft-cel-nfsv4-rpcrdma-version-two-00 §4.2")
	fVersLow    = ProtoHeader.Uint("rpcrdma.vers_low", 32, "Version low")
	fVersHigh   = ProtoHeader.Uint("rpcrdma.vers_high", 32, "Version high")
	fOptType    = ProtoHeader.Hex("rpcrdma.opttype", 32, "Optional operation type").WithRef("draft-cel-nfsv4-rpcrdma-version-two-00 §3.1")
	fOptInfoLen = ProtoHeader.Uint("rpcrdma.optinfo_length", 32, "Optional operation data length").WithUnit("bytes")
	fOptInfo    = ProtoHeader.Bytes("rpcrdma.optinfo", "Optional operation data")
	fUnknown    = ProtoHeader.Bytes("rpcrdma.unknown", "Undecoded header bytes (unknown version, procedure or error)")
	fPayload    = ProtoHeader.Bytes("rpcrdma.payload", "Bytes after the header that are not an RPC message")
)

// Proto is ProtoHeader ("rpcrdma").
func (h *Header) Proto() *field.Proto { return ProtoHeader }

func visitSeg(v field.Visitor, s Segment) {
	v.Uint(fHandle, uint64(s.Handle))
	v.Uint(fLength, uint64(s.Length))
	v.Uint(fOffset, s.Offset)
}

// GetUint implements field.UintGetter for the XID, version, credits and
// message type.
func (h *Header) GetUint(f *field.Field) (v uint64, has, known bool) {
	switch f {
	case fXID:
		return uint64(h.XID), true, true
	case fVersion:
		return uint64(h.Version), true, true
	case fCredits, fMsgType:
		if !h.Known() || len(h.Contents) < 16 {
			return 0, false, true // VisitFields stops before them
		}
		if f == fCredits {
			return uint64(h.Credits), true, true
		}
		return uint64(h.Proc), true, true
	}
	return 0, false, false
}

// VisitFields reports the header's fields in wire order.
func (h *Header) VisitFields(v field.Visitor) {
	v.Uint(fXID, uint64(h.XID))
	v.Uint(fVersion, uint64(h.Version))
	if !h.Known() {
		v.Bytes(fUnknown, h.Unknown)
		return
	}
	if len(h.Contents) < 16 {
		return
	}
	v.Uint(fCredits, uint64(h.Credits))
	v.Uint(fMsgType, uint64(h.Proc))
	v.Uint(fHdrLen, uint64(len(h.Contents)))
	if h.Proc == ProcMsgP && h.Version == 1 && len(h.Contents) >= 24 {
		v.Uint(fAlign, uint64(h.Align))
		v.Uint(fThresh, uint64(h.Thresh))
	}
	if h.listed {
		v.Uint(fReadsCount, uint64(len(h.Reads)))
		for _, r := range h.Reads {
			v.Begin(gReadChunk)
			v.Uint(fPosition, uint64(r.Position))
			visitSeg(v, r.Segment)
			v.End()
		}
		v.Uint(fWrites, uint64(len(h.Writes)))
		for _, c := range h.Writes {
			v.Begin(gWriteChunk)
			v.Uint(fSegCount, uint64(len(c.Segments)))
			for _, s := range c.Segments {
				v.Begin(gSegment)
				visitSeg(v, s)
				v.End()
			}
			v.End()
		}
		if h.HasReply {
			v.Uint(fReplyCount, 1)
			v.Begin(gReplyChunk)
			v.Uint(fSegCount, uint64(len(h.Reply.Segments)))
			for _, s := range h.Reply.Segments {
				v.Begin(gSegment)
				visitSeg(v, s)
				v.End()
			}
			v.End()
		} else {
			v.Uint(fReplyCount, 0)
		}
	}
	visitChunkData(v, h.Chunks)
	if h.Proc == ProcError && len(h.Contents) >= 20 {
		if h.Version == 2 {
			v.Uint(fErrCode2, uint64(h.Err))
		} else {
			v.Uint(fErrCode, uint64(h.Err))
		}
		if h.Err == ErrVers && len(h.Contents) >= 28 {
			v.Uint(fVersLow, uint64(h.VersLow))
			v.Uint(fVersHigh, uint64(h.VersHigh))
		}
	}
	if h.Proc == ProcOptional && h.Version == 2 && len(h.Contents) >= 24 {
		v.Uint(fOptType, uint64(h.OptType))
		v.Uint(fOptInfoLen, uint64(len(h.OptInfo)))
		v.Bytes(fOptInfo, h.OptInfo)
	}
	if len(h.Unknown) > 0 {
		v.Bytes(fUnknown, h.Unknown)
	}
	if len(h.Payload) > 0 && (!h.CarriesRPC() || h.OpaquePayload) {
		v.Bytes(fPayload, h.Payload)
	}
}

// AppendSummary appends "RDMA_MSG xid=0x… credits=128 …".
func (h *Header) AppendSummary(b []byte) []byte {
	if !h.Known() {
		return h.appendUnknownSummary(b)
	}
	if h.Proc < Proc(len(procNameTable.low)) && procNameTable.known[h.Proc] {
		b = append(b, procNameTable.low[h.Proc]...)
	} else {
		b = append(b, h.Proc.String()...)
	}
	if h.Version != 1 {
		b = appendVersion(b, h.Version)
	}
	b = append(b, " xid=0x"...)
	b = appendHex32(b, h.XID)
	b = append(b, " credits="...)
	b = strconv.AppendUint(b, uint64(h.Credits), 10)
	if len(h.Reads) > 0 {
		b = append(b, " reads="...)
		b = strconv.AppendInt(b, int64(len(h.Reads)), 10)
	}
	if len(h.Writes) > 0 {
		b = append(b, " writes="...)
		b = strconv.AppendInt(b, int64(len(h.Writes)), 10)
	}
	if h.HasReply {
		b = append(b, " reply="...)
		b = strconv.AppendUint(b, h.Reply.Length(), 10)
	}
	if h.Proc == ProcError || h.Proc == ProcOptional {
		b = h.appendProcDetail(b)
	}
	return b
}

// The rare parts of the summary are out of line, so that the common
// one's code stays dense (it runs for every RPC-over-RDMA packet of the
// default view).

// appendUnknownSummary is the summary of a header of an unknown version.
//
//go:noinline
func (h *Header) appendUnknownSummary(b []byte) []byte {
	b = append(b, "RPC-over-RDMA unknown version "...)
	b = strconv.AppendUint(b, uint64(h.Version), 10)
	b = append(b, " xid=0x"...)
	return appendHex32(b, h.XID)
}

// appendVersion appends a version other than 1.
//
//go:noinline
func appendVersion(b []byte, v uint32) []byte {
	b = append(b, " v"...)
	return strconv.AppendUint(b, uint64(v), 10)
}

// appendProcDetail appends what RDMA_ERROR and RDMA_OPTIONAL carry.
//
//go:noinline
func (h *Header) appendProcDetail(b []byte) []byte {
	switch h.Proc {
	case ProcError:
		names := errNamesV1
		if h.Version == 2 {
			names = errNamesV2
		}
		b = append(b, ' ')
		if s, ok := names[uint64(h.Err)]; ok {
			b = append(b, s...)
		} else {
			b = append(b, "err="...)
			b = strconv.AppendUint(b, uint64(h.Err), 10)
		}
		if h.Err == ErrVers {
			b = append(b, " low="...)
			b = strconv.AppendUint(b, uint64(h.VersLow), 10)
			b = append(b, " high="...)
			b = strconv.AppendUint(b, uint64(h.VersHigh), 10)
		}
	case ProcOptional:
		b = append(b, " opttype=0x"...)
		b = appendHex32(b, h.OptType)
	}
	return b
}

// appendHex32 appends v as eight hex digits (one append, one capacity
// check).
func appendHex32(b []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	return append(b, digits[v>>28], digits[v>>24&15], digits[v>>20&15], digits[v>>16&15],
		digits[v>>12&15], digits[v>>8&15], digits[v>>4&15], digits[v&15])
}

// AppendFindings appends the non-fatal conditions noticed while decoding
// (Offset relative to the header's first byte).
func (h *Header) AppendFindings(dst []finding.Finding) []finding.Finding {
	return h.notes.appendTo(dst, "rpcrdma", func(n note, f *finding.Finding) {
		switch n.code {
		case CodeUnknownVersion:
			f.Message = fmt.Sprintf("RPC-over-RDMA version %d is not 1 or 2; the header after rdma_vers (%d octets) is shown undecoded", n.a, len(h.Unknown))
			f.Section = "RFC 8166 §4.2.2"
		case CodeUnknownProc:
			f.Message = fmt.Sprintf("rdma_proc %d is not defined in version %d; %d octets left undecoded", n.a, n.b, len(h.Unknown))
		case CodeUnknownError:
			f.Message = fmt.Sprintf("rdma_err %d is not defined in version %d; %d octets left undecoded", n.a, n.b, len(h.Unknown))
		case CodeDeprecatedProc:
			f.Message = fmt.Sprintf("%s is not to be used (RFC 8166 §4.5; reserved in version 2)", Proc(n.a))
		case CodeNonZeroPadding:
			f.Message = fmt.Sprintf("the %d XDR padding octets after rdma_optinfo are not zero", n.a)
			f.Section = "RFC 4506 §4.10"
		case CodeMissingRPC:
			f.Message = "RDMA_MSG with no RPC message after the transport header"
		case CodeUnexpectedPayload:
			f.Message = fmt.Sprintf("%d octets follow a %s header, which carries no RPC message", n.a, h.Proc)
		}
	})
}
