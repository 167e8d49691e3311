//go:build linux

package source

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loopback is lo, for the live tests that send frames on it and capture
// them; the test is skipped without root (CAP_NET_RAW) or lo.
func loopback(t *testing.T) *net.Interface {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root")
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo")
	}
	return lo
}

// loUDP is a frame to send on lo: an IPv4/UDP packet from 127.0.0.1:1234
// to 127.0.0.1:port (a port nothing else uses) with the payload "cmpd",
// behind an Ethernet header from 02:00:00:00:00:01 to lo's address (zero)
// with the given 802.1Q tags. The IP header checksum is 0x3ccb, the UDP
// checksum left out (0).
func loUDP(port uint16, tags ...uint16) []byte {
	ip := []byte{0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0x3c, 0xcb, 127, 0, 0, 1, 127, 0, 0, 1,
		0x04, 0xd2, 0, 0, 0, 12, 0, 0, 'c', 'm', 'p', 'd'}
	binary.BigEndian.PutUint16(ip[22:], port)
	f := []byte{0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1}
	for _, vid := range tags {
		f = append(f, 0x81, 0x00, byte(vid>>8), byte(vid))
	}
	return append(append(f, 0x08, 0x00), ip...)
}

// sendOn sends frames on the interface, in order, through a packet socket.
func sendOn(t *testing.T, ifi *net.Interface, frames ...[]byte) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	to := &unix.SockaddrLinklayer{Ifindex: ifi.Index, Halen: 6}
	for _, f := range frames {
		if err := unix.Sendto(fd, f, 0, to); err != nil {
			t.Fatal(err)
		}
	}
}

// readLive returns the frames of l until it ends, each with its own bytes.
func readLive(l *Live) []Frame {
	var out []Frame
	var f Frame
	for l.Next(&f) == nil {
		f.Data = append([]byte(nil), f.Data...)
		out = append(out, f)
	}
	return out
}

// TestLiveAny: "-i any" gives a packet sent on lo as libpcap does, one
// LINKTYPE_LINUX_SLL frame (the outgoing copy on lo dropped): packet type
// to us, ARPHRD_LOOPBACK, the Ethernet source, EtherType IPv4, then the
// IP packet; the capture filter applies to it.
func TestLiveAny(t *testing.T) {
	lo := loopback(t)
	l, err := OpenLive(LiveOptions{Interface: AnyInterface, Filter: "udp dst port 47998", Count: 1, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Another port first: the filter drops it.
	frame := loUDP(47998)
	sendOn(t, lo, loUDP(47997), frame)
	got := readLive(l)
	if len(got) != 1 {
		t.Fatalf("%d frames, want 1", len(got))
	}
	g := got[0]
	want := append([]byte{0, 0, 0x03, 0x04, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00}, frame[14:]...)
	if g.LinkType != LinkTypeLinuxSLL || !bytes.Equal(g.Data, want) || g.Length != len(want) || g.CaptureLength != len(want) || g.Source != "any" {
		t.Fatalf("link type %d, %d/%d octets from %q:\n% x\nwant\n% x", g.LinkType, g.CaptureLength, g.Length, g.Source, g.Data, want)
	}
}

// TestLiveCookedTun: an interface whose link layer is not Ethernet (a tun
// device: ARPHRD_NONE, as IPoIB's ARPHRD_INFINIBAND) is captured as
// libpcap captures it, in cooked mode: LINKTYPE_LINUX_SLL frames with the
// packet's ARPHRD_ type and protocol, then the IP packet, not the IP
// packet taken for an Ethernet frame. Needs root (a tun device and
// CAP_NET_RAW).
func TestLiveCookedTun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root")
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no tun device: %v", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("cmpdtun0")
	if err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		t.Skipf("TUNSETIFF: %v", err)
	}
	// Up, so that what is written to the device is received on it.
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(s)
	up, _ := unix.NewIfreq("cmpdtun0")
	up.SetUint16(unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, up); err != nil {
		t.Fatal(err)
	}
	if ethernetLike("cmpdtun0") {
		t.Fatal("a tun device taken for Ethernet")
	}
	ip := []byte{0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0x3c, 0xcb, 127, 0, 0, 1, 127, 0, 0, 1,
		0xbb, 0x7f, 0xbb, 0x7e, 0, 12, 0, 0, 'c', 'm', 'p', 'd'}
	l, err := OpenLive(LiveOptions{Interface: "cmpdtun0", Filter: "udp dst port 47998", Count: 1, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := unix.Write(fd, ip); err != nil {
		t.Fatal(err)
	}
	var f Frame
	if err := l.Next(&f); err != nil {
		t.Fatal(err)
	}
	// Packet type to us, ARPHRD_NONE (65534), no address, IPv4.
	want := append([]byte{0, 0, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00}, ip...)
	if f.LinkType != LinkTypeLinuxSLL || !bytes.Equal(f.Data, want) || f.Source != "cmpdtun0" {
		t.Fatalf("link type %d from %q:\n% x\nwant\n% x", f.LinkType, f.Source, f.Data, want)
	}
}
