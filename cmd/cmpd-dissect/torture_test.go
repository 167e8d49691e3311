package main

// The torture harness (issue 9, make torture): every committed capture is
// damaged thousands of ways by package torture, and every view of the real
// command runs on each damaged capture in-process, through run(). A run
// fails on a panic, on running past its time bound, on heap growth past its
// memory bound, on a good frame before the damage that is missing from the
// output (or changed), on text output that could drive a terminal, and on
// JSON output that is not valid UTF-8 JSON.
//
// Environment: CMPD_TORTURE_N mutants per capture (default 1 under plain
// go test, which make test runs with -race; make torture sets 10; 0 means
// every mutant of the plan),
// CMPD_TORTURE_SEED (default 1), CMPD_TORTURE_REPEAT how often the repeat
// mutant repeats its packet in the bundled kernel NFS captures
// (rxe-nfs42-rdma.pcap, siw-nfs42-rdma.pcap), where it always runs
// (default 2000 under plain go test; make torture uses 100000; other
// captures use at most 1000),
// CMPD_TORTURE_TIMEOUT per-run time bound (default 30s; large mutants get
// 4×), CMPD_TORTURE_MEM heap growth bound in MiB (default 1024),
// CMPD_TORTURE_OUT where failing inputs are written (default a new
// temporary directory), CMPD_TORTURE_ONLY runs only mutants whose name
// contains it.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/field"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap/converted"
	"github.com/cmpd-dissect/cmpd-dissect/internal/torture"
	"github.com/cmpd-dissect/cmpd-dissect/source"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// outputMode says how a view's stdout is checked.
type outputMode int

const (
	outText      outputMode = iota // terminal-safe text
	outJSONLines                   // one valid UTF-8 JSON value per line
	outJSONDoc                     // valid UTF-8 JSON values, possibly indented
)

