package enum

import "testing"

type color uint8

func TestNames(t *testing.T) {
	names := []string{1: "red", 2: "green"}
	byValue := map[uint64]string{0: "none", 2: "green"}
	for _, tc := range []struct {
		got, want string
	}{
		{Name("Color", names, color(1)), "red"},
		{Name("Color", names, color(0)), "Color(0)"},
		{Name("Color", names, color(3)), "Color(3)"},
		{Name("Color", names, color(255)), "Color(255)"},
		{NameIn("Color", byValue, color(0)), "none"},
		{NameIn("Color", byValue, color(2)), "green"},
		{NameIn("Color", byValue, color(1)), "Color(1)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
