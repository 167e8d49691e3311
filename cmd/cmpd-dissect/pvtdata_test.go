package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("device not ready") }

func TestPvtdataTree(t *testing.T) {
	code, out, errs := runCmd(t, "pvtdata", "f6ab0e1801010303")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	wantIn(t, "tree", out,
		"CM Private Data (RFC 8797 and other ULPs): 8 octets: f6ab0e1801010303\n",
		"    Upper Layer Protocol: rpcrdma-v1  [pvtdata.ulp]\n",
		"    Valid RPC-over-RDMA v1 message: true  [pvtdata.valid]\n",
		"        Format Identifier: 0xf6ab0e18 (RPC-over-RDMA version 1)  [pvtdata.format_identifier]\n",
		"        Version: 1  [pvtdata.version]\n",
		"        Reserved: 0x00  [pvtdata.reserved]\n",
		"        R (remote invalidation supported): true  [pvtdata.remote_invalidation]\n",
		"        Send Size: 4096 octets  [pvtdata.send_size]\n",
		"        Receive Size: 4096 octets  [pvtdata.receive_size]\n",
		"    Effective (what a receiver in this mode acts on)  [pvtdata.effective]\n"+
			"        Effective Send Size: 4096 octets  [pvtdata.effective.send_size]\n",
		"    linux reader: message at offset 0, send 4096 receive 4096 R=1\n",
		"Findings: none\n",
	)
}

func TestPvtdataJSON(t *testing.T) {
	code, out, _ := runCmd(t, "pvtdata", "--json", "f6:ab:0e:18:01:00:03:03")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]any{"found": true, "offset": 0.0, "candidates": []any{0.0}, "valid": true, "version": 1.0,
		"remote_invalidation": false, "send_size": 4096.0, "receive_size": 4096.0, "reserved": 0.0,
		"findings": []any{}, "effective": map[string]any{"send_size": 4096.0, "receive_size": 4096.0, "remote_invalidation": false}}
	for k, v := range want {
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}

	// Not found: offset -1, the defaults, the info finding.
	_, out, _ = runCmd(t, "pvtdata", "--json", "00 00 00 00")
	for _, s := range []string{`"found": false`, `"offset": -1`, `"candidates": []`, `"code": "pvtdata.not-found"`, `"severity": "info"`} {
		if !strings.Contains(out, s) {
			t.Errorf("lacks %s:\n%s", s, out)
		}
	}
}

func TestPvtdataInputs(t *testing.T) {
	// Several arguments are joined; "-" reads raw bytes.
	_, joined, _ := runCmd(t, "pvtdata", "--json", "f6", "ab", "0e", "18", "01", "01", "03", "03")
	code, raw, _ := runStdin(t, bytes.NewReader([]byte{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3}), "pvtdata", "--json", "-")
	if code != 0 || joined != raw || !strings.Contains(raw, `"send_size": 4096`) {
		t.Errorf("joined and stdin differ:\n%s\n%s", joined, raw)
	}
	// The three modes, on the message after 4 octets.
	for mode, valid := range map[string]string{"rfc8797": `"valid": true`, "draft": `"valid": false`, "linux": `"valid": false`} {
		_, out, _ := runCmd(t, "pvtdata", "--json", "--mode", mode, "00000000f6ab0e1801010303")
		if !strings.Contains(out, valid) || !strings.Contains(out, `"mode": "`+mode+`"`) || !strings.Contains(out, "pvtdata.reader-divergence") {
			t.Errorf("%s:\n%s", mode, out)
		}
	}
}

func TestPvtdataExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		stdin  io.Reader
		args   []string
		code   int
		stderr string
	}{
		{"decoded with findings", nil, []string{"pvtdata", "f6ab0e18010103"}, 0, ""},
		{"--check, error finding", nil, []string{"pvtdata", "--check", "f6ab0e18010103"}, 1, "--check: 1 error finding(s): pvtdata.overrun"},
		{"--check, warnings only", nil, []string{"pvtdata", "--check", "f6ab0e1801ff0303"}, 0, ""},
		{"--check, clean", nil, []string{"pvtdata", "--check", "f6ab0e1801010303"}, 0, ""},
		{"bad hex", nil, []string{"pvtdata", "f6ab0e1g"}, 2, `HEX "f6ab0e1g": hex: invalid character 'g' at column 8`},
		{"odd hex", nil, []string{"pvtdata", "f6ab0"}, 2, "odd number of hex digits (5)"},
		{"bad mode", nil, []string{"pvtdata", "--mode", "rfc", "f6"}, 2, `--mode: unknown reading mode "rfc"`},
		{"no argument", nil, []string{"pvtdata"}, 2, "requires at least 1 arg"},
		{"unknown flag", nil, []string{"pvtdata", "--bogus", "f6"}, 2, "unknown flag: --bogus"},
		{"- among others", nil, []string{"pvtdata", "f6", "-"}, 2, `argument 2: "-" (standard input) must be the only argument`},
		{"unreadable stdin", failingReader{}, []string{"pvtdata", "-"}, 2, "reading private data from standard input: device not ready"},
		{"bad --message", nil, []string{"pvtdata", "--message", "hello", "f6"}, 2, `--message "hello": want request, reply or reject`},
		{"encode out of range", nil, []string{"pvtdata", "encode", "--send", "1000"}, 2, "--send: 1000 octets is outside 1024..262144 (RFC 8797 §4.2) [pvtdata.size-out-of-range]"},
		{"encode not a multiple", nil, []string{"pvtdata", "encode", "--receive", "4097"}, 2, "--receive: 4097 octets is not a multiple of 1024"},
		{"encode reserved too wide", nil, []string{"pvtdata", "encode", "--reserved", "200"}, 2, "--reserved 200: the Reserved field has 7 bits"},
		{"encode takes no arguments", nil, []string{"pvtdata", "encode", "f6"}, 2, "unknown command"},
		{"negotiate one argument", nil, []string{"pvtdata", "negotiate", "f6ab0e1801010303"}, 2, "accepts 2 arg(s), received 1"},
		{"negotiate bad server hex", nil, []string{"pvtdata", "negotiate", "-", "f6x"}, 2, `SERVER HEX "f6x": hex: invalid character 'x' at column 3`},
		{"negotiate --check", nil, []string{"pvtdata", "negotiate", "--check", "f6ab0e1801010303", "f6ab0e18"}, 1, "pvtdata.overrun"},
	}
	for _, tc := range tests {
		code, _, errs := runStdin(t, tc.stdin, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.stderr) {
			t.Errorf("%s: exit %d stderr %q, want %d containing %q", tc.name, code, errs, tc.code, tc.stderr)
		}
		if tc.code == 0 && errs != "" {
			t.Errorf("%s: stderr on success: %q", tc.name, errs)
		}
	}
}

func TestPvtdataEncode(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--send", "4096", "--receive", "4096", "--remote-invalidation"}, "f6ab0e1801010303\n"},
		{[]string{"--send", "4096", "--receive", "4096"}, "f6ab0e1801000303\n"},
		{[]string{"--send", "4096", "--receive", "8192", "--remote-invalidation"}, "f6ab0e1801010307\n"},
		{nil, "f6ab0e1801000000\n"},
		{[]string{"--send", "262144", "--receive", "1024"}, "f6ab0e180100ff00\n"},
		{[]string{"--version", "2", "--reserved", "127", "--remote-invalidation"}, "f6ab0e1802ff0000\n"},
	}
	for _, tc := range tests {
		code, out, errs := runCmd(t, append([]string{"pvtdata", "encode"}, tc.args...)...)
		if code != 0 || out != tc.want {
			t.Errorf("encode %v = %q (exit %d, %s), want %q", tc.args, out, code, errs, tc.want)
		}
	}
	_, out, _ := runCmd(t, "pvtdata", "encode", "--json", "--send", "1024", "--receive", "262144")
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil || m["hex"] != "f6ab0e18010000ff" || m["receive_size"] != 262144.0 || m["version"] != 1.0 {
		t.Errorf("encode --json: %v %s", err, out)
	}
	// What encode prints, pvtdata decodes back.
	_, hexOut, _ := runCmd(t, "pvtdata", "encode", "--send", "32768", "--receive", "16384", "--remote-invalidation")
	_, dec, _ := runCmd(t, "pvtdata", "--json", strings.TrimSpace(hexOut))
	if !strings.Contains(dec, `"send_size": 32768`) || !strings.Contains(dec, `"receive_size": 16384`) || !strings.Contains(dec, `"remote_invalidation": true`) {
		t.Errorf("round trip:\n%s", dec)
	}
}