// tortureView is one way of running the command on a capture.
type tortureView struct {
	name string
	// args builds the command line for a capture file ("-" for stdin).
	args func(file string) []string
	out  outputMode
	// heavy: skipped for the large mutants (100k repeated packets), whose
	// output would be hundreds of MB.
	heavy bool
	// frames: stdout has one line per frame, starting with (or carrying in
	// "frame") the frame number, so lost good frames can be detected.
	frames bool
	// checkExit: exit status 1 only reports findings (check).
	checkExit bool
	// stdin: the capture is given on standard input (-r -).
	stdin bool
	// framePrefix: only lines starting with it carry a frame number,
	// right after it ("Frame 12: …" in the tree).
	framePrefix string
	// runner runs the command line (nil: run, the real command).
	runner func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// fieldNames is every declared non-group field, for a -T fields view that
// renders them all.
func fieldNames() []string {
	var out []string
	for _, p := range field.Protos() {
		for _, f := range p.Fields {
			if f.Kind != field.KindGroup {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

// discoverViews lists the views this build of the command has, and says
// which expected ones are missing (their commands or flags not written
// yet): those are skipped, never failed.
func discoverViews() (views []tortureView, missing []string) {
	root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
	hasFlag := func(c *cobra.Command, name string) bool {
		if c == nil {
			return false
		}
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags(), c.InheritedFlags()} {
			if fs.Lookup(name) != nil || (len(name) == 1 && fs.ShorthandLookup(name) != nil) {
				return true
			}
		}
		return false
	}
	sub := func(name string) *cobra.Command {
		for _, c := range root.Commands() {
			if c.Name() == name {
				return c
			}
		}
		return nil
	}
	want := func(ok bool, what string, v tortureView) {
		if ok {
			views = append(views, v)
		} else {
			missing = append(missing, what)
		}
	}
	r := hasFlag(root, "r")
	want(r, "-r (packet summary)", tortureView{name: "summary", frames: true,
		args: func(f string) []string { return []string{"-r", f} }})
	want(r && hasFlag(root, "all"), "-r --all", tortureView{name: "summary-all", heavy: true, frames: true,
		args: func(f string) []string { return []string{"-r", f, "--all"} }})
	want(r && hasFlag(root, "V"), "-V (tree)", tortureView{name: "tree", heavy: true, frames: true, framePrefix: "Frame ",
		args: func(f string) []string { return []string{"-r", f, "-V"} }})
	want(r && hasFlag(root, "T"), "-T json", tortureView{name: "json", out: outJSONLines, frames: true,
		args: func(f string) []string { return []string{"-r", f, "-T", "json"} }})
	want(r && hasFlag(root, "T") && hasFlag(root, "e"), "-T fields", tortureView{name: "fields", frames: true, stdin: true,
		args: func(f string) []string { return []string{"-r", f, "-T", "fields", "-e", "frame.number"} }})
	if r && hasFlag(root, "T") && hasFlag(root, "e") {
		names := fieldNames()
		views = append(views, tortureView{name: "fields-all", heavy: true, frames: true,
			args: func(f string) []string {
				a := []string{"-r", f, "-T", "fields", "-e", "frame.number"}
				for _, n := range names {
					if n != "frame.number" {
						a = append(a, "-e", n)
					}
				}
				return a
			}})
	}
	// A filter over the RDMA protocols registered so far, evaluated on
	// damaged fields too.
	var terms []string
	for _, p := range []string{"cm", "mpa", "rpcrdma", "rpc", "ddp"} {
		if _, ok := field.LookupProto(p); ok {
			terms = append(terms, p)
		}
	}
	if _, ok := field.LookupProto("bth"); ok {
		terms = append(terms, "not bth")
	}
	if _, ok := field.Lookup("frame.len"); ok {
		terms = append(terms, "(frame.len > 100 and frame.len <= 0x200)")
	}
	expr := strings.Join(terms, " or ")
	want(r && hasFlag(root, "Y") && expr != "", "-Y (display filter)", tortureView{name: "filter", heavy: true, frames: true,
		args: func(f string) []string { return []string{"-r", f, "-Y", expr} }})
	st := sub("stats")
	want(st != nil, "stats", tortureView{name: "stats",
		args: func(f string) []string { return []string{"stats", f} }})
	want(hasFlag(st, "json"), "stats --json", tortureView{name: "stats-json", heavy: true, out: outJSONDoc,
		args: func(f string) []string { return []string{"stats", "--json", f} }})
	cn := sub("conns")
	want(cn != nil, "conns", tortureView{name: "conns", heavy: true,
		args: func(f string) []string { return []string{"conns", f} }})
	want(hasFlag(cn, "json"), "conns --json", tortureView{name: "conns-json", out: outJSONLines,
		args: func(f string) []string { return []string{"conns", "--json", f} }})
	want(hasFlag(cn, "V"), "conns -V", tortureView{name: "conns-ladder", heavy: true,
		args: func(f string) []string { return []string{"conns", "-V", f} }})
	ck := sub("check")
	want(ck != nil, "check", tortureView{name: "check", heavy: true, checkExit: true,
		args: func(f string) []string { return []string{"check", f} }})
	want(hasFlag(ck, "format"), "check --format json", tortureView{name: "check-json", heavy: true, checkExit: true, out: outJSONDoc,
		args: func(f string) []string { return []string{"check", "--format", "json", f} }})
	// JUnit XML: XML 1.0 cannot carry control characters even escaped, so
	// the text check (no control characters) is the XML one too.
	want(hasFlag(ck, "format"), "check --format junit", tortureView{name: "check-junit", heavy: true, checkExit: true,
		args: func(f string) []string { return []string{"check", "--format", "junit", f} }})
	return views, missing
}

// runResult is what one in-process run produced.
type runResult struct {
	code     int
	stdout   *checkedWriter
	stderr   *checkedWriter
	panicked any
	stack    []byte
	elapsed  time.Duration
	timedOut bool
	memOver  bool
	peakHeap uint64
}

// checkedWriter checks output as it streams (so a 100k-frame run needs no
// 100k-frame buffer): each complete line is checked for terminal safety or
// JSON validity, frame lines are kept (all, or those below keepBelow),
// and the first few MiB are kept for messages.
type checkedWriter struct {
	// path is the capture's file name, replaced by FILE in kept frame
	// lines so runs on different files compare.
	path      string
	prefix    string // framePrefix of the view
	mode      outputMode
	frames    bool
	keepBelow int // keep frame lines with numbers below this (0: all)
	partial   []byte
	head      []byte
	doc       []byte // whole output for outJSONDoc (bounded)
	n         int64
	lines     int
	err       error
	frameLine map[int]string
}

const headMax = 1 << 20

func newCheckedWriter(mode outputMode, frames bool, keepBelow int) *checkedWriter {
	return &checkedWriter{mode: mode, frames: frames, keepBelow: keepBelow, frameLine: map[int]string{}}
}

func (w *checkedWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.n += int64(n)
	if len(w.head) < headMax {
		w.head = append(w.head, p[:min(len(p), headMax-len(w.head))]...)
	}
	if w.mode == outJSONDoc {
		if len(w.doc) < 64<<20 {
			w.doc = append(w.doc, p...)
		}
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			break
		}
		line := p[:i]
		if len(w.partial) > 0 {
			line = append(w.partial, line...)
		}
		w.line(line)
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (w *checkedWriter) line(line []byte) {
	w.lines++
	if w.err == nil {
		var err error
		if w.mode == outJSONLines {
			err = torture.CheckJSONLines(line)
		} else {
			err = torture.CheckTerminalSafe(line)
		}
		if err != nil {
			w.err = fmt.Errorf("output line %d: %v", w.lines, err)
		}
	}
	if w.frames && w.prefix != "" {
		if !bytes.HasPrefix(line, []byte(w.prefix)) {
			return
		}
		line = line[len(w.prefix):]
	}
	if w.frames {
		// Fast path for JSON lines ({"frame":N,…}): no full decode.
		if n, ok := leadingFrame(line); ok && w.keepBelow != 0 && n >= w.keepBelow {
			return
		}
		if w.path != "" && w.path != "-" {
			line = bytes.ReplaceAll(line, []byte(w.path), []byte("FILE"))
		}
		for n, l := range torture.FrameLines(line) {
			if w.keepBelow == 0 || n < w.keepBelow {
				if _, dup := w.frameLine[n]; !dup {
					w.frameLine[n] = l
				}
			}
		}
	}
}

// leadingFrame reads N from a line starting {"frame":N or with the
// number N (text views).
func leadingFrame(line []byte) (int, bool) {
	line = bytes.TrimPrefix(line, []byte(`{"frame":`))
	line = bytes.TrimLeft(line, " ")
	n, k := 0, 0
	for k < len(line) && k < 10 && line[k] >= '0' && line[k] <= '9' {
		n = n*10 + int(line[k]-'0')
		k++
	}
	return n, k > 0
}

// finish checks a last line without newline and whole-document JSON.
func (w *checkedWriter) finish() error {
	if len(w.partial) > 0 {
		w.line(w.partial)
		w.partial = nil
	}
	if w.mode == outJSONDoc && w.err == nil {
		if err := torture.CheckJSON(w.doc); err != nil {
			w.err = fmt.Errorf("output: %v", err)
		}
	}
	return w.err
}

func (w *checkedWriter) String() string { return string(w.head) }

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func heapBytes() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

// runBounded runs the command line in-process with a time bound and a heap
// growth bound, recovering a panic. A run that times out or exceeds the
// memory bound is abandoned (its goroutine cannot be stopped).
func runBounded(runner func([]string, io.Reader, io.Writer, io.Writer) int, args []string, stdin []byte, stdout, stderr *checkedWriter, timeout time.Duration, memBound uint64) runResult {
	res := runResult{stdout: stdout, stderr: stderr}
	base := heapBytes()
	type outcome struct {
		code     int
		panicked any
		stack    []byte
	}
	done := make(chan outcome, 1)
	// An abandoned run keeps its goroutine: the gates stop its writes
	// reaching the writers the harness goes on to read.
	outGate, errGate := &gate{w: stdout}, &gate{w: stderr}
	start := time.Now()
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o.panicked, o.stack = p, debug.Stack()
			}
			done <- o
		}()
		o.code = runner(args, bytes.NewReader(stdin), outGate, errGate)
	}()
	abandon := func() runResult {
		outGate.close()
		errGate.close()
		res.elapsed = time.Since(start)
		return res
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case o := <-done:
			res.code, res.panicked, res.stack = o.code, o.panicked, o.stack
			res.elapsed = time.Since(start)
			return res
		case <-deadline.C:
			res.timedOut = true
			return abandon()
		case <-tick.C:
			if h := heapBytes(); h > base {
				res.peakHeap = max(res.peakHeap, h-base)
				if h-base > memBound {
					res.memOver = true
					return abandon()
				}
			}
		}
	}
}

// gate passes writes on until it is closed, then drops them.
type gate struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(p), nil
	}
	return g.w.Write(p)
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// tortureConfig is read from the environment.
type tortureConfig struct {
	n        int
	repeat   int
	seed     uint64
	timeout  time.Duration
	memBound uint64
	only     string
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func loadTortureConfig() tortureConfig {
	c := tortureConfig{n: 1, seed: 1, timeout: 30 * time.Second, memBound: 1 << 30}
	c.n = envInt("CMPD_TORTURE_N", c.n)
	c.repeat = envInt("CMPD_TORTURE_REPEAT", 2000)
	c.seed = uint64(envInt("CMPD_TORTURE_SEED", int(c.seed)))
	if d, err := time.ParseDuration(os.Getenv("CMPD_TORTURE_TIMEOUT")); err == nil {
		c.timeout = d
	}
	c.memBound = uint64(envInt("CMPD_TORTURE_MEM", int(c.memBound>>20))) << 20
	c.only = os.Getenv("CMPD_TORTURE_ONLY")
	return c
}

// failureDir is where failing inputs are written for reproduction.
var failureDir = sync.OnceValue(func() string {
	if d := os.Getenv("CMPD_TORTURE_OUT"); d != "" {
		os.MkdirAll(d, 0o755)
		return d
	}
	d, err := os.MkdirTemp("", "cmpd-torture-")
	if err != nil {
		return os.TempDir()
	}
	return d
})

func saveFailure(name string, data []byte) string {
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r < 0x20 || r == ':' || r == '*' || r == '?' {
			return '_'
		}
		return r
	}, name)
	p := filepath.Join(failureDir(), safe)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return "(not written: " + err.Error() + ")"
	}
	return p
}

