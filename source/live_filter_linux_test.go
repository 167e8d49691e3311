//go:build linux

package source

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// TestLiveFilter: the capture filter selects on a live socket what it
// selects in a file: in the kernel (portrange and not), in this program
// when it tests VLAN tags (the kernel strips them before the socket's
// filter runs), and on "-i any"'s cooked frames (inbound). Frames are
// sent on lo.
func TestLiveFilter(t *testing.T) {
	lo := loopback(t)
	udp := loUDP
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
		sendOn(t, lo, tc.send...)
		var got [][]byte
		for _, f := range readLive(l) {
			got = append(got, f.Data)
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
