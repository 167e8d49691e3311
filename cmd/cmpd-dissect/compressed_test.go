package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap/converted"
	"github.com/cmpd-dissect/cmpd-dissect/internal/torture"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

// compressedCaptures are the converted captures gzip, zstd and lz4 wrote,
// each with the one capture it was made from.
func compressedCaptures(t *testing.T) (convs, origs []string) {
	for _, tc := range converted.Captures {
		conv := filepath.Join(convertedDir, tc.File)
		f, err := source.Open(conv, nil)
		if err != nil {
			t.Fatal(err)
		}
		kind := f.Compression()
		f.Close()
		if kind == source.Uncompressed {
			continue
		}
		if len(tc.From) != 1 || !tc.SameTime {
			t.Fatalf("%s: made from %v", tc.File, tc.From)
		}
		convs = append(convs, conv)
		origs = append(origs, filepath.Join(pcaps, tc.From[0]))
	}
	if len(convs) < 7 {
		t.Fatalf("only %d compressed captures", len(convs))
	}
	return convs, origs
}

// anonymous puts CAPTURE for the paths and base names of files in out.
func anonymous(out string, files ...string) string {
	for _, f := range files {
		out = strings.ReplaceAll(out, f, "CAPTURE")
	}
	for _, f := range files {
		out = strings.ReplaceAll(out, filepath.Base(f), "CAPTURE")
	}
	return out
}

// TestCompressedCaptures: each capture gzip, zstd and lz4 wrote gives in
// the commands TestConvertedCaptures leaves out (rpc, explain, report,
// export) and from standard input what the capture it was made from
// gives; all of them read in one run are the originals read in one run.
func TestCompressedCaptures(t *testing.T) {
	convs, origs := compressedCaptures(t)
	dir := t.TempDir()
	for i, conv := range convs {
		orig := origs[i]
		same := func(what string, codeC, codeO int, outC, outO string) {
			t.Helper()
			if outC, outO = anonymous(outC, conv), anonymous(outO, orig); codeC != codeO || outC != outO {
				t.Errorf("%s %s: exit %d, want %d (as %s)\n%s\n--- want\n%s", filepath.Base(conv), what, codeC, codeO, orig, outC, outO)
			}
		}
		for _, v := range [][]string{{"rpc"}, {"rpc", "--json"}, {"explain"}, {"explain", "--json"}} {
			codeC, outC, errC := runCmd(t, append(v, conv)...)
			codeO, outO, errO := runCmd(t, append(v, orig)...)
			same(strings.Join(v, " "), codeC, codeO, outC+errC, outO+errO)
		}
		// report and export write files.
		for _, c := range []struct {
			args func(out, file string) []string
			out  string
		}{
			{func(out, file string) []string { return []string{"report", "-o", out + ".html", file} }, "report"},
			{func(out, file string) []string {
				return []string{"export", "--format", "ndjson", "--packets", "-o", out, file}
			}, "export"},
		} {
			outs := [2]string{}
			codes := [2]int{}
			for k, file := range []string{conv, orig} {
				base := filepath.Join(dir, fmt.Sprintf("%d-%s-%d", i, c.out, k))
				code, stdout, stderr := runCmd(t, c.args(base, file)...)
				codes[k] = code
				outs[k] = strings.ReplaceAll(stdout+stderr, base, "OUT")
				filepath.WalkDir(filepath.Dir(base), func(p string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() || !strings.HasPrefix(p, base) {
						return nil
					}
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					outs[k] += "\n== " + strings.TrimPrefix(p, base) + "\n" + string(b)
					return nil
				})
				if !strings.Contains(outs[k], "== ") {
					t.Fatalf("%s: %s wrote nothing", file, c.out)
				}
			}
			same(c.out, codes[0], codes[1], outs[0], outs[1])
		}
		// Standard input.
		for _, v := range [][]string{{"-r", "-", "-V"}, {"-r", "-", "-T", "json", "--all"}, {"conns", "-"}, {"stats", "-"}, {"check", "-"}} {
			bc, err := os.ReadFile(conv)
			if err != nil {
				t.Fatal(err)
			}
			bo, err := os.ReadFile(orig)
			if err != nil {
				t.Fatal(err)
			}
			codeC, outC, errC := runStdin(t, bytes.NewReader(bc), v...)
			codeO, outO, errO := runStdin(t, bytes.NewReader(bo), v...)
			outC = frameLevel.ReplaceAllString(outC, "")
			if v[0] == "stats" {
				outC, _, _ = strings.Cut(outC, "\nCapture statistics by interface")
			}
			same("stdin "+strings.Join(v, " "), codeC, codeO, outC+errC, outO+errO)
		}
	}
	// All at once, several compressions in one run.
	for _, v := range [][]string{{"conns", "--json"}, {"stats"}, {"rpc"}} {
		codeC, outC, errC := runCmd(t, append(v, convs...)...)
		codeO, outO, errO := runCmd(t, append(v, origs...)...)
		for i := range convs {
			outO = strings.ReplaceAll(outO, origs[i], convs[i])
			errO = strings.ReplaceAll(errO, origs[i], convs[i])
		}
		if v[0] == "stats" {
			outC, _, _ = strings.Cut(outC, "\nCapture statistics by interface")
		}
		if codeC != codeO || outC != outO || errC != errO {
			t.Errorf("%v of all: exit %d, want %d\n%s\n--- want\n%s\nstderr %q, want %q", v, codeC, codeO, outC, outO, errC, errO)
		}
	}
}