// captureFiles lists the committed captures (testdata/pcaps/, recursively)
// but the pcap variants the harness does not read (converted.PcapVariants).
func captureFiles(t testing.TB) []string {
	t.Helper()
	var out []string
	root := testcap.Path("pcaps")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		n := d.Name()
		if slices.Contains(converted.PcapVariants, n) {
			return nil
		}
		if strings.HasSuffix(n, ".pcap") || strings.HasSuffix(n, ".pcapng") || strings.HasSuffix(n, ".gz") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no captures under testdata/pcaps")
	}
	return out
}

// regressionInputs lists testdata/torture/ (crashers and hangs found
// before, kept as inputs).
func regressionInputs() []string {
	var out []string
	ents, _ := os.ReadDir(testcap.Path("torture"))
	for _, e := range ents {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".md") {
			out = append(out, testcap.Path("torture", e.Name()))
		}
	}
	return out
}

// dissectedOffsets are the frame offsets where the dissector found layers
// in each frame of a clean capture: truncations are made there ±1 too,
// besides at the boundaries package torture finds on its own.
func dissectedOffsets(path string, frames int) [][]int {
	src, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		return nil
	}
	defer src.Close()
	out := make([][]int, frames)
	d := dissect.New(dissect.Options{})
	d.Run(src, func(r *dissect.Record) error {
		if r.Frame < 1 || r.Frame > frames {
			return nil
		}
		for _, off := range r.Offsets {
			if off > 0 {
				out[r.Frame-1] = append(out[r.Frame-1], off)
			}
		}
		return nil
	})
	return out
}

// withRepeat adds the plan's repeat mutant to sample if it is not there.
func withRepeat(sample, plan []*torture.Mutant) []*torture.Mutant {
	for _, m := range sample {
		if m.Kind == torture.KindRepeat {
			return sample
		}
	}
	for _, m := range plan {
		if m.Kind == torture.KindRepeat {
			return append(sample, m)
		}
	}
	return sample
}

// nameSeed varies the sample between captures (FNV-1a of the name), so a
// small N still covers every kind of damage across the captures.
func nameSeed(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return h
}

// cleanRun is a view's output on an undamaged capture.
type cleanRun struct {
	code   int
	frames map[int]string
	ok     bool
}

// judge runs one view on one input and returns what was wrong ("" if
// nothing). clean is the view's run on the undamaged capture (nil for
// regression inputs); m the mutant (nil likewise).
func judge(v tortureView, path string, data []byte, m *torture.Mutant, clean *cleanRun, cfg tortureConfig) (runResult, string) {
	file := path
	var stdin []byte
	if v.stdin {
		file, stdin = "-", data
	}
	keep := 0
	if m != nil {
		keep = max(m.Frame, 1)
	}
	stdout := newCheckedWriter(v.out, v.frames, keep)
	stdout.path = file
	stdout.prefix = v.framePrefix
	stderr := newCheckedWriter(outText, false, 0)
	timeout := cfg.timeout
	if m != nil && m.Large {
		timeout *= 4
	}
	runner := v.runner
	if runner == nil {
		runner = run
	}
	res := runBounded(runner, v.args(file), stdin, stdout, stderr, timeout, cfg.memBound)
	switch {
	case res.panicked != nil:
		return res, fmt.Sprintf("panic: %v\n%s", res.panicked, res.stack)
	case res.timedOut:
		return res, fmt.Sprintf("still running after %v (hang or runaway): %d octets of output so far", timeout, stdout.n)
	case res.memOver:
		return res, fmt.Sprintf("heap grew by %d MiB, over the bound of %d MiB", res.peakHeap>>20, cfg.memBound>>20)
	}
	if err := stdout.finish(); err != nil {
		return res, "stdout: " + err.Error()
	}
	if err := stderr.finish(); err != nil {
		return res, "stderr: " + err.Error()
	}
	if res.code < 0 || res.code > 2 {
		return res, fmt.Sprintf("exit status %d", res.code)
	}
	if m == nil || clean == nil {
		return res, ""
	}
	if m.HeaderDamaged && res.code != exitUsage {
		return res, fmt.Sprintf("damaged file header: exit status %d, want %d (stderr %q)", res.code, exitUsage, trim(stderr.String()))
	}
	switch m.Kind {
	case torture.KindFlip, torture.KindLength, torture.KindChunkList, torture.KindControlChars,
		torture.KindTruncLayer, torture.KindDuplicate, torture.KindReorder, torture.KindDrop, torture.KindRepeat:
		// The file is well formed: damaged packets must not end the run.
		if res.code != clean.code && !(v.checkExit && res.code <= 1) {
			return res, fmt.Sprintf("exit status %d on damaged packets, %d on the clean capture (stderr %q)", res.code, clean.code, trim(stderr.String()))
		}
	}
	if v.frames && clean.ok {
		for f, want := range clean.frames {
			if f >= m.Frame {
				continue
			}
			got, ok := stdout.frameLine[f]
			if !ok {
				return res, fmt.Sprintf("good frame %d (before the damage at frame %d) missing from the output", f, m.Frame)
			}
			// The last frame before the damage may carry PDUs flushed at the
			// end of the input; earlier frames must be exactly as clean.
			if f < m.Frame-1 && got != want && m.Kind != torture.KindFileHeader && m.Kind != torture.KindGzip {
				return res, fmt.Sprintf("good frame %d (before the damage at frame %d) changed:\n clean: %s\n  got: %s", f, m.Frame, want, got)
			}
		}
	}
	return res, ""
}

