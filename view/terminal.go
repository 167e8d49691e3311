package view

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// ColorMode is --color: auto, always or never.
type ColorMode uint8

const (
	ColorAuto ColorMode = iota
	ColorAlways
	ColorNever
)

// ParseColorMode parses auto|always|never.
func ParseColorMode(s string) (ColorMode, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return ColorAuto, nil
	case "always", "yes", "force":
		return ColorAlways, nil
	case "never", "no", "none":
		return ColorNever, nil
	}
	return 0, fmt.Errorf("--color=%s: want auto, always or never", s)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// UseColor decides colour for output w: never with --color=never or when
// NO_COLOR is set (and not forced), always with --color=always, otherwise
// only on a terminal whose TERM is not "dumb".
func UseColor(mode ColorMode, w io.Writer) bool {
	switch mode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	if os.Getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// ProgressMin is the input size above which a progress bar is shown.
const ProgressMin = 8 << 20

// Progress draws a progress bar on a terminal: bytes read, packets/s and
// the estimated time left, redrawn a few times a second from a goroutine.
type Progress struct {
	w       io.Writer
	total   int64
	read    func() int64
	packets atomic.Int64
	start   time.Time
	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
}

// StartProgress starts a bar on w for an input of total bytes; read
// reports the bytes read so far (it is called from the bar's goroutine, so
// it must be safe for that: an atomic or a value only read).
func StartProgress(w io.Writer, total int64, read func() int64) *Progress {
	p := &Progress{w: w, total: total, read: read, start: time.Now(), stop: make(chan struct{})}
	p.done.Add(1)
	go p.loop()
	return p
}

// Packet counts one packet.
func (p *Progress) Packet() {
	if p != nil {
		p.packets.Add(1)
	}
}

func (p *Progress) loop() {
	defer p.done.Done()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.draw()
		}
	}
}

func (p *Progress) draw() {
	read := p.read()
	el := time.Since(p.start).Seconds()
	frac := 0.0
	if p.total > 0 {
		frac = float64(read) / float64(p.total)
	}
	if frac > 1 {
		frac = 1
	}
	const width = 30
	fill := int(frac * width)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	rate := 0.0
	if el > 0 {
		rate = float64(p.packets.Load()) / el
	}
	eta := "?"
	if frac > 0 && el > 0.5 {
		eta = (time.Duration((el/frac - el) * float64(time.Second))).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r[%s] %3.0f%% %s/%s %.0f pkt/s ETA %s \x1b[K", bar, frac*100, mb(read), mb(p.total), rate, eta)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// Stop removes the bar.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	p.done.Wait()
	fmt.Fprint(p.w, "\r\x1b[K")
}
