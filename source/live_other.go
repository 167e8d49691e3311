//go:build !linux

package source

import (
	"errors"
	"io"
)

// Live is live capture; only Linux (AF_PACKET) is supported.
type Live struct {
	// Idle is never called (see the Linux Live).
	Idle func()
}

// OpenLive fails: live capture needs Linux AF_PACKET sockets.
func OpenLive(opts LiveOptions) (*Live, error) {
	return nil, errors.New("live capture is supported on Linux only")
}

// Stop does nothing.
func (l *Live) Stop() {}

// Next returns io.EOF.
func (l *Live) Next(f *Frame) error { return io.EOF }

// Close does nothing.
func (l *Live) Close() error { return nil }

// Interface is empty.
func (l *Live) Interface() string { return "" }

// Captured is 0.
func (l *Live) Captured() int { return 0 }

// KernelStats fails.
func (l *Live) KernelStats() (received, dropped uint, err error) {
	return 0, 0, errors.New("live capture is supported on Linux only")
}

// DropPrivileges fails: it is for live capture.
func DropPrivileges(u *PrivUser) error {
	return errors.New("-Z is supported on Linux only")
}
