package dissect

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Finding codes raised by dissect: frames, capture records, and the
// reassembly of RC Sends and iWARP streams. They are stable: expectation
// files and users key on them. Catalog says what each means.
const (
	CodeMalformed       = "dissect.malformed"
	CodeTruncated       = "dissect.truncated"
	CodeUnknownLinkType = "dissect.unknown-link-type"
	CodeRecordDamaged   = "source.record-damaged"

	CodeSendLimit      = "ib.send-limit"
	CodeSendGap        = "ib.send-gap"
	CodeSendIncomplete = "ib.send-incomplete"
	CodeSendOrphan     = "ib.send-orphan"

	CodeIWARPBufferLimit = "iwarp.buffer-limit"
	CodeIWARPStreamLimit = "iwarp.stream-limit"
	CodeIWARPGap         = "iwarp.stream-gap"
	CodeIWARPResync      = "iwarp.resync"
	CodeIWARPFramingLost = "iwarp.framing-lost"
	CodeIWARPSendLimit   = "iwarp.send-limit"
	CodeIWARPIncomplete  = "iwarp.incomplete"

	CodeChunkOutside      = "rpcrdma.chunk-write-outside"
	CodeChunkReadOutside  = "rpcrdma.chunk-read-outside"
	CodeChunkUnwritten    = "rpcrdma.chunk-unwritten"
	CodeChunkUnread       = "rpcrdma.chunk-unread"
	CodeReplyChunkMissing = "rpcrdma.reply-chunk-missing"
	CodeChunkLimit        = "rpcrdma.chunk-limit"

	CodeULPShort = "send.ulp-short"
)

// Sections of the reassembly findings; the limits are this program's, not
// the protocol's, and have none.
const (
	sectionRC    = "IBTA Vol 1 §9.7" // reliable service: PSN order, retransmission
	sectionIWARP = "RFC 5044 §4"     // FPDU framing
	// sectionChunks: a responder writes a reply chunk within the
	// segments the requester advertised.
	sectionChunks = "RFC 8166 §4.4.3"
	// sectionReadChunk: the responder pulls a read chunk's data by RDMA
	// Read from the segments the requester advertised.
	sectionReadChunk = "RFC 8166 §3.4.5"
	// sectionWriteChunk: the responder writes DDP-eligible results into
	// a write chunk and reports the lengths written in its reply.
	sectionWriteChunk = "RFC 8166 §3.4.6"
	// sectionInline: no Send longer than the receiver's inline threshold
	// (1024 octets unless RFC 8797 private data said otherwise).
	sectionInline = "RFC 8166 §3.3.2"
)

