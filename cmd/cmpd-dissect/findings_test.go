package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/expect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/catalog"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
)

func TestFindingsCommand(t *testing.T) {
	all := catalog.All()
	code, out, errOut := runCmd(t, "findings", "--json")
	if code != exitOK {
		t.Fatalf("findings --json: exit %d: %s", code, errOut)
	}
	var got []finding.Entry
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("findings --json is not a JSON array of entries: %v", err)
	}
	if len(got) != len(all) {
		t.Fatalf("findings --json lists %d codes, the catalogue has %d", len(got), len(all))
	}
	for i, e := range got {
		if e != all[i] {
			t.Errorf("entry %d: %+v, want %+v", i, e, all[i])
		}
	}

	if code, out, errOut = runCmd(t, "findings"); code != exitOK {
		t.Fatalf("findings: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(all)+1 || !strings.HasPrefix(lines[0], "CODE") {
		t.Fatalf("findings: %d lines, want a header and %d codes", len(lines), len(all))
	}
	for i, e := range all {
		if f := strings.Fields(lines[i+1]); len(f) < 3 || f[0] != e.Code || f[1] != e.Severity.String() {
			t.Errorf("findings line %d: %q, want %s %s …", i+2, lines[i+1], e.Code, e.Severity)
		}
	}

	if code, _, _ := runCmd(t, "findings", "--json", "--markdown"); code != exitUsage {
		t.Errorf("findings --json --markdown: exit %d, want %d", code, exitUsage)
	}
}

// TestExpectationExamples parses the expectation files users are shown
// (check --help, docs/expectations.md) and the ones under testdata/expect,
// and checks the codes they allow are catalogued.
func TestExpectationExamples(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join(testcap.Root(), "docs", "expectations.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(docs, -1)
	if len(blocks) == 0 {
		t.Fatal("docs/expectations.md has no yaml example")
	}
	files := map[string][]byte{"check --help": []byte(strings.ReplaceAll(expectExample, "\n    ", "\n")[4:])}
	for i, b := range blocks {
		files["docs/expectations.md block "+string(rune('1'+i))] = b[1]
	}
	paths := testcap.Glob(t, "expect/*.yaml")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = data
	}
	known := map[string]bool{}
	for _, e := range catalog.All() {
		known[e.Code] = true
	}
	for name, data := range files {
		e, err := expect.Parse(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		codes := append([]string(nil), e.AllowedFindings...)
		for _, c := range e.Connections {
			codes = append(codes, c.AllowedFindings...)
		}
		for _, c := range codes {
			if !known[c] {
				t.Errorf("%s allows %s, which is not a finding code (cmpd-dissect findings)", name, c)
			}
		}
	}
}
