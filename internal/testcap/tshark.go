package testcap

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/field"
)

// TsharkValues is a field.Visitor that records each field's values as
// "tshark -T fields" prints them (integers in decimal, hex fields as 0x and
// the field's width in digits, bytes in plain hex), to compare a decode
// with tshark's on the same capture.
type TsharkValues map[string][]string

func (c TsharkValues) add(f *field.Field, v string) { c[f.Name] = append(c[f.Name], v) }

func (c TsharkValues) Uint(f *field.Field, v uint64) {
	if f.Kind == field.KindHex {
		c.add(f, fmt.Sprintf("0x%0*x", f.Bits/4, v))
		return
	}
	c.add(f, fmt.Sprint(v))
}
func (c TsharkValues) Int(f *field.Field, v int64)       { c.add(f, fmt.Sprint(v)) }
func (c TsharkValues) Bool(f *field.Field, v bool)       { c.add(f, fmt.Sprint(v)) }
func (c TsharkValues) String(f *field.Field, v string)   { c.add(f, v) }
func (c TsharkValues) Bytes(f *field.Field, v []byte)    { c.add(f, fmt.Sprintf("%x", v)) }
func (c TsharkValues) Addr(f *field.Field, v netip.Addr) { c.add(f, v.String()) }
func (c TsharkValues) Begin(*field.Field)                {}
func (c TsharkValues) End()                              {}

// Get is the field's values joined with "," as tshark joins repeated
// values.
func (c TsharkValues) Get(name string) string { return strings.Join(c[name], ",") }

// Undouble undoes tshark's repetition of the RPC and NFS fields when it
// decodes one message k times (the reduced Send, then again with the data
// RDMA moved placed): "a,b,a,b" with k = 2 becomes "a,b". A value that is
// not k repetitions of one part is returned as it is.
func Undouble(v string, k int) string {
	if k < 2 || v == "" {
		return v
	}
	parts := strings.Split(v, ",")
	if len(parts)%k != 0 {
		return v
	}
	n := len(parts) / k
	for i := n; i < len(parts); i++ {
		if parts[i] != parts[i%n] {
			return v
		}
	}
	return strings.Join(parts[:n], ",")
}

// TsharkFields runs "tshark -r path -T fields" with the display filter
// (none when "") and the fields, and returns its lines split at the tabs,
// empty lines left out. It skips t when tshark is not installed.
//
// NVMe/TCP is turned off: its dissector claims TCP port 4420, where the
// captures hold NVMe-oF over iWARP (live-siw4-nvme.pcap), and tshark's MPA
// heuristic never sees those segments.
func TsharkFields(t testing.TB, path, filter string, fields ...string) [][]string {
	t.Helper()
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: the comparison with Wireshark is skipped (apt-get install tshark; .ci/run installs it)")
	}
	args := []string{"--disable-protocol", "nvme-tcp", "-r", path, "-T", "fields"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	var rows [][]string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			rows = append(rows, strings.Split(l, "\t"))
		}
	}
	return rows
}

// TsharkByFrame is TsharkFields with frame.number first: the other columns
// of each row by its frame number.
func TsharkByFrame(t testing.TB, path, filter string, fields ...string) map[int][]string {
	t.Helper()
	byFrame := map[int][]string{}
	for _, row := range TsharkFields(t, path, filter, append([]string{"frame.number"}, fields...)...) {
		n, err := strconv.Atoi(row[0])
		if err != nil {
			t.Fatalf("tshark row %q: no frame number", row)
		}
		byFrame[n] = row[1:]
	}
	return byFrame
}
