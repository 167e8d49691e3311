package view

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
)

// ConnsTableOptions shape the conns table.
type ConnsTableOptions struct {
	// Width is the widest line the table may print (TerminalWidth); 0 means
	// no limit: every column as wide as its widest cell, as for a pipe.
	Width int
	// File names the capture a connection was read from; nil when only one
	// capture was read (no File column).
	File func(*conn.Connection) string
}

// ConnsDropOrder is the order in which a table too wide for its width
// loses columns: each is dropped only while the remaining columns, wrapped
// to two lines a cell, still do not fit. What they show is in "conns -V" and
// "conns --json". Then the widest wrappable cells are wrapped (at spaces,
// after ':', '/', ',' and '-'; a word longer than its column is broken).
var ConnsDropOrder = []string{"QPN c/s", "REQ/REP frame", "Service", "Transport", "Server PD", "Client PD"}

// TerminalWidth is the width the conns table fits: COLUMNS when it is set
// to a positive number, else the width of w when it is a terminal, else 0
// (no limit: a pipe or a file gets the whole table).
func TerminalWidth(w io.Writer) int {
	if s := os.Getenv("COLUMNS"); s != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			return n
		}
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// fitColumn is one column of a table fitted to a width: its header, the
// cell of a row, its widths.
type fitColumn struct {
	header string
	cell   func(r *connRow, c *conn.Connection) string
	// natural is the widest cell or header, soft the longest word among
	// them, narrow the longest when words may also break after a dot;
	// width is what the layout gives it (padding excluded).
	natural, soft, narrow, width int
}

// fittedHeaders label the columns when the table is fitted to a width:
// the private data columns say which of the two sizes is which.
var fittedHeaders = map[string]string{
	"Client PD": "Client PD send/recv",
	"Server PD": "Server PD send/recv",
}

// WriteConnsTableWith writes the conns table with opts: with neither a
// width nor a File column it is WriteConnsTable's table, byte for byte.
func WriteConnsTableWith(w io.Writer, cs []*conn.Connection, opts ConnsTableOptions) error {
	if opts.Width <= 0 && opts.File == nil {
		return WriteConnsTable(w, cs)
	}
	var cols []*fitColumn
	for i, h := range connsHeader {
		i := i
		if opts.Width > 0 && fittedHeaders[h] != "" {
			h = fittedHeaders[h]
		}
		cols = append(cols, &fitColumn{header: h, cell: func(r *connRow, _ *conn.Connection) string { return string(r.cell(i)) }})
		if i == 0 && opts.File != nil {
			cols = append(cols, &fitColumn{header: "File", cell: func(_ *connRow, c *conn.Connection) string { return opts.File(c) }})
		}
	}
	var row connRow
	for _, col := range cols {
		col.natural = displayWidth(col.header)
		col.soft, col.narrow = longestWord(col.header, breakAfter), longestWord(col.header, breakAfterDot)
	}
	for _, c := range cs {
		row.build(c)
		for _, col := range cols {
			s := col.cell(&row, c)
			col.natural = max(col.natural, displayWidth(s))
			col.soft = max(col.soft, longestWord(s, breakAfter))
			col.narrow = max(col.narrow, longestWord(s, breakAfterDot))
		}
	}
	for _, col := range cols {
		col.width = col.natural
		if col.header == "File" {
			// File names break at their dots before anything else does.
			col.soft = col.narrow
		}
	}
	wrap := false
	if opts.Width > 0 {
		cols, wrap = fitColumns(cols, opts.Width)
	}
	widths := make([]int, len(cols))
	headers := make([]string, len(cols))
	for i, col := range cols {
		widths[i] = col.width + 2
		headers[i] = wrapCell(col.header, col.width)
	}
	// Rows of several lines need a rule between them to be read.
	t := newBoxTable(w, widths, wrap)
	t.header(headers)
	cells := make([]string, len(cols))
	for _, c := range cs {
		row.build(c)
		for i, col := range cols {
			cells[i] = wrapCell(col.cell(&row, c), col.width)
		}
		t.row(cells)
	}
	return t.close()
}

// tableWidth is the width of a box-drawn table with these columns: a
// space each side of every cell, a rule between and around them.
func tableWidth(cols []*fitColumn, width func(*fitColumn) int) int {
	n := 1
	for _, c := range cols {
		n += width(c) + 3
	}
	return n
}

