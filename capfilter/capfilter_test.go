package capfilter_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/cmpd-dissect/cmpd-dissect/capfilter"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// TestAcceptedFrames: the frames each expression passes in the captures
// of testdata/pcaps/capfilter (the numbers are those tcpdump 4.99.3
// passes; TestSelectsAsTcpdump checks many more where tcpdump is
// installed).
func TestAcceptedFrames(t *testing.T) {
	for _, tc := range []struct {
		file string
		lt   int
		expr string
		want []int
	}{
		{"mixed.ether.pcap", 1, "udp port 4791", []int{11, 19, 38}},
		{"mixed.ether.pcap", 1, "not port 22 and not vlan and not ip6", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 34, 35, 36, 37, 38, 39, 41, 42, 43, 44, 45, 46, 47}},
		{"mixed.ether.pcap", 1, "portrange 4791-4792", []int{11, 13, 19, 38}},
		{"mixed.ether.pcap", 1, "vlan 100 and tcp", []int{60, 64, 68}},
		{"mixed.ether.pcap", 1, "arp", []int{7, 8}},
		{"mixed.ether.pcap", 1, "icmp", []int{9, 10, 12, 14, 16, 18, 22}},
		{"mixed.ether.pcap", 1, "ip6 and not udp and not icmp6", []int{1, 3, 5, 6, 46, 47}},
		{"mixed.ether.pcap", 1, "tcp[tcpflags] & tcp-syn != 0", []int{23, 24, 32}},
		{"mixed.ether.pcap", 1, "ip[6:2] & 0x3fff != 0", []int{19, 20, 21}},
		{"mixed.ether.pcap", 1, "vlan 200 and vlan 300 and udp", []int{49, 53, 57, 73, 77}},
		{"mixed.ether.pcap", 1, "host 192.0.2.2 and not tcp and not icmp", []int{7, 8, 11, 13, 15, 17, 19, 20, 21}},
		{"mixed.ether.pcap", 1, "ether broadcast", []int{7}},
		{"mixed.ether.pcap", 1, "udp[8] = 0x64 and not vlan", nil},
		{"mixed.ether.pcap", 1, "less 62", []int{7, 8, 11, 13, 15, 17, 33}},
		{"mixed.ether.pcap", 1, "ip6 proto 17", []int{38, 40, 42, 43, 44}},
		{"mixed.ether.pcap", 1, "dst port 20049 or 22 and ip6", []int{40, 46}},
		{"mixed.any-linux-sll.pcap", 113, "outbound and udp", []int{11, 13, 15, 17, 19, 20, 21, 38, 40, 42, 43, 44}},
		{"mixed.any-linux-sll.pcap", 113, "inbound and icmp6", []int{4, 35, 37, 39, 41, 45}},
		{"mixed.any-linux-sll2.pcap", 276, "outbound and udp", []int{11, 13, 15, 17, 19, 20, 21, 38, 40, 42, 43, 44, 48, 49, 51, 52, 53, 55, 56, 57, 59, 72, 73, 75, 76, 77, 79}},
	} {
		f, err := capfilter.Compile(tc.expr, tc.lt)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		m, err := f.NewMatcher()
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for i, fr := range testcap.Frames(t, testcap.Path("pcaps", "capfilter", tc.file)) {
			if m.Match(fr.Data) {
				got = append(got, i+1)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s %q: frames %v, want %v", tc.file, tc.expr, got, tc.want)
		}
	}
}

