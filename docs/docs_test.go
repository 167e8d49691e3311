// Package docs holds the project's prose; its test keeps the prose honest
// about the code: the architecture's package table names exactly the
// packages there are, README stays a newcomer's page, and no link is broken.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository, one directory up from this package.
const root = ".."

// packageRow is a row of architecture.md's package table: its first cell
// names a package directory in backquotes.
var packageRow = regexp.MustCompile("(?m)^\\| `([a-z0-9_./-]+?)/?` \\|")

// goPackages lists the directories below root that hold non-test Go files,
// relative to root, leaving out test data and the lab's scratch space.
func goPackages(t *testing.T) map[string]bool {
	t.Helper()
	pkgs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "work":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// The package table of architecture.md names every package, and only
// packages that exist: a package moved, renamed or added without the
// document following fails here.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range packageRow.FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	if len(named) == 0 {
		t.Fatal("architecture.md has no package table rows (| `path` | … |)")
	}
	pkgs := goPackages(t)
	var missing, gone []string
	for p := range pkgs {
		if !named[p] {
			missing = append(missing, p)
		}
	}
	for p := range named {
		if st, err := os.Stat(filepath.Join(root, p)); err != nil || !st.IsDir() {
			gone = append(gone, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(gone)
	if len(missing) > 0 {
		t.Errorf("packages without a row in docs/architecture.md's table: %v", missing)
	}
	if len(gone) > 0 {
		t.Errorf("docs/architecture.md names directories that do not exist: %v", gone)
	}
}

// README is the page a newcomer reads first: it starts with the two
// set-up commands and stays short (the details live under docs/).
func TestReadmeShape(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; keep it at 200 or fewer and move details to docs/", len(lines))
	}
	head := strings.Join(lines[:min(len(lines), 8)], "\n")
	for _, cmd := range []string{"make demo", "make test"} {
		if !strings.Contains(head, cmd) {
			t.Errorf("README.md does not start with %q", cmd)
		}
	}
}

// markdownLink is an inline link or image whose target is a relative path.
var markdownLink = regexp.MustCompile(`\]\(([^)#\s:]+)(#[^)]*)?\)`)

// Every relative link in README.md and docs/*.md points at a file that
// exists.
func TestLinksResolve(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(b), -1) {
			target := filepath.Join(filepath.Dir(f), m[1])
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}