func trim(s string) string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// tortureStats accumulates the summary.
type tortureStats struct {
	inputs, runs, failures int
	byKind                 map[torture.Kind]int
	slowest                time.Duration
	slowestName            string
	viewTime               map[string]time.Duration
	peakHeap               uint64
}

func TestTorture(t *testing.T) {
	cfg := loadTortureConfig()
	views, missing := discoverViews()
	for _, m := range missing {
		t.Logf("skipped (not built yet): %s", m)
	}
	if len(views) == 0 {
		t.Skip("no capture views are built yet; the reader-level torture test still runs (TestTortureReader)")
	}
	names := make([]string, len(views))
	for i, v := range views {
		names[i] = v.name
	}
	t.Logf("views: %s", strings.Join(names, ", "))
	st := tortureStats{byKind: map[torture.Kind]int{}, viewTime: map[string]time.Duration{}}
	start := time.Now()
	tmp := t.TempDir()
	stop := false
	fail := func(v tortureView, name string, data []byte, res runResult, why string) {
		st.failures++
		p := saveFailure(name, data)
		t.Errorf("%s: view %s (%s): %s\n  input written to %s\n  reproduce: go run ./cmd/cmpd-dissect %s",
			name, v.name, strings.Join(v.args("FILE")[:min(len(v.args("FILE")), 6)], " "), why, p,
			strings.Join(v.args(p)[:min(len(v.args(p)), 6)], " "))
		if res.timedOut || res.memOver {
			stop = true // the abandoned run still holds a goroutine
		}
	}
	for _, capPath := range captureFiles(t) {
		c, raw, err := torture.ReadFile(capPath)
		if raw == nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Errorf("%s: the harness cannot parse a committed capture: %v", capPath, err)
			continue
		}
		// Clean runs.
		cleanRuns := func(path string, data []byte) []*cleanRun {
			cleans := make([]*cleanRun, len(views))
			for i, v := range views {
				res, why := judge(v, path, data, nil, nil, cfg)
				st.runs++
				if why != "" {
					fail(v, filepath.Base(capPath)+"-clean", data, res, why)
					continue
				}
				cr := &cleanRun{code: res.code, frames: res.stdout.frameLine, ok: res.code == exitOK || (v.checkExit && res.code == exitFindings)}
				if !cr.ok {
					t.Errorf("%s: view %s fails on the clean capture: exit %d: %s", path, v.name, res.code, trim(res.stderr.String()))
				}
				if v.frames && cr.ok && len(cr.frames) == 0 && len(c.Packets) > 0 {
					t.Logf("%s: view %s printed no frame numbers on the clean capture; frame checks off for it", path, v.name)
				}
				cleans[i] = cr
			}
			return cleans
		}
		cleans := cleanRuns(capPath, raw)
		// Mutants written as pcap cannot keep pcapng packet comments: their
		// good frames are compared with the capture written as pcap.
		var uncommented []*cleanRun
		if c.HasComments() {
			b, _ := c.Encode(source.FormatPcap)
			p := filepath.Join(tmp, "uncommented.pcap")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			uncommented = cleanRuns(p, b)
		}
		// The full repeat count on the two bundled kernel NFS captures
		// (always run there: one RoCE, one iWARP); a small one elsewhere.
		full := c.Name == "rxe-nfs42-rdma.pcap" || c.Name == "siw-nfs42-rdma.pcap"
		repeat := cfg.repeat
		if !full {
			repeat = min(repeat, 1000)
		}
		plan := torture.Plan(c, torture.Options{Seed: cfg.seed, Repeat: repeat, Offsets: dissectedOffsets(capPath, len(c.Packets))})
		sample := torture.Sample(plan, cfg.n, cfg.seed^nameSeed(c.Name))
		if full && cfg.n > 0 {
			sample = withRepeat(sample, plan)
		}
		mpath := filepath.Join(tmp, "mutant")
		for _, m := range sample {
			if stop {
				break
			}
			if cfg.only != "" && !strings.Contains(m.Name, cfg.only) {
				continue
			}
			data := m.Build()
			if err := os.WriteFile(mpath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			st.inputs++
			st.byKind[m.Kind]++
			clean := cleans
			if uncommented != nil && !torture.KeepsComments(data) {
				clean = uncommented
			}
			for i, v := range views {
				if clean[i] == nil || stop || (m.Large && v.heavy) {
					continue
				}
				res, why := judge(v, mpath, data, m, clean[i], cfg)
				st.runs++
				st.viewTime[v.name] += res.elapsed
				if res.elapsed > st.slowest {
					st.slowest, st.slowestName = res.elapsed, m.Name+" "+v.name
				}
				st.peakHeap = max(st.peakHeap, res.peakHeap)
				if why != "" {
					fail(v, m.Name, data, res, why)
				}
			}
			m.Data = nil // release
		}
	}
	// Regression inputs kept from earlier failures: run as they are.
	for _, p := range regressionInputs() {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st.inputs++
		for _, v := range views {
			if stop {
				break
			}
			res, why := judge(v, p, data, nil, nil, cfg)
			st.runs++
			if why != "" {
				fail(v, filepath.Base(p), data, res, why)
			}
		}
	}
	kinds := make([]string, 0, len(st.byKind))
	for _, k := range torture.Kinds {
		if st.byKind[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, st.byKind[k]))
		}
	}
	summary := fmt.Sprintf("torture: %d inputs (%s), %d views, %d runs, %d failures, %v; slowest run %v (%s); peak heap growth %d MiB",
		st.inputs, strings.Join(kinds, " "), len(views), st.runs, st.failures, time.Since(start).Round(time.Millisecond),
		st.slowest.Round(time.Millisecond), st.slowestName, st.peakHeap>>20)
	var vt []string
	for _, v := range views {
		vt = append(vt, fmt.Sprintf("%s %v", v.name, st.viewTime[v.name].Round(time.Millisecond)))
	}
	summary += "\ntorture: time per view: " + strings.Join(vt, ", ")
	t.Log(summary)
	fmt.Fprintln(os.Stderr, summary)
	if st.failures > 0 {
		fmt.Fprintf(os.Stderr, "torture: failing inputs written to %s\n", failureDir())
	}
}

