package dfilter

import (
	"errors"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

func TestFilterSemantics(t *testing.T) {
	frames := testcap.Frames(t, testcap.RXE)
	if len(frames) < 4 {
		t.Fatal("no frame 4")
	}
	d := dissect.New(dissect.Options{})
	var r *dissect.Record
	for i := range frames[:4] {
		r = d.Dissect(&frames[i])
	}
	for _, tc := range filterCases {
		f, err := Compile(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := f.Match(r); got != tc.want {
			t.Errorf("frame 4: %s = %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// Frame 4 of the rxe capture: 192.0.2.2:56589 → 192.0.2.1:4791, 84 bytes
// of UDP payload, frame 126 bytes.
var filterCases = []struct {
	expr string
	want bool
}{
	{"udp", true},
	{"tcp", false},
	{"!tcp", true},
	{"not tcp and udp", true},
	{"udp.dstport == 4791", true},
	{"udp.dstport eq 0x12b7", true},
	{"udp.dstport != 4791", false},
	{"udp.srcport > 56588 && udp.srcport < 56590", true},
	{"udp.srcport >= 56590", false},
	{"udp.srcport <= 56589", true},
	{"ipv4.src == 192.0.2.2", true},
	{"ipv4.src == 192.0.2.0/24", true},
	{"ipv4.src == 10.0.0.0/8", false},
	{"ipv4.dst != 192.0.2.2", true},
	{"ipv4.proto == UDP", true},
	{"ipv4.proto == tcp", false},
	{"ethernet.type == IPv4", true},
	{"ethernet.src == 52:54:00:00:00:02", true},
	{"ipv4.flags.df == true", true},
	{"ipv4.flags.mf == 1", false},
	{"frame.number == 4", true},
	{"frame.len == 126 or frame.len == 1", true},
	{"frame.time_relative > 0.01", true},
	{"frame.time_relative < 0.001", false},
	{`frame.protocols contains "udp"`, true},
	{`frame.protocols contains "tcp"`, false},
	{`frame.source contains "rxe"`, true},
	{"(tcp or udp) and not (ipv6)", true},
	{"((udp))", true},
	{"tcp.srcport == 1 or udp.length == 92", true},
	// tshark's names and either-side fields
	{"ip.src == 192.0.2.2", true},
	{"ip.addr == 192.0.2.1", true},
	{"ipv4.addr == 192.0.2.2 and ipv4.addr == 192.0.2.1", true},
	{"ip.addr == 10.0.0.1", false},
	{"udp.port == 4791", true},
	{"udp.port == 56589", true},
	{"eth.addr == 52:54:00:00:00:02", true},
	{"ip", true},
	{"eth and rpcordma and not iwarp_ddp", true},
	// tshark 4.x: != is all_ne, ~= any_ne, === all_eq; all false on a
	// field the frame lacks
	{"ip.addr != 192.0.2.2", false},
	{"ip.addr != 10.0.0.1", true},
	{"ip.addr ~= 192.0.2.2", true},
	{"ip.addr !== 10.0.0.1", true},
	{"udp.port any_ne 4791", true},
	{"ip.addr === 192.0.2.2", false},
	{"udp.dstport === 4791", true},
	{"udp.port all_ne 1", true},
	{"tcp.port != 1", false},
	{"tcp.port ~= 1", false},
	{"!(tcp.port == 1)", true},
	// sets
	{"udp.port in {4791}", true},
	{"udp.port in {1, 2, 56589}", true},
	{"udp.port in {1 2 3}", false},
	{"udp.port in {1..100, 56000..57000}", true},
	{"udp.dstport in {4792..5000}", false},
	{"udp.port not in {4791}", false},
	{"not udp.port in {4791}", false},
	{"tcp.port not in {4791}", true},
	{"ip.src in {10.0.0.0/8, 192.0.2.0/24}", true},
	{"ip.dst in {192.0.2.0..192.0.2.1}", true},
	{"ipv4.proto in {TCP, UDP}", true},
	{`frame.protocols in {"x", "eth:ethertype:ip:udp"}`, false},
	{"frame.number in {1..3 4}", true},
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		pos  int
	}{
		{"udp.dstport == ", 15},
		{"", 0},
		{"udp.dstport ==", 14},
		{"nosuch.field", 0},
		{"udp and", 7},
		{"(udp", 4},
		{"udp)", 3},
		{"udp.dstport == abc", 15},
		{"ipv4.src == 1.2.3", 12},
		{"ipv4.src < 10.0.0.0/8", 11},
		{"udp contains 1", 4},
		{"udp.dstport contains 1", 12},
		{`frame.source == "x`, 16},
		{"udp.dstport == 1 $", 17},
		{"ethernet.src == 1:2:3", 16},
		{"ipv4.flags.df == maybe", 17},
		{"udp.port in 4791", 12},
		{"udp.port in {}", 13},
		{"udp.port in {1, ", 16},
		{"udp.port in {1..}", 16},
		{"udp.port in {1..x}", 16},
		{"ip.src in {10.0.0.0/8..10.0.0.1}", 11},
		{"udp in {1}", 4},
		{"udp.port ~= ", 12},
	} {
		_, err := Compile(tc.expr)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%q: err %v, want a Error", tc.expr, err)
			continue
		}
		if fe.Pos != tc.pos {
			t.Errorf("%q: position %d, want %d (%v)", tc.expr, fe.Pos, tc.pos, err)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 3 || strings.Index(lines[2], "^") != tc.pos+2 {
			t.Errorf("%q: caret misplaced:\n%v", tc.expr, err)
		}
	}
}

func FuzzFilter(f *testing.F) {
	for _, tc := range filterCases {
		f.Add(tc.expr)
	}
	f.Add(`frame.source == "a\x41\"" and (not udp || ipv6.src == ::1)`)
	frames := testcap.Frames(f, testcap.RXE)
	d := dissect.New(dissect.Options{})
	recs := []*dissect.Record{d.Dissect(&frames[0])}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Pos < 0 || fe.Pos > len(expr) {
				t.Fatalf("%q: %v", expr, err)
			}
			return
		}
		for _, r := range recs {
			flt.Match(r)
		}
	})
}
