//go:build linux

package source

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/bpf"

	"github.com/gopacket/gopacket/afpacket"

	"github.com/cmpd-dissect/cmpd-dissect/capfilter"
)

// Live captures from a network interface with an AF_PACKET socket (no cgo,
// no libpcap). Frames are Ethernet (loopback too), or Linux cooked
// (LINKTYPE_LINUX_SLL) for "any" and for interfaces whose link layer is
// not Ethernet (IPoIB, tun), as libpcap gives them.
type Live struct {
	opts     LiveOptions
	tp       *afpacket.TPacket
	any      *anySocket // "-i any" (tp is nil)
	number   int
	deadline time.Time
	stop     chan struct{}
	// match is the capture filter run in user space (nil: none, or the
	// kernel runs it).
	match *capfilter.Matcher
	// Idle, if set, is called from Next whenever a poll for packets
	// times out: the caller writes out what it has buffered.
	Idle func()
}

// pollTimeout bounds how long Next waits before checking the deadline and
// Stop, and before calling Idle: with the ring's 10 ms block timeout, a
// packet's output is written within about 60 ms of its arrival.
const pollTimeout = 50 * time.Millisecond

// OpenLive starts capturing on opts.Interface.
func OpenLive(opts LiveOptions) (*Live, error) {
	if opts.Interface == AnyInterface || !ethernetLike(opts.Interface) {
		ifindex := 0
		if opts.Interface != AnyInterface {
			ifc, err := net.InterfaceByName(opts.Interface)
			if err != nil {
				_, err = checkInterface(opts.Interface)
				return nil, err
			}
			ifindex = ifc.Index
		}
		a, err := openCooked(opts, ifindex)
		if err != nil {
			return nil, err
		}
		l := &Live{opts: opts, any: a, stop: make(chan struct{})}
		if opts.Duration > 0 {
			l.deadline = time.Now().Add(opts.Duration)
		}
		return l, nil
	}
	loopback, err := checkInterface(opts.Interface)
	if err != nil {
		return nil, err
	}
	flt, err := capfilter.Compile(opts.Filter, LinkTypeEthernet)
	if err != nil {
		return nil, err
	}
	var ins []bpf.Instruction
	var match *capfilter.Matcher
	if flt != nil {
		if flt.VLAN {
			// The kernel strips VLAN tags into metadata before the
			// socket's filter runs: a filter that tests them runs here,
			// on the frames with their tags put back.
			if match, err = flt.NewMatcher(); err != nil {
				return nil, err
			}
		} else {
			ins = flt.Instructions
		}
	}
	if loopback {
		ins = dropOutgoing(ins)
	}
	var prog []bpf.RawInstruction
	if ins != nil {
		if prog, err = bpf.Assemble(ins); err != nil {
			return nil, fmt.Errorf("capture filter %q: %w", opts.Filter, err)
		}
	}
	snap := min(opts.Snaplen, maxPacket)
	if snap <= 0 {
		snap = 65535
	}
	// Frame size must hold a snaplen frame plus tpacket headers; block size
	// a multiple of the page size holding whole frames.
	frame := 1 << 16
	for frame < snap+128 {
		frame <<= 1
	}
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(opts.Interface),
		afpacket.OptFrameSize(frame),
		afpacket.OptBlockSize(frame*16),
		afpacket.OptNumBlocks(32),
		afpacket.OptPollTimeout(pollTimeout),
		afpacket.OptBlockTimeout(10*time.Millisecond),
		afpacket.OptAddVLANHeader(true),
	)
	if err != nil {
		return nil, permissionHint(opts.Interface, err)
	}
	if prog != nil {
		if err := setFilter(tp, prog); err != nil {
			tp.Close()
			return nil, permissionHint(opts.Interface, err)
		}
	}
	if opts.Promiscuous {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return nil, permissionHint(opts.Interface, err)
		}
	}
	// The kernel's counters start now, as libpcap's do: what the socket
	// saw before the filter was attached is not this capture's.
	tp.InitSocketStats()
	l := &Live{opts: opts, tp: tp, match: match, stop: make(chan struct{})}
	if opts.Duration > 0 {
		l.deadline = time.Now().Add(opts.Duration)
	}
	return l, nil
}

// dropAll is a filter that accepts nothing.
var dropAll = []bpf.RawInstruction{{Op: 0x06, K: 0}} // ret #0

// setFilter attaches prog without letting through what the socket queued
// before it: the socket starts capturing when it is created, so packets
// that arrived before the filter was attached would reach the reader
// unfiltered. As libpcap does, attach a filter that drops everything, drain
// the ring, then attach prog.
func setFilter(tp *afpacket.TPacket, prog []bpf.RawInstruction) error {
	if err := tp.SetBPF(dropAll); err != nil {
		return err
	}
	for {
		_, _, err := tp.ZeroCopyReadPacketData()
		if err != nil {
			if errors.Is(err, afpacket.ErrTimeout) || errors.Is(err, afpacket.ErrPoll) {
				break
			}
			return err
		}
	}
	return tp.SetBPF(prog)
}

