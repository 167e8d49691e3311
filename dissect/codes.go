package dissect

import "github.com/cmpd-dissect/cmpd-dissect/finding"

// Catalog describes the codes declared below, in their order.
var Catalog finding.Catalog

// Finding codes raised by dissect: frames, capture records, and the
// reassembly of RC Sends and iWARP streams. They are stable: expectation
// files and users key on them.
var (
	CodeChunkOutside      = Catalog.Add("rpcrdma.chunk-write-outside", finding.SeverityError, sectionChunks, "An RDMA Write with the handle of write or reply chunk segments that outstanding calls advertised on the connection (the same QP when its CM exchange was captured) falls outside every one of them. Not raised when the handle is shared by several calls (one R_Key for all memory) and the connection's setup was not captured: the Write may be into a segment advertised before the capture began.", "The responder wrote where the requester did not offer memory: the requester's memory protection should have refused it (a remote access error). Compare the calls' write list and reply chunk (rpcrdma.write_chunk, rpcrdma.reply_chunk) with the Write's RETH or tagged DDP header.")
	CodeChunkReadOutside  = Catalog.Add("rpcrdma.chunk-read-outside", finding.SeverityError, sectionReadChunk, "An RDMA Read Request (IB RETH; iWARP data source STag and TO) with the handle of read segments that outstanding calls advertised on the connection falls outside every one of them (same exception as rpcrdma.chunk-write-outside).", "The responder read memory the requester did not offer: compare the calls' read list (rpcrdma.read_chunk) with the Read Request.")
	CodeChunkUnwritten    = Catalog.Add("rpcrdma.chunk-unwritten", finding.SeverityWarning, sectionWriteChunk, "A reply's write list reports more octets written into a write chunk than the capture saw placed there by RDMA Write before the reply.", "If the capture lost no packets (no transport.psn-gap or iwarp.stream-gap on the connection), the responder reported data it never wrote: the requester reads stale memory as the results.")
	CodeChunkUnread       = Catalog.Add("rpcrdma.chunk-unread", finding.SeverityWarning, sectionReadChunk, "A call's read chunks were not wholly read by RDMA Read before a successful reply (RPC accepted, NFS status OK): the responder answered without the data the call offered.", "If the capture lost no packets (no transport.psn-gap or iwarp.stream-gap on the connection), the responder acted on arguments it never fetched. A chunk left unread with an error reply is normal and not reported.")
	CodeReplyChunkMissing = Catalog.Add("rpcrdma.reply-chunk-missing", finding.SeverityError, sectionInline, "A reply Send is longer than the requester's inline threshold (its RFC 8797 Receive size, or 1024 octets when its setup carried no private data) and its call offered no reply chunk: the requester's Receive buffer cannot hold it.", "The responder should have answered RDMA_ERROR ERR_CHUNK (RFC 8166 §4.5.3), or the requester should have offered a reply chunk for a reply this large. Unused reply chunks and short replies are normal (RFC 8166 §4.4.3).")
	CodeReplyOverDefault  = Catalog.Add("rpcrdma.reply-over-default-inline", finding.SeverityWarning, sectionInline, "A reply Send on a connection whose setup was not captured is longer than RFC 8166's default inline threshold (1024 octets) and its call offered no reply chunk: the requester's Receive buffer may not hold it, unless its setup agreed a larger threshold.", "Capture the connection's setup to know its thresholds; if none larger was agreed, the responder should have answered RDMA_ERROR ERR_CHUNK (RFC 8166 §4.5.3).")
	CodeChunkLimit        = Catalog.Add("rpcrdma.chunk-limit", finding.SeverityWarning, "", "A reply chunk being written was not held: the octets held for reply chunks reached the limit per connection or in all; that RDMA_NOMSG reply is shown without its RPC message.", "Raise --max-chunk-bytes-per-conn or --max-chunk-bytes if the memory is there.")
	CodeMalformed         = Catalog.Add("dissect.malformed", finding.SeverityError, "", "A layer could not be decoded; the layers before it are kept.", "The message names the layer and the frame offset: look at the octets there (-V). If the port does not carry what its number suggests, do not decode it so (--roce-port).")
	CodeTruncated         = Catalog.Add("dissect.truncated", finding.SeverityWarning, "", "The capture's snap length cut the frame inside a layer.", "Capture whole packets (tcpdump -s 0).")
	CodeShortFrame        = Catalog.Add("dissect.short-frame", finding.SeverityWarning, "", "A frame the capture stored whole (the snap length cut nothing) is shorter than a length field of its headers says (IPv4 total length, IPv6 payload length, UDP length, LRH packet length).", "When every frame of a kind is short by the same count, the capture point left those octets out; otherwise the sender wrote a wrong length.")
	CodeICRCNotCaptured   = Catalog.Add("dissect.icrc-not-captured", finding.SeverityInfo, "", "RoCEv2 frames hold their packets without the 4-octet ICRC that the IP and UDP lengths count, and the snap length cut nothing: the capture point (a NIC's sniffer mode, a port mirror) did not deliver the ICRC. The payloads are decoded whole, the ICRCs are not verified (bth.icrc.status 3, not present). Reported once per capture, on the first such frame.", "Nothing is wrong with the packets. To verify ICRCs, capture where the ICRC is delivered (a software RoCE device, or a mirror that keeps it).")
	CodeUnknownLinkType   = Catalog.Add("dissect.unknown-link-type", finding.SeverityWarning, "", "A frame of a link type this program does not dissect (it dissects Ethernet 1, raw IP 101, 228 and 229, Linux cooked 113 and 276, IPoIB 242, ERF 197 and InfiniBand 247).", "Capture on an Ethernet or IPoIB interface (RoCE, iWARP), on any (Linux cooked), or with an InfiniBand link type.")
	CodeRecordDamaged     = Catalog.Add("source.record-damaged", finding.SeverityError, "", "A capture file's record is damaged or the file ends inside it; the rest of that file is skipped.", "The file was cut short (copied while being written, or the capture was killed): capture again, or repair the file.")
	CodeSendLimit         = Catalog.Add("ib.send-limit", finding.SeverityWarning, "", "A multi-packet RC Send exceeded --max-send-bytes, or partial Sends were given up to stay within --max-send-buffer-bytes or the queue pairs followed: the Send is not decoded.", "Raise --max-send-bytes or --max-send-buffer-bytes.")
	CodeSendGap           = Catalog.Add("ib.send-gap", finding.SeverityInfo, sectionRC, "A packet of a multi-packet Send came out of sequence (PSN ahead of the one expected); it is ignored, as the responder ignores it, until the requester retransmits.", "If the network did not lose the packet, the capture did: check its drop count.")
	CodeSendIncomplete    = Catalog.Add("ib.send-incomplete", finding.SeverityWarning, sectionRC, "A new Send began on the queue pair, or the capture ended, before the last packet of a partial Send.", remedyCaptureEnd)
	CodeSendOrphan        = Catalog.Add("ib.send-orphan", finding.SeverityInfo, sectionRC, "A SEND_MIDDLE or SEND_LAST without its SEND_FIRST: the capture started inside the Send.", "")
	CodeIWARPBufferLimit  = Catalog.Add("iwarp.buffer-limit", finding.SeverityWarning, "", "An unfinished PDU reached --max-tcp-stream-bytes, or what all streams hold (unfinished PDUs, and the octets kept around holes for late segments) --max-tcp-total-bytes; an unfinished PDU's octets were dropped and the stream resynchronised, octets around a hole were not kept (a late segment that needed them is not decoded).", "Raise --max-tcp-stream-bytes or --max-tcp-total-bytes.")
	CodeIWARPStreamLimit  = Catalog.Add("iwarp.stream-limit", finding.SeverityWarning, "", "More TCP streams than --max-tcp-streams; the least recently seen were flushed and forgotten.", "Raise --max-tcp-streams.")
	CodeIWARPGap          = Catalog.Add("iwarp.stream-gap", finding.SeverityWarning, sectionIWARP, "Octets of an iWARP stream are missing before a segment: the capture lost them, or they come later out of order and are then not decoded (as tshark does). Reported on the frame after the hole; the decoder resynchronises there: by MPA markers where negotiated, else the next plausible FPDU (confirmed by its CRC, the next header, or the segment's end).", "Check the capture's drop count; capture whole packets.")
	CodeIWARPNotCaptured  = Catalog.Add("iwarp.not-captured", finding.SeverityInfo, sectionIWARP, "The capture's snap length cut TCP segments of an iWARP stream: the PDUs in the octets not captured are not decoded, and the decoder resynchronises after each cut segment. Reported once per stream direction; the cut frames carry dissect.truncated.", "Capture whole packets (tcpdump -s 0).")
	CodeIWARPResync       = Catalog.Add("iwarp.resync", finding.SeverityInfo, sectionIWARP, "FPDU framing was found (again) by its header and CRC or the next FPDU's header, after a gap or in a capture that starts mid-stream.", "")
	CodeIWARPFramingLost  = Catalog.Add("iwarp.framing-lost", finding.SeverityError, sectionIWARP, "An FPDU header is not plausible (DDP or RDMAP version, reserved bits, opcode); the decoder resynchronises.", "")
	CodeIWARPSendLimit    = Catalog.Add("iwarp.send-limit", finding.SeverityWarning, "", "A multi-FPDU Send exceeded --max-send-bytes, or more partial Sends were pending than allowed: the Send is not decoded.", "Raise --max-send-bytes.")
	CodeIWARPIncomplete   = Catalog.Add("iwarp.incomplete", finding.SeverityWarning, sectionIWARP, "The stream ended inside an MPA frame or FPDU, or with a Send still missing pieces.", remedyCaptureEnd)
	CodeULPShort          = Catalog.Add("send.ulp-short", finding.SeverityWarning, "", "A Send on a connection whose setup named SMB Direct, NVMe-oF, iSER or IPoIB-CM is shorter than that protocol's header; it is shown as a Send payload.", "If the service's port is used by another protocol here, the label is wrong; otherwise the sender broke its protocol.")
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

// remedyCaptureEnd is the remedy for what a capture's end or a drop
// leaves unfinished.
const remedyCaptureEnd = "At the end of a capture it is expected; otherwise check the capture's drop count."
