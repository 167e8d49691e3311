package source_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// TestCaptureFilterErrors: a capture filter the compiler would misread is
// refused with the column of the problem.
func TestCaptureFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		pos  int
	}{
		{"udp prot 4791", 4},
		{"udp port", 8},
		{"udp port 70000", 9},
		{"port 4791 and", 13},
		{"tcp port 20049 or", 17},
		{"garbage words", 0},
		{"vlan", 0},
		{"udp[8] == 1", 3},
		{"len > 100", 4},
		{"(tcp", 4},
		{"tcp)", 3},
		{"dst host example.com", 9},
		{"ether", 5},
		{"ether host 1.2.3.4", 11},
		{"src net 10.0.0.0/33", 8},
		{"portrange 4000-5000", 0},
		{"ip proto 17", 3},
		{"tcp and not udp", 8},
		{"udp && !tcp", 7},
		{"ip6 and udp", 0},
		{"ip", 0},
		{"port 4791 or 1.2.3.4", 13},
		{"tcp and and udp", 8},
	} {
		_, err := source.CompileFilter(tc.expr)
		var fe *source.FilterError
		if !errors.As(err, &fe) {
			t.Errorf("%q: err %v, want a FilterError", tc.expr, err)
			continue
		}
		if fe.Pos != tc.pos {
			t.Errorf("%q: column %d, want %d: %v", tc.expr, fe.Pos+1, tc.pos+1, err)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 3 || strings.Index(lines[2], "^") != tc.pos+2 || !strings.Contains(lines[0], "column "+strconv.Itoa(tc.pos+1)) {
			t.Errorf("%q: caret or column misplaced:\n%v", tc.expr, err)
		}
	}
}

// TestCaptureFilterSelectsAsTcpdump: the BPF program of each accepted
// filter passes exactly the frames tcpdump's (libpcap's) passes, on real
// captures of RoCEv2 (UDP) and iWARP (TCP).
func TestCaptureFilterSelectsAsTcpdump(t *testing.T) {
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump not installed: comparison with libpcap skipped")
	}
	filters := []string{
		"udp", "tcp", "udp port 4791", "udp port 55410", "tcp port 20049", "port 4791 or 20049",
		"udp dst port 4791", "tcp src port 20049", "host 192.0.2.1", "src host 192.0.2.1", "dst host 198.51.100.2",
		"src or dst host 192.0.2.2", "net 192.0.2.0/24", "src net 198.51.100.0/24",
		"tcp and port 20049", "tcp || udp", "(udp port 4791) or (tcp port 20049)", "ip host 192.0.2.1", "ip6 host 2001:db8:1::2",
		"( tcp port 20049 and host 198.51.100.1 )", "ether host 52:54:00:12:00:01", "ether src 52:54:00:12:01:02",
		"udp and (port 4791 or 55410)", "tcp && dst port 20049 && src host 198.51.100.1",
	}
	captures := []string{testcap.RXE, testcap.SIW, testcap.Real("live-rxe6-rfc8797.pcap"), testcap.Real("live-siw4-nfs42.pcap")}
	for _, file := range captures {
		frames := testcap.Frames(t, file)
		for _, expr := range filters {
			raw, err := source.CompileFilter(expr)
			if err != nil {
				t.Errorf("%q: %v", expr, err)
				continue
			}
			ins, ok := bpf.Disassemble(raw)
			if !ok {
				t.Fatalf("%q: program does not disassemble", expr)
			}
			vm, err := bpf.NewVM(ins)
			if err != nil {
				t.Errorf("%q: %v", expr, err)
				continue
			}
			var got []string
			for i := range frames {
				if n, err := vm.Run(frames[i].Data); err == nil && n > 0 {
					got = append(got, strconv.Itoa(i+1))
				}
			}
			// tcpdump writes the frames its filter passes; they are
			// matched back to frame numbers by time and bytes.
			out, err := exec.Command("tcpdump", "-r", file, "-w", "-", expr).Output()
			if err != nil {
				t.Fatalf("tcpdump %q: %v", expr, err)
			}
			kept := testcap.FramesOf(t, out)
			var want []string
			k := 0
			for i := range frames {
				if k < len(kept) && kept[k].Time.Equal(frames[i].Time) && bytes.Equal(kept[k].Data, frames[i].Data) {
					want = append(want, strconv.Itoa(i+1))
					k++
				}
			}
			if k != len(kept) {
				t.Fatalf("%q: %d of tcpdump's %d frames not found in the capture", expr, len(kept)-k, len(kept))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s %q: frames %d %.80v, tcpdump %d %.80v", file, expr, len(got), got, len(want), want)
			}
		}
	}
}

// FuzzCaptureFilter: any expression is either compiled or refused with a
// position inside it; the compiler never panics the program.
func FuzzCaptureFilter(f *testing.F) {
	for _, s := range []string{"udp port 4791", "udp prot 4791", "(tcp port 20049 and host 198.51.100.1) || udp",
		"src or dst net 10.0.0.0/8", "ether src 52:54:00:12:01:02", "port 4791 or 20049", "not tcp", "udp[8] == 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		_, err := source.CompileFilter(expr)
		var fe *source.FilterError
		if errors.As(err, &fe) && (fe.Pos < 0 || fe.Pos > len(expr)) {
			t.Fatalf("%q: position %d outside the expression", expr, fe.Pos)
		}
	})
}
