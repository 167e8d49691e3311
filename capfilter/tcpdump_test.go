package capfilter_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"

	"github.com/cmpd-dissect/cmpd-dissect/capfilter"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// expressions are what users type with RDMA captures, and the corners of
// the language: negation, port ranges, lone protocols, VLANs, byte
// offsets, the qualifiers a lone value repeats, equal precedence of and
// and or.
var expressions = []string{
	"udp", "tcp", "ip", "ip6", "arp", "icmp", "icmp6", "not ip", "not ip6", "! arp", "ip or ip6",
	"udp port 4791", "not port 22", "not udp port 4791", "tcp port 20049", "udp dst port 4791", "src port 55410",
	"src or dst port 20049", "src and dst port 4791", "port 4791 or 20049", "tcp dst port 20049 or 22",
	"portrange 4791-4792", "udp portrange 4000-5000", "tcp portrange 20000-20100", "not portrange 1-1024",
	"dst portrange 4792-4791",
	"host 192.0.2.1", "src host 192.0.2.1", "dst host 192.0.2.2", "host 192.0.2.1 or 198.51.100.2",
	"host 192.0.2.1 and not 192.0.2.2", "ip host 192.0.2.2", "arp host 192.0.2.2", "net 192.0.2.0/24",
	"src net 198.51.100.0 mask 255.255.255.0", "net 192.0.2", "dst net 192.0.0.0/8",
	"ip6 host 2001:db8:1::2", "host 2001:db8:9::1", "net 2001:db8::/32", "src net 2001:db8:2::/48", "ip6 dst net ff02::/16",
	"ether host 52:54:00:12:00:01", "ether src 52:54:00:12:01:02", "ether dst ff:ff:ff:ff:ff:ff", "ether broadcast",
	"ether multicast", "multicast", "ip multicast", "ip6 multicast",
	"ether proto 0x0800", "ether proto \\ip6", "ether proto \\arp", "ip proto 17", "ip6 proto 6", "proto \\udp",
	"ip proto \\icmp", "ip6 proto 58",
	"vlan", "not vlan", "vlan 100", "vlan 200 and vlan 300", "vlan and udp port 4791", "vlan and ip6", "vlan 100 and vlan 7 and tcp",
	"vlan or udp", "udp or vlan",
	"less 100", "greater 300", "len > 300", "len <= 80", "len - 14 >= 300",
	"udp[8] = 0x64", "udp[8] & 0xe0 = 0x60", "udp[8:2] = 0x6440", "ip[6:2] & 0x3fff != 0", "ip[6:2] & 0x1fff = 0",
	"tcp[tcpflags] & tcp-syn != 0", "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0", "tcp[tcpflags] == tcp-syn|tcp-ack",
	"tcp[13] = 0x18", "ip6[6] = 17", "ether[12:2] = 0x0800", "ip[2:2] > 500", "udp[4:2] - 8 > 100",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x68656c6c", "icmp[icmptype] = icmp-echo", "icmp6[icmp6type] = icmp6-echo",
	"(udp port 4791) or (tcp port 20049)", "udp and (port 4791 or 4792)", "tcp && !port 22", "! tcp || udp",
	"not (tcp or udp)", "tcp or udp and not ip6", "ip and not (src host 192.0.2.1 and dst port 4791)",
	"host 192.0.2.1 and (port 4791 or 20049)", "inbound", "outbound", "not inbound and udp",
}

type capture struct {
	path     string
	linkType int
}