// fitColumns drops columns in ConnsDropOrder while the others do not fit
// in two lines a cell, then narrows the widest columns one character at a time
// until the table fits; wrapped reports that some cell may wrap. When even
// the remaining columns at their narrowest are too wide, words are broken.
func fitColumns(cols []*fitColumn, limit int) (_ []*fitColumn, wrapped bool) {
	natural := func(c *fitColumn) int { return c.natural }
	// Two lines: about the width at which every cell takes two lines at
	// most, so that no row becomes a tower of short lines.
	twoLines := func(c *fitColumn) int { return max(c.soft, (c.natural+1)/2) }
	if tableWidth(cols, natural) <= limit {
		return cols, false
	}
	for _, name := range ConnsDropOrder {
		if tableWidth(cols, twoLines) <= limit {
			break
		}
		for i, c := range cols {
			if c.header == name || c.header == fittedHeaders[name] {
				cols = append(cols[:i:i], cols[i+1:]...)
				break
			}
		}
	}
	if tableWidth(cols, natural) <= limit {
		return cols, false
	}
	width := func(c *fitColumn) int { return c.width }
	lines := func(c *fitColumn, w int) int { return (c.natural + w - 1) / w }
	for tableWidth(cols, width) > limit {
		// Narrow the column whose widest cell gains the fewest lines by
		// it (the widest of those): first down to its longest word, then
		// to its longest when words break after dots too, then, when
		// every column is there, words are cut, the file names' first
		// (they are the least read).
		var pick *fitColumn
		for _, floor := range []func(*fitColumn) int{
			func(c *fitColumn) int { return c.soft },
			func(c *fitColumn) int { return c.narrow },
		} {
			for _, c := range cols {
				if c.width <= floor(c) {
					continue
				}
				if pick == nil || lines(c, c.width-1) < lines(pick, pick.width-1) ||
					(lines(c, c.width-1) == lines(pick, pick.width-1) && c.width > pick.width) {
					pick = c
				}
			}
			if pick != nil {
				break
			}
		}
		if pick == nil {
			for _, c := range cols {
				if c.header == "File" && c.width > 4 {
					pick = c
				}
			}
		}
		if pick == nil {
			for _, c := range cols {
				if c.width > 1 && (pick == nil || c.width > pick.width) {
					pick = c
				}
			}
		}
		if pick == nil {
			break
		}
		pick.width--
	}
	return cols, true
}

// breakAfter reports a character a cell may wrap after (a space is
// dropped at the end of the line); breakAfterDot adds '.', used only for
// a word that is wider than its column (a file name, an address).
func breakAfter(r rune) bool {
	switch r {
	case ' ', ':', '/', ',', '-':
		return true
	}
	return false
}

func breakAfterDot(r rune) bool { return r == '.' || breakAfter(r) }

// words splits s after each character brk accepts.
func words(s string, brk func(rune) bool) []string {
	var out []string
	start := 0
	for i, r := range s {
		if brk(r) {
			n := utf8.RuneLen(r)
			out = append(out, s[start:i+n])
			start = i + n
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// longestWord is the width of the longest word of s (a trailing space not
// counted).
func longestWord(s string, brk func(rune) bool) int {
	n := 0
	for _, w := range words(s, brk) {
		n = max(n, displayWidth(strings.TrimRight(w, " ")))
	}
	return n
}

// pieces splits s into the words wrapCell places: at the break characters,
// a word wider than width also after its dots, and what is still wider cut
// at width.
func pieces(s string, width int) []string {
	var out []string
	for _, w := range words(s, breakAfter) {
		if displayWidth(strings.TrimRight(w, " ")) <= width {
			out = append(out, w)
			continue
		}
		for _, d := range words(w, breakAfterDot) {
			for displayWidth(strings.TrimRight(d, " ")) > width {
				n, cut := 0, 0
				for i, r := range d {
					rw := displayWidth(string(r))
					if n+rw > width && i > 0 {
						break
					}
					n += rw
					cut = i + utf8.RuneLen(r)
				}
				out = append(out, d[:cut])
				d = d[cut:]
			}
			if d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}

// wrapCell wraps s into lines of at most width columns (pieces says where
// it may break).
func wrapCell(s string, width int) string {
	if width <= 0 || displayWidth(s) <= width {
		return s
	}
	var lines []string
	var line strings.Builder
	lineWidth := 0
	for _, w := range pieces(s, width) {
		if lineWidth > 0 && lineWidth+displayWidth(strings.TrimRight(w, " ")) > width {
			lines = append(lines, strings.TrimRight(line.String(), " "))
			line.Reset()
			lineWidth = 0
		}
		line.WriteString(w)
		lineWidth += displayWidth(w)
	}
	if line.Len() > 0 {
		lines = append(lines, strings.TrimRight(line.String(), " "))
	}
	return strings.Join(lines, "\n")
}

// WrapText wraps a line of text to width (0: no limit) at spaces, the
// lines after the first indented by indent; a word too long is cut.
func WrapText(s string, width int, indent string) string {
	if width <= 0 || displayWidth(s) <= width {
		return s
	}
	lead := len(s) - len(strings.TrimLeft(s, " "))
	first := s[:lead]
	var b strings.Builder
	rest := s[lead:]
	prefix, avail := first, width-displayWidth(first)
	for rest != "" {
		line := firstLine(rest, avail)
		b.WriteString(prefix)
		b.WriteString(line)
		rest = strings.TrimLeft(rest[len(line):], " ")
		if rest != "" {
			b.WriteByte('\n')
		}
		prefix, avail = indent, max(width-displayWidth(indent), 1)
	}
	return b.String()
}

// firstLine is the longest start of s, ended at a space, that is at most
// width wide (cut inside a word only when the first word is wider).
func firstLine(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	end, n := 0, 0
	for i, r := range s {
		rw := displayWidth(string(r))
		if n+rw > width {
			break
		}
		n += rw
		if r == ' ' {
			end = i
		}
	}
	if end > 0 {
		return strings.TrimRight(s[:end], " ")
	}
	// One word wider than the line: cut it at width.
	n = 0
	for i, r := range s {
		rw := displayWidth(string(r))
		if n+rw > width && i > 0 {
			return s[:i]
		}
		n += rw
	}
	return s
}
