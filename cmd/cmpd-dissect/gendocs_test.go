package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/internal/gendocs"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

// The tests generate the pages as "make man" (go run -tags gendocs) does.
func init() { genDocs = gendocs.Generate }

// TestDocsInSync regenerates the man pages and completion scripts into a
// temporary directory and compares them with the committed ones: a
// command, flag or help text changed without "make man" fails here.
func TestDocsInSync(t *testing.T) {
	tmp := t.TempDir()
	var stderr bytes.Buffer
	if code := run([]string{"gen-docs", "--man", filepath.Join(tmp, "man"), "--completions", filepath.Join(tmp, "completions")},
		strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("gen-docs: exit %d: %s", code, stderr.String())
	}
	for _, d := range []struct{ gen, committed string }{
		{filepath.Join(tmp, "man"), filepath.Join(testcap.Root(), gendocs.ManDir)},
		{filepath.Join(tmp, "completions"), filepath.Join(testcap.Root(), gendocs.CompletionsDir)},
	} {
		want := readDir(t, d.gen)
		got := readDir(t, d.committed)
		if len(want) < 3 {
			t.Fatalf("%s: only %d files generated", d.gen, len(want))
		}
		for name, w := range want {
			g, ok := got[name]
			switch {
			case !ok:
				t.Errorf("%s/%s is missing: run make man", d.committed, name)
			case !bytes.Equal(g, w):
				t.Errorf("%s/%s differs from what the commands generate: run make man", d.committed, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s/%s is no longer generated (a removed command?): run make man", d.committed, name)
			}
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string][]byte, len(ents))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}