func TestPvtdataNegotiate(t *testing.T) {
	code, out, _ := runCmd(t, "pvtdata", "negotiate", "f6ab0e1801010303", "f6ab0e1801000303")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	wantIn(t, "output", out,
		"Client (REQ / MPA Request): rfc8797 reader: message at offset 0, send 4096 receive 4096 R=1\n",
		"client-to-server inline threshold: 4096 octets (min of client send 4096, server receive 4096)\n",
		"server-to-client inline threshold: 4096 octets (min of server send 4096, client receive 4096)\n",
		"remote invalidation: no: the server must reply with plain Send\n",
	)

	tests := []struct {
		args []string
		want map[string]any
	}{
		{[]string{"f6ab0e1801010303", "f6ab0e1801000303"}, map[string]any{"client_to_server_inline": 4096.0, "server_to_client_inline": 4096.0, "remote_invalidation": false}},
		{[]string{"f6ab0e1801010307", "f6ab0e180101071f"}, map[string]any{"client_to_server_inline": 4096.0, "server_to_client_inline": 8192.0, "remote_invalidation": true}},
		{[]string{"f6ab0e1801010303", "-"}, map[string]any{"client_to_server_inline": 1024.0, "server_to_client_inline": 1024.0, "remote_invalidation": false, "server": nil}},
		{[]string{"-", "-"}, map[string]any{"client_to_server_inline": 1024.0, "server_to_client_inline": 1024.0, "client": nil, "server": nil}},
		{[]string{"f6ab0e1802010303", "f6ab0e1801010303"}, map[string]any{"client_to_server_inline": 1024.0, "remote_invalidation": false}},
		{[]string{"--mode", "linux", "f6ab0e1801011f1f", "00000000f6ab0e1801011f1f"}, map[string]any{"server_to_client_inline": 1024.0, "remote_invalidation": false, "mode": "linux"}},
		{[]string{"f6ab0e1801011f1f", "00000000f6ab0e1801011f1f"}, map[string]any{"server_to_client_inline": 32768.0, "remote_invalidation": true, "mode": "rfc8797"}},
	}
	for _, tc := range tests {
		code, out, errs := runCmd(t, append([]string{"pvtdata", "negotiate", "--json"}, tc.args...)...)
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil {
			t.Fatalf("%v: exit %d %v %s %s", tc.args, code, err, out, errs)
		}
		for k, v := range tc.want {
			if !reflect.DeepEqual(m[k], v) {
				t.Errorf("%v: %s = %#v, want %#v", tc.args, k, m[k], v)
			}
		}
		if c, ok := m["client"].(map[string]any); ok && c["found"] == nil {
			t.Errorf("%v: client is not a pvtdata report: %v", tc.args, c)
		}
	}
}

func TestPvtdataHelp(t *testing.T) {
	for _, args := range [][]string{{"pvtdata", "--help"}, {"pvtdata", "encode", "--help"}, {"pvtdata", "negotiate", "--help"}} {
		code, out, _ := runCmd(t, args...)
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "cmpd-dissect pvtdata") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	_, out, _ := runCmd(t, "pvtdata", "--help")
	for _, s := range []string{"--mode", "--json", "--check", "Exit status", "rfc8797", "draft", "linux"} {
		if !strings.Contains(out, s) {
			t.Errorf("help lacks %q", s)
		}
	}
}

func TestPvtdataOtherULP(t *testing.T) {
	code, out, _ := runCmd(t, "pvtdata", "--port", "4420", "--message", "reply", "00008000")
	if code != 0 || !strings.Contains(out, "Upper Layer Protocol: nvmeof") || !strings.Contains(out, "Controller Receive Queue Size: 128") || strings.Contains(out, "Readers:") {
		t.Errorf("exit %d\n%s", code, out)
	}
	_, out, _ = runCmd(t, "pvtdata", "--json", "0be91b91")
	if !strings.Contains(out, `"ulp": "lustre-o2iblnd"`) {
		t.Errorf("%s", out)
	}
}

// TestPvtdataTreeAsVerbose: pvtdata prints the fields of a private data
// decode line for line as -V prints them under the CM message that carried
// the same octets (one tree renderer for every command).
func TestPvtdataTreeAsVerbose(t *testing.T) {
	code, verbose, errs := runCmd(t, "-V", "-r", testcap.Real("rxe-nfs42-rdma.pcap"))
	if code != exitOK {
		t.Fatalf("-V: exit %d: %s", code, errs)
	}
	// The REQ's subtree: its lines one level deeper than the group line.
	const group = "    ULP private data decode  [cm.pvtdata]\n"
	i := strings.Index(verbose, group)
	if i < 0 {
		t.Fatalf("-V shows no %q", group)
	}
	var want []string
	for _, l := range strings.Split(verbose[i+len(group):], "\n") {
		if !strings.HasPrefix(l, "        ") {
			break
		}
		want = append(want, l[4:])
	}
	// The REQ's ULP data: the client's message, zero-padded to 56 octets.
	_, out, _ := runCmd(t, "pvtdata", "--port", "20049", "--message", "request",
		"f6ab0e1801010303"+strings.Repeat("00", 48))
	got := strings.Split(out, "\n")[1:]
	if len(want) < 10 || len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
		t.Errorf("pvtdata's fields differ from -V's:\n%s\n-V:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