// TestTortureReader runs the capture reader alone over the mutants: no
// panic, every good frame before the damage delivered with its bytes, a
// HeaderError naming the file for damaged headers, and RecordErrors that
// name the file, the frame and the offset.
func TestTortureReader(t *testing.T) {
	cfg := loadTortureConfig()
	n := cfg.n * 10
	start := time.Now()
	inputs := 0
	for _, capPath := range captureFiles(t) {
		c, _, err := torture.ReadFile(capPath)
		if err != nil {
			continue
		}
		tmp := filepath.Join(t.TempDir(), "mutant.pcap")
		for _, m := range torture.Sample(torture.Plan(c, torture.Options{Seed: cfg.seed, Repeat: cfg.repeat}), n, cfg.seed^nameSeed(c.Name)) {
			data := m.Build()
			os.WriteFile(tmp, data, 0o644)
			inputs++
			frames, errs, pan := readFrames(tmp)
			if pan != nil {
				t.Errorf("%s: reader panicked: %v (input %s)", m.Name, pan, saveFailure(m.Name, data))
				continue
			}
			var he *source.HeaderError
			if m.HeaderDamaged {
				if len(errs) == 0 || !errors.As(errs[0], &he) {
					t.Errorf("%s: damaged header read without a HeaderError (errors %v)", m.Name, errs)
				} else if !strings.Contains(he.Error(), tmp) {
					t.Errorf("%s: HeaderError %q does not name the file", m.Name, he)
				}
				continue
			}
			for i := 0; i < m.Frame-1 && i < len(c.Packets); i++ {
				if i >= len(frames) {
					t.Errorf("%s: good frame %d not delivered (errors %v)", m.Name, i+1, errs)
					break
				}
				if m.Kind != torture.KindFileHeader && m.Kind != torture.KindGzip && !bytes.Equal(frames[i], c.Packets[i].Data) {
					t.Errorf("%s: good frame %d delivered with other bytes", m.Name, i+1)
					break
				}
			}
			for _, err := range errs {
				var re *source.RecordError
				if errors.As(err, &re) {
					msg := re.Error()
					if !strings.Contains(msg, tmp) || !strings.Contains(msg, fmt.Sprintf("frame %d", re.Frame)) ||
						!strings.Contains(msg, "offset") || re.Frame < 1 {
						t.Errorf("%s: record error %q does not name file, frame and offset", m.Name, msg)
					}
					if !utf8.ValidString(msg) || torture.CheckTerminalSafe([]byte(msg)) != nil {
						t.Errorf("%s: record error is not terminal-safe: %q", m.Name, msg)
					}
				}
			}
		}
	}
	t.Logf("reader torture: %d inputs in %v", inputs, time.Since(start).Round(time.Millisecond))
}

// readFrames reads every frame of a file with the source package.
func readFrames(path string) (frames [][]byte, errs []error, panicked any) {
	defer func() { panicked = recover() }()
	src, err := source.OpenFiles([]string{path}, nil)
	if err != nil {
		return nil, []error{err}, nil
	}
	defer src.Close()
	var f source.Frame
	for k := 0; k < 1<<22; k++ {
		err := src.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, err)
			var he *source.HeaderError
			if errors.As(err, &he) {
				break
			}
			continue
		}
		frames = append(frames, bytes.Clone(f.Data))
	}
	return frames, errs, nil
}

