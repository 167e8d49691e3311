package view

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/clipperhouse/displaywidth"
)

// boxTable draws the conns table row by row in a box of Unicode rules,
// columns of fixed widths (padding included): the layout the conns table
// always had (tablewriter's streaming table, left-aligned, no wrapping),
// drawn here without a per-cell allocation (for the 4000 rows of the
// 2M-packet bench capture tablewriter's renderer was most of the bytes the
// conns command allocated) and without its package initialisation on every
// command.
type boxTable struct {
	w      *bufio.Writer
	widths []int
	// ruled: a rule between the rows (cells of several lines).
	ruled bool
	// rows counts the rows drawn; the rule under the header is drawn
	// before the first.
	rows int
	// lines are the current row's cells split at their line breaks.
	lines [][]string
}

func newBoxTable(w io.Writer, widths []int, ruled bool) *boxTable {
	return &boxTable{w: bufio.NewWriter(w), widths: widths, ruled: ruled, lines: make([][]string, len(widths))}
}

// rule draws a horizontal line with the given corner and junction runes.
func (t *boxTable) rule(left, mid, right string) {
	t.w.WriteString(left)
	for i, n := range t.widths {
		if i > 0 {
			t.w.WriteString(mid)
		}
		for range n {
			t.w.WriteString("─")
		}
	}
	t.w.WriteString(right)
	t.w.WriteByte('\n')
}

// header starts the table: its top rule and the header row.
func (t *boxTable) header(cells []string) {
	t.rule("┌", "┬", "┐")
	t.cells(cells)
}

// row draws one row under the header and the rows before it.
func (t *boxTable) row(cells []string) {
	if t.rows == 0 || t.ruled {
		t.rule("├", "┼", "┤")
	}
	t.rows++
	t.cells(cells)
}

// cells draws a row's cells, each left-aligned in its column; a cell of
// several lines makes the row as many lines high.
func (t *boxTable) cells(cells []string) {
	height := 1
	for i := range t.widths {
		t.lines[i] = t.lines[i][:0]
		s := ""
		if i < len(cells) {
			s = strings.TrimSpace(cells[i])
			if strings.IndexByte(s, '\t') >= 0 {
				s = strings.ReplaceAll(s, "\t", "    ")
			}
		}
		for {
			line, rest, more := strings.Cut(s, "\n")
			t.lines[i] = append(t.lines[i], line)
			if !more {
				break
			}
			s = rest
		}
		height = max(height, len(t.lines[i]))
	}
	for l := range height {
		t.w.WriteString("│")
		for i, n := range t.widths {
			if i > 0 {
				t.w.WriteString("│")
			}
			s := ""
			if l < len(t.lines[i]) {
				s = t.lines[i][l]
			}
			w := displayWidth(s)
			if w > n-2 {
				s, w = truncateWidth(s, n-2)
			}
			t.w.WriteByte(' ')
			t.w.WriteString(s)
			for range n - 1 - w {
				t.w.WriteByte(' ')
			}
		}
		t.w.WriteString("│\n")
	}
}

// truncateWidth is the longest start of s at most width columns wide, and
// its width: a line wider than its column (a character wider than a
// column narrowed to fit the terminal) is cut.
func truncateWidth(s string, width int) (string, int) {
	n := 0
	for i, r := range s {
		rw := displayWidth(string(r))
		if n+rw > width {
			return s[:i], n
		}
		n += rw
	}
	return s, n
}

// close draws the bottom rule and writes out what is buffered.
func (t *boxTable) close() error {
	t.rule("└", "┴", "┘")
	return t.w.Flush()
}

// displayWidth is how many terminal columns s takes: one a printable ASCII
// character, each other rune by its Unicode East Asian width (ambiguous
// ones narrow), a tab 4 (the table draws it as 4 spaces), ANSI escape sequences none.
func displayWidth(s string) int {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			ascii = false
			break
		}
	}
	if ascii {
		return len(s)
	}
	if strings.IndexByte(s, '\x1b') >= 0 {
		s = ansiEscape().ReplaceAllLiteralString(s, "")
	}
	n := 0
	for _, r := range s {
		if r == '\t' {
			n += tabWidth
			continue
		}
		n += displaywidth.Options{}.Rune(r)
	}
	return n
}

const tabWidth = 4

// ansiEscape matches the ANSI control sequences (CSI) and operating
// system commands (OSC) a terminal does not display; compiled when a cell
// first has an escape character.
var ansiEscape = sync.OnceValue(func() *regexp.Regexp {
	const st = "(" + "\x1b\\\\" + "|" + "\x07" + ")"
	return regexp.MustCompile("(" + "\x1b\\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]" + "|" + "\x1b\\].*?" + st + ")")
})
