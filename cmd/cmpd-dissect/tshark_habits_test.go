package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

func needTshark(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed: comparison with Wireshark skipped (apt-get install tshark)")
	}
}

// TestDisplayFiltersSelectAsTshark: tshark's own filters, with tshark's
// field names, select exactly the frames tshark selects. Each tshark run
// costs a second, so the filters run on every capture and the
// others on the capture of their transport.
func TestDisplayFiltersSelectAsTshark(t *testing.T) {
	needTshark(t)
	if testing.Short() {
		t.Skip("-short: tshark comparison skipped")
	}
	everywhere := []string{
		"ip.addr == 192.0.2.2 || ip.addr == 198.51.100.1",
		"tcp.port == 20049",
		"udp.port == 4791",
		"ip.src == 192.0.2.2 and udp.port in {20049, 4791} or ip.src == 198.51.100.1 and tcp.port in {20049, 4791}",
	}
	roce := []string{
		"ip.addr != 192.0.2.2 or ip.addr ~= 192.0.2.1",
		"udp.port in {1000..60000} and not udp.port in {4791}",
		"udp.port === 4791 or (ip.src != 192.0.2.2 and frame.number in {1..3, 7})",
		"eth.addr == 52:54:00:00:00:01 and eth.type == 0x0800 and frame.len > 200",
		"infiniband.bth.opcode in {0..5} and infiniband.bth.se == 0",
		"infiniband.bth.destqp != 0x1 and infiniband.bth.psn > 10700980",
		"rpcordma.msg_type == 1 or rpcordma",
	}
	iwarp := []string{
		"ip.addr !== 198.51.100.1 or tcp.port != 20049",
		"tcp.port all_eq 20049 or (tcp.len > 0 and tcp.port not in {1..20048})",
		"iwarp_ddp.tagged_flag == 1 or iwarp_rdma.opcode == 0",
		"iwarp_mpa.ulpdulength > 100 and iwarp_ddp",
		"rpcordma.xid and ip.dst == 198.51.100.2",
	}
	rxe6 := testcap.Real("live-rxe6-rfc8797.pcap")
	tsharkPcapng := testcap.Path("pcaps", "converted", "siw-nfs42-rdma.tshark.pcapng")
	runs := map[string][]string{
		testcap.RXE:  append(append([]string{}, everywhere...), roce...),
		testcap.SIW:  append(append([]string{}, everywhere...), iwarp...),
		rxe6:         {"ipv6.addr == 2001:db8:1::2 and udp.port == 4791", "ip or ipv6.src == 2001:db8:1::1"},
		tsharkPcapng: everywhere,
	}
	for file, filters := range runs {
		for _, y := range filters {
			code, got, stderr := runCmd(t, "-r", file, "-Y", y, "-T", "fields", "-e", "frame.number")
			if code != 0 {
				t.Errorf("%s -Y %q: exit %d: %s", file, y, code, stderr)
				continue
			}
			out, err := exec.Command("tshark", "-n", "-r", file, "-Y", y, "-T", "fields", "-e", "frame.number").Output()
			if err != nil {
				t.Fatalf("tshark -r %s -Y %q: %v", file, y, err)
			}
			if got != string(out) {
				t.Errorf("%s -Y %q: frames %s, tshark %s", filepath.Base(file), y, oneLine(got), oneLine(string(out)))
			}
			// tshark 4.x wants commas between set elements, 3.x spaces:
			// both are ours.
			if spaced := strings.ReplaceAll(y, ", ", " "); spaced != y {
				if _, got2, _ := runCmd(t, "-r", file, "-Y", spaced, "-T", "fields", "-e", "frame.number"); got2 != got {
					t.Errorf("%s -Y %q: frames %s, with commas %s", filepath.Base(file), spaced, oneLine(got2), oneLine(got))
				}
			}
			if got == "" {
				t.Logf("%s -Y %q selects nothing (as tshark)", filepath.Base(file), y)
			}
		}
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return "[" + s + "]"
}

// TestEitherSideFieldsPrintAsTshark: -e ip.addr prints source and
// destination as tshark does, and the other aliases print tshark's values.
func TestEitherSideFieldsPrintAsTshark(t *testing.T) {
	needTshark(t)
	// By tshark's name, values print in tshark's format where it differs
	// from ours: infiniband.bth.opcode in decimal, iwarp_rdma.opcode with
	// two hex digits, the CM's flags and GUIDs in hex.
	names := []string{"frame.number", "ip.addr", "ip.src", "ip.dst", "tcp.port", "udp.port", "ipv6.addr",
		"eth.addr", "eth.src", "eth.type", "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
		"infiniband.bth.p_key", "infiniband.cm.req.localcaguid", "infiniband.cm.req.srq", "infiniband.cm.req.startpsn",
		"infiniband.cm.rep.localqpn", "infiniband.lrh.vl", "infiniband.deth.srcqp",
		"iwarp_ddp.msn", "iwarp_ddp.qn", "iwarp_rdma.opcode", "rpcordma.xid", "rpcordma.msg_type", "rpcordma.flow_control"}
	for _, file := range []string{testcap.RXE, testcap.SIW, testcap.Real("live-rxe6-rfc8797.pcap")} {
		args := []string{"-r", file, "--all", "-T", "fields", "-E", "header=y"}
		targs := []string{"-n", "-r", file, "-T", "fields", "-E", "header=y"}
		for _, n := range names {
			args = append(args, "-e", n)
			targs = append(targs, "-e", n)
		}
		code, got, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, stderr)
		}
		out, err := exec.Command("tshark", targs...).Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		if got != string(out) {
			gl, wl := strings.Split(got, "\n"), strings.Split(string(out), "\n")
			for i := range wl {
				if i >= len(gl) || gl[i] != wl[i] {
					t.Errorf("%s line %d:\n ours   %q\n tshark %q", filepath.Base(file), i+1, gl[min(i, len(gl)-1)], wl[i])
					break
				}
			}
		}
	}
}