// loadRealCapture parses one of the committed real captures.
func loadRealCapture(t testing.TB, name string) *torture.Capture {
	t.Helper()
	c, _, err := torture.ReadFile(testcap.Real(name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fillEscape overwrites data[start:end] with the torture escape payload.
func fillEscape(data []byte, start, end int) {
	for k := 0; start+k < end && start+k < len(data); k++ {
		data[start+k] = torture.Escape[k%len(torture.Escape)]
	}
}

// craftedEscapes builds captures whose packets carry terminal escape
// sequences wherever a view might print packet bytes as text: the RPC
// AUTH_SYS machine names, the CM REQ/REP private data, a REJ's ARI and
// private data (the rxe REP turned into a REJ, reason 5 "Invalid GID" whose
// ARI is a GID, and reason 28 "Consumer Reject"), and the MPA
// request/reply private data.
func craftedEscapes(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, name := range []string{"rxe-nfs42-rdma.pcap", "siw-nfs42-rdma.pcap"} {
		c := loadRealCapture(t, name).Clone()
		var rej []torture.Packet
		for i := range c.Packets {
			p := &c.Packets[i]
			l := torture.Walk(p.LinkType, p.Data)
			for _, s := range l.Strings {
				fillEscape(p.Data, s.Start, s.End)
			}
			// A REP (attribute 0x0013) becomes two REJs.
			for _, s := range l.Layers {
				if s.Name == "mad" && len(p.Data) >= s.End+84 && binary.BigEndian.Uint16(p.Data[s.Start+16:]) == 0x0013 {
					for _, reason := range []uint16{5, 28} {
						q := torture.Packet{Time: p.Time, LinkType: p.LinkType, Data: bytes.Clone(p.Data), OrigLen: p.OrigLen}
						cm := s.End
						binary.BigEndian.PutUint16(q.Data[s.Start+16:], 0x0012)
						q.Data[cm+8] = 0 << 6  // MsgRejected: REQ
						q.Data[cm+9] = 72 << 1 // RejInfoLen 72: the whole ARI
						binary.BigEndian.PutUint16(q.Data[cm+10:], reason)
						fillEscape(q.Data, cm+12, len(q.Data)-4)
						rej = append(rej, q)
					}
				}
			}
		}
		c.Packets = append(c.Packets, rej...)
		b, _ := c.Encode(source.FormatPcap)
		out["escapes-"+name] = b
	}
	return out
}

// TestOutputSafety: a capture whose packets carry escape sequences and
// control characters is printed safely by every text view, and every JSON
// view stays valid UTF-8 JSON.
func TestOutputSafety(t *testing.T) {
	views, missing := discoverViews()
	if len(views) == 0 {
		t.Skipf("no views built yet (missing: %s)", strings.Join(missing, ", "))
	}
	cfg := loadTortureConfig()
	for name, data := range craftedEscapes(t) {
		path := writeTemp(t, name, data)
		for _, v := range views {
			res, why := judge(v, path, data, nil, nil, cfg)
			if why != "" {
				t.Errorf("%s: view %s: %s (input %s)", name, v.name, why, saveFailure(name, data))
				continue
			}
			if res.code == exitUsage {
				t.Errorf("%s: view %s: exit 2: %s", name, v.name, trim(res.stderr.String()))
			}
		}
		// Strings are shown escaped, not dropped: the AUTH_SYS machine
		// names (rpc.auth.machinename) carry ESC, which the tree and JSON
		// show as an escape.
		if name != "escapes-rxe-nfs42-rdma.pcap" {
			continue
		}
		if _, ok := field.Lookup("rpc.auth.machinename"); !ok {
			continue
		}
		for _, args := range [][]string{{"-r", path, "-V"}, {"-r", path, "-T", "json"}, {"-r", path, "-T", "fields", "-e", "rpc.auth.machinename"}} {
			_, out, _ := runCmd(t, args...)
			if !strings.Contains(out, `\x1b`) && !strings.Contains(out, `\u001b`) && !strings.Contains(out, `\e`) {
				t.Errorf("%v: the machine name's ESC is not shown escaped (\\x1b, \\u001b or \\e)", args[2:])
			}
		}
	}
}

// TestDamagedHeaderExit2: a capture whose file header is damaged is exit
// status 2 in every view, with a message naming the file and the reason.
func TestDamagedHeaderExit2(t *testing.T) {
	views, missing := discoverViews()
	if len(views) == 0 {
		t.Skipf("no views built yet (missing: %s)", strings.Join(missing, ", "))
	}
	c := loadRealCapture(t, "rxe-nfs42-rdma.pcap")
	good, _ := c.Encode(source.FormatPcap)
	ng, _ := c.Encode(source.FormatPcapNG)
	bad := map[string][]byte{
		"empty.pcap":           {},
		"short-header.pcap":    good[:10],
		"bad-magic.pcap":       append([]byte{0xde, 0xad, 0xbe, 0xef}, good[4:]...),
		"bad-shb.pcapng":       append(append(bytes.Clone(ng[:8]), 0, 0, 0, 0), ng[12:]...),
		"bad-gzip-header.gz":   torture.Gzip(good)[:6],
		"not-a-capture.pcap":   []byte("GET / HTTP/1.1\r\nHost: \x1b]0;x\x07\r\n\r\n"),
		"gzip-of-garbage.gz":   torture.Gzip([]byte("garbage, not a capture")),
		"pcapng-no-shb.pcapng": ng[28:],
	}
	dir := t.TempDir()
	for name, data := range bad {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, v := range views {
			if v.stdin {
				continue
			}
			code, _, stderr := runCmd(t, v.args(path)...)
			if code != exitUsage {
				t.Errorf("%s: view %s: exit %d, want %d (stderr %q)", name, v.name, code, exitUsage, trim(stderr))
				continue
			}
			if !strings.Contains(stderr, path) {
				t.Errorf("%s: view %s: the message does not name the file: %q", name, v.name, trim(stderr))
			}
			if err := torture.CheckTerminalSafe([]byte(stderr)); err != nil {
				t.Errorf("%s: view %s: unsafe message: %v", name, v.name, err)
			}
		}
	}
}

// jsonFrames decodes -T json output into frame number → decoded object.
func jsonFrames(t *testing.T, out string) map[int]map[string]any {
	t.Helper()
	m := map[int]map[string]any{}
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		var o map[string]any
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("invalid JSON line %q: %v", trim(line), err)
		}
		if n, ok := o["frame"].(float64); ok {
			m[int(n)] = o
		}
	}
	return m
}

// TestDamagedPacketRunGoesOn: damaged packets in a well-formed file are
// reported where they are — file, frame, layer, byte offset and what was
// expected — and every other frame is still decoded, with exit status 0.
func TestDamagedPacketRunGoesOn(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
	if root.Flags().ShorthandLookup("T") == nil {
		t.Skip("-T json not built yet")
	}
	c := loadRealCapture(t, "rxe-nfs42-rdma.pcap").Clone()
	// Frame 4: an RC SEND cut inside its BTH (Ethernet 14 + IPv4 20 +
	// UDP 8 = 42; the BTH is 12 octets), as a snaplen would.
	c.Packets[3].Data = c.Packets[3].Data[:48]
	// Frame 8: its RPC-over-RDMA read list never terminates.
	l := torture.Walk(c.Packets[7].LinkType, c.Packets[7].Data)
	if len(l.Lists) != 1 {
		t.Fatalf("frame 8: no chunk lists found")
	}
	lst := l.Lists[0]
	for x := lst.Start; x+4 <= lst.End; x += 4 {
		binary.BigEndian.PutUint32(c.Packets[7].Data[x:], 1)
	}
	// Frame 3: the CM RTU's MAD cut inside the MAD header (the
	// REQ stays whole: it names the NFS/RDMA service that makes frame 8
	// RPC-over-RDMA).
	c.Packets[2].Data = c.Packets[2].Data[:70]
	data, _ := c.Encode(source.FormatPcap)
	path := writeTemp(t, "damaged-packets.pcap", data)
	code, out, stderr := runCmd(t, "-r", path, "-T", "json")
	if code != exitOK {
		t.Fatalf("exit %d on damaged packets, want 0: %s", code, trim(stderr))
	}
	frames := jsonFrames(t, out)
	for i := 1; i <= len(c.Packets); i++ {
		if _, ok := frames[i]; !ok {
			t.Errorf("frame %d missing from -T json output", i)
		}
	}
	type want struct {
		frame    int
		layer    string
		min, max int    // the finding's offset must fall in [min, max]
		sev      string // a frame the snap length cut breaks no rule: a warning
	}
	for _, w := range []want{
		{4, "bth", 42, 48, "warning"},
		{8, "rpcrdma", lst.Start, lst.End, "error"},
		{3, "", 62, 70, "warning"},
	} {
		o := frames[w.frame]
		if o == nil {
			continue
		}
		if src, _ := o["source"].(string); src != path {
			t.Errorf("frame %d: source %q, want the file %q", w.frame, src, path)
		}
		fs, _ := o["findings"].([]any)
		found := false
		var seen []string
		for _, f := range fs {
			fm, _ := f.(map[string]any)
			sev, _ := fm["severity"].(string)
			layer, _ := fm["layer"].(string)
			msg, _ := fm["message"].(string)
			off, hasOff := fm["offset"].(float64)
			seen = append(seen, fmt.Sprintf("%v %v %v@%v: %v", sev, fm["code"], layer, fm["offset"], msg))
			if sev != w.sev || !hasOff || msg == "" || layer == "" {
				continue
			}
			if (w.layer == "" || layer == w.layer) && int(off) >= w.min && int(off) <= w.max {
				found = true
			}
		}
		if !found {
			t.Errorf("frame %d: no %s finding in layer %q with an offset in [%d,%d] and a message; findings: %v",
				w.frame, w.sev, w.layer, w.min, w.max, seen)
		}
	}
	// The summary and tree views go on too.
	for _, args := range [][]string{{"-r", path}, {"-r", path, "-V"}, {"-r", path, "-T", "fields", "-e", "frame.number"}} {
		code, out, stderr := runCmd(t, args...)
		if code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, trim(stderr))
		}
		if err := torture.CheckTerminalSafe([]byte(out)); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	code, out, _ = runCmd(t, "-r", path, "-T", "fields", "-e", "frame.number")
	if got := len(torture.FrameLines([]byte(out))); code == exitOK && got != len(c.Packets) {
		t.Errorf("-T fields printed %d frames, want %d", got, len(c.Packets))
	}
}

