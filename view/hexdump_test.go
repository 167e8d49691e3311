package view

import (
	"strings"
	"testing"
)

func TestAppendHexDump(t *testing.T) {
	got := string(AppendHexDump(nil, []byte("RT\x00\x12ABCDEFGHIJKL\x7fmn")))
	want := "0000  52 54 00 12 41 42 43 44 45 46 47 48 49 4a 4b 4c   RT..ABCDEFGHIJKL\n" +
		"0010  7f 6d 6e                                          .mn\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if AppendHexDump(nil, nil) != nil {
		t.Error("an empty frame dumps nothing")
	}
	// A frame over 64 KiB: eight-digit offsets on every line.
	big := string(AppendHexDump(nil, make([]byte, 0x10011)))
	lines := strings.Split(strings.TrimSuffix(big, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "00000000  00 ") || !strings.HasPrefix(lines[len(lines)-1], "00010010  00  ") {
		t.Errorf("wide offsets: %q … %q", lines[0], lines[len(lines)-1])
	}
}
