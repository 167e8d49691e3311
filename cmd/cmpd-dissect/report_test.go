package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

func TestReportCommand(t *testing.T) {
	if code, _, stderr := runCmd(t, "report", testcap.Real("live-rxe4-reject.pcap")); code != exitUsage || !strings.Contains(stderr, "-o FILE.html is required") {
		t.Errorf("without -o: exit %d, %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, stderr := runCmd(t, "report", "-o", out, testcap.Real("live-rxe4-reject.pcap"), testcap.Real("live-siw4-reconnect.pcap"))
	if code != exitOK || !strings.Contains(stderr, "2 captures, 3 connections") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<svg class="ladder"`); n != 3 {
		t.Errorf("%d ladders, want 3", n)
	}
	if code, _, _ := runCmd(t, "report", "-o", filepath.Join(t.TempDir(), "no", "such", "dir.html"), testcap.Real("live-rxe4-reject.pcap")); code != exitUsage {
		t.Errorf("unwritable -o: exit %d", code)
	}
}