// Stop makes Next return io.EOF at its next poll (for Ctrl-C).
func (l *Live) Stop() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
}

// Next implements Source: it waits for the next frame, and returns io.EOF
// when the count or duration is reached or Stop was called.
func (l *Live) Next(f *Frame) error {
	for {
		if l.opts.Count > 0 && l.number >= l.opts.Count {
			return io.EOF
		}
		select {
		case <-l.stop:
			return io.EOF
		default:
		}
		if !l.deadline.IsZero() && !time.Now().Before(l.deadline) {
			return io.EOF
		}
		if l.any != nil {
			if err := l.any.read(f); err != nil {
				if errors.Is(err, errTimeout) {
					if l.Idle != nil {
						l.Idle()
					}
					continue
				}
				return permissionHint(l.opts.Interface, err)
			}
			l.number++
			f.Source, f.Number, f.Offset, f.Ahead = l.opts.Interface, l.number, -1, Ahead{}
			return nil
		}
		data, ci, err := l.tp.ZeroCopyReadPacketData()
		if err != nil {
			if errors.Is(err, afpacket.ErrTimeout) || errors.Is(err, afpacket.ErrPoll) {
				if l.Idle != nil {
					l.Idle()
				}
				continue
			}
			return permissionHint(l.opts.Interface, err)
		}
		if l.match != nil && !l.match.Match(data) {
			continue
		}
		l.number++
		f.Source = l.opts.Interface
		f.Number = l.number
		f.Time = ci.Timestamp.UTC()
		f.CaptureLength = ci.CaptureLength
		f.Length = ci.Length
		f.LinkType = LinkTypeEthernet
		f.Data = data
		f.Offset = -1
		f.Ahead = Ahead{}
		if snap := l.opts.Snaplen; snap > 0 && len(f.Data) > snap {
			f.Data = f.Data[:snap]
			f.CaptureLength = snap
		}
		return nil
	}
}

// Close releases the socket.
func (l *Live) Close() error {
	if l.any != nil {
		l.any.close()
		return nil
	}
	l.tp.Close()
	return nil
}

// Interface is the interface captured on.
func (l *Live) Interface() string { return l.opts.Interface }

// Captured is the number of frames Next returned.
func (l *Live) Captured() int { return l.number }

// KernelStats are the socket's PACKET_STATISTICS since it opened: the
// packets that passed the filter (tp_packets) and those of them the
// kernel dropped because the ring was full (tp_drops). Call before Close.
func (l *Live) KernelStats() (received, dropped uint, err error) {
	if l.any != nil {
		return l.any.stats()
	}
	s, s3, err := l.tp.SocketStats()
	if err != nil {
		return 0, 0, err
	}
	// One of the two is filled, by the ring's TPACKET version.
	return s.Packets() + s3.Packets(), s.Drops() + s3.Drops(), nil
}

// DropPrivileges makes the process run as the user name (tcpdump -Z):
// its groups, then its group, then its user, for every thread (Go's
// syscall.Setuid applies to all of them on Linux). Called after the
// socket is open, which needs the privilege. u is LookupUser's.
func DropPrivileges(u *PrivUser) error {
	if err := syscall.Setgroups(u.Groups); err != nil {
		return fmt.Errorf("-Z %s: setgroups: %w", u.Name, err)
	}
	if err := syscall.Setgid(u.GID); err != nil {
		return fmt.Errorf("-Z %s: setgid %d: %w", u.Name, u.GID, err)
	}
	if err := syscall.Setuid(u.UID); err != nil {
		return fmt.Errorf("-Z %s: setuid %d: %w", u.Name, u.UID, err)
	}
	if os.Geteuid() != u.UID || os.Getegid() != u.GID {
		return fmt.Errorf("-Z %s: still uid %d gid %d after setuid", u.Name, os.Geteuid(), os.Getegid())
	}
	return nil
}

// ethernetLike reports whether the interface's frames are Ethernet frames
// on a raw packet socket: its ARPHRD_ type (sysfs) is Ethernet or
// loopback, or cannot be read (then the raw socket is tried as before).
func ethernetLike(name string) bool {
	if strings.Contains(name, "/") {
		return true
	}
	b, err := os.ReadFile("/sys/class/net/" + name + "/type")
	if err != nil {
		return true
	}
	switch strings.TrimSpace(string(b)) {
	case "1", "772":
		return true
	}
	return false
}
