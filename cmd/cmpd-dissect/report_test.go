package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	if code, _, stderr := runCmd(t, "report", "../../testdata/pcaps/real/live-rxe4-reject.pcap"); code != exitUsage || !strings.Contains(stderr, "-o FILE.html is required") {
		t.Errorf("without -o: exit %d, %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, stderr := runCmd(t, "report", "-o", out, "../../testdata/pcaps/real/live-rxe4-reject.pcap", "../../testdata/pcaps/real/live-siw4-reconnect.pcap")
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
	if code, _, _ := runCmd(t, "report", "-o", filepath.Join(t.TempDir(), "no", "such", "dir.html"), "../../testdata/pcaps/real/live-rxe4-reject.pcap"); code != exitUsage {
		t.Errorf("unwritable -o: exit %d", code)
	}
}