// TestDamagedRecordNamed: a capture cut inside a record is reported with
// the file, the frame number and the offset of the damaged record, after
// every good frame before it was printed.
func TestDamagedRecordNamed(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
	if root.Flags().ShorthandLookup("T") == nil {
		t.Skip("-T fields not built yet")
	}
	c := loadRealCapture(t, "siw-nfs42-rdma.pcap")
	data, idx := c.Encode(source.FormatPcap)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"cut-in-record-10.pcap", data[:idx.Records[9].Data+30]},
		{"cut-in-header-10.pcap", data[:idx.Records[9].Start+7]},
		{"caplen-huge-10.pcap", func() []byte {
			b := bytes.Clone(data)
			binary.LittleEndian.PutUint32(b[idx.Records[9].CapLen:], 0x7fffffff)
			return b
		}()},
	} {
		path := filepath.Join(t.TempDir(), tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCmd(t, "-r", path, "-T", "fields", "-e", "frame.number")
		if code > exitUsage {
			t.Errorf("%s: exit %d", tc.name, code)
		}
		got := torture.FrameLines([]byte(out))
		for f := 1; f <= 9; f++ {
			if _, ok := got[f]; !ok {
				t.Errorf("%s: good frame %d missing", tc.name, f)
			}
		}
		// The report: on stderr, or as the damaged frame's finding in the
		// JSON output (its message, with the file in "source").
		_, jout, _ := runCmd(t, "-r", path, "-T", "json")
		msg := stderr
		if o := jsonFrames(t, jout)[10]; o != nil {
			fs, _ := o["findings"].([]any)
			for _, f := range fs {
				if fm, ok := f.(map[string]any); ok && fm["severity"] == "error" {
					m, _ := fm["message"].(string)
					msg += "\n" + m
				}
			}
		}
		for _, want := range []string{path, "frame 10", "offset " + strconv.Itoa(idx.Records[9].Start)} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the report %q does not say %q", tc.name, trim(msg), want)
			}
		}
	}
}

// findingCodes counts the finding codes in JSON output.
var codeRE = regexp.MustCompile(`"code":"([^"]+)"`)

func findingCodes(out string) map[string]int {
	m := map[string]int{}
	for _, s := range codeRE.FindAllStringSubmatch(out, -1) {
		m[s[1]]++
	}
	return m
}

// TestLimits: each resource limit has a default, an option, and a finding
// when it is hit; with the option set low on a capture that exceeds it the
// run completes, the finding appears, and without the option (defaults)
// it does not.
func TestLimits(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
	if root.Flags().Lookup("max-tcp-stream-bytes") == nil {
		t.Skip("limit options not wired yet")
	}
	synth := func(name string) string { return testcap.Synthetic(name) }
	real := func(name string) string { return testcap.Real(name) }
	for _, tc := range []struct {
		limit, file, option, value, code string
	}{
		// Its Sends of up to 3000 octets are FPDUs that span segments.
		{"TCP octets buffered per stream", synth("synth-iwarp-markers-crc.pcap"), "--max-tcp-stream-bytes", "100", "iwarp.buffer-limit"},
		{"TCP octets buffered in total", synth("synth-iwarp-markers-crc.pcap"), "--max-tcp-total-bytes", "200", "iwarp.buffer-limit"},
		{"TCP streams followed", real("siw-nfs42-rdma.pcap"), "--max-tcp-streams", "1", "iwarp.stream-limit"},
		{"iWARP multi-segment Send size", synth("synth-iwarp-split-reorder-dup.pcap"), "--max-send-bytes", "64", "iwarp.send-limit"},
		{"RC multi-packet Send size", synth("synth-rpcrdma-split-send.pcap"), "--max-send-bytes", "64", "ib.send-limit"},
		{"RC partial Sends buffered", synth("synth-rpcrdma-split-send.pcap"), "--max-send-buffer-bytes", "100", "ib.send-limit"},
		{"chunk segments per list", synth("synth-rpcrdma-long-chunks.pcap"), "--max-chunk-segments", "2", "rpcrdma.segment-cap"},
		{"MPA private data length", real("siw-nfs42-rdma.pcap"), "--max-private-data", "8", "mpa.pd-length-over-512"},
	} {
		if _, err := os.Stat(tc.file); err != nil {
			t.Errorf("%s: %v", tc.limit, err)
			continue
		}
		code, out, stderr := runCmd(t, "-r", tc.file, "-T", "json", tc.option, tc.value)
		if code != exitOK {
			t.Errorf("%s: %s %s: exit %d: %s", tc.limit, tc.option, tc.value, code, trim(stderr))
			continue
		}
		if err := torture.CheckJSONLines([]byte(out)); err != nil {
			t.Errorf("%s: %v", tc.limit, err)
		}
		if n := findingCodes(out)[tc.code]; n == 0 {
			t.Errorf("%s: %s %s on %s: no %s finding (findings %v)", tc.limit, tc.option, tc.value, filepath.Base(tc.file), tc.code, findingCodes(out))
		}
		_, out, _ = runCmd(t, "-r", tc.file, "-T", "json")
		if n := findingCodes(out)[tc.code]; n != 0 {
			t.Errorf("%s: %d %s findings with the default limit on %s", tc.limit, n, tc.code, filepath.Base(tc.file))
		}
		// Zero or negative is refused, naming the option.
		for _, bad := range []string{"0", "-5", "many"} {
			code, _, stderr := runCmd(t, "-r", tc.file, tc.option, bad)
			if code != exitUsage || !strings.Contains(stderr, tc.option) {
				t.Errorf("%s %s: exit %d, stderr %q; want 2 naming the option", tc.option, bad, code, trim(stderr))
			}
		}
	}
}

