package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
)

func TestConnsJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteConnsJSON(&b, testconn.Kernel(t, testconn.LinuxServer)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines", len(lines))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"transport": "rocev2", "client": "192.168.122.10:1023", "server": "192.168.122.11:20049",
		"service_id": "0x0000000001064e51", "state": "disconnected",
		"request_frame": 1.0, "reply_frame": 2.0,
	} {
		if m[key] != want {
			t.Errorf("%s = %v, want %v", key, m[key], want)
		}
	}
	neg := m["negotiated"].(map[string]any)
	if neg["client_to_server_inline"] != 4096.0 || neg["server_to_client_inline"] != 4096.0 || neg["remote_invalidation"] != false {
		t.Errorf("negotiated %v", neg)
	}
	cpd := m["client_private_data"].(map[string]any)
	if cpd["hex"] != "f6ab0e1801010303"+strings.Repeat("00", 48) || cpd["ulp_offset"] != 36.0 || cpd["offset"] != 0.0 ||
		cpd["remote_invalidation"] != true || cpd["send_size"] != 4096.0 || cpd["message"] != "REQ" {
		t.Errorf("client private data %v", cpd)
	}
	spd := m["server_private_data"].(map[string]any)
	if spd["remote_invalidation"] != false || spd["ulp_offset"] != 0.0 || spd["frame"] != 2.0 {
		t.Errorf("server private data %v", spd)
	}
	fs := m["findings"].([]any)
	if len(fs) != 1 || fs[0].(map[string]any)["code"] != conn.CodeSendExceedsInline {
		t.Errorf("findings %v", fs)
	}
}

func TestConnsTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteConnsTable(&b, testconn.Kernel(t, testconn.LinuxServer)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"rocev2", "192.168.122.10:1023", "192.168.122.11:20049", "NFS/RDMA (rdma_cm TCP port 20049)",
		"0x000011/0x000012", "disconnected", "1/2", "v1 R=1 4096/4096", "v1 R=0 4096/4096", "4096/4096 RI=no", "1 error"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestConnsLadder(t *testing.T) {
	var b bytes.Buffer
	if err := WriteConnsLadder(&b, testconn.Kernel(t, testconn.LinuxServer)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var order []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 5 && (f[2] == "client" || f[2] == "server") {
			order = append(order, f[0]+" "+f[5])
		}
		if strings.Contains(l, "! frame 4:") {
			order = append(order, "finding")
		}
	}
	want := "1 REQ|2 REP|3 RTU|finding|5 DREQ|6 DREP"
	if strings.Join(order, "|") != want {
		t.Errorf("ladder order %q, want %q:\n%s", strings.Join(order, "|"), want, b.String())
	}
	if !strings.Contains(b.String(), "negotiated: client → server inline 4096, server → client inline 4096, remote invalidation no") {
		t.Errorf("no negotiated line:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "1        0.000000     client → server   REQ  pd: v1 R=1 4096/4096") {
		t.Errorf("REQ line:\n%s", b.String())
	}
}

func TestPrivateDataSummary(t *testing.T) {
	cs := testconn.Kernel(t, append([]byte{0, 0, 0, 0}, testconn.LinuxServer...))
	if got := PrivateDataSummary(cs[0].ServerData); got != "v1 R=0 4096/4096 @4 (readers differ)" {
		t.Errorf("summary %q", got)
	}
	if got := PrivateDataSummary(nil); got != "-" {
		t.Errorf("nil summary %q", got)
	}
	if !cs[0].HasFinding(pvtdata.CodeReaderDivergence) {
		t.Errorf("findings %v", cs[0].Findings())
	}
}
