package main

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestPrefetchable: files are read ahead on a second goroutine only when
// every input is a regular file and there is a second core; stdin, a
// named pipe (tcpdump -w - must show each packet as it arrives) or a
// missing file reads frame by frame.
func TestPrefetchable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	dir := t.TempDir()
	file := filepath.Join(dir, "a.pcap")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	haveFIFO := syscall.Mkfifo(fifo, 0o644) == nil
	for _, tc := range []struct {
		names []string
		want  bool
	}{
		{[]string{file}, true},
		{[]string{file, file}, true},
		{[]string{"-"}, false},
		{[]string{file, "-"}, false},
		{[]string{file, filepath.Join(dir, "missing.pcap")}, false},
		{[]string{dir}, false},
	} {
		if got := prefetchable(tc.names); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.names, got, tc.want)
		}
	}
	if haveFIFO && prefetchable([]string{fifo}) {
		t.Error("a named pipe is read ahead")
	}
	runtime.GOMAXPROCS(1)
	if prefetchable([]string{file}) {
		t.Error("read ahead with one core")
	}
}
