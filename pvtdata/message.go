// Package pvtdata knows what Upper Layer Protocols put in RDMA connection
// manager private data, above all the RPC-over-RDMA version 1 message of
// RFC 8797: its encoding, how a receiver finds and validates it in a received
// buffer (three reading modes, because real receivers differ), and the
// negotiation of inline thresholds and remote invalidation that follows.
//
// It decodes without allocating and imports nothing of this project except
// the field vocabulary, so every layer and the analysis can use it.
package pvtdata

import (
	"encoding/binary"
	"errors"
	"fmt"
)

const (
	// FormatIdentifier marks an RPC-over-RDMA version 1 CM private data
	// message; it is sent in network byte order (RFC 8797 §4, §8).
	FormatIdentifier uint32 = 0xf6ab0e18
	// SwappedIdentifier is FormatIdentifier as a little-endian writer puts
	// it on the wire.
	SwappedIdentifier uint32 = 0x180eabf6
	// MessageLen is the length of a version 1 message in octets.
	MessageLen = 8
	// Version1 is the only version RFC 8797 defines.
	Version1 = 1
	// FlagR is the R (remote invalidation) bit of the flags octet: the
	// last bit of the sixth octet (RFC 8797 §4 figure). §5.1 still calls
	// it "bit 15 of the Flags field", draft -05's name for the same bit
	// (draft -04 said "bit 8"); the wire position is the same.
	// Linux: RPCRDMA_CMP_F_SND_W_INV_OK = BIT(0).
	FlagR = 0x01
	// ReservedMask covers the 7 reserved bits of the flags octet.
	ReservedMask = 0xfe
	// MinSize and MaxSize bound the inline threshold sizes the 8-bit size
	// fields can express (RFC 8797 §4.2).
	MinSize = 1024
	MaxSize = 256 * 1024
	// DefaultInline is the RPC-over-RDMA version 1 default inline threshold
	// that applies when no valid message was received (RFC 8166 §3.3.3,
	// RFC 8797 §5.1).
	DefaultInline = 1024
)

// Message is the 8-octet RPC-over-RDMA version 1 CM private data message.
// Sizes are kept in their encoded form, as on the wire.
type Message struct {
	Identifier uint32 // Format Identifier
	Version    uint8
	Flags      uint8 // Reserved (7 bits) and R (bit 0)
	SendSize   uint8 // encoded: bytes/1024 - 1
	RecvSize   uint8 // encoded: bytes/1024 - 1
}

// RemoteInvalidation reports the R bit.
func (m Message) RemoteInvalidation() bool { return m.Flags&FlagR != 0 }

// Reserved returns the value of the 7 reserved bits (0 to 127).
func (m Message) Reserved() uint8 { return m.Flags >> 1 }

// SendBytes returns the decoded Send Size in octets.
func (m Message) SendBytes() int { return DecodeSize(m.SendSize) }

// ReceiveBytes returns the decoded Receive Size in octets.
func (m Message) ReceiveBytes() int { return DecodeSize(m.RecvSize) }

// AppendTo appends the 8 wire octets of m to b.
func (m Message) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, m.Identifier)
	return append(b, m.Version, m.Flags, m.SendSize, m.RecvSize)
}

// Bytes returns the 8 wire octets of m.
func (m Message) Bytes() [MessageLen]byte {
	var out [MessageLen]byte
	m.AppendTo(out[:0])
	return out
}

// ParseMessage reads the 8 octets at the start of b as a message, whatever
// their values. It fails only when b is shorter than MessageLen.
func ParseMessage(b []byte) (Message, error) {
	if len(b) < MessageLen {
		return Message{}, fmt.Errorf("pvtdata: message needs %d octets, have %d", MessageLen, len(b))
	}
	return Message{
		Identifier: binary.BigEndian.Uint32(b),
		Version:    b[4],
		Flags:      b[5],
		SendSize:   b[6],
		RecvSize:   b[7],
	}, nil
}

// DecodeSize turns an encoded size octet into octets: (v+1)·1024.
func DecodeSize(v uint8) int { return (int(v) + 1) << 10 }

// ErrSizeOutOfRange is wrapped by EncodeSize for a size the 8-bit field
// cannot express.
var ErrSizeOutOfRange = errors.New("size out of range")

// EncodeSize turns a size in octets into its encoded octet: bytes/1024 - 1.
// The size must be a multiple of 1024 from 1024 to 262144 (RFC 8797 §4.2).
func EncodeSize(bytes int) (uint8, error) {
	if bytes < MinSize || bytes > MaxSize {
		return 0, fmt.Errorf("%w: %d octets is outside %d..%d (RFC 8797 §4.2)", ErrSizeOutOfRange, bytes, MinSize, MaxSize)
	}
	if bytes%1024 != 0 {
		return 0, fmt.Errorf("%w: %d octets is not a multiple of 1024 (RFC 8797 §4.2)", ErrSizeOutOfRange, bytes)
	}
	return uint8(bytes/1024 - 1), nil
}

// Encode builds a version 1 message from sizes in octets.
func Encode(sendBytes, recvBytes int, remoteInvalidation bool) (Message, error) {
	s, err := EncodeSize(sendBytes)
	if err != nil {
		return Message{}, fmt.Errorf("send size: %w", err)
	}
	r, err := EncodeSize(recvBytes)
	if err != nil {
		return Message{}, fmt.Errorf("receive size: %w", err)
	}
	m := Message{Identifier: FormatIdentifier, Version: Version1, SendSize: s, RecvSize: r}
	if remoteInvalidation {
		m.Flags = FlagR
	}
	return m, nil
}