// TestLimitPrivateDataDefault: an MPA request whose private data is longer
// than RFC 5044's 512 octets is reported with the default limit, and not
// once the limit is raised.
func TestLimitPrivateDataDefault(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
	if root.Flags().Lookup("max-private-data") == nil {
		t.Skip("--max-private-data not wired yet")
	}
	c := loadRealCapture(t, "siw-nfs42-rdma.pcap").Clone()
	// Frame 4 is the MPA request (PD_Length 12 at frame offset 84): give
	// it 600 octets of private data, lengths fixed so it stays well formed.
	p := &c.Packets[3]
	extra := make([]byte, 600-12)
	p.Data = append(p.Data, extra...)
	p.OrigLen = len(p.Data)
	binary.BigEndian.PutUint16(p.Data[84:], 600)
	binary.BigEndian.PutUint16(p.Data[14+2:], uint16(len(p.Data)-14))
	// The client's later segments move on by as many octets.
	for i := 4; i < len(c.Packets); i++ {
		q := &c.Packets[i]
		if len(q.Data) >= 54 && bytes.Equal(q.Data[26:30], p.Data[26:30]) { // same IPv4 source
			binary.BigEndian.PutUint32(q.Data[38:], binary.BigEndian.Uint32(q.Data[38:])+uint32(len(extra)))
		} else if len(q.Data) >= 54 {
			binary.BigEndian.PutUint32(q.Data[42:], binary.BigEndian.Uint32(q.Data[42:])+uint32(len(extra)))
		}
	}
	data, _ := c.Encode(source.FormatPcap)
	path := writeTemp(t, "mpa-pd-600.pcap", data)
	code, out, stderr := runCmd(t, "-r", path, "-T", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, trim(stderr))
	}
	if findingCodes(out)["mpa.pd-length-over-512"] == 0 {
		t.Errorf("PD_Length 600 with the default limit: no mpa.pd-length-over-512 (findings %v)", findingCodes(out))
	}
	_, out, _ = runCmd(t, "-r", path, "-T", "json", "--max-private-data", "1024")
	if n := findingCodes(out)["mpa.pd-length-over-512"]; n != 0 {
		t.Errorf("--max-private-data 1024: %d mpa.pd-length-over-512 findings", n)
	}
}

// TestLimitConnections: the connection table keeps the newest connections;
// the oldest are evicted first, each with the finding conn.table-full.
func TestLimitConnections(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), io.Discard, io.Discard)
	var conns *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "conns" {
			conns = c
		}
	}
	if conns == nil || conns.Flags().Lookup("max-connections") == nil {
		t.Skip("conns --max-connections not built yet")
	}
	file := testcap.Synthetic("synth-conn-rocev2-many.pcap")
	code, out, stderr := runCmd(t, "conns", "--json", "--max-connections", "2", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, trim(stderr))
	}
	type connLine struct {
		Kind         string `json:"kind"`
		RequestFrame int    `json:"request_frame"`
		Findings     []struct {
			Code string `json:"code"`
		} `json:"findings"`
	}
	var evicted, kept []int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var c connLine
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("bad line %q: %v", trim(line), err)
		}
		if c.Kind != "connection" {
			continue
		}
		full := false
		for _, f := range c.Findings {
			full = full || f.Code == "conn.table-full"
		}
		if full {
			evicted = append(evicted, c.RequestFrame)
		} else {
			kept = append(kept, c.RequestFrame)
		}
	}
	if len(kept) != 2 || len(evicted) == 0 {
		t.Fatalf("with --max-connections 2: kept %v, evicted %v", kept, evicted)
	}
	for _, e := range evicted {
		for _, k := range kept {
			if e > k {
				t.Errorf("connection requested at frame %d evicted before the older one at frame %d", e, k)
			}
		}
	}
	_, out, _ = runCmd(t, "conns", "--json", file)
	if n := findingCodes(out)["conn.table-full"]; n != 0 {
		t.Errorf("%d conn.table-full findings with the default limit", n)
	}
	code, _, stderr = runCmd(t, "conns", "--max-connections", "0", file)
	if code != exitUsage || !strings.Contains(stderr, "max-connections") {
		t.Errorf("--max-connections 0: exit %d, %q", code, trim(stderr))
	}
}

// selftestRun stands in for run in TestTortureHarnessCatches: it
// misbehaves as its first argument says (it is not part of the command).
func selftestRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := &cobra.Command{
		Use:           "torture-selftest MODE FILE",
		Args:          cobra.ExactArgs(2),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			switch args[0] {
			case "panic":
				var m map[string]int
				m["x"]++
			case "hang":
				time.Sleep(3 * time.Second)
			case "escape":
				fmt.Fprintln(w, "1\tname=\x1b]0;pwned\x07")
			case "badjson":
				fmt.Fprintln(w, `{"frame":1,"x":"`+"\xff"+`"}`)
			case "lose":
				fmt.Fprintln(w, "2\tonly the second frame")
			case "memory":
				var keep [][]byte
				for i := 0; i < 64; i++ {
					keep = append(keep, make([]byte, 4<<20))
					time.Sleep(10 * time.Millisecond)
				}
				fmt.Fprintln(w, len(keep))
			case "exit3":
				return &exitError{code: 3, err: fmt.Errorf("odd")}
			case "good":
				fmt.Fprintln(w, "1\tfirst\n2\tsecond")
			}
			return nil
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetArgs(args[1:])
	if err := cmd.Execute(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return exitUsage
	}
	return exitOK
}

func TestTortureHarnessCatches(t *testing.T) {
	// A run that finishes is never judged by the clock, however loaded the
	// machine: only the hang (a 3 s sleep) meets the short deadline.
	cfg := tortureConfig{timeout: time.Minute, memBound: 64 << 20}
	hangCfg := cfg
	hangCfg.timeout = time.Second
	clean := &cleanRun{code: 0, ok: true, frames: map[int]string{1: "1\tfirst", 2: "2\tsecond"}}
	m := &torture.Mutant{Name: "selftest", Kind: torture.KindFlip, Frame: 3}
	view := func(mode string, out outputMode) tortureView {
		return tortureView{name: mode, out: out, frames: true, runner: selftestRun,
			args: func(f string) []string { return []string{"torture-selftest", mode, f} }}
	}
	if _, why := judge(view("good", outText), "x", nil, m, clean, cfg); why != "" {
		t.Fatalf("a good run judged bad: %s", why)
	}
	for _, tc := range []struct {
		mode string
		out  outputMode
		want string
	}{
		{"panic", outText, "panic"},
		{"hang", outText, "still running"},
		{"escape", outText, "control character"},
		{"badjson", outJSONLines, "invalid UTF-8"},
		{"lose", outText, "good frame 1"},
		{"memory", outText, "heap grew"},
		{"exit3", outText, "exit status 3"},
	} {
		c := cfg
		if tc.mode == "hang" {
			c = hangCfg
		}
		_, why := judge(view(tc.mode, tc.out), "x", nil, m, clean, c)
		if !strings.Contains(why, tc.want) {
			t.Errorf("%s: judged %q, want it caught (%q)", tc.mode, trim(why), tc.want)
		}
	}
}
