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

// TestLiveFilter: the capture filter selects on a live socket what it
// selects in a file: in the kernel (portrange and not), in this program
// when it tests VLAN tags (the kernel strips them before the socket's
// filter runs), and on "-i any"'s cooked frames (inbound). Frames are
// sent on lo; needs root (CAP_NET_RAW).
func TestLiveFilter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root")
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo")
	}
	udp := func(port uint16, tags ...uint16) []byte {
		ip := []byte{0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1,
			0x04, 0xd2, 0, 0, 0, 12, 0, 0, 'c', 'm', 'p', 'd'}
		binary.BigEndian.PutUint16(ip[22:], port)
		f := []byte{0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1}
		for _, vid := range tags {
			f = append(f, 0x81, 0x00, byte(vid>>8), byte(vid))
		}
		return append(append(f, 0x08, 0x00), ip...)
	}
	for _, tc := range []struct {
		iface, filter string
		send          [][]byte
		want          []byte // the frame captured (Ethernet), nil: check the port only
	}{
		{"lo", "udp portrange 47990-47999 and not dst port 47997", [][]byte{udp(47997), udp(48000), udp(47998)}, udp(47998)},
		{"lo", "vlan 100 and udp dst port 47998", [][]byte{udp(47998), udp(47998, 200), udp(47998, 100)}, udp(47998, 100)},
		// "not vlan and udp" would test UDP 4 octets further, as in libpcap
		{"lo", "udp dst port 47998 and not vlan", [][]byte{udp(47998, 100), udp(47998)}, udp(47998)},
		{AnyInterface, "inbound and udp portrange 47998-47998", [][]byte{udp(47997), udp(47998)}, nil},
	} {
		l, err := OpenLive(LiveOptions{Interface: tc.iface, Filter: tc.filter, Count: 1, Duration: 3 * time.Second})
		if err != nil {
			t.Fatalf("%q: %v", tc.filter, err)
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			t.Fatal(err)
		}
		to := &unix.SockaddrLinklayer{Ifindex: lo.Index, Halen: 6}
		for _, f := range tc.send {
			if err := unix.Sendto(fd, f, 0, to); err != nil {
				t.Fatal(err)
			}
		}
		unix.Close(fd)
		var got [][]byte
		var f Frame
		for l.Next(&f) == nil {
			got = append(got, append([]byte(nil), f.Data...))
		}
		l.Close()
		if len(got) != 1 {
			t.Errorf("%s %q: %d frames, want 1", tc.iface, tc.filter, len(got))
			continue
		}
		if tc.want != nil && !bytes.Equal(got[0], tc.want) {
			t.Errorf("%s %q: captured\n% x\nwant\n% x", tc.iface, tc.filter, got[0], tc.want)
		}
		if tc.want == nil && (len(got[0]) < 16+24 || binary.BigEndian.Uint16(got[0][16+22:]) != 47998) {
			t.Errorf("%s %q: captured\n% x", tc.iface, tc.filter, got[0])
		}
	}
}
