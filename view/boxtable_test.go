package view

import (
	"strings"
	"testing"
)

// TestBoxTable pins what the conns table's renderer does with cells the
// connections' rows rarely or never have, as the tablewriter package (which
// drew the table before) did: a cell trimmed of surrounding spaces, a tab
// drawn as four spaces, a cell of several lines making its row as high,
// East Asian wide runes counted twice, escape sequences not at all, a cell
// wider than its column cut, and rules between rows when ruled.
func TestBoxTable(t *testing.T) {
	want := "┌───┬───────────┬───────┐\n" +
		"│ # │ Client PD │ State │\n" +
		"│   │ send/recv │       │\n" +
		"├───┼───────────┼───────┤\n" +
		"│ 1 │ a    b    │ 漢字→ │\n" +
		"├───┼───────────┼───────┤\n" +
		"│ 2 │ x         │ \x1b[31mred\x1b[0m   │\n" +
		"│   │ y         │       │\n" +
		"│   │ z         │       │\n" +
		"├───┼───────────┼───────┤\n" +
		"│ 3 │           │ wide  │\n" +
		"└───┴───────────┴───────┘\n"
	var b strings.Builder
	bt := newBoxTable(&b, []int{3, 11, 7}, true)
	bt.header([]string{"#", "Client PD\nsend/recv", "State"})
	bt.row([]string{" 1 ", "a\tb", "漢字→"})
	bt.row([]string{"2", "x\ny\nz", "\x1b[31mred\x1b[0m"})
	bt.row([]string{"3", "", "wide😀"})
	if err := bt.close(); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