// TestTsharkAliasesExist: every tshark name of the alias table is a field
// of tshark (Wireshark 4.0's "tshark -G fields") of a compatible type, and
// every alias resolves to one of our fields.
func TestTsharkAliasesExist(t *testing.T) {
	needTshark(t)
	out, err := exec.Command("tshark", "-G", "fields").Output()
	if err != nil {
		t.Fatalf("tshark -G fields: %v", err)
	}
	types := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		if len(p) > 3 && p[0] == "F" {
			types[p[2]] = p[3]
		}
	}
	compatible := map[field.Kind][]string{
		field.KindUint: {"FT_UINT"}, field.KindHex: {"FT_UINT"}, field.KindBool: {"FT_BOOLEAN", "FT_UINT8"},
		field.KindAddr: {"FT_IPv4", "FT_IPv6"}, field.KindMAC: {"FT_ETHER"}, field.KindEUI64: {"FT_UINT64", "FT_EUI64"},
		field.KindBytes: {"FT_BYTES"}, field.KindString: {"FT_STRING"}, field.KindGroup: {"FT_NONE"},
		field.KindInt: {"FT_INT"},
	}
	n := 0
	for _, p := range field.Protos() {
		for _, f := range p.Fields {
			for _, a := range f.Aliases {
				n++
				ty, ok := types[a]
				if !ok {
					t.Errorf("%s: alias %s is not a tshark field", f.Name, a)
					continue
				}
				good := false
				for _, prefix := range compatible[f.Kind] {
					good = good || strings.HasPrefix(ty, prefix)
				}
				if !good {
					t.Errorf("%s (%s): alias %s is %s in tshark", f.Name, f.Kind, a, ty)
				}
				if g, ok := field.Lookup(a); !ok || g != f {
					t.Errorf("Lookup(%s) does not give %s", a, f.Name)
				}
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d aliases resolved: the table names fields that do not exist", n)
	}
	if !field.IsAlias("ip.addr") || field.IsAlias("ipv4.addr") {
		t.Error("ip.addr is an alias of ipv4.addr")
	}
}

// TestBadOptionsExitWithPosition: a bad -E or -f value exits 2 with a
// message naming it and a caret under its column; -f is checked with -r
// too, before tshark's refusal of a capture filter on a file.
func TestBadOptionsExitWithPosition(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  string // in the message
		caret string // the last line
	}{
		{[]string{"-T", "fields", "-e", "frame.number", "-E", "header=q"}, `-E header=q: "q" is not y or n at column 8`, "         ^"},
		{[]string{"-T", "fields", "-e", "frame.number", "-E", "quote=x"}, `"x" is not d, s or n at column 7`, "        ^"},
		{[]string{"-T", "fields", "-e", "frame.number", "-E", "occurrence=z"}, `"z" is not f, l, a or a non-zero number at column 12`, "             ^"},
		{[]string{"-T", "fields", "-e", "frame.number", "-E", "colour=y"}, `"colour" is not a field output option`, "  ^"},
		{[]string{"-T", "fields", "-e", "frame.number", "-E", "header"}, `want KEY=VALUE`, "        ^"},
		{[]string{"-f", "udp prot 4791"}, `"prot" is not a qualifier of "udp" (want src, dst, port or portrange) at column 5`, "      ^"},
		{[]string{"-f", "not portrange 1-1024 and vlan"}, "only read filters, not capture filters, can be specified when reading a capture file", ""},
		{[]string{"-f", "tcp[tcpflags] & tcp-syn != 0 or"}, "expected a primitive (host, net, port, portrange, ip, ip6, tcp, udp, ether, vlan, a comparison…) at column 32", "                                 ^"},
		{[]string{"-f", "udp port 4791"}, "only read filters, not capture filters, can be specified when reading a capture file", ""},
	} {
		code, out, stderr := runCmd(t, append([]string{"-r", testcap.RXE}, tc.args...)...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, out)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, tc.want)
		}
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if tc.caret != "" && lines[len(lines)-1] != tc.caret {
			t.Errorf("%v: caret line %q, want %q", tc.args, lines[len(lines)-1], tc.caret)
		}
	}
	// Quoting as tshark: values quoted, empty columns left empty.
	code, out, _ := runCmd(t, "-r", testcap.RXE, "-c", "1", "-T", "fields", "-e", "frame.number", "-e", "ip.addr", "-e", "tcp.port",
		"-E", "quote=s", "-E", "separator=/s", "-E", "header=y", "-E", "bom=y")
	if want := "\ufeffframe.number ip.addr tcp.port\n'1' '192.0.2.2,192.0.2.1' \n"; code != 0 || out != want {
		t.Errorf("quote=s: exit %d, %q, want %q", code, out, want)
	}
}