// Catalog describes every code this package raises.
var Catalog = finding.Catalog{
	{Code: CodeChunkOutside, Severity: finding.SeverityError, Section: sectionChunks,
		Summary: "An RDMA Write with the handle of write or reply chunk segments that outstanding calls advertised on the connection (the same QP when its CM exchange was captured) falls outside every one of them. Not raised when the handle is shared by several calls (one R_Key for all memory) and the connection's setup was not captured: the Write may be into a segment advertised before the capture began.",
		Remedy:  "The responder wrote where the requester did not offer memory: the requester's memory protection should have refused it (a remote access error). Compare the calls' write list and reply chunk (rpcrdma.write_chunk, rpcrdma.reply_chunk) with the Write's RETH or tagged DDP header."},
	{Code: CodeChunkReadOutside, Severity: finding.SeverityError, Section: sectionReadChunk,
		Summary: "An RDMA Read Request (IB RETH; iWARP data source STag and TO) with the handle of read segments that outstanding calls advertised on the connection falls outside every one of them (same exception as rpcrdma.chunk-write-outside).",
		Remedy:  "The responder read memory the requester did not offer: compare the calls' read list (rpcrdma.read_chunk) with the Read Request."},
	{Code: CodeChunkUnwritten, Severity: finding.SeverityWarning, Section: sectionWriteChunk,
		Summary: "A reply's write list reports more octets written into a write chunk than the capture saw placed there by RDMA Write before the reply.",
		Remedy:  "If the capture lost no packets (no transport.psn-gap or iwarp.stream-gap on the connection), the responder reported data it never wrote: the requester reads stale memory as the results."},
	{Code: CodeChunkUnread, Severity: finding.SeverityWarning, Section: sectionReadChunk,
		Summary: "A call's read chunks were not wholly read by RDMA Read before a successful reply (RPC accepted, NFS status OK): the responder answered without the data the call offered.",
		Remedy:  "If the capture lost no packets (no transport.psn-gap or iwarp.stream-gap on the connection), the responder acted on arguments it never fetched. A chunk left unread with an error reply is normal and not reported."},
	{Code: CodeReplyChunkMissing, Severity: finding.SeverityError, Section: sectionInline,
		Summary: "A reply Send is longer than the requester's inline threshold (its RFC 8797 Receive size, or 1024 octets when its setup carried no private data) and its call offered no reply chunk: the requester's Receive buffer cannot hold it. A warning when the connection's setup was not captured and the threshold is only RFC 8166's default.",
		Remedy:  "The responder should have answered RDMA_ERROR ERR_CHUNK (RFC 8166 §4.5.3), or the requester should have offered a reply chunk for a reply this large. Unused reply chunks and short replies are normal (RFC 8166 §4.4.3)."},
	{Code: CodeChunkLimit, Severity: finding.SeverityWarning,
		Summary: "A reply chunk being written was not held: the octets held for reply chunks reached the limit per connection or in all; that RDMA_NOMSG reply is shown without its RPC message.",
		Remedy:  "Raise --max-chunk-bytes-per-conn or --max-chunk-bytes if the memory is there."},
	{Code: CodeMalformed, Severity: finding.SeverityError,
		Summary: "A layer could not be decoded; the layers before it are kept.",
		Remedy:  "The message names the layer and the frame offset: look at the octets there (-V). If the port does not carry what its number suggests, do not decode it so (--roce-port)."},
	{Code: CodeTruncated, Severity: finding.SeverityWarning,
		Summary: "The capture's snap length cut the frame inside a layer.",
		Remedy:  "Capture whole packets (tcpdump -s 0)."},
	{Code: CodeUnknownLinkType, Severity: finding.SeverityWarning,
		Summary: "A frame of a link type this program does not dissect (it dissects Ethernet 1, raw IP 101, 228 and 229, Linux cooked 113 and 276, IPoIB 242, ERF 197 and InfiniBand 247).",
		Remedy:  "Capture on an Ethernet or IPoIB interface (RoCE, iWARP), on any (Linux cooked), or with an InfiniBand link type."},
	{Code: CodeRecordDamaged, Severity: finding.SeverityError,
		Summary: "A capture file's record is damaged or the file ends inside it; the rest of that file is skipped.",
		Remedy:  "The file was cut short (copied while being written, or the capture was killed): capture again, or repair the file."},
	{Code: CodeSendLimit, Severity: finding.SeverityWarning,
		Summary: "A multi-packet RC Send exceeded --max-send-bytes, or partial Sends were given up to stay within --max-send-buffer-bytes or the queue pairs followed: the Send is not decoded.",
		Remedy:  "Raise --max-send-bytes or --max-send-buffer-bytes."},
	{Code: CodeSendGap, Severity: finding.SeverityInfo, Section: sectionRC,
		Summary: "A packet of a multi-packet Send came out of sequence (PSN ahead of the one expected); it is ignored, as the responder ignores it, until the requester retransmits.",
		Remedy:  "If the network did not lose the packet, the capture did: check its drop count."},
	{Code: CodeSendIncomplete, Severity: finding.SeverityWarning, Section: sectionRC,
		Summary: "A new Send began on the queue pair, or the capture ended, before the last packet of a partial Send.",
		Remedy:  "At the end of a capture it is expected; otherwise check the capture's drop count."},
	{Code: CodeSendOrphan, Severity: finding.SeverityInfo, Section: sectionRC,
		Summary: "A SEND_MIDDLE or SEND_LAST without its SEND_FIRST: the capture started inside the Send."},
	{Code: CodeIWARPBufferLimit, Severity: finding.SeverityWarning,
		Summary: "An unfinished PDU reached --max-tcp-stream-bytes, or the unfinished PDUs of all streams --max-tcp-total-bytes; its octets were dropped and the stream resynchronised.",
		Remedy:  "Raise --max-tcp-stream-bytes or --max-tcp-total-bytes."},
	{Code: CodeIWARPStreamLimit, Severity: finding.SeverityWarning,
		Summary: "More TCP streams than --max-tcp-streams; the least recently seen were flushed and forgotten.",
		Remedy:  "Raise --max-tcp-streams."},
	{Code: CodeIWARPGap, Severity: finding.SeverityWarning, Section: sectionIWARP,
		Summary: "Octets of an iWARP stream are missing before a segment: the capture lost them, or they come later out of order and are then not decoded (as tshark does). Reported on the frame after the hole; the decoder resynchronises there: by MPA markers where negotiated, else the next plausible FPDU (confirmed by its CRC, the next header, or the segment's end).",
		Remedy:  "Check the capture's drop count; capture whole packets."},
	{Code: CodeIWARPResync, Severity: finding.SeverityInfo, Section: sectionIWARP,
		Summary: "FPDU framing was found (again) by its header and CRC or the next FPDU's header, after a gap or in a capture that starts mid-stream."},
	{Code: CodeIWARPFramingLost, Severity: finding.SeverityError, Section: sectionIWARP,
		Summary: "An FPDU header is not plausible (DDP or RDMAP version, reserved bits, opcode); the decoder resynchronises."},
	{Code: CodeIWARPSendLimit, Severity: finding.SeverityWarning,
		Summary: "A multi-FPDU Send exceeded --max-send-bytes, or more partial Sends were pending than allowed: the Send is not decoded.",
		Remedy:  "Raise --max-send-bytes."},
	{Code: CodeIWARPIncomplete, Severity: finding.SeverityWarning, Section: sectionIWARP,
		Summary: "The stream ended inside an MPA frame or FPDU, or with a Send still missing pieces.",
		Remedy:  "At the end of a capture it is expected; otherwise check the capture's drop count."},
	{Code: CodeULPShort, Severity: finding.SeverityWarning,
		Summary: "A Send on a connection whose setup named SMB Direct, NVMe-oF, iSER or IPoIB-CM is shorter than that protocol's header; it is shown as a Send payload.",
		Remedy:  "If the service's port is used by another protocol here, the label is wrong; otherwise the sender broke its protocol."},
}
