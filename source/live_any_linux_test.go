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

// TestLiveAny: "-i any" gives a packet sent on lo as libpcap does, one
// LINKTYPE_LINUX_SLL frame (the outgoing copy on lo dropped): packet type
// to us, ARPHRD_LOOPBACK, the Ethernet source, EtherType IPv4, then the
// IP packet; the capture filter applies to it. Needs root (CAP_NET_RAW).
func TestLiveAny(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root")
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo")
	}
	// An IPv4/UDP packet to a port nothing else uses, behind an Ethernet
	// header from 02:00:00:00:00:01 to lo's address (zero). The IP header
	// checksum is 0x3ccb, the UDP checksum left out (0).
	ip := []byte{0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0x3c, 0xcb, 127, 0, 0, 1, 127, 0, 0, 1,
		0xbb, 0x7f, 0xbb, 0x7e, 0, 12, 0, 0, 'c', 'm', 'p', 'd'}
	frame := append([]byte{0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0x08, 0x00}, ip...)

	l, err := OpenLive(LiveOptions{Interface: AnyInterface, Filter: "udp dst port 47998", Count: 1, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var proto [2]byte
	binary.BigEndian.PutUint16(proto[:], 0x0800)
	to := &unix.SockaddrLinklayer{Ifindex: lo.Index, Protocol: binary.NativeEndian.Uint16(proto[:]), Halen: 6}
	// Another port first: the filter drops it.
	other := append([]byte(nil), frame...)
	other[14+23] = 0x7d
	for _, f := range [][]byte{other, frame} {
		if err := unix.Sendto(fd, f, 0, to); err != nil {
			t.Fatal(err)
		}
	}
	var got []Frame
	var f Frame
	for l.Next(&f) == nil {
		f.Data = append([]byte(nil), f.Data...)
		got = append(got, f)
	}
	if len(got) != 1 {
		t.Fatalf("%d frames, want 1", len(got))
	}
	g := got[0]
	want := append([]byte{0, 0, 0x03, 0x04, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00}, ip...)
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
