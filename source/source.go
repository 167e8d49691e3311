// Package source reads captured frames: pcap and pcapng files (also
// compressed with gzip, zstd or LZ4, detected by magic, not by name),
// several files in order, standard input, and live capture from a Linux
// interface without cgo.
//
// It knows capture formats and nothing about RDMA. A Source hands frames one
// at a time into a caller-owned Frame whose Data aliases a buffer reused for
// the next frame: callers copy what they keep.
package source

import (
	"errors"
	"fmt"
	"time"
)

// Link types this program dissects (pcap LINKTYPE_ values).
const (
	LinkTypeEthernet   = 1   // DLT_EN10MB
	LinkTypeERF        = 197 // Endace ERF records (ibdump)
	LinkTypeInfiniBand = 247 // libpcap's RDMA sniffer on IB ports: frames start with the LRH
)

// Frame is one captured frame.
type Frame struct {
	// Source names the capture: the file name, "-" for standard input, or
	// the interface name for live capture.
	Source string
	// Number is the 1-based frame number across the whole run.
	Number int
	// Time is the capture timestamp (UTC).
	Time time.Time
	// CaptureLength and Length are the captured and original lengths.
	CaptureLength, Length int
	// LinkType is the pcap LINKTYPE_ value of the frame.
	LinkType int
	// Data is the captured bytes. It aliases a buffer the Source reuses.
	Data []byte
	// Offset is where the frame's record starts in its file (in the
	// decompressed stream for compressed files); -1 for live capture.
	Offset int64
	// Comments are the packet's comments (pcapng opt_comment), nil when
	// it has none.
	Comments []string
	// Ahead is what a Prefetch hook computed from Data ahead of decoding;
	// zero (Kind 0) from every other source.
	Ahead Ahead
	// Decoded is what a Prefetch hook decoded from Data for the decoder,
	// opaque to source (nil from every other source). A hook that keeps it
	// in a ring of InFlight entries finds an entry free again only when
	// the consumer is done with its frame.
	Decoded any
}

// Source hands captured frames in order.
type Source interface {
	// Next fills f with the next frame. It returns io.EOF after the last
	// frame, a *HeaderError when a file cannot be read at all, and a
	// *RecordError when a record is damaged; after a RecordError the
	// Source has given up on that file and Next goes on with the next one.
	Next(f *Frame) error
	// Close releases files and sockets.
	Close() error
}

// HeaderError reports a capture whose file header cannot be read: nothing
// of it can be dissected (exit code 2).
type HeaderError struct {
	File string
	Err  error
}

func (e *HeaderError) Error() string { return fmt.Sprintf("%s: %v", e.File, e.Err) }
func (e *HeaderError) Unwrap() error { return e.Err }

// RecordError reports a damaged or truncated record. The frames before it
// were delivered; the rest of that file is skipped (a pcap record header
// that lies about its length leaves nothing to resynchronise on).
type RecordError struct {
	File string
	// Frame is the number the damaged record would have had.
	Frame int
	// Offset is where the damaged record starts in the file (decompressed
	// stream for compressed files).
	Offset int64
	Err    error
	// What the damaged record's header says, as far as the file holds
	// it: Time is zero, and the lengths and LinkType are -1, where it
	// does not (a record cut inside its header, a block that is not a
	// packet).
	Time                  time.Time
	CaptureLength, Length int
	LinkType              int
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s: frame %d: record at offset %d: %v", e.File, e.Frame, e.Offset, e.Err)
}
func (e *RecordError) Unwrap() error { return e.Err }

// maxPacket is the largest captured length any reader accepts for a
// record (Wireshark's WTAP_MAX_PACKET_SIZE_STANDARD, its limit for every
// link type this tool decodes; wiretap's pcap reader does not raise it for
// a larger snap length either). A larger length is damage, found from the
// record header before the record is read, so that a corrupt or hostile
// length cannot make a reader allocate gigabytes.
const maxPacket = 262144

// ErrTruncated is wrapped by RecordErrors for a file that ends inside a
// record (a capture cut short by a full disk or a killed tcpdump).
var ErrTruncated = errors.New("file ends inside the record")
