package catalog

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/finding"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/torture"
	"github.com/cmpd-dissect/cmpd-dissect/pvtdata"
	"github.com/cmpd-dissect/cmpd-dissect/source"
)

const module = "github.com/cmpd-dissect/cmpd-dissect"

var root = testcap.Root()

var codePattern = regexp.MustCompile(`^[a-z][a-z0-9]*\.[a-z0-9]+(-[a-z0-9]+)*$`)

func TestCatalogEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range All() {
		if seen[e.Code] {
			t.Errorf("%s is catalogued twice", e.Code)
		}
		seen[e.Code] = true
		if !codePattern.MatchString(e.Code) {
			t.Errorf("code %q is not of the form layer.words-with-dashes", e.Code)
		}
		if e.Severity < finding.SeverityInfo || e.Severity > finding.SeverityError {
			t.Errorf("%s: severity %v", e.Code, e.Severity)
		}
		if e.Summary == "" || strings.ContainsAny(e.Summary+e.Remedy+e.Section, "\n|") {
			t.Errorf("%s: summary, remedy and section must be one line without '|' (summary %q)", e.Code, e.Summary)
		}
	}
}

// TestDocsUpToDate fails when docs/findings.md is not what the catalogue
// generates.
func TestDocsUpToDate(t *testing.T) {
	var want bytes.Buffer
	if err := WriteMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs", "findings.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("docs/findings.md differs from the catalogue: run \"make docs\"")
	}
}

// source code facts the static checks work from.
type codeConst struct {
	dir, name, value string
	pos              token.Position
	raised           int // references that are not comparisons
}

type scan struct {
	fset   *token.FileSet
	consts map[string]*codeConst // "dir.Name"
	// adds are the Catalog.Add calls that declare a Code variable.
	adds map[ast.Node]bool
	// constCodes are finding codes declared as constants, outside the
	// catalogue.
	constCodes []codeConst
	files      []scannedFile
}

type scannedFile struct {
	dir     string
	name    string
	f       *ast.File
	imports map[string]string // local name → directory below the module ("finding", "layers/ibcm"), or the import path outside it
}

// scanSources parses every non-test Go file of the module.
func scanSources(t *testing.T) *scan {
	t.Helper()
	s := &scan{fset: token.NewFileSet(), consts: map[string]*codeConst{}, adds: map[ast.Node]bool{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "live") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(s.fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		sf := scannedFile{dir: filepath.ToSlash(rel), name: filepath.Base(p), f: f, imports: map[string]string{}}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			name := path.Base(ip)
			if im.Name != nil {
				name = im.Name.Name
			}
			sf.imports[name] = strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
		}
		s.files = append(s.files, sf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, sf := range s.files {
		s.collectDecls(sf)
	}
	return s
}

var codeConstName = regexp.MustCompile(`^[Cc]ode[A-Z0-9]`)

// notFindings are the packages whose Code constants name something other
// than findings: explain's name the statements of its report (Item.Code).
var notFindings = map[string]bool{"explain": true}

// collectDecls records sf's Code variables: CodeX = Catalog.Add("layer.x", …).
func (s *scan) collectDecls(sf scannedFile) {
	for _, decl := range sf.f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for i, n := range vs.Names {
				if !codeConstName.MatchString(n.Name) || i >= len(vs.Values) {
					continue
				}
				pos := s.fset.Position(n.Pos())
				if v, ok := catalogAdd(vs.Values[i]); ok && gd.Tok == token.VAR {
					s.consts[sf.dir+"."+n.Name] = &codeConst{dir: sf.dir, name: n.Name, value: v, pos: pos}
					s.adds[vs.Values[i]] = true
				} else if v, ok := stringLit(vs.Values[i]); ok && gd.Tok == token.CONST && !notFindings[sf.dir] && strings.Contains(v, ".") {
					s.constCodes = append(s.constCodes, codeConst{dir: sf.dir, name: n.Name, value: v, pos: pos})
				}
			}
		}
	}
}

// catalogAdd returns the code of a Catalog.Add("layer.x", …) call.
func catalogAdd(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || !isCatalogAdd(call) || len(call.Args) == 0 {
		return "", false
	}
	return stringLit(call.Args[0])
}

func isCatalogAdd(call *ast.CallExpr) bool {
	se, ok := call.Fun.(*ast.SelectorExpr)
	return ok && isIdent(se.X, "Catalog") && se.Sel.Name == "Add"
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(bl.Value)
	return v, err == nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// codeRef resolves e to the Code constant it names, if any.
func (s *scan) codeRef(sf scannedFile, e ast.Expr) *codeConst {
	switch e := e.(type) {
	case *ast.Ident:
		return s.consts[sf.dir+"."+e.Name]
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if dir, ok := sf.imports[x.Name]; ok {
				return s.consts[dir+"."+e.Sel.Name]
			}
		}
	}
	return nil
}

