package main

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// times matches what a replay changes besides the link layer: timestamps
// and the intervals computed from them.
var times = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z|_ms":[0-9.]+|\b\d+\.\d{3,9}\b`)

// linkLayer matches the lines and counts of the link layer itself in stats:
// the protocol counts of Ethernet and Linux cooked capture, and the octet
// total (the cooked header is 16 or 20 octets, Ethernet's 14); spaces go
// (spaces), as the columns are as wide as the longest protocol name.
var (
	linkLayer = regexp.MustCompile(`(?m)^  (ethernet|sll) .*\n|  Bytes: \d+`)
	spaces    = regexp.MustCompile(` +`)
)

// viewOf is the command line of view v on file: a packet view's "-r"
// (first in v) goes before the file, a subcommand's file after its flags.
func viewOf(v []string, file string) []string {
	if v[0] == "-r" {
		return append(append([]string(nil), v[1:]...), "-r", file)
	}
	return append(append([]string(nil), v...), file)
}

// TestCookedCaptures: "tcpdump -i any" captures (LINKTYPE_LINUX_SLL and
// LINUX_SLL2) of real captures replayed on lo (testdata/pcaps/converted/
// PROVENANCE.md) decode in every view as the Ethernet pcap they were made
// from, but for the link layer and the times, and check passes on them.
func TestCookedCaptures(t *testing.T) {
	views := [][]string{
		{"-r"},
		{"-r", "-T", "fields", "-e", "frame.number", "-e", "ipv4.src", "-e", "udp.dstport", "-e", "tcp.seq_raw", "-e", "bth.opcode",
			"-e", "bth.psn", "-e", "cm.attribute_id", "-e", "mpa.frame_type", "-e", "rdmap.opcode", "-e", "pvtdata.send_size", "-e", "rpcrdma.xid",
			"-e", "nfs.opcode"},
		{"conns"}, {"conns", "-V"}, {"conns", "--json"}, {"stats"}, {"check"},
	}
	for _, from := range []string{"live-rxe4-nfs42", "live-siw4-nfs42"} {
		for _, lt := range []string{"linux-sll", "linux-sll2"} {
			conv := filepath.Join(convertedDir, from+".tcpdump-any-"+lt+".pcap")
			orig := filepath.Join(real, from+".pcap")
			for _, v := range views {
				codeC, outC, errC := runCmd(t, viewOf(v, conv)...)
				codeO, outO, errO := runCmd(t, viewOf(v, orig)...)
				outO, errO = strings.ReplaceAll(outO, orig, conv), strings.ReplaceAll(errO, orig, conv)
				outC, outO = times.ReplaceAllString(outC, "T"), times.ReplaceAllString(outO, "T")
				if v[0] == "stats" {
					outC = spaces.ReplaceAllString(linkLayer.ReplaceAllString(outC, ""), " ")
					outO = spaces.ReplaceAllString(linkLayer.ReplaceAllString(outO, ""), " ")
				}
				if codeC != codeO || outC != outO || errC != errO {
					t.Errorf("%s %v: exit %d, want %d\n%s\n--- want\n%s\nstderr %q, want %q", conv, v, codeC, codeO, outC, outO, errC, errO)
				}
				if v[0] == "check" && codeC != 0 {
					t.Errorf("%s: check exit %d:\n%s", conv, codeC, outC)
				}
			}
		}
	}
}

// TestERFRecords: an ERF capture with Ethernet (type 2, with the FCS),
// InfiniBand (type 21), ATM and padding records whose rlen counts padding
// the pcap records do not store (testdata/pcaps/converted/erf-records.py):
// no warning or error, the packets decode as in the captures they were taken from,
// the other records are named, and frame.len and frame.cap_len are the
// packet's as tshark gives them.
func TestERFRecords(t *testing.T) {
	erf := filepath.Join(convertedDir, "live-rxe4-rfc8797-plus-ib.erf.pcap")
	eth := filepath.Join(real, "live-rxe4-rfc8797.pcap")
	ib := filepath.Join("..", "..", "testdata", "pcaps", "synthetic", "synth-ibcm-erf-cm-all.pcap")
	code, out, stderr := runCmd(t, "--all", "-r", erf)
	if code != 0 || stderr != "" || strings.Contains(out, "[warning") || strings.Contains(out, "[error") {
		t.Fatalf("exit %d, stderr %q, findings in:\n%s", code, stderr, out)
	}
	info := func(s string) []string {
		var l []string
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			// From the addresses on: frame numbers and times differ.
			l = append(l, strings.Join(strings.Fields(line)[2:], " "))
		}
		return l
	}
	got := info(out)
	_, o1, _ := runCmd(t, "--all", "-r", eth)
	_, o2, _ := runCmd(t, "--all", "-r", ib)
	want := append(info(o1), info(o2)[:2]...)
	want = append(want, "→ erf ERF ATM record, not dissected", "→ erf ERF Padding record, not dissected")
	want = append(want, info(o2)[2:]...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary:\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if code, out, _ := runCmd(t, "check", erf); code != 0 {
		t.Errorf("check exit %d:\n%s", code, out)
	}
	fields := []string{"frame.len", "frame.cap_len", "erf.rlen", "erf.wlen"}
	args := []string{"-r", erf, "-T", "fields"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	_, ours, _ := runCmd(t, args...)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed: frame.len not compared")
	}
	theirs, err := exec.Command("tshark", append(args, "-n")...).Output()
	if err != nil {
		t.Fatal(err)
	}
	if ours != string(theirs) {
		t.Errorf("%v:\n%s\n--- tshark\n%s", fields, ours, theirs)
	}
}

