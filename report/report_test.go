package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmpd-dissect/cmpd-dissect/explain"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testcap"
	"github.com/cmpd-dissect/cmpd-dissect/internal/testconn"
)

// reportCaptures are the captures the browser test renders: real ones of
// every outcome (refused by REJ and by MPA Reject, no private data, the
// identifier at offset 4, an NFS mount with traffic findings, a
// reconnection, the MPA revision 1 client refused 38 times) and a synthetic
// one with several connections.
var reportCaptures = []string{
	testcap.Real("live-rxe4-reject.pcap"),
	testcap.Real("live-siw4-reject.pcap"),
	testcap.Real("live-rxe4-none.pcap"),
	testcap.Real("live-siw4-offset.pcap"),
	testcap.Real("live-rxe4-nfs3-inline.pcap"),
	testcap.Real("live-siw4-reconnect.pcap"),
	testcap.Real("live-siw4-mpa1-nfs42.pcap"),
	testcap.Synthetic("synth-ibcm-rocev2-ipv4-cm-all.pcap"),
}

// writeReport writes the report of paths to a file in dir and returns
// its path and how many connections it holds.
func writeReport(t *testing.T, dir string, paths []string) (string, int) {
	t.Helper()
	var caps []Capture
	n := 0
	for _, p := range paths {
		tr := testconn.TrackFile(t, p)
		cs := tr.Connections()
		n += len(cs)
		caps = append(caps, Capture{Name: filepath.Base(p), Conns: cs, Other: tr.Findings(),
			Explanation: explain.Explain(filepath.Base(p), cs, tr.Findings())})
	}
	var b bytes.Buffer
	if err := Write(&b, caps); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, n
}

// The page is self-contained: nothing in it names a resource to fetch.
func TestReportSelfContained(t *testing.T) {
	file, n := writeReport(t, t.TempDir(), reportCaptures)
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	// The only URL is the SVG namespace, an identifier that is never fetched.
	urls := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:|//)|url\((['"]?)(https?:|//)|@import`).FindAllString(s, -1)
	if len(urls) > 0 {
		t.Errorf("the report refers to outside resources: %q", urls)
	}
	if !strings.Contains(s, `Content-Security-Policy" content="default-src 'none'`) {
		t.Error("no Content-Security-Policy forbidding fetches")
	}
	if got := strings.Count(s, `<svg class="ladder"`); got != n {
		t.Errorf("%d ladders for %d connections", got, n)
	}
	// Every ladder has its text alternatives.
	if got := strings.Count(s, "<desc id="); got != n {
		t.Errorf("%d <desc> for %d ladders", got, n)
	}
	if got := strings.Count(s, "<summary>Text ladder"); got != n {
		t.Errorf("%d text ladders for %d ladders", got, n)
	}
	for _, want := range []string{"reason 28 Consumer Reject", "MPA Reject", "the client sent no private data",
		"drafts -04/-05", "the client&#39;s value set it", "conn.send-inv-tolerated"} {
		if !strings.Contains(s, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// chromium finds the headless browser; the test skips without one (CI
// installs Debian's chromium).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium): the report is not rendered in a browser")
	return ""
}

// runBrowser runs headless chromium with args on the report, and returns
// its standard output and error.
func runBrowser(t *testing.T, bin, dir string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
		"--disable-background-networking", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, errb.String())
	}
	return out.String(), errb.String()
}

// The report renders in a real browser: one ladder SVG per connection in
// the DOM, the page's script ran without error, nothing on the console,
// and a screenshot that is not blank.
func TestReportInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	file, n := writeReport(t, dir, reportCaptures)
	url := "file://" + file

	dom, stderr := runBrowser(t, bin, dir, "--dump-dom", url)
	if got := strings.Count(dom, `<svg class="ladder"`); got != n {
		t.Errorf("the DOM has %d ladders, want %d (one per connection)", got, n)
	}
	// The page's script counted them too: it ran, and saw every one.
	if m := regexp.MustCompile(`<body data-ladders="(\d+)" data-rendered="yes">`).FindStringSubmatch(dom); m == nil {
		t.Errorf("the page's script did not run (no data-rendered marker on body)")
	} else if m[1] != strconv.Itoa(n) {
		t.Errorf("the script counted %s ladders, want %d", m[1], n)
	}
	for _, bad := range []string{"Uncaught", "ERROR:CONSOLE", "Refused to", "net::ERR"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("the browser's log has %q:\n%s", bad, stderr)
		}
	}

	shot := filepath.Join(dir, "report.png")
	runBrowser(t, bin, dir, "--hide-scrollbars", "--window-size=1100,1600", "--screenshot="+shot, url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Not blank: the luminance varies, and enough pixels are ink.
	b := img.Bounds()
	var sum, sumSq float64
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 65535
			sum += l
			sumSq += l * l
			if l < 0.5 {
				dark++
			}
		}
	}
	count := float64((b.Dx() + 1) / 2 * ((b.Dy() + 1) / 2))
	mean := sum / count
	variance := sumSq/count - mean*mean
	if variance < 0.005 || dark < 2000 {
		t.Errorf("the screenshot looks blank: luminance variance %.4f, %d dark pixels", variance, dark)
	}
	if out := os.Getenv("REPORT_SCREENSHOT"); out != "" {
		// REPORT_SCREENSHOT=FILE keeps the screenshot (how docs/report.png
		// can be remade).
		data, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(out, data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