// captures are the real ones of several link types, and raw-IP copies
// (LINKTYPE 101, 228, 229) of real Ethernet ones, written here.
func captures(t *testing.T) []capture {
	t.Helper()
	cs := []capture{
		{testcap.Path("pcaps", "capfilter", "mixed.ether.pcap"), capfilter.LinkTypeEthernet},
		{testcap.Path("pcaps", "capfilter", "mixed.any-linux-sll.pcap"), capfilter.LinkTypeLinuxSLL},
		{testcap.Path("pcaps", "capfilter", "mixed.any-linux-sll2.pcap"), capfilter.LinkTypeLinuxSLL2},
		{testcap.Real("live-rxe4-nfs42.pcap"), capfilter.LinkTypeEthernet},
		{testcap.Real("live-siw6-offset.pcap"), capfilter.LinkTypeEthernet},
		{testcap.Real("live-rxe6-rfc8797.pcap"), capfilter.LinkTypeEthernet},
		{testcap.Synthetic("synth-ibcm-rocev2-vlan-cm-all.pcap"), capfilter.LinkTypeEthernet},
		{testcap.Path("pcaps", "converted", "live-siw4-nfs42.tcpdump-any-linux-sll.pcap"), capfilter.LinkTypeLinuxSLL},
		{testcap.Path("pcaps", "converted", "live-rxe4-nfs42.tcpdump-any-linux-sll2.pcap"), capfilter.LinkTypeLinuxSLL2},
	}
	dir := t.TempDir()
	mixed := testcap.Frames(t, cs[0].path)
	var v4, v6, all []source.Frame
	for _, f := range mixed {
		ip := f // the IP packet without its Ethernet header
		ip.Data, ip.Length = f.Data[14:], f.Length-14
		switch binary.BigEndian.Uint16(f.Data[12:]) {
		case 0x0800:
			v4 = append(v4, ip)
			all = append(all, ip)
		case 0x86dd:
			v6 = append(v6, ip)
			all = append(all, ip)
		}
	}
	for _, r := range []struct {
		lt     int
		frames []source.Frame
	}{{capfilter.LinkTypeRaw, all}, {capfilter.LinkTypeIPv4, v4}, {capfilter.LinkTypeIPv6, v6}} {
		path := filepath.Join(dir, "raw"+strconv.Itoa(r.lt)+".pcap")
		testcap.WritePcap(t, path, layers.LinkType(r.lt), r.frames)
		cs = append(cs, capture{path, r.lt})
	}
	return cs
}

func needTcpdump(t *testing.T) {
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump not installed: comparison with libpcap skipped")
	}
}

// tcpdumpFrames runs tcpdump with expr on file and gives the numbers of
// the frames it writes (matched back by time and bytes), or its error.
func tcpdumpFrames(t *testing.T, file string, frames []source.Frame, expr string) ([]int, string) {
	var stderr bytes.Buffer
	cmd := exec.Command("tcpdump", "-r", file, "-w", "-", expr)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, strings.TrimSpace(stderr.String())
	}
	kept := testcap.FramesOf(t, out)
	var want []int
	k := 0
	for i := range frames {
		if k < len(kept) && kept[k].Time.Equal(frames[i].Time) && bytes.Equal(kept[k].Data, frames[i].Data) {
			want = append(want, i+1)
			k++
		}
	}
	if k != len(kept) {
		t.Fatalf("%s %q: %d of tcpdump's %d frames not found in the capture", file, expr, len(kept)-k, len(kept))
	}
	return want, ""
}

