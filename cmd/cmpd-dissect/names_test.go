package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNameResolution: on pcapng files tshark wrote with a Name Resolution
// Block (testdata/pcaps/converted/PROVENANCE.md), -N n names the
// addresses in the summary and in ip.src_host, ip.dst_host and ip.host as
// tshark -2 -N n does (tshark writes the block after the packets, so its
// one pass knows the names only after them; -2's first pass, like ours,
// reads them first). Without -N n, or with -n alone, the addresses stay
// and ip.src_host is the address, as tshark gives it.
func TestNameResolution(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	// No hosts file of the user's: the names are the capture's.
	t.Setenv("WIRESHARK_CONFIG_DIR", t.TempDir())
	tshark := func(args ...string) []string {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("tshark %v: %v", args, err)
		}
		return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	}
	fields := []string{"-T", "fields", "-e", "frame.number", "-e", "ip.src", "-e", "ip.src_host", "-e", "ip.dst_host", "-e", "ip.host"}
	for _, tc := range []struct{ file, client, server string }{
		{"live-rxe4-rfc8797.tshark-nrb.pcapng", "nfs-client.lab", "nfs-server.lab"},
		{"live-siw4-rfc8797.tshark-nrb.pcapng", "siw-client.lab", "siw-server.lab"},
	} {
		file := filepath.Join(convertedDir, tc.file)
		for _, naming := range [][]string{{"-N", "n"}, nil, {"-n"}, {"-n", "-N", "n"}} {
			want := tshark(append(append([]string{"-2", "-r", file}, naming...), fields...)...)
			_, out, _ := runCmd(t, append(append([]string{"--all", "-r", file}, naming...), fields...)...)
			if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %v: fields\n%s\n--- tshark\n%s", tc.file, naming, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The summary's source and destination columns.
			resolved := len(naming) > 0 && naming[len(naming)-1] == "n"
			_, out, _ = runCmd(t, append([]string{"--all", "-r", file}, naming...)...)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			tl := tshark(append([]string{"-2", "-r", file}, naming...)...)
			if len(lines) != len(tl) {
				t.Fatalf("%s %v: %d lines, tshark %d", tc.file, naming, len(lines), len(tl))
			}
			for i := range lines {
				g, w := strings.Fields(lines[i]), strings.Fields(tl[i])
				if g[2] != w[2] || g[4] != w[4] {
					t.Errorf("%s %v frame %d: %s → %s, tshark %s → %s", tc.file, naming, i+1, g[2], g[4], w[2], w[4])
				}
				if named := g[2] == tc.client || g[2] == tc.server; named != resolved {
					t.Errorf("%s %v frame %d: source %s", tc.file, naming, i+1, g[2])
				}
			}
		}
	}
	// A filter on a host name needs no -e to report the field.
	_, out, _ := runCmd(t, "-N", "n", "-r", filepath.Join(convertedDir, "live-rxe4-rfc8797.tshark-nrb.pcapng"), "-T", "fields",
		"-e", "frame.number", "-Y", `ip.src_host == "nfs-server.lab"`)
	if out != "2\n5\n" {
		t.Errorf("-Y ip.src_host: frames %q, want 2 and 5", out)
	}
	if code, _, stderr := runCmd(t, "-N", "nx", "-r", filepath.Join(convertedDir, "live-rxe4-rfc8797.tshark-nrb.pcapng")); code != 2 ||
		!strings.Contains(stderr, "'x' is not a name resolution flag") {
		t.Errorf("-N nx: exit %d, stderr %q", code, stderr)
	}
}
