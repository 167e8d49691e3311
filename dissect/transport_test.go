package dissect

import (
	"net"
	"net/netip"
	"testing"
)

// TestAppendIPv4: every octet value in every position is written as
// netip writes it; other lengths go through netip.
func TestAppendIPv4(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 4; pos++ {
			ip := net.IP{192, 0, 2, 1}
			ip[pos] = byte(c)
			want := netip.AddrFrom4([4]byte(ip)).String()
			if got := string(appendIPv4([]byte("x"), ip)); got != "x"+want {
				t.Fatalf("%v: %q, want %q", []byte(ip), got, "x"+want)
			}
		}
	}
	for _, ip := range []net.IP{nil, net.ParseIP("192.0.2.1"), net.ParseIP("2001:db8::1"), {1, 2, 3}} {
		if got, want := string(appendIPv4(nil, ip)), string(addrOf(ip).AppendTo(nil)); got != want {
			t.Errorf("%v: %q, want %q", ip, got, want)
		}
	}
}
