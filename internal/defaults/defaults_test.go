package defaults

import (
	"testing"
	"time"
)

type config struct {
	Max     int
	Timeout time.Duration
	Small   int8
	Count   uint // not an int kind: kept
	Names   []string
	hidden  int // unexported: kept
}

func TestFill(t *testing.T) {
	def := config{Max: 10, Timeout: time.Second, Small: 3, Count: 7, Names: []string{"d"}, hidden: 4}
	got := Fill(config{Max: -1, Timeout: 0, Small: 2, Names: []string{"a"}}, def)
	want := config{Max: 10, Timeout: time.Second, Small: 2, Count: 0, Names: []string{"a"}, hidden: 0}
	if got.Max != want.Max || got.Timeout != want.Timeout || got.Small != want.Small || got.Count != want.Count ||
		len(got.Names) != 1 || got.Names[0] != "a" || got.hidden != 0 {
		t.Errorf("Fill: %+v, want %+v", got, want)
	}
}