// TestCompressedCutCapture: a zstd, LZ4 or gzip capture cut short (the
// compressor killed, a copy of a file being written) gives what a cut
// plain capture gives: the frames before the cut, then one warning naming
// file, frame and offset (the offset of that frame in the capture), check
// failing on source.record-damaged.
func TestCompressedCutCapture(t *testing.T) {
	bulk := filepath.Join(real, "live-rxe4-nfs42-bulk.pcap")
	raw, err := os.ReadFile(bulk)
	if err != nil {
		t.Fatal(err)
	}
	zst, err := os.ReadFile(filepath.Join(convertedDir, "live-rxe4-nfs42-bulk.pcap.zst"))
	if err != nil {
		t.Fatal(err)
	}
	lz, err := os.ReadFile(filepath.Join(convertedDir, "live-siw4-nvme.pcap.lz4"))
	if err != nil {
		t.Fatal(err)
	}
	warning := regexp.MustCompile(`^cmpd-dissect: warning: (.*) appears to have been cut short in the middle of a packet \(frame (\d+), at byte offset (\d+): .*\)\n$`)
	for _, tc := range []struct {
		name string
		data []byte
		from string
	}{
		{"bulk.pcap.gz", torture.Gzip(raw), bulk},
		{"bulk.pcap.zst", zst, bulk},
		{"nvme.pcap.lz4", lz, filepath.Join(real, "live-siw4-nvme.pcap")},
	} {
		whole := testcap.Frames(t, tc.from)
		path := writeTemp(t, tc.name, tc.data[:len(tc.data)*3/4])
		code, out, stderr := runCmd(t, "-r", path, "--all")
		m := warning.FindStringSubmatch(stderr)
		if code != 0 || m == nil || m[1] != path {
			t.Fatalf("%s: exit %d, stderr %q", tc.name, code, stderr)
		}
		var frame int
		var off int64
		fmt.Sscan(m[2], &frame)
		fmt.Sscan(m[3], &off)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if frame < 2 || frame > len(whole) || off != whole[frame-1].Offset || len(lines) != frame ||
			!strings.Contains(lines[frame-1], "source.record-damaged") || strings.Contains(lines[frame-2], "source.record-damaged") {
			t.Fatalf("%s: warning at frame %d offset %d (that frame's offset is %d), %d lines:\n%s", tc.name, frame, off, whole[frame-1].Offset, len(lines), out)
		}
		// The good frames read as in the whole capture.
		_, part, _ := runCmd(t, "-r", path, "--all", "-Y", fmt.Sprintf("frame.number < %d", frame))
		_, full, _ := runCmd(t, "-r", tc.from, "--all", "-Y", fmt.Sprintf("frame.number < %d", frame))
		if part != full {
			t.Fatalf("%s: the frames before the cut differ:\n%s\n--- want\n%s", tc.name, part, full)
		}
		if code, out, stderr := runCmd(t, "check", path); code != 1 || !strings.Contains(out, "source.record-damaged") || !warning.MatchString(stderr) {
			t.Fatalf("%s: check exit %d\n%s\nstderr %q", tc.name, code, out, stderr)
		}
		if code, _, stderr := runCmd(t, "conns", path); code != 0 || !warning.MatchString(stderr) {
			t.Fatalf("%s: conns exit %d, stderr %q", tc.name, code, stderr)
		}
	}
}
