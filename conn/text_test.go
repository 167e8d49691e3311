package conn

import (
	"fmt"
	"net/netip"
	"testing"
)

// TestMsgBuilder: the per-Send messages built without fmt read as fmt
// would write them.
func TestMsgBuilder(t *testing.T) {
	var m msgBuilder
	for _, ev := range []SendEvent{{XID: 0xdeadbeef, RPCRDMA: true, InvalidateSTag: 0xcd1, Length: 5000},
		{InvalidateSTag: 0xffffffff, Length: 0}, {XID: 7, RPCRDMA: true}} {
		f := listedFinding{xid: ev.XID}
		if ev.RPCRDMA {
			f.flags = flagRPC
		}
		got := m.reset().s("a ").int(ev.Length).s(" b ").hex(ev.InvalidateSTag).xid(&f).s(".").String()
		want := fmt.Sprintf("a %d b 0x%08x%s.", ev.Length, ev.InvalidateSTag, xidNote(&ev))
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// TestPeerString: Peer's text, appended without fmt, reads as the fmt
// rendering it replaced (the conns table, ladder and JSON print it).
func TestPeerString(t *testing.T) {
	ref := func(p Peer) string {
		var s string
		switch {
		case p.Addr.IsValid() && p.LID != 0:
			s = fmt.Sprintf("lid 0x%04x gid %s", p.LID, p.Addr)
		case p.Addr.IsValid():
			if p.Port != 0 {
				return netip.AddrPortFrom(p.Addr, p.Port).String()
			}
			return p.Addr.String()
		case p.LID != 0:
			s = fmt.Sprintf("lid 0x%04x", p.LID)
		default:
			s = "?"
		}
		if p.Port != 0 {
			s += fmt.Sprintf(" port %d", p.Port)
		}
		return s
	}
	addrs := []netip.Addr{{}, netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("fe80::1"),
		netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("::ffff:192.0.2.7"), netip.MustParseAddr("::")}
	for _, a := range addrs {
		for _, lid := range []uint16{0, 5, 0xabcd} {
			for _, port := range []uint16{0, 1, 20049, 65535} {
				p := Peer{Addr: a, LID: lid, Port: port}
				if got, want := p.String(), ref(p); got != want {
					t.Errorf("%#v: %q, want %q", p, got, want)
				}
				if got := string(p.AppendTo([]byte("x"))); got != "x"+ref(p) {
					t.Errorf("%#v appended: %q", p, got)
				}
			}
		}
	}
}
