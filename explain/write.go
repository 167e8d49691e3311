package explain

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cmpd-dissect/cmpd-dissect/finding"
)

// WriteText writes the explanations as text: each capture's verdict, then
// each group under its title, one statement a paragraph, its remedy after
// it. wrap, when not nil, wraps a line to the output's width with the
// indent given for the lines after the first.
func WriteText(w io.Writer, caps []*Capture, wrap func(line, indent string) string) error {
	if wrap == nil {
		wrap = func(line, _ string) string { return line }
	}
	bw := bufio.NewWriter(w)
	for i, c := range caps {
		if i > 0 {
			bw.WriteString("\n")
		}
		fmt.Fprintln(bw, wrap(c.Verdict.Text, ""))
		for _, g := range c.Groups {
			fmt.Fprintf(bw, "\n%s\n", wrap(g.Title, "    "))
			for _, it := range g.Items {
				writeItem(bw, it, wrap)
			}
		}
		if len(c.Other) > 0 {
			fmt.Fprintf(bw, "\nOutside any connection:\n")
			for _, it := range c.Other {
				writeItem(bw, it, wrap)
			}
		}
	}
	return bw.Flush()
}

// marks start a statement by its severity.
var marks = map[finding.Severity]string{
	finding.SeverityInfo:    "  - ",
	finding.SeverityWarning: "  ! warning: ",
	finding.SeverityError:   "  ! error: ",
}

func writeItem(w *bufio.Writer, it Item, wrap func(line, indent string) string) {
	mark, ok := marks[it.Severity]
	if !ok {
		mark = "  - "
	}
	text := it.Text
	if it.Section != "" && it.Code != it.Finding {
		text += " (" + it.Section + ")"
	}
	fmt.Fprintln(w, wrap(mark+text, "    "))
	if it.Remedy != "" {
		fmt.Fprintln(w, wrap("    What to do: "+it.Remedy, "      "))
	}
}

// WriteJSON writes every statement of every capture as one JSON object a
// line (Item's keys).
func WriteJSON(w io.Writer, caps []*Capture) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, c := range caps {
		for _, it := range c.Items() {
			if err := enc.Encode(it); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