// TestSelectsAsTcpdump: on each capture and expression, the program
// passes exactly the frames tcpdump writes, and refuses what tcpdump
// refuses for that link type.
func TestSelectsAsTcpdump(t *testing.T) {
	needTcpdump(t)
	for _, c := range captures(t) {
		frames := testcap.Frames(t, c.path)
		total := 0
		for _, expr := range expressions {
			want, tcpdumpErr := tcpdumpFrames(t, c.path, frames, expr)
			f, err := capfilter.Compile(expr, c.linkType)
			if tcpdumpErr != "" || err != nil {
				if (tcpdumpErr != "") != (err != nil) {
					t.Errorf("%s %q: tcpdump %q, ours %v", filepath.Base(c.path), expr, tcpdumpErr, err)
				}
				continue
			}
			m, err := f.NewMatcher()
			if err != nil {
				t.Fatalf("%q: %v", expr, err)
			}
			var got []int
			for i := range frames {
				if m.Match(frames[i].Data) {
					got = append(got, i+1)
				}
			}
			total += len(got)
			if !equalInts(got, want) {
				t.Errorf("%s %q: frames %d %.90v, tcpdump %d %.90v", filepath.Base(c.path), expr, len(got), got, len(want), want)
			}
		}
		if total == 0 {
			t.Errorf("%s: no expression selected anything", c.path)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// libpcapProgram is tcpdump's compiled program for expr on file's link
// type (tcpdump -ddd).
func libpcapProgram(t *testing.T, file, expr string) *bpf.VM {
	out, err := exec.Command("tcpdump", "-r", file, "-ddd", expr).Output()
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	var raw []bpf.RawInstruction
	first := true
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if first {
			first = false
			continue
		}
		if len(f) != 4 {
			t.Fatalf("tcpdump -ddd %q: line %q", expr, sc.Text())
		}
		n := make([]uint64, 4)
		for i := range f {
			if n[i], err = strconv.ParseUint(f[i], 10, 32); err != nil {
				t.Fatal(err)
			}
		}
		raw = append(raw, bpf.RawInstruction{Op: uint16(n[0]), Jt: uint8(n[1]), Jf: uint8(n[2]), K: uint32(n[3])})
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("tcpdump -ddd %q: does not disassemble", expr)
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("tcpdump -ddd %q: %v", expr, err)
	}
	return vm
}

// mutants are frames changed where filters look: link and IP protocol
// fields, fragment offsets, ports, addresses, VLAN tags, lengths, so
// that the programs are compared on packets the captures lack.
func mutants(frames []source.Frame, linkType int, rng *rand.Rand) [][]byte {
	pl := map[int]int{capfilter.LinkTypeEthernet: 14, capfilter.LinkTypeLinuxSLL: 16, capfilter.LinkTypeLinuxSLL2: 20}[linkType]
	typeOff := map[int]int{capfilter.LinkTypeEthernet: 12, capfilter.LinkTypeLinuxSLL: 14, capfilter.LinkTypeLinuxSLL2: 0}[linkType]
	raw := linkType == capfilter.LinkTypeRaw || linkType == capfilter.LinkTypeIPv4 || linkType == capfilter.LinkTypeIPv6
	var out [][]byte
	types := []uint16{0x0800, 0x86dd, 0x0806, 0x8035, 0x8100, 0x88a8, 0x9100, 0x0064, 0x0004, 0x05dc, 0x8915}
	protos := []byte{1, 2, 6, 17, 44, 58, 132, 0}
	ports := []uint16{4791, 4792, 22, 20049, 1024, 4000, 5000}
	for _, f := range frames {
		d := f.Data
		for k := 0; k < 12; k++ {
			m := append([]byte(nil), d...)
			put16 := func(off int, v uint16) {
				if off >= 0 && off+2 <= len(m) {
					binary.BigEndian.PutUint16(m[off:], v)
				}
			}
			put8 := func(off int, v byte) {
				if off >= 0 && off < len(m) {
					m[off] = v
				}
			}
			ihl := 20
			if pl < len(m) {
				ihl = int(m[pl]&0xf) * 4
			}
			switch rng.Intn(9) {
			case 0:
				if !raw {
					put16(typeOff, types[rng.Intn(len(types))])
				} else {
					put8(0, []byte{0x45, 0x60, 0x46, 0x00}[rng.Intn(4)])
				}
			case 1:
				put8(pl+9, protos[rng.Intn(len(protos))])
				put8(pl+6, protos[rng.Intn(len(protos))])
			case 2:
				put16(pl+6, uint16(rng.Intn(4))<<13|uint16(rng.Intn(3)))
			case 3:
				put16(pl+ihl+rng.Intn(2)*2, ports[rng.Intn(len(ports))])
				put16(pl+40+rng.Intn(2)*2, ports[rng.Intn(len(ports))])
			case 4:
				m = m[:rng.Intn(len(m)+1)]
			case 5:
				put8(rng.Intn(len(m)+1), byte(rng.Intn(256)))
			case 6:
				put8(pl+40, protos[rng.Intn(len(protos))])
				put8(pl+6, 44)
			case 7:
				put8(0, byte(rng.Intn(2)))
				put8(pl+16, byte(224+rng.Intn(2)*31))
				put8(pl+24, 0xff)
			case 8:
				put16(pl, uint16(rng.Intn(4096)))
				put16(pl+2, types[rng.Intn(3)])
			}
			out = append(out, m)
		}
	}
	return out
}

// TestProgramsAgreeWithLibpcap: our program and libpcap's (tcpdump -ddd)
// give the same verdict on every frame of the captures and on mutants
// of them.
func TestProgramsAgreeWithLibpcap(t *testing.T) {
	needTcpdump(t)
	rng := rand.New(rand.NewSource(1))
	seen := map[int]bool{}
	for _, c := range captures(t) {
		if seen[c.linkType] {
			continue
		}
		seen[c.linkType] = true
		frames := testcap.Frames(t, c.path)
		inputs := mutants(frames, c.linkType, rng)
		for _, f := range frames {
			inputs = append(inputs, f.Data)
		}
		for _, expr := range expressions {
			theirs := libpcapProgram(t, c.path, expr)
			f, err := capfilter.Compile(expr, c.linkType)
			if theirs == nil || err != nil {
				if (theirs == nil) != (err != nil) {
					t.Errorf("link type %d %q: libpcap compiles: %v, ours: %v", c.linkType, expr, theirs != nil, err)
				}
				continue
			}
			m, err := f.NewMatcher()
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, in := range inputs {
				n, _ := theirs.Run(in)
				if m.Match(in) != (n > 0) && bad < 3 {
					bad++
					t.Errorf("link type %d %q: ours %v, libpcap's %v on % x", c.linkType, expr, m.Match(in), n > 0, in[:min(len(in), 64)])
				}
			}
		}
	}
}