// TestHexDumpAndTimeFormatsAsTshark: -x prints tshark's dump, alone or
// after -P's summary line or -V's tree; each -t format gives tshark's
// time column (its _ws.col.Time).
func TestHexDumpAndTimeFormatsAsTshark(t *testing.T) {
	needTshark(t)
	file := testcap.Real("live-rxe4-nfs3.pcap")
	// The first 15 frames: none has a reassembled data source, which
	// tshark would dump too (docs/tshark.md).
	code, got, stderr := runCmd(t, "-r", file, "--all", "-c", "15", "-x")
	if code != 0 {
		t.Fatalf("-x: exit %d: %s", code, stderr)
	}
	want, err := exec.Command("tshark", "-n", "-r", file, "-c", "15", "-x").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("-x differs from tshark's:\n%s\ntshark:\n%s", got[:min(len(got), 400)], want[:min(len(want), 400)])
	}
	_, withSummary, _ := runCmd(t, "-r", file, "-c", "1", "-x", "-P")
	_, summary, _ := runCmd(t, "-r", file, "-c", "1")
	first := strings.SplitAfter(got, "\n\n")[0]
	if withSummary != summary+"\n"+first {
		t.Errorf("-x -P: %q, want the summary line, a blank line and the dump", withSummary)
	}
	_, withTree, _ := runCmd(t, "-r", file, "-c", "1", "-x", "-V")
	_, tree, _ := runCmd(t, "-r", file, "-c", "1", "-V")
	if withTree != tree+first {
		t.Errorf("-x -V: %q, want the tree then the dump", withTree)
	}
	for _, tf := range []string{"a", "ad", "adoy", "d", "dd", "e", "r", "u", "ud", "udoy"} {
		out, err := exec.Command("tshark", "-n", "-r", file, "-t", tf, "-T", "fields", "-e", "_ws.col.Time").Output()
		if err != nil {
			t.Fatal(err)
		}
		_, ours, _ := runCmd(t, "-r", file, "--all", "-t", tf)
		var cols []string
		for _, line := range strings.Split(strings.TrimRight(ours, "\n"), "\n") {
			// frame number, then the time column (the dates hold a space)
			f := strings.Fields(line)
			col := f[1]
			if tf == "ad" || tf == "adoy" || tf == "ud" || tf == "udoy" {
				col += " " + f[2]
			}
			cols = append(cols, col)
		}
		if g, w := strings.Join(cols, "\n")+"\n", string(out); g != w {
			t.Errorf("-t %s: %s, tshark %s", tf, oneLine(g), oneLine(w))
		}
	}
}