// TestFieldsBytesAsTshark: -T fields prints a bytes field as tshark 4.0
// does, plain hex (tshark's udp.payload of the same REQ holds our
// cm.req.private), and a MAC address with colons.
func TestFieldsBytesAsTshark(t *testing.T) {
	file := filepath.Join(real, "live-rxe4-rfc8797.pcap")
	_, out, _ := runCmd(t, "-r", file, "-c", "1", "-T", "fields", "-e", "cm.req.private", "-e", "ethernet.src")
	f := strings.Split(strings.TrimSpace(out), "\t")
	if len(f) != 2 || len(f[0]) != 2*92 || strings.Trim(f[0], "0123456789abcdef") != "" || f[1] != "52:54:00:12:00:01" {
		t.Fatalf("%q", out)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	theirs, err := exec.Command("tshark", "-r", file, "-c", "1", "-T", "fields", "-e", "udp.payload", "-e", "eth.src").Output()
	if err != nil {
		t.Fatal(err)
	}
	g := strings.Split(strings.TrimSpace(string(theirs)), "\t")
	if len(g) != 2 || !strings.Contains(g[0], f[0]) || g[1] != f[1] {
		t.Fatalf("ours %q, tshark %q", out, theirs)
	}
}

// TestStatsBreakdownShares: a breakdown table counts values (one per
// layer: a segment carrying two FPDUs counts two RDMAP opcodes), says how
// many in its heading, and gives each count's share of them: on a
// capture with more RDMAP opcodes than RDMAP packets the shares add up to
// 100% and no share is of the packets.
func TestStatsBreakdownShares(t *testing.T) {
	file := filepath.Join(real, "live-siw4-nfs3-inline.pcap")
	_, out, _ := runCmd(t, "stats", file)
	_, table, ok := strings.Cut(out, "OpCode by rdmap.opcode (53 values; percent of them)\n")
	if !ok || !strings.Contains(out, "  rdmap             52 ") {
		t.Fatalf("no rdmap.opcode table of 53 values in 52 RDMAP packets:\n%s", out)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	sum, n := 0.0, 0
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		var c int
		var p float64
		if _, err := fmt.Sscanf(f[len(f)-2]+" "+f[len(f)-1], "%d %f%%", &c, &p); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if want := 100 * float64(c) / 53; p < want-0.05 || p > want+0.05 {
			t.Errorf("%q: %.1f%%, want %.1f%% of 53", line, p, want)
		}
		sum += p
		n += c
	}
	if n != 53 || sum < 99.8 || sum > 100.2 {
		t.Errorf("counts add up to %d, shares to %.1f%%:\n%s", n, sum, table)
	}
}

// TestChecksumStatusAsTshark: every CRC verdict field has tshark's
// checksum status values (Wireshark's proto_checksum_enum_e, as
// udp.checksum.status gives them): a good ICRC, VCRC and MPA CRC are all 1.
func TestChecksumStatusAsTshark(t *testing.T) {
	for _, tc := range []struct{ file, field, want string }{
		{filepath.Join(real, "live-rxe4-rfc8797.pcap"), "bth.icrc.status", "1"},
		{filepath.Join(real, "live-siw4-crc-nfs42.pcap"), "fpdu.crc.status", "1"},
		{filepath.Join("..", "..", "testdata", "pcaps", "synthetic", "synth-ibcm-erf-cm-all.pcap"), "lrh.vcrc.status", "1"},
		{filepath.Join("..", "..", "testdata", "pcaps", "synthetic", "synth-ibcm-erf-bad-crc.pcap"), "bth.icrc.status", "0"},
	} {
		_, out, _ := runCmd(t, "-r", tc.file, "-c", "8", "-Y", tc.field, "-T", "fields", "-e", tc.field)
		vals := strings.Fields(strings.ReplaceAll(out, ",", " "))
		if len(vals) == 0 || !slices.Contains(vals, tc.want) {
			t.Errorf("%s %s: %q, want %s", tc.file, tc.field, out, tc.want)
		}
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	out, err := exec.Command("tshark", "-G", "values").Output()
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[uint64]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 4 && f[0] == "V" && f[1] == "udp.checksum.status" {
			var v uint64
			fmt.Sscan(f[2], &v)
			theirs[v] = strings.ToLower(f[3])
		}
	}
	if !maps.Equal(theirs, field.ChecksumStatusNames) {
		t.Errorf("ours %v, tshark's udp.checksum.status %v", field.ChecksumStatusNames, theirs)
	}
}

// TestIPoIBCapture: the LINKTYPE_IPOIB capture (iWARP over IPoIB, built
// from the same exchange as synth-iwarp-mpa-v1.pcap) decodes in every view
// as the Ethernet capture, but for the link layer and its three frames of
// neighbour traffic after the exchange; check passes; the IPoIB
// pseudo-header and encapsulation fields are tshark's.
func TestIPoIBCapture(t *testing.T) {
	synth := filepath.Join("..", "..", "testdata", "pcaps", "synthetic")
	ipoib, eth := filepath.Join(synth, "synth-ipoib-iwarp.pcap"), filepath.Join(synth, "synth-iwarp-mpa-v1.pcap")
	fields := []string{"-T", "fields", "-e", "frame.number", "-e", "ip.src", "-e", "tcp.seq_raw", "-e", "iwarp_mpa.rev",
		"-e", "iwarp_rdma.opcode", "-e", "rpcrdma.xid", "-e", "nfs.opcode"}
	for _, v := range [][]string{{"-r"}, append([]string{"-r", "--all", "-Y", "frame.number <= 10"}, fields...), {"-r", "-V", "-Y", "frame.number <= 10"},
		{"conns"}, {"conns", "-V"}, {"conns", "--json"}, {"check"}} {
		codeI, outI, errI := runCmd(t, viewOf(v, ipoib)...)
		codeE, outE, errE := runCmd(t, viewOf(v, eth)...)
		outE, errE = strings.ReplaceAll(outE, eth, ipoib), strings.ReplaceAll(errE, eth, ipoib)
		if slices.Contains(v, "-V") {
			// Each frame is 30 octets longer (44 octets of IPoIB
			// headers for 14 of Ethernet), of the other link type.
			outI, outE = ipoibVerbose.ReplaceAllString(outI, ""), ipoibVerbose.ReplaceAllString(outE, "")
		}
		if codeI != codeE || outI != outE || errI != errE {
			t.Errorf("%v: exit %d, want %d\n%s\n--- want\n%s\nstderr %q, want %q", v, codeI, codeE, outI, outE, errI, errE)
		}
		if v[0] == "check" && codeI != 0 {
			t.Errorf("check exit %d:\n%s", codeI, outI)
		}
	}
	ipoibFields := []string{"ipoib.daddr.qpn", "ipoib.dgid", "ipoib.grh.ipver", "ipoib.grh.tclass", "ipoib.grh.flowlabel",
		"ipoib.grh.sqpn", "ipoib.grh.sgid", "ipoib.type", "ipoib.reserved", "ip.src", "ipv6.dst", "udp.dstport"}
	want := testcap.TsharkFields(t, ipoib, "", append([]string{"frame.number"}, ipoibFields...)...)
	args := []string{"-r", ipoib, "--all", "-T", "fields", "-e", "frame.number"}
	for _, f := range ipoibFields {
		args = append(args, "-e", f)
	}
	_, out, _ := runCmd(t, args...)
	var got [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		got = append(got, strings.Split(l, "\t"))
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ipoib fields:\n%q\n--- tshark\n%q", got, want)
	}
}

// ipoibVerbose matches the -V lines that differ between the IPoIB and
// Ethernet forms of one exchange: the link layer's tree, the frame
// lengths, the link type and the protocols' first name.
var ipoibVerbose = regexp.MustCompile(`(?m)^(Frame \d+: .*|    (Frame|Capture) Length: .*|    Link Type: .*|    Protocols in frame: [a-z]+:|(Ethernet II|IP over InfiniBand)\n(    .*\n)+)`)