// TestErrors: what is not understood, or does not apply to the link
// type, is refused with the column of the problem.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		lt   int
		pos  int
		msg  string
	}{
		{"udp prot 4791", 1, 4, `"prot" is not a qualifier of "udp"`},
		{"udp port", 1, 8, "expected a value after"},
		{"udp port 70000", 1, 9, "not a port number"},
		{"port 4791 and", 1, 13, "expected a primitive"},
		{"tcp port 20049 or", 1, 17, "expected a primitive"},
		{"garbage words", 1, 0, "not a capture filter keyword"},
		{"udp[8] == ", 1, 10, "expected a number"},
		{"udp[8:3] = 1", 1, 6, "data size must be 1, 2, or 4"},
		{"len > ", 1, 6, "expected a number"},
		{"len / 0 = 1", 1, 4, "division by zero"},
		{"len << 32 = 1", 1, 4, "shift by more than 31 bits"},
		{"(tcp", 1, 4, `expected ")"`},
		{"tcp)", 1, 3, `without its "("`},
		{"dst host example.com", 1, 9, "host names are not resolved"},
		{"ether", 1, 0, `"ether" alone is not a primitive`},
		{"ether host 1.2.3.4", 1, 11, "not an Ethernet address"},
		{"host 52:54:00:12:00:01", 1, 5, "ethernet address used in non-ether expression"},
		{"src net 10.0.0.0/33", 1, 17, "mask length must be <= 32"},
		{"net 10.1.2.3/8", 1, 4, "non-network bits"},
		{"host 10.0.0.0/8", 1, 5, "networks only"},
		{"ip6 host 1.2.3.4", 1, 9, "'ip6' modifier applied to ip host"},
		{"ip host 2001:db8::1", 1, 8, "'ip' modifier applied to ip6 host"},
		{"tcp host 1.2.3.4", 1, 9, "'tcp' modifier applied to host"},
		{"ip port 22", 1, 8, "illegal qualifier of 'port'"},
		{"portrange 5-a", 1, 10, "not a port range"},
		{"port 4791 or 1.2.3.4", 1, 13, "'port' modifier applied to ip host"},
		{"tcp or 1.2.3.4", 1, 7, "has no qualifier"},
		{"1.2.3.4", 1, 0, "needs a qualifier"},
		{"tcp and and udp", 1, 8, "expected a primitive before"},
		{"vlan 5000", 1, 5, "greater than maximum 4095"},
		{"vlan", 113, 0, "vlan is not supported for link type LINUX_SLL"},
		{"vlan", 101, 0, "vlan is not supported for link type RAW"},
		{"ether src 52:54:00:12:00:01", 276, 10, "not supported for link type LINUX_SLL2"},
		{"inbound", 1, 0, "only for Linux cooked captures"},
		{"udp", 247, 0, "not supported for link type INFINIBAND (247)"},
		{"udp", 197, 0, "not supported for link type ERF (197)"},
		{"arp", 228, 0, "expression rejects all packets"},
		{"ip broadcast", 1, 3, "netmask"},
		{"mpls", 1, 0, "does not support"},
		{"gateway router", 1, 0, "gateway"},
		{"src port http", 1, 9, "not a port number"},
		{"ip proto \\foo", 1, 9, "not an IP protocol name"},
		{"udp # comment", 1, 4, "not part of the capture filter language"},
		{"ip[1] & 1 = 1 or", 1, 16, "expected a primitive"},
		{"proto 300", 1, 6, "greater than maximum 255"},
		{"src proto 6", 1, 4, "expected a value after"},
	} {
		_, err := capfilter.Compile(tc.expr, tc.lt)
		var fe *capfilter.Error
		if !errors.As(err, &fe) {
			t.Errorf("%q: err %v, want an Error", tc.expr, err)
			continue
		}
		if fe.Pos != tc.pos || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%q: column %d %q, want column %d and %q", tc.expr, fe.Pos+1, fe.Msg, tc.pos+1, tc.msg)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 3 || strings.Index(lines[2], "^") != tc.pos+2 || !strings.Contains(lines[0], "column "+strconv.Itoa(tc.pos+1)) {
			t.Errorf("%q: caret or column misplaced:\n%v", tc.expr, err)
		}
	}
	if f, err := capfilter.Compile("  ", 1); f != nil || err != nil {
		t.Errorf("blank expression: %v %v", f, err)
	}
}

// TestLongJumps: a program longer than a conditional jump reaches (255
// instructions) still jumps right, through unconditional jumps.
func TestLongJumps(t *testing.T) {
	var hosts []string
	for i := 1; i <= 60; i++ {
		hosts = append(hosts, fmt.Sprintf("10.0.0.%d", i))
	}
	expr := "udp port 4791 and not (host " + strings.Join(hosts, " or ") + ")"
	f, err := capfilter.Compile(expr, capfilter.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Instructions) < 300 {
		t.Fatalf("only %d instructions: the test needs a longer program", len(f.Instructions))
	}
	if _, err := f.Assemble(); err != nil {
		t.Fatal(err)
	}
	short, _ := capfilter.Compile("udp port 4791", capfilter.LinkTypeEthernet)
	ml, _ := f.NewMatcher()
	ms, _ := short.NewMatcher()
	n := 0
	for _, fr := range testcap.Frames(t, testcap.Real("live-rxe4-nfs42.pcap")) {
		if ml.Match(fr.Data) != ms.Match(fr.Data) {
			t.Fatalf("frame %d: long program %v, short %v", fr.Number, ml.Match(fr.Data), ms.Match(fr.Data))
		}
		if ml.Match(fr.Data) {
			n++
		}
	}
	if n == 0 {
		t.Fatal("nothing matched")
	}
}

// FuzzCompile: any expression is compiled to a program the BPF virtual
// machine accepts and that runs on any frame, or refused with a position
// inside it; never a panic.
func FuzzCompile(f *testing.F) {
	for _, s := range append(expressions, "udp prot 4791", "(tcp port 20049 and host 198.51.100.1) || udp",
		"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420", "- - len % 3 ^ 2 = ip[ip[0]]", "net 10 or \\tcp", "::") {
		f.Add(s, uint16(1))
		f.Add(s, uint16(113))
	}
	frames := testcap.Frames(f, testcap.Path("pcaps", "capfilter", "mixed.ether.pcap"))
	f.Fuzz(func(t *testing.T, expr string, lt uint16) {
		flt, err := capfilter.Compile(expr, int(lt))
		if err != nil {
			var fe *capfilter.Error
			if !errors.As(err, &fe) || fe.Pos < 0 || fe.Pos > len(expr) {
				t.Fatalf("%q: %v", expr, err)
			}
			return
		}
		if flt == nil {
			if strings.TrimSpace(expr) != "" {
				t.Fatalf("%q: no program and no error", expr)
			}
			return
		}
		if _, err := bpf.Assemble(flt.Instructions); err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		m, err := flt.NewMatcher()
		if err != nil {
			t.Fatalf("%q: the VM refuses the program: %v", expr, err)
		}
		for _, fr := range frames[:10] {
			m.Match(fr.Data)
		}
	})
}
