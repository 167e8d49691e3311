package testcap

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootAndPaths(t *testing.T) {
	if _, err := os.Stat(filepath.Join(Root(), "go.mod")); err != nil {
		t.Fatalf("Root() = %s: %v", Root(), err)
	}
	for _, p := range []string{RXE, SIW, Path("expect", "rxe-nfs42-rdma.yaml")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if got := Glob(t, "pcaps/real/*-nfs42-rdma.pcap"); len(got) != 2 {
		t.Errorf("Glob: %v", got)
	}
}

func TestFramesAreCopies(t *testing.T) {
	frames := Frames(t, RXE)
	if len(frames) != 109 {
		t.Fatalf("%d frames in %s, want 109", len(frames), RXE)
	}
	data := Data(t, RXE)
	for i := range frames {
		if frames[i].Number != i+1 || string(frames[i].Data) != string(data[i]) {
			t.Fatalf("frame %d differs between Frames and Data", i+1)
		}
	}
	// Each frame owns its bytes: the reader's buffer is not shared.
	if &frames[0].Data[0] == &frames[1].Data[0] {
		t.Fatal("frames share a buffer")
	}
}

func TestUndouble(t *testing.T) {
	for _, tc := range []struct {
		v    string
		k    int
		want string
	}{
		{"a,b,a,b", 2, "a,b"},
		{"a,b,a,c", 2, "a,b,a,c"},
		{"a,b,c", 2, "a,b,c"},
		{"a,a,a", 3, "a"},
		{"a,b", 1, "a,b"},
		{"", 2, ""},
	} {
		if got := Undouble(tc.v, tc.k); got != tc.want {
			t.Errorf("Undouble(%q, %d) = %q, want %q", tc.v, tc.k, got, tc.want)
		}
	}
}

// TestSameBytes: the same bytes of one array only, not equal copies or
// other windows of it.
func TestSameBytes(t *testing.T) {
	a := []byte("abcdef")
	for _, tc := range []struct {
		x, y []byte
		want bool
	}{
		{a[1:3], a[1:3], true},
		{nil, nil, true},
		{a[1:3], a[2:4], false},
		{a[1:3], a[1:3:4], false},
		{a[1:3], []byte("bc"), false},
		{nil, a[:0], false},
	} {
		if got := SameBytes(tc.x, tc.y); got != tc.want {
			t.Errorf("SameBytes(%q, %q) = %v", tc.x, tc.y, got)
		}
	}
}
