//go:build linux

package source

import (
	"encoding/binary"
	"errors"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cmpd-dissect/cmpd-dissect/capfilter"
)

// anySocket captures on every interface ("-i any") as libpcap does: an
// AF_PACKET datagram socket bound to no interface, whose packets arrive
// without their link-layer header, and each frame written as
// LINKTYPE_LINUX_SLL: the 16-octet cooked header made from the packet's
// sockaddr_ll (packet type, ARPHRD_ type, link-layer source address,
// protocol), then the packet.
type anySocket struct {
	fd  int
	buf []byte
	// match runs the capture filter, compiled for LINUX_SLL frames, on
	// each frame (nil: none).
	match *capfilter.Matcher
	// lo is the loopback interface's index: libpcap drops the outgoing
	// copy of each packet there (each is seen leaving and arriving).
	lo int
}

// sllHeaderLen is the LINKTYPE_LINUX_SLL header's length.
const sllHeaderLen = 16

// openAny opens the socket for "-i any".
func openAny(opts LiveOptions) (*anySocket, error) { return openCooked(opts, 0) }

// openCooked opens a cooked socket on the interface of index ifindex, or
// on every interface (0). libpcap captures an interface whose link layer
// it has no link type for (IPoIB's ARPHRD_INFINIBAND, a tun device's
// ARPHRD_NONE …) so too: what the kernel hands a raw socket there is no
// Ethernet frame.
func openCooked(opts LiveOptions, ifindex int) (*anySocket, error) {
	flt, err := capfilter.Compile(opts.Filter, LinkTypeLinuxSLL)
	if err != nil {
		return nil, err
	}
	a := &anySocket{lo: -1}
	if flt != nil {
		if a.match, err = flt.NewMatcher(); err != nil {
			return nil, err
		}
	}
	if ifs, err := net.Interfaces(); err == nil {
		for _, i := range ifs {
			if i.Flags&net.FlagLoopback != 0 {
				a.lo = i.Index
			}
		}
	}
	snap := min(opts.Snaplen, maxPacket)
	if snap <= 0 {
		snap = 65535
	}
	a.buf = make([]byte, sllHeaderLen+snap)
	var proto [2]byte
	binary.BigEndian.PutUint16(proto[:], unix.ETH_P_ALL)
	a.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, int(binary.NativeEndian.Uint16(proto[:])))
	if err != nil {
		return nil, permissionHint(opts.Interface, err)
	}
	if ifindex != 0 {
		if err := unix.Bind(a.fd, &unix.SockaddrLinklayer{Protocol: binary.NativeEndian.Uint16(proto[:]), Ifindex: ifindex}); err != nil {
			unix.Close(a.fd)
			return nil, permissionHint(opts.Interface, err)
		}
	}
	// A receive timeout, so that Next sees Stop, the deadline and Idle.
	tv := unix.NsecToTimeval(pollTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(a.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(a.fd)
		return nil, permissionHint(opts.Interface, err)
	}
	return a, nil
}

// read waits up to pollTimeout for the next packet that passes the filter
// and writes it into f (errTimeout: none came).
func (a *anySocket) read(f *Frame) error {
	for {
		n, from, err := unix.Recvfrom(a.fd, a.buf[sllHeaderLen:], unix.MSG_TRUNC)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				return errTimeout
			}
			return err
		}
		now := time.Now().UTC()
		ll, ok := from.(*unix.SockaddrLinklayer)
		if !ok {
			continue
		}
		if ll.Pkttype == unix.PACKET_OUTGOING && ll.Ifindex == a.lo {
			continue
		}
		caplen := min(n, len(a.buf)-sllHeaderLen)
		// The protocol is in network byte order in the sockaddr.
		var p [2]byte
		binary.NativeEndian.PutUint16(p[:], ll.Protocol)
		proto := binary.BigEndian.Uint16(p[:])
		h := a.buf[:sllHeaderLen]
		binary.BigEndian.PutUint16(h[0:], uint16(ll.Pkttype))
		binary.BigEndian.PutUint16(h[2:], ll.Hatype)
		binary.BigEndian.PutUint16(h[4:], uint16(ll.Halen))
		copy(h[6:14], ll.Addr[:])
		binary.BigEndian.PutUint16(h[14:], proto)
		if a.match != nil && !a.match.Match(a.buf[:sllHeaderLen+caplen]) {
			continue
		}
		f.Time = now
		f.CaptureLength = sllHeaderLen + caplen
		f.Length = sllHeaderLen + n
		f.LinkType = LinkTypeLinuxSLL
		f.Data = a.buf[:sllHeaderLen+caplen]
		return nil
	}
}

func (a *anySocket) close() { unix.Close(a.fd) }

// stats are the socket's PACKET_STATISTICS: packets received and dropped
// by the kernel (before the filter, which runs here).
func (a *anySocket) stats() (received, dropped uint, err error) {
	s, err := unix.GetsockoptTpacketStats(a.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0, 0, err
	}
	return uint(s.Packets), uint(s.Drops), nil
}

// errTimeout is read's "no packet within the poll timeout".
var errTimeout = errors.New("timeout")