// TestExpandAndBadTimeFormat: -O shows the fields of the protocols named
// (tshark's names too) and only their titles for the others; bad -O and
// -t values are usage errors naming them.
func TestExpandAndBadTimeFormat(t *testing.T) {
	code, out, stderr := runCmd(t, "-r", testcap.RXE, "-c", "1", "-O", "bth,ip")
	if code != 0 {
		t.Fatalf("-O: exit %d: %s", code, stderr)
	}
	wantIn(t, "-O bth,ip", out, "\nEthernet II\nInternet Protocol Version 4\n    Version: 4", "[bth.opcode]", "\nUser Datagram Protocol\nInfiniBand Base Transport Header")
	if strings.Contains(out, "[udp.srcport]") || strings.Contains(out, "[ethernet.src]") {
		t.Errorf("-O bth,ip expands other protocols:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-O", "bth,nosuch"}, `-O bth,nosuch: "nosuch" is not a protocol (cmpd-dissect fields lists them) at column 5`},
		{[]string{"-t", "x"}, `-t x: "x" is not a time format (a, ad, adoy, d, dd, e, r, u, ud, udoy)`},
		{[]string{"-x", "-T", "json"}, "-x goes with the summary and -V, not -T json"},
	} {
		code, _, stderr := runCmd(t, append([]string{"-r", testcap.RXE}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestMain lets a test run the command in a process of its own (-Z
// changes the user of the whole process).
func TestMain(m *testing.M) {
	if os.Getenv("CMPD_DISSECT_RUN_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestLiveReportAndPrivileges: the end-of-capture report as tshark's, an
// unknown -Z user refused before anything opens; as root, a capture on
// lo with -Z nobody says "Capturing on 'lo'", runs as nobody once the
// socket is open, and reports its count.
func TestLiveReportAndPrivileges(t *testing.T) {
	for _, tc := range []struct {
		captured int
		dropped  uint
		want     string
	}{
		{0, 0, "0 packets captured\n"},
		{1, 0, "1 packet captured\n"},
		{12, 1, "12 packets captured\n1 packet dropped from eth0\n"},
		{12, 3, "12 packets captured\n3 packets dropped from eth0\n"},
	} {
		if got := source.CaptureReport("eth0", tc.captured, tc.dropped); got != tc.want {
			t.Errorf("CaptureReport(%d, %d) = %q, want %q", tc.captured, tc.dropped, got, tc.want)
		}
	}
	code, _, stderr := runCmd(t, "-i", "lo", "-Z", "no-such-user-here")
	if code != 2 || !strings.Contains(stderr, "-Z no-such-user-here: no such user") {
		t.Errorf("-Z unknown: exit %d, %q", code, stderr)
	}
	if os.Geteuid() != 0 {
		t.Skip("live capture and -Z need root: the AF_PACKET part is skipped")
	}
	nobody, err := source.LookupUser("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-i", "lo", "-f", "udp port 4793", "-c", "2", "-a", "duration:20", "-Z", "nobody",
		"--all", "-T", "fields", "-e", "udp.dstport")
	cmd.Env = append(os.Environ(), "CMPD_DISSECT_RUN_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(errPipe)
	first, err := rd.ReadString('\n')
	if first != "Capturing on 'lo'\n" {
		t.Fatalf("first stderr line %q (%v)", first, err)
	}
	// The socket is open; the privileges go right after.
	var uidLine string
	for i := 0; i < 100 && !strings.HasPrefix(uidLine, "Uid:\t"+strconv.Itoa(nobody.UID)+"\t"); i++ {
		time.Sleep(10 * time.Millisecond)
		status, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "Uid:") {
				uidLine = l
			}
		}
	}
	if want := "Uid:\t" + strconv.Itoa(nobody.UID) + "\t" + strconv.Itoa(nobody.UID); !strings.HasPrefix(uidLine, want) {
		t.Errorf("after -Z nobody: %q, want %q…", uidLine, want)
	}
	conn, err := net.Dial("udp", "127.0.0.1:4793")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan error)
	go func() {
		rest, _ := io.ReadAll(rd)
		first += string(rest)
		done <- cmd.Wait()
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-tick.C:
			conn.Write([]byte("hello"))
		}
	}
	if err != nil {
		t.Fatalf("capture: %v: %s", err, first)
	}
	if out.String() != "4793\n4793\n" || first != "Capturing on 'lo'\n2 packets captured\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), first)
	}
}

// TestCompletionOfTsharkNames: -e completes tshark's names as well as ours.
func TestCompletionOfTsharkNames(t *testing.T) {
	got, _ := completeFieldNames(nil, nil, "ip.s")
	if want := []string{"ip.src\tSource Address", "ip.src_host\tSource Host"}; !slices.Equal(got, want) {
		t.Errorf("ip.s completes to %q, want %q", got, want)
	}
	got, _ = completeFieldNames(nil, nil, "ipv4.s")
	if want := []string{"ipv4.src\tSource Address", "ipv4.src_host\tSource Host"}; !slices.Equal(got, want) {
		t.Errorf("ipv4.s completes to %q, want %q", got, want)
	}
}
