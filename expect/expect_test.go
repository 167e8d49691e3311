package expect

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
)

const kernelExpect = `
connections:
  - match: {transport: rocev2, service: NFS/RDMA, client: 192.168.122.10, server: 192.168.122.11:20049}
    count: 1
    state: disconnected
    negotiated: {client_to_server_inline: 4096, server_to_client_inline: 4096, remote_invalidation: false}
    allowed_findings: [conn.send-exceeds-inline]
`

func TestCheckPasses(t *testing.T) {
	e, err := Parse([]byte(kernelExpect))
	if err != nil {
		t.Fatal(err)
	}
	res := Check(testconn.Kernel(t, testconn.LinuxServer), nil, e)
	if !res.Pass {
		t.Fatalf("differences: %+v", res.Differences)
	}
	var b bytes.Buffer
	WriteText(&b, res)
	if !strings.HasPrefix(b.String(), "PASS: 1 connections, 0 differences; findings: 1 error") {
		t.Errorf("text %q", b.String())
	}
}

func TestCheckDifferences(t *testing.T) {
	// The server advertises 8 KiB send, R=1: negotiated values and a new
	// finding differ from the expectation.
	srv := []byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x07, 0x03}
	e, _ := Parse([]byte(kernelExpect + `
  - match: {service: "4420"}
    allowed_findings: []
`))
	res := Check(testconn.Kernel(t, srv), []finding.Finding{{Code: "dissect.malformed", Severity: finding.SeverityError, Frame: 9, Message: "bad"}}, e)
	if res.Pass {
		t.Fatal("passed")
	}
	var msgs []string
	for _, d := range res.Differences {
		msgs = append(msgs, d.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"negotiated remote invalidation is true, expected false",
		"finding conn.server-send-exceeds-client-receive not allowed (frame 2)",
		"expectation 2 (4420): no connection matches",
		"error finding at frame 9: error dissect.malformed: bad",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in\n%s", want, all)
		}
	}
	if len(res.Differences) != 4 {
		t.Errorf("%d differences:\n%s", len(res.Differences), all)
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, res, "suite"); err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(b.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if s := suites.Suites[0]; s.Failures != 3 || s.Tests != 3 {
		t.Errorf("junit tests %d failures %d\n%s", s.Tests, s.Failures, b.String())
	}
}

func TestCheckWithoutExpectations(t *testing.T) {
	res := Check(testconn.Kernel(t, testconn.LinuxServer), nil, nil)
	if res.Pass || len(res.Differences) != 1 || res.Differences[0].Finding.Code != conn.CodeSendExceedsInline {
		t.Errorf("%+v", res.Differences)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	cs := testconn.Kernel(t, testconn.LinuxServer)
	var b bytes.Buffer
	if err := Write(&b, From(cs, nil), "test"); err != nil {
		t.Fatal(err)
	}
	e, err := Parse(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if res := Check(cs, nil, e); !res.Pass {
		t.Errorf("written expectations fail: %+v\n%s", res.Differences, b.String())
	}
	for _, want := range []string{"transport: rocev2", "service: \"20049\"", "client: 192.168.122.10", "server: 192.168.122.11:20049",
		"state: disconnected", "client_to_server_inline: 4096", "- conn.send-exceeds-inline"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"connections:\n  - match: {transport: carrier-pigeon}\n",
		"connections:\n  - state: sleepy\n",
		"connections:\n  - negotiated: {client_to_server_inline: 1000}\n",
		"connection:\n  - state: established\n",
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
