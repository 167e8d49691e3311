package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"export", "--format", "ndjson", "-o", dir, "--packets", testcap.RXE, testcap.SIW},
		strings.NewReader(""), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// The iWARP capture has TCP streams, not queue pairs.
	for capture, qps := range map[string]int{"rxe-nfs42-rdma.pcap": 2, "siw-nfs42-rdma.pcap": 0} {
		for _, table := range []string{"connections", "queue_pairs", "findings", "rpc", "packets"} {
			p := filepath.Join(dir, table, "capture="+capture, "part-0.ndjson")
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%v", err)
			}
		}
		if !strings.Contains(stderr.String(), fmt.Sprintf("export: %s: 1 connections, %d queue pairs", capture, qps)) {
			t.Errorf("no summary for %s: %s", capture, stderr.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "connections", "capture=rxe-nfs42-rdma.pcap", "part-0.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"index":{"_index":"cmpd-dissect-connections"}}`+"\n"+`{"schema_version":1,"capture":"rxe-nfs42-rdma.pcap","id":1,`) {
		t.Errorf("connections document:\n%s", b)
	}
}

func TestExportUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--format", "csv", "-o", dir, testcap.RXE}, "unknown format"},
		{[]string{"export", testcap.RXE}, "-o DIR"},
		{[]string{"export", "-o", dir}, "no input"},
		{[]string{"export", "-o", dir, testcap.RXE, "x/" + filepath.Base(testcap.RXE)}, "would both be capture=rxe-nfs42-rdma.pcap"},
		{[]string{"export", "-o", dir, "-w", filepath.Join(dir, "x.pcapng"), testcap.RXE}, "-w is not supported"},
		{[]string{"export", "-o", dir, filepath.Join(dir, "missing.pcap")}, "missing.pcap"},
	} {
		var stderr bytes.Buffer
		if code := run(c.args, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
}
