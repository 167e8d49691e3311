// Package enum names the values of the project's enumerated types for
// their String methods: the name a table gives a value, or "Type(n)" for a
// value the table does not name (so a bad value shows as itself, not as
// "").
package enum

import "strconv"

// Name is names[v] when that is set, else "typ(v)".
func Name[T ~uint8](typ string, names []string, v T) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return unnamed(typ, uint8(v))
}

// NameIn is names[v] when names has v (a table the fields' WithNames
// shares), else "typ(v)".
func NameIn[T ~uint8](typ string, names map[uint64]string, v T) string {
	if s, ok := names[uint64(v)]; ok {
		return s
	}
	return unnamed(typ, uint8(v))
}

func unnamed(typ string, v uint8) string {
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}