// severityRef resolves e when it is finding.SeverityX.
func (s *scan) severityRef(sf scannedFile, e ast.Expr) (finding.Severity, bool) {
	se, ok := e.(*ast.SelectorExpr)
	if !ok {
		return 0, false
	}
	x, ok := se.X.(*ast.Ident)
	if !ok || sf.imports[x.Name] != "finding" || !strings.HasPrefix(se.Sel.Name, "Severity") {
		return 0, false
	}
	sev, err := finding.ParseSeverity(strings.ToLower(strings.TrimPrefix(se.Sel.Name, "Severity")))
	return sev, err == nil
}

// isFindingLit reports whether cl is a finding.Finding literal.
func (s *scan) isFindingLit(sf scannedFile, cl *ast.CompositeLit) bool {
	switch t := cl.Type.(type) {
	case *ast.SelectorExpr:
		x, ok := t.X.(*ast.Ident)
		return ok && sf.imports[x.Name] == "finding" && t.Sel.Name == "Finding"
	case *ast.Ident:
		return sf.dir == "finding" && t.Name == "Finding"
	}
	return false
}

// TestCodesDeclaredOnce checks the sources: every finding code is a Code
// variable declared by Catalog.Add in its package's codes.go, so its name,
// value and catalogue entry are one declaration; the whole catalogue is
// exactly those variables; every one is raised somewhere; a finding literal
// names no code outside the catalogue; and no code is raised with a severity
// other than its catalogue entry's where the source says both.
func TestCodesDeclaredOnce(t *testing.T) {
	s := scanSources(t)
	cat := map[string]finding.Entry{}
	for _, e := range All() {
		cat[e.Code] = e
	}
	if len(s.consts) == 0 {
		t.Fatal("no Code variables found: is the source scan broken?")
	}
	for _, c := range s.constCodes {
		t.Errorf("%s: %s = %q: declare finding codes as %s = Catalog.Add(%q, …) in the package's codes.go", c.pos, c.name, c.value, c.name, c.value)
	}

	declared := map[string]bool{}
	for _, c := range s.consts {
		declared[c.value] = true
		if filepath.Base(c.pos.Filename) != "codes.go" {
			t.Errorf("%s: %s = %q: declare finding codes in the package's codes.go", c.pos, c.name, c.value)
		}
		if _, ok := cat[c.value]; !ok {
			t.Errorf("%s: %s = %q is not in the catalogue: list the package's Catalog in Groups", c.pos, c.name, c.value)
		}
	}
	for code := range cat {
		if !declared[code] {
			t.Errorf("catalogue entry %s: no Code variable declares it", code)
		}
	}

	for _, sf := range s.files {
		s.checkUses(t, sf, cat)
	}
	var unraised []string
	for _, c := range s.consts {
		if c.raised == 0 {
			unraised = append(unraised, c.dir+"."+c.name)
		}
	}
	sort.Strings(unraised)
	for _, n := range unraised {
		t.Errorf("%s is declared but nothing raises it: remove it and its catalogue entry", n)
	}
}

// checkUses counts the references that raise each constant (all but
// comparisons and case labels, outside codes.go) and checks finding
// literals and the severities given with a code.
func (s *scan) checkUses(t *testing.T, sf scannedFile, cat map[string]finding.Entry) {
	t.Helper()
	checkSev := func(c *codeConst, sev finding.Severity, at token.Pos) {
		if e, ok := cat[c.value]; ok && sev != e.Severity {
			t.Errorf("%s: %s raised as %v, its catalogue severity is %v", s.fset.Position(at), c.value, sev, e.Severity)
		}
	}
	skip := map[ast.Node]bool{} // references that do not raise
	var visit func(ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			if sf.name == "codes.go" {
				return false
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				skip[n.X], skip[n.Y] = true, true
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				skip[e] = true
			}
		case *ast.CallExpr:
			if isCatalogAdd(n) && !s.adds[n] {
				t.Errorf("%s: Catalog.Add outside a Code variable of codes.go: the entry has no name to raise it by", s.fset.Position(n.Pos()))
			}
			var codes []*codeConst
			var sevs []finding.Severity
			for _, a := range n.Args {
				if c := s.codeRef(sf, a); c != nil {
					codes = append(codes, c)
				} else if sev, ok := s.severityRef(sf, a); ok {
					sevs = append(sevs, sev)
				}
			}
			if len(codes) == 1 && len(sevs) == 1 {
				checkSev(codes[0], sevs[0], n.Pos())
			}
		case *ast.CompositeLit:
			if !s.isFindingLit(sf, n) {
				break
			}
			var code *codeConst
			var sev finding.Severity
			for _, elt := range n.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				switch {
				case isIdent(kv.Key, "Code"):
					if v, ok := stringLit(kv.Value); ok {
						if _, ok := cat[v]; !ok {
							t.Errorf("%s: finding code %q is not in the catalogue", s.fset.Position(kv.Pos()), v)
						} else {
							t.Errorf("%s: finding code %q written as a string: use its Code constant", s.fset.Position(kv.Pos()), v)
						}
					}
					code = s.codeRef(sf, kv.Value)
				case isIdent(kv.Key, "Severity"):
					sev, _ = s.severityRef(sf, kv.Value)
				}
			}
			if code != nil && sev != 0 {
				checkSev(code, sev, n.Pos())
			}
		case *ast.Ident:
			if c := s.codeRef(sf, n); c != nil && !skip[n] && sf.name != "codes.go" {
				c.raised++
			}
		case *ast.SelectorExpr:
			if c := s.codeRef(sf, n); c != nil {
				if !skip[n] && sf.name != "codes.go" {
					c.raised++
				}
			} else {
				ast.Inspect(n.X, visit) // not n.Sel: a field or method, not a constant
			}
			return false
		}
		return true
	}
	ast.Inspect(sf.f, visit)
}

