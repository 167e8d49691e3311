package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// explain --json: one statement per line with the documented keys, per
// capture in the order given, frame numbers counted per capture.
func TestExplainJSON(t *testing.T) {
	files := []string{testcap.Real("live-rxe4-reject.pcap"), testcap.Real("live-siw4-none.pcap")}
	code, out, stderr := runCmd(t, append([]string{"explain", "--json"}, files...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var items []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		for _, k := range []string{"capture", "code", "severity", "frames", "text"} {
			if _, ok := m[k]; !ok {
				t.Errorf("no %q in %s", k, line)
			}
		}
		items = append(items, m)
	}
	if items[0]["code"] != "explain.verdict" || items[0]["capture"] != files[0] {
		t.Errorf("first item: %v", items[0])
	}
	var sawReject, sawSecond bool
	for _, m := range items {
		if m["code"] == "explain.reject" && m["severity"] == "warning" && m["connection"] == 1.0 {
			sawReject = true
		}
		if m["capture"] == files[1] && m["code"] == "explain.defaults" {
			// The siw capture's frames start again at 1: its MPA Request is frame 4.
			if fs, _ := m["frames"].([]any); len(fs) == 0 || (fs[0] != 4.0 && fs[0] != 6.0) {
				t.Errorf("frames %v", m["frames"])
			}
			sawSecond = true
		}
	}
	if !sawReject || !sawSecond {
		t.Errorf("reject %v, second capture %v:\n%s", sawReject, sawSecond, out)
	}

	// Text: the verdict first, wrapped to COLUMNS.
	t.Setenv("COLUMNS", "80")
	code, out, _ = runCmd(t, "explain", files[0])
	// Wrapping depends on the path's length: compare with the lines joined.
	if code != exitOK || !strings.HasPrefix(strings.Join(strings.Fields(out), " "), files[0]+": 1 connection, which failed.") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if n, line := widest(out); n > 80 {
		t.Errorf("a line of %d characters: %s", n, line)
	}
}
