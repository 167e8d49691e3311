package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// widest is the width of the widest line of s, in characters (every
// character the table draws is one column wide).
func widest(s string) (int, string) {
	n, line := 0, ""
	for _, l := range strings.Split(s, "\n") {
		if w := utf8.RuneCountInString(l); w > n {
			n, line = w, l
		}
	}
	return n, line
}

// COLUMNS=80 conns prints no line wider than 80 on any committed capture
// (nor at other widths), and on all the real captures read at once, with
// their File column.
func TestConnsFitsColumns(t *testing.T) {
	files := captureFiles(t)
	for _, cols := range []int{80, 132} {
		t.Setenv("COLUMNS", strconv.Itoa(cols))
		for _, f := range files {
			code, out, stderr := runCmd(t, "conns", f)
			if code != exitOK {
				t.Fatalf("%s: exit %d: %s", f, code, stderr)
			}
			if n, line := widest(out); n > cols {
				t.Errorf("COLUMNS=%d %s: a line of %d characters:\n%s", cols, f, n, line)
			}
		}
	}
	t.Setenv("COLUMNS", "80")
	real := testcap.Glob(t, "pcaps/real/*.pcap")
	code, out, stderr := runCmd(t, append([]string{"conns"}, real...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n, line := widest(out); n > 80 {
		t.Errorf("COLUMNS=80, %d captures: a line of %d characters:\n%s", len(real), n, line)
	}
	header := strings.Split(out, "\n")[1]
	if !strings.Contains(header, "│ File ") {
		t.Errorf("no File column with %d captures: %s", len(real), header)
	}
	// Every capture is named in the File column (wrapped: its first part).
	for _, f := range real {
		first := strings.SplitAfter(filepath.Base(f), "-")[0]
		if !strings.Contains(out, "│ "+first) {
			t.Errorf("%s not in the File column", filepath.Base(f))
		}
	}
}

// The columns go in ConnsDropOrder as the width shrinks, and the private
// data columns say which size is which.
func TestConnsDropOrder(t *testing.T) {
	for _, tc := range []struct {
		cols       int
		has, hasNo []string
	}{
		{0, []string{"QPN c/s", "REQ/REP frame", "│ Client PD        │"}, []string{"send/recv"}},
		{120, []string{"Transport", "Client PD", "send/recv"}, []string{"QPN", "REQ/REP", "Service"}},
		{100, []string{"Client PD", "Server PD"}, []string{"Transport", "Service"}},
		{80, []string{"│ Client ", "│ Server ", "│ State ", "Negotiated", "Findings"}, []string{"Client PD", "Server PD"}},
	} {
		if tc.cols == 0 {
			t.Setenv("COLUMNS", "")
		} else {
			t.Setenv("COLUMNS", strconv.Itoa(tc.cols))
		}
		_, out, _ := runCmd(t, "conns", testcap.Real("live-rxe6-reject.pcap"))
		header := strings.Join(strings.Split(out, "\n")[1:3], "\n")
		for _, s := range tc.has {
			if !strings.Contains(header, s) {
				t.Errorf("COLUMNS=%d: header lacks %q:\n%s", tc.cols, s, header)
			}
		}
		for _, s := range tc.hasNo {
			if strings.Contains(header, s) {
				t.Errorf("COLUMNS=%d: header has %q:\n%s", tc.cols, s, header)
			}
		}
	}
}