// severityCheck records the codes raised and reports each finding whose
// code is not catalogued or is raised with a severity other than its
// catalogue entry's: a code has one severity.
type severityCheck struct {
	t    *testing.T
	cat  map[string]finding.Entry
	seen map[string]bool
}

func newSeverityCheck(t *testing.T) *severityCheck {
	c := &severityCheck{t: t, cat: map[string]finding.Entry{}, seen: map[string]bool{}}
	for _, e := range All() {
		c.cat[e.Code] = e
	}
	return c
}

func (c *severityCheck) check(input, code string, sev finding.Severity) {
	c.t.Helper()
	c.seen[code] = true
	e, ok := c.cat[code]
	switch {
	case !ok:
		c.t.Errorf("%s: finding code %s is not in the catalogue", input, code)
	case sev != e.Severity:
		c.t.Errorf("%s: %s raised as %v, its catalogue severity is %v", input, code, sev, e.Severity)
	}
}

// file dissects and tracks the capture at path, in every reader mode, and
// checks every finding raised: on the records, the trackers and their
// connections. It returns the dissection's error.
func (c *severityCheck) file(input, path string) error {
	c.t.Helper()
	trackers := make([]*conn.Tracker, len(pvtdata.Modes))
	for i, m := range pvtdata.Modes {
		trackers[i] = conn.New(conn.Config{Mode: m})
	}
	src, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		return err
	}
	err = dissect.New(dissect.Options{}).Run(src, func(r *dissect.Record) error {
		for _, f := range r.Findings {
			c.check(input, f.Code, f.Severity)
		}
		for _, tr := range trackers {
			tr.Record(r)
		}
		return nil
	})
	src.Close()
	for _, tr := range trackers {
		tr.Finish()
		for _, f := range tr.Findings() {
			c.check(input, f.Code, f.Severity)
		}
		for _, cn := range tr.Connections() {
			for _, f := range cn.Findings() {
				c.check(input, f.Code, f.Severity)
			}
			for _, n := range cn.FindingCounts {
				c.check(input, n.Code, n.Severity)
			}
		}
	}
	return err
}

// captureFiles lists the captures under testdata/pcaps.
func captureFiles(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir(testcap.Path("pcaps"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".pcap", ".pcapng", ".erf", ".gz", ".zst", ".lz4":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no captures under testdata/pcaps")
	}
	return files
}

// TestCapturesRaiseCataloguedCodes dissects and tracks every capture under
// testdata/pcaps, in every reader mode, and checks each finding's code is
// catalogued with the severity raised.
func TestCapturesRaiseCataloguedCodes(t *testing.T) {
	c := newSeverityCheck(t)
	files := captureFiles(t)
	for _, file := range files {
		name, _ := filepath.Rel(root, file)
		if err := c.file(name, file); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if len(c.seen) == 0 {
		t.Fatal("no finding raised by any capture: is the pipeline wired?")
	}
	t.Logf("%d captures raise %d of the %d catalogued codes", len(files), len(c.seen), len(c.cat))
}

// TestMutantsRaiseCataloguedCodes does the same over the hostile-input
// harness's damaged copies of every capture (a sample of each one's
// mutants: flipped octets, lying lengths, truncations, reordered, dropped
// and duplicated packets), where the decoders' rarer findings are raised.
func TestMutantsRaiseCataloguedCodes(t *testing.T) {
	perCapture := 40
	if testing.Short() {
		perCapture = 5
	}
	c := newSeverityCheck(t)
	mpath := filepath.Join(t.TempDir(), "mutant")
	inputs := 0
	for _, file := range captureFiles(t) {
		capt, _, err := torture.ReadFile(file)
		if err != nil {
			continue // a format the harness does not rewrite (ERF, zstd, lz4)
		}
		plan := torture.Plan(capt, torture.Options{Seed: 1, Repeat: 200})
		for _, m := range torture.Sample(plan, perCapture, 1) {
			if m.Large {
				continue
			}
			if err := os.WriteFile(mpath, m.Build(), 0o644); err != nil {
				t.Fatal(err)
			}
			c.file(m.Name, mpath) // damaged files may end in an error: their findings count
			inputs++
		}
	}
	if inputs == 0 || len(c.seen) == 0 {
		t.Fatal("no mutant dissected: is the harness wired?")
	}
	t.Logf("%d mutants raise %d of the %d catalogued codes", inputs, len(c.seen), len(c.cat))
}
